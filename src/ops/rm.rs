//! `memorix rm PATH...`: a new generation without the paths; their content stays addressable.

use std::path::Path;

use super::error::{Error, Result};
use crate::model::Locator;
use crate::progress::Progress;
use crate::store::Store;
use crate::store::ingest::RmOutcome;

pub struct RmRequest {
    pub paths: Vec<Locator>,
    pub message: Option<String>,
}

pub fn rm(store_root: &Path, req: RmRequest, progress: &dyn Progress) -> Result<RmOutcome> {
    if let Some(loc) = req.paths.iter().find(|l| l.path.is_root()) {
        return Err(Error::RemoveKindRoot { kind: loc.kind });
    }
    let store = Store::open(store_root)?;
    let writer = store.writer(progress)?;
    writer.heal_latest()?;
    Ok(writer.remove(&req.paths, req.message)?)
}
