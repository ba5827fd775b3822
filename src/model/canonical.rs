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

/// Encodes `value` canonically: compact, keys sorted bytewise, no trailing newline.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let value = serde_json::to_value(value).expect("memorix objects always serialize to JSON");
    let mut out = Vec::with_capacity(256);
    write_value(&value, &mut out);
    out
}

/// The id of an object of `kind` whose hashed part encodes to `canonical`.
pub fn object_id(kind: &str, canonical: &[u8]) -> Id {
    let mut h = Sha256::new();
    h.update(b"memorix-");
    h.update(kind.as_bytes());
    h.update(b"-v1\n");
    h.update(canonical);
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
    fn object_id_covers_kind_header() {
        let body = encode(&serde_json::json!({"entries": []}));
        assert_ne!(object_id("tree", &body), object_id("generation", &body));
        assert_ne!(object_id("tree", &body), Id::of_bytes(&body));
    }
}
