//! Activation: placing an environment at the project's memory directory as real, read-only
//! files, staged beside it and swapped in atomically. Files unchanged since the previous
//! activation are reused from it, so cost grows with what changed. The previous tree is kept
//! (in `.memorix/tmp/previous`) until the next activation so readers holding it can finish.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use miette::Diagnostic;

use crate::diagnostics::{FromIo, IoError};
use crate::manifest::{Delivery as Mode, Manifest};
use crate::model::Id;
use crate::store::checkout::{exchange, fill_tree, remove_readonly_tree};
use crate::store::derivation::Provenance;
use crate::store::{Store, fsutil};
use crate::view::artifacts;
use crate::view::derivation::DerivationPlan;
use crate::view::environment::EnvironmentPlan;

pub use crate::manifest::INDEX;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong placing an environment in a project.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error("{path} vanished from {} while it was activated", memory.display())]
    #[diagnostic(
        code(memorix::deliver::vanished),
        help("another program removed it; run `memorix build` again")
    )]
    Vanished { path: String, memory: PathBuf },

    #[error("cannot hardlink {} into the project: {source}", blob.display())]
    #[diagnostic(
        code(memorix::deliver::hardlink),
        help("hardlink delivery needs the Store on the project's file system; use delivery = \"auto\"")
    )]
    Hardlink { blob: PathBuf, source: std::io::Error },

    #[error("{} exists, and memorix did not make it: activating would replace it", memory.display())]
    #[diagnostic(
        code(memorix::deliver::not_ours),
        help(
            "memorix replaces the memory directory whole, and only one it made; move it aside (or delete it, if it is an old delivery), or set `memory` in memorix.toml to a directory of its own"
        )
    )]
    NotOurs { memory: PathBuf },

    #[error("the file system of {} cannot reflink", path.display())]
    #[diagnostic(
        code(memorix::deliver::reflink),
        help("use delivery = \"auto\" (reflink where possible, else copy)")
    )]
    NoReflink { path: PathBuf },
}

/// Environment path -> (mount, blob).
pub type Files = BTreeMap<String, (String, Id)>;

/// One mount as `INDEX.md` describes it.
pub struct MountInfo {
    pub path: String,
    pub intent: Option<String>,
    /// Library versions its locators resolved to, e.g. `httpx 0.23.3`.
    pub versions: Vec<String>,
    /// `[artifacts]` outputs of its derivation: (name, text).
    pub artifacts: Vec<(String, String)>,
    /// Its files' titles (mount-relative path -> first heading), when computed.
    pub titles: Option<BTreeMap<String, String>>,
}

/// One environment, ready to be placed.
pub struct Delivery {
    pub environment: Id,
    /// The profile generation it is bound as; 0 for a checkout outside the profile.
    pub generation: u64,
    /// Sorted by path.
    pub mounts: Vec<MountInfo>,
    pub files: Files,
}

impl Delivery {
    pub fn from_plan(
        store: &Store,
        environment: Id,
        plan: &EnvironmentPlan,
        derivations: &[DerivationPlan],
        m: &Manifest,
        generation: u64,
    ) -> Delivery {
        let files = plan.files.iter().map(|(p, f)| (p.to_string(), (f.mount.to_string(), f.blob))).collect();
        let mounts = plan
            .mounts
            .iter()
            .zip(derivations)
            .map(|((path, id), d)| mount_info(store, m, path.as_str(), id, &d.provenance))
            .collect();
        Delivery { environment, generation, mounts, files }
    }

    /// Any stored environment (a rollback, an activation by id, a checkout).
    pub fn from_store(
        store: &Store,
        environment: Id,
        m: Option<&Manifest>,
        generation: u64,
    ) -> Result<Delivery> {
        let record = store.read_environment(&environment)?;
        let files = store
            .environment_files(&record)?
            .into_iter()
            .map(|(p, (mount, blob))| (p.to_string(), (mount.to_string(), blob)))
            .collect();
        let mut mounts = Vec::new();
        for (path, id) in &record.mounts {
            let provenance = store.read_derivation(id)?.provenance;
            mounts.push(match m {
                Some(m) => mount_info(store, m, path.as_str(), id, &provenance),
                None => MountInfo {
                    path: path.to_string(),
                    intent: None,
                    versions: versions(&provenance),
                    artifacts: Vec::new(),
                    titles: artifacts::titles(store, id),
                },
            });
        }
        Ok(Delivery { environment, generation, mounts, files })
    }

