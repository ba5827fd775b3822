//! `memorix gc` (temp files and objects nothing reaches) and `memorix purge` (the explicit,
//! loud erasure of content from every generation, e.g. a leaked secret).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::progress::Progress;
use crate::diagnostics::{Error, Result};
use crate::model::{EntryKind, Id, IdPrefix, Kind, Locator};
use crate::store::generation::now_rfc3339;
use crate::store::tree::Tree;
use crate::store::{Store, fsutil};

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

/// Every generation on a ref's chain, their trees and tagged trees, and every derivation and
/// environment with the blobs they name.
fn reachable(store: &Store) -> Result<Reachable> {
    let (mut trees, mut blobs, mut gens) = (HashSet::new(), HashSet::new(), BTreeSet::new());
    let mut pending = Vec::new();
    for kind in Kind::ALL {
        for g in store.history(kind)? {
            gens.insert((kind, g.id));
            pending.push(g.generation.root);
            pending.extend(g.generation.tags.iter().map(|t| t.tree));
        }
    }
    while let Some(id) = pending.pop() {
        if !trees.insert(id) {
            continue;
        }
        for e in store.read_tree(&id)?.entries() {
            match e.kind {
                EntryKind::Tree => pending.push(e.id),
                EntryKind::Blob => {
                    blobs.insert(e.id);
                }
            }
        }
    }
    for dir in object_dirs(&store.root().join("derivations"))? {
        let Some(id) = dir.file_name().and_then(|n| n.to_str()).and_then(Id::from_hex) else { continue };
        for (_, hex) in store.read_derivation(&id)?.entries {
            blobs.extend(Id::from_hex(&hex));
        }
    }
    Ok(Reachable { trees, blobs, gens })
}

fn object_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for fan in fs::read_dir(dir).into_iter().flatten().flatten() {
        for e in fs::read_dir(fan.path()).into_iter().flatten().flatten() {
            out.push(e.path());
        }
    }
    out.sort();
    Ok(out)
}

pub fn gc(store_root: &Path, dry_run: bool, progress: &dyn Progress) -> Result<GcOutcome> {
    let store = Store::open(store_root)?;
    let (writer, temp_files) = if dry_run {
        (None, fs::read_dir(store.tmp_dir()).map(|d| d.count()).unwrap_or(0))
    } else {
        let w = store.writer(progress)?;
        let n = w.stale_temp;
        (Some(w), n)
    };
    let Reachable { trees, blobs, gens } = reachable(&store)?;
    let mut out = GcOutcome { dry_run, temp_files, ..GcOutcome::default() };
    let mut doomed = Vec::new();
    for (dir, suffix, keep) in [("blobs", "", &blobs), ("trees", ".json", &trees)] {
        for path in object_dirs(&store.root().join(dir))? {
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
        for e in fs::read_dir(store.generations_dir(kind)).into_iter().flatten().flatten() {
            let name = e.file_name();
            let id = name.to_str().and_then(|n| n.strip_suffix(".json")).and_then(Id::from_hex);
            if id.is_some_and(|id| !gens.contains(&(kind, id))) {
                doomed.push(e.path());
            }
        }
        // Index entries naming a generation off the chain go with it.
        for e in fs::read_dir(store.generations_dir(kind).join("index")).into_iter().flatten().flatten() {
            let text = fs::read_to_string(e.path()).unwrap_or_default();
            if text.trim().parse::<Id>().is_ok_and(|id| !gens.contains(&(kind, id))) {
                doomed.push(e.path());
            }
        }
    }
    if !dry_run && !doomed.is_empty() {
        store.drop_stat_caches()?;
    }
    for path in doomed {
        out.bytes += fs::symlink_metadata(&path).map(|m| m.len()).unwrap_or(0);
        out.unreachable.push(path.strip_prefix(store.root()).unwrap_or(&path).display().to_string());
        if !dry_run {
            fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        }
    }
    drop(writer);
    Ok(out)
}

/// `purged/<hex>`: what was erased, when, and from where, so a later read can say so.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PurgeRecord {
    pub blob: Id,
    pub paths: Vec<String>,
    pub time: String,
}

#[derive(Debug, Serialize)]
pub struct PurgeOutcome {
    /// False without `--yes`: nothing was erased, this is what would be.
    pub erased: bool,
    pub blobs: Vec<PurgeRecord>,
    /// Hardlinks removed from latest/, derivation and environment trees.
    pub links: usize,
}

