//! Derivation records, `derivations/<aa>/<id>/derivation.json`: the files one mount selected
//! (mount-relative path -> blob; the id covers only these entries, so every project selecting
//! the same files shares one derivation), plus unhashed origins, provenance and the conflict
//! decisions of the build that made it. Every field is typed and validated when read.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeTuple, Serializer};
use serde::{Deserialize, Serialize};

use super::objdir::object_dir;
use crate::model::decision::Decision;
use crate::model::{EntryKind, Id, Kind, Locator, Name, StorePath, canonical};
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

pub const RECORD: &str = "derivation.json";
const ARTIFACTS: &str = "artifacts";

/// One file of a derivation; encoded `[path, "<64 hex>"]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DerivationEntry {
    pub path: StorePath,
    pub blob: Id,
}

/// Where an entry came from: the Store file and the index of the mount's locator that
/// selected it; encoded `[path, "kind/store/path", locator]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryOrigin {
    pub path: StorePath,
    pub kind: Kind,
    pub store_path: StorePath,
    pub locator: usize,
}

impl EntryOrigin {
    /// `rules/python/style.md`
    pub fn place(&self) -> String {
        format!("{}/{}", self.kind, self.store_path)
    }
}

/// A locator's resolution as recorded in a derivation (unhashed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    // Fields in the order of their names, so the canonical encoding writes them straight.
    pub generation: Option<Id>,
    pub id: Id,
    pub locator: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// `derivation.json`: the hashed entries plus unhashed origins, provenance and decisions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationRecord {
    // Fields in the order of their names, so the canonical encoding writes them straight.
    pub decisions: Vec<Decision>,
    pub entries: Vec<DerivationEntry>,
    pub origins: Vec<EntryOrigin>,
    pub provenance: Vec<Provenance>,
    /// The id once computed or checked: encoding the entries of a large derivation takes a
    /// while, and a build needs its id more than once.
    #[serde(skip)]
    id: std::cell::OnceCell<Id>,
}

impl DerivationRecord {
    pub fn new(
        entries: Vec<DerivationEntry>,
        origins: Vec<EntryOrigin>,
        provenance: Vec<Provenance>,
        decisions: Vec<Decision>,
    ) -> DerivationRecord {
        DerivationRecord { decisions, entries, origins, provenance, id: std::cell::OnceCell::new() }
    }

    /// The record of entries whose id the caller has computed ([`DerivationRecord::id_of`]).
    pub(crate) fn known_as(self, id: Id) -> DerivationRecord {
        debug_assert_eq!(id, DerivationRecord::id_of(&self.entries));
        let _ = self.id.set(id);
        self
    }

