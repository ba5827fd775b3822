//! `memorix rm PATH...`: a new generation without the paths; their content stays addressable.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{GenSummary, publish, stage_generation};
use crate::diagnostics::{Error, Result};
use crate::model::{EntryKind, Kind, Locator, StorePath};
use crate::progress::Progress;
use crate::store::Store;
use crate::store::diff::{Change, diff_trees};
use crate::store::edit::TreeEditor;
use crate::store::quest::QuestIo;

pub struct RmRequest {
    pub paths: Vec<Locator>,
    pub message: Option<String>,
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

pub fn rm(store_root: &Path, req: RmRequest, progress: &dyn Progress) -> Result<RmOutcome> {
    let mut by_kind: BTreeMap<Kind, Vec<&Locator>> = BTreeMap::new();
    for loc in &req.paths {
        if loc.path.is_root() {
            return Err(Error::usage(
                format!("refusing to remove all of `{}/`", loc.kind),
                Some(format!("name the paths inside {}/ to remove", loc.kind)),
            ));
        }
        by_kind.entry(loc.kind).or_default().push(loc);
    }
    let store = Store::open(store_root)?;
    let writer = store.writer(progress)?;
    super::heal_latest(&writer)?;
    let mut staged = Vec::new();
    let mut out = Vec::new();
    for (kind, locs) in by_kind {
        let tip = store.latest(kind)?.ok_or(Error::EmptyKind { kind })?;
        let root = tip.generation.root;
        let mut editor = TreeEditor::new(&store, Some(&root))?;
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
        let new_root = editor.write(&writer)?;
        let changes = diff_trees(&store, Some(&root), Some(&new_root), &StorePath::root())?;
        let g = stage_generation(&writer, kind, Some(&tip), new_root, Vec::new(), req.message.clone())?;
        out.push(KindChanges { generation: GenSummary::new(&g.id, &g.generation), changes });
        staged.push(g);
    }
    publish(&writer, &staged)?;
    let mut quests = QuestIo::default();
    for k in &out {
        let io = writer.mark_stale(k.generation.kind, &k.changes, &[])?;
        quests.read += io.read;
        quests.written += io.written;
        quests.marked_stale += io.marked_stale;
    }
    Ok(RmOutcome { generations: out, quests })
}
