//! The objects a remote holds, their keys (the store's relative paths), the check each gets on
//! arrival (the same decoding the store does on read), and the closures push and pull move.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::lock::Lockfile;
use crate::model::{EntryKind, Id, Kind, Locator, canonical};
use crate::store::Store;
use crate::store::objects::Tree;
use crate::store::records::{DerivationRecord, EnvironmentRecord, Generation};

/// One content-addressed object. Variant order is upload order: what an object names is
/// uploaded before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Object {
    Blob(Id),
    Tree(Id),
    Generation(Kind, Id),
    Derivation(Id),
    Environment(Id),
}

/// An object's bytes, checked and decoded.
pub enum Decoded {
    Blob,
    Tree(Tree),
    Generation(Generation),
    Derivation(DerivationRecord),
    Environment(EnvironmentRecord),
}

impl Object {
    pub fn id(&self) -> Id {
        match self {
            Object::Blob(id)
            | Object::Tree(id)
            | Object::Generation(_, id)
            | Object::Derivation(id)
            | Object::Environment(id) => *id,
        }
    }

    /// The object's path relative to the store root, which is also its key on a remote.
    pub fn key(&self) -> String {
        let hex = self.id().hex();
        let fan = &hex[..2];
        match self {
            Object::Blob(_) => format!("blobs/{fan}/{hex}"),
            Object::Tree(_) => format!("trees/{fan}/{hex}.json"),
            Object::Generation(kind, _) => format!("generations/{kind}/{hex}.json"),
            Object::Derivation(_) => format!("derivations/{fan}/{hex}/derivation.json"),
            Object::Environment(_) => format!("environments/{fan}/{hex}/environment.json"),
        }
    }

    pub fn what(&self) -> &'static str {
        match self {
            Object::Blob(_) => "blob",
            Object::Tree(_) => "tree",
            Object::Generation(..) => "generation",
            Object::Derivation(_) => "derivation",
            Object::Environment(_) => "environment",
        }
    }

    pub fn local_path(&self, store: &Store) -> PathBuf {
        store.root().join(self.key())
    }

    pub fn is_local(&self, store: &Store) -> bool {
        match self {
            Object::Tree(id) => store.objects().has_tree(id),
            Object::Blob(id) => store.objects().has_blob(id),
            other => fs::symlink_metadata(other.local_path(store)).is_ok(),
        }
    }

    /// Checks that `bytes` are this object, as the store checks them on read: a blob's
    /// SHA-256, a tree's id and canonical form, a generation's, derivation's or environment's
    /// recomputed id.
    pub fn check(&self, bytes: &[u8]) -> std::result::Result<Decoded, String> {
        match self {
            Object::Blob(id) => {
                let actual = Id::of_bytes(bytes);
                if actual != *id {
                    return Err(format!("its content hashes to {actual}"));
                }
                Ok(Decoded::Blob)
            }
            Object::Tree(id) => {
                if canonical::object_id("tree", bytes) != *id {
                    return Err("its content does not hash to its id".into());
                }
                Tree::decode(bytes).map(Decoded::Tree)
            }
            Object::Generation(kind, id) => {
                let g = Generation::decode(bytes, id)?;
                if g.kind != *kind {
                    return Err(format!("it is a {} generation, stored under {kind}", g.kind));
                }
                Ok(Decoded::Generation(g))
            }
            Object::Derivation(id) => DerivationRecord::decode(bytes, id).map(Decoded::Derivation),
            Object::Environment(id) => EnvironmentRecord::decode(bytes, id).map(Decoded::Environment),
        }
    }
}

impl fmt::Display for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.what(), self.id())
    }
}

/// The key of a quest record on a remote.
pub fn quest_key(id: &Id) -> String {
    format!("quests/{}.toml", id.hex())
}

/// What a lock names directly: its environment, derivations, generations and the content
/// each locator resolved to (the roots of its closure).
pub fn lock_roots(lock: &Lockfile) -> Vec<Object> {
    let mut roots = vec![Object::Environment(lock.environment.id)];
    for mount in lock.mounts.values() {
        roots.push(Object::Derivation(mount.derivation));
        for loc in &mount.locators {
            roots.push(match loc.kind {
                EntryKind::Blob => Object::Blob(loc.id),
                EntryKind::Tree => Object::Tree(loc.id),
            });
            if let (Some(g), Ok(parsed)) = (loc.generation, Locator::parse(&loc.locator)) {
                roots.push(Object::Generation(parsed.kind, g));
            }
        }
    }
    roots
}

