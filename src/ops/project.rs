//! A project: its manifest, lock, `.memorix/` directory and the project lock writers take
//! before the store lock.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::lock::{self, Lockfile};
use crate::manifest::{self, Manifest};
use crate::progress::Progress;
use crate::store::fsutil;

pub struct Project {
    pub manifest: Manifest,
    pub lock_path: PathBuf,
    /// `.memorix/`
    pub state_dir: PathBuf,
}

/// The lock file's state on disk.
pub enum LockState {
    Missing,
    Clean(Lockfile, String),
    /// Git merge-conflict markers; the line of the first one.
    Conflicted {
        text: String,
        line: usize,
    },
}

impl Project {
    /// Finds and validates the manifest from `start` upwards.
    pub fn open(start: &Path) -> Result<Project> {
        let path = manifest::find(start)?;
        let manifest = manifest::load(&path, start)?;
        let lock_path = manifest.dir.join(lock::FILE);
        let state_dir = manifest.dir.join(".memorix");
        Ok(Project { manifest, lock_path, state_dir })
    }

    /// Takes `.memorix/lock` (always before the store's lock).
    pub fn lock(&self, progress: &dyn Progress) -> Result<File> {
        fsutil::create_dir(&self.state_dir)?;
        Ok(crate::store::lock::lock_exclusive(&self.state_dir, progress)?)
    }

    pub fn read_lock(&self) -> Result<LockState> {
        let text = match std::fs::read_to_string(&self.lock_path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockState::Missing),
            Err(e) => return Err(Error::io("read", &self.lock_path)(e)),
        };
        if let Some((_, _, line)) = lock::conflict_sides(&text) {
            return Ok(LockState::Conflicted { text, line });
        }
        Ok(LockState::Clean(Lockfile::parse(&text, &self.lock_path)?, text))
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
