//! `memorix doctor`: what each agent harness loads from this project at session start, and
//! what would keep the memory from reaching it (DESIGN.md §14).

use std::path::Path;

use super::error::{Error, Result};
use super::project::Project;
use crate::harness::{self, doctor::Report};
use crate::model::HarnessName;

/// Examines `only` (a harness name), else the harnesses `[agents]` names, else every harness
/// memorix knows (what each would load from the project as it is).
pub fn doctor(start: &Path, only: Option<&str>) -> Result<Report> {
    let project = Project::open(start)?;
    let m = &project.manifest;
    let configured = harness::spec(m).map(|s| s.harnesses).unwrap_or_default();
    let harnesses = match only {
        Some(name) => vec![HarnessName::parse(name).ok_or_else(|| unknown(name))?],
        None if configured.is_empty() => HarnessName::ALL.to_vec(),
        None => configured.clone(),
    };
    Ok(harness::doctor::examine(&project.confined, m.memory.as_str(), &harnesses, &configured))
}

fn unknown(name: &str) -> Error {
    let known: Vec<String> = HarnessName::ALL.iter().map(|h| h.as_str().to_string()).collect();
    let suggestion = known.iter().find(|k| strsim::levenshtein(k, name) <= 2).cloned();
    Error::UnknownHarness { name: name.to_string(), suggestion, known }
}
