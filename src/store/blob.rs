//! Blobs: immutable file contents at `blobs/<aa>/<hex>`, mode 0444.

use std::fs::{self, File, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::{Id, Store, Writer};
use crate::diagnostics::{Error, Result};

/// Files up to this size are read into memory once; larger ones stream through a temp file.
const IN_MEMORY_LIMIT: u64 = 4 << 20;
const STREAM_BUFFER: usize = 1 << 20;

impl Store {
    pub fn has_blob(&self, id: &Id) -> bool {
        fs::symlink_metadata(self.blob_path(id)).is_ok()
    }

    pub fn read_blob(&self, id: &Id) -> Result<Vec<u8>> {
        let path = self.blob_path(id);
        super::fsutil::read_object(&path).map_err(|e| self.blob_error(id, &path, e))
    }

    pub fn open_blob(&self, id: &Id) -> Result<File> {
        let path = self.blob_path(id);
        super::fsutil::open_object(&path).map_err(|e| self.blob_error(id, &path, e))
    }
}

impl Store {
    /// A missing blob that `memorix purge` erased says so.
    pub(crate) fn blob_error(&self, id: &Id, path: &Path, e: io::Error) -> Error {
        match self.purged(id) {
            Some(r) if e.kind() == io::ErrorKind::NotFound => {
                Error::Purged { id: *id, paths: r.paths.join(", "), time: r.time }
            }
            _ => super::fsutil::object_error("blob", id, path, e),
        }
    }
}

impl Writer<'_> {
    /// Stores `bytes` as a blob (a no-op when it is already there).
    pub fn put_blob_bytes(&self, bytes: &[u8]) -> Result<Id> {
        let id = Id::of_bytes(bytes);
        let dest = self.store.blob_path(&id);
        if fs::symlink_metadata(&dest).is_err() {
            super::fsutil::write_atomic_mode(&self.store.tmp_dir(), &dest, bytes, 0o444)?;
            self.count_blob(bytes.len() as u64);
        }
        Ok(id)
    }

    /// Stores the content of the regular file at `path`, streaming large files so memory use
    /// stays flat whatever the size.
    pub fn put_blob_file(&self, path: &Path) -> Result<Id> {
        let mut file = File::open(path).map_err(Error::io("open", path))?;
        let len = file.metadata().map_err(Error::io("stat", path))?.len();
        if len <= IN_MEMORY_LIMIT {
            let mut bytes = Vec::with_capacity(len as usize);
            file.read_to_end(&mut bytes).map_err(Error::io("read", path))?;
            return self.put_blob_bytes(&bytes);
        }
        self.put_blob_reader(&mut file, path)
    }

    /// Streams `reader` into a blob; `what` names the source in errors.
    pub fn put_blob_reader(&self, reader: &mut dyn Read, what: &Path) -> Result<Id> {
        let tmp_dir = self.store.tmp_dir();
        let mut tmp = tempfile::NamedTempFile::new_in(&tmp_dir)
            .map_err(Error::io("create a temp file in", &tmp_dir))?;
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
            tmp.write_all(&buf[..n]).map_err(Error::io("write", tmp.path()))?;
            total += n as u64;
        }
        let id = Id::from_bytes(hasher.finalize().into());
        let dest = self.store.blob_path(&id);
        if fs::symlink_metadata(&dest).is_ok() {
            return Ok(id);
        }
        fs::set_permissions(tmp.path(), Permissions::from_mode(0o444))
            .map_err(Error::io("set permissions of", tmp.path()))?;
        tmp.persist(&dest).map_err(|e| Error::io("rename into place", &dest)(e.error))?;
        self.count_blob(total);
        Ok(id)
    }
}

/// Hashes a file by streaming it (used by `verify`).
pub fn hash_file(path: &Path) -> io::Result<Id> {
    let mut file = File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; STREAM_BUFFER];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(Id::from_bytes(hasher.finalize().into()))
}
