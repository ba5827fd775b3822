//! `memorix init`: a commented starter manifest listing the pin files it finds, `.memorix/`
//! (which keeps itself out of git), `.ignore` for rg and fd, and (with `--agents`) an
//! `[agents]` table, from which `memorix build` writes each harness's files. Idempotent.

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

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

#[derive(Debug, Serialize, Default)]
pub struct InitOutcome {
    pub name: String,
    /// memorix.toml was written now (false: it existed and was kept).
    pub manifest_written: bool,
    /// The pin files found in the project and listed in the new manifest's `[pins] files`.
    pub pins: Vec<String>,
    /// Files changed: .ignore, AGENTS.md, ...
    pub changed: Vec<String>,
}

pub fn init(dir: &Path, name: Option<&str>, agents: Agents) -> Result<InitOutcome> {
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
        fsutil::write_atomic(&state, &path, starter(&out.name, &out.pins).as_bytes())?;
        out.manifest_written = true;
    }
    let memory =
        manifest::load(&path, dir).map(|m| m.memory.to_string()).unwrap_or_else(|_| ".memory".into());
    if ensure_search_whitelist(&confined, &memory)? {
        out.changed.push(".ignore".into());
    }
    match agents {
        Agents::Keep => {}
        Agents::Write => {
            if edit_agents_table(&state, &path, true)? {
                out.changed.push(format!("{} ([agents])", manifest::FILE));
            }
        }
        Agents::Remove => {
            if edit_agents_table(&state, &path, false)? {
                out.changed.push(format!("{} ([agents])", manifest::FILE));
            }
            remove_old_blocks(dir, &mut out)?;
        }
    }
    Ok(out)
}

/// Adds `[agents]` (the default harnesses, written out) or removes it; true when it changed.
fn edit_agents_table(state: &Path, path: &Path, add: bool) -> Result<bool> {
    use toml_edit::{Array, DocumentMut, Item, Table, value};
    let text = fs::read_to_string(path).map_err(Error::io("read", path))?;
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| Error::InvalidToml {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })?;
    let changed = match (add, doc.contains_key("agents")) {
        (true, false) => {
            let names = crate::model::HarnessName::DEFAULT.iter().map(|h| h.as_str());
            let mut t = Table::new();
            t.insert("harnesses", value(Array::from_iter(names)));
            t.decor_mut().set_prefix(
                "\n# The agent harnesses `memorix build` writes entry points for (AGENTS.md, CLAUDE.md, ...).\n",
            );
            doc.insert("agents", Item::Table(t));
            true
        }
        (false, true) => doc.remove("agents").is_some(),
        _ => false,
    };
    if changed {
        fsutil::write_atomic(state, path, doc.to_string().as_bytes())?;
    }
    Ok(changed)
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
        if after != before {
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