    /// `.memory/INDEX.md`: the environment, the profile generation, each mount with its
    /// intent, library versions and artifacts, and each file with its first heading.
    /// Deterministic for (environment, generation); not part of the environment, which cannot
    /// contain its own id.
    pub fn index_text(&self, store: &Store) -> Result<String> {
        let mut s = String::new();
        s.push_str("# Project memory\n\n");
        s.push_str(
            "Generated by memorix; read-only. Do not edit: change memorix.toml and run `memorix build`.\n\n",
        );
        s += &format!("- environment: `{}`\n", self.environment);
        if self.generation > 0 {
            s += &format!("- profile generation: {}\n", self.generation);
        }
        for mount in &self.mounts {
            s += &format!("\n## {}/\n\n", mount.path);
            if let Some(intent) = &mount.intent {
                s += &format!("{intent}\n\n");
            }
            if !mount.versions.is_empty() {
                s += &format!("Versions: {}\n\n", mount.versions.join(", "));
            }
            for (path, (_, blob)) in self.files.iter().filter(|(_, (m, _))| *m == mount.path) {
                let rel = &path[mount.path.len() + 1..];
                let title = match &mount.titles {
                    Some(t) => t.get(rel).cloned(),
                    None => artifacts::headings(store, blob)?.into_iter().next().map(|(_, h)| h),
                };
                match title {
                    Some(h) => s += &format!("- `{path}`: {h}\n"),
                    None => s += &format!("- `{path}`\n"),
                }
            }
            for (name, text) in &mount.artifacts {
                s += &format!("\n### {name}\n\n{}\n", text.trim_end());
            }
        }
        Ok(s)
    }
}

fn mount_info(store: &Store, m: &Manifest, path: &str, drv: &Id, provenance: &[Provenance]) -> MountInfo {
    let intent = m.mounts.iter().find(|d| d.path.as_str() == path).and_then(|d| d.intent.clone());
    let artifacts = m
        .artifacts
        .iter()
        .filter_map(|a| artifacts::hook_output(store, drv, a).map(|t| (a.name.clone(), t)))
        .collect();
    MountInfo {
        path: path.to_string(),
        intent,
        versions: versions(provenance),
        artifacts,
        titles: artifacts::titles(store, drv),
    }
}

/// `httpx 0.23.3` for each locator that resolved to a library version.
fn versions(provenance: &[Provenance]) -> Vec<String> {
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

/// The environment `.memory/INDEX.md` names, if any.
pub fn shown_environment(memory: &Path) -> Option<Id> {
    let text = fs::read_to_string(memory.join(INDEX)).ok()?;
    let line = text.lines().find_map(|l| l.strip_prefix("- environment: `"))?;
    line.strip_suffix('`')?.parse().ok()
}

pub const RECORD: &str = "activation.json";

/// What an activation placed (`.memorix/activation.json`): each file's blob and its stat right
/// after placing, so a build can tell with stats alone, without hashing, whether `.memory/` is
/// still exactly what it delivered.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ActivationRecord {
    pub environment: Option<Id>,
    pub files: BTreeMap<String, Placement>,
    /// Each directory's (mtime, inode): adding, removing or renaming a file changes them.
    #[serde(default)]
    pub dirs: BTreeMap<String, (i64, u64)>,
    /// The inode of a staged tree about to be swapped in (set just before the swap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<u64>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placement {
    /// `None` for INDEX.md.
    pub blob: Option<Id>,
    pub size: u64,
    pub mtime_ns: i64,
    pub ino: u64,
}

fn stat(path: &Path) -> Option<(u64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(path).ok()?;
    Some((m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.ino()))
}

impl ActivationRecord {
    pub fn load(state_dir: &Path) -> Option<ActivationRecord> {
        serde_json::from_slice(&fs::read(state_dir.join(RECORD)).ok()?).ok()
    }

    /// Whether the file at `rel` is still the one this activation placed.
    fn unchanged(&self, memory: &Path, rel: &str) -> bool {
        self.files.get(rel).is_some_and(|p| stat(&memory.join(rel)) == Some((p.size, p.mtime_ns, p.ino)))
    }

    /// Whether `memory` holds exactly the files placed, each untouched since.
    pub fn intact(&self, memory: &Path) -> bool {
        let mut seen = 0;
        let mut stack = vec![memory.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else { return false };
            for e in entries {
                let Ok(e) = e else { return false };
                let path = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(path);
                    continue;
                }
                let rel = path.strip_prefix(memory).expect("below the memory").to_string_lossy().into_owned();
                if !self.unchanged(memory, &rel) {
                    return false;
                }
                seen += 1;
            }
        }
        seen == self.files.len()
    }
}

#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Placed {
    pub files: usize,
    /// Unchanged files taken over from the previous activation.
    pub reused: usize,
}

