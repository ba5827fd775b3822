//! Directories of view objects, `derivations/<aa>/<hex>/` and `environments/<aa>/<hex>/`: a
//! record file, written atomically (its presence means the object is stored). A derivation's
//! `tree/` of hardlinks to its blobs is made on demand, only where a program needs the files as
//! a directory (`[artifacts]` hooks): building or updating never writes a tree per id.

use std::fs;
use std::path::PathBuf;

use crate::diagnostics::FromIo;
use crate::model::{Id, StorePath};
use crate::store::error::{Error, Result};
use crate::store::objects::checkout;
use crate::store::{Store, Writer, fsutil};

/// `<store>/<what>/<aa>/<hex>/`
pub(super) fn object_dir(store: &Store, what: &str, id: &Id) -> PathBuf {
    let hex = id.hex();
    store.root().join(what).join(&hex[..2]).join(hex)
}

impl Writer<'_> {
    /// Stores `<what>/<aa>/<hex>/<record_name>` (read-only) unless it exists. True when new.
    /// The record is encoded only when it is not stored yet (a large one takes a while). The
    /// directory is staged in `tmp/` with its record and renamed into place, so a crash never
    /// leaves an object directory without its record.
    pub(super) fn put_record(
        &self,
        what: &str,
        id: &Id,
        record_name: &str,
        encode: impl FnOnce() -> Vec<u8>,
    ) -> Result<bool> {
        let dest = object_dir(self.store, what, id);
        if dest.join(record_name).exists() {
            return Ok(false);
        }
        let record = &encode();
        self.mark_dirty();
        let tmp = self.store.tmp_dir();
        let staged = self.staging_dir(&format!("{what}-{}", id.hex()))?;
        fsutil::write_atomic_mode(&tmp, &staged.join(record_name), record, 0o444)?;
        fsutil::create_dir(dest.parent().expect("a shard directory"))?;
        // An empty directory left by an older memorix is replaced by the rename; one that
        // holds something (artifacts) gets the record written into it.
        match fs::rename(&staged, &dest) {
            Ok(()) => {}
            Err(_) if dest.is_dir() => {
                fsutil::write_atomic_mode(&tmp, &dest.join(record_name), record, 0o444)?;
                checkout::remove_readonly_tree(&staged)?;
            }
            Err(e) => return Err(Error::io("move into place", &dest)(e)),
        }
        Ok(true)
    }

    /// `<dir>/tree/`: hardlinks to `files`' blobs, read-only, staged in `tmp/` and renamed into
    /// place whole, unless it exists.
    pub(super) fn put_tree_dir(&self, dir: &std::path::Path, files: &[(StorePath, Id)]) -> Result<PathBuf> {
        let dest = dir.join("tree");
        if dest.is_dir() {
            return Ok(dest);
        }
        self.mark_dirty();
        let name = dir.file_name().expect("an object directory has a name").to_string_lossy();
        let staged = self.staging_dir(&format!("tree-{name}"))?;
        checkout::link_tree(self.store, &staged, files)?;
        match fs::rename(&staged, &dest) {
            Ok(()) => Ok(dest),
            Err(_) if dest.is_dir() => checkout::remove_readonly_tree(&staged).map(|()| dest),
            Err(e) => Err(Error::io("move into place", &dest)(e)),
        }
    }

    /// A new, empty `tmp/<name>/` to fill and rename into place (any leftover of an
    /// interrupted one removed).
    fn staging_dir(&self, name: &str) -> Result<PathBuf> {
        let staged = self.store.tmp_dir().join(name);
        checkout::remove_readonly_tree(&staged)?;
        fs::create_dir(&staged).map_err(Error::io("create directory", &staged))?;
        Ok(staged)
    }
}
