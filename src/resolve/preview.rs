//! What `memorix update` would change, computed without writing anything: `memorix status`
//! and `memorix update --dry-run`. Project sources are hashed in memory.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::error::Result;
use super::{Fresh, PinSource, from_lock, mount_inputs, plan_mount, resolve_fresh, snapshot_source};
use crate::lock::{LockedLocator, Lockfile};
use crate::manifest::{Manifest, MountDecl};
use crate::model::{Id, Locator, Selector, StorePath};
use crate::store::Store;
use crate::store::objects::{Overlay, Snapshot, lookup};
use crate::view::derivation_plan::{DerivationPlan, Selected};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MountState {
    /// The lock holds and `memorix update` would change nothing.
    Fresh,
    /// The lock holds, and the Store has moved on since: `memorix update` takes the new content.
    UpdateAvailable,
    /// The lock no longer holds for this mount: a pin moved or a source changed.
    Stale,
    /// New or edited in memorix.toml: `memorix lock` resolves it.
    Unlocked,
    /// The mount cannot be resolved against the Store now (`why` says why).
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct VersionMove {
    pub locator: String,
    pub from: Option<String>,
    pub to: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MountPreview {
    pub mount: String,
    pub state: MountState,
    /// Why the mount is stale, or its error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// Mount-relative paths.
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
    pub versions: Vec<VersionMove>,
}

/// Each mount (or those `only` names) compared with what it would resolve to now.
pub fn preview(
    m: &Manifest,
    store: &Store,
    lock: Option<&Lockfile>,
    only: Option<&BTreeSet<String>>,
) -> Result<Vec<MountPreview>> {
    let mut overlay = Overlay { store: Some(store), trees: Default::default() };
    let mut snapshots = Vec::new();
    for s in &m.sources {
        let snap = snapshot_source(m, s)?;
        overlay.trees.extend(snap.trees.clone());
        snapshots.push((s.dest.clone(), snap));
    }
    let mut out = Vec::new();
    let pins = PinSource::new(m);
    for mount in &m.mounts {
        let name = mount.path.to_string();
        if only.is_some_and(|names| !names.contains(&name)) {
            continue;
        }
        // One mount that cannot resolve (a conflict in the Store, a pin file gone) is that
        // mount's state, not the end of the report.
        let preview = preview_mount(store, &overlay, &snapshots, &pins, m, mount, lock);
        out.push(preview.unwrap_or_else(|e| MountPreview {
            state: MountState::Error,
            why: Some(describe_error(&e)),
            ..MountPreview::new(&name)
        }));
    }
    Ok(out)
}

/// Whether resolving failed only because this Store has no generation or version index at
/// the locator's place, rather than because of what it holds.
fn knows_nothing(e: &super::Error) -> bool {
    use crate::store::Error as S;
    matches!(e, super::Error::Store(S::EmptyKind { .. } | S::NoVersions { .. }))
}

/// An error as one line: its message and its help.
fn describe_error(e: &super::Error) -> String {
    match miette::Diagnostic::help(e) {
        Some(help) => format!("{e} (help: {help})"),
        None => e.to_string(),
    }
}

impl MountPreview {
    fn new(mount: &str) -> MountPreview {
        MountPreview {
            mount: mount.to_string(),
            state: MountState::Fresh,
            why: None,
            added: Vec::new(),
            removed: Vec::new(),
            modified: Vec::new(),
            versions: Vec::new(),
        }
    }
}

/// One mount compared with what it would resolve to now.
fn preview_mount(
    store: &Store,
    overlay: &Overlay,
    snapshots: &[(Locator, Snapshot)],
    pins: &PinSource,
    m: &Manifest,
    mount: &MountDecl,
    lock: Option<&Lockfile>,
) -> Result<MountPreview> {
    let name = mount.path.to_string();
    let locked = lock.and_then(|l| l.mounts.get(&name)).filter(|l| l.inputs == mount_inputs(m, mount));
    let as_locked = locked.map(|l| from_lock(Some(store), mount, l)).transpose()?;
    let mut selected = Vec::new();
    let mut now = Vec::new();
    for (i, loc) in mount.select.iter().enumerate() {
        let (s, l) = match (resolve_dry(store, overlay, snapshots, pins, mount, loc), locked, &as_locked) {
            (Ok((s, l, _)), _, _) => (s, l),
            // This Store knows nothing at that place beyond what the lock names (a clone whose
            // objects came from a substituter): nothing newer to take, so the locked entry.
            (Err(e), Some(locked), Some(held)) if knows_nothing(&e) => {
                (held[i].clone(), locked.locators[i].clone())
            }
            (Err(e), _, _) => return Err(e),
        };
        selected.push(s);
        now.push(l);
    }
    // Every locator still resolves to the subtree (and version) it is locked at: nothing to
    // compare, so no tree is walked (Merkle: equal ids, equal content).
    let same = |(was, is): (&LockedLocator, &LockedLocator)| {
        (was.kind, was.id, &was.version) == (is.kind, is.id, &is.version)
    };
    if let Some(locked) = locked
        && locked.locators.len() == now.len()
        && locked.locators.iter().zip(&now).all(same)
    {
        return Ok(MountPreview::new(&name));
    }
    let new_plan = plan_mount(overlay, m, mount, &selected)?;
    let Some(locked) = locked else {
        return Ok(MountPreview {
            state: MountState::Unlocked,
            added: new_plan.files.keys().map(StorePath::to_string).collect(),
            ..MountPreview::new(&name)
        });
    };
    let old_plan = plan_mount(overlay, m, mount, as_locked.as_deref().unwrap_or_default())?;
    let mut p = diff(&name, &old_plan, &new_plan);
    for (was, is) in locked.locators.iter().zip(&now) {
        if was.version != is.version {
            p.versions.push(VersionMove {
                locator: is.locator.clone(),
                from: was.version.clone(),
                to: is.version.clone(),
            });
        }
    }
    if !(p.added.is_empty() && p.removed.is_empty() && p.modified.is_empty() && p.versions.is_empty()) {
        p.state = MountState::UpdateAvailable;
    }
    Ok(p)
}

/// Like a fresh resolve, but a locator inside a project source reads the source as it is on
/// disk now (what the next build would ingest).
fn resolve_dry(
    store: &Store,
    overlay: &Overlay,
    snapshots: &[(Locator, Snapshot)],
    pins: &PinSource,
    mount: &MountDecl,
    loc: &Locator,
) -> Result<Fresh> {
    let follows = matches!(loc.selector, None | Some(Selector::Latest));
    let source = snapshots.iter().find(|(dest, _)| dest.kind == loc.kind && loc.path.starts_with(&dest.path));
    let Some((dest, snap)) = source.filter(|_| follows) else {
        let own: Vec<crate::model::Id> =
            snapshots.iter().filter(|(d, _)| d.kind == loc.kind).map(|(_, s)| s.id).collect();
        return resolve_fresh(store, pins, mount, loc, &own);
    };
    let rel = StorePath::new(loc.path.as_str()[dest.path.as_str().len()..].trim_start_matches('/'))
        .expect("a suffix of a valid path");
    let found = match snap.kind {
        crate::model::EntryKind::Tree => lookup(overlay, &snap.id, &rel)?,
        kind if rel.is_root() => Some((kind, snap.id)),
        _ => None,
    };
    let (kind, id) = found.ok_or_else(|| crate::store::Error::PathNotFound {
        kind: loc.kind,
        path: loc.place(),
        seq: 0,
    })?;
    let selected =
        Selected { locator: loc.clone(), kind, id, generation: None, pinned_seq: None, version: None };
    let locked = LockedLocator {
        locator: loc.to_string(),
        kind,
        id,
        generation: None,
        version: None,
        pin: None,
        fetched: None,
    };
    Ok((selected, locked, None))
}

fn diff(mount: &str, old: &DerivationPlan, new: &DerivationPlan) -> MountPreview {
    let blobs = |p: &DerivationPlan| -> BTreeMap<String, Id> {
        p.files.iter().map(|(k, o)| (k.to_string(), o.blob)).collect()
    };
    let (a, b) = (blobs(old), blobs(new));
    MountPreview {
        added: b.keys().filter(|k| !a.contains_key(*k)).cloned().collect(),
        removed: a.keys().filter(|k| !b.contains_key(*k)).cloned().collect(),
        modified: a
            .iter()
            .filter(|(k, v)| b.get(*k).is_some_and(|w| w != *v))
            .map(|(k, _)| k.clone())
            .collect(),
        ..MountPreview::new(mount)
    }
}
