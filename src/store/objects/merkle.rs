//! Bottom-up (Merkle) tree editing: only directories on the path of a change are loaded and
//! rewritten; every untouched sibling keeps its tree id.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::tree::Tree;
use crate::model::{EntryKind, Id, Name, StorePath, canonical};
use crate::store::error::Result;
use crate::store::{Store, Writer};

#[derive(Clone)]
enum Slot {
    Blob(Id),
    /// An unchanged subtree, not loaded.
    Tree(Id),
    /// A directory being edited (or built from scratch).
    Dir(Dir),
}

/// An editable directory. Keys are validated [`Name`]s.
#[derive(Default, Clone)]
pub struct Dir {
    entries: BTreeMap<Name, Slot>,
}

impl Dir {
    /// Places a blob at `path` relative to this directory (a file in the way of a directory is
    /// replaced, as is a directory in the way of a file).
    pub fn insert_blob(&mut self, path: &StorePath, id: Id) {
        let (parent, name) = split(path);
        let dir = self.descend_fresh(&parent);
        dir.entries.insert(name, Slot::Blob(id));
    }

    /// Places the stored tree `id` at `path` (a directory known unchanged), unloaded.
    pub fn insert_tree(&mut self, path: &StorePath, id: Id) {
        let (parent, name) = split(path);
        let dir = self.descend_fresh(&parent);
        dir.entries.insert(name, Slot::Tree(id));
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn descend_fresh(&mut self, parent: &[Name]) -> &mut Dir {
        let mut dir = self;
        for name in parent {
            let slot = dir.entries.entry(name.clone()).or_insert_with(|| Slot::Dir(Dir::default()));
            if !matches!(slot, Slot::Dir(_)) {
                *slot = Slot::Dir(Dir::default());
            }
            let Slot::Dir(d) = slot else { unreachable!() };
            dir = d;
        }
        dir
    }
}

fn split(path: &StorePath) -> (Vec<Name>, Name) {
    let mut parts = path.names();
    let name = parts.pop().expect("a file path has at least one component");
    (parts, name)
}

/// Edits the tree rooted at one generation's root.
pub struct TreeEditor<'s> {
    store: &'s Store,
    root: Dir,
}

impl<'s> TreeEditor<'s> {
    pub fn new(store: &'s Store, root: Option<&Id>) -> Result<TreeEditor<'s>> {
        let root = match root {
            Some(id) => load(store, id)?,
            None => Dir::default(),
        };
        Ok(TreeEditor { store, root })
    }

    /// Loads the directories along `parent`, creating missing ones (and replacing files).
    fn descend(&mut self, parent: &[Name]) -> Result<&mut Dir> {
        let store = self.store;
        let mut dir = &mut self.root;
        for name in parent {
            let slot = dir.entries.entry(name.clone()).or_insert_with(|| Slot::Dir(Dir::default()));
            match slot {
                Slot::Dir(_) => {}
                Slot::Tree(id) => *slot = Slot::Dir(load(store, &id.clone())?),
                Slot::Blob(_) => *slot = Slot::Dir(Dir::default()),
            }
            let Slot::Dir(d) = slot else { unreachable!() };
            dir = d;
        }
        Ok(dir)
    }

    pub fn put_blob(&mut self, path: &StorePath, id: Id) -> Result<()> {
        let (parent, name) = split(path);
        self.descend(&parent)?.entries.insert(name, Slot::Blob(id));
        Ok(())
    }

    /// Replaces whatever is at `path` (the root included) with `dir`.
    pub fn put_dir(&mut self, path: &StorePath, dir: Dir) -> Result<()> {
        if path.is_root() {
            self.root = dir;
            return Ok(());
        }
        let (parent, name) = split(path);
        self.descend(&parent)?.entries.insert(name, Slot::Dir(dir));
        Ok(())
    }

    /// Adds `dir`'s files at `path`, keeping what is there and not in `dir` (`--merge`).
    pub fn merge_dir(&mut self, path: &StorePath, dir: Dir) -> Result<()> {
        let store = self.store;
        let target = self.descend(&path.names())?;
        merge_into(store, target, dir)
    }

    /// Removes the file or subtree at `path`; false when nothing was there.
    pub fn remove(&mut self, path: &StorePath) -> Result<bool> {
        let (parent, name) = split(path);
        // Walk without creating: a missing parent means nothing to remove.
        let store = self.store;
        let mut dir = &mut self.root;
        for part in &parent {
            let Some(slot) = dir.entries.get_mut(part) else { return Ok(false) };
            match slot {
                Slot::Dir(_) => {}
                Slot::Tree(id) => *slot = Slot::Dir(load(store, &id.clone())?),
                Slot::Blob(_) => return Ok(false),
            }
            let Slot::Dir(d) = slot else { unreachable!() };
            dir = d;
        }
        Ok(dir.entries.remove(&name).is_some())
    }

    /// Writes every changed directory bottom-up and returns the new root tree id.
    pub fn write(self, writer: &Writer) -> Result<Id> {
        self.write_recording(writer, &mut |_, _| {})
    }

    /// [`write`](Self::write), handing each directory written to `record` as (path from the
    /// root, tree id).
    pub fn write_recording(self, writer: &Writer, record: &mut dyn FnMut(&StorePath, Id)) -> Result<Id> {
        match self.root.store_recording(writer, record)? {
            Some(id) => Ok(id),
            None => writer.put_tree(&Tree::default()),
        }
    }
}

fn load(store: &Store, id: &Id) -> Result<Dir> {
    let tree = store.read_tree(id)?;
    let entries = tree
        .entries()
        .iter()
        .map(|e| {
            let slot = match e.kind {
                EntryKind::Blob => Slot::Blob(e.id),
                EntryKind::Tree => Slot::Tree(e.id),
            };
            (e.name.clone(), slot)
        })
        .collect();
    Ok(Dir { entries })
}

fn merge_into(store: &Store, target: &mut Dir, incoming: Dir) -> Result<()> {
    for (name, slot) in incoming.entries {
        match slot {
            Slot::Dir(sub) => {
                let existing = target.entries.entry(name).or_insert_with(|| Slot::Dir(Dir::default()));
                match existing {
                    Slot::Dir(_) => {}
                    Slot::Tree(id) => *existing = Slot::Dir(load(store, &id.clone())?),
                    Slot::Blob(_) => *existing = Slot::Dir(Dir::default()),
                }
                let Slot::Dir(d) = existing else { unreachable!() };
                merge_into(store, d, sub)?;
            }
            other => {
                target.entries.insert(name, other);
            }
        }
    }
    Ok(())
}

impl Dir {
    /// Stores every changed directory and returns this one's tree id (`None` when empty). Ids
    /// are computed bottom-up in memory first. Many new trees are written as one pack (whole
    /// or not at all); a few as files, level by level from the leaves, each level in parallel,
    /// so a crash never leaves a tree whose child is missing.
    pub fn store(self, writer: &Writer) -> Result<Option<Id>> {
        self.store_recording(writer, &mut |_, _| {})
    }

