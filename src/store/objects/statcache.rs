//! The stat cache: (size, mtime, ctime, inode) of each source file -> its blob, per ingest
//! destination, so a re-ingest reads only files that changed (like git's index). An entry is
//! trusted when all four agree (`gc` and `purge`, the only ways a blob leaves the Store, drop
//! every cache); files modified in the last two seconds before an ingest are never cached
//! (their mtime may not tell a later edit).
//!
//! It also keeps each source directory's tree id (like git's cache-tree): a directory none
//! of whose files changed, appeared or went is taken as that tree, neither re-encoded nor
//! re-hashed. The file is binary (`index/statcache/<hash of DEST>.bin`, little-endian): a
//! header line, then the files `(abs, rel, size, mtime, ctime, inode, blob)` and the
//! directories `(rel, tree)`, strings prefixed by their length; one that does not parse is
//! ignored, as is an older cache.

use std::collections::{HashMap, HashSet};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::Id;
use crate::store::error::Result;
use crate::store::{Store, Writer, fsutil};

const HEADER: &[u8] = b"memorix stat cache 2\n";

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Where the file lands, relative to DEST.
    rel: String,
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
    /// Directory (relative to DEST) -> tree id, as the last ingest built them.
    old_dirs: HashMap<String, Id>,
    new_dirs: Vec<(String, Id)>,
    /// Files modified after this are not cached.
    cutoff_ns: i64,
}

impl Store {
    /// The stat cache of ingests into `dest` (a place such as `docs/t/`).
    pub(in crate::store) fn stat_cache(&self, dest: &str) -> StatCache {
        let digest = hex::encode(Sha256::digest(dest.as_bytes()));
        let path = self.root().join("index/statcache").join(format!("{}.bin", &digest[..32]));
        let (old, old_dirs) = fsutil::read_object(&path).ok().and_then(|b| decode(&b)).unwrap_or_default();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let cutoff_ns = now.saturating_sub(Duration::from_secs(2)).as_nanos() as i64;
        StatCache { path, old, new: Mutex::new(HashMap::new()), old_dirs, new_dirs: Vec::new(), cutoff_ns }
    }
}

impl Store {
    /// Forgets every stat cache (after `gc` or `purge` removed blobs an entry may name).
    pub(in crate::store) fn drop_stat_caches(&self) -> Result<()> {
        let dir = self.root().join("index/statcache");
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(crate::store::Error::io("remove", &dir)(e))
            }
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

    /// Remembers `file`, landing at `rel`, as `blob` for the next ingest (unless it changed
    /// too recently).
    pub fn record(&self, file: &Path, rel: &str, meta: &Metadata, blob: Id) {
        let (size, mtime_ns, ctime_ns, ino) = stamp(meta);
        if mtime_ns.max(ctime_ns) >= self.cutoff_ns {
            return;
        }
        if let Some(key) = file.to_str() {
            let entry = Entry { rel: rel.to_string(), size, mtime_ns, ctime_ns, ino, blob };
            self.new.lock().expect("not poisoned").insert(key.to_string(), entry);
        }
    }

    /// The directories whose tree the last ingest built and that hold the same files now, with
    /// their tree ids. `files` is this ingest's (rel, abs) and `unchanged` tells the files the
    /// cache knew unchanged; a file that changed, appeared or went (or was too recent to be
    /// cached) makes every directory above it unknown.
    pub fn unchanged_dirs<'a>(
        &'a self,
        files: &[(&'a str, &Path)],
        unchanged: &[bool],
    ) -> HashMap<String, Id> {
        let mut touched: HashSet<&'a str> = HashSet::new();
        let mut seen: HashSet<&str> = HashSet::with_capacity(files.len());
        for ((rel, abs), same) in files.iter().zip(unchanged) {
            let key = abs.to_str().unwrap_or_default();
            seen.insert(key);
            if !same || self.old.get(key).is_none_or(|e| e.rel != *rel) {
                touch(&mut touched, rel);
            }
        }
        for (abs, e) in &self.old {
            if !seen.contains(abs.as_str()) {
                touch(&mut touched, &e.rel);
            }
        }
        self.old_dirs
            .iter()
            .filter(|(d, _)| !d.is_empty() && !touched.contains(d.as_str()))
            .map(|(d, id)| (d.clone(), *id))
            .collect()
    }

    /// Remembers the tree ids of DEST's directories for the next ingest.
    pub fn record_dirs(&mut self, dirs: Vec<(String, Id)>) {
        self.new_dirs = dirs;
    }

    /// Writes what this ingest saw (only its files: entries of files gone are dropped).
    pub fn save(self, writer: &Writer) -> Result<()> {
        let new = self.new.into_inner().expect("not poisoned");
        let dirs: HashMap<String, Id> = self.new_dirs.into_iter().collect();
        if new == self.old && dirs == self.old_dirs {
            return Ok(());
        }
        fsutil::create_dir(self.path.parent().expect("index/statcache"))?;
        // The JSON cache of memorix 0.1's earlier stores, replaced by this one.
        let _ = std::fs::remove_file(self.path.with_extension("json"));
        Ok(fsutil::write_atomic(&writer.store.tmp_dir(), &self.path, &encode(&new, &dirs))?)
    }
}

/// Marks every directory above `rel` touched (stopping where an earlier file did).
fn touch<'a>(touched: &mut HashSet<&'a str>, rel: &'a str) {
    let mut at = rel;
    while let Some(i) = at.rfind('/') {
        at = &rel[..i];
        if !touched.insert(at) {
            return;
        }
    }
}

