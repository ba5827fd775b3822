//! The stat cache: (size, mtime, ctime, inode) of each source file -> its blob, per ingest
//! destination, so a re-ingest reads only files that changed (like git's index). An entry is
//! trusted when all four agree (`gc` and `purge`, the only ways a blob leaves the Store, drop
//! every cache); files modified in the last two seconds before an ingest are never cached
//! (their mtime may not tell a later edit).

use std::collections::HashMap;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::Result;
use super::{Store, Writer, fsutil};
use crate::diagnostics::FromIo;
use crate::model::Id;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    ino: u64,
    blob: Id,
}

fn stamp(m: &Metadata) -> (u64, i64, i64, u64) {
    (
        m.size(),
        m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        m.ctime() * 1_000_000_000 + m.ctime_nsec(),
        m.ino(),
    )
}

pub struct StatCache {
    path: PathBuf,
    old: HashMap<String, Entry>,
    new: Mutex<HashMap<String, Entry>>,
    /// Files modified after this are not cached.
    cutoff_ns: i64,
}

impl Store {
    /// The stat cache of ingests into `dest` (a place such as `docs/t/`).
    pub fn stat_cache(&self, dest: &str) -> StatCache {
        let digest = hex::encode(Sha256::digest(dest.as_bytes()));
        let path = self.root().join("index/statcache").join(format!("{}.json", &digest[..32]));
        let old =
            fsutil::read_object(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let cutoff_ns = now.saturating_sub(Duration::from_secs(2)).as_nanos() as i64;
        StatCache { path, old, new: Mutex::new(HashMap::new()), cutoff_ns }
    }
}

impl Store {
    /// Forgets every stat cache (after `gc` or `purge` removed blobs an entry may name).
    pub fn drop_stat_caches(&self) -> Result<()> {
        let dir = self.root().join("index/statcache");
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(super::Error::io("remove", &dir)(e)),
            _ => Ok(()),
        }
    }
}

impl StatCache {
    /// Whether the cache has an entry for `file` (else there is no point in a `stat` first).
    pub fn knows(&self, file: &Path) -> bool {
        file.to_str().is_some_and(|f| self.old.contains_key(f))
    }

    /// The blob of `file` when the cache knows it unchanged.
    pub fn lookup(&self, file: &Path, meta: &Metadata) -> Option<Id> {
        let e = self.old.get(file.to_str()?)?;
        let (size, mtime_ns, ctime_ns, ino) = stamp(meta);
        ((e.size, e.mtime_ns, e.ctime_ns, e.ino) == (size, mtime_ns, ctime_ns, ino)).then_some(e.blob)
    }

    /// Remembers `file` as `blob` for the next ingest (unless it changed too recently).
    pub fn record(&self, file: &Path, meta: &Metadata, blob: Id) {
        let (size, mtime_ns, ctime_ns, ino) = stamp(meta);
        if mtime_ns.max(ctime_ns) >= self.cutoff_ns {
            return;
        }
        if let Some(key) = file.to_str() {
            let entry = Entry { size, mtime_ns, ctime_ns, ino, blob };
            self.new.lock().expect("not poisoned").insert(key.to_string(), entry);
        }
    }

    /// Writes what this ingest saw (only its files: entries of files gone are dropped).
    pub fn save(self, writer: &Writer) -> Result<()> {
        let new = self.new.into_inner().expect("not poisoned");
        if new == self.old {
            return Ok(());
        }
        fsutil::create_dir(self.path.parent().expect("index/statcache"))?;
        let bytes = serde_json::to_vec(&new).expect("a cache serializes");
        Ok(fsutil::write_atomic(&writer.store.tmp_dir(), &self.path, &bytes)?)
    }
}
