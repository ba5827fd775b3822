//! `memorix show ID`: any object by a unique id prefix.

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, IdPrefix};
use crate::store::records::{DerivationRecord, EnvironmentRecord, Found, Generation};

#[derive(Debug, Serialize)]
pub struct ShownEntry {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub id: Id,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Shown {
    Blob {
        id: Id,
        size: u64,
        /// Opened through the Store's guarded reader (never following a planted symlink).
        #[serde(skip)]
        content: std::fs::File,
    },
    Tree {
        id: Id,
        entries: Vec<ShownEntry>,
    },
    Generation {
        id: Id,
        #[serde(flatten)]
        generation: Generation,
    },
    Derivation {
        id: Id,
        #[serde(flatten)]
        record: DerivationRecord,
    },
    Environment {
        id: Id,
        #[serde(flatten)]
        record: EnvironmentRecord,
    },
}

pub fn show(ctx: &Context, id_text: &str) -> Result<Shown> {
    let prefix = IdPrefix::parse(id_text).ok_or_else(|| Error::BadId(id_text.to_string()))?;
    let store = ctx.store()?;
    let mut found = store.objects().objects_matching(&prefix)?;
    let one = match found.len() {
        0 => return Err(Error::UnknownId { prefix: prefix.to_string() }),
        1 => found.pop().expect("one"),
        _ => {
            let mut candidates: Vec<String> = found.iter().map(|c| c.id().to_string()).collect();
            candidates.sort();
            return Err(Error::AmbiguousId { prefix: prefix.to_string(), candidates });
        }
    };
    Ok(match one {
        Found::Blob(id) => {
            let content = store.objects().open_blob(&id)?;
            let size = content.metadata().map_err(Error::io("stat", &store.objects().blob_path(&id)))?.len();
            Shown::Blob { id, size, content }
        }
        Found::Tree(id) => {
            let entries = store
                .objects()
                .read_tree(&id)?
                .entries()
                .iter()
                .map(|e| ShownEntry { name: e.name.to_string(), kind: e.kind, id: e.id })
                .collect();
            Shown::Tree { id, entries }
        }
        Found::Generation(kind, id) => {
            Shown::Generation { id, generation: store.records().read_generation(kind, &id)? }
        }
        Found::Derivation(id) => Shown::Derivation { id, record: store.records().read_derivation(&id)? },
        Found::Environment(id) => Shown::Environment { id, record: store.records().read_environment(&id)? },
    })
}
