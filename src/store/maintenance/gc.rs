//! Garbage: temp files and objects nothing reaches. Reachability starts at every generation on
//! a ref's chain (their trees and tagged trees), every derivation and environment with the
//! blobs they name, and what each recorded project's lock and profile need.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Kind};
use crate::store::error::{Error, Result};
use crate::store::objects::tree::Tree;
use crate::store::records::roots::ProjectRoots;
use crate::store::{Store, Writer, fsutil};

#[derive(Debug, Serialize, Default)]
pub struct GcOutcome {
    pub dry_run: bool,
    /// Projects whose locks and profiles were kept whole.
    pub roots: Vec<String>,
    /// Recorded projects that are gone (forgotten unless dry-run).
    pub gone: Vec<String>,
    pub temp_files: usize,
    /// Store paths of the unreachable objects (removed unless dry-run).
    pub unreachable: Vec<String>,
    pub bytes: u64,
}

/// What the Store must keep.
pub(super) struct Reachable {
    pub(super) trees: HashSet<Id>,
    pub(super) blobs: HashSet<Id>,
    pub(super) gens: BTreeSet<(Kind, Id)>,
}

impl Store {
    /// What gc keeps: the history's closure, every derivation's blobs, and the closure of what
    /// the live projects need (a tree of theirs that is missing is `verify`'s to report).
    pub(super) fn reachable(&self, projects: &[ProjectRoots]) -> Result<Reachable> {
        let (mut trees, mut blobs, mut gens) = (HashSet::new(), HashSet::new(), BTreeSet::new());
        let mut pending = Vec::new();
        for kind in Kind::ALL {
            for g in self.history(kind)? {
                gens.insert((kind, g.id));
                pending.push(g.generation.root);
                pending.extend(g.generation.tags.iter().map(|t| t.tree));
            }
        }
        self.walk_trees(pending, true, &mut trees, &mut blobs)?;
        let mut needed = Vec::new();
        for p in projects {
            needed.extend(p.trees.iter().copied());
            blobs.extend(p.blobs.iter().copied());
            gens.extend(p.generations.iter().copied());
        }
        self.walk_trees(needed, false, &mut trees, &mut blobs)?;
        for dir in object_dirs(&self.root().join("derivations")) {
            let Some(id) = dir.file_name().and_then(|n| n.to_str()).and_then(Id::from_hex) else { continue };
            blobs.extend(self.read_derivation(&id)?.entries.iter().map(|e| e.blob));
        }
        Ok(Reachable { trees, blobs, gens })
    }

    /// The files of objects nothing reaches (blobs, trees, packs, generations off every chain
    /// and their index entries), and the packs that hold some trees nothing reaches. A blob
    /// nothing reaches that is still in an incoming pack is listed by its loose path: gc's
    /// writer unpacks `incoming/` first (so only a dry run finds any), then removes it.
    fn unreachable(&self, projects: &[ProjectRoots]) -> Result<Garbage> {
        let Reachable { trees, blobs, gens } = self.reachable(projects)?;
        let mut packed = HashMap::new();
        for (id, len) in self.incoming_entries()? {
            if !blobs.contains(&id) {
                packed.insert(self.blob_path(&id), u64::from(len));
            }
        }
        let mut doomed = Vec::new();
        let mut repack = Vec::new();
        for pack in self.packs()?.iter() {
            let objects = pack.objects().map_err(Error::io("read", pack.path()))?;
            let (keep, dead): (Vec<_>, Vec<_>) = objects.into_iter().partition(|(id, _)| trees.contains(id));
            match (keep.is_empty(), dead.is_empty()) {
                (_, true) => {}
                (true, false) => doomed.push(pack.path().to_path_buf()),
                (false, false) => repack.push(PackGarbage { path: pack.path().to_path_buf(), keep, dead }),
            }
        }
        for (dir, suffix, keep) in [("blobs", "", &blobs), ("trees", ".json", &trees)] {
            let mut paths = object_dirs(&self.root().join(dir));
            if dir == "blobs" {
                // Listed where gc, having unpacked them, finds them (once if also loose).
                paths.extend(packed.keys().cloned());
                paths.sort();
                paths.dedup();
            }
            for path in paths {
                let id = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(suffix))
                    .and_then(Id::from_hex);
                if id.is_some_and(|id| !keep.contains(&id) && id != Tree::empty_id()) {
                    doomed.push(path);
                }
            }
        }
        for kind in Kind::ALL {
            for e in fs::read_dir(self.generations_dir(kind)).into_iter().flatten().flatten() {
                let name = e.file_name();
                let id = name.to_str().and_then(|n| n.strip_suffix(".json")).and_then(Id::from_hex);
                if id.is_some_and(|id| !gens.contains(&(kind, id))) {
                    doomed.push(e.path());
                }
            }
            // Index entries naming a generation off the chain go with it.
            for e in fs::read_dir(self.generations_dir(kind).join("index")).into_iter().flatten().flatten() {
                let text = fsutil::read_text(&e.path()).unwrap_or_default();
                if text.trim().parse::<Id>().is_ok_and(|id| !gens.contains(&(kind, id))) {
                    doomed.push(e.path());
                }
            }
        }
        Ok(Garbage { doomed, repack, packed })
    }

    /// Adds every tree and blob below `start`; a missing tree is an error when `strict`, else
    /// skipped.
    fn walk_trees(
        &self,
        mut pending: Vec<Id>,
        strict: bool,
        trees: &mut HashSet<Id>,
        blobs: &mut HashSet<Id>,
    ) -> Result<()> {
        while let Some(id) = pending.pop() {
            if !trees.insert(id) {
                continue;
            }
            let tree = match self.read_tree(&id) {
                Ok(t) => t,
                Err(e) if !strict && e.missing_object().is_some() => continue,
                Err(e) => return Err(e),
            };
            for e in tree.entries() {
                match e.kind {
                    EntryKind::Tree => pending.push(e.id),
                    EntryKind::Blob => {
                        blobs.insert(e.id);
                    }
                }
            }
        }
        Ok(())
    }

    /// What `gc` would remove, removing nothing.
    pub(super) fn garbage(&self) -> Result<GcOutcome> {
        // While a writer is at work (a detached fill, say) what is in tmp/ is its own, not left over.
        let temp_files = if self.writer_at_work() {
            0
        } else {
            fs::read_dir(self.tmp_dir()).map(|d| d.count()).unwrap_or(0)
        };
        let mut out = GcOutcome { dry_run: true, temp_files, ..GcOutcome::default() };
        let live = self.live_projects(&mut out)?;
        let Garbage { doomed, repack, packed } = self.unreachable(&live)?;
        for path in doomed {
            let len = fs::symlink_metadata(&path).map(|m| m.len());
            out.bytes += len.unwrap_or_else(|_| packed.get(&path).copied().unwrap_or(0));
            out.unreachable.push(self.relative(&path));
        }
        for pack in &repack {
            pack.report(self, &mut out);
        }
        Ok(out)
    }

    /// The recorded projects still in place (listed in `out.roots`); the others go to
    /// `out.gone`.
    fn live_projects(&self, out: &mut GcOutcome) -> Result<Vec<ProjectRoots>> {
        let (live, gone): (Vec<_>, Vec<_>) =
            self.project_roots()?.into_iter().partition(ProjectRoots::is_live);
        out.roots = live.iter().map(|p| p.project.clone()).collect();
        out.gone = gone.iter().map(|p| p.project.clone()).collect();
        Ok(live)
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.root()).unwrap_or(path).display().to_string()
    }
}

