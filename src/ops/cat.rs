//! `memorix cat LOCATOR`: a file's bytes, exactly as ingested.

use std::fs::File;
use std::path::Path;

use super::error::{Error, Result};
use crate::model::{EntryKind, Locator};
use crate::store::Store;

/// The blob a locator names, opened through the Store's guarded reader for streaming.
pub fn cat(store_root: &Path, locator: &Locator) -> Result<File> {
    let store = Store::open(store_root)?;
    let found = store.locate(locator)?;
    if found.kind == EntryKind::Tree {
        let dir = format!("{}/{}", locator.kind, locator.path).trim_end_matches('/').to_string() + "/";
        let first = store.walk_files(&found.id)?.into_iter().next().map(|(p, _)| format!("{dir}{p}"));
        return Err(Error::IsDirectory { dir, first });
    }
    Ok(store.open_blob(&found.id)?)
}
