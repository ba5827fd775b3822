//! Incoming blobs: the small blobs of a big ingest written into a few packs,
//! `incoming/<hex>.pack`, one fsync each, instead of one object file per blob
//! (book: objects.md#store). They are a journal, not a home: the detached fill that follows
//! the ingest (or else the next writer, when it takes the lock) writes each one to its loose
//! file `blobs/<aa>/<hex>`, which `latest/` and `.memory/` hardlink, makes those durable and
//! only then removes the pack. Until then every reader finds a blob in either place.
//!
//! The pack layout is `packs/`'s (see pack.rs); objects are in arrival order and the index is
//! sorted. `<hex>` is the SHA-256 of the index and trailer: each blob is checked against its
//! own id, so the index stands for the content and the blobs are hashed only once.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rayon::prelude::*;

use super::pack::{HEADER, PackDir, pack_error, tail};
use crate::diagnostics::FromIo;
use crate::model::Id;
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

/// Blobs up to this size go into an incoming pack; larger ones are files of their own.
pub const SMALL_BLOB: u64 = 1 << 20;

/// An ingest packs its small blobs when it reads at least this many files it has not seen.
pub const PACK_BLOBS_MIN: usize = 64;

impl Store {
    pub(super) fn incoming_dir(&self) -> PathBuf {
        self.root().join("incoming")
    }

    /// Blob `id` from an incoming pack, checked against its id; the packs are listed again
    /// once on a miss (another process may have written or unpacked one since).
    pub(super) fn incoming_blob(&self, id: &Id) -> Result<Option<Vec<u8>>> {
        for attempt in 0..2 {
            let packs = match attempt {
                0 => self.incoming_packs()?,
                _ => self.rescan(PackDir::Blobs)?.0,
            };
            for pack in packs.iter() {
                let found = match pack.get(id) {
                    Ok(found) => found,
                    // Unpacked and removed since it was opened: the blob is loose now.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(e) => return Err(pack_error(pack.path(), e)),
                };
                if let Some(bytes) = found {
                    if Id::of_bytes(&bytes) != *id {
                        return Err(Error::corrupt(
                            "blob",
                            pack.path(),
                            format!("{id} does not match its id"),
                        ));
                    }
                    return Ok(Some(bytes));
                }
            }
        }
        Ok(None)
    }

    /// Whether an incoming pack holds `id` (only the indexes are read).
    pub(super) fn in_incoming(&self, id: &Id) -> bool {
        let held = |packs: &[std::sync::Arc<super::pack::Pack>]| {
            packs.iter().any(|p| p.contains(id).unwrap_or(false))
        };
        self.incoming_packs().is_ok_and(|p| held(&p))
            || self.rescan(PackDir::Blobs).is_ok_and(|(p, fresh)| fresh && held(&p))
    }

    /// A packed blob as an open file, as a loose blob is opened: an anonymous in-memory file
    /// holding its bytes (small by definition), so readers need not know where it was.
    pub(super) fn incoming_file(&self, id: &Id) -> Result<Option<File>> {
        let Some(bytes) = self.incoming_blob(id)? else { return Ok(None) };
        let what = Path::new("an in-memory copy of a packed blob");
        let fd = rustix::fs::memfd_create("memorix-blob", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| Error::io("create", what)(e.into()))?;
        let mut file = File::from(fd);
        file.write_all(&bytes).and_then(|()| file.rewind()).map_err(Error::io("write", what))?;
        Ok(Some(file))
    }

    fn incoming_packs(&self) -> Result<std::sync::Arc<Vec<std::sync::Arc<super::pack::Pack>>>> {
        if let Some(open) = &*self.packs.incoming.lock().expect("not poisoned") {
            return Ok(open.clone());
        }
        Ok(self.rescan(PackDir::Blobs)?.0)
    }

    /// The ids of every blob in an incoming pack; only the indexes are read.
    pub(super) fn incoming_blob_ids(&self) -> Result<Vec<Id>> {
        Ok(self.incoming_entries()?.into_iter().map(|(id, _)| id).collect())
    }

    /// Every blob in an incoming pack, with its size; only the indexes are read.
    pub(in crate::store) fn incoming_entries(&self) -> Result<Vec<(Id, u32)>> {
        let mut out = Vec::new();
        for pack in self.incoming_packs()?.iter() {
            let entries = pack.entries().map_err(|e| pack_error(pack.path(), e))?;
            out.extend(entries.into_iter().map(|(id, _, len)| (id, len)));
        }
        Ok(out)
    }

    /// The paths of the incoming packs, sorted.
    pub(in crate::store) fn incoming_files(&self) -> Result<Vec<PathBuf>> {
        self.list_packs(PackDir::Blobs)
    }
}

/// One pack being written: its temp file, where the next blob goes, and its index.
struct Builder {
    tmp: PathBuf,
    out: BufWriter<File>,
    offset: u64,
    index: Vec<(Id, u64, u32)>,
}

impl Builder {
    fn create(tmp_dir: &Path) -> Result<Builder> {
        let tmp = fsutil::temp_path(tmp_dir, Path::new("incoming.pack"));
        let file = fsutil::create_with_mode(&tmp, 0o444).map_err(Error::io("create", &tmp))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(HEADER).map_err(Error::io("write", &tmp))?;
        Ok(Builder { tmp, out, offset: HEADER.len() as u64, index: Vec::new() })
    }

