//! `memorix doctor`: what each agent harness loads from this project at session start, and
//! what would keep the memory from reaching it (book: design/harnesses.md#doctor).

use super::context::Context;
use super::error::{Error, Result};
use super::project::Project;
use crate::harness;
use crate::harness::doctor::{Problem, Report};
use crate::model::HarnessName;

/// Examines `only` (a harness name), else the harnesses `[agents]` names, else every harness
/// memorix knows (what each would load from the project as it is), for a session started in
/// `cwd` (relative to the project root; the root when `None`).
pub fn doctor(ctx: &Context, only: Option<&str>, cwd: Option<&str>) -> Result<Report> {
    let project = ctx.project()?;
    let cwd = match cwd {
        None => String::new(),
        Some(dir) => session_dir(project, dir)?,
    };
    let m = &project.manifest;
    let configured = harness::spec(m).map(|s| s.harnesses).unwrap_or_default();
    let harnesses = match only {
        Some(name) => vec![HarnessName::parse(name).ok_or_else(|| unknown(name))?],
        None if configured.is_empty() => HarnessName::ALL.to_vec(),
        None => configured.clone(),
    };
    let mut report =
        harness::doctor::examine(&project.confined, m.memory.as_str(), &harnesses, &configured, &cwd);
    if only.is_none() && !report.harnesses.iter().any(|h| h.points_into_memory) {
        report.setup = Some(setup_problem(m.agents.is_some(), m.memory.as_str()));
        report.problems += 1;
    }
    Ok(report)
}

/// Why no harness is pointed at the memory, and how to point them: a project that never set
/// up `[agents]` (and wrote no pointer by hand) delivers memory no agent reads.
fn setup_problem(configured: bool, memory: &str) -> Problem {
    let message = if configured {
        format!(
            "no harness loads anything that points at {memory}/ yet: run `memorix build`, which writes the entry points [agents] asks for"
        )
    } else {
        format!(
            "no harness loads anything that points at {memory}/: memorix.toml has no [agents] table, so `memorix build` writes no entry points. Run `memorix init --agents` (harnesses agents-md and claude; edit the list for cursor, copilot, gemini, codex, windsurf, cline, kiro, zed, junie), then `memorix build`"
        )
    };
    Problem { code: "not_set_up", message }
}

/// `--cwd DIR`: a folder of the project, relative to its root, without `.` or `..` parts.
fn session_dir(project: &Project, dir: &str) -> Result<String> {
    let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    let inside =
        !dir.starts_with('/') && parts.iter().all(|p| *p != ".." && !p.chars().any(char::is_control));
    let rel = parts.join("/");
    if !inside || !project.confined.root().join(&rel).is_dir() {
        return Err(Error::BadSessionDir { dir: dir.to_string() });
    }
    Ok(rel)
}

fn unknown(name: &str) -> Error {
    let known: Vec<String> = HarnessName::ALL.iter().map(|h| h.as_str().to_string()).collect();
    let suggestion = known.iter().find(|k| strsim::levenshtein(k, name) <= 2).cloned();
    Error::UnknownHarness { name: name.to_string(), suggestion, known }
}
