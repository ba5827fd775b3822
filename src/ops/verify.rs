//! `memorix verify [--project]`: the Store's own check, and that the project's memory
//! directory holds exactly what its profile says.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use super::error::{Error, Result};
use crate::deliver::{self, Delivery};
use crate::diagnostics::FromIo;
use crate::progress::Progress;
use crate::store::Store;
use crate::store::blob::hash_file;
use crate::store::verify::{Problem, VerifyReport, read_dir_sorted};

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
            let index = delivery.index_text(&store)?;
            let mut seen = BTreeSet::new();
            let mut stack = vec![memory.clone()];
            while let Some(dir) = stack.pop() {
                for path in read_dir_sorted(&dir)? {
                    let meta = fs::symlink_metadata(&path).map_err(Error::io("stat", &path))?;
                    if meta.is_dir() {
                        stack.push(path);
                        continue;
                    }
                    let rel = path.strip_prefix(&memory).expect("below the memory").display().to_string();
                    let object = format!("{label}/{rel}");
                    report.checked.memory_files += 1;
                    if rel == deliver::INDEX {
                        if fs::read_to_string(&path).ok().as_deref() != Some(index.as_str()) {
                            problems
                                .push(Problem { object, message: "differs from what memorix wrote".into() });
                        }
                        seen.insert(rel);
                        continue;
                    }
                    let Some((_, blob)) = delivery.files.get(&rel) else {
                        problems.push(Problem {
                            object,
                            message: format!("is not in environment {}", b.environment.short()),
                        });
                        continue;
                    };
                    seen.insert(rel);
                    let ok = match m.delivery {
                        crate::manifest::Delivery::Symlink => {
                            fs::read_link(&path).ok() == Some(store.blob_path(blob))
                        }
                        _ => meta.is_file() && hash_file(&path).ok().as_ref() == Some(blob),
                    };
                    if !ok {
                        problems.push(Problem {
                            object,
                            message: format!(
                                "was changed (expected blob {blob}); `memorix build` restores it"
                            ),
                        });
                    }
                }
            }
            for rel in delivery
                .files
                .keys()
                .map(String::as_str)
                .chain([deliver::INDEX])
                .filter(|r| !seen.contains(*r))
            {
                problems.push(Problem {
                    object: format!("{label}/{rel}"),
                    message: "is missing; `memorix build` restores it".into(),
                });
            }
        }
    }
    if !problems.is_empty() {
        // A build with unchanged inputs checks only directories; make the next one look at
        // every file, so `memorix build` repairs what this found.
        let _ = fs::remove_file(project.state_dir.join(crate::ops::build::STAMP));
    }
    report.problems.extend(problems);
    report.ok = report.problems.is_empty();
    Ok(report)
}
