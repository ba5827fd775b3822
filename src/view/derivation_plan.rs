//! Derivations: the files one mount selects, as (mount-relative path -> blob). The id covers
//! only those entries, so every project selecting the same files shares one derivation.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::conflict::{Candidate, decide};
use super::error::{Error, Result};
use crate::manifest::{MountDecl, OverrideDecl};
use crate::model::decision::Decision;
use crate::model::{EntryKind, Id, Kind, Locator, StorePath};
use crate::store::objects::{TreeSource, diff_trees, lookup, walk_files};
use crate::store::records::{DerivationEntry, DerivationRecord, EntryOrigin, Provenance};

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
    /// Set when the plan was computed from an earlier one ([`replan`]).
    pub delta: Option<Delta>,
    /// Computed once: the entries of a large derivation take a while to encode.
    id: std::cell::OnceCell<Id>,
}

/// What a plan computed by [`replan`] changed: anything derived from the base derivation at
/// the other paths (its `SUMMARY.md` lines) holds for this one too.
#[derive(Clone, Debug)]
pub struct Delta {
    pub base: Id,
    /// Each path claimed again, and whether the base had a file there.
    pub paths: BTreeMap<StorePath, bool>,
}

impl DerivationPlan {
    /// A stored derivation's plan, without walking its locators' trees again (a sticky mount
    /// whose derivation the Store already holds).
    pub fn from_record(record: DerivationRecord) -> DerivationPlan {
        // Checked when the record was read: its id is known.
        let id = std::cell::OnceCell::from(record.id());
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
        DerivationPlan { files, decisions: record.decisions, provenance: record.provenance, delta: None, id }
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
        let record = DerivationRecord::new(
            self.entries(),
            origins.collect(),
            self.provenance.clone(),
            self.decisions.clone(),
        );
        match self.id.get() {
            Some(id) => record.known_as(*id),
            None => record,
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
            EntryKind::Blob => vec![(file_name(sel), sel.id)],
            EntryKind::Tree => walk_files(trees, &sel.id)?,
        };
        for (rel, blob) in files.into_iter().filter(|(rel, _)| mount.keeps(rel.as_str())) {
            claims.entry(rel.clone()).or_default().push((candidate(sel, &rel, blob), i));
        }
    }
    let mut files = BTreeMap::new();
    let mut decisions = Vec::new();
    for (rel, claim) in claims {
        let (origin, mut d) = settle(mount, overrides, &rel, &claim)?;
        decisions.append(&mut d);
        files.insert(rel, origin);
    }
    check_file_dir_clashes(&mount.path, &files)?;
    let provenance = provenance(selected);
    Ok(DerivationPlan { files, decisions, provenance, delta: None, id: std::cell::OnceCell::new() })
}

/// The plan of `selected` computed from `base`, the stored plan of the same mount inputs
/// whose locators resolved to other ids: only the paths where the locators' trees differ
/// (a Merkle diff, skipping equal subtrees) are claimed and decided again, so the cost grows
/// with the change, not the mount. The result equals [`plan`]'s. `None` when `base` was not
/// planned from the same locators.
pub fn replan(
    trees: &dyn TreeSource,
    mount: &MountDecl,
    base: DerivationPlan,
    selected: &[Selected],
    overrides: &[&OverrideDecl],
) -> Result<Option<DerivationPlan>> {
    // The same locator text pins the same generation, so candidates compare as before.
    let same_locators = base.provenance.len() == selected.len()
        && base
            .provenance
            .iter()
            .zip(selected)
            .all(|(p, s)| p.locator == s.locator.to_string() && p.kind == s.kind);
    if !same_locators {
        return Ok(None);
    }
    let mut touched = BTreeSet::new();
    for (p, sel) in base.provenance.iter().zip(selected).filter(|(p, s)| p.id != s.id) {
        match sel.kind {
            EntryKind::Blob => touched.extend([file_name(sel)]),
            EntryKind::Tree => {
                let changes = diff_trees(trees, Some(&p.id), Some(&sel.id), &StorePath::root())?;
                touched.extend(changes.into_iter().map(|c| c.path));
            }
        }
    }
    let base_id = base.id();
    let mut files = base.files;
    let mut paths = BTreeMap::new();
    let mut decided = Vec::new();
    for rel in touched.into_iter().filter(|rel| mount.keeps(rel.as_str())) {
        let mut claim = Vec::new();
        for (i, sel) in selected.iter().enumerate() {
            if let Some(blob) = blob_at(trees, sel, &rel)? {
                claim.push((candidate(sel, &rel, blob), i));
            }
        }
        paths.insert(rel.clone(), files.remove(&rel).is_some());
        if !claim.is_empty() {
            let (origin, mut d) = settle(mount, overrides, &rel, &claim)?;
            decided.append(&mut d);
            files.insert(rel, origin);
        }
    }
    check_file_dir_clashes(&mount.path, &files)?;
    // Decisions stay in path order, as `plan` makes them.
    let again: HashSet<String> = paths.keys().map(|rel| mount.path.join_path(rel).to_string()).collect();
    let mut decisions: Vec<Decision> =
        base.decisions.into_iter().filter(|d| !again.contains(&d.path)).collect();
    decisions.append(&mut decided);
    decisions.sort_by(|a, b| a.path.cmp(&b.path));
    let delta = Some(Delta { base: base_id, paths });
    let provenance = provenance(selected);
    Ok(Some(DerivationPlan { files, decisions, provenance, delta, id: std::cell::OnceCell::new() }))
}