/// The local closure of a lock, sorted in upload order: the roots, every tree and blob under
/// each locator's content, the blobs of each derivation. Every object must be in the store
/// (read and checked as the store reads it); the empty tree needs no object.
pub fn lock_closure(store: &Store, lock: &Lockfile) -> Result<Vec<Object>> {
    let mut seen = HashSet::new();
    let mut stack: Vec<(Object, String)> =
        lock_roots(lock).into_iter().map(|o| (o, "memorix.lock names".to_string())).collect();
    while let Some((obj, needed_by)) = stack.pop() {
        if obj == Object::Tree(Tree::empty_id()) || !seen.insert(obj) {
            continue;
        }
        let missing = |e: crate::store::Error| match e.missing_object() {
            Some(_) => Error::PushIncomplete { object: obj.to_string(), needed_by: needed_by.clone() },
            None => Error::Store(e),
        };
        match obj {
            Object::Blob(id) if !store.objects().has_blob(&id) => {
                return Err(Error::PushIncomplete { object: obj.to_string(), needed_by });
            }
            Object::Blob(_) => {}
            Object::Tree(id) => {
                for e in store.objects().read_tree(&id).map_err(missing)?.entries() {
                    let child = match e.kind {
                        EntryKind::Blob => Object::Blob(e.id),
                        EntryKind::Tree => Object::Tree(e.id),
                    };
                    stack.push((child, format!("tree {id} holds")));
                }
            }
            Object::Generation(kind, id) => {
                store.records().read_generation(kind, &id).map_err(missing)?;
            }
            Object::Derivation(id) => {
                for (_, blob) in store.records().read_derivation(&id).map_err(missing)?.files() {
                    stack.push((Object::Blob(blob), format!("derivation {id} holds")));
                }
            }
            Object::Environment(id) => {
                for (_, drv) in store.records().read_environment(&id).map_err(missing)?.mounts {
                    stack.push((Object::Derivation(drv), format!("environment {id} mounts")));
                }
            }
        }
    }
    let mut out: Vec<Object> = seen.into_iter().collect();
    out.sort();
    Ok(out)
}

/// Every object in the store, in upload order (for `push --all`), and every quest id.
pub fn store_contents(store: &Store) -> Result<(Vec<Object>, Vec<Id>)> {
    let mut out = BTreeSet::new();
    let root = store.root();
    for (sub, suffix) in [("blobs", ""), ("trees", ".json")] {
        for (_, hex) in fanout(&root.join(sub))? {
            if let Some(id) = hex.strip_suffix(suffix).and_then(Id::from_hex) {
                out.insert(if sub == "blobs" { Object::Blob(id) } else { Object::Tree(id) });
            }
        }
    }
    out.extend(store.objects().packed_tree_ids()?.into_iter().map(Object::Tree));
    out.extend(store.objects().incoming_blob_ids()?.into_iter().map(Object::Blob));
    for kind in Kind::ALL {
        for name in names(&store.records().generations_dir(kind))? {
            if let Some(id) = name.strip_suffix(".json").and_then(Id::from_hex) {
                out.insert(Object::Generation(kind, id));
            }
        }
    }
    for (sub, record) in [("derivations", "derivation.json"), ("environments", "environment.json")] {
        for (dir, hex) in fanout(&root.join(sub))? {
            if let Some(id) = Id::from_hex(&hex).filter(|_| dir.join(&hex).join(record).is_file()) {
                out.insert(if sub == "derivations" {
                    Object::Derivation(id)
                } else {
                    Object::Environment(id)
                });
            }
        }
    }
    let quests = names(&store.records().quests_dir())?
        .iter()
        .filter_map(|n| n.strip_suffix(".toml").and_then(Id::from_hex))
        .collect();
    Ok((out.into_iter().collect(), quests))
}

/// The entries of `dir/<aa>/` as (fan-out directory, name).
fn fanout(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    for fan in names(dir)? {
        let sub = dir.join(&fan);
        if sub.is_dir() {
            out.extend(names(&sub)?.into_iter().map(|n| (sub.clone(), n)));
        }
    }
    Ok(out)
}

fn names(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(Error::io("read", dir))?;
        if let Some(name) = entry.file_name().to_str() {
            out.push(name.to_string());
        }
    }
    out.sort();
    Ok(out)
}
