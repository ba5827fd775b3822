//! Verifying the Store: rehash every blob, check every tree, generation and ref, that each
//! `latest/<kind>` matches its ref, and every derivation and environment. Problems are
//! reported, one line each, never repaired. A store filled by substitution is partial: every
//! object present is checked, and so is the closure of every tree, derivation and environment,
//! but a fetched generation need not bring its root tree or parent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::Store;
use super::blob::hash_file;
use super::error::{Error, Result};
use super::generation::Generation;
use super::tree::Tree;
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Kind, StorePath, canonical};
use crate::progress::Progress;

#[derive(Debug, Serialize, PartialEq, Eq, Clone)]
pub struct Problem {
    /// The object or file at fault, e.g. `blob sha256:…` or `latest/rules/a.md`.
    pub object: String,
    pub message: String,
}

#[derive(Debug, Serialize, Default)]
pub struct Checked {
    pub blobs: usize,
    pub trees: usize,
    pub generations: usize,
    pub refs: usize,
    pub latest_files: usize,
    pub derivations: usize,
    pub environments: usize,
    /// Files checked in the project's memory directory (`verify --project`).
    pub memory_files: usize,
}

#[derive(Debug, Serialize)]
pub struct VerifyReport {
    pub ok: bool,
    pub checked: Checked,
    pub problems: Vec<Problem>,
}

struct Verifier<'a> {
    store: &'a Store,
    problems: Vec<Problem>,
    checked: Checked,
    blobs: BTreeSet<Id>,
    trees: HashMap<Id, Tree>,
}

impl Store {
    /// Checks every object and checkout of the store.
    pub fn verify(&self, progress: &dyn Progress) -> Result<VerifyReport> {
        let trees = HashMap::from([(Tree::empty_id(), Tree::default())]);
        let mut v = Verifier {
            store: self,
            problems: Vec::new(),
            checked: Checked::default(),
            blobs: BTreeSet::new(),
            trees,
        };
        v.blobs(progress)?;
        v.trees()?;
        let tips = v.generations()?;
        v.latest(&tips)?;
        let derivations = v.derivations()?;
        v.environments(&derivations)?;
        let mut problems = v.problems;
        problems.sort_by(|a, b| a.object.cmp(&b.object).then(a.message.cmp(&b.message)));
        Ok(VerifyReport { ok: problems.is_empty(), checked: v.checked, problems })
    }
}

/// The files of `dir/<2 hex>/`, each with the id its name claims (`None` for a bad name).
fn fanout_files(dir: &Path, suffix: &str) -> Result<Vec<(PathBuf, Option<Id>)>> {
    let mut out = Vec::new();
    for sub in read_dir_sorted(dir)? {
        let fan = sub.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if !sub.is_dir() {
            out.push((sub, None));
            continue;
        }
        for file in read_dir_sorted(&sub)? {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let id = name.strip_suffix(suffix).and_then(Id::from_hex).filter(|id| id.hex().starts_with(&fan));
            out.push((file, id));
        }
    }
    Ok(out)
}

pub(crate) fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", dir)(e)),
    };
    let mut out = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<Vec<_>>>()
        .map_err(Error::io("read", dir))?;
    out.sort();
    Ok(out)
}

