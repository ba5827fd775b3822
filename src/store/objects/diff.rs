//! File-level differences between two trees; equal subtree ids are skipped, so the cost grows
//! with what changed, not with the size of the tree.

use serde::Serialize;

use super::tree::{Tree, TreeSource};
use crate::model::{EntryKind, Id, StorePath};
use crate::store::error::Result;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Added,
    Modified,
    Removed,
}

impl ChangeKind {
    pub fn letter(self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Removed => 'D',
        }
    }
}

/// One file that differs.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Change {
    pub path: StorePath,
    pub change: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Id>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Id>,
}

/// The file changes from tree `old` to tree `new` (either may be absent), with paths prefixed
/// by `base`, in tree order (depth first, names bytewise).
pub fn diff_trees(
    trees: &dyn TreeSource,
    old: Option<&Id>,
    new: Option<&Id>,
    base: &StorePath,
) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    diff_into(trees, old, new, base, &mut out)?;
    Ok(out)
}

fn diff_into(
    trees: &dyn TreeSource,
    old: Option<&Id>,
    new: Option<&Id>,
    base: &StorePath,
    out: &mut Vec<Change>,
) -> Result<()> {
    if old == new {
        return Ok(());
    }
    let empty = Tree::default();
    let old_tree = match old {
        Some(id) => trees.tree(id)?,
        None => empty.clone(),
    };
    let new_tree = match new {
        Some(id) => trees.tree(id)?,
        None => empty,
    };
    let (a, b) = (old_tree.entries(), new_tree.entries());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.name.as_str().as_bytes().cmp(y.name.as_str().as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (left, right) = match order {
            std::cmp::Ordering::Less => {
                i += 1;
                (Some(&a[i - 1]), None)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (None, Some(&b[j - 1]))
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (Some(&a[i - 1]), Some(&b[j - 1]))
            }
        };
        let name = &left.or(right).expect("one side is present").name;
        let path = base.join(name);
        let side = |e: Option<&super::tree::Entry>, kind| e.filter(|e| e.kind == kind).map(|e| e.id);
        // Files on either side.
        let (old_blob, new_blob) = (side(left, EntryKind::Blob), side(right, EntryKind::Blob));
        match (old_blob, new_blob) {
            (Some(o), Some(n)) if o != n => out.push(Change {
                path: path.clone(),
                change: ChangeKind::Modified,
                old: Some(o),
                new: Some(n),
            }),
            (Some(o), None) => {
                out.push(Change { path: path.clone(), change: ChangeKind::Removed, old: Some(o), new: None })
            }
            (None, Some(n)) => {
                out.push(Change { path: path.clone(), change: ChangeKind::Added, old: None, new: Some(n) })
            }
            _ => {}
        }
        // Subtrees on either side.
        let (old_sub, new_sub) = (side(left, EntryKind::Tree), side(right, EntryKind::Tree));
        if old_sub.is_some() || new_sub.is_some() {
            diff_into(trees, old_sub.as_ref(), new_sub.as_ref(), &path, out)?;
        }
    }
    Ok(())
}
