//! Resolving a locator against the store: which generation, and what is at its path.

use super::generation::GenRef;
use super::tree::EntryKind;
use super::{Id, Store};
use crate::diagnostics::{Error, Result};
use crate::locator::Locator;

/// What a locator names in one generation.
#[derive(Clone, Debug)]
pub struct Located {
    pub generation: GenRef,
    pub kind: EntryKind,
    pub id: Id,
}

impl Store {
    /// Opens the locator's generation and walks to its path; a missing path is an error, as is a
    /// trailing `/` on a file.
    pub fn locate(&self, loc: &Locator) -> Result<Located> {
        let generation = self.select_generation(loc.kind, loc.selector.as_ref())?;
        let found = self.lookup(&generation.generation.root, &loc.path)?;
        let Some((kind, id)) = found else {
            return Err(Error::PathNotFound {
                kind: loc.kind,
                path: loc.place(),
                seq: generation.generation.seq,
            });
        };
        if loc.subtree && kind == EntryKind::Blob {
            return Err(Error::NotDirectory { path: loc.place() });
        }
        Ok(Located { generation, kind, id })
    }
}