    /// [`store`](Self::store), handing each directory written to `record` as (path, tree id).
    fn store_recording(self, writer: &Writer, record: &mut dyn FnMut(&StorePath, Id)) -> Result<Option<Id>> {
        let mut levels: BTreeMap<usize, Vec<(Tree, Id, Vec<u8>)>> = BTreeMap::new();
        let mut height: std::collections::HashMap<Id, usize> = Default::default();
        let root = self.build_at(&StorePath::root(), &mut |path, t| {
            let bytes = t.encode();
            let id = canonical::object_id("tree", &bytes);
            let h = 1 + t.entries().iter().filter_map(|e| height.get(&e.id)).max().copied().unwrap_or(0);
            height.insert(id, h);
            levels.entry(h).or_default().push((t.clone(), id, bytes));
            record(path, id);
            Ok(id)
        })?;
        // Each tree is looked up once: those not yet stored are written, the others only cached.
        let fresh: Vec<Vec<&(Tree, Id, Vec<u8>)>> = levels
            .values()
            .map(|level| level.par_iter().filter(|(_, id, _)| !writer.store.stored_tree(id)).collect())
            .collect();
        let all: Vec<&(Tree, Id, Vec<u8>)> = fresh.iter().flatten().copied().collect();
        if all.len() >= super::pack::PACK_MIN {
            writer.put_tree_pack(&all)?;
        } else {
            for level in &fresh {
                level.par_iter().try_for_each(|(_, id, bytes)| writer.put_loose_tree(*id, bytes))?;
            }
        }
        writer.cache_trees(levels.into_values().flatten().map(|(t, id, _)| (id, t)));
        Ok(root)
    }

    /// Hands every changed directory to `sink` bottom-up (which stores it, or keeps it in
    /// memory) and returns the directory's tree id; `None` when empty (empty directories are
    /// not stored).
    pub fn build(self, sink: &mut dyn FnMut(&Tree) -> Result<Id>) -> Result<Option<Id>> {
        self.build_at(&StorePath::root(), &mut |_, t| sink(t))
    }

    /// [`build`](Self::build), giving `sink` each directory's path too.
    fn build_at(
        self,
        path: &StorePath,
        sink: &mut dyn FnMut(&StorePath, &Tree) -> Result<Id>,
    ) -> Result<Option<Id>> {
        let mut entries = BTreeMap::new();
        for (name, slot) in self.entries {
            let (kind, id) = match slot {
                Slot::Blob(id) => (EntryKind::Blob, id),
                Slot::Tree(id) => (EntryKind::Tree, id),
                Slot::Dir(d) => match d.build_at(&path.join(&name), sink)? {
                    Some(id) => (EntryKind::Tree, id),
                    None => continue,
                },
            };
            entries.insert(name, (kind, id));
        }
        if entries.is_empty() {
            return Ok(None);
        }
        sink(path, &Tree::from_names(entries)).map(Some)
    }
}
