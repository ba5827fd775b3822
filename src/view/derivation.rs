//! Derivations: the files one mount selects, as (mount-relative path -> blob). The id covers
//! only those entries, so every project selecting the same files shares one derivation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::conflict::{Candidate, Decision, decide};
use crate::diagnostics::{Error, Result};
use crate::manifest::{MountDecl, OverrideDecl};
use crate::model::{EntryKind, Id, Kind, Locator, StorePath, canonical};
use crate::store::tree::{TreeSource, walk_files};
use crate::store::{Store, Writer, fsutil};

/// One locator of a mount, resolved to Store content.
#[derive(Clone, Debug)]
pub struct Selected {
    pub locator: Locator,
    pub kind: EntryKind,
    pub id: Id,
    /// The generation it was read from, where known (provenance only).
    pub generation: Option<Id>,
    /// For `@gN` / hash locators, the generation's seq (decides "newer generation").
    pub pinned_seq: Option<u64>,
    /// The library version it resolved to (`@v`, `@pin`).
    pub version: Option<String>,
}

/// Where one selected file came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub blob: Id,
    pub kind: Kind,
    pub store_path: StorePath,
    /// Index into the mount's `select`.
    pub locator: usize,
}

impl Origin {
    pub fn place(&self) -> String {
        format!("{}/{}", self.kind, self.store_path)
    }
}

/// A locator's resolution as recorded in a derivation (unhashed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provenance {
    pub locator: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub id: Id,
    pub generation: Option<Id>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A mount's resolved selection, before or after it is stored.
#[derive(Clone, Debug)]
pub struct DerivationPlan {
    pub files: BTreeMap<StorePath, Origin>,
    pub decisions: Vec<Decision>,
    pub provenance: Vec<Provenance>,
    /// Computed once: the entries of a large derivation take a while to encode.
    id: std::cell::OnceCell<Id>,
}

#[derive(Serialize)]
struct Hashed<'a> {
    entries: Vec<(&'a str, String)>,
}

/// `derivation.json`: the hashed entries plus unhashed origins, provenance and decisions.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivationRecord {
    pub entries: Vec<(String, String)>,
    /// (path, Store place, locator index) per entry.
    pub origins: Vec<(String, String, usize)>,
    pub provenance: Vec<Provenance>,
    pub decisions: Vec<Decision>,
}

impl DerivationPlan {
    /// A stored derivation's plan, without walking its locators' trees again (a sticky mount
    /// whose derivation the Store already holds). `None` if a recorded origin does not parse.
    pub fn from_record(record: DerivationRecord) -> Option<DerivationPlan> {
        let mut files = BTreeMap::new();
        for ((path, hex), (_, place, locator)) in record.entries.iter().zip(&record.origins) {
            let origin = Locator::parse_place(place).ok()?;
            let blob = Id::from_hex(hex)?;
            let o = Origin { blob, kind: origin.kind, store_path: origin.path, locator: *locator };
            files.insert(StorePath::new(path).ok()?, o);
        }
        let id = std::cell::OnceCell::new();
        Some(DerivationPlan { files, decisions: record.decisions, provenance: record.provenance, id })
    }

    /// The derivation id: a pure function of the sorted (path, blob) entries.
    pub fn id(&self) -> Id {
        *self.id.get_or_init(|| {
            let entries = self.files.iter().map(|(p, o)| (p.as_str(), o.blob.hex())).collect();
            canonical::object_id("derivation", &canonical::encode(&Hashed { entries }))
        })
    }

    pub fn record(&self) -> DerivationRecord {
        DerivationRecord {
            entries: self.files.iter().map(|(p, o)| (p.to_string(), o.blob.hex())).collect(),
            origins: self.files.iter().map(|(p, o)| (p.to_string(), o.place(), o.locator)).collect(),
            provenance: self.provenance.clone(),
            decisions: self.decisions.clone(),
        }
    }
}

