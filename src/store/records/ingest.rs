//! Ingest: sources scanned beforehand become one generation of one kind, rewriting only the
//! changed files' ancestor chain; identical content makes no generation. Also `rm`, the
//! generation without some paths.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::generation::{GenRef, GenSummary, NextGeneration, VersionTag};
use super::quest::QuestIo;
use crate::diagnostics::FromIo;
use crate::model::version;
use crate::model::{EntryKind, Id, Kind, Locator, StorePath};
use crate::progress::Progress;
use crate::store::error::{Error, Result};
use crate::store::mutex::WriteStats;
use crate::store::objects::diff::{Change, diff_trees};
use crate::store::objects::incoming::{PACK_BLOBS_MIN, Packer, SMALL_BLOB};
use crate::store::objects::merkle::{Dir, TreeEditor};
use crate::store::objects::source::Layout;
use crate::store::objects::statcache::StatCache;
use crate::store::objects::tree::Tree;
use crate::store::{Store, Writer};

/// `--version V [--library NAME]`: the ingested subtree is version V of a library.
#[derive(Debug, Clone)]
pub struct VersionLabel {
    pub version: String,
    /// Defaults to the last component of DEST.
    pub library: Option<String>,
}

/// What to ingest, scanned: where it goes and how the sources land there.
pub struct Ingest<'a> {
    /// A place, without selector.
    pub dest: &'a Locator,
    pub layout: Layout,
    /// Add and change only; keep what DEST holds that the sources do not.
    pub merge: bool,
    pub label: Option<&'a VersionLabel>,
    pub message: Option<String>,
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

impl IngestOutcome {
    /// The content id now at DEST: a version's tagged tree, else what the tip holds there.
    pub fn content(&self, store: &Store, dest: &Locator) -> Result<Id> {
        match (&self.version, &self.tip) {
            (Some(v), _) => Ok(v.tree),
            (None, Some(tip)) => {
                Ok(store.lookup(&tip.root, &dest.path)?.map_or_else(Tree::empty_id, |(_, id)| id))
            }
            (None, None) => Err(Error::EmptyKind { kind: dest.kind }),
        }
    }
}

/// The files of a scanned source, stored as blobs: where they go and how many.
struct Stored {
    files: usize,
    dir: Option<(Dir, bool)>,
    stat_cache: Option<StatCache>,
    /// The directories taken unchanged from the stat cache (with every cached one below
    /// them), by path relative to DEST.
    kept_dirs: Vec<(String, Id)>,
}

