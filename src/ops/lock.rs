//! `memorix lock [--check]`: write memorix.lock (only what changed), or check it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::context::Context;
use super::error::Result;
use super::git_sources::{SourceMove, ingest_git_sources};
use super::obtain::{check_project, objects_missing, obtain};
use super::project::LockState;
use crate::lock::{self, LockedSource, Lockfile};
use crate::model::Id;
use crate::resolve::{self, CheckReport, Refresh, Resolution};
use crate::store::Writer;
use crate::store::objects;
use crate::store::records::{Ingest, VersionLabel};

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
    /// The locator's entry in the previous lock and in the new one (what `CHANGES.md` compares).
    #[serde(skip)]
    pub before: Option<crate::lock::LockedLocator>,
    #[serde(skip)]
    pub after: Option<crate::lock::LockedLocator>,
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
                let (before, after) = (Some(old.clone()), Some(new.clone()));
                out.push(VersionMove { mount: mount.clone(), library, from, to, before, after });
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

pub fn lock(ctx: &mut Context) -> Result<LockOutcome> {
    let _project_lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let writer = ctx.writer()?;
    writer.maintenance().heal_latest()?;
    let (resolution, outcome) = lock_with(ctx, &writer, &Refresh::Nothing)?;
    writer.records().record_project(&ctx.project()?.roots(&resolution.lock)?)?;
    Ok(outcome)
}

/// Resolves and writes the lock under held project and store locks. What the Store lacks of
/// the old lock is fetched first, as `build --locked` does, so a fresh clone resolves the same.
pub(crate) fn lock_with(
    ctx: &Context,
    writer: &Writer,
    refresh: &Refresh,
) -> Result<(Resolution, LockOutcome)> {
    let project = ctx.project()?;
    let fetched = super::obtain::substitute(ctx, writer);
    let previous_text = project.lock_text()?;
    let (previous, healed) = match project.read_lock()? {
        LockState::Missing => (None, None),
        LockState::Clean(l) => (Some(l.clone()), None),
        LockState::Conflicted { .. } => {
            let text = previous_text.expect("a conflicted lock has text");
            let (ours, theirs, _) = lock::conflict_sides(text).expect("conflicted");
            let parse = |t: &str| project.parse_lock(t).ok();
            let (merged, _) = lock::merge_sides(parse(&ours), parse(&theirs));
            (merged, Some(Healed::Conflict))
        }
        // Nothing in it can be trusted: resolved afresh, as with no lock.
        LockState::Corrupt(e) => (None, Some(Healed::Corrupt(e.to_string()))),
    };
    let previous_text = if matches!(healed, Some(Healed::Corrupt(_))) { None } else { previous_text };
    // The project's own sources first: a version they hold is never fetched.
    let mut sources = ingest_sources(ctx, writer)?;
    let (git, sources_moved) = ingest_git_sources(ctx, writer, previous.as_ref(), refresh)?;
    sources.extend(git);
    let mut fetching = super::fetch::fetch_pinned(ctx, writer, false)?;
    fetching.check()?;
    let fetched_docs = std::mem::take(&mut fetching.fetched);
    let sticky = without_refetched(previous.as_ref(), &fetched_docs);
    let resolution =
        match resolve::resolve(&project.manifest, writer.store, sticky.as_ref(), refresh, sources) {
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
        writer.records().remember_plan(key, derivation)?;
    }
    let written = project.write_lock(&resolution.lock, previous_text)?;
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

/// The previous lock without the mounts whose fetched docs this memorix unpacked to another
/// tree than the lock has (its docs view or `[fetch.LIB]` changed): those resolve afresh to the
/// new tree, as the tree_mismatch help promises; the artifact was held to the lock's hash.
fn without_refetched(previous: Option<&Lockfile>, fetched: &[crate::fetch::Fetched]) -> Option<Lockfile> {
    let mut lock = previous?.clone();
    lock.mounts.retain(|_, mount| {
        !mount.locators.iter().any(|e| {
            e.fetched
                .as_ref()
                .is_some_and(|f| fetched.iter().any(|d| d.artifact == f.artifact && d.tree != e.id))
        })
    });
    Some(lock)
}

/// Ingests each `[sources]` folder into the Store (before resolving, which only reads it);
/// returns the lock entry of each source by its key.
pub(crate) fn ingest_sources(ctx: &Context, writer: &Writer) -> Result<BTreeMap<String, LockedSource>> {
    let m = &ctx.project()?.manifest;
    let mut out = BTreeMap::new();
    let project = m.name.as_deref().unwrap_or("the project");
    for s in &m.sources {
        let label = s.version.clone().map(|version| VersionLabel { version, library: None });
        let request = Ingest {
            dest: &s.dest,
            layout: objects::layout(&s.dest, &[m.dir.join(s.folder.as_str())])?,
            merge: false,
            label: label.as_ref(),
            message: Some(format!("[sources] of {project}")),
        };
        let outcome = writer.ingest(request, ctx.progress)?;
        let hash = outcome.content(writer.store, &s.dest)?;
        out.insert(
            s.key(),
            LockedSource { path: s.folder.to_string(), hash, git: None, follows: None, commit: None },
        );
    }
    Ok(out)
}

/// `lock --check`: never writes the lock; fetches what the Store lacks of it, then reports
/// why it is stale (exit 1), or that it cannot be judged here (the error).
pub fn check(ctx: &Context) -> Result<CheckReport> {
    ctx.project()?;
    let mut obtained = obtain(ctx, &ctx.writer()?)?;
    let (report, _) = check_project(ctx, false)?;
    obtained.judge(report, "check memorix.lock")
}
