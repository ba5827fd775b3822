//! `latest/<kind>/`: a read-only hardlink checkout of each tip, double-buffered.
//!
//! Two directories take turns: the live `latest/<kind>` and a spare `spare/<kind>`. An ingest
//! applies the diff to the spare (which holds an older tip), then swaps the two with
//! `renameat2(RENAME_EXCHANGE)`, so readers see the old tree or the new one and the cost grows
//! with the changed paths. `spare/<kind>.json` records which tree each directory holds, keyed
//! by the directory's inode, so the record stays true across the swap and a crash at any point
//! leaves a directory whose content is either known or marked unknown (and rebuilt).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustix::fs::{CWD, RenameFlags};
use serde::{Deserialize, Serialize};

use super::diff::{ChangeKind, diff_trees};
use super::tree::Tree;
use crate::diagnostics::FromIo;
use crate::model::{Id, Kind, StorePath};
use crate::store::error::{Error, Result};
use crate::store::{Store, Writer, fsutil};

const DIR_MODE_RO: u32 = 0o555;
const DIR_MODE_RW: u32 = 0o755;

/// What a tree's directories are left as once written. Files are read-only either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dirs {
    /// The Store's own checkouts: nothing may be added or removed.
    ReadOnly,
    /// A project's delivered memory: its owner removes it with `rm -rf` or `git clean -fdx`.
    Writable,
}

impl Dirs {
    fn mode(self) -> u32 {
        match self {
            Dirs::ReadOnly => DIR_MODE_RO,
            Dirs::Writable => DIR_MODE_RW,
        }
    }
}

#[derive(Default, Serialize, Deserialize)]
struct State {
    /// `<dev>:<ino>` of a checkout directory -> the tree it holds.
    checkouts: BTreeMap<String, Id>,
}

fn ident(path: &Path) -> Result<String> {
    let m = fs::symlink_metadata(path).map_err(Error::io("stat", path))?;
    Ok(format!("{}:{}", m.dev(), m.ino()))
}

impl Store {
    pub(in crate::store) fn latest_checkout(&self, kind: Kind) -> PathBuf {
        self.latest_dir().join(kind.as_str())
    }

    fn spare_checkout(&self, kind: Kind) -> PathBuf {
        self.spare_dir().join(kind.as_str())
    }

    fn state_path(&self, kind: Kind) -> PathBuf {
        self.spare_dir().join(format!("{kind}.json"))
    }

    fn read_state(&self, kind: Kind) -> State {
        fsutil::read_object(&self.state_path(kind))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }
}

