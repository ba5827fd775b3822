//! Views: derivations (one resolved selection) and environments (derivations mounted as one
//! tree), the conflict rules between their files, and their objects in the Store.

pub mod api;
pub mod artifacts;
pub mod conflict;
pub mod derivation_plan;
pub mod environment_plan;
pub mod error;
pub mod outline;

pub use error::{Error, Result};

use crate::manifest::{Manifest, MountDecl};
use crate::model::{Id, Locator};
use crate::store::records::{QuestKind, Selection, quest_id};

/// A mount's selection IR, as its quest records it (with the mount path for an environment's
/// quest, without it for a derivation's, so projects mounting one selection elsewhere share it).
pub fn selection(mount: &MountDecl, with_path: bool) -> Selection {
    Selection {
        mount: if with_path { mount.path.to_string() } else { String::new() },
        select: mount.select.iter().map(Locator::to_string).collect(),
        include: mount.include.clone(),
        exclude: mount.exclude.clone(),
        match_policy: mount.match_policy.map(|p| p.as_str().to_string()),
        library: mount.library.clone(),
        version: mount.version.clone(),
    }
}

/// The quest of a mount's derivation.
pub fn derivation_quest(mount: &MountDecl) -> Id {
    quest_id(QuestKind::Derivation, &[selection(mount, false)])
}

/// The quest of a project's environment: every mount with its path.
pub fn environment_quest(m: &Manifest) -> Id {
    let mounts: Vec<Selection> = m.mounts.iter().map(|x| selection(x, true)).collect();
    quest_id(QuestKind::Environment, &mounts)
}

/// A project's quests: one per mount's derivation, then its environment's.
pub fn project_quests(m: &Manifest) -> Vec<Id> {
    m.mounts.iter().map(derivation_quest).chain([environment_quest(m)]).collect()
}