/// The file a file locator places: its name, at the mount's root.
fn file_name(sel: &Selected) -> StorePath {
    let name = sel.locator.path.file_name().expect("a file locator names a file");
    StorePath::new(name).expect("a component is a path")
}

/// The blob `sel` places at `rel`, if any.
fn blob_at(trees: &dyn TreeSource, sel: &Selected, rel: &StorePath) -> Result<Option<Id>> {
    Ok(match sel.kind {
        EntryKind::Blob => (file_name(sel) == *rel).then_some(sel.id),
        EntryKind::Tree => match lookup(trees, &sel.id, rel)? {
            Some((EntryKind::Blob, id)) => Some(id),
            _ => None,
        },
    })
}

fn candidate(sel: &Selected, rel: &StorePath, blob: Id) -> Candidate {
    let store_path = match sel.kind {
        EntryKind::Blob => sel.locator.path.clone(),
        EntryKind::Tree => sel.locator.path.join_path(rel),
    };
    Candidate { kind: sel.locator.kind, store_path, blob, pinned_seq: sel.pinned_seq }
}

/// The winner among the locators claiming `rel`, with the decisions that chose it.
fn settle(
    mount: &MountDecl,
    overrides: &[&OverrideDecl],
    rel: &StorePath,
    claim: &[(Candidate, usize)],
) -> Result<(Origin, Vec<Decision>)> {
    let env_path = mount.path.join_path(rel);
    let forced = overrides.iter().find(|o| o.path == env_path).map(|o| o.winner.place());
    let candidates: Vec<Candidate> = claim.iter().map(|(c, _)| c.clone()).collect();
    // A lone candidate needs no decision; the environment checks that any override on its
    // path names it.
    let (w, d) = match candidates.len() {
        1 => (0, Vec::new()),
        _ => decide(env_path.as_str(), &candidates, forced.as_deref())?,
    };
    let (c, locator) = &claim[w];
    let origin = Origin { blob: c.blob, kind: c.kind, store_path: c.store_path.clone(), locator: *locator };
    Ok((origin, d))
}

