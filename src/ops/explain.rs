//! `memorix explain PATH`: where a delivered file came from, and which rule made it win.

use std::path::Path;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use super::project::Project;
use crate::model::decision::Decision;
use crate::model::{Id, StorePath};
use crate::profile::Profile;

#[derive(Debug, Serialize)]
pub struct Explanation {
    /// Path inside the memory directory.
    pub path: String,
    pub environment: Id,
    pub mount: String,
    pub derivation: Id,
    /// The Store file delivered there.
    pub origin: String,
    pub blob: Id,
    /// The mount's locator that selected it.
    pub locator: String,
    pub kind: crate::model::Kind,
    /// The generation the locator read, where known.
    pub generation: Option<Id>,
    /// The library version, for `@v` / `@pin` locators.
    pub version: Option<String>,
    /// For docs a fetcher made: the registry artifact and its hash, as memorix.lock records them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<crate::lock::LockedFetch>,
    /// The quest of the mount's selection.
    pub quest: Option<Id>,
    /// Every conflict decided at this path (inside the mount and between mounts).
    pub decisions: Vec<Decision>,
    /// For a `CHANGES.md` memorix derived when a pin moved: the two versions it compares,
    /// each with the artifact it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compares: Option<super::moved::Moved>,
}

pub fn explain(ctx: &Context, path: &str) -> Result<Explanation> {
    let project = ctx.project()?;
    let m = &project.manifest;
    let rel = memory_relative(m, ctx.cwd(), path)?;
    let profile = Profile::load(&project.state_dir)?;
    let binding = profile.current().ok_or(Error::NoActiveEnvironment)?;
    let store = ctx.store()?;
    let env = store.records().read_environment(&binding.environment)?;
    let mut decisions: Vec<Decision> =
        env.decisions.iter().filter(|d| d.path == rel.as_str()).cloned().collect();
    let forced_mount = decisions.first().map(|d| d.winner.clone());
    // The deepest mount that has the file provides it, unless a decision names another.
    let mut mounts: Vec<&(StorePath, Id)> = env.mounts.iter().collect();
    mounts.sort_by_key(|(p, _)| std::cmp::Reverse(p.components().count()));
    for (mount, drv_id) in mounts {
        if forced_mount.as_ref().is_some_and(|w| w != mount.as_str()) {
            continue;
        }
        let Some(inner) = rel.strip_prefix(mount).filter(|inner| !inner.is_root()) else { continue };
        let Some(entry) = store.records().derivation_entry(drv_id, &inner)? else { continue };
        let origin = &entry.origin;
        decisions.extend(entry.decisions.iter().filter(|d| d.path == rel.as_str()).cloned());
        let provenance = entry.provenance.get(origin.locator);
        let quest = m.mounts.iter().find(|x| &x.path == mount).map(crate::view::derivation_quest);
        let locator = provenance.map(|p| p.locator.clone()).unwrap_or_default();
        let fetched = fetched_by(project, mount.as_str(), &locator);
        return Ok(Explanation {
            path: rel.to_string(),
            environment: binding.environment,
            mount: mount.to_string(),
            derivation: *drv_id,
            origin: origin.place(),
            blob: entry.blob,
            locator,
            kind: origin.kind,
            generation: provenance.and_then(|p| p.generation),
            version: provenance.and_then(|p| p.version.clone()),
            fetched,
            quest,
            decisions,
            compares: None,
        });
    }
    match derived(ctx, project, &env, binding.environment, &rel)? {
        Some(e) => Ok(e),
        None => Err(Error::NotInEnvironment { path: rel.to_string(), memory: m.memory.to_string() }),
    }
}

/// A file memorix derived into a library's mount (book: design/outlines.md#outline): its
/// `API.md` (from the mount's derivation) or `CHANGES.md` (from the two versions the last
/// update moved between).
fn derived(
    ctx: &Context,
    project: &Project,
    env: &crate::store::records::EnvironmentRecord,
    environment: Id,
    rel: &StorePath,
) -> Result<Option<Explanation>> {
    let store = ctx.store()?;
    let Some((parent, name)) = rel.as_str().rsplit_once('/') else { return Ok(None) };
    let Some((mount, drv)) = env.mounts.iter().find(|(p, _)| p.as_str() == parent) else {
        return Ok(None);
    };
    let moved = super::moved::delivered(project).into_iter().find(|x| x.mount == mount.as_str());
    let (blob, origin, compares) = match (name, moved) {
        (super::moved::CHANGES, Some(mv)) => {
            let origin =
                format!("derived: what changed from {} {} to {}", mv.library, mv.from.version, mv.to.version);
            (mv.changes, origin, Some(mv))
        }
        (crate::view::api::API, _) => match crate::view::api::api_blob(store, drv) {
            Some(blob) => (blob, format!("derived: the API outline of derivation {}", drv.short()), None),
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let lock = project.clean_lock().ok().flatten();
    let entry = lock
        .and_then(|l| l.mounts.get(mount.as_str())?.locators.iter().find(|e| e.version.is_some()).cloned());
    let m = &project.manifest;
    Ok(Some(Explanation {
        path: rel.to_string(),
        environment,
        mount: mount.to_string(),
        derivation: *drv,
        origin,
        blob,
        locator: entry.as_ref().map(|e| e.locator.clone()).unwrap_or_default(),
        kind: crate::model::Kind::Docs,
        generation: None,
        version: entry.as_ref().and_then(|e| e.version.clone()),
        fetched: entry.and_then(|e| e.fetched),
        quest: m.mounts.iter().find(|x| &x.path == mount).map(crate::view::derivation_quest),
        decisions: Vec::new(),
        compares,
    }))
}

/// What memorix.lock says a fetcher made `locator` of `mount` from, if anything.
fn fetched_by(project: &Project, mount: &str, locator: &str) -> Option<crate::lock::LockedFetch> {
    let lock = project.clean_lock().ok()??;
    let entries = &lock.mounts.get(mount)?.locators;
    entries.iter().find(|l| l.locator == locator).and_then(|l| l.fetched.clone())
}

/// Accepts `.memory/python/x.md`, `python/x.md` or an absolute path inside the memory dir.
fn memory_relative(m: &crate::manifest::Manifest, start: &Path, path: &str) -> Result<StorePath> {
    let p = Path::new(path);
    let abs = if p.is_absolute() { p.to_path_buf() } else { start.join(p) };
    let text = match abs.strip_prefix(m.memory_dir()) {
        Ok(inside) => inside.to_string_lossy().into_owned(),
        Err(_) => path.trim_start_matches("./").to_string(),
    };
    StorePath::new(text.trim_end_matches('/'))
        .map_err(|why| Error::NotAMemoryPath { path: path.to_string(), why: why.describe() })
}
