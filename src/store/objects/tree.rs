//! Tree objects: one directory as `{"entries":[[name,"blob"|"tree",hex],...]}`, sorted by name
//! bytewise, no modes, no empty directories. Decoding validates names, order and canonical form,
//! so a tree naming `..`, `/abs` or `a/b` can never be read back.

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::model::{EntryKind, Id, Name, StorePath, canonical};
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Entry {
    pub name: Name,
    pub kind: EntryKind,
    pub id: Id,
}

/// One directory of a typed tree.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Tree {
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Encoded {
    entries: Vec<(String, EntryKind, String)>,
}

/// Two entries of one directory with the same name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("two entries are named {0:?}")]
pub struct DuplicateName(pub String);

impl Tree {
    /// Builds a tree from entries in any order; two entries with one name are refused.
    pub fn new(mut entries: Vec<Entry>) -> Result<Tree, DuplicateName> {
        entries.sort_unstable_by(|a, b| a.name.as_str().as_bytes().cmp(b.name.as_str().as_bytes()));
        if let Some(w) = entries.windows(2).find(|w| w[0].name == w[1].name) {
            return Err(DuplicateName(w[0].name.to_string()));
        }
        Ok(Tree { entries })
    }

    /// A directory's entries keyed by name: unique, and in tree order, by construction.
    pub fn from_names(entries: BTreeMap<Name, (EntryKind, Id)>) -> Tree {
        Tree { entries: entries.into_iter().map(|(name, (kind, id))| Entry { name, kind, id }).collect() }
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.name.as_str().as_bytes().cmp(name.as_bytes()))
            .ok()
            .map(|i| &self.entries[i])
    }

    /// The canonical encoding: exactly the bytes stored in `trees/<aa>/<hex>.json`.
    pub fn encode(&self) -> Vec<u8> {
        let encoded = Encoded {
            entries: self.entries.iter().map(|e| (e.name.as_str().to_string(), e.kind, e.id.hex())).collect(),
        };
        canonical::encode(&encoded)
    }

    pub fn id(&self) -> Id {
        canonical::object_id("tree", &self.encode())
    }

    /// The id of the tree with no entries (an empty kind, a fresh checkout).
    pub fn empty_id() -> Id {
        static EMPTY: std::sync::OnceLock<Id> = std::sync::OnceLock::new();
        *EMPTY.get_or_init(|| Tree::default().id())
    }

    /// Decodes and validates a stored tree; rejects anything but the canonical form.
    pub fn decode(bytes: &[u8]) -> std::result::Result<Tree, String> {
        let raw: Encoded = serde_json::from_slice(bytes).map_err(|e| format!("not a tree object: {e}"))?;
        let mut entries = Vec::with_capacity(raw.entries.len());
        for (name, kind, hex) in raw.entries {
            let checked = Name::new(&name).map_err(|p| format!("entry {name:?}: {}", p.describe()))?;
            let id = Id::from_hex(&hex).ok_or_else(|| format!("entry {name:?}: bad id {hex:?}"))?;
            entries.push(Entry { name: checked, kind, id });
        }
        for w in entries.windows(2) {
            if w[0].name.as_str().as_bytes() >= w[1].name.as_str().as_bytes() {
                return Err(format!(
                    "entries not sorted or not unique at {:?}, {:?}",
                    w[0].name.as_str(),
                    w[1].name.as_str()
                ));
            }
        }
        let tree = Tree { entries };
        if tree.encode() != bytes {
            return Err("not in canonical form".into());
        }
        Ok(tree)
    }
}

/// Trees a Store handle has read and checked, by id. A tree's id is the hash of its content, so
/// an entry never goes stale: resolving a thousand mounts under one root decodes the root once,
/// not once per mount. Bounded, so a walk over a big Store holds no more than this many.
#[derive(Debug, Default)]
pub(in crate::store) struct Decoded(std::sync::Mutex<std::collections::HashMap<Id, Tree>>);

impl Decoded {
    const MAX: usize = 4096;

    fn get(&self, id: &Id) -> Option<Tree> {
        self.0.lock().expect("decoded trees").get(id).cloned()
    }

    fn put(&self, id: Id, tree: &Tree) {
        let mut trees = self.0.lock().expect("decoded trees");
        if trees.len() >= Self::MAX {
            trees.clear();
        }
        trees.insert(id, tree.clone());
    }
}

/// Where trees are read from: the Store, or the Store plus trees computed in memory.
pub trait TreeSource {
    fn tree(&self, id: &Id) -> Result<Tree>;
}

