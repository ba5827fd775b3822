//! Environment records, `environments/<aa>/<id>/environment.json`: derivations mounted at
//! paths, and the conflict decisions between nested mounts. The record is exactly the hashed
//! part; its files are recomputed from it and its derivations.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::objdir::object_dir;
use crate::model::decision::Decision;
use crate::model::{Id, StorePath, canonical};
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

pub const RECORD: &str = "environment.json";

/// `environment.json`: exactly the hashed part.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentRecord {
    pub decisions: Vec<Decision>,
    /// (mount path, derivation id), sorted by mount path.
    pub mounts: Vec<(StorePath, Id)>,
}

/// Environment path -> (mount, blob).
pub type EnvFiles = BTreeMap<StorePath, (StorePath, Id)>;

impl EnvironmentRecord {
    pub fn id(&self) -> Id {
        canonical::object_id("environment", &canonical::encode(self))
    }

    /// Decodes an environment record and checks it is canonical and hashes to `id` (for
    /// records read from the store and fetched from a remote).
    pub fn decode(bytes: &[u8], id: &Id) -> std::result::Result<EnvironmentRecord, String> {
        let record: EnvironmentRecord = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if canonical::encode(&record) != bytes || record.id() != *id {
            return Err("content does not match its id".into());
        }
        Ok(record)
    }
}

impl Store {
    pub(super) fn environment_dir(&self, id: &Id) -> std::path::PathBuf {
        object_dir(self, "environments", id)
    }

    pub(in crate::store) fn read_environment(&self, id: &Id) -> Result<EnvironmentRecord> {
        let path = self.environment_dir(id).join(RECORD);
        let bytes =
            fsutil::read_object(&path).map_err(|e| fsutil::object_error("environment", id, &path, e))?;
        EnvironmentRecord::decode(&bytes, id).map_err(|reason| Error::corrupt("environment", &path, reason))
    }

    /// The files of a stored environment, recomputed from its record and its derivations:
    /// deeper mounts win, then the recorded decisions apply.
    pub(super) fn environment_files(&self, record: &EnvironmentRecord) -> Result<EnvFiles> {
        Store::environment_files_from(record, |drv| {
            Ok(Cow::Owned(self.read_derivation(drv)?.entries.into_iter().map(|e| (e.path, e.blob)).collect()))
        })
    }

    /// [`Store::environment_files`] with each derivation's entries from `derivation_entries`,
    /// so `verify`, which has decoded every derivation once already, lends them instead of
    /// decoding (or copying) them again per environment.
    pub(in crate::store) fn environment_files_from<'d>(
        record: &EnvironmentRecord,
        mut derivation_entries: impl FnMut(&Id) -> Result<Cow<'d, BTreeMap<StorePath, Id>>>,
    ) -> Result<EnvFiles> {
        let mut entries_of = BTreeMap::new();
        for (mount, drv) in &record.mounts {
            entries_of.insert(mount.clone(), derivation_entries(drv)?);
        }
        let mut mounts: Vec<&StorePath> = entries_of.keys().collect();
        mounts.sort_by_key(|m| m.components().count());
        let mut files = BTreeMap::new();
        for mount in mounts {
            for (p, blob) in entries_of[mount].iter() {
                files.insert(mount.join_path(p), (mount.clone(), *blob));
            }
        }
        for d in &record.decisions {
            let Ok(path) = StorePath::new(&d.path) else { continue };
            let winner = StorePath::new(&d.winner).ok().and_then(|w| Some((entries_of.get(&w)?, w)));
            let rel = winner.as_ref().and_then(|(_, w)| path.strip_prefix(w));
            match (winner, rel) {
                (Some((entries, w)), Some(rel)) if entries.contains_key(&rel) => {
                    let blob = entries[&rel];
                    files.insert(path, (w, blob));
                }
                // The loser's file gave way to the winner's directory.
                _ => {
                    files.remove(&path);
                }
            }
        }
        Ok(files)
    }
}

impl Writer<'_> {
    /// Stores an environment record unless it exists (every derivation it mounts must be in
    /// the store). True when new.
    pub(super) fn put_environment(&self, record: &EnvironmentRecord) -> Result<(Id, bool)> {
        let id = record.id();
        let new = self.put_record("environments", &id, RECORD, || canonical::encode(record))?;
        Ok((id, new))
    }
}
