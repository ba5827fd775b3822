//! `memorix lock [--check]`: write memorix.lock (only what changed), or check it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::error::{Error, Result};
use super::git_sources::{SourceMove, ensure_locked_git, ingest_git_sources};
use super::project::{LockState, Project};
use crate::lock::{self, LockedSource, Lockfile};
use crate::manifest::Manifest;
use crate::model::Id;
use crate::progress::Progress;
use crate::remote::transfer::FetchReport;
use crate::resolve::{self, CheckReport, Refresh, Resolution};
use crate::store::ingest::{Ingest, VersionLabel};
use crate::store::source;
use crate::store::{Store, Writer};

#[derive(Debug, Serialize)]
pub struct LockOutcome {
    /// False when the lock's text did not change.
    pub written: bool,
    /// Git sources whose locked commit moved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sources_moved: Vec<SourceMove>,
    /// Mounts resolved afresh.
    pub resolved: Vec<String>,
    /// The old lock held git merge-conflict markers, or was not a valid lock.
    pub healed: Option<Healed>,
    pub environment: Id,
    /// Pinned docs fetched from their registries first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<crate::fetch::Fetched>,
    /// Library versions the new lock moved, mount by mount.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<VersionMove>,
}

/// One library whose version a mount's lock entry moved (`regex 1.12.2 -> 1.11.1`).
#[derive(Debug, Clone, Serialize)]
pub struct VersionMove {
    pub mount: String,
    pub library: String,
    pub from: String,
    pub to: String,
}

/// The versions `now` moved from `previous`: for each locator that a library's version
/// decides (`@pin`, `@v`), the pinned version (else the one the docs carry) when it changed.
fn version_moves(previous: Option<&Lockfile>, now: &Lockfile) -> Vec<VersionMove> {
    let version = |l: &crate::lock::LockedLocator| -> Option<(String, String)> {
        match (&l.pin, &l.version) {
            (Some(p), _) => Some((p.library.clone(), p.version.clone())),
            (None, Some(v)) => Some((l.locator.clone(), v.clone())),
            (None, None) => None,
        }
    };
    let mut out = Vec::new();
    for (mount, entry) in &now.mounts {
        let Some(before) = previous.and_then(|p| p.mounts.get(mount)) else { continue };
        for (old, new) in before.locators.iter().zip(&entry.locators) {
            if let (Some((_, from)), Some((library, to))) = (version(old), version(new))
                && old.locator == new.locator
                && from != to
            {
                out.push(VersionMove { mount: mount.clone(), library, from, to });
            }
        }
    }
    out
}

/// What was wrong with the lock `memorix lock` replaced.
#[derive(Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Healed {
    /// Git merge-conflict markers: the two sides were merged mount by mount.
    Conflict,
    /// Not a valid lock (why): every mount was resolved afresh.
    Corrupt(String),
}

pub fn lock(start: &Path, store_root: &Path, offline: bool, progress: &dyn Progress) -> Result<LockOutcome> {
    let project = Project::open(start)?;
    let _project_lock = project.lock(progress)?;
    let store = Store::open_or_create(store_root, progress)?;
    let writer = store.writer(progress)?;
    writer.heal_latest()?;
    let (resolution, outcome) = lock_with(&project, &writer, &Refresh::Nothing, offline, progress)?;
    writer.record_project(&project.roots(&resolution.lock)?)?;
    Ok(outcome)
}