impl Writer<'_> {
    /// Ingests a scanned source as one generation (none when nothing changed).
    pub fn ingest(&self, req: Ingest, progress: &dyn Progress) -> Result<IngestOutcome> {
        let store = self.store;
        let kind = req.dest.kind;
        let parent = store.latest(kind)?;
        let old_root = parent.as_ref().map(|g| g.generation.root);
        let mut editor = TreeEditor::new(store, old_root.as_ref())?;
        // Only a directory that replaces DEST whole is DEST's tree, whose directories the stat
        // cache can keep.
        let whole = req.label.is_none() && !req.merge;
        let mut stored = self.store_blobs(req.dest, req.layout, whole, &mut editor, progress)?;
        let (new_root, tags, tagged) = match (stored.dir, req.label) {
            (Some((dir, _)), Some(label)) => self.tag_version(req.dest, dir, label, editor, old_root)?,
            (Some((dir, replaces)), None) => {
                if replaces && !req.merge {
                    editor.put_dir(&req.dest.path, dir)?;
                    let mut built = std::mem::take(&mut stored.kept_dirs);
                    let root = editor.write_recording(self, &mut |path, id| {
                        if let Some(rel) = path.strip_prefix(&req.dest.path) {
                            built.push((rel.as_str().to_string(), id));
                        }
                    })?;
                    if let Some(cache) = stored.stat_cache.as_mut() {
                        cache.record_dirs(built);
                    }
                    (root, Vec::new(), None)
                } else {
                    editor.merge_dir(&req.dest.path, dir)?;
                    (editor.write(self)?, Vec::new(), None)
                }
            }
            (None, _) => (editor.write(self)?, Vec::new(), None),
        };
        crate::fault::point("ingest.trees");
        let changes = diff_trees(self, old_root.as_ref(), Some(&new_root), &StorePath::root())?;
        if let Some(cache) = stored.stat_cache {
            cache.save(self)?;
        }
        let mut outcome = IngestOutcome {
            dest: req.dest.place(),
            generation: None,
            tip: parent.as_ref().map(|g| GenSummary::new(&g.id, &g.generation)),
            changes,
            written: self.stats(),
            files: stored.files,
            version: tagged,
            quests: QuestIo::default(),
        };
        if outcome.changes.is_empty() && tags.is_empty() {
            return Ok(outcome);
        }
        let tagged_paths: Vec<StorePath> = tags.iter().map(|t| t.path.clone()).collect();
        let next =
            NextGeneration { kind, parent: parent.as_ref(), root: new_root, tags, message: req.message };
        let committed = self.commit_generation(next)?;
        crate::fault::point("quests.mark");
        outcome.quests = self.mark_stale(kind, &outcome.changes, &tagged_paths)?;
        let summary = GenSummary::new(&committed.id, &committed.generation);
        outcome.generation = Some(summary.clone());
        outcome.tip = Some(summary);
        outcome.written = self.stats();
        Ok(outcome)
    }

    /// Ingests several tagged versions of one kind (each a directory of blobs already stored,
    /// at its place) as ONE generation carrying all their tags: a batch of fetched libraries is made durable, and
    /// `latest/` refreshed, once. Each is placed as [`Writer::ingest`] with `--version` would
    /// place it (the tip of its place when it is the highest version, else beside it); versions
    /// whose content is already tagged make no tag. Returns each version as tagged, in order.
    pub fn ingest_versions(
        &self,
        kind: Kind,
        items: Vec<(Locator, Dir, VersionLabel)>,
        message: String,
    ) -> Result<Vec<TaggedVersion>> {
        // The blobs are in (the caller stored them); the trees and the generation are next.
        crate::fault::point("ingest.blobs");
        let store = self.store;
        let parent = store.latest(kind)?;
        let old_root = parent.as_ref().map(|g| g.generation.root);
        let mut editor = TreeEditor::new(store, old_root.as_ref())?;
        let index = store.versions(kind)?;
        // Versions placed by this batch so far, by library key, for the tips after them.
        let mut placed: Vec<(String, String)> = Vec::new();
        let mut tags = Vec::new();
        let mut tagged = Vec::new();
        for (dest, dir, label) in items {
            let library = label
                .library
                .clone()
                .unwrap_or_else(|| dest.path.file_name().expect("checked: DEST is not the root").to_string());
            let existing = index.entries(&library);
            let key = super::versions::library_key(&library);
            let batch = placed.iter().filter(|(k, _)| *k == key).map(|(_, v)| v.as_str());
            let all: Vec<&str> = existing
                .iter()
                .map(|e| e.version.as_str())
                .chain(batch)
                .chain([label.version.as_str()])
                .collect();
            let tip = version::highest(version::scheme_for(all.iter().copied()), all.iter().copied())
                == Some(label.version.as_str());
            let tree = dir.clone().store(self)?.unwrap_or_else(Tree::empty_id);
            let already =
                existing.iter().any(|e| e.version == label.version && e.path == dest.path && e.tree == tree);
            if tip {
                editor.put_dir(&dest.path, dir)?;
            }
            if !already {
                let (version, path) = (label.version.clone(), dest.path.clone());
                tags.push(VersionTag { library: library.clone(), version, path, tree });
            }
            placed.push((key, label.version.clone()));
            tagged.push(TaggedVersion { library, version: label.version, tree, tip });
        }
        let new_root = editor.write(self)?;
        crate::fault::point("ingest.trees");
        let changes = diff_trees(self, old_root.as_ref(), Some(&new_root), &StorePath::root())?;
        if changes.is_empty() && tags.is_empty() {
            return Ok(tagged);
        }
        let tagged_paths: Vec<StorePath> = tags.iter().map(|t| t.path.clone()).collect();
        let next =
            NextGeneration { kind, parent: parent.as_ref(), root: new_root, tags, message: Some(message) };
        self.commit_generation(next)?;
        crate::fault::point("quests.mark");
        self.mark_stale(kind, &changes, &tagged_paths)?;
        Ok(tagged)
    }

    /// Stores the source's files as blobs: a single file (or stdin) straight into `editor`, a
    /// tree as a [`Dir`] (with whether it replaces DEST). Unchanged files, by the stat cache,
    /// are not read again.
    fn store_blobs(
        &self,
        dest: &Locator,
        layout: Layout,
        whole: bool,
        editor: &mut TreeEditor,
        progress: &dyn Progress,
    ) -> Result<Stored> {
        let (files, tree) = match layout {
            Layout::Stdin => {
                let id = self.put_blob_reader(&mut io::stdin().lock(), Path::new("<stdin>"))?;
                editor.put_blob(&dest.path, id)?;
                return Ok(Stored { files: 1, dir: None, stat_cache: None, kept_dirs: Vec::new() });
            }
            Layout::File(path) => {
                let len = std::fs::metadata(&path).map_err(Error::io("stat", &path))?.len();
                let id = self.put_blob_file(&path, len)?;
                editor.put_blob(&dest.path, id)?;
                return Ok(Stored { files: 1, dir: None, stat_cache: None, kept_dirs: Vec::new() });
            }
            Layout::Tree { files, replaces } => (files, replaces),
        };
        let bar = progress.start("hashing", files.len() as u64);
        let cache = self.store.stat_cache(&dest.place());
        // Many files never seen: their small blobs go into packs (see objects/incoming.rs).
        let unseen = files.iter().filter(|(_, abs)| !cache.knows(abs)).take(PACK_BLOBS_MIN).count();
        let packer = (unseen >= PACK_BLOBS_MIN).then(|| Packer::new(self));
        let ids: Vec<(Id, bool)> = files
            .par_iter()
            .map(|(rel, abs)| {
                let id = self.put_source_file(abs, rel.as_str(), &cache, packer.as_ref())?;
                bar.advance(1);
                Ok(id)
            })
            .collect::<Result<_>>()?;
        drop(bar);
        if let Some(packer) = packer {
            packer.finish();
        }
        self.start_sync();
        crate::fault::point("ingest.blobs");
        let kept = if whole && tree {
            let listed: Vec<(&str, &Path)> = files.iter().map(|(r, a)| (r.as_str(), a.as_path())).collect();
            cache.unchanged_dirs(&listed, &ids.iter().map(|(_, hit)| *hit).collect::<Vec<_>>())
        } else {
            Default::default()
        };
        let mut dir = Dir::default();
        let mut placed = std::collections::HashSet::new();
        for ((rel, _), (id, _)) in files.iter().zip(ids) {
            // The topmost unchanged directory above the file stands for it, unloaded.
            match rel.ancestors().find(|a| kept.contains_key(*a)) {
                Some(d) if placed.insert(d) => {
                    dir.insert_tree(&StorePath::new(d).expect("a prefix of a valid path"), kept[d]);
                }
                Some(_) => {}
                None => dir.insert_blob(rel, id),
            }
        }
        let kept_dirs = kept.into_iter().collect();
        Ok(Stored { files: files.len(), dir: Some((dir, tree)), stat_cache: Some(cache), kept_dirs })
    }

    /// Stores one source file, trusting the stat cache for a file it knows unchanged; a file
    /// the cache does not know is opened at once, so its `fstat` needs no path lookup.
    /// Returns the blob and whether the cache knew it unchanged.
    fn put_source_file(
        &self,
        abs: &Path,
        rel: &str,
        cache: &StatCache,
        packer: Option<&Packer>,
    ) -> Result<(Id, bool)> {
        let (meta, id, hit) = if cache.knows(abs) {
            let meta = std::fs::metadata(abs).map_err(Error::io("stat", abs))?;
            let (id, hit) = match cache.lookup(abs, &meta) {
                Some(id) => (id, true),
                None => (self.put_blob_file(abs, meta.len())?, false),
            };
            (meta, id, hit)
        } else {
            let file = std::fs::File::open(abs).map_err(Error::io("open", abs))?;
            let meta = file.metadata().map_err(Error::io("stat", abs))?;
            let id = match packer.filter(|_| meta.len() <= SMALL_BLOB) {
                // One buffer per thread, reused: a fresh one per file costs a page fault per page.
                Some(packer) => {
                    BUFFER.with_borrow_mut(|buf| packer.put(read_small(file, abs, meta.len(), buf)?))?
                }
                None => self.put_blob_open(file, abs, meta.len())?,
            };
            (meta, id, false)
        };
        cache.record(abs, rel, &meta, id);
        Ok((id, hit))
    }

    /// Places `dir` as version `label` of a library at DEST: as the tip when it is the highest
    /// version, else beside it (a backfill keeps the parent's root and carries the version in
    /// its tag). The same label with other content is another variant of that version (a
    /// project's own docs beside the registry's release): both stay, each by its tree.
    fn tag_version(
        &self,
        dest: &Locator,
        dir: Dir,
        label: &VersionLabel,
        mut editor: TreeEditor,
        old_root: Option<Id>,
    ) -> Result<(Id, Vec<VersionTag>, Option<TaggedVersion>)> {
        let store = self.store;
        let library = label
            .library
            .clone()
            .unwrap_or_else(|| dest.path.file_name().expect("checked: DEST is not the root").to_string());
        let index = store.versions(dest.kind)?;
        let existing = index.entries(&library);
        let all: Vec<&str> =
            existing.iter().map(|e| e.version.as_str()).chain([label.version.as_str()]).collect();
        let tip = version::highest(version::scheme_for(all.iter().copied()), all.iter().copied())
            == Some(label.version.as_str());
        let same_place =
            |e: &&super::versions::VersionEntry| e.version == label.version && e.path == dest.path;
        let (root, tree) = if tip {
            editor.put_dir(&dest.path, dir)?;
            let root = editor.write(self)?;
            (root, store.lookup(&root, &dest.path)?.map_or_else(Tree::empty_id, |(_, id)| id))
        } else {
            (old_root.unwrap_or_else(Tree::empty_id), dir.store(self)?.unwrap_or_else(Tree::empty_id))
        };
        let already = existing.iter().filter(same_place).any(|e| e.tree == tree);
        let mut tags = Vec::new();
        if !(already && Some(root) == old_root) {
            let path = dest.path.clone();
            tags.push(VersionTag { library: library.clone(), version: label.version.clone(), path, tree });
        }
        Ok((root, tags, Some(TaggedVersion { library, version: label.version.clone(), tree, tip })))
    }
}

