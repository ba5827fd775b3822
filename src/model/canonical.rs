//! The one canonical encoder for everything memorix hashes.
//!
//! An object's id is `sha256("memorix-<kind>-v1\n" ++ json)` where `json` is compact JSON with
//! object keys sorted bytewise. Keys are sorted here explicitly rather than relying on
//! serde_json's map type, whose order changes if any crate in the build enables
//! `preserve_order`.

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::id::Id;

/// Encodes `value` canonically: compact, keys sorted bytewise, no trailing newline. A value
/// whose keys serialize in order already (records declare their fields sorted) is written
/// straight through, checked by one pass over the text; only the others go through a tree of
/// values, which for a 100,000-file derivation would cost time and memory.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let direct = serde_json::to_vec(value).expect("memorix objects always serialize to JSON");
    if keys_sorted(&direct) {
        return direct;
    }
    let value = serde_json::to_value(value).expect("memorix objects always serialize to JSON");
    let mut out = Vec::with_capacity(direct.len());
    write_value(&value, &mut out);
    out
}

/// Whether every object in the JSON text has its keys in strictly increasing bytewise order
/// (a key with an escape counts as out of order: it takes the tree path).
fn keys_sorted(json: &[u8]) -> bool {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    struct Sorted;
    impl<'de> Deserialize<'de> for Sorted {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Sorted, D::Error> {
            d.deserialize_any(Sorted)
        }
    }
    impl<'de> Visitor<'de> for Sorted {
        type Value = Sorted;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_str<E>(self, _: &str) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_unit<E>(self) -> Result<Sorted, E> {
            Ok(Sorted)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Sorted, A::Error> {
            while seq.next_element::<Sorted>()?.is_some() {}
            Ok(Sorted)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Sorted, A::Error> {
            let mut last: Option<&'de str> = None;
            while let Some(key) = map.next_key::<&'de str>()? {
                if last.is_some_and(|l| l.as_bytes() >= key.as_bytes()) {
                    return Err(A::Error::custom("keys out of order"));
                }
                map.next_value::<Sorted>()?;
                last = Some(key);
            }
            Ok(Sorted)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    Sorted::deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// The id of an object of `kind` whose hashed part encodes to `canonical`.
pub fn object_id(kind: &str, canonical: &[u8]) -> Id {
    object_id_of_parts(kind, &[canonical])
}

/// The id of an object of `kind` whose canonical encoding is `parts` joined: a record read
/// back can be checked against its id by hashing the stored text in place.
pub fn object_id_of_parts(kind: &str, parts: &[&[u8]]) -> Id {
    let mut h = Sha256::new();
    h.update(b"memorix-");
    h.update(kind.as_bytes());
    h.update(b"-v1\n");
    for part in parts {
        h.update(part);
    }
    Id::from_bytes(h.finalize().into())
}

fn write_value(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push(b'{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_scalar(&Value::String(key.clone()), out);
                out.push(b':');
                write_value(&map[key], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out);
            }
            out.push(b']');
        }
        scalar => write_scalar(scalar, out),
    }
}

fn write_scalar(value: &Value, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, value).expect("writing JSON to memory cannot fail");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct OutOfOrder {
        zeta: u32,
        alpha: &'static str,
        #[serde(rename = "Beta")]
        beta: Vec<u8>,
    }

    #[test]
    fn keys_sorted_bytewise_and_compact() {
        let v = OutOfOrder { zeta: 1, alpha: "é\"\n", beta: vec![1, 2] };
        assert_eq!(String::from_utf8(encode(&v)).unwrap(), r#"{"Beta":[1,2],"alpha":"é\"\n","zeta":1}"#);
    }

    #[test]
    fn sorted_keys_are_written_straight_through_and_others_sorted_the_same_way() {
        #[derive(Serialize)]
        struct InOrder {
            alpha: &'static str,
            beta: Vec<OutOfOrder>,
            zeta: Option<u32>,
        }
        let nested = || OutOfOrder { zeta: 2, alpha: "a", beta: vec![] };
        let v = InOrder { alpha: "x", beta: vec![nested()], zeta: None };
        assert!(!keys_sorted(&serde_json::to_vec(&v).unwrap()), "a nested object is out of order");
        assert_eq!(
            String::from_utf8(encode(&v)).unwrap(),
            r#"{"alpha":"x","beta":[{"Beta":[],"alpha":"a","zeta":2}],"zeta":null}"#
        );
        let sorted = serde_json::json!({"a": [1, {"b": "\u{1}", "c": 1.5}], "b": true});
        assert!(keys_sorted(&serde_json::to_vec(&sorted).unwrap()));
        // Byte order, not Unicode order or case folding; a key twice is not in order.
        assert!(keys_sorted(r#"{"B":1,"a":2,"é":3}"#.as_bytes()));
        assert!(!keys_sorted(br#"{"a":1,"a":2}"#));
        assert!(!keys_sorted(br#"{"a":1,"B":2}"#));
    }

    #[test]
    fn object_id_covers_kind_header() {
        let body = encode(&serde_json::json!({"entries": []}));
        assert_ne!(object_id("tree", &body), object_id("generation", &body));
        assert_ne!(object_id("tree", &body), Id::of_bytes(&body));
    }
}