/// Resolves and writes the lock under held project and store locks. What the Store lacks of
/// the old lock is fetched first, as `build --locked` does, so a fresh clone resolves the same.
pub(crate) fn lock_with(
    project: &Project,
    writer: &Writer,
    refresh: &Refresh,
    offline: bool,
    progress: &dyn Progress,
) -> Result<(Resolution, LockOutcome)> {
    let fetched = super::remote::substitute(project, writer, offline, progress);
    let (previous, previous_text, healed) = match project.read_lock()? {
        LockState::Missing => (None, None, None),
        LockState::Clean(l, t) => (Some(l), Some(t), None),
        LockState::Conflicted { text, .. } => {
            let (ours, theirs, _) = lock::conflict_sides(&text).expect("conflicted");
            let parse = |t: &str| Lockfile::parse(t, &project.lock_path).ok();
            let (merged, _) = lock::merge_sides(parse(&ours), parse(&theirs));
            (merged, Some(text), Some(Healed::Conflict))
        }
        // Nothing in it can be trusted: resolved afresh, as with no lock.
        LockState::Corrupt(e) => (None, None, Some(Healed::Corrupt(e.to_string()))),
    };
    // The project's own sources first: a version they hold is never fetched.
    let mut sources = ingest_sources(&project.manifest, writer, progress)?;
    let (git, sources_moved) =
        ingest_git_sources(project, writer, previous.as_ref(), refresh, offline, progress)?;
    sources.extend(git);
    let mut fetching = super::fetch::fetch_pinned(project, writer, offline, progress)?;
    fetching.check()?;
    let fetched_docs = std::mem::take(&mut fetching.fetched);
    let resolution =
        match resolve::resolve(&project.manifest, writer.store, previous.as_ref(), refresh, sources) {
            Err(e) if e.missing_object().is_some() => {
                if let Some(failure) = fetching.into_failure() {
                    return Err(failure.into());
                }
                let (what, id) = e.missing_object().expect("just matched");
                return Err(objects_missing(&fetched?, &[format!("{what} {id}")], "resolve memorix.toml"));
            }
            Err(e) => return Err(fetching.explain(e)),
            Ok(r) => r,
        };
    for (key, derivation) in &resolution.planned {
        writer.remember_plan(key, derivation)?;
    }
    let written = project.write_lock(&resolution.lock, previous_text.as_deref())?;
    let moved = version_moves(previous.as_ref(), &resolution.lock);
    let outcome = LockOutcome {
        moved,
        sources_moved,
        written,
        resolved: resolution.resolved.clone(),
        healed,
        environment: resolution.lock.environment.id,
        fetched: fetched_docs,
    };
    Ok((resolution, outcome))
}

/// Ingests each `[sources]` folder into the Store (before resolving, which only reads it);
/// returns the lock entry of each source by its key.
pub(crate) fn ingest_sources(
    m: &Manifest,
    writer: &Writer,
    progress: &dyn Progress,
) -> Result<BTreeMap<String, LockedSource>> {
    let mut out = BTreeMap::new();
    let project = m.name.as_deref().unwrap_or("the project");
    for s in &m.sources {
        let label = s.version.clone().map(|version| VersionLabel { version, library: None });
        let request = Ingest {
            dest: &s.dest,
            layout: source::layout(&s.dest, &[m.dir.join(s.folder.as_str())])?,
            merge: false,
            label: label.as_ref(),
            message: Some(format!("[sources] of {project}")),
        };
        let outcome = writer.ingest(request, progress)?;
        let hash = outcome.content(writer.store, &s.dest)?;
        out.insert(
            s.key(),
            LockedSource { path: s.folder.to_string(), hash, git: None, follows: None, commit: None },
        );
    }
    Ok(out)
}

/// Git sources the lock pins whose content the Store lacks are fetched at their locked commit
/// (after the substituters had their chance), unless `offline`.
pub(crate) fn ensure_locked_git_sources(
    project: &Project,
    writer: &Writer,
    offline: bool,
    progress: &dyn Progress,
) -> Result<()> {
    match project.read_lock()? {
        LockState::Clean(lock, _) => ensure_locked_git(project, writer, &lock, offline, progress),
        _ => Ok(()),
    }
}

/// `lock --check`: never writes the lock; fetches what the Store lacks of it, then reports
/// why it is stale (exit 1), or that it cannot be judged here (the error).
pub fn check(start: &Path, store_root: &Path, offline: bool, progress: &dyn Progress) -> Result<CheckReport> {
    let project = Project::open(start)?;
    let store = Store::open_or_create(store_root, progress)?;
    let mut obtained = obtain(&project, &store.writer(progress)?, offline, progress)?;
    let (report, _) = check_project(&project, store_root, false)?;
    obtained.judge(report, "check memorix.lock")
}

