//! `memorix remote add|list|remove`, `memorix push`, `memorix pull`, and the substitution
//! `memorix build --locked` runs when the store lacks what the lock needs.

use std::path::Path;

use serde::Serialize;

use super::error::{Error, Result};
use super::project::{LockState, Project};
use crate::lock::Lockfile;
use crate::manifest::Manifest;
use crate::model::RemoteUrl;
use crate::progress::Progress;
use crate::remote::config::{self, RemoteEntry, Remotes};
use crate::remote::objects::{lock_closure, store_contents};
use crate::remote::transfer::{self, FetchReport, PushReport, Substituters};
use crate::remote::{Error as RemoteError, Remote};
use crate::store::{Store, Writer};
use crate::view::project_quests;

#[derive(Debug, Serialize)]
pub struct ListedRemote {
    pub name: Option<String>,
    pub url: String,
    /// `remotes.toml` (user-level) or `memorix.toml` (`[store] substituters`).
    pub from: &'static str,
}

pub fn add(name: &str, url: &str) -> Result<ListedRemote> {
    config::check_name(name)?;
    let parsed = RemoteUrl::parse(url).map_err(|reason| RemoteError::Url { url: url.to_string(), reason })?;
    let path = Remotes::location();
    let mut remotes = Remotes::load(&path)?;
    if let Some(existing) = remotes.remotes.get(name) {
        return Err(RemoteError::Exists { name: name.to_string(), url: existing.url.clone() }.into());
    }
    remotes.remotes.insert(name.to_string(), RemoteEntry { url: parsed.to_string() });
    remotes.save(&path)?;
    Ok(ListedRemote { name: Some(name.to_string()), url: parsed.to_string(), from: "remotes.toml" })
}

pub fn remove(name: &str) -> Result<ListedRemote> {
    let path = Remotes::location();
    let mut remotes = Remotes::load(&path)?;
    let Some(entry) = remotes.remotes.remove(name) else {
        return Err(RemoteError::Unknown { name: name.to_string(), known: remotes.names() }.into());
    };
    remotes.save(&path)?;
    Ok(ListedRemote { name: Some(name.to_string()), url: entry.url, from: "remotes.toml" })
}

/// The user's remotes, then the substituters of the project at `start` (if any).
pub fn list(start: &Path) -> Result<Vec<ListedRemote>> {
    let remotes = Remotes::load(&Remotes::location())?;
    let mut out: Vec<ListedRemote> = remotes
        .remotes
        .iter()
        .map(|(name, e)| ListedRemote { name: Some(name.clone()), url: e.url.clone(), from: "remotes.toml" })
        .collect();
    if let Ok(project) = Project::open(start) {
        for url in &project.manifest.substituters {
            out.push(ListedRemote { name: None, url: url.to_string(), from: "memorix.toml" });
        }
    }
    Ok(out)
}

/// The remote a command names (a URL or a name in remotes.toml), or the only one configured.
fn choose(arg: Option<&str>, manifest: Option<&Manifest>) -> Result<RemoteUrl> {
    let remotes = Remotes::load(&Remotes::location())?;
    match arg {
        Some(text) if text.contains("://") => {
            Ok(RemoteUrl::parse(text).map_err(|reason| RemoteError::Url { url: text.to_string(), reason })?)
        }
        Some(name) => remotes
            .url(name)
            .ok_or_else(|| RemoteError::Unknown { name: name.to_string(), known: remotes.names() }.into()),
        None => {
            let mut all: Vec<RemoteUrl> = remotes.names().iter().filter_map(|n| remotes.url(n)).collect();
            for url in manifest.map(|m| m.substituters.as_slice()).unwrap_or_default() {
                if !all.contains(url) {
                    all.push(url.clone());
                }
            }
            match all.len() {
                1 => Ok(all.remove(0)),
                0 => {
                    Err(RemoteError::NoneChosen { message: "no remote is configured".into(), known: vec![] }
                        .into())
                }
                _ => Err(RemoteError::NoneChosen {
                    message: "several remotes are configured; name one".into(),
                    known: remotes.names(),
                }
                .into()),
            }
        }
    }
}

/// What `memorix push` uploads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushScope {
    /// The closure of the project's memorix.lock, and the project's quests.
    Lock,
    /// Every object, quest and ref in the store.
    All,
}