    /// The derivation id: a pure function of the sorted (path, blob) entries.
    pub fn id_of(entries: &[DerivationEntry]) -> Id {
        #[derive(Serialize)]
        struct Hashed<'a> {
            entries: &'a [DerivationEntry],
        }
        canonical::object_id("derivation", &canonical::encode(&Hashed { entries }))
    }

    pub fn id(&self) -> Id {
        *self.id.get_or_init(|| DerivationRecord::id_of(&self.entries))
    }

    /// Decodes a derivation record and checks that its entries hash to `id` and that each has
    /// one origin (the one check for records read from the store and fetched from a remote).
    pub fn decode(bytes: &[u8], id: &Id) -> std::result::Result<DerivationRecord, String> {
        let stored = Stored::parse(bytes, id)?;
        let entries: Vec<DerivationEntry> =
            serde_json::from_str(stored.entries.get()).map_err(|e| e.to_string())?;
        let origins: Vec<EntryOrigin> =
            serde_json::from_str(stored.origins.get()).map_err(|e| e.to_string())?;
        if let Some(w) = entries.windows(2).find(|w| w[0].path.as_str() >= w[1].path.as_str()) {
            return Err(format!("entries are not sorted or name {:?} twice", w[1].path.as_str()));
        }
        if origins.len() != entries.len() || origins.iter().zip(&entries).any(|(o, e)| o.path != e.path) {
            return Err("origins do not match its entries".into());
        }
        let record = DerivationRecord::new(entries, origins, stored.provenance, stored.decisions);
        // Its id is the hash of the entries as stored, checked above: no re-encoding needed.
        let _ = record.id.set(*id);
        Ok(record)
    }

    /// The entry at `path` of the record `bytes` of derivation `id`, with its origin, and the
    /// record's decisions and provenance: what `explain` shows of one file, without building
    /// every entry of a large derivation.
    pub fn decode_one(
        bytes: &[u8],
        id: &Id,
        path: &StorePath,
    ) -> std::result::Result<Option<OneEntry>, String> {
        use std::borrow::Cow;
        let stored = Stored::parse(bytes, id)?;
        #[derive(Deserialize)]
        struct Entry<'a>(#[serde(borrow)] Cow<'a, str>, #[serde(borrow)] Cow<'a, str>);
        let entries: Vec<Entry> = serde_json::from_str(stored.entries.get()).map_err(|e| e.to_string())?;
        let origins: Vec<&serde_json::value::RawValue> =
            serde_json::from_str(stored.origins.get()).map_err(|e| e.to_string())?;
        if origins.len() != entries.len() {
            return Err("origins do not match its entries".into());
        }
        let Ok(i) = entries.binary_search_by(|e| e.0.as_bytes().cmp(path.as_str().as_bytes())) else {
            return Ok(None);
        };
        let blob = Id::from_hex(&entries[i].1).ok_or_else(|| format!("entry {:?}: bad id", path.as_str()))?;
        let origin: EntryOrigin = serde_json::from_str(origins[i].get()).map_err(|e| e.to_string())?;
        if origin.path != *path {
            return Err("origins do not match its entries".into());
        }
        Ok(Some(OneEntry { blob, origin, decisions: stored.decisions, provenance: stored.provenance }))
    }

    /// The blob of each entry, as (path, blob).
    pub fn files(&self) -> Vec<(StorePath, Id)> {
        self.entries.iter().map(|e| (e.path.clone(), e.blob)).collect()
    }
}

/// One entry of a stored derivation, with what the record says of all of them.
#[derive(Clone, Debug)]
pub struct OneEntry {
    pub blob: Id,
    pub origin: EntryOrigin,
    pub decisions: Vec<Decision>,
    pub provenance: Vec<Provenance>,
}

/// A stored record with its entries and origins still as text, its id checked: records are
/// written canonically, so the stored text of the entries is the encoding their id hashes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored<'a> {
    decisions: Vec<Decision>,
    #[serde(borrow)]
    entries: &'a serde_json::value::RawValue,
    #[serde(borrow)]
    origins: &'a serde_json::value::RawValue,
    provenance: Vec<Provenance>,
}

impl<'a> Stored<'a> {
    fn parse(bytes: &'a [u8], id: &Id) -> std::result::Result<Stored<'a>, String> {
        let stored: Stored = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let entries = stored.entries.get().as_bytes();
        if canonical::object_id_of_parts("derivation", &[b"{\"entries\":", entries, b"}"]) != *id {
            return Err("entries do not hash to its id".into());
        }
        Ok(stored)
    }
}

impl Store {
    pub(super) fn derivation_dir(&self, id: &Id) -> std::path::PathBuf {
        object_dir(self, "derivations", id)
    }

    pub(super) fn has_derivation(&self, id: &Id) -> bool {
        self.derivation_dir(id).join(RECORD).exists()
    }

    /// Reads a stored derivation record, checking that its entries hash to `id`.
    pub(in crate::store) fn read_derivation(&self, id: &Id) -> Result<DerivationRecord> {
        let path = self.derivation_dir(id).join(RECORD);
        let bytes =
            fsutil::read_object(&path).map_err(|e| fsutil::object_error("derivation", id, &path, e))?;
        DerivationRecord::decode(&bytes, id).map_err(|reason| Error::corrupt("derivation", &path, reason))
    }