impl Writer<'_> {
    /// Removes every object nothing reaches (temp files went when the lock was taken).
    pub(super) fn collect_garbage(&self) -> Result<GcOutcome> {
        let mut out = GcOutcome { dry_run: false, temp_files: self.stale_temp, ..GcOutcome::default() };
        let live = self.store.live_projects(&mut out)?;
        for gone in self.store.project_roots()?.iter().filter(|p| !p.is_live()) {
            self.forget_project(gone)?;
        }
        // Taking the lock unpacked `incoming/`: every blob gc removes is a file of its own.
        let Garbage { doomed, repack, packed } = self.store.unreachable(&live)?;
        debug_assert!(packed.is_empty(), "a writer finds no incoming pack");
        if !doomed.is_empty() || !repack.is_empty() {
            self.store.drop_stat_caches()?;
        }
        // The kept trees are packed again before the old pack goes: a crash in between leaves
        // them twice, never lost.
        for pack in repack {
            pack.report(self.store, &mut out);
            let mut keep: Vec<(Id, &[u8])> = pack.keep.iter().map(|(id, b)| (*id, b.as_slice())).collect();
            self.write_pack(&mut keep)?;
            fs::remove_file(&pack.path).map_err(Error::io("remove", &pack.path))?;
        }
        for path in doomed {
            out.bytes += fs::symlink_metadata(&path).map(|m| m.len()).unwrap_or(0);
            out.unreachable.push(self.store.relative(&path));
            fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        }
        self.store.rescan_packs()?;
        // What is left is kept in one pack, as `git gc` leaves it.
        self.merge_packs()?;
        Ok(out)
    }
}

/// What gc would remove (see [`Store::unreachable`]).
struct Garbage {
    doomed: Vec<PathBuf>,
    repack: Vec<PackGarbage>,
    /// The unreachable blobs of incoming packs, by the loose path gc gives them first (listed
    /// in `doomed` too), with their sizes.
    packed: HashMap<PathBuf, u64>,
}

/// A pack holding trees nothing reaches beside trees that are kept.
pub(super) struct PackGarbage {
    path: PathBuf,
    keep: Vec<(Id, Vec<u8>)>,
    dead: Vec<(Id, Vec<u8>)>,
}

impl PackGarbage {
    /// Lists the unreachable trees as `packs/<name>.pack: tree <id>`.
    fn report(&self, store: &Store, out: &mut GcOutcome) {
        for (id, bytes) in &self.dead {
            out.bytes += bytes.len() as u64;
            out.unreachable.push(format!("{}: tree {}", store.relative(&self.path), id.hex()));
        }
    }
}

/// The entries of `dir/<aa>/`, sorted.
pub(super) fn object_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for fan in fs::read_dir(dir).into_iter().flatten().flatten() {
        for e in fs::read_dir(fan.path()).into_iter().flatten().flatten() {
            out.push(e.path());
        }
    }
    out.sort();
    out
}
