//! One file of an activation record, encoded `[blob, size, mtime_ns, inode]`, with the hash
//! written as a fifth element for a generated file (`blob` null): an activation record of a
//! 100,000-file environment is read twice and written once by every update, and named fields
//! made up a third of its text. Records written with named fields still read.

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use crate::model::Id;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// `None` for the generated files (INDEX.md, ...).
    pub blob: Option<Id>,
    /// A generated file's content hash as written, to tell an edit from a regeneration that
    /// would differ (INDEX.md is not a pure function of the environment).
    pub written: Option<Id>,
    pub size: u64,
    pub mtime_ns: i64,
    pub ino: u64,
}

impl Serialize for Placement {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(if self.written.is_some() { 5 } else { 4 })?;
        match &self.blob {
            Some(blob) => t.serialize_element(blob.text().hex())?,
            None => t.serialize_element(&())?,
        }
        t.serialize_element(&self.size)?;
        t.serialize_element(&self.mtime_ns)?;
        t.serialize_element(&self.ino)?;
        if let Some(written) = &self.written {
            t.serialize_element(written.text().hex())?;
        }
        t.end()
    }
}

impl<'de> Deserialize<'de> for Placement {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Placement, D::Error> {
        d.deserialize_any(PlacementVisitor)
    }
}

struct PlacementVisitor;

/// A hash as the tuple form writes it: 64 hex digits.
struct Hex(Id);

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hex, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Hex;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("64 hex digits")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Hex, E> {
                Id::from_hex(text).map(Hex).ok_or_else(|| E::custom(format!("bad id {text:?}")))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Visitor<'de> for PlacementVisitor {
    type Value = Placement;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("[blob, size, mtime_ns, inode(, written)]")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Placement, A::Error> {
        let short = || de::Error::custom("a placement has four or five elements");
        let blob: Option<Hex> = seq.next_element()?.ok_or_else(short)?;
        let size = seq.next_element()?.ok_or_else(short)?;
        let mtime_ns = seq.next_element()?.ok_or_else(short)?;
        let ino = seq.next_element()?.ok_or_else(short)?;
        let written: Option<Hex> = seq.next_element()?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(short());
        }
        Ok(Placement { blob: blob.map(|h| h.0), written: written.map(|h| h.0), size, mtime_ns, ino })
    }

    /// The named fields of records written before the tuple form.
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Placement, A::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Named {
            blob: Option<Id>,
            #[serde(default)]
            written: Option<Id>,
            size: u64,
            mtime_ns: i64,
            ino: u64,
        }
        let n = Named::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Placement { blob: n.blob, written: n.written, size: n.size, mtime_ns: n.mtime_ns, ino: n.ino })
    }
}

/// Reads a JSON object written in key order (as every record is) into a map built in one
/// pass: at 100k files, ordered inserts one by one were a tenth of reading a record.
pub(super) fn sorted_map<'de, D, V>(d: D) -> Result<std::collections::BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Pairs<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> Visitor<'de> for Pairs<V> {
        type Value = Vec<(String, V)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0));
            while let Some(pair) = map.next_entry()? {
                pairs.push(pair);
            }
            Ok(pairs)
        }
    }
    // Collecting sorts (linear on sorted input) and builds the tree bottom up.
    Ok(d.deserialize_map(Pairs(std::marker::PhantomData))?.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> Id {
        Id::of_bytes(text.as_bytes())
    }

    #[test]
    fn placements_read_back_in_the_tuple_form_and_from_named_fields() {
        let file = Placement { blob: Some(id("a")), written: None, size: 3, mtime_ns: -5, ino: 7 };
        let index = Placement { blob: None, written: Some(id("i")), size: 9, mtime_ns: 1 << 60, ino: 2 };
        for p in [file, index] {
            let text = serde_json::to_string(&p).unwrap();
            assert_eq!(serde_json::from_str::<Placement>(&text).unwrap(), p, "{text}");
        }
        assert_eq!(serde_json::to_string(&file).unwrap(), format!("[\"{}\",3,-5,7]", id("a").hex()));
        assert_eq!(
            serde_json::to_string(&index).unwrap(),
            format!("[null,9,{},2,\"{}\"]", 1u64 << 60, id("i").hex())
        );
        let named = format!("{{\"blob\":\"{}\",\"size\":3,\"mtime_ns\":-5,\"ino\":7}}", id("a"));
        assert_eq!(serde_json::from_str::<Placement>(&named).unwrap(), file);
        let named = format!(
            "{{\"blob\":null,\"written\":\"{}\",\"size\":9,\"mtime_ns\":{},\"ino\":2}}",
            id("i"),
            1u64 << 60
        );
        assert_eq!(serde_json::from_str::<Placement>(&named).unwrap(), index);
    }

    #[test]
    fn a_placement_of_another_shape_is_refused() {
        let hex = id("a").hex();
        for bad in [
            format!("[\"{hex}\",3,-5]"),
            format!("[\"{hex}\",3,-5,7,\"{hex}\",1]"),
            format!("[\"{}\",3,-5,7]", &hex[1..]),
            format!("[\"sha256:{hex}\",3,-5,7]"),
            "{\"blob\":null,\"size\":1,\"mtime_ns\":1,\"ino\":1,\"extra\":1}".to_string(),
        ] {
            assert!(serde_json::from_str::<Placement>(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_map_reads_the_same_in_key_order_or_not() {
        #[derive(Deserialize)]
        struct M(#[serde(deserialize_with = "sorted_map")] std::collections::BTreeMap<String, u64>);
        let sorted: M = serde_json::from_str(r#"{"a":1,"a/b":2,"b":3}"#).unwrap();
        let unsorted: M = serde_json::from_str(r#"{"b":3,"a":1,"a/b":2}"#).unwrap();
        let want = [("a", 1), ("a/b", 2), ("b", 3)].map(|(k, v)| (k.to_string(), v));
        assert_eq!(sorted.0, std::collections::BTreeMap::from(want.clone()));
        assert_eq!(unsorted.0, std::collections::BTreeMap::from(want));
        assert!(serde_json::from_str::<M>("[1]").is_err());
    }
}
