//! `memorix ls LOCATOR`: what a locator names, one entry per line.

use std::fs;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Locator};
use crate::store::records::GenSummary;

pub struct LsRequest {
    pub locator: Locator,
    /// List every file below, by path, instead of the direct children.
    pub recursive: bool,
}

#[derive(Debug, Serialize)]
pub struct LsEntry {
    /// Relative to the listed directory; directories end with `/`.
    pub path: String,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub id: Id,
    /// Blob size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct LsOutcome {
    pub locator: String,
    pub generation: GenSummary,
    #[serde(rename = "type")]
    pub kind: EntryKind,
    pub id: Id,
    pub entries: Vec<LsEntry>,
}

pub fn ls(ctx: &Context, req: &LsRequest) -> Result<LsOutcome> {
    let store = ctx.store()?;
    let found = store.locate(&req.locator)?;
    let blob_size = |id: &Id| -> Result<Option<u64>> {
        let p = store.objects().blob_path(id);
        match fs::metadata(&p) {
            Ok(meta) => Ok(Some(meta.len())),
            // Packed by an ingest and not unpacked yet.
            Err(_) => {
                Ok(Some(store.objects().open_blob(id)?.metadata().map_err(Error::io("stat", &p))?.len()))
            }
        }
    };
    let mut entries = Vec::new();
    match found.kind {
        EntryKind::Blob => {
            let name = req.locator.path.file_name().unwrap_or_default().to_string();
            entries.push(LsEntry {
                path: name,
                kind: EntryKind::Blob,
                id: found.id,
                size: blob_size(&found.id)?,
            });
        }
        EntryKind::Tree if req.recursive => {
            for (path, id) in store.objects().walk_files(&found.id)? {
                entries.push(LsEntry {
                    path: path.to_string(),
                    kind: EntryKind::Blob,
                    id,
                    size: blob_size(&id)?,
                });
            }
        }
        EntryKind::Tree => {
            for e in store.objects().read_tree(&found.id)?.entries() {
                let (path, size) = match e.kind {
                    EntryKind::Blob => (e.name.to_string(), blob_size(&e.id)?),
                    EntryKind::Tree => (format!("{}/", e.name), None),
                };
                entries.push(LsEntry { path, kind: e.kind, id: e.id, size });
            }
        }
    }
    Ok(LsOutcome {
        locator: req.locator.to_string(),
        generation: GenSummary::new(&found.generation.id, &found.generation.generation),
        kind: found.kind,
        id: found.id,
        entries,
    })
}
