//! Verifying the Store, as `git fsck` tells broken from dangling: every object is rehashed or
//! decoded, and everything reachable (each ref's chain, its trees, every derivation and
//! environment, what recorded projects' locks need) is checked strictly; a problem there is
//! damage (exit 1). What an interrupted write leaves (objects nothing reaches, an index entry
//! for a generation no ref reached, a checkout one generation behind its ref) is garbage:
//! counted and reported, with `memorix gc` or the next write to clear it, not damage. Nothing
//! is repaired. A store filled by substitution is partial: a fetched generation need not bring
//! its root tree or parent.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Kind, StorePath, canonical};
use crate::progress::Progress;
use crate::store::error::{Error, Result};
use crate::store::objects::blob::hash_file;
use crate::store::objects::tree::Tree;
use crate::store::records::generation::Generation;
use crate::store::{Store, fsutil};

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
    /// Damage: exit 1.
    pub problems: Vec<Problem>,
    /// Leftovers of interrupted writes, which `memorix gc` (or the next write) removes.
    pub garbage: Vec<Problem>,
}

struct Verifier<'a> {
    store: &'a Store,
    problems: Vec<Problem>,
    garbage: Vec<Problem>,
    checked: Checked,
    blobs: BTreeSet<Id>,
    trees: HashMap<Id, Tree>,
    /// Per tree, the entries that name missing objects (damage only if the tree is reachable).
    missing_children: BTreeMap<Id, Vec<String>>,
    /// Each kind's chain, tip first.
    chains: BTreeMap<Kind, Vec<(Id, Generation)>>,
}

impl Store {
    /// Checks every object and checkout of the store.
    pub(super) fn verify(&self, progress: &dyn Progress) -> Result<VerifyReport> {
        let trees = HashMap::from([(Tree::empty_id(), Tree::default())]);
        let mut v = Verifier {
            store: self,
            problems: Vec::new(),
            garbage: Vec::new(),
            checked: Checked::default(),
            blobs: BTreeSet::new(),
            trees,
            missing_children: BTreeMap::new(),
            chains: BTreeMap::new(),
        };
        v.blobs(progress)?;
        v.trees()?;
        v.generations()?;
        v.latest()?;
        let derivations = v.derivations()?;
        v.environments(&derivations)?;
        v.reachability(&derivations)?;
        let sort = |list: &mut Vec<Problem>| {
            list.sort_by(|a, b| a.object.cmp(&b.object).then(a.message.cmp(&b.message)))
        };
        let (mut problems, mut garbage) = (v.problems, v.garbage);
        sort(&mut problems);
        sort(&mut garbage);
        Ok(VerifyReport { ok: problems.is_empty(), checked: v.checked, problems, garbage })
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
        self.incoming()
    }