/// Erases every blob that ever stood at `target` (a Store path, or a blob id) from the Store.
/// History keeps naming the ids; reading them then fails with a message saying they were
/// purged.
pub fn purge(store_root: &Path, target: &str, yes: bool, progress: &dyn Progress) -> Result<PurgeOutcome> {
    let store = Store::open(store_root)?;
    let writer = store.writer(progress)?;
    let mut found: BTreeMap<Id, BTreeSet<String>> = BTreeMap::new();
    if let Some(prefix) = IdPrefix::parse(target).filter(|_| !target.contains('/')) {
        let fan = store.root().join("blobs").join(&prefix.as_hex()[..2]);
        for e in fs::read_dir(fan).into_iter().flatten().flatten() {
            if let Some(id) = e.file_name().to_str().and_then(Id::from_hex).filter(|id| prefix.matches(id)) {
                found.entry(id).or_default().insert(format!("blob {id}"));
            }
        }
    } else {
        let loc = Locator::parse_place(target)?;
        for g in store.history(loc.kind)? {
            let roots = std::iter::once((g.generation.root, loc.path.clone())).chain(
                g.generation.tags.iter().filter_map(|t| {
                    let base = crate::model::StorePath::new(&t.path).ok()?;
                    let rest = loc.path.as_str().strip_prefix(base.as_str())?.trim_start_matches('/');
                    loc.path.starts_with(&base).then(|| {
                        (t.tree, crate::model::StorePath::new(rest).expect("a suffix of a valid path"))
                    })
                }),
            );
            for (root, path) in roots {
                match store.lookup(&root, &path)? {
                    Some((EntryKind::Blob, id)) => {
                        found.entry(id).or_default().insert(loc.place());
                    }
                    Some((EntryKind::Tree, id)) => {
                        for (p, blob) in store.walk_files(&id)? {
                            found
                                .entry(blob)
                                .or_default()
                                .insert(format!("{}/{p}", loc.place().trim_end_matches('/')));
                        }
                    }
                    None => {}
                }
            }
        }
    }
    if found.is_empty() {
        return Err(Error::usage(
            format!("nothing in the Store matches {target}"),
            Some("name a Store path (rules/x.md) or a blob id".to_string()),
        ));
    }
    let time = now_rfc3339();
    let blobs: Vec<PurgeRecord> = found
        .into_iter()
        .map(|(blob, paths)| PurgeRecord { blob, paths: paths.into_iter().collect(), time: time.clone() })
        .collect();
    if !yes {
        return Ok(PurgeOutcome { erased: false, blobs, links: 0 });
    }
    let mut links = 0;
    let inodes: HashSet<(u64, u64)> = blobs
        .iter()
        .filter_map(|r| fs::symlink_metadata(store.blob_path(&r.blob)).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    // Hardlinks share the bytes: each one must go for the content to be gone.
    for top in ["latest", "spare", "derivations", "environments"] {
        for path in files_under(&store.root().join(top)) {
            let Ok(m) = fs::symlink_metadata(&path) else { continue };
            if m.is_file() && inodes.contains(&(m.dev(), m.ino())) {
                let dir = path.parent().expect("a file has a parent");
                let mode = fs::metadata(dir)
                    .map(|d| std::os::unix::fs::PermissionsExt::mode(&d.permissions()))
                    .unwrap_or(0o555);
                fsutil::set_mode(dir, 0o755)?;
                fs::remove_file(&path).map_err(Error::io("remove", &path))?;
                fsutil::set_mode(dir, mode & 0o777)?;
                links += 1;
            }
        }
    }
    store.drop_stat_caches()?;
    let marks = store.root().join("purged");
    fsutil::create_dir(&marks)?;
    for r in &blobs {
        let bytes = serde_json::to_vec_pretty(r).expect("a record serializes");
        fsutil::write_atomic(&store.tmp_dir(), &marks.join(r.blob.hex()), &bytes)?;
        let path = store.blob_path(&r.blob);
        if fs::symlink_metadata(&path).is_ok() {
            fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        }
    }
    writer.sync()?;
    Ok(PurgeOutcome { erased: true, blobs, links })
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

impl Store {
    /// Why blob `id` is gone, when it was purged.
    pub fn purged(&self, id: &Id) -> Option<PurgeRecord> {
        serde_json::from_slice(&fs::read(self.root().join("purged").join(id.hex())).ok()?).ok()
    }
}
