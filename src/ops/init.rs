//! `memorix init`: a commented starter manifest listing the pin files it finds, `.memorix/`
//! (which keeps itself out of git), `.ignore` for rg and fd, and (with `--agents`) an
//! `[agents]` table, from which `memorix build` writes each harness's files. Idempotent.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use super::project::ensure_state_dir;
use crate::confine::Confined;
use crate::diagnostics::FromIo;
use crate::manifest;
use crate::manifest::init::starter;
use crate::store::fsutil;

/// What to do with `[agents]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agents {
    /// Leave it as it is.
    Keep,
    /// Add it (the default harnesses) when memorix.toml has none.
    Write,
    /// Take it out (the next build removes the generated files), and any managed block an
    /// older memorix wrote into AGENTS.md / CLAUDE.md.
    Remove,
}

/// What `init` did to `[agents]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AgentsEdit {
    #[default]
    Unchanged,
    Added,
    Removed,
}

#[derive(Debug, Serialize, Default)]
pub struct InitOutcome {
    pub name: String,
    /// memorix.toml was written now (false: it existed and was kept).
    pub manifest_written: bool,
    /// The pin files found in the project and listed in the new manifest's `[pins] files`.
    pub pins: Vec<String>,
    /// What happened to `[agents]` in an existing memorix.toml (a new one is written with it).
    pub agents: AgentsEdit,
    /// memorix.toml has `[agents]` now: `memorix build` writes harness entry points.
    pub agents_configured: bool,
    /// `.ignore` was created or given the memory directory's line.
    pub ignore_updated: bool,
    /// Other files changed: AGENTS.md or CLAUDE.md with an old block taken out.
    pub changed: Vec<String>,
    /// The files this run wrote that belong in git.
    pub commit: Vec<String>,
    /// What memorix generates here and keeps out of git itself.
    pub generated: Vec<String>,
}

pub fn init(ctx: &Context, name: Option<&str>, agents: Agents) -> Result<InitOutcome> {
    let dir = ctx.cwd();
    let path = dir.join(manifest::FILE);
    let name = match name {
        Some(n) => n.to_string(),
        None => dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "project".to_string()),
    };
    let mut out = InitOutcome { name, ..InitOutcome::default() };
    // Every file init may touch is checked before any is written: a hostile repository's
    // `.ignore` or AGENTS.md linked outside is refused, not written through.
    let confined = Confined::new(dir)?;
    let managed = [".memorix", ".memorix/.gitignore", manifest::FILE, ".ignore", "AGENTS.md", "CLAUDE.md"];
    confined
        .check_all(managed.iter().map(|f| dir.join(f)).collect::<Vec<_>>().iter().map(PathBuf::as_path))?;
    let state = dir.join(".memorix");
    ensure_state_dir(&state)?;
    if !path.exists() {
        out.pins = pin_files(dir)?;
        let text = starter(&out.name, &out.pins, agents == Agents::Write);
        fsutil::write_atomic(&state, &path, text.as_bytes())?;
        out.manifest_written = true;
    } else {
        out.agents = match agents {
            Agents::Keep => AgentsEdit::Unchanged,
            Agents::Write if edit_agents_table(&state, &path, true)? => AgentsEdit::Added,
            Agents::Remove if edit_agents_table(&state, &path, false)? => AgentsEdit::Removed,
            _ => AgentsEdit::Unchanged,
        };
    }
    if agents == Agents::Remove {
        remove_old_blocks(dir, &mut out)?;
    }
    let loaded = manifest::load(&path, dir).ok();
    out.agents_configured = loaded.as_ref().is_some_and(|m| m.agents.is_some());
    let mcp = loaded.as_ref().and_then(|m| m.agents.as_ref()).is_some_and(|a| a.mcp);
    match agents {
        Agents::Write if mcp => out.changed.extend(super::mcp_config::register(&confined, &state, true)?),
        Agents::Remove => out.changed.extend(super::mcp_config::register(&confined, &state, false)?),
        _ => {}
    }
    let memory = loaded.map(|m| m.memory.to_string()).unwrap_or_else(|| ".memory".into());
    out.ignore_updated = ensure_search_whitelist(&confined, &memory)?;
    if out.manifest_written || out.agents != AgentsEdit::Unchanged {
        out.commit.push(manifest::FILE.to_string());
    }
    if out.ignore_updated {
        out.commit.push(".ignore".into());
    }
    out.commit.extend(out.changed.iter().cloned());
    if out.manifest_written {
        out.generated.push(".memorix/".into());
    }
    Ok(out)
}

