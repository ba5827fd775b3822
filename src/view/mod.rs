//! Views: derivations (one resolved selection) and environments (derivations mounted as one
//! tree), the conflict rules between their files, and their objects in the Store.

pub mod artifacts;
pub mod conflict;
pub mod derivation;
pub mod environment;

use std::fs;
use std::path::{Path, PathBuf};

use crate::diagnostics::{Error, Result};
use crate::model::Id;
use crate::store::{Store, Writer, checkout, fsutil};

/// `<store>/<what>/<aa>/<hex>/`
fn object_dir(store: &Store, what: &str, id: &Id) -> PathBuf {
    let hex = id.hex();
    store.root().join(what).join(&hex[..2]).join(hex)
}

impl Writer<'_> {
    /// Writes `<tmp>/<prefix>-<hex>/` holding `record_name` (the object's record) and `tree/`
    /// (hardlinks to `files`' blobs), everything read-only; returns its path.
    fn stage_object_dir(
        &self,
        prefix: &str,
        id: &Id,
        record_name: &str,
        record: &[u8],
        files: &[(String, Id)],
    ) -> Result<PathBuf> {
        self.mark_dirty();
        let staged = self.store.tmp_dir().join(format!("{prefix}-{}", id.hex()));
        checkout::remove_readonly_tree(&staged)?;
        fs::create_dir(&staged).map_err(Error::io("create directory", &staged))?;
        fsutil::write_atomic_mode(&self.store.tmp_dir(), &staged.join(record_name), record, 0o444)?;
        let tree = staged.join("tree");
        fs::create_dir(&tree).map_err(Error::io("create directory", &tree))?;
        checkout::link_tree(self.store, &tree, files)?;
        Ok(staged)
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
