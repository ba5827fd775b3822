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
    /// Incoming packs being sealed (see objects/incoming.rs), waited for by [`Writer::sync`].
    pub(super) sealing: std::sync::Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
    written: std::sync::Mutex<Vec<std::path::PathBuf>>,
    /// Trees this writer stored, so diffing what it just wrote reads nothing back.
    pub(super) trees: std::sync::Mutex<std::collections::HashMap<super::Id, super::objects::tree::Tree>>,
    /// A spare `latest/` checkout is far behind its live one (see [`take_handoff`]).
    pub(super) spare_behind: AtomicBool,
    /// This writer wrote blobs into incoming packs: `latest/` waits for the fill that
    /// unpacks them (see objects/incoming.rs).
    pub(super) packed_blobs: AtomicBool,
}

/// The lock of a writer that left a spare checkout far behind (the first ingest of a kind
/// leaves it empty), with its store's root: kept held past the writer, for a detached process
/// to fill the spare once the command has answered, so that no command a user waits for
/// rebuilds a whole tree. A later writer in the same process takes it back.
static HANDOFF: std::sync::Mutex<Option<(std::path::PathBuf, File)>> = std::sync::Mutex::new(None);

/// The store lock a finished writer handed over, if one did (the lock stays held while the
/// file is open).
pub fn take_handoff() -> Option<(std::path::PathBuf, File)> {
    HANDOFF.lock().expect("not poisoned").take()
}

/// Present while the lock is handed over to fill the spare checkouts: a writer that waits for
/// that says nothing (it is no other command the user started).
pub(super) fn filling_marker(root: &Path) -> std::path::PathBuf {
    root.join("spare").join("filling")
}

impl Writer<'_> {
    /// Ends a handed-over fill: releases the lock first, then the marker, so a writer that
    /// finds the lock held always finds the marker too.
    pub fn end_filling(&self) {
        let _ = rustix::fs::flock(&self._lock, FlockOperation::Unlock);
        let _ = fs::remove_file(filling_marker(self.store.root()));
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        if self.spare_behind.load(Ordering::Relaxed)
            && let Ok(lock) = self._lock.try_clone()
        {
            let _ = fs::write(filling_marker(self.store.root()), b"");
            *HANDOFF.lock().expect("not poisoned") = Some((self.store.root().to_path_buf(), lock));
        }
    }
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
    /// Takes the writer lock, waiting for another writer to finish, clears `tmp/` (any temp
    /// file there was left by a writer that crashed) and writes blobs still in `incoming/` to
    /// their own files.
    pub fn writer(&self, progress: &dyn Progress) -> Result<Writer<'_>> {
        let handed = take_handoff().filter(|(root, _)| root == self.root());
        let spare_behind = handed.is_some();
        let file = match handed {
            Some((_, lock)) => lock,
            None => lock_exclusive(self.root(), &filling_marker(self.root()), progress)?,
        };
        // Holding the lock, this handle must know every pack (another writer may have added one).
        self.rescan_packs()?;
        // Holding the lock, no fill is running: a marker left is from one that was killed.
        let _ = fs::remove_file(filling_marker(self.root()));
        let tmp = self.tmp_dir();
        super::fsutil::create_dir(&tmp)?;
        let mut stale_temp = 0;
        for entry in fs::read_dir(&tmp).map_err(Error::io("read", &tmp))? {
            let entry = entry.map_err(Error::io("read", &tmp))?;
            // Staged object directories hold read-only trees.
            super::objects::checkout::remove_readonly_tree(&entry.path())?;
            stale_temp += 1;
        }
        self.upgrade_format()?;
        let writer = self.writer_with(file, stale_temp);
        writer.spare_behind.store(spare_behind, Ordering::Relaxed);
        // Blobs a fill did not get to unpack (it was killed, or never started): every writer
        // after it finds them loose, as `latest/`, `.memory/`, `gc` and `purge` need them.
        writer.unpack_incoming()?;
        Ok(writer)
    }

    /// Holds off every writer (waiting for one at work) without writing anything, for a
    /// reader that must see the Store at rest: `verify` checking again what it found wrong.
    pub fn hold_writers(&self, progress: &dyn Progress) -> Result<File> {
        let lock = lock_exclusive(self.root(), &filling_marker(self.root()), progress)?;
        self.rescan_packs()?;
        Ok(lock)
    }

    /// Whether another process holds the writer lock now (checked without waiting or taking it).
    pub(super) fn writer_at_work(&self) -> bool {
        let Ok(file) = File::open(self.root().join("lock")) else { return false };
        rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err()
    }

    /// A writer holding `lock`, this store's lock file handed over by a writer of another
    /// process (as standard input, see [`take_handoff`]); `tmp/` is left as it is.
    pub fn writer_inherited(&self, lock: File) -> Result<Writer<'_>> {
        let lock = take_over(lock, &self.root().join("lock"))?;
        self.rescan_packs()?;
        Ok(self.writer_with(lock, 0))
    }

    fn writer_with(&self, lock: File, stale_temp: usize) -> Writer<'_> {
        Writer {
            store: self,
            _lock: lock,
            stale_temp,
            new_blobs: AtomicUsize::new(0),
            new_blob_bytes: AtomicU64::new(0),
            new_trees: AtomicUsize::new(0),
            dirty: AtomicBool::new(false),
            early_sync: Default::default(),
            sealing: Default::default(),
            written: std::sync::Mutex::new(Vec::new()),
            trees: Default::default(),
            spare_behind: AtomicBool::new(false),
            packed_blobs: AtomicBool::new(false),
        }
    }
}

/// `lock`, a handle to the lock file `path` handed over by the process holding its lock;
/// refused unless it is that file and the lock is held through it already.
pub fn take_over(lock: File, path: &Path) -> Result<File> {
    use std::os::unix::fs::MetadataExt;
    let ours = fs::metadata(path).map_err(Error::io("stat", path))?;
    let given = lock.metadata().map_err(Error::io("stat", path))?;
    // The same open file as the lock holder's: taking the lock again is a no-op for it, and
    // fails at once for anything else.
    let held = rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok();
    if (given.dev(), given.ino()) != (ours.dev(), ours.ino()) || !held {
        return Err(Error::io("take over the lock", path)(std::io::ErrorKind::WouldBlock.into()));
    }
    Ok(lock)
}

/// Takes `<root>/lock` exclusively, waiting (and saying so, unless `filling` exists: a
/// detached fill holds it) while another process holds it.
pub fn lock_exclusive(root: &Path, filling: &Path, progress: &dyn Progress) -> Result<File> {
    let path = root.join("lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(Error::io("open the store lock", &path))?;
    if rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive).is_err() {
        if !filling.exists() {
            progress.notice(&format!(
                "Blocking: waiting for another memorix process to release {}",
                path.display()
            ));
        }
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

    /// Counts a blob written into an incoming pack (which the packer syncs itself).
    pub(super) fn count_packed_blob(&self, bytes: u64) {
        self.new_blobs.fetch_add(1, Ordering::Relaxed);
        self.new_blob_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(super) fn count_tree(&self, path: &Path) {
        self.mark_written(path);
        self.new_trees.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts trees written in a pack (which [`Writer::put_pack`] syncs itself).
    pub(super) fn count_trees(&self, n: usize) {
        self.new_trees.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn stats(&self) -> WriteStats {
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
    pub(super) fn start_sync(&self) {
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
        if let Some(sealing) = self.sealing.lock().expect("not poisoned").take() {
            sealing.join().expect("the sealing thread does not panic")?;
            self.store.rescan(super::objects::pack::PackDir::Blobs)?;
        }
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
