//! Where a version's docs came from when a fetcher made them: the registry, the artifact and
//! the hash it was verified by, kept by tree id so a lock written later (after a mount's
//! inputs changed, or in another project) still records `fetched` for them.

use serde::{Deserialize, Serialize};

use crate::model::Id;
use crate::store::error::Result;
use crate::store::{Store, Writer, fsutil};

/// One fetched artifact, as `memorix.lock` records it beside the tree it became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FetchRecord {
    /// `crates-io`, `pypi` or `npm`.
    pub registry: String,
    /// The artifact's file name, e.g. `matchit-0.9.2.crate`.
    pub artifact: String,
    /// In its source's notation: `sha256:<hex>` or SRI `sha512-<base64>`.
    pub hash: String,
}

impl Store {
    fn fetched_path(&self, tree: &Id) -> std::path::PathBuf {
        self.root().join("fetched").join(format!("{}.json", tree.hex()))
    }

    /// The record of the fetch that made `tree`, if a fetcher made it.
    pub(super) fn fetched(&self, tree: &Id) -> Option<FetchRecord> {
        serde_json::from_slice(&fsutil::read_object(&self.fetched_path(tree)).ok()?).ok()
    }
}

impl Writer<'_> {
    /// Records where `tree` came from; written after the generation holding it is committed,
    /// so a crash between the two leaves docs without provenance, never provenance without docs.
    pub(super) fn record_fetched(&self, tree: &Id, record: &FetchRecord) -> Result<()> {
        let path = self.store.fetched_path(tree);
        let bytes = serde_json::to_vec_pretty(record).expect("a fetch record serializes");
        if fsutil::read_object(&path).ok().as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        fsutil::create_dir(&self.store.root().join("fetched"))?;
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &path, &bytes)?)
    }
}
