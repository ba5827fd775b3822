//! `memorix verify [--project]`: the Store's own check, and that the project's memory
//! directory holds exactly what its profile says.

use std::path::Path;

use super::error::Result;
use crate::deliver::{self, Delivery};
use crate::progress::Progress;
use crate::store::Store;
use crate::store::verify::{Problem, VerifyReport};

pub fn verify(store_root: &Path, progress: &dyn Progress) -> Result<VerifyReport> {
    Ok(Store::open(store_root)?.verify(progress)?)
}

/// `verify --project`: the Store, and that the project's memory directory holds exactly the
/// current profile environment's files (each rehashed) and its INDEX.md.
pub fn verify_project(start: &Path, store_root: &Path, progress: &dyn Progress) -> Result<VerifyReport> {
    let mut report = verify(store_root, progress)?;
    let project = super::project::Project::open(start)?;
    let m = &project.manifest;
    let memory = m.memory_dir();
    let label = m.memory.to_string();
    let mut problems = Vec::new();
    let profile = crate::profile::Profile::load(&project.state_dir)?;
    match profile.current() {
        None => problems
            .push(Problem { object: label, message: "no environment is active; run `memorix build`".into() }),
        Some(b) => {
            let store = Store::open(store_root)?;
            let delivery = Delivery::from_store(&store, b.environment, Some(m), b.generation)?;
            let record = deliver::ActivationRecord::load(&project.state_dir);
            let drift = deliver::inspect(&store, &memory, &delivery, m.delivery, record.as_ref())?;
            report.checked.memory_files += drift.files;
            problems.extend(
                drift
                    .problems(b.environment)
                    .into_iter()
                    .map(|(rel, message)| Problem { object: format!("{label}/{rel}"), message }),
            );
        }
    }
    if !problems.is_empty() {
        // So that `memorix build` repairs what this found.
        super::build::forget_stamp(&project);
    }
    report.problems.extend(problems);
    report.ok = report.problems.is_empty();
    Ok(report)
}