/// Places `delivery` at `memory`: staged in `<state_dir>/tmp`, then swapped in, then recorded.
/// `previous` is the record of what `memory` shows now: files it placed that are untouched
/// since and hold the same blob are reused. A `memory` that memorix did not make is refused
/// before anything is written; a failed activation leaves no staged tree behind.
pub fn activate(
    store: &Store,
    state_dir: &Path,
    memory: &Path,
    delivery: &Delivery,
    mode: Mode,
    previous: Option<&ActivationRecord>,
) -> Result<Placed> {
    let recorded = ActivationRecord::load(state_dir);
    check_ours(memory, recorded.as_ref())?;
    let tmp = state_dir.join("tmp");
    fsutil::create_dir(&tmp)?;
    let stage = Stage::create(tmp.join("stage"))?;
    let (files, reused) = fill_stage(store, &stage.0, memory, delivery, mode, previous)?;
    if let Some(parent) = memory.parent() {
        fsutil::create_dir(parent)?;
    }
    crate::fault::point("activate.staged");
    // Say which tree is about to become the memory, so a crash right after the swap still
    // leaves a directory memorix knows it made.
    let mut pending = recorded.unwrap_or_default();
    pending.pending = stat(&stage.0).map(|(_, _, ino)| ino);
    fsutil::write_atomic(
        state_dir,
        &state_dir.join(RECORD),
        &serde_json::to_vec(&pending).expect("a record serializes"),
    )?;
    exchange(memory, &stage.0, &tmp.join("parked"))?;
    let stage = stage.into_previous();
    crate::fault::point("activate.exchanged");
    // `stage` now holds the old tree (if there was one): keep it until the next activation.
    let kept = tmp.join("previous");
    remove_readonly_tree(&kept)?;
    if fs::symlink_metadata(&stage).is_ok() {
        fs::rename(&stage, &kept).map_err(Error::io("keep the previous tree at", &kept))?;
    }
    let record = ActivationRecord::of(memory, delivery.environment, &files)?;
    fsutil::write_atomic(
        state_dir,
        &state_dir.join(RECORD),
        &serde_json::to_vec(&record).expect("a record serializes"),
    )?;
    crate::fault::point("activate.recorded");
    Ok(Placed { files: files.len(), reused })
}

/// The memory directory is replaced only when memorix made it: absent, empty, or the tree the
/// activation record names (placed, or about to be when a crash came).
fn check_ours(memory: &Path, recorded: Option<&ActivationRecord>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = match fs::symlink_metadata(memory) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("stat", memory)(e)),
        Ok(m) => m,
    };
    if meta.is_dir() && fs::read_dir(memory).is_ok_and(|mut d| d.next().is_none()) {
        return Ok(());
    }
    let ours = recorded.is_some_and(|r| {
        let placed = r.dirs.get("").map(|(_, ino)| *ino);
        // Records from before directories were recorded: the index names the environment.
        let older =
            r.dirs.is_empty() && r.environment.is_some() && shown_environment(memory) == r.environment;
        meta.is_dir() && (placed == Some(meta.ino()) || r.pending == Some(meta.ino()) || older)
    });
    if ours { Ok(()) } else { Err(Error::NotOurs { memory: memory.to_path_buf() }) }
}

/// A staged tree, removed again unless it was swapped in (a failed activation, a full disk,
/// leaves nothing behind).
struct Stage(PathBuf);

impl Stage {
    fn create(path: PathBuf) -> Result<Stage> {
        remove_readonly_tree(&path)?;
        fs::create_dir(&path).map_err(Error::io("create directory", &path))?;
        Ok(Stage(path))
    }

    /// After the swap the stage holds the previous tree, which the caller keeps.
    fn into_previous(self) -> PathBuf {
        let path = self.0.clone();
        std::mem::forget(self);
        path
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = remove_readonly_tree(&self.0);
    }
}

/// Writes INDEX.md and every file into `stage`, taking over unchanged files of the previous
/// activation; returns the files and how many were taken over.
fn fill_stage(
    store: &Store,
    stage: &Path,
    memory: &Path,
    delivery: &Delivery,
    mode: Mode,
    previous: Option<&ActivationRecord>,
) -> Result<(Vec<(String, Id)>, usize)> {
    let index = delivery.index_text(store)?;
    let tmp = stage.parent().expect("the stage lies in tmp/");
    fsutil::write_atomic_mode(tmp, &stage.join(INDEX), index.as_bytes(), 0o444)?;
    let files: Vec<(String, Id)> = delivery.files.iter().map(|(p, (_, b))| (p.clone(), *b)).collect();
    let reused = std::sync::atomic::AtomicUsize::new(0);
    fill_tree(stage, &files, &|blob, dest| {
        let rel = dest.strip_prefix(stage).expect("staged below the stage").to_string_lossy();
        let unchanged = previous.is_some_and(|p| {
            p.files.get(rel.as_ref()).is_some_and(|f| f.blob == Some(*blob)) && p.unchanged(memory, &rel)
        });
        let old = memory.join(rel.as_ref());
        // Only a real file is taken over (never a symlink from an earlier symlink delivery).
        let regular = fs::symlink_metadata(&old).is_ok_and(|m| m.is_file());
        let copies = matches!(mode, Mode::Auto | Mode::Copy | Mode::Reflink);
        if unchanged && regular && copies && fs::hard_link(&old, dest).is_ok() {
            reused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok(());
        }
        place(store, blob, dest, mode)
    })?;
    Ok((files, reused.into_inner()))
}

