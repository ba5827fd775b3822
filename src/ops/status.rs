//! `memorix status [--check]` and `memorix update --dry-run`: which mounts the Store has moved
//! past, and what an update would change. Nothing is written.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use super::error::Result;
use super::project::{LockState, Project};
use crate::resolve::preview::{MountPreview, MountState, preview};
use crate::store::Store;

#[derive(Debug, Serialize)]
pub struct Status {
    /// Every mount is fresh and locked.
    pub fresh: bool,
    /// memorix.lock is missing or holds merge-conflict markers.
    pub lock_problem: Option<String>,
    pub mounts: Vec<MountPreview>,
}

/// `only`: the mounts to look at (all when `None`).
pub fn status(start: &Path, store_root: &Path, only: Option<&BTreeSet<String>>) -> Result<Status> {
    let project = Project::open(start)?;
    let (lock, lock_problem) = match project.read_lock()? {
        LockState::Clean(l, _) => (Some(l), None),
        LockState::Missing => (None, Some("memorix.lock is missing; run `memorix lock`".to_string())),
        LockState::Conflicted { line, .. } => {
            (None, Some(format!("memorix.lock has merge-conflict markers (line {line}); run `memorix lock`")))
        }
    };
    let store = Store::open(store_root)?;
    let mounts = preview(&project.manifest, &store, lock.as_ref(), only)?;
    let fresh = lock_problem.is_none() && mounts.iter().all(|m| m.state == MountState::Fresh);
    Ok(Status { fresh, lock_problem, mounts })
}
