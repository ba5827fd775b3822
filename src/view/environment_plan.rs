//! Environments: derivations mounted at paths as one tree. The id covers the sorted
//! (mount, derivation id) pairs and the conflict decisions between nested mounts.

use std::collections::BTreeMap;

use super::derivation_plan::{DerivationPlan, Origin};
use super::error::{Error, Result};
use crate::manifest::OverrideDecl;
use crate::model::decision::{Decision, Rule};
use crate::model::{Id, StorePath};
use crate::store::records::EnvironmentRecord;

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

impl EnvironmentPlan {
    pub fn record(&self) -> EnvironmentRecord {
        EnvironmentRecord { decisions: self.decisions.clone(), mounts: self.mounts.clone() }
    }

    pub fn id(&self) -> Id {
        self.record().id()
    }
}

/// Mounts each derivation at its path. Where nested mounts both place a file (or a file and a
/// directory) at one path, the deeper mount wins unless an override names the other.
pub fn plan(mounts: &[(StorePath, &DerivationPlan)], overrides: &[OverrideDecl]) -> Result<EnvironmentPlan> {
    // Mounts that do not nest place disjoint files: there is nothing to decide between them.
    let nested = mounts.iter().any(|(a, _)| mounts.iter().any(|(b, _)| a != b && b.starts_with(a)));
    let (files, mut decisions) = match nested {
        true => contested(mounts, overrides)?,
        false => (disjoint(mounts), Vec::new()),
    };
    check_overrides(&files, overrides)?;
    decisions.sort_by(|a, b| a.path.cmp(&b.path).then(a.loser.cmp(&b.loser)));
    let mounts = mounts.iter().map(|(p, d)| (p.clone(), d.id())).collect();
    Ok(EnvironmentPlan { mounts, decisions, files })
}

/// The files of mounts that do not nest, each at its mount's path.
fn disjoint(mounts: &[(StorePath, &DerivationPlan)]) -> BTreeMap<StorePath, EnvFile> {
    let file = |mount: &StorePath, rel: &StorePath, origin: &Origin| {
        (mount.join_path(rel), EnvFile { blob: origin.blob, mount: mount.clone(), origin: origin.clone() })
    };
    mounts.iter().flat_map(|(mount, drv)| drv.files.iter().map(move |(rel, o)| file(mount, rel, o))).collect()
}

/// The files of nested mounts, with the decisions between them.
fn contested(
    mounts: &[(StorePath, &DerivationPlan)],
    overrides: &[OverrideDecl],
) -> Result<(BTreeMap<StorePath, EnvFile>, Vec<Decision>)> {
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
    Ok((files, decisions))
}

/// Every override names the file that won at its path.
fn check_overrides(files: &BTreeMap<StorePath, EnvFile>, overrides: &[OverrideDecl]) -> Result<()> {
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Kind;
    use crate::store::records::{DerivationEntry, DerivationRecord, EntryOrigin};

    fn derivation(paths: &[&str]) -> DerivationPlan {
        let (entries, origins) = paths
            .iter()
            .map(|p| {
                let path = StorePath::new(p).unwrap();
                let entry = DerivationEntry { path: path.clone(), blob: Id::of_bytes(p.as_bytes()) };
                let store_path = StorePath::new(&format!("lib/{p}")).unwrap();
                (entry, EntryOrigin { path, kind: Kind::Docs, store_path, locator: 0 })
            })
            .unzip();
        DerivationPlan::from_record(DerivationRecord::new(entries, origins, Vec::new(), Vec::new()))
    }

    #[test]
    fn mounts_that_do_not_nest_are_placed_as_the_general_rule_places_them() {
        let (a, ab, c) = (derivation(&["x.md", "y/z.md"]), derivation(&["x.md"]), derivation(&["a/x.md"]));
        let mounts = [
            (StorePath::new("a").unwrap(), &a),
            (StorePath::new("ab").unwrap(), &ab),
            (StorePath::new("c/d").unwrap(), &c),
        ];
        let general = contested(&mounts, &[]).unwrap();
        assert!(general.1.is_empty());
        let placed = plan(&mounts, &[]).unwrap();
        let files = |f: &BTreeMap<StorePath, EnvFile>| {
            f.iter()
                .map(|(p, f)| (p.to_string(), f.mount.to_string(), f.blob, f.origin.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(files(&placed.files), files(&general.0));
        let paths: Vec<String> = placed.files.keys().map(StorePath::to_string).collect();
        assert_eq!(paths, ["a/x.md", "a/y/z.md", "ab/x.md", "c/d/a/x.md"]);
    }
}
