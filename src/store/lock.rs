//! The store's single writer lock. Readers never take it: every object is immutable and
//! every mutable file (refs, `latest/`) is replaced by rename.

use std::fs::{self, File, OpenOptions};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use rustix::fs::FlockOperation;

use super::Store;
use crate::diagnostics::{Error, Result};

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
}

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
    pub fn writer(&self) -> Result<Writer<'_>> {
        let file = lock_exclusive(self.root())?;
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
        })
    }
}

/// Takes `<root>/lock` exclusively, waiting (and saying so) while another process holds it.
pub(crate) fn lock_exclusive(root: &Path) -> Result<File> {
    let path = root.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(Error::io("open the store lock", &path))?;
    if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        eprintln!("Blocking: waiting for another memorix process to release {}", path.display());
        rustix::fs::flock(&file, FlockOperation::LockExclusive)
            .map_err(|e| Error::io("lock", &path)(e.into()))?;
    }
    Ok(file)
}

impl Writer<'_> {
    pub(super) fn count_blob(&self, bytes: u64) {
        self.mark_dirty();
        self.new_blobs.fetch_add(1, Ordering::Relaxed);
        self.new_blob_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(super) fn count_tree(&self) {
        self.mark_dirty();
        self.new_trees.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stats(&self) -> WriteStats {
        WriteStats {
            blobs: self.new_blobs.load(Ordering::Relaxed),
            blob_bytes: self.new_blob_bytes.load(Ordering::Relaxed),
            trees: self.new_trees.load(Ordering::Relaxed),
        }
    }

    /// Notes that an object was written that a ref, lock or profile may come to name.
    pub(crate) fn mark_dirty(&self) {
        self.dirty.store(true, Ordering::Relaxed);
    }

    /// Makes every object written so far durable at once, before a ref may point at them.
    /// Nothing written, nothing to sync (`syncfs` would wait for unrelated writes too).
    pub fn sync(&self) -> Result<()> {
        if !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        super::fsutil::sync_filesystem(self.store.root())
    }
}