impl Writer<'_> {
    fn write_state(&self, kind: Kind, state: &State) -> Result<()> {
        let bytes = serde_json::to_vec(state).expect("state serializes");
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &self.store.state_path(kind), &bytes)?)
    }

    /// Makes `latest/<kind>` show the tree `root`.
    pub(in crate::store) fn refresh_latest(&self, kind: Kind, root: &Id) -> Result<()> {
        if self.stage_latest(kind, root)? {
            self.swap_latest(kind)?;
        }
        Ok(())
    }

    /// Shows the staged spare checkout in `latest/<kind>` (after [`Writer::stage_latest`]).
    pub(in crate::store) fn swap_latest(&self, kind: Kind) -> Result<()> {
        swap(&self.store.latest_checkout(kind), &self.store.spare_checkout(kind))?;
        crate::fault::point("latest.swapped");
        Ok(())
    }

    /// Brings the spare checkout of `kind` to the tree `root`, unseen by readers until
    /// [`Writer::swap_latest`]; false when `latest/<kind>` already shows `root` (nothing to
    /// swap).
    pub(in crate::store) fn stage_latest(&self, kind: Kind, root: &Id) -> Result<bool> {
        let (mut state, latest_id, spare_id) = self.checkouts(kind)?;
        let shown = state.checkouts.get(&latest_id).copied();
        if shown == Some(*root) {
            self.write_state(kind, &state)?;
            return Ok(false);
        }
        // After the swap the spare holds what `latest/` shows now: the empty tree after a
        // kind's first ingest, which the next ingest would have to fill whole.
        if shown == Some(Tree::empty_id()) {
            self.spare_behind.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.bring_spare(kind, &mut state, &spare_id, root)?;
        Ok(true)
    }

    /// Brings each spare checkout to the tree its live one shows, so the next ingest of the
    /// kind applies only its own changes (run by a detached process, see
    /// [`crate::store::mutex::take_handoff`], which then gives up the lock).
    pub(in crate::store) fn fill_spares(&self) -> Result<()> {
        for kind in Kind::ALL {
            if fs::symlink_metadata(self.store.latest_checkout(kind)).is_err() {
                continue;
            }
            let (mut state, latest_id, spare_id) = self.checkouts(kind)?;
            match state.checkouts.get(&latest_id).copied() {
                Some(shown) if state.checkouts.get(&spare_id) != Some(&shown) => {
                    self.bring_spare(kind, &mut state, &spare_id, &shown)?
                }
                _ => {}
            }
        }
        self.spare_behind.store(false, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// The state of `kind`'s two checkouts (made where missing, an interrupted swap finished),
    /// with the identities of the live and the spare one.
    fn checkouts(&self, kind: Kind) -> Result<(State, String, String)> {
        let store = self.store;
        let (latest, spare) = (store.latest_checkout(kind), store.spare_checkout(kind));
        fsutil::create_dir(&store.latest_dir())?;
        fsutil::create_dir(&store.spare_dir())?;
        let mut state = store.read_state(kind);
        self.recover_fallback_swap(kind)?;
        for dir in [&latest, &spare] {
            if fs::symlink_metadata(dir).is_err() {
                fs::create_dir(dir).map_err(Error::io("create directory", dir))?;
                state.checkouts.insert(ident(dir)?, Tree::empty_id());
            }
        }
        let (latest_id, spare_id) = (ident(&latest)?, ident(&spare)?);
        state.checkouts.retain(|k, _| *k == latest_id || *k == spare_id);
        Ok((state, latest_id, spare_id))
    }

    /// Applies to the spare checkout the diff from the tree it holds to `root`.
    fn bring_spare(&self, kind: Kind, state: &mut State, spare_id: &str, root: &Id) -> Result<()> {
        let store = self.store;
        let spare = store.spare_checkout(kind);
        // The spare is about to change: until it is done its content is unknown.
        let spare_tree = state.checkouts.remove(spare_id);
        self.write_state(kind, state)?;
        fsutil::sync_dir(&store.spare_dir())?;
        crate::fault::point("latest.spare-dirty");
        match spare_tree {
            Some(tree) => apply_diff(self, &spare, Some(&tree), root)?,
            None => {
                remove_readonly_tree(&spare)?;
                fs::create_dir(&spare).map_err(Error::io("create directory", &spare))?;
                apply_diff(self, &spare, None, root)?;
            }
        }
        state.checkouts.insert(ident(&spare)?, *root);
        self.write_state(kind, state)?;
        crate::fault::point("latest.applied");
        Ok(())
    }

    /// Finishes a two-rename swap that a crash interrupted (file systems without
    /// `RENAME_EXCHANGE`).
    fn recover_fallback_swap(&self, kind: Kind) -> Result<()> {
        let store = self.store;
        let (latest, spare) = (store.latest_checkout(kind), store.spare_checkout(kind));
        let old = parked(&spare);
        if fs::symlink_metadata(&old).is_err() {
            return Ok(());
        }
        if fs::symlink_metadata(&latest).is_err() {
            rename(&spare, &latest)?;
        }
        if fs::symlink_metadata(&spare).is_err() {
            rename(&old, &spare)?;
        } else {
            remove_readonly_tree(&old)?;
        }
        Ok(())
    }
}

fn parked(spare: &Path) -> PathBuf {
    spare.with_extension("parked")
}

fn rename(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(Error::io("rename", from))
}

/// Exchanges the live and spare checkouts.
fn swap(latest: &Path, spare: &Path) -> Result<()> {
    exchange(latest, spare, &parked(spare), Dirs::ReadOnly)
}

/// Swaps two read-only trees atomically with `renameat2(RENAME_EXCHANGE)`: afterwards `live`
/// holds what `staged` held and `staged` the old live tree. Where the file system cannot
/// exchange, three renames through `parked`. A missing `live` is simply renamed into place.
pub(crate) fn exchange(live: &Path, staged: &Path, parked: &Path, dirs: Dirs) -> Result<()> {
    // Moving a directory to another parent rewrites its `..`, which needs write permission.
    fsutil::set_mode(staged, DIR_MODE_RW)?;
    if fs::symlink_metadata(live).is_err() {
        rename(staged, live)?;
    } else {
        let live_is_dir = fs::symlink_metadata(live).is_ok_and(|m| m.is_dir());
        if live_is_dir {
            fsutil::set_mode(live, DIR_MODE_RW)?;
        }
        match rustix::fs::renameat_with(CWD, live, CWD, staged, RenameFlags::EXCHANGE) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {
                rename(live, parked)?;
                rename(staged, live)?;
                rename(parked, staged)?;
            }
            Err(e) => return Err(Error::io("swap in", live)(e.into())),
        }
        if live_is_dir {
            fsutil::set_mode(staged, dirs.mode())?;
        }
    }
    fsutil::set_mode(live, dirs.mode())?;
    Ok(fsutil::sync_dir(live.parent().expect("a tree lives in a directory"))?)
}

/// Removes a tree whose directories are read-only (a checkout, a staged object, an old
/// `.memory/`). A symlink or file in its place is removed, never followed.
pub fn remove_readonly_tree(dir: &Path) -> Result<()> {
    match fs::symlink_metadata(dir) {
        Err(_) => return Ok(()),
        Ok(m) if !m.is_dir() => return fs::remove_file(dir).map_err(Error::io("remove", dir)),
        Ok(_) => {}
    }
    for entry in walkdir(dir)? {
        if entry.1 {
            fsutil::set_mode(&entry.0, DIR_MODE_RW)?;
        }
    }
    fs::remove_dir_all(dir).map_err(Error::io("remove", dir))
}

/// Every path under `dir` with whether it is a directory, parents first.
fn walkdir(dir: &Path) -> Result<Vec<(PathBuf, bool)>> {
    let mut out = vec![(dir.to_path_buf(), true)];
    let mut i = 0;
    while i < out.len() {
        if out[i].1 {
            let d = out[i].0.clone();
            for entry in fs::read_dir(&d).map_err(Error::io("read", &d))? {
                let entry = entry.map_err(Error::io("read", &d))?;
                let is_dir = entry.file_type().map_err(Error::io("stat", &entry.path()))?.is_dir();
                out.push((entry.path(), is_dir));
            }
        }
        i += 1;
    }
    Ok(out)
}

/// Tracks directories made writable during an update, to set their final mode again.
struct Unlocked {
    dirs: BTreeSet<PathBuf>,
    after: Dirs,
    /// Whether a directory was removed (a file may stand in its place by now).
    removed: bool,
}

impl Unlocked {
    fn new(after: Dirs) -> Unlocked {
        Unlocked { dirs: BTreeSet::new(), after, removed: false }
    }

    fn open(&mut self, dir: &Path) -> Result<()> {
        if !self.dirs.contains(dir) {
            fsutil::set_mode(dir, DIR_MODE_RW)?;
            self.dirs.insert(dir.to_path_buf());
        }
        Ok(())
    }

    /// Makes each directory of `rels` (relative to `root`) exist and be writable for now:
    /// missing ones and their missing parents are created level by level, each level in
    /// parallel (a fresh checkout has tens of thousands of directories).
    fn prepare(&mut self, root: &Path, rels: &BTreeSet<&str>) -> Result<()> {
        let mut levels: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
        for rel in rels {
            let mut p = *rel;
            while !p.is_empty() && levels.entry(p.matches('/').count()).or_default().insert(p) {
                p = parent_str(p);
            }
        }
        // Below a directory created here nothing can exist yet, so nothing is looked up.
        let mut created: std::collections::HashSet<&str> = Default::default();
        for level in levels.into_values() {
            let missing: Vec<&str> = level
                .into_par_iter()
                .filter(|rel| {
                    created.contains(parent_str(rel)) || fs::symlink_metadata(root.join(rel)).is_err()
                })
                .collect();
            let parents: BTreeSet<&str> = missing.iter().map(|rel| parent_str(rel)).collect();
            for p in parents {
                self.open(&root.join(p))?;
            }
            missing.par_iter().try_for_each(|rel| {
                let path = root.join(rel);
                fs::create_dir(&path).map_err(Error::io("create directory", &path))
            })?;
            for rel in missing {
                self.dirs.insert(root.join(rel));
                created.insert(rel);
            }
        }
        for rel in rels {
            self.open(&root.join(rel))?;
        }
        Ok(())
    }

    fn close(self) -> Result<()> {
        // A project's directories are never locked, and are made with its owner's umask as
        // `cp` makes them: there is no mode to restore.
        if matches!(self.after, Dirs::Writable) {
            return Ok(());
        }
        // A directory removed during the update may be a file (a hardlinked blob) by now; a
        // fill that removed none (a fresh checkout) looks nothing up.
        self.dirs.par_iter().try_for_each(|dir| -> Result<()> {
            if !self.removed || fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
                fsutil::set_mode(dir, self.after.mode())?;
            }
            Ok(())
        })
    }
}

