//! `memorix verify [--project]`: the Store's own check, and that the project's memory
//! directory holds exactly what its profile says.

use super::context::Context;
use super::error::Result;
use super::project::Project;
use crate::deliver::{self, Delivery};
use crate::progress::Progress;
use crate::store::Store;
use crate::store::maintenance::{Problem, VerifyReport};

/// `verify`: the Store's own check. It reads without waiting for writers, so a build or `gc`
/// at work can show it an object or checkout in passing; whatever it finds wrong is checked
/// again with every writer held off, and only what is still wrong there is reported.
pub fn verify(ctx: &Context) -> Result<VerifyReport> {
    let store = ctx.store()?;
    let report = store.maintenance().verify(ctx.progress)?;
    if report.ok {
        return Ok(report);
    }
    let _writers = store.hold_writers(ctx.progress)?;
    Ok(store.maintenance().verify(ctx.progress)?)
}

/// `verify --project`: the Store, and that the project's memory directory holds exactly the
/// current profile environment's files (each rehashed) and its INDEX.md; like [`verify`],
/// what it finds wrong is checked again with the project's and the Store's writers held off.
pub fn verify_project(ctx: &mut Context) -> Result<VerifyReport> {
    let progress = ctx.progress;
    let report = check_project(ctx.project()?, ctx.store()?, progress)?;
    if report.ok {
        return Ok(report);
    }
    // The project's lock first, as every writer takes them.
    let _project = ctx.guard_project()?;
    let ctx = &*ctx;
    let (project, store) = (ctx.project()?, ctx.store()?);
    let _writers = store.hold_writers(progress)?;
    let report = check_project(project, store, progress)?;
    if !report.ok {
        // So that `memorix build` repairs what this found.
        super::build::forget_stamp(project);
    }
    Ok(report)
}

fn check_project(project: &Project, store: &Store, progress: &dyn Progress) -> Result<VerifyReport> {
    let mut report = store.maintenance().verify(progress)?;
    let m = &project.manifest;
    let memory = m.memory_dir();
    let label = m.memory.to_string();
    let mut problems = Vec::new();
    let profile = crate::profile::Profile::load(&project.state_dir)?;
    match profile.current() {
        None => problems
            .push(Problem { object: label, message: "no environment is active; run `memorix build`".into() }),
        Some(b) => {
            let mut delivery = Delivery::from_store(store, b.environment, Some(m), b.generation)?;
            delivery.pinned_by(&project.pin_files()?);
            let record = deliver::ActivationRecord::load(&project.state_dir);
            let drift = deliver::inspect(store, &memory, &delivery, m.delivery, record.as_ref())?;
            report.checked.memory_files += drift.files;
            problems.extend(
                drift
                    .problems(b.environment)
                    .into_iter()
                    .map(|(rel, message)| Problem { object: format!("{label}/{rel}"), message }),
            );
        }
    }
    report.problems.extend(problems);
    report.ok = report.problems.is_empty();
    Ok(report)
}