impl Verifier<'_> {
    fn problem(&mut self, object: impl Into<String>, message: impl Into<String>) {
        self.problems.push(Problem { object: object.into(), message: message.into() });
    }

    fn rel(&self, path: &Path) -> String {
        path.strip_prefix(self.store.root()).unwrap_or(path).display().to_string()
    }

    fn blobs(&mut self, progress: &dyn Progress) -> Result<()> {
        let files = fanout_files(&self.store.root().join("blobs"), "")?;
        let bar = progress.start("verifying", files.len() as u64);
        let results: Vec<(PathBuf, Option<Id>, std::result::Result<(), String>)> = files
            .into_par_iter()
            .map(|(path, id)| {
                let r = match id {
                    None => Err("not a blob file name".to_string()),
                    Some(id) => check_blob(&path, &id),
                };
                bar.advance(1);
                (path, id, r)
            })
            .collect();
        drop(bar);
        for (path, id, r) in results {
            self.checked.blobs += 1;
            match (id, r) {
                (Some(id), Ok(())) => {
                    self.blobs.insert(id);
                }
                (Some(id), Err(m)) => self.problem(format!("blob {id}"), m),
                (None, Err(m)) => {
                    let rel = self.rel(&path);
                    self.problem(rel, m)
                }
                (None, Ok(())) => unreachable!("a bad name is always a problem"),
            }
        }
        Ok(())
    }

    fn trees(&mut self) -> Result<()> {
        let files = fanout_files(&self.store.root().join("trees"), ".json")?;
        for (path, id) in files {
            self.checked.trees += 1;
            let Some(id) = id else {
                let rel = self.rel(&path);
                self.problem(rel, "not a tree file name");
                continue;
            };
            match read_plain(&path).and_then(|bytes| {
                if canonical::object_id("tree", &bytes) != id {
                    return Err("content does not match its id".into());
                }
                Tree::decode(&bytes)
            }) {
                Ok(tree) => {
                    self.trees.insert(id, tree);
                }
                Err(m) => self.problem(format!("tree {id}"), m),
            }
        }
        let mut missing = Vec::new();
        for (id, tree) in &self.trees {
            for e in tree.entries() {
                let present = match e.kind {
                    // A purged blob is gone on purpose.
                    EntryKind::Blob => {
                        self.blobs.contains(&e.id)
                            || self.store.has_blob(&e.id)
                            || self.store.purged(&e.id).is_some()
                    }
                    EntryKind::Tree => self.trees.contains_key(&e.id) || self.store.has_tree(&e.id),
                };
                if !present {
                    missing.push((*id, e.kind, e.id, e.name.to_string()));
                }
            }
        }
        for (id, kind, child, name) in missing {
            self.problem(
                format!("tree {id}"),
                format!("entry {name:?} names missing {} {child}", kind.as_str()),
            );
        }
        Ok(())
    }

    /// Checks generations, the seq index and refs; returns each kind's tip root.
    fn generations(&mut self) -> Result<BTreeMap<Kind, (u64, Id)>> {
        let mut tips = BTreeMap::new();
        for kind in Kind::ALL {
            let dir = self.store.generations_dir(kind);
            let mut gens: HashMap<Id, Generation> = HashMap::new();
            for path in read_dir_sorted(&dir)? {
                if path.is_dir() && path.file_name().is_some_and(|n| n == "index") {
                    continue;
                }
                self.checked.generations += 1;
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let Some(id) = name.strip_suffix(".json").and_then(Id::from_hex) else {
                    let rel = self.rel(&path);
                    self.problem(rel, "not a generation file name");
                    continue;
                };
                match read_plain(&path).and_then(|b| Generation::decode(&b, &id)) {
                    Ok(g) if g.kind != kind => self
                        .problem(format!("generation {id}"), format!("kind {} stored under {kind}", g.kind)),
                    Ok(g) => {
                        gens.insert(id, g);
                    }
                    Err(m) => self.problem(format!("generation {id}"), m),
                }
            }
            // This store's own generations (its seq index and ref name them) must be complete;
            // one fetched by substitution may lack its root tree and parent (DESIGN.md §11),
            // and what of it is present is checked all the same.
            let own = self.own_generations(kind)?;
            let mut found = Vec::new();
            for (id, g) in &gens {
                let own = own.contains(id);
                if own && !self.trees.contains_key(&g.root) {
                    found.push((*id, format!("root tree {} is missing or damaged", g.root)));
                }
                match g.parent.as_ref().map(|p| (p, gens.get(p))) {
                    Some((p, None)) if own => {
                        found.push((*id, format!("parent generation {p} is missing or damaged")))
                    }
                    Some((_, Some(parent))) if parent.seq + 1 != g.seq => {
                        found.push((
                            *id,
                            format!("seq {} does not follow its parent's seq {}", g.seq, parent.seq),
                        ));
                    }
                    None if g.seq != 1 => found.push((*id, format!("seq {} has no parent", g.seq))),
                    _ => {}
                }
            }
            for (id, m) in found {
                self.problem(format!("generation {id}"), m);
            }
            for path in read_dir_sorted(&dir.join("index"))? {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
                let object = self.rel(&path);
                let text = super::fsutil::read_text(&path).unwrap_or_default();
                match (name.parse::<u64>(), text.trim_end().parse::<Id>()) {
                    (Ok(seq), Ok(id)) => match gens.get(&id) {
                        Some(g) if g.seq == seq => {}
                        Some(g) => self.problem(object, format!("names {id}, whose seq is {}", g.seq)),
                        None => self.problem(object, format!("names missing generation {id}")),
                    },
                    _ => self.problem(object, "not a seq -> generation index entry"),
                }
            }
            let ref_path = self.store.ref_path(kind);
            match super::fsutil::read_text(&ref_path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => self.problem(self.rel(&ref_path), e.to_string()),
                Ok(text) => {
                    self.checked.refs += 1;
                    let object = self.rel(&ref_path);
                    match text.trim_end().parse::<Id>() {
                        Ok(id) => match gens.get(&id) {
                            Some(g) => {
                                tips.insert(kind, (g.seq, g.root));
                            }
                            None => self.problem(object, format!("names missing generation {id}")),
                        },
                        Err(_) => self.problem(object, format!("{:?} is not an id", text)),
                    }
                }
            }
        }
        Ok(tips)
    }

    /// The generations of `kind` this store's seq index or ref names.
    fn own_generations(&self, kind: Kind) -> Result<BTreeSet<Id>> {
        let mut paths = read_dir_sorted(&self.store.generations_dir(kind).join("index"))?;
        paths.push(self.store.ref_path(kind));
        Ok(paths
            .iter()
            .filter_map(|p| super::fsutil::read_text(p).ok()?.trim_end().parse::<Id>().ok())
            .collect())
    }

    fn latest(&mut self, tips: &BTreeMap<Kind, (u64, Id)>) -> Result<()> {
        for kind in Kind::ALL {
            let dir = self.store.latest_checkout(kind);
            let Some((seq, root)) = tips.get(&kind) else {
                if dir.exists() && fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(false) {
                    self.problem(format!("latest/{kind}"), "has files but the kind has no ref");
                }
                continue;
            };
            let mut expected = BTreeMap::new();
            if !self.expected_files(root, &StorePath::root(), &mut expected) {
                self.problem(
                    format!("latest/{kind}"),
                    format!("cannot be checked: {kind}@g{seq} has damaged trees"),
                );
                continue;
            }
            self.checked.latest_files +=
                self.check_tree(&dir, &format!("latest/{kind}"), &format!("{kind}@g{seq}"), &expected)?;
        }
        Ok(())
    }

    fn expected_files(&self, id: &Id, base: &StorePath, out: &mut BTreeMap<String, Id>) -> bool {
        let Some(tree) = self.trees.get(id) else { return false };
        for e in tree.entries() {
            let path = base.join(&e.name);
            match e.kind {
                EntryKind::Blob => {
                    out.insert(path.to_string(), e.id);
                }
                EntryKind::Tree => {
                    if !self.expected_files(&e.id, &path, out) {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Checks that the files under `dir` are exactly `expected` (relative path -> blob), each a
    /// regular file with the blob's content; `label` names `dir` in problems, `what` the object
    /// it should show. Returns how many files were checked.
    fn check_tree(
        &mut self,
        dir: &Path,
        label: &str,
        what: &str,
        expected: &BTreeMap<String, Id>,
    ) -> Result<usize> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for path in read_dir_sorted(&d)? {
                let rel = path.strip_prefix(dir).expect("below the tree").display().to_string();
                let object = format!("{label}/{rel}");
                let meta = fs::symlink_metadata(&path).map_err(Error::io("stat", &path))?;
                if meta.is_dir() {
                    stack.push(path);
                    continue;
                }
                let Some(id) = expected.get(&rel) else {
                    self.problem(object, format!("is not in {what}"));
                    continue;
                };
                seen.insert(rel);
                if !meta.is_file() {
                    self.problem(object, "is not a regular file");
                    continue;
                }
                let blob = fs::metadata(self.store.blob_path(id)).ok();
                let same_inode = blob.is_some_and(|b| b.ino() == meta.ino() && b.dev() == meta.dev());
                if !same_inode && hash_file(&path).ok().as_ref() != Some(id) {
                    self.problem(object, format!("does not match {what} (expected blob {id})"));
                }
            }
        }
        let gone = |p: &String| seen.contains(p) || self.store.purged(&expected[p]).is_some();
        for path in expected.keys().filter(|p| !gone(p)) {
            self.problem(format!("{label}/{path}"), format!("is missing (it is in {what})"));
        }
        Ok(seen.len())
    }

    /// The object directories of `what` (`derivation`, `environment`) and, of those, the ones
    /// whose record reads back; a bad directory name or a damaged record is a problem.
    #[allow(clippy::type_complexity)]
    fn records<T>(
        &mut self,
        what: &str,
        read: fn(&Store, &Id) -> Result<T>,
    ) -> Result<(usize, Vec<(PathBuf, Id, T)>)> {
        let dirs = object_dirs(&self.store.root().join(format!("{what}s")))?;
        let mut out = Vec::new();
        for (dir, id) in &dirs {
            let Some(id) = id else {
                let rel = self.rel(dir);
                self.problem(rel, format!("not {} {what} directory name", article(what)));
                continue;
            };
            match read(self.store, id) {
                Ok(record) => out.push((dir.clone(), *id, record)),
                Err(e) => self.problem(format!("{what} {id}"), e.to_string()),
            }
        }
        Ok((dirs.len(), out))
    }

    /// Each derivation's record hashes to its id, names only stored blobs, and its `tree/`
    /// holds exactly its entries.
    fn derivations(&mut self) -> Result<BTreeMap<Id, BTreeMap<String, Id>>> {
        let mut found = BTreeMap::new();
        let (seen, records) = self.records("derivation", Store::read_derivation)?;
        self.checked.derivations += seen;
        for (dir, id, record) in records {
            let entries: BTreeMap<String, Id> =
                record.entries.iter().map(|e| (e.path.to_string(), e.blob)).collect();
            for (p, blob) in &entries {
                if !self.blobs.contains(blob) && self.store.purged(blob).is_none() {
                    self.problem(
                        format!("derivation {id}"),
                        format!("entry {p:?} names missing blob {blob}"),
                    );
                }
            }
            let label = format!("derivations/{}/{}/tree", &id.hex()[..2], id.hex());
            self.check_tree(&dir.join("tree"), &label, &format!("derivation {}", id.short()), &entries)?;
            found.insert(id, entries);
        }
        Ok(found)
    }

    /// Each environment's record hashes to its id, mounts stored derivations, and its `tree/`
    /// holds their files (deeper mounts and recorded decisions winning).
    fn environments(&mut self, derivations: &BTreeMap<Id, BTreeMap<String, Id>>) -> Result<()> {
        let (seen, records) = self.records("environment", Store::read_environment)?;
        self.checked.environments += seen;
        for (dir, id, record) in records {
            if let Some((mount, drv)) = record.mounts.iter().find(|(_, d)| !derivations.contains_key(d)) {
                self.problem(
                    format!("environment {id}"),
                    format!("mount {mount:?} names missing derivation {drv}"),
                );
                continue;
            }
            let expected = match self.store.environment_files(&record) {
                Ok(files) => files.into_iter().map(|(p, (_, b))| (p.to_string(), b)).collect(),
                Err(e) => {
                    self.problem(format!("environment {id}"), e.to_string());
                    continue;
                }
            };
            let label = format!("environments/{}/{}/tree", &id.hex()[..2], id.hex());
            self.check_tree(&dir.join("tree"), &label, &format!("environment {}", id.short()), &expected)?;
        }
        Ok(())
    }
}

fn article(what: &str) -> &'static str {
    if what.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

/// `dir/<aa>/<hex>/` object directories, each with the id its name claims.
fn object_dirs(dir: &Path) -> Result<Vec<(PathBuf, Option<Id>)>> {
    fanout_files(dir, "")
}

fn check_blob(path: &Path, id: &Id) -> std::result::Result<(), String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    let actual = hash_file(path).map_err(|e| e.to_string())?;
    if actual != *id {
        return Err(format!("content hashes to {actual}"));
    }
    Ok(())
}

/// Reads a store file, refusing symlinks (a store object is never one).
fn read_plain(path: &Path) -> std::result::Result<Vec<u8>, String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    super::fsutil::read_object(path).map_err(|e| e.to_string())
}