impl TreeSource for Store {
    fn tree(&self, id: &Id) -> Result<Tree> {
        self.read_tree(id)
    }
}

impl TreeSource for Writer<'_> {
    fn tree(&self, id: &Id) -> Result<Tree> {
        if let Some(t) = self.trees.lock().expect("tree cache").get(id) {
            return Ok(t.clone());
        }
        self.store.read_tree(id)
    }
}

/// Trees computed in memory (a source folder hashed without writing), over an optional Store.
pub struct Overlay<'s> {
    pub store: Option<&'s Store>,
    pub trees: std::collections::HashMap<Id, Tree>,
}

impl TreeSource for Overlay<'_> {
    fn tree(&self, id: &Id) -> Result<Tree> {
        if let Some(t) = self.trees.get(id) {
            return Ok(t.clone());
        }
        match self.store {
            Some(s) => s.read_tree(id),
            None if *id == Tree::empty_id() => Ok(Tree::default()),
            None => Err(Error::MissingObject { what: "tree", id: *id }),
        }
    }
}

/// Walks from tree `root` to `path`; `None` when nothing is there.
pub fn lookup(trees: &dyn TreeSource, root: &Id, path: &StorePath) -> Result<Option<(EntryKind, Id)>> {
    let mut current = (EntryKind::Tree, *root);
    for name in path.components() {
        if current.0 != EntryKind::Tree {
            return Ok(None);
        }
        match trees.tree(&current.1)?.get(name) {
            Some(e) => current = (e.kind, e.id),
            None => return Ok(None),
        }
    }
    Ok(Some(current))
}

/// Every file under tree `root`, as (path relative to `root`, blob id), in tree order.
pub fn walk_files(trees: &dyn TreeSource, root: &Id) -> Result<Vec<(StorePath, Id)>> {
    let mut out = Vec::new();
    walk_into(trees, root, &StorePath::root(), &mut out)?;
    Ok(out)
}

fn walk_into(
    trees: &dyn TreeSource,
    id: &Id,
    base: &StorePath,
    out: &mut Vec<(StorePath, Id)>,
) -> Result<()> {
    for e in trees.tree(id)?.entries() {
        let path = base.join(&e.name);
        match e.kind {
            EntryKind::Blob => out.push((path, e.id)),
            EntryKind::Tree => walk_into(trees, &e.id, &path, out)?,
        }
    }
    Ok(())
}

impl Store {
    /// Whether the tree is stored, loose or in a pack (listing the packs again before saying
    /// no, since another process may have packed it since this handle looked).
    pub(in crate::store) fn has_tree(&self, id: &Id) -> bool {
        self.stored_tree(id) || (self.rescan_packs().is_ok_and(|(_, fresh)| fresh) && self.in_packs(id))
    }

    /// [`Store::has_tree`] by what this handle knows: a writer, which holds the lock, knows
    /// every pack.
    pub(super) fn stored_tree(&self, id: &Id) -> bool {
        *id == Tree::empty_id() || self.in_packs(id) || fs::symlink_metadata(self.tree_path(id)).is_ok()
    }

    /// Reads a tree, checking its hash and form. The empty tree needs no file.
    pub(in crate::store) fn read_tree(&self, id: &Id) -> Result<Tree> {
        if *id == Tree::empty_id() {
            return Ok(Tree::default());
        }
        if let Some(tree) = self.decoded.get(id) {
            return Ok(tree);
        }
        let (bytes, path) = self.tree_bytes(id)?;
        if canonical::object_id("tree", &bytes) != *id {
            return Err(Error::corrupt("tree", &path, "content does not match its id"));
        }
        let tree = Tree::decode(&bytes).map_err(|reason| Error::corrupt("tree", &path, reason))?;
        self.decoded.put(*id, &tree);
        Ok(tree)
    }

