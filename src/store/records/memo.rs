//! `index/plans/<key>`: which derivation a mount's locked selection planned to, written where a
//! plan was computed by walking its trees. Planning is a pure function of the key (memorix's
//! version, the mount, its inputs and its locked tree ids), so a check that finds the lock's
//! derivation remembered here need not walk the trees again. A rebuildable cache: losing it
//! costs a walk, nothing else.

use std::path::PathBuf;

use crate::model::Id;
use crate::store::error::Result;
use crate::store::{Store, Writer, fsutil};

impl Store {
    fn memo_path(&self, key: &Id) -> PathBuf {
        self.root().join("index/plans").join(key.hex())
    }

    /// The derivation remembered for `key`, if any.
    pub(super) fn remembered_plan(&self, key: &Id) -> Option<Id> {
        fsutil::read_text(&self.memo_path(key)).ok()?.trim().parse().ok()
    }
}

impl Writer<'_> {
    /// Remembers that the selection `key` planned to `derivation`.
    pub(super) fn remember_plan(&self, key: &Id, derivation: &Id) -> Result<()> {
        if self.store.remembered_plan(key) == Some(*derivation) {
            return Ok(());
        }
        let path = self.store.memo_path(key);
        fsutil::create_dir(path.parent().expect("index/plans"))?;
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &path, format!("{derivation}\n").as_bytes())?)
    }
}
