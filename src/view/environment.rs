//! Environments: derivations mounted at paths as one tree. The id covers the sorted
//! (mount, derivation id) pairs and the conflict decisions between nested mounts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::conflict::{Decision, Rule};
use super::derivation::{DerivationPlan, Origin};
use crate::diagnostics::{Error, Result};
use crate::manifest::OverrideDecl;
use crate::model::{Id, StorePath, canonical};
use crate::store::{Store, Writer, fsutil};

/// One file of an environment.
#[derive(Clone, Debug)]
pub struct EnvFile {
    pub blob: Id,
    /// The mount it comes from.
    pub mount: StorePath,
    pub origin: Origin,
}

#[derive(Clone, Debug)]
pub struct EnvironmentPlan {
    /// (mount path, derivation id), sorted by mount path.
    pub mounts: Vec<(StorePath, Id)>,
    pub decisions: Vec<Decision>,
    /// Environment path -> file.
    pub files: BTreeMap<StorePath, EnvFile>,
}

/// `environment.json`: exactly the hashed part.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentRecord {
    pub decisions: Vec<Decision>,
    pub mounts: Vec<(String, Id)>,
}

impl EnvironmentRecord {
    pub fn id(&self) -> Id {
        canonical::object_id("environment", &canonical::encode(self))
    }
}

impl EnvironmentPlan {
    pub fn record(&self) -> EnvironmentRecord {
        EnvironmentRecord {
            decisions: self.decisions.clone(),
            mounts: self.mounts.iter().map(|(p, id)| (p.to_string(), *id)).collect(),
        }
    }

    pub fn id(&self) -> Id {
        self.record().id()
    }
}

/// Mounts each derivation at its path. Where nested mounts both place a file (or a file and a
/// directory) at one path, the deeper mount wins unless an override names the other.
pub fn plan(mounts: &[(StorePath, &DerivationPlan)], overrides: &[OverrideDecl]) -> Result<EnvironmentPlan> {
    let mut claims: BTreeMap<StorePath, Vec<EnvFile>> = BTreeMap::new();
    for (mount, drv) in mounts {
        for (rel, origin) in &drv.files {
            let file = EnvFile { blob: origin.blob, mount: mount.clone(), origin: origin.clone() };
            claims.entry(mount.join_path(rel)).or_default().push(file);
        }
    }
    let depth = |p: &StorePath| p.components().count();
    let forced = |path: &StorePath| overrides.iter().find(|o| &o.path == path).map(|o| o.winner.place());
    let mut decisions = Vec::new();
    let mut files = BTreeMap::new();
    for (path, mut claim) in claims {
        let winner = match forced(&path) {
            Some(place) => claim.iter().position(|f| f.origin.place() == place).ok_or_else(|| {
                Error::OverrideNotCandidate {
                    path: path.to_string(),
                    named: place.clone(),
                    candidates: claim.iter().map(|f| f.origin.place()).collect(),
                }
            })?,
            None => (0..claim.len()).max_by_key(|&i| depth(&claim[i].mount)).expect("a claim has a file"),
        };
        let rule = if forced(&path).is_some() { Rule::Override } else { Rule::DeeperMount };
        for (i, f) in claim.iter().enumerate() {
            if i != winner && f.blob != claim[winner].blob {
                decisions.push(Decision {
                    path: path.to_string(),
                    rule,
                    winner: claim[winner].mount.to_string(),
                    loser: f.mount.to_string(),
                });
            }
        }
        files.insert(path, claim.swap_remove(winner));
    }
    // A file where a deeper mount has a directory gives way to it.
    // Each directory some file lies in, with the deepest mount that puts a file there.
    let mut dirs: std::collections::HashMap<&str, &EnvFile> = std::collections::HashMap::new();
    for (p, f) in &files {
        for a in p.ancestors() {
            let e = dirs.entry(a).or_insert(f);
            if depth(&f.mount) > depth(&e.mount) {
                *e = f;
            }
        }
    }
    let clashing: Vec<StorePath> = files
        .iter()
        .filter_map(|(path, f)| {
            let deeper = dirs.get(path.as_str()).filter(|g| depth(&g.mount) > depth(&f.mount));
            deeper.map(|g| {
                decisions.push(Decision {
                    path: path.to_string(),
                    rule: Rule::DeeperMount,
                    winner: g.mount.to_string(),
                    loser: f.mount.to_string(),
                });
                path.clone()
            })
        })
        .collect();
    for p in clashing {
        files.remove(&p);
    }
    for o in overrides {
        match files.get(&o.path) {
            None => return Err(Error::OverrideUnused { path: o.path.to_string() }),
            Some(f) if f.origin.place() != o.winner.place() => {
                return Err(Error::OverrideNotCandidate {
                    path: o.path.to_string(),
                    named: o.winner.place(),
                    candidates: vec![f.origin.place()],
                });
            }
            Some(_) => {}
        }
    }
    decisions.sort_by(|a, b| a.path.cmp(&b.path).then(a.loser.cmp(&b.loser)));
    let mounts = mounts.iter().map(|(p, d)| (p.clone(), d.id())).collect();
    Ok(EnvironmentPlan { mounts, decisions, files })
}

