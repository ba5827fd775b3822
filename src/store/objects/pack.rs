//! Packs: the trees of one big write in a single file, `packs/<hex>.pack`, so an ingest of
//! thousands of directories creates one file instead of one per directory, made durable by one
//! fsync (book: objects.md#store). Loose tree files and packs hold the same objects; a
//! reader looks in both.
//!
//! Layout, integers big-endian:
//! - `memorix-pack-v1\n`, then each object's canonical bytes, back to back;
//! - the index: one entry per object, sorted by id: id (32 bytes), offset (u64), length (u32);
//! - the fan-out: 256 u32, entry `b` counting the objects whose id's first byte is at most `b`;
//! - the trailer: the index's offset (u64) and `mxpackv1`.
//!
//! `<hex>` is the SHA-256 of the whole file. A pack is written in `tmp/`, fsynced and renamed
//! into place, so it is there whole or not at all. A lookup reads the fan-out once per process
//! and then only the index entries that share the id's first byte.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::Id;
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

pub(super) const HEADER: &[u8; 16] = b"memorix-pack-v1\n";
const MAGIC: &[u8; 8] = b"mxpackv1";
const ENTRY: usize = 32 + 8 + 4;
const FANOUT: usize = 256 * 4;
const TAIL: usize = FANOUT + 8 + MAGIC.len();

/// Writes that store at least this many new trees write them as one pack.
pub const PACK_MIN: usize = 64;

fn bad(reason: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, reason.to_string())
}

/// One pack file, open, with its frame checked and its fan-out read.
#[derive(Debug)]
pub struct Pack {
    path: PathBuf,
    file: File,
    fanout: Vec<u32>,
    index_at: u64,
}

impl Pack {
    /// Opens a pack and checks its frame (header, trailer, sizes); each object is checked
    /// against its id when it is read.
    pub fn open(path: &Path) -> io::Result<Pack> {
        let file = fsutil::open_object(path)?;
        let len = file.metadata()?.len();
        if len < (HEADER.len() + TAIL) as u64 {
            return Err(bad("is too short to be a pack"));
        }
        let mut head = [0u8; HEADER.len()];
        file.read_exact_at(&mut head, 0)?;
        let mut tail = vec![0u8; TAIL];
        file.read_exact_at(&mut tail, len - TAIL as u64)?;
        if &head != HEADER || &tail[FANOUT + 8..] != MAGIC {
            return Err(bad("lacks the pack header or trailer"));
        }
        let fanout: Vec<u32> = tail[..FANOUT].chunks_exact(4).map(|c| u32::from_be_bytes(word(c))).collect();
        let index_at = u64::from_be_bytes(word(&tail[FANOUT..FANOUT + 8]));
        let count = u64::from(fanout[255]);
        let fits = index_at >= HEADER.len() as u64
            && index_at.checked_add(count * ENTRY as u64 + TAIL as u64) == Some(len);
        if !fits || fanout.windows(2).any(|w| w[0] > w[1]) {
            return Err(bad("has an index that does not fit the file"));
        }
        Ok(Pack { path: path.to_path_buf(), file, fanout, index_at })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The index entries whose id starts with byte `b`, as raw entries.
    fn bucket(&self, b: u8) -> io::Result<Vec<u8>> {
        let lo = if b == 0 { 0 } else { self.fanout[b as usize - 1] };
        let hi = self.fanout[b as usize];
        let mut raw = vec![0u8; (hi - lo) as usize * ENTRY];
        self.file.read_exact_at(&mut raw, self.index_at + u64::from(lo) * ENTRY as u64)?;
        Ok(raw)
    }

    /// Where object `id` lies in this pack, (offset, length), by a binary search of its bucket.
    fn locate(&self, id: &Id) -> io::Result<Option<(u64, u32)>> {
        let raw = self.bucket(id.as_bytes()[0])?;
        let entries: Vec<&[u8]> = raw.chunks_exact(ENTRY).collect();
        Ok(entries.binary_search_by(|e| e[..32].cmp(id.as_bytes())).ok().map(|i| {
            let (_, offset, len) = entry(entries[i]);
            (offset, len)
        }))
    }

    /// The canonical bytes of object `id`, when this pack holds it.
    pub fn get(&self, id: &Id) -> io::Result<Option<Vec<u8>>> {
        self.locate(id)?.map(|(offset, len)| self.read(offset, len)).transpose()
    }

    /// Whether this pack holds `id` (the index alone is read).
    pub fn contains(&self, id: &Id) -> io::Result<bool> {
        Ok(self.locate(id)?.is_some())
    }

    /// The ids this pack holds whose first byte is `b` (a prefix lookup's candidates).
    pub fn ids_from(&self, b: u8) -> io::Result<Vec<Id>> {
        Ok(self.bucket(b)?.chunks_exact(ENTRY).map(|e| entry(e).0).collect())
    }

    pub(in crate::store) fn read(&self, offset: u64, len: u32) -> io::Result<Vec<u8>> {
        if offset < HEADER.len() as u64 || offset + u64::from(len) > self.index_at {
            return Err(bad("names bytes outside its objects"));
        }
        let mut bytes = vec![0u8; len as usize];
        self.file.read_exact_at(&mut bytes, offset)?;
        Ok(bytes)
    }

    /// Every object of the pack as (id, bytes), in id order; the index is checked to be
    /// sorted and to agree with the fan-out. Used by `verify` and `gc`.
    pub fn objects(&self) -> io::Result<Vec<(Id, Vec<u8>)>> {
        self.entries()?.into_iter().map(|(id, offset, len)| Ok((id, self.read(offset, len)?))).collect()
    }

    /// Every index entry (id, offset, length), in id order, checked to be sorted and to agree
    /// with the fan-out; nothing else is read (a pack of blobs may hold gigabytes).
    pub fn entries(&self) -> io::Result<Vec<(Id, u64, u32)>> {
        let mut out: Vec<(Id, u64, u32)> = Vec::with_capacity(self.fanout[255] as usize);
        for b in 0..=255u8 {
            for raw in self.bucket(b)?.chunks_exact(ENTRY) {
                let e = entry(raw);
                if e.0.as_bytes()[0] != b || out.last().is_some_and(|last| last.0 >= e.0) {
                    return Err(bad("has an index out of order"));
                }
                out.push(e);
            }
        }
        Ok(out)
    }

    /// The SHA-256 of the index and trailer, which name a pack of blobs (each blob is checked
    /// against its id on its own, so the index stands for the content).
    pub fn index_hash(&self) -> io::Result<Id> {
        let len = self.file.metadata()?.len();
        let mut tail = vec![0u8; (len - self.index_at) as usize];
        self.file.read_exact_at(&mut tail, self.index_at)?;
        Ok(Id::of_bytes(&tail))
    }

    /// The SHA-256 of the whole file, which names it.
    pub fn hash(&self) -> io::Result<Id> {
        super::blob::hash_object(&self.path)
    }
}

fn word<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.try_into().expect("sliced to size")
}

