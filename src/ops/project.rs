//! A project: its manifest, lock, `.memorix/` directory and the project lock writers take
//! before the store lock. The manifest is read once, when the project is opened; the lock
//! once, when first asked for.

use std::cell::OnceCell;
use std::fs::File;
use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use crate::confine::Confined;
use crate::diagnostics::FromIo;
use crate::lock::{self, Lockfile};
use crate::manifest::{self, Manifest};
use crate::model::{EntryKind, Locator};
use crate::progress::Progress;
use crate::store::fsutil;
use crate::store::records::ProjectRoots;

/// The record of the versions the last update moved, in the state directory.
pub(crate) const MOVED: &str = "moved.json";

pub struct Project {
    pub manifest: Manifest,
    /// memorix.toml as it was read into `manifest` (a build's fingerprint hashes it).
    pub manifest_text: String,
    pub lock_path: PathBuf,
    /// `.memorix/`
    pub state_dir: PathBuf,
    /// The project directory, which every path memorix touches must stay in.
    pub confined: Confined,
    /// memorix.lock as read and parsed at the first [`Project::read_lock`].
    lock_file: OnceCell<LockFile>,
}

/// memorix.lock as read: its text (none when missing) and what it holds.
struct LockFile {
    text: Option<String>,
    state: LockState,
}

/// Files memorix keeps in `.memorix/`.
const STATE_FILES: [&str; 7] =
    ["tmp", "lock", "profile.toml", "activation.json", "build-stamp", "runs.jsonl", ".gitignore"];

/// `.memorix/.gitignore`: the state directory keeps itself out of git, in any clone and in a
/// monorepo's subdirectory, where `.git/info/exclude` would not reach.
const STATE_GITIGNORE: &str = "# Written by memorix: per-checkout state, never committed.\n*\n";

/// Creates `.memorix/` with the `.gitignore` that keeps it out of git (re-written if removed).
pub fn ensure_state_dir(state_dir: &Path) -> Result<()> {
    fsutil::create_dir(state_dir)?;
    let ignore = state_dir.join(".gitignore");
    if std::fs::symlink_metadata(&ignore).is_err() {
        fsutil::write_atomic(state_dir, &ignore, STATE_GITIGNORE.as_bytes())?;
    }
    Ok(())
}

/// `.memorix/lock`, held until dropped, unless a detached fill asked for was handed it
/// ([`super::handoff::fill_memory_later`]).
pub struct ProjectGuard {
    file: File,
    state_dir: PathBuf,
}

impl Drop for ProjectGuard {
    fn drop(&mut self) {
        super::handoff::hand_over_project(&self.state_dir, &self.file);
    }
}

/// The lock file's state on disk.
pub enum LockState {
    Missing,
    Clean(Lockfile),
    /// Git merge-conflict markers; the line of the first one.
    Conflicted {
        line: usize,
    },
    /// Not a valid lock (a bad hand edit, a truncated write by another tool): `memorix lock`
    /// writes it afresh; every other command reports it.
    Corrupt(crate::lock::Error),
}

impl Project {
    /// Finds and validates the manifest from `start` upwards. Refuses a project whose manifest, lock, state or memory paths lead out of it through a
    /// symlink or are special files, before anything is read or written there.
    pub fn open(start: &Path) -> Result<Project> {
        let path = manifest::find(start)?;
        let confined = Confined::new(path.parent().expect("a manifest lies in a directory"))?;
        confined.check(&path)?;
        super::trace::Trace::count(&super::trace::MANIFEST_READS);
        let (manifest, manifest_text) = manifest::load_text(&path, start)?;
        let lock_path = manifest.dir.join(lock::FILE);
        let state_dir = manifest.dir.join(".memorix");
        let memory = manifest.memory_dir();
        let state = STATE_FILES.iter().map(|f| state_dir.join(f));
        for p in [lock_path.clone(), memory.join(crate::manifest::INDEX), memory].into_iter().chain(state) {
            confined.check(&p)?;
        }
        Ok(Project { manifest, manifest_text, lock_path, state_dir, confined, lock_file: OnceCell::new() })
    }

