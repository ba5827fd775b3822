//! The index as one Store artifact: its files in a tar with fixed headers, sorted by name, and
//! read back as a read-only tantivy directory over the artifact's bytes (no copy per file).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, OwnedBytes, WatchCallback, WatchHandle, WritePtr,
};

/// Packs `files` (name -> bytes) into a tar whose every byte depends on the files alone.
pub fn pack(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o444);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        // Names are tantivy's own (`meta.json`, `<hex>.idx`): short and ASCII.
        header.set_path(name).expect("index file names fit a tar header");
        header.set_cksum();
        builder.append(&header, bytes.as_slice()).expect("writing to memory");
    }
    builder.into_inner().expect("writing to memory")
}

/// The index files of a packed artifact, each a slice of its bytes.
#[derive(Clone, Debug)]
pub struct PackDirectory {
    files: Arc<BTreeMap<PathBuf, OwnedBytes>>,
}

impl PackDirectory {
    /// Reads a pack made by [`pack`]; `Err` names what is wrong with it.
    pub fn open(bytes: Vec<u8>) -> Result<PackDirectory, String> {
        let all = OwnedBytes::new(bytes);
        let mut files = BTreeMap::new();
        let mut archive = tar::Archive::new(all.as_slice());
        for entry in archive.entries().map_err(|e| e.to_string())? {
            let entry = entry.map_err(|e| e.to_string())?;
            let path = entry.path().map_err(|e| e.to_string())?.into_owned();
            let at = usize::try_from(entry.raw_file_position()).map_err(|e| e.to_string())?;
            let len = usize::try_from(entry.size()).map_err(|e| e.to_string())?;
            let end =
                at.checked_add(len).filter(|end| *end <= all.len()).ok_or("a file runs past the end")?;
            files.insert(path, all.slice(at..end));
        }
        Ok(PackDirectory { files: Arc::new(files) })
    }

    fn get(&self, path: &Path) -> Result<&OwnedBytes, OpenReadError> {
        self.files.get(path).ok_or_else(|| OpenReadError::FileDoesNotExist(path.to_path_buf()))
    }
}

fn read_only() -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, "a stored search index is read-only")
}

impl Directory for PackDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        Ok(Arc::new(self.get(path)?.clone()))
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError { io_error: Arc::new(read_only()), filepath: path.to_path_buf() })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        Ok(self.files.contains_key(path))
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::wrap_io_error(read_only(), path.to_path_buf()))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        Ok(self.get(path)?.as_slice().to_vec())
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// Nothing writes the index, so readers need no lock against a writer.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        Ok(WatchHandle::empty())
    }
}
