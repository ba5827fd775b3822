//! `memorix ingest DEST SRC...`: one generation per call, rewriting only what changed.

use std::path::PathBuf;

use super::context::Context;
use super::error::{Error, Result};
use crate::model::Locator;
pub use crate::store::objects::ChangeKind;
use crate::store::objects::{self, Layout};
pub use crate::store::records::VersionLabel;
use crate::store::records::{Ingest, IngestOutcome};

pub struct IngestRequest {
    /// Where the content goes; a place, without selector.
    pub dest: Locator,
    /// Files, directories, or `-` for standard input; merged in order.
    pub sources: Vec<PathBuf>,
    /// Add and change only; keep what DEST holds that the sources do not.
    pub merge: bool,
    pub message: Option<String>,
    /// Tag the ingested subtree as a version of a library.
    pub version: Option<VersionLabel>,
}

/// Scans every source before the Store is touched, then ingests under the writer lock.
pub fn ingest(ctx: &Context, req: IngestRequest) -> Result<IngestOutcome> {
    let layout = objects::layout(&req.dest, &req.sources)?;
    if req.version.is_some()
        && (!matches!(layout, Layout::Tree { .. }) || req.dest.path.is_root() || req.merge)
    {
        return Err(Error::VersionNeedsTree { example: req.dest.place().trim_end_matches('/').to_string() });
    }
    let store = ctx.store_or_create()?;
    let writer = store.writer(ctx.progress)?;
    writer.maintenance().heal_latest()?;
    let request = Ingest {
        dest: &req.dest,
        layout,
        merge: req.merge,
        label: req.version.as_ref(),
        message: req.message,
    };
    Ok(writer.ingest(request, ctx.progress)?)
}