impl ActivationRecord {
    /// What `memory` holds right after placing `files` of `environment`.
    fn of(memory: &Path, environment: Id, files: &[(String, Id)]) -> Result<ActivationRecord> {
        let mut record = ActivationRecord { environment: Some(environment), ..ActivationRecord::default() };
        let dirs: std::collections::BTreeSet<&str> = files
            .iter()
            .flat_map(|(p, _)| std::iter::once("").chain(p.match_indices('/').map(|(i, _)| &p[..i])))
            .collect();
        for d in dirs {
            let (_, mtime, ino) = stat(&memory.join(d))
                .ok_or_else(|| Error::Vanished { path: format!("{d}/"), memory: memory.to_path_buf() })?;
            record.dirs.insert(d.to_string(), (mtime, ino));
        }
        for (rel, blob) in files.iter().map(|(p, b)| (p.as_str(), Some(*b))).chain([(INDEX, None)]) {
            let (size, mtime_ns, ino) = stat(&memory.join(rel))
                .ok_or_else(|| Error::Vanished { path: rel.to_string(), memory: memory.to_path_buf() })?;
            record.files.insert(rel.to_string(), Placement { blob, size, mtime_ns, ino });
        }
        Ok(record)
    }
}

/// Writes `delivery` into the new directory `dir` (a checkout for replay): read-only copies and
/// `INDEX.md`.
/// The tree is written beside `dir` and renamed into place whole, so a failed or killed
/// checkout leaves no partial copy at `dir` (and the next checkout there removes the remains).
pub fn checkout(store: &Store, dir: &Path, delivery: &Delivery) -> Result<usize> {
    let name = dir
        .file_name()
        .ok_or_else(|| Error::io("check out into", dir)(std::io::ErrorKind::InvalidInput.into()))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fsutil::create_dir(parent)?;
    let stage = Stage::create(parent.join(format!(".{}.memorix-checkout", name.to_string_lossy())))?;
    let index = delivery.index_text(store)?;
    fsutil::write_atomic_mode(parent, &stage.0.join(INDEX), index.as_bytes(), 0o444)?;
    let files: Vec<(String, Id)> = delivery.files.iter().map(|(p, (_, b))| (p.clone(), *b)).collect();
    fill_tree(&stage.0, &files, &|blob, dest| place(store, blob, dest, Mode::Auto))?;
    // An empty directory at `dir` (the caller refuses a non-empty one) gives way.
    let _ = fs::remove_dir(dir);
    fsutil::set_mode(&stage.0, 0o755)?;
    fs::rename(&stage.0, dir).map_err(Error::io("move into place", dir))?;
    fsutil::set_mode(dir, 0o555)?;
    stage.into_previous();
    Ok(files.len())
}

/// Places one blob as a read-only file by `mode`.
fn place(store: &Store, blob: &Id, dest: &Path, mode: Mode) -> Result<()> {
    let src_path = store.blob_path(blob);
    match mode {
        Mode::Hardlink => {
            return fs::hard_link(&src_path, dest)
                .map_err(|source| Error::Hardlink { blob: src_path, source });
        }
        Mode::Symlink => {
            return std::os::unix::fs::symlink(&src_path, dest).map_err(Error::io("symlink", dest));
        }
        Mode::Auto | Mode::Copy | Mode::Reflink => {}
    }
    static NO_REFLINK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let mut src = store.open_blob(blob)?;
    let mut out = fsutil::create_with_mode(dest, 0o444).map_err(Error::io("create", dest))?;
    // One refusal says the file system cannot reflink; do not ask again for every file.
    let try_clone = mode == Mode::Reflink
        || (mode == Mode::Auto && !NO_REFLINK.load(std::sync::atomic::Ordering::Relaxed));
    let cloned = try_clone && rustix::fs::ioctl_ficlone(&out, &src).is_ok();
    if try_clone && !cloned {
        NO_REFLINK.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    if !cloned {
        if mode == Mode::Reflink {
            return Err(Error::NoReflink { path: dest.to_path_buf() });
        }
        // Copy from the handle opened without following symlinks, not by path.
        std::io::copy(&mut src, &mut out).map_err(Error::io("copy", &src_path))?;
    }
    Ok(())
}