    /// Every incoming pack of blobs: its frame, its name (the hash of its index) and each blob
    /// in it, rehashed.
    fn incoming(&mut self) -> Result<()> {
        for path in self.store.incoming_files()? {
            let rel = self.rel(&path);
            let pack = match crate::store::objects::pack::Pack::open(&path) {
                Ok(pack) => pack,
                // Unpacked by the fill since it was listed: its blobs are loose now.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    self.problem(rel, e.to_string());
                    continue;
                }
            };
            let named = path.file_stem().and_then(|s| s.to_str()).and_then(Id::from_hex);
            match pack.index_hash() {
                Ok(hash) if Some(hash) == named => {}
                Ok(_) => self.problem(rel.clone(), "its index does not match its name"),
                Err(e) => self.problem(rel.clone(), e.to_string()),
            }
            let entries = match pack.entries() {
                Ok(entries) => entries,
                Err(e) => {
                    self.problem(rel, e.to_string());
                    continue;
                }
            };
            let checked: Vec<(Id, std::result::Result<(), String>)> = entries
                .into_par_iter()
                .map(|(id, offset, len)| {
                    let r = match pack.read(offset, len) {
                        Ok(bytes) => match Id::of_bytes(&bytes) {
                            actual if actual == id => Ok(()),
                            actual => Err(format!("content hashes to {actual} (in {rel})")),
                        },
                        Err(e) => Err(format!("{e} (in {rel})")),
                    };
                    (id, r)
                })
                .collect();
            for (id, r) in checked {
                self.checked.blobs += 1;
                match r {
                    Ok(()) => {
                        self.blobs.insert(id);
                    }
                    Err(m) => self.problem(format!("blob {id}"), m),
                }
            }
        }
        Ok(())
    }

    /// A tree's bytes hash to its id and decode.
    fn check_tree(&mut self, id: Id, bytes: std::result::Result<Vec<u8>, String>) {
        match bytes.and_then(|bytes| {
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

    /// Every pack: its frame, its name (the hash of its bytes) and each tree in it.
    fn packs(&mut self) -> Result<()> {
        for path in self.store.pack_files()? {
            let rel = self.rel(&path);
            let pack = match crate::store::objects::pack::Pack::open(&path) {
                Ok(pack) => pack,
                Err(e) => {
                    self.problem(rel, e.to_string());
                    continue;
                }
            };
            let named = path.file_stem().and_then(|s| s.to_str()).and_then(Id::from_hex);
            match pack.hash() {
                Ok(hash) if Some(hash) == named => {}
                Ok(_) => self.problem(rel.clone(), "content does not match its name"),
                Err(e) => self.problem(rel.clone(), e.to_string()),
            }
            match pack.objects() {
                Ok(objects) => {
                    for (id, bytes) in objects {
                        self.checked.trees += 1;
                        self.check_tree(id, Ok(bytes));
                    }
                }
                Err(e) => self.problem(rel, e.to_string()),
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
            self.check_tree(id, read_plain(&path));
        }
        self.packs()?;
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
            let message = format!("entry {name:?} names missing {} {child}", kind.as_str());
            self.missing_children.entry(id).or_default().push(message);
        }
        Ok(())
    }

    /// Checks generations, refs and the seq index. The chain a ref reaches must be whole;
    /// generations off it and index entries past its tip are what an interrupted commit left.
    fn generations(&mut self) -> Result<()> {
        let needed: BTreeSet<(Kind, Id)> =
            self.store.project_roots()?.iter().flat_map(|p| p.generations.iter().copied()).collect();
        for kind in Kind::ALL {
            let gens = self.generation_files(kind)?;
            let chain = self.chain(kind, &gens);
            let on_chain: BTreeSet<Id> = chain.iter().map(|(id, _)| *id).collect();
            let indexed = self.indexed(kind);
            for (id, g) in &gens {
                let object = format!("generation {id}");
                match g.parent.as_ref().map(|p| gens.get(p)) {
                    Some(Some(parent)) if parent.seq + 1 != g.seq => self.problem(
                        object.clone(),
                        format!("seq {} does not follow its parent's seq {}", g.seq, parent.seq),
                    ),
                    None if g.seq != 1 => {
                        self.problem(object.clone(), format!("seq {} has no parent", g.seq))
                    }
                    _ => {}
                }
                // A generation fetched by substitution is off the chain by nature (no index
                // entry names it); one of this store's own off the chain was never committed.
                let own = indexed.contains(id) || chain.is_empty() || g.seq > chain[0].1.seq;
                if !on_chain.contains(id) && !needed.contains(&(kind, *id)) && own {
                    self.garbage.push(Problem { object, message: "no ref reaches it".into() });
                }
            }
            self.check_index(kind, &chain)?;
            self.chains.insert(kind, chain);
        }
        Ok(())
    }

    /// The generations this store's seq index names.
    fn indexed(&self, kind: Kind) -> BTreeSet<Id> {
        read_dir_sorted(&self.store.generations_dir(kind).join("index"))
            .unwrap_or_default()
            .iter()
            .filter_map(|p| fsutil::read_text(p).ok()?.trim_end().parse::<Id>().ok())
            .collect()
    }

    /// Every generation file of `kind` that decodes, by id.
    fn generation_files(&mut self, kind: Kind) -> Result<HashMap<Id, Generation>> {
        let mut gens = HashMap::new();
        for path in read_dir_sorted(&self.store.generations_dir(kind))? {
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
                Ok(g) if g.kind != kind => {
                    self.problem(format!("generation {id}"), format!("kind {} stored under {kind}", g.kind))
                }
                Ok(g) => {
                    gens.insert(id, g);
                }
                Err(m) => self.problem(format!("generation {id}"), m),
            }
        }
        Ok(gens)
    }

    /// The chain `refs/<kind>/latest` reaches, tip first; each link must be whole (its root tree
    /// present, its parent present).
    fn chain(&mut self, kind: Kind, gens: &HashMap<Id, Generation>) -> Vec<(Id, Generation)> {
        let ref_path = self.store.ref_path(kind);
        let tip = match fsutil::read_text(&ref_path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.problem(self.rel(&ref_path), e.to_string());
                return Vec::new();
            }
            Ok(text) => {
                self.checked.refs += 1;
                match text.trim_end().parse::<Id>() {
                    Ok(id) => id,
                    Err(_) => {
                        self.problem(self.rel(&ref_path), format!("{text:?} is not an id"));
                        return Vec::new();
                    }
                }
            }
        };
        let mut chain = Vec::new();
        let mut next = Some((tip, self.rel(&ref_path)));
        while let Some((id, named_by)) = next.take() {
            let Some(g) = gens.get(&id) else {
                self.problem(named_by, format!("names missing generation {id}"));
                break;
            };
            if !self.trees.contains_key(&g.root) {
                self.problem(
                    format!("generation {id}"),
                    format!("root tree {} is missing or damaged", g.root),
                );
            }
            next = g.parent.map(|p| (p, format!("generation {id}")));
            chain.push((id, g.clone()));
        }
        chain
    }

    /// Index entries up to the tip must name the chain's generation of that seq; one past the
    /// tip is what a command that failed or was killed before its ref moved left.
    fn check_index(&mut self, kind: Kind, chain: &[(Id, Generation)]) -> Result<()> {
        let tip = chain.first().map_or(0, |(_, g)| g.seq);
        let by_seq: BTreeMap<u64, Id> = chain.iter().map(|(id, g)| (g.seq, *id)).collect();
        for path in read_dir_sorted(&self.store.generations_dir(kind).join("index"))? {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
            let object = self.rel(&path);
            let text = fsutil::read_text(&path).unwrap_or_default();
            match (name.parse::<u64>(), text.trim_end().parse::<Id>()) {
                (Ok(seq), Ok(_)) if seq > tip => {
                    let message = format!("names a generation past the tip ({kind}@g{tip})");
                    self.garbage.push(Problem { object, message })
                }
                (Ok(seq), Ok(id)) if by_seq.get(&seq) == Some(&id) => {}
                (Ok(seq), Ok(id)) => {
                    self.problem(object, format!("names {id}, not the chain's {kind}@g{seq}"))
                }
                _ => self.problem(object, "not a seq -> generation index entry"),
            }
        }
        Ok(())
    }

    /// Each `latest/<kind>` shows its ref's tree. One that shows the tree of the generation
    /// before (a write interrupted between the ref's move and the checkout's swap) is garbage
    /// the next write refreshes, not damage.
    fn latest(&mut self) -> Result<()> {
        for kind in Kind::ALL {
            let dir = self.store.latest_checkout(kind);
            let label = format!("latest/{kind}");
            let chain = self.chains.get(&kind).cloned().unwrap_or_default();
            let Some((_, tip)) = chain.first() else {
                if dir.exists() && fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(false) {
                    self.problem(label, "has files but the kind has no ref");
                }
                continue;
            };
            let what = format!("{kind}@g{}", tip.seq);
            let Some(expected) = self.expected(&tip.root) else {
                self.problem(label, format!("cannot be checked: {what} has damaged trees"));
                continue;
            };
            let (count, found) = self.compare_tree(&dir, &label, &what, &expected)?;
            self.checked.latest_files += count;
            if found.is_empty() {
                continue;
            }
            // Before a kind's first generation, its checkout was empty.
            let parent = match chain.get(1) {
                Some((_, g)) => self.expected(&g.root),
                None => Some(BTreeMap::new()),
            };
            let behind = match parent {
                Some(p) => self.compare_tree(&dir, &label, &what, &p)?.1.is_empty(),
                None => false,
            };
            if behind {
                let message = format!("shows the generation before {what}; the next write refreshes it");
                self.garbage.push(Problem { object: label, message });
            } else {
                self.problems.extend(found);
            }
        }
        Ok(())
    }

    /// Every file under tree `id` (path -> blob), when all its trees are present.
    fn expected(&self, id: &Id) -> Option<BTreeMap<String, Id>> {
        let mut out = BTreeMap::new();
        self.expected_files(id, &StorePath::root(), &mut out).then_some(out)
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

    /// Compares the files under `dir` with `expected` (relative path -> blob): each must be a
    /// regular file with the blob's content; `label` names `dir` in problems, `what` the object
    /// it should show. Returns how many files were checked and the differences.
    fn compare_tree(
        &self,
        dir: &Path,
        label: &str,
        what: &str,
        expected: &BTreeMap<String, Id>,
    ) -> Result<(usize, Vec<Problem>)> {
        let mut found = Vec::new();
        let mut problem = |object: String, message: String| found.push(Problem { object, message });
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
                    problem(object, format!("is not in {what}"));
                    continue;
                };
                seen.insert(rel);
                if !meta.is_file() {
                    problem(object, "is not a regular file".into());
                    continue;
                }
                let blob = fs::metadata(self.store.blob_path(id)).ok();
                let same_inode = blob.is_some_and(|b| b.ino() == meta.ino() && b.dev() == meta.dev());
                if !same_inode && hash_file(&path).ok().as_ref() != Some(id) {
                    problem(object, format!("does not match {what} (expected blob {id})"));
                }
            }
        }
        let gone = |p: &String| seen.contains(p) || self.store.purged(&expected[p]).is_some();
        for path in expected.keys().filter(|p| !gone(p)) {
            problem(format!("{label}/{path}"), format!("is missing (it is in {what})"));
        }
        Ok((seen.len(), found))
    }

    /// What the history, the derivations and the live projects reach. A reachable tree naming
    /// a missing object is damage; anything unreachable (objects an interrupted write left) is
    /// garbage `memorix gc` removes.
    fn reachability(&mut self, derivations: &BTreeMap<Id, BTreeMap<StorePath, Id>>) -> Result<()> {
        let projects: Vec<_> = self.store.project_roots()?.into_iter().filter(|p| p.is_live()).collect();
        let mut pending: Vec<Id> = Vec::new();
        for (_, g) in self.chains.values().flatten() {
            pending.push(g.root);
            pending.extend(g.tags.iter().map(|t| t.tree));
        }
        let mut blobs: BTreeSet<Id> = derivations.values().flat_map(|e| e.values().copied()).collect();
        for p in &projects {
            blobs.extend(p.blobs.iter().copied());
            let absent: Vec<Id> = p.trees.iter().filter(|t| !self.trees.contains_key(t)).copied().collect();
            for tree in absent {
                self.problem(format!("tree {tree}"), format!("is missing, and {} needs it", p.project));
            }
            pending.extend(p.trees.iter().copied());
        }
        let mut trees = BTreeSet::new();
        while let Some(id) = pending.pop() {
            let Some(tree) = self.trees.get(&id) else { continue };
            if !trees.insert(id) {
                continue;
            }
            for e in tree.entries() {
                match e.kind {
                    EntryKind::Tree => pending.push(e.id),
                    EntryKind::Blob => {
                        blobs.insert(e.id);
                    }
                }
            }
        }
        for (id, messages) in std::mem::take(&mut self.missing_children) {
            let list = if trees.contains(&id) { &mut self.problems } else { &mut self.garbage };
            list.extend(
                messages.into_iter().map(|message| Problem { object: format!("tree {id}"), message }),
            );
        }
        let unreached = "nothing reaches it; `memorix gc` removes it";
        for id in self.trees.keys().filter(|t| !trees.contains(t) && **t != Tree::empty_id()) {
            self.garbage.push(Problem { object: format!("tree {id}"), message: unreached.into() });
        }
        for id in self.blobs.iter().filter(|b| !blobs.contains(b)) {
            self.garbage.push(Problem { object: format!("blob {id}"), message: unreached.into() });
        }
        Ok(())
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

    /// Each derivation's record hashes to its id and names only stored blobs, and its `tree/`,
    /// where one was made, holds exactly its entries.
    fn derivations(&mut self) -> Result<BTreeMap<Id, BTreeMap<StorePath, Id>>> {
        let mut found = BTreeMap::new();
        let (seen, records) = self.records("derivation", Store::read_derivation)?;
        self.checked.derivations += seen;
        for (dir, id, record) in records {
            let entries: BTreeMap<StorePath, Id> =
                record.entries.into_iter().map(|e| (e.path, e.blob)).collect();
            for (p, blob) in &entries {
                if !self.blobs.contains(blob) && self.store.purged(blob).is_none() {
                    self.problem(
                        format!("derivation {id}"),
                        format!("entry {:?} names missing blob {blob}", p.as_str()),
                    );
                }
            }
            // `tree/` is made on demand (for `[artifacts]` hooks); where it exists it must hold
            // exactly the entries.
            if dir.join("tree").is_dir() {
                let label = format!("derivations/{}/{}/tree", &id.hex()[..2], id.hex());
                let what = format!("derivation {}", id.short());
                let expected = entries.iter().map(|(p, b)| (p.to_string(), *b)).collect();
                let (_, differences) = self.compare_tree(&dir.join("tree"), &label, &what, &expected)?;
                self.problems.extend(differences);
            }
            found.insert(id, entries);
        }
        Ok(found)
    }

    /// Each environment's record hashes to its id and mounts stored derivations, and a `tree/`
    /// (from older stores) holds their files (deeper mounts and recorded decisions winning).
    fn environments(&mut self, derivations: &BTreeMap<Id, BTreeMap<StorePath, Id>>) -> Result<()> {
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
            let files = Store::environment_files_from(&record, |drv| {
                Ok(std::borrow::Cow::Borrowed(&derivations[drv]))
            });
            let expected = match files {
                Ok(files) => files.into_iter().map(|(p, (_, b))| (p.to_string(), b)).collect(),
                Err(e) => {
                    self.problem(format!("environment {id}"), e.to_string());
                    continue;
                }
            };
            // Stores written before trees were made on demand hold a `tree/` per environment.
            if dir.join("tree").is_dir() {
                let label = format!("environments/{}/{}/tree", &id.hex()[..2], id.hex());
                let what = format!("environment {}", id.short());
                let (_, found) = self.compare_tree(&dir.join("tree"), &label, &what, &expected)?;
                self.problems.extend(found);
            }
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
    fsutil::read_object(path).map_err(|e| e.to_string())
}