fn provenance(selected: &[Selected]) -> Vec<Provenance> {
    selected
        .iter()
        .map(|s| Provenance {
            locator: s.locator.to_string(),
            kind: s.kind,
            id: s.id,
            generation: s.generation,
            version: s.version.clone(),
        })
        .collect()
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

/// `httpx 0.23.3` for each locator that resolved to a library version.
pub fn library_versions(provenance: &[Provenance]) -> Vec<String> {
    let mut out: Vec<String> = provenance
        .iter()
        .filter_map(|p| {
            let v = p.version.as_ref()?;
            let loc = crate::model::Locator::parse(&p.locator).ok()?;
            Some(format!("{} {v}", loc.path.file_name().unwrap_or(loc.kind.as_str())))
        })
        .collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::objects::{Overlay, Tree};
    use std::collections::HashMap;

    /// Kind trees in memory: each kind's files as path -> text.
    type State = BTreeMap<Kind, BTreeMap<String, String>>;

    fn blob(text: &str) -> Id {
        use sha2::{Digest, Sha256};
        Id::from_bytes(Sha256::digest(text.as_bytes()).into())
    }

    /// Stores the tree of `files` (paths relative to it) in `trees`; returns its id.
    fn put(files: &BTreeMap<String, String>, trees: &mut HashMap<Id, Tree>) -> Id {
        let mut entries = BTreeMap::new();
        let mut dirs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (path, text) in files {
            if let Some((dir, rest)) = path.split_once('/') {
                dirs.entry(dir.to_string()).or_default().insert(rest.into(), text.clone());
            } else {
                entries.insert(Name::new(path).unwrap(), (EntryKind::Blob, blob(text)));
            }
        }
        for (dir, files) in dirs {
            entries.insert(Name::new(&dir).unwrap(), (EntryKind::Tree, put(&files, trees)));
        }
        let tree = Tree::from_names(entries);
        let id = tree.id();
        trees.insert(id, tree);
        id
    }

    fn selected(state: &State, select: &[&str], trees: &mut HashMap<Id, Tree>) -> Vec<Selected> {
        let roots: BTreeMap<Kind, Id> = state.iter().map(|(k, files)| (*k, put(files, trees))).collect();
        let overlay = Overlay { store: None, trees: trees.clone() };
        select
            .iter()
            .map(|text| {
                let locator = Locator::parse(text).unwrap();
                let (kind, id) = lookup(&overlay, &roots[&locator.kind], &locator.path).unwrap().unwrap();
                Selected { locator, kind, id, generation: None, pinned_seq: None, version: None }
            })
            .collect()
    }

    use crate::model::Name;

    fn split(place: &str) -> (Kind, String) {
        let (kind, path) = place.split_once('/').unwrap();
        (if kind == "rules" { Kind::Rules } else { Kind::Docs }, path.to_string())
    }

    fn set(s: &mut State, place: &str, text: &str) {
        let (kind, path) = split(place);
        s.entry(kind).or_default().insert(path, text.to_string());
    }

    fn del(s: &mut State, place: &str) {
        let (kind, path) = split(place);
        s.entry(kind).or_default().remove(&path);
    }

    #[test]
    fn a_plan_computed_from_the_last_one_equals_one_planned_from_scratch() {
        let text = r#"
[mounts.m]
select = ["rules/a/", "docs/a/", "rules/a/deep/", "rules/one.md"]
exclude = ["**/*.tmp"]

[overrides]
"m/both.md" = "docs/a/both.md"
"#;
        let m = crate::manifest::parse(text, "memorix.toml", std::path::Path::new("/p")).unwrap();
        let mount = &m.mounts[0];
        let overrides: Vec<_> = m.overrides_under(&mount.path).collect();
        let mut state: State = BTreeMap::new();
        set(&mut state, "rules/a/x.md", "x");
        set(&mut state, "rules/a/sub/y.md", "y");
        set(&mut state, "rules/one.md", "one");
        set(&mut state, "docs/a/z.md", "z");
        set(&mut state, "rules/a/deep/keep.md", "keep");
        // Each step changes the kinds' trees; the replan from the previous plan must match.
        // (place, new text), or removed.
        let steps = [
            ("rules/a/x.md", Some("x2")),
            ("docs/a/x.md", Some("docs x")),
            ("rules/a/deep/x.md", Some("deeper x")),
            ("rules/a/both.md", Some("rules both")),
            ("docs/a/both.md", Some("docs both")),
            ("rules/a/sub/new/deeper/w.md", Some("w")),
            ("rules/a/skip.tmp", Some("excluded")),
            ("rules/a/sub/y.md", None),
            ("docs/a/x.md", None),
            ("rules/a/deep/x.md", None),
            ("rules/one.md", Some("one, edited")),
            ("rules/a/sub/new/deeper/w.md", None),
        ];
        let mut trees = HashMap::new();
        let sel = selected(&state, &["rules/a/", "docs/a/", "rules/a/deep/", "rules/one.md"], &mut trees);
        let mut last = plan(&Overlay { store: None, trees: trees.clone() }, mount, &sel, &overrides).unwrap();
        for (i, (place, text)) in steps.into_iter().enumerate() {
            match text {
                Some(text) => set(&mut state, place, text),
                None => del(&mut state, place),
            }
            let sel = selected(&state, &["rules/a/", "docs/a/", "rules/a/deep/", "rules/one.md"], &mut trees);
            let overlay = Overlay { store: None, trees: trees.clone() };
            let scratch = plan(&overlay, mount, &sel, &overrides).unwrap();
            let base = DerivationPlan::from_record(last.record());
            let again = replan(&overlay, mount, base, &sel, &overrides).unwrap().expect("same locators");
            let encode = |p: &DerivationPlan| crate::model::canonical::encode(&p.record());
            assert_eq!(encode(&again), encode(&scratch), "step {i}");
            assert_eq!(again.id(), scratch.id(), "step {i}");
            let delta = again.delta.as_ref().unwrap();
            assert_eq!(delta.base, last.id(), "step {i}");
            assert!(delta.paths.len() <= 2, "step {i}: only the changed paths are claimed again: {delta:?}");
            last = again;
        }
        assert!(!last.decisions.is_empty(), "the steps made conflicts to decide");

        // Other locators than the base's: no replan.
        let sel = selected(&state, &["rules/a/", "docs/a/", "rules/a/deep/", "rules/one.md"], &mut trees);
        let overlay = Overlay { store: None, trees: trees.clone() };
        let fewer = &sel[..3];
        assert!(
            replan(&overlay, mount, DerivationPlan::from_record(last.record()), fewer, &overrides)
                .unwrap()
                .is_none()
        );
    }
}
