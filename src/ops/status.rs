//! `memorix status [--check]` and `memorix update --dry-run`: whether the lock holds (the
//! same verdict as `lock --check` and `build --locked`), what `update` would change per mount,
//! and whether `.memory/` shows the lock's environment as it was delivered.

use std::collections::BTreeSet;

use serde::Serialize;

use super::context::Context;
use super::error::Result;
use super::project::{LockState, Project};
use crate::deliver::{self, ActivationRecord, Delivery, Drift, Look};
use crate::model::Id;
use crate::profile::Profile;
use crate::remote::transfer::FetchReport;
use crate::resolve::preview::{MountPreview, MountState, preview};
use crate::store::Store;

#[derive(Debug, Serialize)]
pub struct Status {
    /// The lock holds: what `lock --check` and `build --locked` say too.
    pub fresh: bool,
    /// memorix.lock is missing or holds merge-conflict markers.
    pub lock_problem: Option<String>,
    /// Why the lock is stale, one line each (as `lock --check` prints them).
    pub problems: Vec<String>,
    pub mounts: Vec<MountPreview>,
    /// What `.memory/` shows.
    pub delivery: DeliveryState,
    /// Objects of the lock fetched from the substituters first.
    #[serde(skip_serializing_if = "FetchReport::is_empty")]
    pub substituted: FetchReport,
}

/// The project's delivered memory compared with its profile and its lock.
#[derive(Debug, Default, Serialize)]
pub struct DeliveryState {
    /// The memory directory, as memorix.toml names it.
    pub memory: String,
    /// The environment the profile's current generation binds (none before the first build).
    pub environment: Option<Id>,
    pub generation: Option<u64>,
    /// The profile was rolled back: a later generation exists.
    pub rolled_back: bool,
    /// The lock's environment is not the active one (a rollback, or the lock changed since
    /// the last build).
    pub lock_not_active: bool,
    /// The memory directory is gone (`rm -rf .memory`): every file is in `drift.missing`.
    pub deleted: bool,
    /// Files edited, missing, foreign or purged in `.memory/`.
    pub drift: Drift,
    /// Agent harness files that are not what `memorix build` writes: (path, why).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub harness: Vec<(String, String)>,
}

impl DeliveryState {
    /// `.memory/` shows the lock's environment exactly as it was delivered.
    pub fn ok(&self) -> bool {
        self.environment.is_some()
            && !self.lock_not_active
            && self.drift.is_clean()
            && self.harness.is_empty()
    }
}

/// `only`: the mounts to look at (all when `None`). Objects the lock names that the Store lacks
/// are fetched first unless offline; when none can be had the lock cannot be judged (an error).
pub fn status(ctx: &Context, only: Option<&BTreeSet<String>>) -> Result<Status> {
    let project = ctx.project()?;
    let (lock, lock_problem) = match project.read_lock()? {
        LockState::Clean(l) => (Some(l), None),
        LockState::Missing => (None, Some("memorix.lock is missing; run `memorix lock`".to_string())),
        LockState::Conflicted { line } => {
            (None, Some(format!("memorix.lock has merge-conflict markers (line {line}); run `memorix lock`")))
        }
        LockState::Corrupt(e) => (None, Some(format!("{e}; run `memorix lock` to write it again"))),
    };
    let store = ctx.store_or_create()?;
    let mut obtained = super::obtain::obtain(ctx, &ctx.writer()?)?;
    let mut problems = Vec::new();
    let mut stale = Default::default();
    if lock.is_some() {
        let (report, _) = super::obtain::check_project(ctx, false)?;
        let report = obtained.judge(report, "check memorix.lock")?;
        problems = report.problems;
        stale = report.stale;
    }
    let mut mounts = preview(&project.manifest, store, lock, only)?;
    for m in &mut mounts {
        if let (Some(why), MountState::Fresh | MountState::UpdateAvailable) = (stale.get(&m.mount), m.state) {
            m.state = MountState::Stale;
            m.why = Some(why.clone());
        }
    }
    let fresh = lock_problem.is_none() && problems.is_empty();
    let delivery = delivery_state(store, project, lock.map(|l| l.environment.id))?;
    Ok(Status { fresh, lock_problem, problems, mounts, delivery, substituted: obtained.substituted })
}

/// What `.memory/` shows against the profile and the lock's environment `locked`.
fn delivery_state(store: &Store, project: &Project, locked: Option<Id>) -> Result<DeliveryState> {
    let m = &project.manifest;
    let profile = Profile::load(&project.state_dir)?;
    let Some(current) = profile.current() else {
        return Ok(DeliveryState { memory: m.memory.to_string(), ..DeliveryState::default() });
    };
    // The environment's files are read only where something needs them: a `.memory/` that
    // the activation record no longer vouches for, or the agent harness files.
    let delivery = std::cell::OnceCell::new();
    let delivery = || -> Result<&Delivery> {
        if let Some(d) = delivery.get() {
            return Ok(d);
        }
        let mut d = Delivery::from_store(store, current.environment, Some(m), current.generation)?;
        d.pinned_by(&project.pin_files()?);
        Ok(delivery.get_or_init(|| d))
    };
    let record = ActivationRecord::load(&project.state_dir);
    let record = record.filter(|r| r.environment == Some(current.environment));
    let memory = m.memory_dir();
    let drift = match record.as_ref().filter(|r| r.holds(store, &memory, Look::Everything)) {
        Some(r) => deliver::Drift { files: r.files.len(), ..Default::default() },
        None => deliver::inspect(store, &memory, delivery()?, m.delivery, record.as_ref())?,
    };
    if !drift.is_clean() {
        // So that `memorix build` repairs what this found.
        super::build::forget_stamp(project);
    }
    Ok(DeliveryState {
        memory: m.memory.to_string(),
        environment: Some(current.environment),
        generation: Some(current.generation),
        rolled_back: profile.bindings.iter().any(|b| b.generation > current.generation),
        lock_not_active: locked.is_some_and(|l| l != current.environment),
        deleted: !memory.exists(),
        drift,
        harness: harness_drift(project, delivery)?,
    })
}

/// The agent harness files `memorix build` would write or remove, and why; a user's file in
/// the way or damaged block markers are reported the same way.
fn harness_drift<'d>(
    project: &Project,
    delivery: impl FnOnce() -> Result<&'d Delivery>,
) -> Result<Vec<(String, String)>> {
    let spec = crate::harness::spec(&project.manifest);
    if spec.is_none() && crate::harness::sync::Record::load(&project.state_dir).is_none() {
        return Ok(Vec::new());
    }
    let Some(wanted) = super::build::harness_outputs(project, delivery()?, spec.as_ref()) else {
        return Ok(Vec::new());
    };
    Ok(match crate::harness::sync::plan(&project.confined, &wanted) {
        Ok(plan) => plan.problems(),
        Err(e) => vec![(String::new(), e.to_string())],
    })
}
