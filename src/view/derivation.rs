//! Derivations: the files one mount selects, as (mount-relative path -> blob). The id covers
//! only those entries, so every project selecting the same files shares one derivation.

use std::collections::BTreeMap;

use super::conflict::{Candidate, decide};
use super::error::{Error, Result};
use crate::manifest::{MountDecl, OverrideDecl};
use crate::model::decision::Decision;
use crate::model::{EntryKind, Id, Kind, Locator, StorePath};
use crate::store::derivation::{DerivationEntry, DerivationRecord, EntryOrigin, Provenance};
use crate::store::tree::{TreeSource, walk_files};

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

/// A mount's resolved selection, before or after it is stored.
#[derive(Clone, Debug)]
pub struct DerivationPlan {
    pub files: BTreeMap<StorePath, Origin>,
    pub decisions: Vec<Decision>,
    pub provenance: Vec<Provenance>,
    /// Computed once: the entries of a large derivation take a while to encode.
    id: std::cell::OnceCell<Id>,
}

impl DerivationPlan {
    /// A stored derivation's plan, without walking its locators' trees again (a sticky mount
    /// whose derivation the Store already holds).
    pub fn from_record(record: DerivationRecord) -> DerivationPlan {
        let files = record
            .entries
            .into_iter()
            .zip(record.origins)
            .map(|(e, o)| {
                let origin =
                    Origin { blob: e.blob, kind: o.kind, store_path: o.store_path, locator: o.locator };
                (e.path, origin)
            })
            .collect();
        let id = std::cell::OnceCell::new();
        DerivationPlan { files, decisions: record.decisions, provenance: record.provenance, id }
    }

    fn entries(&self) -> Vec<DerivationEntry> {
        self.files.iter().map(|(p, o)| DerivationEntry { path: p.clone(), blob: o.blob }).collect()
    }

    /// The derivation id: a pure function of the sorted (path, blob) entries.
    pub fn id(&self) -> Id {
        *self.id.get_or_init(|| DerivationRecord::id_of(&self.entries()))
    }

    pub fn record(&self) -> DerivationRecord {
        let origins = self.files.iter().map(|(p, o)| EntryOrigin {
            path: p.clone(),
            kind: o.kind,
            store_path: o.store_path.clone(),
            locator: o.locator,
        });
        DerivationRecord {
            entries: self.entries(),
            origins: origins.collect(),
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
