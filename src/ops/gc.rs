//! `memorix gc` (temp files and objects nothing reaches) and `memorix purge` (the explicit,
//! loud erasure of content from every generation, e.g. a leaked secret).

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::model::{IdPrefix, Locator};
use crate::store::maintenance::{GcOutcome, PurgeRecord, PurgeTarget};

pub fn gc(ctx: &Context, dry_run: bool) -> Result<GcOutcome> {
    let store = ctx.store()?;
    if dry_run {
        return Ok(store.maintenance().garbage()?);
    }
    Ok(store.writer(ctx.progress)?.maintenance().collect_garbage()?)
}

#[derive(Debug, Serialize)]
pub struct PurgeOutcome {
    /// False without `--yes`: nothing was erased, this is what would be.
    pub erased: bool,
    pub blobs: Vec<PurgeRecord>,
    /// Hardlinks removed from latest/, derivation and environment trees.
    pub links: usize,
}

/// Erases every blob that ever stood at `target` (a Store path, or a blob id) from the Store.
/// History keeps naming the ids; reading them then fails with a message saying they were
/// purged.
pub fn purge(ctx: &Context, target: &str, yes: bool) -> Result<PurgeOutcome> {
    let store = ctx.store()?;
    let writer = store.writer(ctx.progress)?;
    let what = match IdPrefix::parse(target).filter(|_| !target.contains('/')) {
        Some(prefix) => PurgeTarget::Blob(prefix),
        None => PurgeTarget::Path(Locator::parse_place(target)?),
    };
    let blobs = store.maintenance().purge_candidates(&what)?;
    if blobs.is_empty() {
        return Err(Error::NothingToPurge { target: target.to_string() });
    }
    if !yes {
        return Ok(PurgeOutcome { erased: false, blobs, links: 0 });
    }
    let links = writer.maintenance().purge(&blobs)?;
    Ok(PurgeOutcome { erased: true, blobs, links })
}
