//! `memorix log [KIND|PATH]`: generations, newest first, each with the files it changed.

use serde::Serialize;

use super::context::Context;
use super::error::Result;
use crate::model::{EntryKind, Id, Kind, Locator, StorePath};
use crate::store::Store;
use crate::store::objects::{Change, ChangeKind, diff_trees};
pub use crate::store::records::GenSummary;

#[derive(Debug, Serialize)]
pub struct LogEntry {
    pub generation: GenSummary,
    pub changes: Vec<Change>,
}

/// `None` logs every kind; a locator with an empty path logs its kind; otherwise only
/// generations that changed something at or under the path.
/// The newest `limit` generations (all when `None`) that changed something under `filter`:
/// each kind's history is diffed only as far back as the limit reaches.
pub fn log(ctx: &Context, filter: Option<&Locator>, limit: Option<usize>) -> Result<Vec<LogEntry>> {
    let store = ctx.store()?;
    let kinds: Vec<Kind> = match filter {
        Some(loc) => vec![loc.kind],
        None => Kind::ALL.to_vec(),
    };
    let path = filter.map(|l| l.path.clone()).unwrap_or_default();
    let mut out = Vec::new();
    for kind in kinds {
        // Read as far back as the limit reaches (and the parent of the last one shown).
        let mut history = store.records().walk_history(kind)?.peekable();
        let mut taken = 0;
        while let Some(g) = history.next() {
            let g = g?;
            if limit.is_some_and(|n| taken >= n) {
                break;
            }
            // A parent that cannot be read is an error, never "no parent" (all files added).
            if matches!(history.peek(), Some(Err(_))) {
                history.next().transpose()?;
            }
            let parent_root = history.peek().and_then(|p| p.as_ref().ok()).map(|p| p.generation.root);
            let changes = changes_under(store, parent_root.as_ref(), &g.generation.root, &path)?;
            if changes.is_empty() && !path.is_root() {
                continue;
            }
            taken += 1;
            out.push(LogEntry { generation: GenSummary::new(&g.id, &g.generation), changes });
        }
    }
    // Newest first across kinds; within one second, by kind then seq.
    out.sort_by(|a, b| {
        let (x, y) = (&a.generation, &b.generation);
        y.time.cmp(&x.time).then(x.kind.cmp(&y.kind)).then(y.seq.cmp(&x.seq))
    });
    out.truncate(limit.unwrap_or(usize::MAX));
    Ok(out)
}

/// Changes between two roots, limited to `path` (a file or a subtree).
fn changes_under(
    store: &Store,
    old_root: Option<&Id>,
    new_root: &Id,
    path: &StorePath,
) -> Result<Vec<Change>> {
    if path.is_root() {
        return Ok(diff_trees(store, old_root, Some(new_root), path)?);
    }
    let old = match old_root {
        Some(r) => store.objects().lookup(r, path)?,
        None => None,
    };
    let new = store.objects().lookup(new_root, path)?;
    let tree = |e: Option<(EntryKind, Id)>| e.filter(|(k, _)| *k == EntryKind::Tree).map(|(_, id)| id);
    let blob = |e: Option<(EntryKind, Id)>| e.filter(|(k, _)| *k == EntryKind::Blob).map(|(_, id)| id);
    let mut out = Vec::new();
    let change = match (blob(old), blob(new)) {
        (Some(o), Some(n)) if o != n => Some(ChangeKind::Modified),
        (Some(_), None) => Some(ChangeKind::Removed),
        (None, Some(_)) => Some(ChangeKind::Added),
        _ => None,
    };
    if let Some(change) = change {
        out.push(Change { path: path.clone(), change, old: blob(old), new: blob(new) });
    }
    out.extend(diff_trees(store, tree(old).as_ref(), tree(new).as_ref(), path)?);
    Ok(out)
}