fn encode(files: &HashMap<String, Entry>, dirs: &HashMap<String, Id>) -> Vec<u8> {
    let mut out = HEADER.to_vec();
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u32).to_le_bytes());
        out.extend(s.as_bytes());
    };
    out.extend((files.len() as u64).to_le_bytes());
    for (abs, e) in files {
        text(&mut out, abs);
        text(&mut out, &e.rel);
        out.extend(e.size.to_le_bytes());
        out.extend(e.mtime_ns.to_le_bytes());
        out.extend(e.ctime_ns.to_le_bytes());
        out.extend(e.ino.to_le_bytes());
        out.extend(e.blob.as_bytes());
    }
    out.extend((dirs.len() as u64).to_le_bytes());
    for (rel, id) in dirs {
        text(&mut out, rel);
        out.extend(id.as_bytes());
    }
    out
}

/// Reads [`encode`]'s bytes; `None` for anything else.
fn decode(bytes: &[u8]) -> Option<(HashMap<String, Entry>, HashMap<String, Id>)> {
    let mut r = Reader(bytes.strip_prefix(HEADER)?);
    let mut files = HashMap::new();
    for _ in 0..r.u64()? {
        let (abs, rel) = (r.text()?, r.text()?);
        let (size, mtime_ns, ctime_ns, ino) = (r.u64()?, r.i64()?, r.i64()?, r.u64()?);
        files.insert(abs, Entry { rel, size, mtime_ns, ctime_ns, ino, blob: r.id()? });
    }
    let mut dirs = HashMap::new();
    for _ in 0..r.u64()? {
        dirs.insert(r.text()?, r.id()?);
    }
    r.0.is_empty().then_some((files, dirs))
}

/// The unread rest of a cache file.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }

    fn i64(&mut self) -> Option<i64> {
        self.take().map(i64::from_le_bytes)
    }

    fn id(&mut self) -> Option<Id> {
        self.take().map(Id::from_bytes)
    }

    fn text(&mut self) -> Option<String> {
        let len = u32::from_le_bytes(self.take()?) as usize;
        let text = self.0.get(..len)?;
        self.0 = &self.0[len..];
        String::from_utf8(text.to_vec()).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_cache_reads_back_what_was_written_and_nothing_else() {
        let entry = Entry {
            rel: "a/é.md".into(),
            size: 7,
            mtime_ns: -1,
            ctime_ns: 1 << 62,
            ino: 42,
            blob: Id::of_bytes(b"x"),
        };
        let files = HashMap::from([("/src/a/é.md".to_string(), entry)]);
        let dirs =
            HashMap::from([("a".to_string(), Id::of_bytes(b"tree")), (String::new(), Id::of_bytes(b"root"))]);
        let bytes = encode(&files, &dirs);
        assert_eq!(decode(&bytes), Some((files, dirs)));
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None, "truncated");
        assert_eq!(decode(&[bytes.as_slice(), b"x"].concat()), None, "trailing bytes");
        assert_eq!(decode(br#"{"/src/a.md":{}}"#), None, "the JSON cache of before");
    }
}