    /// The entry at `path` of stored derivation `id` (see [`DerivationRecord::decode_one`]).
    pub(super) fn derivation_entry(&self, id: &Id, path: &StorePath) -> Result<Option<OneEntry>> {
        let file = self.derivation_dir(id).join(RECORD);
        let bytes =
            fsutil::read_object(&file).map_err(|e| fsutil::object_error("derivation", id, &file, e))?;
        DerivationRecord::decode_one(&bytes, id, path)
            .map_err(|reason| Error::corrupt("derivation", &file, reason))
    }
}

impl Store {
    /// Where derived artifact `name` of derivation `id` is kept (`artifacts/<name>`).
    pub(super) fn artifact_path(&self, id: &Id, name: &Name) -> std::path::PathBuf {
        self.derivation_dir(id).join(ARTIFACTS).join(name.as_str())
    }

    pub(super) fn has_artifact(&self, id: &Id, name: &Name) -> bool {
        self.artifact_path(id, name).exists()
    }

    /// A derived artifact, when it has been computed.
    pub(super) fn artifact(&self, id: &Id, name: &Name) -> Option<Vec<u8>> {
        fsutil::read_object(&self.artifact_path(id, name)).ok()
    }
}

impl Writer<'_> {
    /// Stores a derived artifact of a stored derivation (read-only, replaced atomically).
    pub(super) fn put_artifact(&self, id: &Id, name: &Name, bytes: &[u8]) -> Result<()> {
        let dir = self.store.derivation_dir(id).join(ARTIFACTS);
        fsutil::create_dir(&dir)?;
        Ok(fsutil::write_atomic_mode(&self.store.tmp_dir(), &dir.join(name.as_str()), bytes, 0o444)?)
    }

    /// Stores a derivation record unless it exists. Returns its id and whether it was new.
    pub(super) fn put_derivation(&self, record: &DerivationRecord) -> Result<(Id, bool)> {
        let id = record.id();
        let new = self.put_record("derivations", &id, RECORD, || canonical::encode(record))?;
        Ok((id, new))
    }

    /// The derivation's files as a read-only directory of hardlinks (where `[artifacts]` hooks
    /// run), made on first use; every blob it names must be in the store.
    pub(super) fn derivation_tree(&self, record: &DerivationRecord) -> Result<std::path::PathBuf> {
        self.put_tree_dir(&self.store.derivation_dir(&record.id()), &record.files())
    }
}

impl Serialize for DerivationEntry {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&self.path)?;
        t.serialize_element(self.blob.text().hex())?;
        t.end()
    }
}

impl<'de> Deserialize<'de> for DerivationEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<DerivationEntry, D::Error> {
        let (path, hex): (StorePath, String) = Deserialize::deserialize(d)?;
        let blob = Id::from_hex(&hex)
            .ok_or_else(|| de::Error::custom(format!("entry {:?}: bad id {hex:?}", path.as_str())))?;
        Ok(DerivationEntry { path, blob })
    }
}

impl Serialize for EntryOrigin {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&self.path)?;
        t.serialize_element(&self.place())?;
        t.serialize_element(&self.locator)?;
        t.end()
    }
}

