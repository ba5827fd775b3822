//! Directories of view objects, `derivations/<aa>/<hex>/` and `environments/<aa>/<hex>/`: a
//! record file and `tree/` (hardlinks to the blobs), staged whole in `tmp/` and renamed into
//! place, so a reader sees a complete directory or none.

use std::fs;
use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use super::{Store, Writer, checkout, fsutil};
use crate::diagnostics::FromIo;
use crate::model::{Id, StorePath};

/// `<store>/<what>/<aa>/<hex>/`
pub(super) fn object_dir(store: &Store, what: &str, id: &Id) -> PathBuf {
    let hex = id.hex();
    store.root().join(what).join(&hex[..2]).join(hex)
}

impl Writer<'_> {
    /// Stores `<what>/<aa>/<hex>/` holding `record_name` and `tree/` (hardlinks to `files`'
    /// blobs), everything read-only, unless it exists. True when it was new.
    pub(super) fn put_object_dir(
        &self,
        what: &str,
        id: &Id,
        record_name: &str,
        record: &[u8],
        files: &[(StorePath, Id)],
    ) -> Result<bool> {
        let dest = object_dir(self.store, what, id);
        if dest.join(record_name).exists() {
            return Ok(false);
        }
        self.mark_dirty();
        let staged = self.store.tmp_dir().join(format!("{what}-{}", id.hex()));
        checkout::remove_readonly_tree(&staged)?;
        fs::create_dir(&staged).map_err(Error::io("create directory", &staged))?;
        fsutil::write_atomic_mode(&self.store.tmp_dir(), &staged.join(record_name), record, 0o444)?;
        let tree = staged.join("tree");
        fs::create_dir(&tree).map_err(Error::io("create directory", &tree))?;
        checkout::link_tree(self.store, &tree, files)?;
        publish_dir(&staged, &dest)?;
        Ok(true)
    }
}

/// Moves a fully written object directory from `tmp/` into place; an existing one (same id,
/// same content) is kept.
fn publish_dir(staged: &Path, dest: &Path) -> Result<()> {
    fsutil::create_dir(dest.parent().expect("objects live in a fan-out directory"))?;
    match fs::rename(staged, dest) {
        Ok(()) => Ok(()),
        Err(e) if dest.join("tree").exists() => {
            drop(e);
            checkout::remove_readonly_tree(staged)
        }
        Err(e) => Err(Error::io("move into place", dest)(e)),
    }
}