    fn append(&mut self, id: Id, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes).map_err(Error::io("write", &self.tmp))?;
        let len = u32::try_from(bytes.len()).expect("a small blob");
        self.index.push((id, self.offset, len));
        self.offset += u64::from(len);
        Ok(())
    }

    /// Writes the index, fsyncs the file and names it by its index: `(temp path, final name)`.
    fn seal(mut self) -> Result<(PathBuf, String)> {
        self.index.sort_unstable_by_key(|e| e.0);
        let tail = tail(&self.index, self.offset);
        self.out.write_all(&tail).map_err(Error::io("write", &self.tmp))?;
        let file = self.out.into_inner().map_err(|e| Error::io("write", &self.tmp)(e.into_error()))?;
        file.sync_all().map_err(Error::io("sync", &self.tmp))?;
        Ok((self.tmp, format!("{}.pack", Id::of_bytes(&tail).hex())))
    }
}

/// Packs the small blobs of one ingest, from many threads at once: each takes a pack no
/// other thread is writing, so there are about as many packs as threads.
pub(in crate::store) struct Packer<'w, 's> {
    writer: &'w Writer<'s>,
    idle: Mutex<Vec<Builder>>,
    seen: Mutex<HashSet<Id>>,
    /// The `blobs/<aa>` directories that held no file when the ingest began: a blob there
    /// cannot be stored already, and needs no lookup (a first ingest makes none).
    empty_fanout: [bool; 256],
}

impl<'w, 's> Packer<'w, 's> {
    pub(in crate::store) fn new(writer: &'w Writer<'s>) -> Self {
        let blobs = writer.store.root().join("blobs");
        let empty_fanout = std::array::from_fn(|byte| {
            let dir = blobs.join(format!("{byte:02x}"));
            std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
        });
        Packer { writer, idle: Mutex::new(Vec::new()), seen: Mutex::new(HashSet::new()), empty_fanout }
    }

    /// Stores `bytes` (at most [`SMALL_BLOB`]) as a blob, in a pack unless it is stored already.
    pub(in crate::store) fn put(&self, bytes: &[u8]) -> Result<Id> {
        let id = Id::of_bytes(bytes);
        let store = self.writer.store;
        // Under the writer lock no incoming pack is left (the lock's taker unpacked them): a
        // blob already stored is a loose file, and only the writer lock's holder adds one.
        let loose = || {
            !self.empty_fanout[usize::from(id.as_bytes()[0])]
                && std::fs::symlink_metadata(store.blob_path(&id)).is_ok()
        };
        if !self.seen.lock().expect("not poisoned").insert(id) || loose() {
            return Ok(id);
        }
        let idle = self.idle.lock().expect("not poisoned").pop();
        let mut builder = match idle {
            Some(b) => b,
            None => Builder::create(&store.tmp_dir())?,
        };
        let appended = builder.append(id, bytes);
        self.idle.lock().expect("not poisoned").push(builder);
        appended?;
        self.writer.count_packed_blob(bytes.len() as u64);
        Ok(id)
    }

    /// Seals the packs in the background while the trees are computed: each is fsynced (in
    /// parallel), moved into `incoming/`, and that directory synced. [`Writer::sync`] waits
    /// for it, so the blobs are durable before a ref can name them.
    pub(in crate::store) fn finish(self) {
        let builders = self.idle.into_inner().expect("not poisoned");
        if builders.is_empty() {
            return;
        }
        self.writer.packed_blobs.store(true, std::sync::atomic::Ordering::Relaxed);
        let root = self.writer.store.root().to_path_buf();
        let sealing = std::thread::spawn(move || seal_all(builders, &root.join("incoming")));
        *self.writer.sealing.lock().expect("not poisoned") = Some(sealing);
    }
}

fn seal_all(builders: Vec<Builder>, dir: &Path) -> Result<()> {
    let sealed: Vec<(PathBuf, String)> =
        builders.into_par_iter().map(Builder::seal).collect::<Result<_>>()?;
    crate::fault::point("incoming.synced");
    fsutil::create_dir(dir)?;
    for (tmp, name) in sealed {
        let dest = dir.join(name);
        std::fs::rename(&tmp, &dest).map_err(Error::io("rename into place", &dest))?;
    }
    Ok(fsutil::sync_dir(dir)?)
}

impl Writer<'_> {
    /// Writes every blob of the incoming packs to its loose file, makes them durable, then
    /// removes the packs (a crash in between leaves blobs twice, never lost). Returns how
    /// many packs there were.
    pub(in crate::store) fn unpack_incoming(&self) -> Result<usize> {
        let store = self.store;
        let paths = store.incoming_files()?;
        if paths.is_empty() {
            return Ok(0);
        }
        crate::fault::point("incoming.unpacking");
        for path in &paths {
            let pack = match super::pack::Pack::open(path) {
                Ok(pack) => pack,
                Err(e) => return Err(pack_error(path, e)),
            };
            let entries = pack.entries().map_err(|e| pack_error(path, e))?;
            entries.par_iter().try_for_each(|&(id, offset, len)| -> Result<()> {
                let dest = store.blob_path(&id);
                if std::fs::symlink_metadata(&dest).is_ok() {
                    return Ok(());
                }
                let bytes = pack.read(offset, len).map_err(|e| pack_error(path, e))?;
                if Id::of_bytes(&bytes) != id {
                    return Err(Error::corrupt("blob", path, format!("{id} does not match its id")));
                }
                Ok(fsutil::write_object(&store.tmp_dir(), &dest, &bytes, 0o444)?)
            })?;
        }
        // Durable in their own files before the packs that hold them go.
        fsutil::sync_filesystem(store.root())?;
        crate::fault::point("incoming.unpacked");
        for path in &paths {
            std::fs::remove_file(path).map_err(Error::io("remove", path))?;
        }
        fsutil::sync_dir(&store.incoming_dir())?;
        store.rescan(PackDir::Blobs)?;
        Ok(paths.len())
    }
}