/// Resolves a mount's selection against trees: places each locator's files relative to its
/// base, applies include/exclude, and decides conflicts inside the mount.
pub fn plan(
    trees: &dyn TreeSource,
    mount: &MountDecl,
    selected: &[Selected],
    overrides: &[&OverrideDecl],
) -> Result<DerivationPlan> {
    let mut claims: BTreeMap<StorePath, Vec<(Candidate, usize)>> = BTreeMap::new();
    for (i, sel) in selected.iter().enumerate() {
        let files = match sel.kind {
            EntryKind::Blob => {
                let name = sel.locator.path.file_name().expect("a file locator names a file");
                vec![(StorePath::new(name).expect("a component is a path"), sel.id)]
            }
            EntryKind::Tree => walk_files(trees, &sel.id)?,
        };
        for (rel, blob) in files {
            if !mount.keeps(rel.as_str()) {
                continue;
            }
            let store_path = match sel.kind {
                EntryKind::Blob => sel.locator.path.clone(),
                EntryKind::Tree => sel.locator.path.join_path(&rel),
            };
            let candidate =
                Candidate { kind: sel.locator.kind, store_path, blob, pinned_seq: sel.pinned_seq };
            claims.entry(rel).or_default().push((candidate, i));
        }
    }
    let mut files = BTreeMap::new();
    let mut decisions = Vec::new();
    for (rel, claim) in claims {
        let env_path = mount.path.join_path(&rel);
        let forced = overrides.iter().find(|o| o.path == env_path).map(|o| o.winner.place());
        let candidates: Vec<Candidate> = claim.iter().map(|(c, _)| c.clone()).collect();
        // A lone candidate needs no decision; the environment checks that any override on
        // its path names it.
        let (w, mut d) = match candidates.len() {
            1 => (0, Vec::new()),
            _ => decide(env_path.as_str(), &candidates, forced.as_deref())?,
        };
        decisions.append(&mut d);
        let (c, locator) = &claim[w];
        files.insert(
            rel,
            Origin { blob: c.blob, kind: c.kind, store_path: c.store_path.clone(), locator: *locator },
        );
    }
    check_file_dir_clashes(&mount.path, &files)?;
    let provenance = selected
        .iter()
        .map(|s| Provenance {
            locator: s.locator.to_string(),
            kind: s.kind,
            id: s.id,
            generation: s.generation,
            version: s.version.clone(),
        })
        .collect();
    Ok(DerivationPlan { files, decisions, provenance, id: std::cell::OnceCell::new() })
}

/// A path cannot be a file and hold files: `a` and `a/b` from two locators.
fn check_file_dir_clashes(mount: &StorePath, files: &BTreeMap<StorePath, Origin>) -> Result<()> {
    // Every directory some file lies in, with one such file: O(files x depth).
    let mut dirs: std::collections::HashMap<&str, (&StorePath, &Origin)> = std::collections::HashMap::new();
    for (p, o) in files {
        for a in p.ancestors() {
            dirs.entry(a).or_insert((p, o));
        }
    }
    for (path, origin) in files {
        if let Some((inner, other)) = dirs.get(path.as_str()) {
            return Err(Error::FileDirClash {
                mount: mount.to_string(),
                path: path.to_string(),
                file: origin.place(),
                dir: format!("{} at {inner}", other.place()),
            });
        }
    }
    Ok(())
}

impl Store {
    pub fn derivation_dir(&self, id: &Id) -> std::path::PathBuf {
        super::object_dir(self, "derivations", id)
    }

    /// Reads a stored derivation record, checking that its entries hash to `id`.
    pub fn read_derivation(&self, id: &Id) -> Result<DerivationRecord> {
        let path = self.derivation_dir(id).join("derivation.json");
        let bytes =
            fsutil::read_object(&path).map_err(|e| fsutil::object_error("derivation", id, &path, e))?;
        DerivationRecord::decode(&bytes, id).map_err(|reason| Error::corrupt("derivation", &path, reason))
    }
}

impl DerivationRecord {
    /// Decodes a derivation record and checks that its entries are valid and hash to `id`
    /// (the one check for records read from the store and fetched from a remote).
    pub fn decode(bytes: &[u8], id: &Id) -> std::result::Result<DerivationRecord, String> {
        let record: DerivationRecord = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        for (p, hex) in &record.entries {
            StorePath::new(p).map_err(|why| format!("entry {p:?}: {}", why.describe()))?;
            Id::from_hex(hex).ok_or_else(|| format!("entry {p:?}: bad id"))?;
        }
        let entries = record.entries.iter().map(|(p, h)| (p.as_str(), h.clone())).collect();
        if canonical::object_id("derivation", &canonical::encode(&Hashed { entries })) != *id {
            return Err("entries do not hash to its id".into());
        }
        Ok(record)
    }

    /// The blob of each entry, as (path, blob).
    pub fn files(&self) -> Vec<(String, Id)> {
        self.entries.iter().map(|(p, h)| (p.clone(), Id::from_hex(h).expect("checked on decode"))).collect()
    }
}

impl Writer<'_> {
    /// Stores a derivation (its record and a hardlinked `tree/`) unless it exists; true when new.
    pub fn put_derivation(&self, plan: &DerivationPlan) -> Result<(Id, bool)> {
        let id = plan.id();
        let dest = self.store.derivation_dir(&id);
        if dest.join("derivation.json").exists() {
            return Ok((id, false));
        }
        let files: Vec<(String, Id)> = plan.files.iter().map(|(p, o)| (p.to_string(), o.blob)).collect();
        let staged =
            self.stage_object_dir("drv", &id, "derivation.json", &canonical::encode(&plan.record()), &files)?;
        super::publish_dir(&staged, &dest)?;
        Ok((id, true))
    }

    /// Stores a derivation record fetched from a remote (already decoded and checked against
    /// `id`), with its `tree/`; every blob it names must be in the store. True when new.
    pub fn put_derivation_record(&self, id: &Id, record: &DerivationRecord) -> Result<bool> {
        let dest = self.store.derivation_dir(id);
        if dest.join("derivation.json").exists() {
            return Ok(false);
        }
        let staged =
            self.stage_object_dir("drv", id, "derivation.json", &canonical::encode(record), &record.files())?;
        super::publish_dir(&staged, &dest)?;
        Ok(true)
    }
}
