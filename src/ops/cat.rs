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
        return Err(Error::IsDirectory { path: locator.place() });
    }
    Ok(store.open_blob(&found.id)?)
}