impl Store {
    pub fn environment_dir(&self, id: &Id) -> std::path::PathBuf {
        super::object_dir(self, "environments", id)
    }

    pub fn read_environment(&self, id: &Id) -> Result<EnvironmentRecord> {
        let path = self.environment_dir(id).join("environment.json");
        let bytes =
            fsutil::read_object(&path).map_err(|e| fsutil::object_error("environment", id, &path, e))?;
        EnvironmentRecord::decode(&bytes, id).map_err(|reason| Error::corrupt("environment", &path, reason))
    }
}

impl EnvironmentRecord {
    /// Decodes an environment record and checks it is canonical, hashes to `id` and mounts
    /// only valid paths (for records read from the store and fetched from a remote).
    pub fn decode(bytes: &[u8], id: &Id) -> std::result::Result<EnvironmentRecord, String> {
        let record: EnvironmentRecord = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if canonical::encode(&record) != bytes || record.id() != *id {
            return Err("content does not match its id".into());
        }
        for (m, _) in &record.mounts {
            StorePath::new(m).map_err(|why| format!("mount {m:?}: {}", why.describe()))?;
        }
        Ok(record)
    }
}

impl Writer<'_> {
    /// Stores an environment (its record and a hardlinked `tree/`) unless it exists.
    pub fn put_environment(&self, plan: &EnvironmentPlan) -> Result<(Id, bool)> {
        let record = plan.record();
        let id = record.id();
        let dest = self.store.environment_dir(&id);
        if dest.join("environment.json").exists() {
            return Ok((id, false));
        }
        let files: Vec<(String, Id)> = plan.files.iter().map(|(p, f)| (p.to_string(), f.blob)).collect();
        let staged =
            self.stage_object_dir("env", &id, "environment.json", &canonical::encode(&record), &files)?;
        super::publish_dir(&staged, &dest)?;
        Ok((id, true))
    }

    /// Stores an environment record fetched from a remote (already checked against its id),
    /// with its `tree/`; every derivation it mounts must be in the store. True when new.
    pub fn put_environment_record(&self, record: &EnvironmentRecord) -> Result<bool> {
        let id = record.id();
        let dest = self.store.environment_dir(&id);
        if dest.join("environment.json").exists() {
            return Ok(false);
        }
        let files: Vec<(String, Id)> =
            files_of(self.store, record)?.into_iter().map(|(p, (_, blob))| (p, blob)).collect();
        let staged =
            self.stage_object_dir("env", &id, "environment.json", &canonical::encode(record), &files)?;
        super::publish_dir(&staged, &dest)?;
        Ok(true)
    }
}

/// The files of a stored environment (environment path -> (mount, blob)), recomputed from its
/// record and its derivations: deeper mounts win, then the recorded decisions apply.
pub fn files_of(store: &Store, record: &EnvironmentRecord) -> Result<BTreeMap<String, (String, Id)>> {
    let mut entries_of = BTreeMap::new();
    for (mount, drv) in &record.mounts {
        let d = store.read_derivation(drv)?;
        let entries: BTreeMap<String, Id> =
            d.entries.into_iter().map(|(p, h)| (p, Id::from_hex(&h).expect("validated on read"))).collect();
        entries_of.insert(mount.clone(), entries);
    }
    let mut mounts: Vec<&String> = entries_of.keys().collect();
    mounts.sort_by_key(|m| m.split('/').count());
    let mut files = BTreeMap::new();
    for mount in mounts {
        for (p, blob) in &entries_of[mount] {
            files.insert(format!("{mount}/{p}"), (mount.clone(), *blob));
        }
    }
    for d in &record.decisions {
        let winner = entries_of.get(&d.winner);
        match (winner, d.path.strip_prefix(&format!("{}/", d.winner))) {
            (Some(entries), Some(rel)) if entries.contains_key(rel) => {
                files.insert(d.path.clone(), (d.winner.clone(), entries[rel]));
            }
            // The loser's file gave way to the winner's directory.
            _ => {
                files.remove(&d.path);
            }
        }
    }
    Ok(files)
}