    /// A stored tree's bytes, unchecked, with the file they came from (a pack or the loose
    /// file).
    pub(super) fn tree_bytes(&self, id: &Id) -> Result<(Vec<u8>, PathBuf)> {
        if let Some(found) = self.packed(id)? {
            return Ok(found);
        }
        let path = self.tree_path(id);
        match fsutil::read_object(&path) {
            Ok(bytes) => Ok((bytes, path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && self.rescan_packs()?.1 => {
                self.packed(id)?.ok_or_else(|| fsutil::object_error("tree", id, &path, e))
            }
            Err(e) => Err(fsutil::object_error("tree", id, &path, e)),
        }
    }

    /// Walks from `root` to `path`; `None` when nothing is there.
    pub(in crate::store) fn lookup(&self, root: &Id, path: &StorePath) -> Result<Option<(EntryKind, Id)>> {
        lookup(self, root, path)
    }

    pub(in crate::store) fn walk_files(&self, root: &Id) -> Result<Vec<(StorePath, Id)>> {
        walk_files(self, root)
    }
}

impl Writer<'_> {
    /// Writes a tree object unless it is already stored; returns its id.
    pub(super) fn put_tree(&self, tree: &Tree) -> Result<Id> {
        let bytes = tree.encode();
        let id = canonical::object_id("tree", &bytes);
        self.put_encoded_tree(tree, id, &bytes)?;
        Ok(id)
    }

    /// [`Writer::put_tree`] for a tree whose encoding and id are already computed.
    pub(super) fn put_encoded_tree(&self, tree: &Tree, id: Id, bytes: &[u8]) -> Result<()> {
        if !self.store.stored_tree(&id) {
            self.put_loose_tree(id, bytes)?;
        }
        self.cache_trees([(id, tree.clone())]);
        Ok(())
    }

    /// Writes a tree not yet stored as its own file.
    pub(super) fn put_loose_tree(&self, id: Id, bytes: &[u8]) -> Result<()> {
        let dest = self.store.tree_path(&id);
        fsutil::write_object(&self.store.tmp_dir(), &dest, bytes, 0o444)?;
        self.count_tree(&dest);
        Ok(())
    }

    /// Stores many new trees (id and encoding computed) as one pack.
    pub(super) fn put_tree_pack(&self, trees: &[&(Tree, Id, Vec<u8>)]) -> Result<()> {
        let mut objects: Vec<(Id, &[u8])> =
            trees.iter().map(|(_, id, bytes)| (*id, bytes.as_slice())).collect();
        self.put_pack(&mut objects)?;
        self.count_trees(objects.len());
        Ok(())
    }

    /// Remembers trees this writer stored, so diffing what it just wrote reads nothing back.
    pub(super) fn cache_trees(&self, trees: impl IntoIterator<Item = (Id, Tree)>) {
        self.trees.lock().expect("tree cache").extend(trees);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: EntryKind, content: &[u8]) -> Entry {
        Entry { name: Name::new(name).unwrap(), kind, id: Id::of_bytes(content) }
    }

    #[test]
    fn empty_tree_id_is_fixed() {
        assert_eq!(Tree::default().encode(), br#"{"entries":[]}"#);
        assert_eq!(
            Tree::default().id().to_string(),
            "sha256:514c2321b3b4e64f3d0ea5ca26e174413d315c471ea807fb7b13deab4ccb2d31"
        );
    }

    #[test]
    fn sorts_bytewise_and_round_trips() {
        let t = Tree::new(vec![
            entry("b", EntryKind::Blob, b"1"),
            entry("B", EntryKind::Tree, b"2"),
            entry("a", EntryKind::Blob, b"3"),
        ])
        .unwrap();
        let dup = Tree::new(vec![entry("a", EntryKind::Blob, b"1"), entry("a", EntryKind::Tree, b"2")]);
        assert_eq!(dup, Err(DuplicateName("a".into())));
        let names: Vec<_> = t.entries().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["B", "a", "b"]);
        assert_eq!(Tree::decode(&t.encode()).unwrap(), t);
    }

    #[test]
    fn decode_rejects_hostile_names_order_and_form() {
        let hex = Id::of_bytes(b"x").hex();
        for name in ["..", ".", "", "/abs", "a/b", "a\u{0}b", "a\\b"] {
            let json =
                format!(r#"{{"entries":[[{},"blob","{hex}"]]}}"#, serde_json::to_string(name).unwrap());
            assert!(Tree::decode(json.as_bytes()).is_err(), "{name:?} accepted");
        }
        let unsorted = format!(r#"{{"entries":[["b","blob","{hex}"],["a","blob","{hex}"]]}}"#);
        assert!(Tree::decode(unsorted.as_bytes()).unwrap_err().contains("sorted"));
        let spaced = format!(r#"{{"entries": [["a","blob","{hex}"]]}}"#);
        assert!(Tree::decode(spaced.as_bytes()).unwrap_err().contains("canonical"));
        let extra = format!(r#"{{"entries":[["a","blob","{hex}"]],"mode":1}}"#);
        assert!(Tree::decode(extra.as_bytes()).is_err());
    }
}