    /// Takes the project mutex `.memorix/lock` (always before the Store's writer mutex), then removes what an
    /// interrupted command left: a staged or parked memory tree and half-written state files.
    /// memorix.lock, if it was read before, is read again when next asked for: another
    /// command may have written it while this one waited.
    pub fn guard(&mut self, progress: &dyn Progress) -> Result<ProjectGuard> {
        self.lock_file.take();
        ensure_state_dir(&self.state_dir)?;
        let filling = super::handoff::memory_marker(&self.state_dir);
        let lock = crate::store::mutex::lock_exclusive(&self.state_dir, &filling, progress)?;
        // Holding the lock, no fill is running: a marker left is from one that was killed.
        let _ = std::fs::remove_file(&filling);
        for leftover in ["tmp/stage", "tmp/parked"] {
            crate::store::objects::remove_readonly_tree(&self.state_dir.join(leftover))?;
        }
        for e in std::fs::read_dir(&self.state_dir).map_err(Error::io("read", &self.state_dir))?.flatten() {
            if fsutil::is_temp_name(&e.file_name()) && !fsutil::temp_writer_alive(&e.file_name()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Ok(ProjectGuard { file: lock, state_dir: self.state_dir.clone() })
    }

    /// What memorix.lock holds, read and parsed at the first call.
    pub fn read_lock(&self) -> Result<&LockState> {
        Ok(&self.lock_file()?.state)
    }

    /// memorix.lock's text as [`Project::read_lock`] read it; `None` when there is none.
    pub fn lock_text(&self) -> Result<Option<&str>> {
        Ok(self.lock_file()?.text.as_deref())
    }

    /// The lock when it is clean (missing, conflicted or corrupt: `None`).
    pub fn clean_lock(&self) -> Result<Option<&Lockfile>> {
        Ok(match self.read_lock()? {
            LockState::Clean(l) => Some(l),
            _ => None,
        })
    }

    fn lock_file(&self) -> Result<&LockFile> {
        if let Some(read) = self.lock_file.get() {
            return Ok(read);
        }
        super::trace::Trace::count(&super::trace::LOCK_READS);
        let text = crate::confine::read_text(&self.lock_path)?;
        let state = match &text {
            None => LockState::Missing,
            Some(text) => match lock::conflict_sides(text) {
                Some((_, _, line)) => LockState::Conflicted { line },
                None => match self.parse_lock(text) {
                    Ok(lock) => LockState::Clean(lock),
                    Err(e @ crate::lock::Error::Corrupt { .. }) => LockState::Corrupt(e),
                    Err(e) => return Err(e.into()),
                },
            },
        };
        Ok(self.lock_file.get_or_init(|| LockFile { text, state }))
    }

    /// Per mount, the pin files memorix.lock says pinned its libraries (none without a clean
    /// lock), which the indexes of the memory directory name.
    pub fn pin_files(&self) -> Result<std::collections::BTreeMap<String, Vec<String>>> {
        Ok(self.clean_lock()?.map(Lockfile::pin_files).unwrap_or_default())
    }

    /// Parses lock text (the file, or one side of a conflict in it).
    pub fn parse_lock(&self, text: &str) -> std::result::Result<Lockfile, crate::lock::Error> {
        super::trace::Trace::count(&super::trace::LOCK_PARSES);
        Lockfile::parse(text, &self.lock_path)
    }

    /// What this project needs from the Store, for `gc` to keep: the objects its lock names and
    /// the environments its profile can go back to.
    pub fn roots(&self, lock: &Lockfile) -> Result<ProjectRoots> {
        let real = self.confined.real();
        let mut roots = ProjectRoots {
            project: real.display().to_string(),
            manifest: real.join(manifest::FILE).display().to_string(),
            ..ProjectRoots::default()
        };
        roots.environments.insert(lock.environment.id);
        let profile = crate::profile::Profile::load(&self.state_dir)?;
        roots.environments.extend(profile.bindings.iter().map(|b| b.environment));
        // The CHANGES.md each binding delivers, and those of the last update, which the
        // binding this build makes delivers (book: design/outlines.md#changes).
        let delivered = profile.bindings.iter().flat_map(|b| b.moved.iter().flatten());
        roots.blobs.extend(delivered.chain(&self.moved()).map(|m| m.changes));
        for mount in lock.mounts.values() {
            roots.derivations.insert(mount.derivation);
            for l in &mount.locators {
                match l.kind {
                    EntryKind::Tree => roots.trees.insert(l.id),
                    EntryKind::Blob => roots.blobs.insert(l.id),
                };
                if let (Some(g), Ok(loc)) = (l.generation, Locator::parse(&l.locator)) {
                    roots.generations.insert((loc.kind, g));
                }
            }
        }
        Ok(roots)
    }

    /// The versions the last update moved, `.memorix/moved.json` (none when there is no
    /// record, or it does not read).
    pub fn moved(&self) -> Vec<crate::model::moved::Moved> {
        let text = std::fs::read(self.state_dir.join(MOVED)).ok();
        text.and_then(|t| serde_json::from_slice(&t).ok()).unwrap_or_default()
    }

    /// Writes the lock only when its text changed; true when written.
    pub fn write_lock(&self, lock: &Lockfile, previous_text: Option<&str>) -> Result<bool> {
        let text = lock.to_text();
        if previous_text == Some(text.as_str()) {
            return Ok(false);
        }
        fsutil::create_dir(&self.state_dir)?;
        crate::fault::point("lock.write");
        fsutil::write_atomic(&self.state_dir, &self.lock_path, text.as_bytes())?;
        Ok(true)
    }
}
