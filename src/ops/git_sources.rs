//! Git `[sources]` (book: design/fetching.md#git-sources): each is taken at the commit
//! memorix.lock pins, moved only by `memorix update` (all, or `--source PLACE`), and ingested
//! like a folder source, so the lock records both the commit and the content id it gave.

use std::collections::BTreeMap;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::fetch::git::{self, GitCache};
use crate::lock::{LockedSource, Lockfile};
use crate::manifest::GitSourceDecl;
use crate::resolve::{Refresh, git_origin_matches};
use crate::store::Writer;
use crate::store::objects;
use crate::store::records::{Ingest, VersionLabel};

/// A git source whose locked commit changed.
#[derive(Debug, Clone, Serialize)]
pub struct SourceMove {
    pub source: String,
    pub url: String,
    pub from: Option<String>,
    pub to: String,
}

/// Ingests every git source at its commit: the locked one, unless `refresh` moves it (or the
/// lock has none, or memorix.toml now names another origin), then what it follows now.
pub(crate) fn ingest_git_sources(
    ctx: &Context,
    writer: &Writer,
    previous: Option<&Lockfile>,
    refresh: &Refresh,
) -> Result<(BTreeMap<String, LockedSource>, Vec<SourceMove>)> {
    let cache = GitCache::default_location();
    let (mut out, mut moves) = (BTreeMap::new(), Vec::new());
    for g in &ctx.project()?.manifest.git_sources {
        let key = g.key();
        let held = previous.and_then(|l| l.sources.get(&key)).filter(|l| git_origin_matches(l, g));
        let commit = match held.and_then(|l| l.commit.clone()) {
            Some(c) if !refresh.moves_source(&key) => c,
            _ if ctx.net.offline => return Err(git::Error::Offline { url: g.url.clone() }.into()),
            _ => cache.resolve(&g.url, &g.reference)?,
        };
        let taken = take(ctx, writer, &cache, g, &commit)?;
        match held {
            Some(h) if h.commit.as_deref() == Some(commit.as_str()) => same_content(&key, h, &taken)?,
            _ => moves.push(SourceMove {
                source: key.clone(),
                url: g.url.clone(),
                from: held.and_then(|h| h.commit.clone()),
                to: commit,
            }),
        }
        out.insert(key, taken);
    }
    Ok((out, moves))
}

/// Puts the content of each git source the lock pins into the Store when it lacks it (a fresh
/// clone without a substituter that has it), checked against the lock's content id.
pub(crate) fn ensure_locked_git(ctx: &Context, writer: &Writer, lock: &Lockfile) -> Result<()> {
    let cache = GitCache::default_location();
    for g in &ctx.project()?.manifest.git_sources {
        let key = g.key();
        let Some(held) = lock.sources.get(&key).filter(|l| git_origin_matches(l, g)) else { continue };
        let Some(commit) = &held.commit else { continue };
        if ctx.net.offline
            || writer.store.objects().has_tree(&held.hash)
            || writer.store.objects().has_blob(&held.hash)
        {
            continue;
        }
        let taken = take(ctx, writer, &cache, g, commit)?;
        same_content(&key, held, &taken)?;
    }
    Ok(())
}

fn same_content(key: &str, held: &LockedSource, taken: &LockedSource) -> Result<()> {
    if held.hash == taken.hash {
        return Ok(());
    }
    Err(Error::GitContentMismatch {
        source_key: key.to_string(),
        commit: taken.commit.clone().unwrap_or_default(),
        locked: held.hash,
        got: taken.hash,
    })
}

/// Exports `commit` of `g` into the project's temp directory and ingests it at the source's
/// place; the lock entry it gives.
fn take(
    ctx: &Context,
    writer: &Writer,
    cache: &GitCache,
    g: &GitSourceDecl,
    commit: &str,
) -> Result<LockedSource> {
    cache.ensure(&g.url, commit, &g.key())?;
    let tmp = ctx.project()?.state_dir.join("tmp");
    crate::store::fsutil::create_dir(&tmp)?;
    // The lock holds only full commit ids; hex digits alone keep the name a plain file name.
    let short: String = commit.chars().filter(char::is_ascii_hexdigit).take(12).collect();
    let dir = tmp.join(format!("git-{short}"));
    let _ = crate::store::objects::remove_readonly_tree(&dir);
    let path = g.path.as_ref().map(|p| p.to_string());
    let exported = cache.export(&g.url, commit, path.as_deref(), &dir);
    let ingested = exported.map_err(Error::from).and_then(|()| {
        let label = g.version.clone().map(|version| VersionLabel { version, library: None });
        let request = Ingest {
            dest: &g.dest,
            layout: objects::layout(&g.dest, std::slice::from_ref(&dir))?,
            merge: false,
            label: label.as_ref(),
            message: Some(format!("[sources] git {} at {commit}", g.url)),
        };
        let outcome = writer.ingest(request, ctx.progress)?;
        Ok(outcome.content(writer.store, &g.dest)?)
    });
    let _ = crate::store::objects::remove_readonly_tree(&dir);
    Ok(LockedSource {
        path: path.unwrap_or_default(),
        hash: ingested?,
        git: Some(g.url.clone()),
        follows: Some(g.reference.to_string()),
        commit: Some(commit.to_string()),
    })
}
