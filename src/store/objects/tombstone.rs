//! Tombstones: `purged/<hex>` says a blob was erased on purpose (`memorix purge`), when, and from
//! which paths, so a read of it says so instead of reporting damage. The purge itself is
//! maintenance (maintenance/purge.rs); what it leaves is read beside the blobs.

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::model::Id;
use crate::store::{Store, fsutil};

/// `purged/<hex>`: what was erased, when, and from where.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PurgeRecord {
    pub blob: Id,
    pub paths: Vec<String>,
    pub time: String,
}

impl Store {
    /// Every purged blob, from one listing of `purged/` (for callers that ask about many
    /// blobs: most stores have purged nothing, and a lookup per blob would be a failed open each).
    pub(in crate::store) fn purged_ids(&self) -> HashSet<Id> {
        let entries = fs::read_dir(self.root().join("purged")).into_iter().flatten().flatten();
        entries.filter_map(|e| e.file_name().to_str().and_then(Id::from_hex)).collect()
    }

    /// How many blobs were ever purged from the Store at `root` (none when there is no Store),
    /// counted without opening it: a build's fingerprint changes with it.
    pub(in crate::store) fn purge_count(root: &Path) -> usize {
        fs::read_dir(root.join("purged")).map(|d| d.count()).unwrap_or(0)
    }

    /// Why blob `id` is gone, when it was purged.
    pub(in crate::store) fn purged(&self, id: &Id) -> Option<PurgeRecord> {
        serde_json::from_slice(&fsutil::read_object(&self.root().join("purged").join(id.hex())).ok()?).ok()
    }
}
