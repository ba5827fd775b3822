//! The Store's records, one of its three parts (with the objects and the maintenance):
//! derivations and their artifacts, environments, generations and their history, quests, the
//! version index, fetch records, remembered plans and the projects that use the Store.
//! `store.records()` reads; `writer.records()` adds under the writer lock. The files below hold
//! the work, with the ingest that turns sources into a generation, the `derivations/` and
//! `environments/` directories (objdir.rs) and the resolving of locators and id prefixes
//! against the generations (locate.rs). This facade is the whole of what the rest of memorix
//! may ask of them, with the types and functions re-exported below.

mod derivation;
mod environment;
mod fetched;
pub(in crate::store) mod generation;
mod ingest;
pub(in crate::store) mod locate;
mod memo;
mod objdir;
mod quest;
pub(in crate::store) mod roots;
mod versions;

use std::path::PathBuf;

use derivation::OneEntry;
use generation::{GenRef, History};
use versions::VersionIndex;

use super::{Result, Store, Writer};
use crate::model::{Id, IdPrefix, Kind, Locator, Name, StorePath};

pub use derivation::{DerivationEntry, DerivationRecord, EntryOrigin, Provenance};
pub use environment::{EnvFiles, EnvironmentRecord};
pub use fetched::FetchRecord;
pub use generation::{GenSummary, Generation, GenerationMeta, VersionTag, now_rfc3339};
pub use ingest::{Ingest, IngestOutcome, RmOutcome, VersionLabel};
pub use locate::{Found, Located};
pub use quest::{Quest, QuestKind, ResolveRecord, Selection, project_key, quest_id};
pub use roots::ProjectRoots;
pub use versions::library_key;

/// What a reader may ask of the Store's records.
#[derive(Clone, Copy)]
pub struct Records<'a> {
    store: &'a Store,
}

/// The Store's records under its writer lock.
#[derive(Clone, Copy)]
pub struct RecordsWriter<'a, 's> {
    writer: &'a Writer<'s>,
}

impl Store {
    /// Derivations, environments, generations, quests, versions and fetch records, read-only.
    pub fn records(&self) -> Records<'_> {
        Records { store: self }
    }
}

impl<'s> Writer<'s> {
    /// Records added under this writer lock.
    pub fn records(&self) -> RecordsWriter<'_, 's> {
        RecordsWriter { writer: self }
    }
}

impl<'a> Records<'a> {
    /// Reads a stored derivation record, checking that its entries hash to `id`.
    pub fn read_derivation(&self, id: &Id) -> Result<DerivationRecord> {
        self.store.read_derivation(id)
    }

    /// Whether derivation `id` is stored.
    pub fn has_derivation(&self, id: &Id) -> bool {
        self.store.has_derivation(id)
    }

    /// The entry at `path` of stored derivation `id` (see [`DerivationRecord::decode_one`]).
    pub fn derivation_entry(&self, id: &Id, path: &StorePath) -> Result<Option<OneEntry>> {
        self.store.derivation_entry(id, path)
    }

    /// A derived artifact, when it has been computed.
    pub fn artifact(&self, id: &Id, name: &Name) -> Option<Vec<u8>> {
        self.store.artifact(id, name)
    }

    /// Where derived artifact `name` of derivation `id` is kept (`artifacts/<name>`).
    pub fn artifact_path(&self, id: &Id, name: &Name) -> std::path::PathBuf {
        self.store.artifact_path(id, name)
    }

    /// Whether derived artifact `name` of derivation `id` has been computed.
    pub fn has_artifact(&self, id: &Id, name: &Name) -> bool {
        self.store.has_artifact(id, name)
    }

    /// Reads a stored environment record, checking that it hashes to `id`.
    pub fn read_environment(&self, id: &Id) -> Result<EnvironmentRecord> {
        self.store.read_environment(id)
    }

    /// The files of a stored environment, recomputed from its record and its derivations:
    /// deeper mounts win, then the recorded decisions apply.
    pub fn environment_files(&self, record: &EnvironmentRecord) -> Result<EnvFiles> {
        self.store.environment_files(record)
    }

    /// The stored environments whose id starts with `prefix`.
    pub fn environments_matching(&self, prefix: &IdPrefix) -> Result<Vec<Id>> {
        self.store.environments_matching(prefix)
    }

    /// The record of the fetch that made `tree`, if a fetcher made it.
    pub fn fetched(&self, tree: &Id) -> Option<FetchRecord> {
        self.store.fetched(tree)
    }

