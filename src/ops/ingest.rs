//! `memorix ingest DEST SRC...`: one generation per call, rewriting only what changed.

use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::{GenSummary, Progress, commit_generation};
use crate::diagnostics::Result;
use crate::locator::{Locator, StorePath};
use crate::source::{self, Layout};
use crate::store::diff::{Change, diff_trees};
use crate::store::edit::{Dir, TreeEditor};
use crate::store::lock::WriteStats;
use crate::store::{Id, Store, Writer};

pub struct IngestRequest {
    /// Where the content goes; a place, without selector.
    pub dest: Locator,
    /// Files, directories, or `-` for standard input; merged in order.
    pub sources: Vec<PathBuf>,
    /// Add and change only; keep what DEST holds that the sources do not.
    pub merge: bool,
    pub message: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct IngestOutcome {
    pub dest: String,
    /// The new generation; `None` when the content was already there.
    pub generation: Option<GenSummary>,
    /// The tip the ingest left (the new generation, or the unchanged one).
    pub tip: Option<GenSummary>,
    pub changes: Vec<Change>,
    pub written: WriteStats,
    pub files: usize,
}

pub fn ingest(store_root: &Path, req: IngestRequest, progress: &Progress) -> Result<IngestOutcome> {
    let layout = source::layout(&req.dest, &req.sources)?;
    let store = Store::open_or_create(store_root)?;
    let writer = store.writer()?;
    super::heal_latest(&writer)?;
    ingest_with(&writer, &req.dest, layout, req.merge, req.message, progress)
}

/// Ingests an already scanned source under a held writer lock.
pub(crate) fn ingest_with(
    writer: &Writer,
    dest: &Locator,
    layout: Layout,
    merge: bool,
    message: Option<String>,
    progress: &Progress,
) -> Result<IngestOutcome> {
    let store = writer.store;
    let kind = dest.kind;
    let parent = store.latest(kind)?;
    let old_root = parent.as_ref().map(|g| g.generation.root);
    let mut editor = TreeEditor::new(store, old_root.as_ref())?;

    let files = match layout {
        Layout::Stdin => {
            let id = writer.put_blob_reader(&mut io::stdin().lock(), Path::new("<stdin>"))?;
            editor.put_blob(&dest.path, id)?;
            1
        }
        Layout::File(path) => {
            let id = writer.put_blob_file(&path)?;
            editor.put_blob(&dest.path, id)?;
            1
        }
        Layout::Tree { files, replaces } => {
            let bar = progress.bar(files.len() as u64, "hashing");
            let ids: Vec<Id> = files
                .par_iter()
                .map(|(_, abs)| {
                    let id = writer.put_blob_file(abs);
                    bar.inc(1);
                    id
                })
                .collect::<Result<_>>()?;
            bar.finish_and_clear();
            let mut dir = Dir::default();
            for ((rel, _), id) in files.iter().zip(ids) {
                dir.insert_blob(rel, id);
            }
            if replaces && !merge {
                editor.put_dir(&dest.path, dir)?;
            } else {
                editor.merge_dir(&dest.path, dir)?;
            }
            files.len()
        }
    };
    let new_root = editor.write(writer)?;
    let changes = diff_trees(store, old_root.as_ref(), Some(&new_root), &StorePath::root())?;
    let dest = dest.place();
    if changes.is_empty() {
        let tip = parent.map(|g| GenSummary::new(&g.id, &g.generation));
        return Ok(IngestOutcome { dest, generation: None, tip, changes, written: writer.stats(), files });
    }
    let committed = commit_generation(writer, kind, parent.as_ref(), new_root, message)?;
    let summary = GenSummary::new(&committed.id, &committed.generation);
    Ok(IngestOutcome {
        dest,
        generation: Some(summary.clone()),
        tip: Some(summary),
        changes,
        written: writer.stats(),
        files,
    })
}
