//! The Store's upkeep, one of its three parts (with the objects and the records): collecting
//! garbage, purging blobs, verifying every object and record, and keeping the `latest/`
//! checkouts in step with the refs. `store.maintenance()` reads; `writer.maintenance()` changes
//! the Store under its writer lock. The work is in gc.rs, purge.rs and verify.rs below, and in
//! the objects and records they keep (the checkouts are objects/checkout.rs); this facade is
//! the whole of what the rest of memorix may ask of them, with the types re-exported below.

mod gc;
mod purge;
mod verify;

use std::collections::HashSet;
use std::path::Path;

use super::{Result, Store, Writer};
use crate::model::Id;
use crate::progress::Progress;

pub use crate::store::objects::tombstone::PurgeRecord;
pub use gc::GcOutcome;
pub use purge::PurgeTarget;
pub use verify::{Problem, VerifyReport};

/// What a reader may ask of the Store's upkeep.
#[derive(Clone, Copy)]
pub struct Maintenance<'a> {
    store: &'a Store,
}

/// The Store's upkeep under its writer lock.
#[derive(Clone, Copy)]
pub struct MaintenanceWriter<'a, 's> {
    writer: &'a Writer<'s>,
}

impl Store {
    /// Garbage, purges and verification, read-only.
    pub fn maintenance(&self) -> Maintenance<'_> {
        Maintenance { store: self }
    }
}

impl<'s> Writer<'s> {
    /// Garbage collection, purges and the `latest/` checkouts, under this writer lock.
    pub fn maintenance(&self) -> MaintenanceWriter<'_, 's> {
        MaintenanceWriter { writer: self }
    }
}

impl Maintenance<'_> {
    /// What `gc` would remove (a dry run).
    pub fn garbage(&self) -> Result<GcOutcome> {
        self.store.garbage()
    }

    /// Checks every object and record against its id and the references between them.
    pub fn verify(&self, progress: &dyn Progress) -> Result<VerifyReport> {
        self.store.verify(progress)
    }

    /// The blobs a purge of `target` would erase, with the paths they were ever at.
    pub fn purge_candidates(&self, target: &PurgeTarget) -> Result<Vec<PurgeRecord>> {
        self.store.purge_candidates(target)
    }

    /// The ids of every purged blob.
    pub fn purged_ids(&self) -> HashSet<Id> {
        self.store.purged_ids()
    }

    /// How many blobs were ever purged from the Store at `root` (no Store need be opened).
    pub fn purge_count(root: &Path) -> usize {
        Store::purge_count(root)
    }
}

impl MaintenanceWriter<'_, '_> {
    /// Removes what no generation, derivation, environment or live project reaches.
    pub fn collect_garbage(&self) -> Result<GcOutcome> {
        self.writer.collect_garbage()
    }

    /// Erases the blobs of `records` (and every hard link to them); returns the links removed.
    pub fn purge(&self, records: &[PurgeRecord]) -> Result<usize> {
        self.writer.purge(records)
    }

    /// Brings each `latest/` checkout to its kind's ref.
    pub fn heal_latest(&self) -> Result<()> {
        self.writer.heal_latest()
    }

    /// Writes the blobs an ingest packed into `incoming/` to their own files (see objects/incoming.rs).
    pub fn unpack_incoming(&self) -> Result<usize> {
        self.writer.unpack_incoming()
    }

    /// Prepares the spare checkouts the next swap of `latest/` uses.
    pub fn fill_spares(&self) -> Result<()> {
        self.writer.fill_spares()
    }
}
