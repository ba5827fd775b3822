//! The Store's objects, one of its three parts (with the records and the maintenance): blobs,
//! trees (loose or packed) and what is read through them. `store.objects()` reads;
//! `writer.objects()` adds under the writer lock. The files below hold the work: blobs, trees,
//! packs and the `incoming/` packs, Merkle editing, diffs, the `latest/` checkouts, the scan of
//! ingest sources and the stat cache. This facade is the whole of what the rest of memorix may
//! ask of them, with the types and functions re-exported below.

pub(in crate::store) mod blob;
pub(in crate::store) mod checkout;
pub(in crate::store) mod diff;
pub(in crate::store) mod incoming;
pub(in crate::store) mod merkle;
pub(in crate::store) mod pack;
pub(in crate::store) mod source;
pub(in crate::store) mod statcache;
pub(in crate::store) mod tombstone;
pub(in crate::store) mod tree;

use std::fs::File;
use std::path::{Path, PathBuf};

use super::records::locate::Found;
use super::{Result, Store, Writer};
use crate::model::{EntryKind, Id, IdPrefix, StorePath};

pub use blob::{hash_file, hash_object};
pub use checkout::remove_readonly_tree;
pub(crate) use checkout::{Dirs, exchange, fill_tree};
pub use diff::{Change, ChangeKind, diff_trees};
pub use merkle::Dir;
pub use source::{Layout, Snapshot, layout, snapshot};
pub use tree::{Entry, Overlay, Tree, TreeSource, lookup, walk_files};

/// What a reader may ask of the Store's objects.
#[derive(Clone, Copy)]
pub struct Objects<'a> {
    store: &'a Store,
}

/// The Store's objects under its writer lock.
#[derive(Clone, Copy)]
pub struct ObjectsWriter<'a, 's> {
    writer: &'a Writer<'s>,
}

impl Store {
    /// Blobs and trees, read-only.
    pub fn objects(&self) -> Objects<'_> {
        Objects { store: self }
    }
}

impl<'s> Writer<'s> {
    /// Blobs and trees added under this writer lock.
    pub fn objects(&self) -> ObjectsWriter<'_, 's> {
        ObjectsWriter { writer: self }
    }
}

impl Objects<'_> {
    /// Whether blob `id` is stored.
    pub fn has_blob(&self, id: &Id) -> bool {
        self.store.has_blob(id)
    }

    /// Opens blob `id` for reading.
    pub fn open_blob(&self, id: &Id) -> Result<File> {
        self.store.open_blob(id)
    }

    /// At most `max` bytes of blob `id`, put in `buf` (whose memory a caller reading many
    /// blobs reuses).
    pub fn read_blob(&self, id: &Id, max: u64, buf: &mut Vec<u8>) -> Result<()> {
        self.store.read_blob(id, max, buf)
    }

    /// Blob `id` from an incoming pack, checked against its id (`None` when no pack has it).
    pub fn incoming_blob(&self, id: &Id) -> Result<Option<Vec<u8>>> {
        self.store.incoming_blob(id)
    }

    /// Where blob `id` is (or would be) kept.
    pub fn blob_path(&self, id: &Id) -> PathBuf {
        self.store.blob_path(id)
    }

    /// Reads a tree, checking its hash and form. The empty tree needs no file.
    pub fn read_tree(&self, id: &Id) -> Result<Tree> {
        self.store.read_tree(id)
    }

    /// Whether the tree is stored, loose or in a pack (listing the packs again before saying
    /// no, since another process may have packed it since this handle looked).
    pub fn has_tree(&self, id: &Id) -> bool {
        self.store.has_tree(id)
    }

    /// A stored tree's bytes, unchecked, with the file they came from (a pack or the loose
    /// file).
    pub fn tree_bytes(&self, id: &Id) -> Result<(Vec<u8>, PathBuf)> {
        self.store.tree_bytes(id)
    }

    /// The ids of every packed tree (for `push --all`); only the indexes are read.
    pub fn packed_tree_ids(&self) -> Result<Vec<Id>> {
        self.store.packed_tree_ids()
    }

    /// The ids of every blob in an incoming pack (for `push --all`); only the indexes are read.
    pub fn incoming_blob_ids(&self) -> Result<Vec<Id>> {
        self.store.incoming_blob_ids()
    }

    /// Walks from `root` to `path`; `None` when nothing is there.
    pub fn lookup(&self, root: &Id, path: &StorePath) -> Result<Option<(EntryKind, Id)>> {
        self.store.lookup(root, path)
    }

    /// Every file under tree `root`, with its blob.
    pub fn walk_files(&self, root: &Id) -> Result<Vec<(StorePath, Id)>> {
        self.store.walk_files(root)
    }

    /// Every object whose id starts with `prefix`: blobs, trees, generations, derivations and
    /// environments.
    pub fn objects_matching(&self, prefix: &IdPrefix) -> Result<Vec<Found>> {
        self.store.objects_matching(prefix)
    }
}

impl ObjectsWriter<'_, '_> {
    /// Stores `bytes` as a blob (a no-op when it is already there).
    pub fn put_blob_bytes(&self, bytes: &[u8]) -> Result<Id> {
        self.writer.put_blob_bytes(bytes)
    }

    /// Takes a downloaded file that hashes to `id` (checked by the caller) as that blob:
    /// renamed into place, never copied.
    pub fn adopt_blob(&self, tmp: &Path, id: &Id, len: u64) -> Result<()> {
        self.writer.adopt_blob(tmp, id, len)
    }

    /// Writes a tree object unless it is already stored; returns its id.
    pub fn put_tree(&self, tree: &Tree) -> Result<Id> {
        self.writer.put_tree(tree)
    }
}