fn entry(raw: &[u8]) -> (Id, u64, u32) {
    (
        Id::from_bytes(word(&raw[..32])),
        u64::from_be_bytes(word(&raw[32..40])),
        u32::from_be_bytes(word(&raw[40..])),
    )
}

/// The packs one Store handle has opened: listed at first use, listed again when an object is
/// not found (another process may have packed it since).
#[derive(Debug, Default)]
pub struct Packs {
    open: Mutex<Option<Arc<Vec<Arc<Pack>>>>>,
    /// The packs of blobs in `incoming/` (see incoming.rs).
    pub(super) incoming: Mutex<Option<Arc<Vec<Arc<Pack>>>>>,
}

/// The packs of one directory: `packs/` (trees) or `incoming/` (blobs).
#[derive(Clone, Copy)]
pub(in crate::store) enum PackDir {
    Trees,
    Blobs,
}

impl Store {
    pub(super) fn packs_dir(&self) -> PathBuf {
        self.root().join("packs")
    }

    /// The packs, listed at first use.
    pub(in crate::store) fn packs(&self) -> Result<Arc<Vec<Arc<Pack>>>> {
        if let Some(open) = &*self.packs.open.lock().expect("not poisoned") {
            return Ok(open.clone());
        }
        self.rescan_packs().map(|(all, _)| all)
    }

    /// Lists `packs/` again, keeping the packs already open; says whether one was new.
    pub(in crate::store) fn rescan_packs(&self) -> Result<(Arc<Vec<Arc<Pack>>>, bool)> {
        self.rescan(PackDir::Trees)
    }

