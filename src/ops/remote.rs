//! `memorix remote add|list|remove`, `memorix push`, `memorix pull`.

use serde::Serialize;

use super::context::{Context, Network};
use super::error::{Error, Result};
use super::project::{LockState, Project};
use crate::lock::Lockfile;
use crate::manifest::Manifest;
use crate::model::RemoteUrl;
use crate::remote::config::{self, RemoteEntry, Remotes};
use crate::remote::objects::{lock_closure, store_contents};
use crate::remote::transfer::{self, FetchReport, PushReport, Substituters};
use crate::remote::{Error as RemoteError, Remote};
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

/// The user's remotes, then the substituters of the project (if any).
pub fn list(ctx: &Context) -> Result<Vec<ListedRemote>> {
    let remotes = ctx.net.remotes()?;
    let mut out: Vec<ListedRemote> = remotes
        .remotes
        .iter()
        .map(|(name, e)| ListedRemote { name: Some(name.clone()), url: e.url.clone(), from: "remotes.toml" })
        .collect();
    if let Some(project) = ctx.project_if_any() {
        for url in &project.manifest.substituters {
            out.push(ListedRemote { name: None, url: url.to_string(), from: "memorix.toml" });
        }
    }
    Ok(out)
}

/// The remote a command names (a URL or a name in remotes.toml), or the only one configured.
fn choose(net: &Network, arg: Option<&str>, manifest: Option<&Manifest>) -> Result<RemoteUrl> {
    let remotes = net.remotes()?;
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

fn clean_lock(project: &Project) -> Result<&Lockfile> {
    match project.read_lock()? {
        LockState::Clean(lock) => Ok(lock),
        LockState::Missing => Err(Error::LockMissing),
        LockState::Conflicted { line } => Err(Error::LockConflicted { line: *line }),
        // The parse's error again, to return it (it was kept as the lock's state).
        LockState::Corrupt(_) => Err(project
            .parse_lock(project.lock_text()?.unwrap_or_default())
            .expect_err("a corrupt lock fails to parse")
            .into()),
    }
}

/// Uploads the lock's closure (or the whole store) to a remote: objects it lacks, quests
/// merged with its own, and (`All`) refs that fast-forward.
pub fn push(ctx: &Context, remote: Option<&str>, scope: PushScope) -> Result<PushReport> {
    let project = match scope {
        PushScope::Lock => Some(ctx.project()?),
        PushScope::All => ctx.project_if_any(),
    };
    let url = choose(&ctx.net, remote, project.map(|p| &p.manifest))?;
    if !url.writable() {
        return Err(RemoteError::ReadOnly { url: url.to_string() }.into());
    }
    let store = ctx.store()?;
    let (objects, quests) = match (project, scope) {
        (Some(p), PushScope::Lock) => (lock_closure(store, clean_lock(p)?)?, project_quests(&p.manifest)),
        _ => store_contents(store)?,
    };
    let remote = Remote::open(&url, true)?;
    Ok(transfer::push(store, &remote, &objects, &quests, scope == PushScope::All, ctx.progress)?)
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
pub fn pull(ctx: &mut Context, remote: Option<&str>) -> Result<PullReport> {
    let _project_lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let project = ctx.project()?;
    let lock = clean_lock(project)?;
    let url = choose(&ctx.net, remote, Some(&project.manifest))?;
    let store = ctx.store_or_create()?;
    let writer = store.writer(ctx.progress)?;
    let mut subs = Substituters::new(vec![url.clone()], false, ctx.progress);
    let fetched = transfer::fetch_lock(&writer, &mut subs, lock)?;
    if !fetched.unavailable.is_empty() {
        if let Some(unreachable) = subs.take_failure() {
            return Err(unreachable.into());
        }
        return Err(RemoteError::Missing { remote: url.to_string(), missing: fetched.unavailable }.into());
    }
    writer.records().record_project(&project.roots(lock)?)?;
    let mut quests = 0;
    for id in project_quests(&project.manifest) {
        let Some(theirs) = subs.quest(&id)? else { continue };
        let mut merged = store.records().read_quest(&id)?.unwrap_or_else(|| theirs.clone());
        if merged.merge(&theirs) || !store.quest_path(&id).exists() {
            writer.write_quest(&merged)?;
            quests += 1;
        }
    }
    Ok(PullReport { remote: url.to_string(), fetched, quests })
}
