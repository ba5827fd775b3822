//! `memorix ingest DEST SRC...`: one generation per call, rewriting only what changed.

use std::io;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use super::{GenSummary, commit_generation};
use crate::diagnostics::{Error, Result};
use crate::model::{Id, Locator, StorePath, version};
use crate::progress::Progress;
use crate::source::{self, Layout};
use crate::store::diff::{Change, diff_trees};
use crate::store::edit::{Dir, TreeEditor};
use crate::store::generation::VersionTag;
use crate::store::lock::WriteStats;
use crate::store::quest::QuestIo;
use crate::store::tree::Tree;
use crate::store::{Store, Writer};

pub struct IngestRequest {
    /// Where the content goes; a place, without selector.
    pub dest: Locator,
    /// Files, directories, or `-` for standard input; merged in order.
    pub sources: Vec<PathBuf>,
    /// Add and change only; keep what DEST holds that the sources do not.
    pub merge: bool,
    pub message: Option<String>,
    /// Tag the ingested subtree as a version of a library.
    pub version: Option<VersionLabel>,
}

#[derive(Debug, Clone)]
pub struct VersionLabel {
    pub version: String,
    /// Defaults to the last component of DEST.
    pub library: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct TaggedVersion {
    pub library: String,
    pub version: String,
    pub tree: Id,
    /// Whether this version is now the one `latest/` shows (false for a backfill).
    pub tip: bool,
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<TaggedVersion>,
    /// Quests this ingest marked stale, and the quest files it touched to find them.
    pub quests: QuestIo,
}

pub fn ingest(store_root: &Path, req: IngestRequest, progress: &dyn Progress) -> Result<IngestOutcome> {
    let layout = source::layout(&req.dest, &req.sources)?;
    if req.version.is_some()
        && (!matches!(layout, Layout::Tree { .. }) || req.dest.path.is_root() || req.merge)
    {
        return Err(Error::usage(
            "--version tags a directory: DEST must be a subtree such as docs/httpx/ (and not --merge)",
            Some(format!(
                "e.g. memorix ingest {}/ DIR --version 1.2.3",
                req.dest.place().trim_end_matches('/')
            )),
        ));
    }
    let store = Store::open_or_create(store_root, progress)?;
    let writer = store.writer(progress)?;
    super::heal_latest(&writer)?;
    ingest_with(&writer, &req.dest, layout, req.merge, req.version.as_ref(), req.message, progress)
}

/// Ingests an already scanned source under a held writer lock.
pub(crate) fn ingest_with(
    writer: &Writer,
    dest: &Locator,
    layout: Layout,
    merge: bool,
    label: Option<&VersionLabel>,
    message: Option<String>,
    progress: &dyn Progress,
) -> Result<IngestOutcome> {
    let store = writer.store;
    let kind = dest.kind;
    let parent = store.latest(kind)?;
    let old_root = parent.as_ref().map(|g| g.generation.root);
    let mut editor = TreeEditor::new(store, old_root.as_ref())?;

    let mut stat_cache = None;
    let (files, dir) = match layout {
        Layout::Stdin => {
            let id = writer.put_blob_reader(&mut io::stdin().lock(), Path::new("<stdin>"))?;
            editor.put_blob(&dest.path, id)?;
            (1, None)
        }
        Layout::File(path) => {
            let len = std::fs::metadata(&path).map_err(Error::io("stat", &path))?.len();
            let id = writer.put_blob_file(&path, len)?;
            editor.put_blob(&dest.path, id)?;
            (1, None)
        }
        Layout::Tree { files, replaces } => {
            let bar = progress.start("hashing", files.len() as u64);
            let cache = store.stat_cache(&dest.place());
            let ids: Vec<Id> = files
                .par_iter()
                .map(|(_, abs)| {
                    // An unchanged file (by the stat cache) is not read again; a file the
                    // cache does not know is opened at once, its `fstat` then needs no lookup.
                    let (meta, id) = if cache.knows(abs) {
                        let meta = std::fs::metadata(abs).map_err(Error::io("stat", abs))?;
                        let id = match cache.lookup(abs, &meta) {
                            Some(id) => id,
                            None => writer.put_blob_file(abs, meta.len())?,
                        };
                        (meta, id)
                    } else {
                        let file = std::fs::File::open(abs).map_err(Error::io("open", abs))?;
                        let meta = file.metadata().map_err(Error::io("stat", abs))?;
                        let id = writer.put_blob_open(file, abs, meta.len())?;
                        (meta, id)
                    };
                    cache.record(abs, &meta, id);
                    bar.advance(1);
                    Ok(id)
                })
                .collect::<Result<_>>()?;
            stat_cache = Some(cache);
            drop(bar);
            writer.start_sync();
            crate::fault::point("ingest.blobs");
            let mut dir = Dir::default();
            for ((rel, _), id) in files.iter().zip(ids) {
                dir.insert_blob(rel, id);
            }
            (files.len(), Some((dir, replaces)))
        }
    };

    let mut tags = Vec::new();
    let mut tagged = None;
    let new_root = match (dir, label) {
        (Some((dir, _)), Some(label)) => {
            let library = label
                .library
                .clone()
                .unwrap_or_else(|| dest.path.file_name().expect("checked: DEST is not the root").to_string());
            let index = store.versions(kind)?;
            let existing = index.entries(&library);
            let known: Vec<&str> = existing.iter().map(|e| e.version.as_str()).collect();
            let all: Vec<&str> = known.iter().copied().chain([label.version.as_str()]).collect();
            // The tip shows the highest version; an older one is recorded beside it (backfill).
            let tip = version::highest(version::scheme_for(all.iter().copied()), all.iter().copied())
                == Some(label.version.as_str());
            // Versions are immutable, as in a package registry: the same label with other
            // content is refused before anything is written.
            let probe = dir.clone().build(&mut |t| Ok(t.id()))?.unwrap_or_else(Tree::empty_id);
            if let Some(e) = existing
                .iter()
                .find(|e| e.version == label.version && e.path == dest.path.as_str() && e.tree != probe)
            {
                return Err(Error::usage(
                    format!(
                        "{library} {} is already in the Store at {} with other content ({})",
                        e.version,
                        dest.place(),
                        e.tree
                    ),
                    Some(
                        "versions are immutable: ingest the new content under a new version label"
                            .to_string(),
                    ),
                ));
            }
            let (root, tree) = if tip {
                editor.put_dir(&dest.path, dir)?;
                let root = editor.write(writer)?;
                let tree = store.lookup(&root, &dest.path)?.map_or_else(Tree::empty_id, |(_, id)| id);
                (root, tree)
            } else {
                let tree = dir.store(writer)?.unwrap_or_else(Tree::empty_id);
                (old_root.unwrap_or_else(Tree::empty_id), tree)
            };
            let already = existing
                .iter()
                .any(|e| e.version == label.version && e.tree == tree && e.path == dest.path.as_str());
            if !(already && Some(root) == old_root) {
                tags.push(VersionTag {
                    library: library.clone(),
                    version: label.version.clone(),
                    path: dest.path.to_string(),
                    tree,
                });
            }
            tagged = Some(TaggedVersion { library, version: label.version.clone(), tree, tip });
            root
        }
        (Some((dir, replaces)), None) => {
            if replaces && !merge {
                editor.put_dir(&dest.path, dir)?;
            } else {
                editor.merge_dir(&dest.path, dir)?;
            }
            editor.write(writer)?
        }
        (None, _) => editor.write(writer)?,
    };

    crate::fault::point("ingest.trees");
    let changes = diff_trees(writer, old_root.as_ref(), Some(&new_root), &StorePath::root())?;
    if let Some(cache) = stat_cache {
        cache.save(writer)?;
    }
    let dest = dest.place();
    if changes.is_empty() && tags.is_empty() {
        let tip = parent.map(|g| GenSummary::new(&g.id, &g.generation));
        return Ok(IngestOutcome {
            dest,
            generation: None,
            tip,
            changes,
            written: writer.stats(),
            files,
            version: tagged,
            quests: QuestIo::default(),
        });
    }
    let tagged_paths: Vec<StorePath> =
        tags.iter().map(|t| StorePath::new(&t.path).expect("tag paths are validated")).collect();
    let committed = commit_generation(writer, kind, parent.as_ref(), new_root, tags, message)?;
    crate::fault::point("quests.mark");
    let quests = writer.mark_stale(kind, &changes, &tagged_paths)?;
    let summary = GenSummary::new(&committed.id, &committed.generation);
    Ok(IngestOutcome {
        dest,
        generation: Some(summary.clone()),
        tip: Some(summary),
        changes,
        written: writer.stats(),
        files,
        version: tagged,
        quests,
    })
}