/// The directory part of a relative path (`""` for a top-level name).
fn parent_str(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// Updates the checkout at `dir` from tree `old` to tree `new`, touching only changed paths.
fn apply_diff(writer: &Writer, dir: &Path, old: Option<&Id>, new: &Id) -> Result<()> {
    let store = writer.store;
    let changes = diff_trees(writer, old, Some(new), &StorePath::root())?;
    let mut unlocked = Unlocked::new(Dirs::ReadOnly);
    let mut emptied = BTreeSet::new();
    for c in changes.iter().filter(|c| c.change == ChangeKind::Removed) {
        let path = dir.join(c.path.as_str());
        let parent = path.parent().expect("a file has a parent").to_path_buf();
        unlocked.open(&parent)?;
        // Already gone (purged) is the state this removal wants.
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(Error::io("remove", &path)(e)),
            _ => {}
        }
        emptied.insert(parent);
    }
    // Deepest first, so a chain of directories left empty goes away entirely.
    let mut emptied: Vec<PathBuf> = emptied.into_iter().collect();
    emptied.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for d in emptied {
        let mut d = d;
        while d != dir && is_empty_dir(&d) {
            let parent = d.parent().expect("below the checkout").to_path_buf();
            unlocked.open(&parent)?;
            fs::remove_dir(&d).map_err(Error::io("remove", &d))?;
            unlocked.removed = true;
            d = parent;
        }
    }
    let placed: Vec<_> = changes.iter().filter(|c| c.change != ChangeKind::Removed).collect();
    unlocked.open(dir)?;
    unlocked.prepare(dir, &placed.iter().map(|c| parent_str(c.path.as_str())).collect())?;
    placed.par_iter().try_for_each(|c| {
        let path = dir.join(c.path.as_str());
        if c.change == ChangeKind::Modified {
            fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        }
        match link_blob(store, c.new.as_ref().expect("added or modified"), &path) {
            // latest/ shows everything but what `memorix purge` erased.
            Err(Error::Purged { .. }) => Ok(()),
            other => other,
        }
    })?;
    unlocked.close()
}

