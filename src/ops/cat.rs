//! `memorix cat LOCATOR`: a file's bytes, exactly as ingested.

use std::fs::File;

use super::context::Context;
use super::error::{Error, Result};
use crate::model::{EntryKind, Locator};

/// The blob a locator names, opened through the Store's guarded reader for streaming.
pub fn cat(ctx: &Context, locator: &Locator) -> Result<File> {
    let store = ctx.store()?;
    let found = store.locate(locator)?;
    if found.kind == EntryKind::Tree {
        let dir = format!("{}/{}", locator.kind, locator.path).trim_end_matches('/').to_string() + "/";
        let first =
            store.objects().walk_files(&found.id)?.into_iter().next().map(|(p, _)| format!("{dir}{p}"));
        return Err(Error::IsDirectory { dir, first });
    }
    Ok(store.objects().open_blob(&found.id)?)
}