/// What a check obtained of the lock's objects before judging: from the substituters, git
/// sources at their locked commits, and the registries for fetched docs.
pub(crate) struct Obtained {
    pub substituted: FetchReport,
    pub fetched: Vec<crate::fetch::Fetched>,
    /// Why a registry fetch that would have filled the Store did not happen.
    fetch_failure: Option<Box<crate::fetch::Error>>,
}

/// Obtains what the Store lacks of the lock the way `build --locked` does, unless `offline`.
pub(crate) fn obtain(
    project: &Project,
    writer: &Writer,
    offline: bool,
    progress: &dyn Progress,
) -> Result<Obtained> {
    let substituted = super::remote::substitute(project, writer, offline, progress)?;
    ensure_locked_git_sources(project, writer, offline, progress)?;
    let mut fetching = super::fetch::fetch_pinned(project, writer, offline, progress)?;
    fetching.check()?;
    let fetched = std::mem::take(&mut fetching.fetched);
    Ok(Obtained { substituted, fetched, fetch_failure: fetching.into_failure() })
}

impl Obtained {
    /// [`judge`], where objects still missing because a registry fetch failed show that failure
    /// (the objects are missing because fetching them failed: that is the error to show).
    pub(crate) fn judge(&mut self, report: CheckReport, verb: &'static str) -> Result<CheckReport> {
        match (judge(report, &self.substituted, verb), self.fetch_failure.take()) {
            (Err(_), Some(failure)) => Err(failure.into()),
            (judged, _) => judged,
        }
    }
}

/// The one verdict on a lock, shared by `status --check`, `lock --check` and `build --locked`:
/// stale (the report says why), or fresh; objects missing from this Store are neither, but an
/// error naming them (`verb` says what could not be done).
pub(crate) fn judge(report: CheckReport, fetched: &FetchReport, verb: &'static str) -> Result<CheckReport> {
    if !report.problems.is_empty() || report.missing.is_empty() {
        return Ok(report);
    }
    Err(objects_missing(fetched, &report.missing, verb))
}

/// The error for objects the lock names that neither this Store nor a substituter has.
fn objects_missing(fetched: &FetchReport, missing: &[String], verb: &'static str) -> Error {
    let missing = if fetched.unavailable.is_empty() { missing } else { &fetched.unavailable };
    let why = match fetched.why() {
        "" => "fetch them from a substituter (`memorix pull`)".to_string(),
        why => why.to_string(),
    };
    Error::ObjectsMissing { verb, count: missing.len(), first: missing[0].clone(), why }
}

/// The lock checked against the manifest and the Store; with `realise`, the plans to realise
/// it (see [`resolve::check`]).
pub(crate) fn check_project(
    project: &Project,
    store_root: &Path,
    realise: bool,
) -> Result<(CheckReport, Option<Resolution>)> {
    let problem = |p: String| Ok((CheckReport { problems: vec![p], ..CheckReport::default() }, None));
    let lock = match project.read_lock()? {
        LockState::Missing => return problem("memorix.lock is missing; run `memorix lock`".into()),
        LockState::Conflicted { line, .. } => {
            return problem(format!(
                "memorix.lock has git merge-conflict markers (the first at line {line}); run `memorix lock` to heal it"
            ));
        }
        LockState::Corrupt(e) => return problem(format!("{e}; run `memorix lock` to write it again")),
        LockState::Clean(l, _) => l,
    };
    let store = match Store::open(store_root) {
        Ok(s) => Some(s),
        Err(crate::store::Error::StoreMissing { .. }) => None,
        Err(e) => return Err(e.into()),
    };
    Ok(resolve::check(&project.manifest, store.as_ref(), &lock, realise)?)
}
