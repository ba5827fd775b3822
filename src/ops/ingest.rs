//! `memorix ingest DEST SRC...`: one generation per call, rewriting only what changed.

use std::io;
use std::path::{Path, PathBuf};

use indicatif::ProgressBar;
use rayon::prelude::*;
use serde::Serialize;

use super::{GenSummary, Progress, commit_generation};
use crate::diagnostics::{Error, Result};
use crate::locator::{Locator, StorePath};
use crate::source::{self, Scanned};
use crate::store::diff::{Change, diff_trees};
use crate::store::edit::{Dir, TreeEditor};
use crate::store::lock::WriteStats;
use crate::store::{Id, Store};

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

/// How the sources land at DEST.
enum Layout {
    /// One file at DEST itself.
    File(PathBuf),
    Stdin,
    /// A directory: the files at DEST/<rel>, replacing DEST unless only files were given.
    Tree {
        files: Vec<(StorePath, PathBuf)>,
        replaces: bool,
    },
}

pub fn ingest(store_root: &Path, req: IngestRequest, progress: &Progress) -> Result<IngestOutcome> {
    let layout = plan(&req)?;
    let store = Store::open_or_create(store_root)?;
    let writer = store.writer()?;
    super::heal_latest(&writer)?;
    let kind = req.dest.kind;
    let parent = store.latest(kind)?;
    let old_root = parent.as_ref().map(|g| g.generation.root);
    let mut editor = TreeEditor::new(&store, old_root.as_ref())?;

    let files = match layout {
        Layout::Stdin => {
            let id = writer.put_blob_reader(&mut io::stdin().lock(), Path::new("<stdin>"))?;
            editor.put_blob(&req.dest.path, id)?;
            1
        }
        Layout::File(path) => {
            let id = writer.put_blob_file(&path)?;
            editor.put_blob(&req.dest.path, id)?;
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
            let n = files.len();
            if replaces && !req.merge {
                editor.put_dir(&req.dest.path, dir)?;
            } else {
                editor.merge_dir(&req.dest.path, dir)?;
            }
            n
        }
    };
    let new_root = editor.write(&writer)?;
    let changes = diff_trees(&store, old_root.as_ref(), Some(&new_root), &StorePath::root())?;
    let dest = req.dest.place();
    if changes.is_empty() {
        let tip = parent.map(|g| GenSummary::new(&g.id, &g.generation));
        return Ok(IngestOutcome { dest, generation: None, tip, changes, written: writer.stats(), files });
    }
    let committed = commit_generation(&writer, kind, parent.as_ref(), new_root, req.message)?;
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

/// Checks the destination and scans every source before the store is touched.
fn plan(req: &IngestRequest) -> Result<Layout> {
    if req.sources.is_empty() {
        return Err(Error::usage(
            "nothing to ingest",
            Some("name at least one SRC (a file, a directory, or - for standard input)".into()),
        ));
    }
    let mut scanned = req.sources.iter().map(|s| source::scan(s)).collect::<Result<Vec<_>>>()?;
    // One file (or stdin) into a DEST without trailing slash lands at DEST itself.
    if !req.dest.subtree && scanned.len() == 1 && !matches!(scanned[0], Scanned::Dir(_)) {
        return Ok(match scanned.pop().expect("one source") {
            Scanned::File(p) => Layout::File(p),
            _ => Layout::Stdin,
        });
    }
    let mut files = Vec::new();
    let mut replaces = false;
    for s in scanned {
        match s {
            Scanned::Stdin => {
                return Err(Error::usage(
                    "standard input has no file name to place inside a directory",
                    Some(format!(
                        "name the file in DEST, e.g. `memorix ingest {}notes.md -`",
                        req.dest.place()
                    )),
                ));
            }
            Scanned::File(p) => {
                let name = source::file_name(&p)?;
                files.push((StorePath::root().join(&name), p));
            }
            Scanned::Dir(found) => {
                replaces = true;
                files.extend(found.into_iter().map(|f| (f.rel, f.abs)));
            }
        }
    }
    Ok(Layout::Tree { files, replaces })
}

impl Progress {
    pub fn bar(&self, len: u64, what: &'static str) -> ProgressBar {
        if !self.enabled {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} files ({eta})")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(what);
        bar
    }
}