/// Adds `[agents]` (the default harnesses, written out, in place of the starter's commented
/// example) or removes it; true when it changed.
fn edit_agents_table(state: &Path, path: &Path, add: bool) -> Result<bool> {
    use toml_edit::DocumentMut;
    let text = fs::read_to_string(path).map_err(Error::io("read", path))?;
    let doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| Error::InvalidToml {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let example = crate::manifest::init::agents_example();
    let new = match (add, doc.contains_key("agents")) {
        (true, false) => {
            let table =
                format!("{}{}", crate::manifest::init::AGENTS_ABOUT, crate::manifest::init::agents_table());
            match text.find(&example) {
                Some(at) => format!("{}{table}{}", &text[..at], &text[at + example.len()..]),
                None if text.ends_with('\n') => format!("{text}\n{table}"),
                None => format!("{text}\n\n{table}"),
            }
        }
        // The commented example comes back, to uncomment later.
        (false, true) => format!("{}\n\n{example}", without_agents(doc).trim_end()),
        _ => return Ok(false),
    };
    fsutil::write_atomic(state, path, new.as_bytes())?;
    Ok(true)
}

/// The manifest without `[agents]`. The comments above its header are kept (toml_edit files
/// the comments under the table before it there, such as the starter's examples), all but
/// the one that describes `[agents]`.
fn without_agents(mut doc: toml_edit::DocumentMut) -> String {
    let Some(toml_edit::Item::Table(agents)) = doc.remove("agents") else { return doc.to_string() };
    let above = agents.decor().prefix().and_then(|p| p.as_str()).unwrap_or_default();
    let kept = above.replace(crate::manifest::init::AGENTS_ABOUT, "");
    let next = doc
        .iter_mut()
        .filter_map(|(_, item)| item.as_table_mut())
        .filter(|t| t.position() > agents.position())
        .min_by_key(|t| t.position());
    match next {
        Some(t) => {
            let own = t.decor().prefix().and_then(|p| p.as_str()).unwrap_or_default().to_string();
            t.decor_mut().set_prefix(format!("{kept}{own}"));
        }
        None => {
            let trailing = doc.trailing().as_str().unwrap_or_default().to_string();
            doc.set_trailing(format!("{}{trailing}", kept.trim_end_matches('\n').to_string() + "\n"));
        }
    }
    doc.to_string()
}

/// Takes out the block `init --agents` wrote into AGENTS.md / CLAUDE.md before `[agents]`.
fn remove_old_blocks(dir: &Path, out: &mut InitOutcome) -> Result<()> {
    let mut targets: Vec<PathBuf> =
        ["AGENTS.md", "CLAUDE.md"].iter().map(|f| dir.join(f)).filter(|p| p.exists()).collect();
    // CLAUDE.md is often a symlink to AGENTS.md: edit the file once.
    targets.dedup_by_key(|p| p.canonicalize().unwrap_or_else(|_| p.clone()));
    for t in targets {
        let before = fs::read_to_string(&t).map_err(Error::io("read", &t))?;
        let name = display(dir, &t);
        let after = crate::harness::sync::without_block(&name, &before)?;
        if after != before && after.trim().is_empty() {
            // Nothing but memorix's block was in it: the file goes, as `memorix build` does it.
            let target = t.canonicalize().unwrap_or(t.clone());
            fs::remove_file(&target).map_err(Error::io("remove", &target))?;
            if target != t && fs::symlink_metadata(&t).is_ok() {
                fs::remove_file(&t).map_err(Error::io("remove", &t))?;
            }
            out.changed.push(name);
        } else if after != before {
            let parent = t.parent().unwrap_or(dir);
            fsutil::write_atomic(parent, &t.canonicalize().unwrap_or(t.clone()), after.as_bytes())?;
            out.changed.push(name);
        }
    }
    Ok(())
}

/// Makes sure the project's `.ignore` whitelists the memory directory: rg, fd and the agent
/// search tools built on their rules skip hidden directories, and `.memory/.gitignore` (which
/// keeps git out) would hide it from them too. True when `.ignore` changed.
pub fn ensure_search_whitelist(project: &Confined, memory: &str) -> Result<bool> {
    let ignore = project.root().join(".ignore");
    project.check(&ignore)?;
    ensure_lines(&ignore, &[format!("!/{memory}/")])
}

/// The pin files in `dir` a package manager wrote, sorted.
fn pin_files(dir: &Path) -> Result<Vec<String>> {
    let mut found: Vec<String> = fs::read_dir(dir)
        .map_err(Error::io("read", dir))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| crate::pins::conventional(n))
        .collect();
    found.sort();
    Ok(found)
}

fn display(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

/// Appends each missing line to `path` (creating it); true when it changed.
fn ensure_lines(path: &Path, lines: &[String]) -> Result<bool> {
    let text = crate::confine::read_text(path)?.unwrap_or_default();
    let missing: Vec<&String> =
        lines.iter().filter(|l| !text.lines().any(|x| x.trim() == l.as_str())).collect();
    if missing.is_empty() {
        return Ok(false);
    }
    let mut new = text.clone();
    if !new.is_empty() && !new.ends_with('\n') {
        new.push('\n');
    }
    for l in missing {
        new.push_str(l);
        new.push('\n');
    }
    let dir = path.parent().expect("a project file lies in the project");
    fsutil::write_atomic(dir, path, new.as_bytes())?;
    Ok(true)
}
