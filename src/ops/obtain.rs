//! What `build --locked`, `lock --check`, `status` and `lock` share: obtaining what the Store
//! lacks of memorix.lock (from the substituters, git sources at their locked commits, pinned
//! docs from their registries), and the one verdict on a lock.

use super::context::Context;
use super::error::{Error, Result};
use super::git_sources::ensure_locked_git;
use super::project::LockState;
use crate::remote::transfer::{self, FetchReport, Substituters};
use crate::resolve::{self, CheckReport, Resolution};
use crate::store::Writer;

/// For `build --locked`: fetches what the store lacks of the project's lock from the
/// substituters (`[store] substituters`, then the user's remotes). Touches no remote, and
/// reads no remote configuration, when the store has everything.
pub(crate) fn substitute(ctx: &Context, writer: &Writer) -> Result<FetchReport> {
    let project = ctx.project()?;
    let Some(lock) = project.clean_lock()? else { return Ok(FetchReport::default()) };
    if !transfer::lacks(writer.store, lock) {
        return Ok(FetchReport::default());
    }
    let urls = ctx.net.substituters(&project.manifest)?;
    let mut subs = Substituters::new(urls, ctx.net.offline, ctx.progress);
    let report = transfer::fetch_lock(writer, &mut subs, lock)?;
    // Each unreachable substituter was skipped for the next; when none could give what the
    // lock needs and one was unreachable, that is the failure to report.
    match subs.take_failure() {
        Some(unreachable) if !report.unavailable.is_empty() => Err(unreachable.into()),
        _ => Ok(report),
    }
}

/// Git sources the lock pins whose content the Store lacks are fetched at their locked commit
/// (after the substituters had their chance), unless offline.
pub(crate) fn ensure_locked_git_sources(ctx: &Context, writer: &Writer) -> Result<()> {
    match ctx.project()?.clean_lock()? {
        Some(lock) => ensure_locked_git(ctx, writer, lock),
        None => Ok(()),
    }
}

/// What a check obtained of the lock's objects before judging: from the substituters, git
/// sources at their locked commits, and the registries for fetched docs.
pub(crate) struct Obtained {
    pub substituted: FetchReport,
    pub fetched: Vec<crate::fetch::Fetched>,
    /// Why a registry fetch that would have filled the Store did not happen.
    fetch_failure: Option<Box<crate::fetch::Error>>,
}

/// Obtains what the Store lacks of the lock the way `build --locked` does, unless offline.
pub(crate) fn obtain(ctx: &Context, writer: &Writer) -> Result<Obtained> {
    let substituted = substitute(ctx, writer)?;
    ensure_locked_git_sources(ctx, writer)?;
    let mut fetching = super::fetch::fetch_pinned(ctx, writer, true)?;
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
pub(crate) fn objects_missing(fetched: &FetchReport, missing: &[String], verb: &'static str) -> Error {
    let missing = if fetched.unavailable.is_empty() { missing } else { &fetched.unavailable };
    let why = match fetched.why() {
        "" => "fetch them from a substituter (`memorix pull`)".to_string(),
        why => why.to_string(),
    };
    Error::ObjectsMissing { verb, count: missing.len(), first: missing[0].clone(), why }
}

/// The lock checked against the manifest and the Store; with `realise`, the plans to realise
/// it (see [`resolve::check`]).
pub(crate) fn check_project(ctx: &Context, realise: bool) -> Result<(CheckReport, Option<Resolution>)> {
    let problem = |p: String| Ok((CheckReport { problems: vec![p], ..CheckReport::default() }, None));
    let project = ctx.project()?;
    let lock = match project.read_lock()? {
        LockState::Missing => return problem("memorix.lock is missing; run `memorix lock`".into()),
        LockState::Conflicted { line } => {
            return problem(format!(
                "memorix.lock has git merge-conflict markers (the first at line {line}); run `memorix lock` to heal it"
            ));
        }
        LockState::Corrupt(e) => return problem(format!("{e}; run `memorix lock` to write it again")),
        LockState::Clean(l) => l,
    };
    Ok(resolve::check(&project.manifest, ctx.existing_store()?, lock, realise)?)
}
