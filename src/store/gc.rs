//! Garbage: temp files and objects nothing reaches. Reachability starts at every generation on
//! a ref's chain (their trees and tagged trees) and every derivation and environment with the
//! blobs they name.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{Error, Result};
use super::tree::Tree;
use super::{Store, Writer};
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Kind};

#[derive(Debug, Serialize, Default)]
pub struct GcOutcome {
    pub dry_run: bool,
    pub temp_files: usize,
    /// Store paths of the unreachable objects (removed unless dry-run).
    pub unreachable: Vec<String>,
    pub bytes: u64,
}

/// What the Store must keep.
struct Reachable {
    trees: HashSet<Id>,
    blobs: HashSet<Id>,
    gens: BTreeSet<(Kind, Id)>,
}

impl Store {
    fn reachable(&self) -> Result<Reachable> {
        let (mut trees, mut blobs, mut gens) = (HashSet::new(), HashSet::new(), BTreeSet::new());
        let mut pending = Vec::new();
        for kind in Kind::ALL {
            for g in self.history(kind)? {
                gens.insert((kind, g.id));
                pending.push(g.generation.root);
                pending.extend(g.generation.tags.iter().map(|t| t.tree));
            }
        }
        while let Some(id) = pending.pop() {
            if !trees.insert(id) {
                continue;
            }
            for e in self.read_tree(&id)?.entries() {
                match e.kind {
                    EntryKind::Tree => pending.push(e.id),
                    EntryKind::Blob => {
                        blobs.insert(e.id);
                    }
                }
            }
        }
        for dir in object_dirs(&self.root().join("derivations")) {
            let Some(id) = dir.file_name().and_then(|n| n.to_str()).and_then(Id::from_hex) else { continue };
            blobs.extend(self.read_derivation(&id)?.entries.iter().map(|e| e.blob));
        }
        Ok(Reachable { trees, blobs, gens })
    }

    /// The files of objects nothing reaches (blobs, trees, generations off every chain and
    /// their index entries).
    fn unreachable(&self) -> Result<Vec<PathBuf>> {
        let Reachable { trees, blobs, gens } = self.reachable()?;
        let mut doomed = Vec::new();
        for (dir, suffix, keep) in [("blobs", "", &blobs), ("trees", ".json", &trees)] {
            for path in object_dirs(&self.root().join(dir)) {
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
                let text = super::fsutil::read_text(&e.path()).unwrap_or_default();
                if text.trim().parse::<Id>().is_ok_and(|id| !gens.contains(&(kind, id))) {
                    doomed.push(e.path());
                }
            }
        }
        Ok(doomed)
    }

    /// What `gc` would remove, removing nothing.
    pub fn garbage(&self) -> Result<GcOutcome> {
        let temp_files = fs::read_dir(self.tmp_dir()).map(|d| d.count()).unwrap_or(0);
        let mut out = GcOutcome { dry_run: true, temp_files, ..GcOutcome::default() };
        for path in self.unreachable()? {
            out.bytes += fs::symlink_metadata(&path).map(|m| m.len()).unwrap_or(0);
            out.unreachable.push(self.relative(&path));
        }
        Ok(out)
    }

    fn relative(&self, path: &Path) -> String {
        path.strip_prefix(self.root()).unwrap_or(path).display().to_string()
    }
}

impl Writer<'_> {
    /// Removes every object nothing reaches (temp files went when the lock was taken).
    pub fn collect_garbage(&self) -> Result<GcOutcome> {
        let doomed = self.store.unreachable()?;
        if !doomed.is_empty() {
            self.store.drop_stat_caches()?;
        }
        let mut out = GcOutcome { dry_run: false, temp_files: self.stale_temp, ..GcOutcome::default() };
        for path in doomed {
            out.bytes += fs::symlink_metadata(&path).map(|m| m.len()).unwrap_or(0);
            out.unreachable.push(self.store.relative(&path));
            fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        }
        Ok(out)
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
