//! `memorix cat LOCATOR`: a file's bytes, exactly as ingested.

use std::io::{self, Write};
use std::path::Path;

use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Locator};
use crate::store::Store;

/// Streams the blob a locator names to `out`. A closed pipe (`| head`) is not an error.
pub fn cat(store_root: &Path, locator: &Locator, out: &mut dyn Write) -> Result<()> {
    let store = Store::open(store_root)?;
    let found = store.locate(locator)?;
    if found.kind == EntryKind::Tree {
        return Err(Error::IsDirectory { path: locator.place() });
    }
    let mut file = store.open_blob(&found.id)?;
    match io::copy(&mut file, out).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::io("write", Path::new("<stdout>"))(e)),
    }
}
