//! `memorix profile`, `memorix rollback`, `memorix activate`: move the project's memory between
//! the environments it has been bound to.

use serde::Serialize;

use super::build::activate_with_reuse;
use super::context::Context;
use super::error::{Error, Result};
use crate::deliver::{self, Delivery, Look, Placed, Shown};
use crate::model::{Id, IdPrefix};
use crate::profile::Profile;
use crate::store::Store;
use crate::store::records::now_rfc3339;

pub fn history(ctx: &Context) -> Result<Profile> {
    Ok(Profile::load(&ctx.project()?.state_dir)?)
}

/// Where `rollback` / `activate` should move.
pub enum Target {
    /// The binding before the current one (`rollback`).
    Previous,
    /// A binding generation (`rollback --to N`, `activate N`).
    Generation(u64),
    /// An environment by id prefix (`activate ENV_ID`): its binding, or a new one.
    Environment(String),
}

#[derive(Debug, Serialize)]
pub struct Moved {
    pub from: Option<u64>,
    pub to: u64,
    pub environment: Id,
    pub placed: Placed,
    /// Agent harness files written or removed.
    pub harness: crate::harness::sync::Synced,
}

pub fn move_to(ctx: &mut Context, target: Target) -> Result<Moved> {
    let _lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let project = ctx.project()?;
    let store = ctx.store()?;
    let mut profile = Profile::load(&project.state_dir)?;
    let from = profile.current;
    let binding = match target {
        Target::Previous => {
            let current = from.ok_or_else(no_bindings)?;
            let i = profile.bindings.iter().position(|b| b.generation == current).unwrap_or(0);
            if i == 0 {
                return Err(Error::NothingToRollBack { current });
            }
            profile.bindings[i - 1].clone()
        }
        Target::Generation(n) => {
            let found = profile.bindings.iter().find(|b| b.generation == n).cloned();
            found.ok_or(Error::NoSuchProfileGeneration { generation: n })?
        }
        Target::Environment(text) => {
            let prefix = IdPrefix::parse(&text).ok_or_else(|| Error::BadId(text.clone()))?;
            match profile.bindings.iter().rev().find(|b| prefix.matches(&b.environment)) {
                Some(b) => b.clone(),
                None => {
                    let id = store_environment(store, &prefix)?;
                    let generation = profile.bind(id, "activate", now_rfc3339());
                    profile
                        .bindings
                        .last()
                        .filter(|b| b.generation == generation)
                        .cloned()
                        .expect("just bound")
                }
            }
        }
    };
    let mut delivery =
        Delivery::from_store(store, binding.environment, Some(&project.manifest), binding.generation)?;
    delivery.pinned_by(&project.pin_files()?);
    super::changes::place_bound(store, project, &binding, &mut delivery);
    let shown = deliver::shown_environment(&project.manifest.memory_dir());
    // The harness files of the binding's time; a binding older than `[agents]` takes today's.
    let spec = match binding.agents.clone() {
        Some(recorded) => recorded.active(),
        None => crate::harness::spec(&project.manifest),
    };
    let recorded = crate::deliver::ActivationRecord::load(&project.state_dir);
    let (placed, harness, _) = activate_with_reuse(
        ctx,
        &delivery,
        // Not checked here: every file is looked at.
        Shown { record: recorded.as_ref(), environment: shown, look: Look::Everything, kept: None },
        spec.as_ref(),
    )?;
    profile.current = Some(binding.generation);
    profile.save(&project.state_dir)?;
    crate::fault::point("profile.saved");
    Ok(Moved { from, to: binding.generation, environment: binding.environment, placed, harness })
}

fn no_bindings() -> Error {
    Error::NoProfileGenerations
}

/// The one stored environment whose id starts with `prefix`.
pub(crate) fn store_environment(store: &Store, prefix: &IdPrefix) -> Result<Id> {
    match store.records().environments_matching(prefix)?.as_slice() {
        [id] => Ok(*id),
        [] => Err(Error::UnknownEnvironment { prefix: prefix.to_string() }),
        many => Err(Error::AmbiguousId {
            prefix: prefix.to_string(),
            candidates: many.iter().map(Id::to_string).collect(),
        }),
    }
}
