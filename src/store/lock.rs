//! The store's single writer lock. Readers never take it: every object is immutable and
//! every mutable file (refs, `latest/`) is replaced by rename.

use std::fs::{self, File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use rustix::fs::FlockOperation;

use super::Store;
use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::progress::Progress;

/// Exclusive write access to a store; dropping it releases the lock.
pub struct Writer<'s> {
    pub store: &'s Store,
    _lock: File,
    /// Temp files a crashed writer left, removed when this lock was taken.
    pub stale_temp: usize,
    new_blobs: AtomicUsize,
    new_blob_bytes: AtomicU64,
    new_trees: AtomicUsize,
    dirty: AtomicBool,
    /// A `syncfs` started early (see [`Writer::start_sync`]).
    early_sync: std::sync::Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
    written: std::sync::Mutex<Vec<std::path::PathBuf>>,
    /// Trees this writer stored, so diffing what it just wrote reads nothing back.
    pub(super) trees: std::sync::Mutex<std::collections::HashMap<super::Id, super::tree::Tree>>,
}

/// Up to this many written files are fsynced one by one; more take a `syncfs`.
const FEW: usize = 64;

/// Below this many new blob bytes a second `syncfs` costs more than the overlap gains.
const EARLY_SYNC_BYTES: u64 = 64 << 20;

/// What a writer added to the store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct WriteStats {
    pub blobs: usize,
    pub blob_bytes: u64,
    pub trees: usize,
}

impl Store {
    /// Takes the writer lock, waiting for another writer to finish, and clears `tmp/` (any temp
    /// file there was left by a writer that crashed).
    pub fn writer(&self, progress: &dyn Progress) -> Result<Writer<'_>> {
        let file = lock_exclusive(self.root(), progress)?;
        let tmp = self.tmp_dir();
        super::fsutil::create_dir(&tmp)?;
        let mut stale_temp = 0;
        for entry in fs::read_dir(&tmp).map_err(Error::io("read", &tmp))? {
            let entry = entry.map_err(Error::io("read", &tmp))?;
            // Staged object directories hold read-only trees.
            super::checkout::remove_readonly_tree(&entry.path())?;
            stale_temp += 1;
        }
        Ok(Writer {
            store: self,
            _lock: file,
            stale_temp,
            new_blobs: AtomicUsize::new(0),
            new_blob_bytes: AtomicU64::new(0),
            new_trees: AtomicUsize::new(0),
            dirty: AtomicBool::new(false),
            early_sync: Default::default(),
            written: std::sync::Mutex::new(Vec::new()),
            trees: Default::default(),
        })
    }
}

/// Takes `<root>/lock` exclusively, waiting (and saying so) while another process holds it.
pub fn lock_exclusive(root: &Path, progress: &dyn Progress) -> Result<File> {
    let path = root.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(Error::io("open the store lock", &path))?;
    if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        progress
            .notice(&format!("Blocking: waiting for another memorix process to release {}", path.display()));
        rustix::fs::flock(&file, FlockOperation::LockExclusive)
            .map_err(|e| Error::io("lock", &path)(e.into()))?;
    }
    Ok(file)
}

impl Writer<'_> {
    pub(super) fn count_blob(&self, path: &Path, bytes: u64) {
        self.mark_written(path);
        self.new_blobs.fetch_add(1, Ordering::Relaxed);
        self.new_blob_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(super) fn count_tree(&self, path: &Path) {
        self.mark_written(path);
        self.new_trees.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stats(&self) -> WriteStats {
        WriteStats {
            blobs: self.new_blobs.load(Ordering::Relaxed),
            blob_bytes: self.new_blob_bytes.load(Ordering::Relaxed),
            trees: self.new_trees.load(Ordering::Relaxed),
        }
    }

    /// Notes that many objects were written (a directory of them): the next sync is a `syncfs`.
    pub(crate) fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Notes one object file written; a few of them are synced one by one.
    pub(crate) fn mark_written(&self, path: &Path) {
        let mut written = self.written.lock().expect("not poisoned");
        if written.len() < FEW {
            written.push(path.to_path_buf());
        } else {
            self.dirty.store(true, Ordering::Relaxed);
        }
    }

    /// Starts writing back what this writer wrote so far, in the background, when it is a big
    /// batch: the disk works while trees and checkouts are computed, and [`Writer::sync`] then
    /// waits for less. Durability is still [`Writer::sync`]'s promise alone.
    pub fn start_sync(&self) {
        if self.dirty.load(Ordering::Relaxed)
            && self.new_blob_bytes.load(Ordering::Relaxed) >= EARLY_SYNC_BYTES
        {
            let root = self.store.root().to_path_buf();
            *self.early_sync.lock().expect("not poisoned") =
                Some(std::thread::spawn(move || Ok(super::fsutil::sync_filesystem(&root)?)));
        }
    }

    /// Makes every object written so far durable at once, before a ref may point at them:
    /// a few files are fsynced (with their directories) in parallel, more take one `syncfs`
    /// (which also waits for other processes' writes to the file system, so it is kept for
    /// big batches, like git's `core.fsyncMethod=batch`). Nothing written, nothing to sync.
    pub fn sync(&self) -> Result<()> {
        if let Some(early) = self.early_sync.lock().expect("not poisoned").take() {
            early.join().expect("the sync thread does not panic")?;
        }
        let written = std::mem::take(&mut *self.written.lock().expect("not poisoned"));
        if self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(super::fsutil::sync_filesystem(self.store.root())?);
        }
        let mut dirs: Vec<&Path> = written.iter().filter_map(|p| p.parent()).collect();
        dirs.sort();
        dirs.dedup();
        use rayon::prelude::*;
        written
            .par_iter()
            .map(|p| p.as_path())
            .chain(dirs.into_par_iter())
            .try_for_each(|p| File::open(p).and_then(|f| f.sync_all()).map_err(Error::io("sync", p)))
    }
}
