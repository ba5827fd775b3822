//! `memorix lock [--check]`: write memorix.lock (only what changed), or check it.

use std::path::Path;

use serde::Serialize;

use crate::diagnostics::{Error, Result};
use crate::lock::{self, Lockfile};
use crate::model::Id;
use crate::progress::Progress;
use crate::resolve::{self, CheckReport, Refresh, Resolution};
use crate::store::{Store, Writer};
use super::project::{LockState, Project};

#[derive(Debug, Serialize)]
pub struct LockOutcome {
    /// False when the lock's text did not change.
    pub written: bool,
    /// Mounts resolved afresh.
    pub resolved: Vec<String>,
    /// The old lock held git merge-conflict markers.
    pub healed: bool,
    pub environment: Id,
}

pub fn lock(start: &Path, store_root: &Path, progress: &dyn Progress) -> Result<LockOutcome> {
    let project = Project::open(start)?;
    let _project_lock = project.lock(progress)?;
    let store = Store::open_or_create(store_root, progress)?;
    let writer = store.writer(progress)?;
    super::heal_latest(&writer)?;
    let (_, outcome) = lock_with(&project, &writer, &Refresh::Nothing, progress)?;
    Ok(outcome)
}

/// Resolves and writes the lock under held project and store locks.
pub(crate) fn lock_with(
    project: &Project,
    writer: &Writer,
    refresh: &Refresh,
    progress: &dyn Progress,
) -> Result<(Resolution, LockOutcome)> {
    let (previous, previous_text, healed) = match project.read_lock()? {
        LockState::Missing => (None, None, false),
        LockState::Clean(l, t) => (Some(l), Some(t), false),
        LockState::Conflicted { text, .. } => {
            let (ours, theirs, _) = lock::conflict_sides(&text).expect("conflicted");
            let parse = |t: &str| Lockfile::parse(t, &project.lock_path).ok();
            let (merged, _) = lock::merge_sides(parse(&ours), parse(&theirs));
            (merged, Some(text), true)
        }
    };
    let resolution = resolve::resolve(&project.manifest, writer, previous.as_ref(), refresh, progress)?;
    let written = project.write_lock(&resolution.lock, previous_text.as_deref())?;
    let outcome = LockOutcome {
        written,
        resolved: resolution.resolved.clone(),
        healed,
        environment: resolution.lock.environment.id,
    };
    Ok((resolution, outcome))
}

/// `lock --check`: never writes; reports why the lock is stale or does not recompute.
pub fn check(start: &Path, store_root: &Path) -> Result<CheckReport> {
    let project = Project::open(start)?;
    Ok(check_project(&project, store_root)?.0)
}

pub(crate) fn check_project(
    project: &Project,
    store_root: &Path,
) -> Result<(CheckReport, Option<Resolution>)> {
    let problem = |p: String| Ok((CheckReport { ok: false, problems: vec![p] }, None));
    let lock = match project.read_lock()? {
        LockState::Missing => return problem("memorix.lock is missing; run `memorix lock`".into()),
        LockState::Conflicted { line, .. } => {
            return problem(format!(
                "memorix.lock has git merge-conflict markers (the first at line {line}); run `memorix lock` to heal it"
            ));
        }
        LockState::Clean(l, _) => l,
    };
    let store = match Store::open(store_root) {
        Ok(s) => Some(s),
        Err(Error::StoreMissing { .. }) => None,
        Err(e) => return Err(e),
    };
    resolve::check(&project.manifest, store.as_ref(), &lock)
}