impl<'de> Deserialize<'de> for EntryOrigin {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<EntryOrigin, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EntryOrigin;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[path, Store file, locator index]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<EntryOrigin, A::Error> {
                let missing = || de::Error::custom("an origin has three elements");
                let path: StorePath = seq.next_element()?.ok_or_else(missing)?;
                let place: String = seq.next_element()?.ok_or_else(missing)?;
                let locator: usize = seq.next_element()?.ok_or_else(missing)?;
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(missing());
                }
                let file = Locator::parse_file(&place)
                    .ok_or_else(|| de::Error::custom(format!("origin {place:?} is not a Store file")))?;
                Ok(EntryOrigin { path, kind: file.kind, store_path: file.path, locator })
            }
        }
        d.deserialize_tuple(3, V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(store_path: &str) -> DerivationRecord {
        let path = StorePath::new("x/logo@2x.md").unwrap();
        let entry = DerivationEntry { path: path.clone(), blob: Id::of_bytes(b"logo") };
        let origin = EntryOrigin {
            path,
            kind: Kind::Docs,
            store_path: StorePath::new(store_path).unwrap(),
            locator: 0,
        };
        DerivationRecord::new(vec![entry], vec![origin], Vec::new(), Vec::new())
    }

    #[test]
    fn an_origin_named_with_an_at_sign_reads_back() {
        let written = record("lib/x/logo@2x.md");
        let bytes = canonical::encode(&written);
        let read = DerivationRecord::decode(&bytes, &written.id()).unwrap();
        assert_eq!(read.origins, written.origins);
        assert_eq!(read.origins[0].place(), "docs/lib/x/logo@2x.md");
    }

    #[test]
    fn an_origin_that_is_not_a_store_file_is_refused() {
        let written = record("lib/x/logo@2x.md");
        let good = String::from_utf8(canonical::encode(&written)).unwrap();
        for bad in ["docs/", "docs", "notes/lib/a.md", "docs/lib//a.md", "docs/lib/../a.md"] {
            let text = good.replace("docs/lib/x/logo@2x.md", bad);
            let err = DerivationRecord::decode(text.as_bytes(), &written.id()).unwrap_err();
            assert!(err.contains("is not a Store file"), "{bad}: {err}");
        }
    }
    /// A record of files named `names` (sorted here), each from `docs/lib/<name>`.
    fn record_of(names: &[&str]) -> DerivationRecord {
        let mut names = names.to_vec();
        names.sort();
        let (entries, origins) = names
            .iter()
            .map(|n| {
                let path = StorePath::new(n).unwrap();
                let store_path = StorePath::new(&format!("lib/{n}")).unwrap();
                let entry = DerivationEntry { path: path.clone(), blob: Id::of_bytes(n.as_bytes()) };
                (entry, EntryOrigin { path, kind: Kind::Docs, store_path, locator: 0 })
            })
            .unzip();
        DerivationRecord::new(entries, origins, Vec::new(), Vec::new())
    }

    #[test]
    fn one_entry_is_read_as_the_whole_record_has_it() {
        let names = ["a.md", "b/c.md", "b/d \"q\".md", "b/é.md", "tab\there.md", "z/z/z.md"];
        let written = record_of(&names);
        let bytes = canonical::encode(&written);
        let whole = DerivationRecord::decode(&bytes, &written.id()).unwrap();
        for (i, name) in names.iter().enumerate() {
            let path = StorePath::new(name).unwrap();
            let one = DerivationRecord::decode_one(&bytes, &written.id(), &path).unwrap().unwrap();
            let at = whole.entries.iter().position(|e| e.path == path).unwrap();
            assert_eq!((one.blob, &one.origin), (whole.entries[at].blob, &whole.origins[at]), "{i}: {name}");
        }
        let absent = StorePath::new("b/c").unwrap();
        assert!(DerivationRecord::decode_one(&bytes, &written.id(), &absent).unwrap().is_none());
    }

    #[test]
    fn a_record_whose_stored_entries_are_not_what_its_id_hashes_is_refused() {
        let written = record_of(&["a.md", "b.md"]);
        let good = String::from_utf8(canonical::encode(&written)).unwrap();
        let a = StorePath::new("a.md").unwrap();
        // Another blob, and the same entries spaced out: both are not the text the id hashes.
        let other = good.replacen(&Id::of_bytes(b"a.md").hex(), &"0".repeat(64), 1);
        let spaced = good.replacen("],[", "], [", 1);
        for bad in [other, spaced] {
            assert_ne!(bad, good);
            let err = DerivationRecord::decode(bad.as_bytes(), &written.id()).unwrap_err();
            assert_eq!(err, "entries do not hash to its id");
            let err = DerivationRecord::decode_one(bad.as_bytes(), &written.id(), &a).unwrap_err();
            assert_eq!(err, "entries do not hash to its id");
        }
    }
}
