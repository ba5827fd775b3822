//! The profile: the project's binding history of environments with a `current` pointer
//! (`.memorix/profile.toml`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use miette::Diagnostic;

use crate::diagnostics::{FromIo, IoError};
use crate::model::Id;
use crate::store::fsutil;

pub const FILE: &str = "profile.toml";

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error("corrupt profile {}: {reason}", path.display())]
    #[diagnostic(
        code(memorix::profile::corrupt),
        help(
            "memorix writes this file; restore it from a backup, or delete it and run `memorix build` to start a new profile"
        )
    )]
    Corrupt { path: PathBuf, reason: String },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The binding generation `.memory/` shows.
    pub current: Option<u64>,
    #[serde(default)]
    pub bindings: Vec<Binding>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Binding {
    pub generation: u64,
    pub environment: Id,
    pub reason: String,
    pub time: String,
    /// What generated the agent harness files (`[agents]`), so a rollback writes those of its
    /// time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<crate::model::harness::AgentsSpec>,
    /// The moved libraries whose `CHANGES.md` it delivers, so a rollback places them again and
    /// `gc` keeps them; `None` for a binding recorded before memorix kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<Vec<crate::model::moved::Moved>>,
}

impl Profile {
    pub fn path(memorix_dir: &Path) -> PathBuf {
        memorix_dir.join(FILE)
    }

    pub fn load(memorix_dir: &Path) -> Result<Profile> {
        let path = Profile::path(memorix_dir);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Profile::default()),
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        toml::from_str(&text).map_err(|e| Error::Corrupt { path, reason: e.message().to_string() })
    }

    /// Writes the profile atomically (temp file + rename).
    pub fn save(&self, memorix_dir: &Path) -> Result<()> {
        let text = toml::to_string(self).expect("a profile serializes");
        let text =
            format!("# The environments this project's memory has been bound to; `current` is live.\n{text}");
        Ok(fsutil::write_atomic(memorix_dir, &Profile::path(memorix_dir), text.as_bytes())?)
    }

    pub fn current(&self) -> Option<&Binding> {
        let g = self.current?;
        self.bindings.iter().find(|b| b.generation == g)
    }

    /// Appends a binding to `environment` and makes it current; returns its generation.
    pub fn bind(&mut self, environment: Id, reason: &str, time: String) -> u64 {
        let generation = self.bindings.last().map_or(1, |b| b.generation + 1);
        self.bindings.push(Binding {
            generation,
            environment,
            reason: reason.to_string(),
            time,
            agents: None,
            moved: None,
        });
        self.current = Some(generation);
        generation
    }
}