    /// Reads generation `id` of `kind`, checking that it hashes to `id`.
    pub fn read_generation(&self, kind: Kind, id: &Id) -> Result<Generation> {
        self.store.read_generation(kind, id)
    }

    /// The generation `refs/<kind>/latest` names, if the kind has any.
    pub fn latest(&self, kind: Kind) -> Result<Option<GenRef>> {
        self.store.latest(kind)
    }

    /// The generation chain of `kind`, newest first.
    pub fn history(&self, kind: Kind) -> Result<Vec<GenRef>> {
        self.store.history(kind)
    }

    /// The generation chain of `kind`, newest first, each generation read only when the walk
    /// reaches it: a command that shows the newest few reads no more.
    pub fn walk_history(&self, kind: Kind) -> Result<History<'a>> {
        self.store.walk_history(kind)
    }

    /// Quest `id`, `None` when there is none.
    pub fn read_quest(&self, id: &Id) -> Result<Option<Quest>> {
        self.store.read_quest(id)
    }

    /// Every quest in the store, sorted by id.
    pub fn all_quests(&self) -> Result<Vec<Quest>> {
        self.store.all_quests()
    }

    /// The directory of quest records (a remote copies it).
    pub fn quests_dir(&self) -> PathBuf {
        self.store.quests_dir()
    }

    /// The version index of `kind`, rebuilt from the generations when the cache is behind.
    pub fn versions(&self, kind: Kind) -> Result<VersionIndex> {
        self.store.versions(kind)
    }

    /// The derivation remembered for `key`, if any.
    pub fn remembered_plan(&self, key: &Id) -> Option<Id> {
        self.store.remembered_plan(key)
    }

    /// The directory of the generations of `kind` (a remote copies it).
    pub fn generations_dir(&self, kind: Kind) -> PathBuf {
        self.store.generations_dir(kind)
    }
}

impl RecordsWriter<'_, '_> {
    /// Stores a derivation record unless it exists. Returns its id and whether it was new.
    pub fn put_derivation(&self, record: &DerivationRecord) -> Result<(Id, bool)> {
        self.writer.put_derivation(record)
    }

    /// Stores an environment record unless it exists (every derivation it mounts must be in
    /// the store). True when new.
    pub fn put_environment(&self, record: &EnvironmentRecord) -> Result<(Id, bool)> {
        self.writer.put_environment(record)
    }

    /// Stores a derived artifact of a stored derivation (read-only, replaced atomically).
    pub fn put_artifact(&self, id: &Id, name: &Name, bytes: &[u8]) -> Result<()> {
        self.writer.put_artifact(id, name, bytes)
    }

    /// The derivation's files as a read-only directory of hardlinks (where `[artifacts]` hooks
    /// run), made on first use; every blob it names must be in the store.
    pub fn derivation_tree(&self, record: &DerivationRecord) -> Result<std::path::PathBuf> {
        self.writer.derivation_tree(record)
    }

    /// Records where `tree` came from; written after the generation holding it is committed,
    /// so a crash between the two leaves docs without provenance, never provenance without docs.
    pub fn record_fetched(&self, tree: &Id, record: &FetchRecord) -> Result<()> {
        self.writer.record_fetched(tree, record)
    }

    /// Writes a generation fetched from another store, without a seq index entry: its seq
    /// numbers that store's history, not this one's (so `@gN` here never names it).
    pub fn put_substituted_generation(&self, id: &Id, generation: &Generation) -> Result<()> {
        self.writer.put_substituted_generation(id, generation)
    }

    /// Records a resolve of a selection for one project use as its current view: appended to
    /// the quest's history when it differs, freshness reset. Returns the quest id.
    pub fn record_resolve(&self, r: ResolveRecord) -> Result<Id> {
        self.writer.record_resolve(r)
    }

    /// Counts a read on a quest's use by (`dir`, `mount`) when its current resolve is `current`.
    pub fn count_read(&self, id: &Id, dir: &str, mount: &str, current: &Id) -> Result<()> {
        self.writer.count_read(id, dir, mount, current)
    }

    /// Registers a quest under each Store path its moving locators read.
    pub fn index_quest(&self, quest: &Id, select: &[Locator]) -> Result<()> {
        self.writer.index_quest(quest, select)
    }

    /// Remembers that the selection `key` planned to `derivation`.
    pub fn remember_plan(&self, key: &Id, derivation: &Id) -> Result<()> {
        self.writer.remember_plan(key, derivation)
    }

    /// Records what a project needs (replacing its previous record) when it changed.
    pub fn record_project(&self, roots: &ProjectRoots) -> Result<()> {
        self.writer.record_project(roots)
    }
}