    /// Lists the packs of `which` again, keeping those already open; says whether one was new.
    pub(in crate::store) fn rescan(&self, which: PackDir) -> Result<(Arc<Vec<Arc<Pack>>>, bool)> {
        let slot = match which {
            PackDir::Trees => &self.packs.open,
            PackDir::Blobs => &self.packs.incoming,
        };
        let mut open = slot.lock().expect("not poisoned");
        let known = open.clone().unwrap_or_default();
        let mut all = Vec::new();
        let mut fresh = false;
        for path in self.list_packs(which)? {
            match known.iter().find(|p| p.path == path) {
                Some(p) => all.push(p.clone()),
                None => {
                    let pack = match Pack::open(&path) {
                        Ok(pack) => pack,
                        // Merged or collected since it was listed: its live objects are in
                        // a pack this listing has, or the next one.
                        Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(pack_error(&path, e)),
                    };
                    all.push(Arc::new(pack));
                    fresh = true;
                }
            }
        }
        let all = Arc::new(all);
        *open = Some(all.clone());
        Ok((all, fresh))
    }

    /// The paths of `packs/*.pack`, sorted.
    pub(in crate::store) fn pack_files(&self) -> Result<Vec<PathBuf>> {
        self.list_packs(PackDir::Trees)
    }

    /// The paths of the `*.pack` files of `which`, sorted.
    pub(super) fn list_packs(&self, which: PackDir) -> Result<Vec<PathBuf>> {
        let dir = match which {
            PackDir::Trees => self.packs_dir(),
            PackDir::Blobs => self.incoming_dir(),
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io("read", &dir)(e)),
        };
        let mut out = Vec::new();
        for e in entries {
            let path = e.map_err(Error::io("read", &dir))?.path();
            if path.extension().is_some_and(|x| x == "pack") {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Object `id` from the packs this handle knows: its bytes and the pack's path.
    pub(super) fn packed(&self, id: &Id) -> Result<Option<(Vec<u8>, PathBuf)>> {
        for pack in self.packs()?.iter() {
            if let Some(bytes) = pack.get(id).map_err(|e| pack_error(&pack.path, e))? {
                return Ok(Some((bytes, pack.path.clone())));
            }
        }
        Ok(None)
    }

    /// The ids of every packed tree (for `push --all`); only the indexes are read.
    pub(super) fn packed_tree_ids(&self) -> Result<Vec<Id>> {
        let mut out = Vec::new();
        for pack in self.packs()?.iter() {
            for b in 0..=255u8 {
                out.extend(pack.ids_from(b).map_err(|e| pack_error(&pack.path, e))?);
            }
        }
        Ok(out)
    }

    /// Whether a pack this handle knows holds `id`.
    pub(super) fn in_packs(&self, id: &Id) -> bool {
        self.packs().is_ok_and(|packs| packs.iter().any(|p| p.contains(id).unwrap_or(false)))
    }
}

pub(super) fn pack_error(path: &Path, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::InvalidData => Error::corrupt("pack", path, e.to_string()),
        _ => Error::io("read", path)(e),
    }
}

/// A write that leaves more packs than this merges them all into one: a lookup probes each
/// pack in turn, so their number must stay small (as git's `gc --auto` keeps it).
pub const MAX_PACKS: usize = 16;

impl Writer<'_> {
    /// Stores `objects` as one pack ([`Writer::write_pack`]), merging every pack into one
    /// when this write leaves more than [`MAX_PACKS`].
    pub(in crate::store) fn put_pack(&self, objects: &mut Vec<(Id, &[u8])>) -> Result<()> {
        self.write_pack(objects)?;
        if self.store.packs()?.len() > MAX_PACKS {
            self.merge_packs()?;
        }
        Ok(())
    }

    /// Writes every packed object into one new pack and removes the others once it is
    /// durable (a crash in between leaves objects twice, never lost). A reader that listed a
    /// removed pack finds its objects in the merged one when it lists `packs/` again on a miss.
    pub(in crate::store) fn merge_packs(&self) -> Result<()> {
        let packs = self.store.packs()?;
        if packs.len() < 2 {
            return Ok(());
        }
        let mut objects = Vec::new();
        for pack in packs.iter() {
            objects.extend(pack.objects().map_err(|e| pack_error(&pack.path, e))?);
        }
        let mut refs: Vec<(Id, &[u8])> = objects.iter().map(|(id, b)| (*id, b.as_slice())).collect();
        let merged = self.write_pack(&mut refs)?;
        for old in packs.iter().filter(|p| p.path != merged) {
            std::fs::remove_file(&old.path).map_err(Error::io("remove", &old.path))?;
        }
        self.store.rescan_packs()?;
        Ok(())
    }