#[derive(Debug, Serialize)]
pub struct KindChanges {
    pub generation: GenSummary,
    pub changes: Vec<Change>,
}

#[derive(Debug, Serialize)]
pub struct RmOutcome {
    pub generations: Vec<KindChanges>,
    pub quests: QuestIo,
}

impl Writer<'_> {
    /// Records one generation per kind without `paths`; their content stays addressable.
    pub fn remove(&self, paths: &[Locator], message: Option<String>) -> Result<RmOutcome> {
        let store = self.store;
        let mut by_kind: BTreeMap<Kind, Vec<&Locator>> = BTreeMap::new();
        for loc in paths {
            by_kind.entry(loc.kind).or_default().push(loc);
        }
        let mut staged: Vec<GenRef> = Vec::new();
        let mut out = Vec::new();
        for (kind, locs) in by_kind {
            let tip = store.latest(kind)?.ok_or(Error::EmptyKind { kind })?;
            let root = tip.generation.root;
            let mut editor = TreeEditor::new(store, Some(&root))?;
            for loc in locs {
                match store.lookup(&root, &loc.path)? {
                    Some((EntryKind::Blob, _)) if loc.subtree => {
                        return Err(Error::NotDirectory { path: loc.place() });
                    }
                    Some(_) => {}
                    None => {
                        return Err(Error::PathNotFound { kind, path: loc.place(), seq: tip.generation.seq });
                    }
                }
                editor.remove(&loc.path)?;
            }
            let new_root = editor.write(self)?;
            let changes = diff_trees(store, Some(&root), Some(&new_root), &StorePath::root())?;
            let next = NextGeneration {
                kind,
                parent: Some(&tip),
                root: new_root,
                tags: Vec::new(),
                message: message.clone(),
            };
            let g = self.stage_generation(next)?;
            out.push(KindChanges { generation: GenSummary::new(&g.id, &g.generation), changes });
            staged.push(g);
        }
        self.publish(&staged)?;
        let mut quests = QuestIo::default();
        for k in &out {
            let io = self.mark_stale(k.generation.kind, &k.changes, &[])?;
            quests.read += io.read;
            quests.written += io.written;
            quests.marked_stale += io.marked_stale;
        }
        Ok(RmOutcome { generations: out, quests })
    }
}

thread_local! {
    /// The bytes of the small file a hashing thread is reading.
    static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Reads a small file whole into `buf` (`len` from a stat already made; a file that grew
/// since is still read whole): the first read asks for one byte more than `len`, so a file
/// that did not change takes two reads, the second finding its end. `buf` keeps its size
/// between files (only its first bytes are the file's), so it is zeroed only as it grows.
fn read_small<'b>(mut file: std::fs::File, path: &Path, len: u64, buf: &'b mut Vec<u8>) -> Result<&'b [u8]> {
    use std::io::Read;
    let want = len as usize + 1;
    if buf.len() < want {
        buf.resize(want, 0);
    }
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match file.read(&mut buf[filled..]) {
            Ok(0) => return Ok(&buf[..filled]),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("read", path)(e)),
        }
    }
}
