//! Blobs: immutable file contents at `blobs/<aa>/<hex>`, mode 0444.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::Id;
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

/// Files up to this size are read into memory once; larger ones stream through a temp file.
const IN_MEMORY_LIMIT: u64 = 4 << 20;
const STREAM_BUFFER: usize = 1 << 20;

thread_local! {
    /// Each thread's buffer for hashing files: `verify` and delivery checks hash thousands of
    /// small files, and a fresh zeroed MiB for each cost more than the hashing.
    static HASH_BUFFER: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; STREAM_BUFFER]);
}

impl Store {
    /// Whether blob `id` is stored: its loose file, else an incoming pack.
    pub(in crate::store) fn has_blob(&self, id: &Id) -> bool {
        fs::symlink_metadata(self.blob_path(id)).is_ok() || self.in_incoming(id)
    }

    /// Opens blob `id`: its loose file, else its copy from an incoming pack (looking at the
    /// loose file once more, for a pack unpacked meanwhile).
    pub(super) fn open_blob(&self, id: &Id) -> Result<File> {
        let path = self.blob_path(id);
        match fsutil::open_object(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => match self.incoming_file(id)? {
                Some(file) => Ok(file),
                None => fsutil::open_object(&path).map_err(|e| self.blob_error(id, &path, e)),
            },
            other => other.map_err(|e| self.blob_error(id, &path, e)),
        }
    }

    /// Puts at most `max` bytes of blob `id` in `buf`: from its loose file, else straight from
    /// an incoming pack (a first build indexes blobs still packed), without the in-memory file
    /// [`Store::open_blob`] makes of a packed one.
    pub(super) fn read_blob(&self, id: &Id, max: u64, buf: &mut Vec<u8>) -> Result<()> {
        buf.clear();
        let path = self.blob_path(id);
        let file = match fsutil::open_object(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(bytes) = self.incoming_blob(id)? {
                    *buf = bytes;
                    buf.truncate(usize::try_from(max).unwrap_or(usize::MAX));
                    return Ok(());
                }
                fsutil::open_object(&path)
            }
            other => other,
        }
        .map_err(|e| self.blob_error(id, &path, e))?;
        file.take(max).read_to_end(buf).map_err(Error::io("read", &path))?;
        Ok(())
    }
}

impl Store {
    /// A missing blob that `memorix purge` erased says so.
    pub(crate) fn blob_error(&self, id: &Id, path: &Path, e: io::Error) -> Error {
        match self.purged(id) {
            Some(r) if e.kind() == io::ErrorKind::NotFound => {
                Error::Purged { id: *id, paths: r.paths.join(", "), time: r.time }
            }
            _ => fsutil::object_error("blob", id, path, e),
        }
    }
}

impl Writer<'_> {
    /// Stores `bytes` as a blob (a no-op when it is already there).
    pub(super) fn put_blob_bytes(&self, bytes: &[u8]) -> Result<Id> {
        let id = Id::of_bytes(bytes);
        let dest = self.store.blob_path(&id);
        if fs::symlink_metadata(&dest).is_err() {
            fsutil::write_object(&self.store.tmp_dir(), &dest, bytes, 0o444)?;
            self.count_blob(&dest, bytes.len() as u64);
        }
        Ok(id)
    }

    /// Stores the content of the regular file at `path`, streaming large files so memory use
    /// stays flat whatever the size. `len` is its size from a `stat` the caller already made.
    pub(in crate::store) fn put_blob_file(&self, path: &Path, len: u64) -> Result<Id> {
        let file = File::open(path).map_err(Error::io("open", path))?;
        self.put_blob_open(file, path, len)
    }

    /// Like [`Writer::put_blob_file`] for a file already open.
    pub(in crate::store) fn put_blob_open(&self, mut file: File, path: &Path, len: u64) -> Result<Id> {
        if len <= IN_MEMORY_LIMIT {
            // Reading through `Take` skips the `fstat` and `lseek` that `File::read_to_end`
            // makes for its size hint; a file that grew since the stat is still read whole.
            let mut bytes = Vec::with_capacity(len as usize + 1);
            Read::take(&mut file, u64::MAX).read_to_end(&mut bytes).map_err(Error::io("read", path))?;
            return self.put_blob_bytes(&bytes);
        }
        self.put_blob_reader(&mut file, path)
    }

    /// Takes a downloaded file that hashes to `id` (checked by the caller) as that blob:
    /// renamed into place, never copied.
    pub(super) fn adopt_blob(&self, tmp: &Path, id: &Id, len: u64) -> Result<()> {
        let dest = self.store.blob_path(id);
        if fs::symlink_metadata(&dest).is_ok() {
            let _ = fs::remove_file(tmp);
            return Ok(());
        }
        fsutil::set_mode(tmp, 0o444)?;
        fs::rename(tmp, &dest).map_err(Error::io("rename into place", &dest))?;
        self.count_blob(&dest, len);
        Ok(())
    }

    /// Streams `reader` into a blob; `what` names the source in errors.
    pub(in crate::store) fn put_blob_reader(&self, reader: &mut dyn Read, what: &Path) -> Result<Id> {
        let tmp = fsutil::temp_path(&self.store.tmp_dir(), what);
        let mut out = fsutil::create_with_mode(&tmp, 0o444).map_err(Error::io("create", &tmp))?;
        let streamed = stream(reader, &mut out, what, &tmp);
        drop(out);
        let (id, total) = match streamed {
            Ok(done) => done,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
        };
        let dest = self.store.blob_path(&id);
        if fs::symlink_metadata(&dest).is_ok() {
            let _ = fs::remove_file(&tmp);
            return Ok(id);
        }
        fs::rename(&tmp, &dest).map_err(Error::io("rename into place", &dest))?;
        self.count_blob(&dest, total);
        Ok(id)
    }
}

/// Copies `reader` to `out`, hashing on the way; returns the id and the byte count.
fn stream(reader: &mut dyn Read, out: &mut File, what: &Path, tmp: &Path) -> Result<(Id, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; STREAM_BUFFER];
    let mut total = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("read", what)(e)),
        };
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(Error::io("write", tmp))?;
        total += n as u64;
    }
    Ok((Id::from_bytes(hasher.finalize().into()), total))
}

/// Hashes a file by streaming it (used by `verify`).
pub fn hash_file(path: &Path) -> io::Result<Id> {
    hash_reader(File::open(path)?)
}

/// Hashes a store object by streaming it, never through a symlink planted in its place.
pub fn hash_object(path: &Path) -> io::Result<Id> {
    hash_reader(fsutil::open_object(path)?)
}

fn hash_reader(mut file: File) -> io::Result<Id> {
    HASH_BUFFER.with_borrow_mut(|buf| {
        let mut hasher = Sha256::new();
        loop {
            match file.read(buf) {
                Ok(0) => break,
                Ok(n) => hasher.update(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(Id::from_bytes(hasher.finalize().into()))
    })
}