    /// Stores `objects` (id and canonical bytes) as one pack, durable before it is renamed
    /// into place and durable in place (a targeted fsync of the file and of `packs/`, never a
    /// `syncfs`), and makes it known to this handle. Returns its path.
    pub(in crate::store) fn write_pack(&self, objects: &mut Vec<(Id, &[u8])>) -> Result<PathBuf> {
        objects.sort_by_key(|o| o.0);
        objects.dedup_by_key(|o| o.0);
        let dir = self.store.packs_dir();
        fsutil::create_dir(&dir)?;
        let tmp = fsutil::temp_path(&self.store.tmp_dir(), Path::new("new.pack"));
        let hash = write_pack_file(&tmp, objects).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io("write", &tmp)(e)
        })?;
        crate::fault::point("pack.staged");
        let dest = dir.join(format!("{}.pack", hash.hex()));
        std::fs::rename(&tmp, &dest).map_err(Error::io("rename into place", &dest))?;
        fsutil::sync_dir(&dir)?;
        self.store.rescan_packs()?;
        Ok(dest)
    }
}

/// Writes the pack file at `path` (read-only, fsynced); returns the SHA-256 of its bytes.
fn write_pack_file(path: &Path, objects: &[(Id, &[u8])]) -> io::Result<Id> {
    let mut out =
        Hashing { inner: BufWriter::new(fsutil::create_with_mode(path, 0o444)?), sha: Sha256::new() };
    out.write_all(HEADER)?;
    let mut offset = HEADER.len() as u64;
    let mut index = Vec::with_capacity(objects.len());
    for (id, bytes) in objects {
        out.write_all(bytes)?;
        let len = u32::try_from(bytes.len()).map_err(|_| bad("an object too big to pack"))?;
        index.push((*id, offset, len));
        offset += bytes.len() as u64;
    }
    out.write_all(&tail(&index, offset))?;
    let Hashing { inner, sha } = out;
    inner.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(Id::from_bytes(sha.finalize().into()))
}

/// The bytes after a pack's objects: the index of `index` (sorted by id) and the fan-out and
/// trailer, `objects_end` being where the objects stop.
pub(super) fn tail(index: &[(Id, u64, u32)], objects_end: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(index.len() * ENTRY + TAIL);
    let mut fanout = [0u32; 256];
    for (id, offset, len) in index {
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        fanout[id.as_bytes()[0] as usize] += 1;
    }
    let mut total = 0;
    for count in fanout {
        total += count;
        out.extend_from_slice(&total.to_be_bytes());
    }
    out.extend_from_slice(&objects_end.to_be_bytes());
    out.extend_from_slice(MAGIC);
    out
}

/// A writer that hashes what passes through it.
struct Hashing<W> {
    inner: W,
    sha: Sha256,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pack_reads_back_every_object_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let bodies: Vec<Vec<u8>> = (0..300).map(|i| format!("object {i}").into_bytes()).collect();
        let mut objects: Vec<(Id, &[u8])> = bodies.iter().map(|b| (Id::of_bytes(b), b.as_slice())).collect();
        objects.sort_by_key(|o| o.0);
        let path = dir.path().join("p.pack");
        let hash = write_pack_file(&path, &objects).unwrap();
        assert_eq!(hash, super::super::blob::hash_file(&path).unwrap());
        let pack = Pack::open(&path).unwrap();
        for (id, bytes) in &objects {
            assert_eq!(pack.get(id).unwrap().as_deref(), Some(*bytes));
            assert!(pack.contains(id).unwrap());
        }
        assert_eq!(pack.get(&Id::of_bytes(b"absent")).unwrap(), None);
        let all = pack.objects().unwrap();
        assert_eq!(all.len(), 300);
        assert!(all.iter().zip(&objects).all(|((a, x), (b, y))| a == b && x == y));
        let first = objects[0].0;
        assert!(pack.ids_from(first.as_bytes()[0]).unwrap().contains(&first));
    }

    #[test]
    fn a_damaged_pack_is_refused_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let body = b"x".to_vec();
        let path = dir.path().join("p.pack");
        write_pack_file(&path, &[(Id::of_bytes(&body), &body)]).unwrap();
        let whole = std::fs::read(&path).unwrap();
        for cut in [&whole[..whole.len() - 1], &whole[1..], &whole[..10]] {
            let damaged = dir.path().join("d.pack");
            let _ = std::fs::remove_file(&damaged);
            std::fs::write(&damaged, cut).unwrap();
            let e = Pack::open(&damaged).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
        }
    }
}
