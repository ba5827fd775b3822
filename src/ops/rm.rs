//! `memorix rm PATH...`: a new generation without the paths; their content stays addressable.

use super::context::Context;
use super::error::{Error, Result};
use crate::model::Locator;
use crate::store::records::RmOutcome;

pub struct RmRequest {
    pub paths: Vec<Locator>,
    pub message: Option<String>,
}

pub fn rm(ctx: &Context, req: RmRequest) -> Result<RmOutcome> {
    if let Some(loc) = req.paths.iter().find(|l| l.path.is_root()) {
        return Err(Error::RemoveKindRoot { kind: loc.kind });
    }
    let store = ctx.store()?;
    let writer = store.writer(ctx.progress)?;
    writer.maintenance().heal_latest()?;
    Ok(writer.remove(&req.paths, req.message)?)
}