fn is_empty_dir(d: &Path) -> bool {
    fs::read_dir(d).map(|mut it| it.next().is_none()).unwrap_or(false)
}

/// Fills the directory `root` with hardlinks to the blobs of `files` (relative paths), then
/// makes every directory read-only.
pub(crate) fn link_tree<P: AsRef<str> + Sync>(store: &Store, root: &Path, files: &[(P, Id)]) -> Result<()> {
    fill_tree(root, files, Dirs::ReadOnly, &|blob, dest| link_blob(store, blob, dest))
}

/// Fills the directory `root`, placing each file with `place(blob, dest)`, then sets every
/// directory to `dirs`.
pub(crate) fn fill_tree<P: AsRef<str> + Sync, E: From<Error> + Send>(
    root: &Path,
    files: &[(P, Id)],
    dirs: Dirs,
    place: &(dyn Fn(&Id, &Path) -> Result<(), E> + Sync),
) -> Result<(), E> {
    let mut unlocked = Unlocked::new(dirs);
    unlocked.open(root)?;
    unlocked.prepare(root, &files.iter().map(|(path, _)| parent_str(path.as_ref())).collect())?;
    files.par_iter().try_for_each(|(path, blob)| place(blob, &root.join(path.as_ref())))?;
    Ok(unlocked.close()?)
}

/// Hardlinks a blob into a checkout; copies when the file system refuses another link.
fn link_blob(store: &Store, id: &Id, dest: &Path) -> Result<()> {
    let blob = store.blob_path(id);
    // A hardlink to a planted symlink would expose whatever it points at.
    match fs::symlink_metadata(&blob) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Err(Error::corrupt("blob", &blob, "is not a regular file")),
        Err(e) => return Err(store.blob_error(id, &blob, e)),
    }
    match fs::hard_link(&blob, dest) {
        Ok(()) => Ok(()),
        Err(e)
            if matches!(e.raw_os_error(), Some(libc_emlink) if libc_emlink == rustix::io::Errno::MLINK.raw_os_error())
                || e.kind() == io::ErrorKind::CrossesDevices =>
        {
            fs::copy(&blob, dest).map_err(Error::io("copy", &blob))?;
            Ok(fsutil::set_mode(dest, 0o444)?)
        }
        Err(e) => Err(Error::io("link", dest)(e)),
    }
}