fn clean_lock(project: &Project) -> Result<Lockfile> {
    match project.read_lock()? {
        LockState::Clean(lock, _) => Ok(lock),
        LockState::Missing => Err(Error::LockMissing),
        LockState::Conflicted { line, .. } => Err(Error::LockConflicted { line }),
        LockState::Corrupt(e) => Err(e.into()),
    }
}

/// Uploads the lock's closure (or the whole store) to a remote: objects it lacks, quests
/// merged with its own, and (`All`) refs that fast-forward.
pub fn push(
    start: &Path,
    store_root: &Path,
    remote: Option<&str>,
    scope: PushScope,
    progress: &dyn Progress,
) -> Result<PushReport> {
    let project = match scope {
        PushScope::Lock => Some(Project::open(start)?),
        PushScope::All => Project::open(start).ok(),
    };
    let url = choose(remote, project.as_ref().map(|p| &p.manifest))?;
    if !url.writable() {
        return Err(RemoteError::ReadOnly { url: url.to_string() }.into());
    }
    let store = Store::open(store_root)?;
    let (objects, quests) = match (&project, scope) {
        (Some(p), PushScope::Lock) => (lock_closure(&store, &clean_lock(p)?)?, project_quests(&p.manifest)),
        _ => store_contents(&store)?,
    };
    let remote = Remote::open(&url, true)?;
    Ok(transfer::push(&store, &remote, &objects, &quests, scope == PushScope::All, progress)?)
}

#[derive(Debug, Serialize)]
pub struct PullReport {
    pub remote: String,
    #[serde(flatten)]
    pub fetched: FetchReport,
    /// Quest records merged into the store's.
    pub quests: usize,
}

/// Fetches what the store lacks of the project's lock from one remote, and merges the
/// remote's records of the project's quests into the store's.
pub fn pull(
    start: &Path,
    store_root: &Path,
    remote: Option<&str>,
    progress: &dyn Progress,
) -> Result<PullReport> {
    let project = Project::open(start)?;
    let _project_lock = project.lock(progress)?;
    let lock = clean_lock(&project)?;
    let url = choose(remote, Some(&project.manifest))?;
    let store = Store::open_or_create(store_root, progress)?;
    let writer = store.writer(progress)?;
    let mut subs = Substituters::new(vec![url.clone()], false, progress);
    let fetched = transfer::fetch_lock(&writer, &mut subs, &lock)?;
    if !fetched.unavailable.is_empty() {
        if let Some(unreachable) = subs.take_failure() {
            return Err(unreachable.into());
        }
        return Err(RemoteError::Missing { remote: url.to_string(), missing: fetched.unavailable }.into());
    }
    writer.record_project(&project.roots(&lock)?)?;
    let mut quests = 0;
    for id in project_quests(&project.manifest) {
        let Some(theirs) = subs.quest(&id)? else { continue };
        let mut merged = store.read_quest(&id)?.unwrap_or_else(|| theirs.clone());
        if merged.merge(&theirs) || !store.quest_path(&id).exists() {
            writer.write_quest(&merged)?;
            quests += 1;
        }
    }
    Ok(PullReport { remote: url.to_string(), fetched, quests })
}

/// For `build --locked`: fetches what the store lacks of the project's lock from the
/// substituters (`[store] substituters`, then the user's remotes). Touches no remote, and
/// reads no remote configuration, when the store has everything.
pub(crate) fn substitute(
    project: &Project,
    writer: &Writer,
    offline: bool,
    progress: &dyn Progress,
) -> Result<FetchReport> {
    let LockState::Clean(lock, _) = project.read_lock()? else { return Ok(FetchReport::default()) };
    if !transfer::lacks(writer.store, &lock) {
        return Ok(FetchReport::default());
    }
    let mut urls = project.manifest.substituters.clone();
    if !offline {
        let remotes = Remotes::load(&Remotes::location())?;
        for url in remotes.names().iter().filter_map(|n| remotes.url(n)) {
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
    }
    let mut subs = Substituters::new(urls, offline, progress);
    let report = transfer::fetch_lock(writer, &mut subs, &lock)?;
    // Each unreachable substituter was skipped for the next; when none could give what the
    // lock needs and one was unreachable, that is the failure to report.
    match subs.take_failure() {
        Some(unreachable) if !report.unavailable.is_empty() => Err(unreachable.into()),
        _ => Ok(report),
    }
}
