//! `memorix init`: a commented starter manifest listing the pin files it finds, `.memorix/`
//! (which keeps itself out of git), `.ignore` for rg and fd, and (with `--agents`) a managed
//! block in AGENTS.md / CLAUDE.md. Idempotent.

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

pub const BEGIN: &str = "<!-- memorix:begin -->";
pub const END: &str = "<!-- memorix:end -->";

/// What to do with the agents block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agents {
    /// Leave AGENTS.md / CLAUDE.md alone: they are the user's files.
    Keep,
    /// Write or refresh it, creating AGENTS.md when neither exists.
    Write,
    /// Take it out.
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
    if agents == Agents::Keep {
        return Ok(out);
    }
    let mut targets: Vec<PathBuf> =
        ["AGENTS.md", "CLAUDE.md"].iter().map(|f| dir.join(f)).filter(|p| p.exists()).collect();
    // CLAUDE.md is often a symlink to AGENTS.md: edit the file once.
    targets.dedup_by_key(|p| p.canonicalize().unwrap_or_else(|_| p.clone()));
    if targets.is_empty() && agents == Agents::Write {
        targets.push(dir.join("AGENTS.md"));
    }
    for t in targets {
        let before = fs::read_to_string(&t).unwrap_or_default();
        let after = match agents {
            Agents::Remove => remove_block(&before),
            _ => with_block(&before, &block(&memory)),
        };
        if after != before {
            fs::write(&t, after).map_err(Error::io("write", &t))?;
            out.changed.push(display(dir, &t));
        }
    }
    Ok(out)
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

fn block(memory: &str) -> String {
    format!(
        "{BEGIN}\n## Project memory (memorix)\n\n\
         Curated memory for coding agents is in `{memory}/`: rules, library docs for the exact\n\
         versions this project pins, and notes. Start with `{memory}/INDEX.md`, which lists every\n\
         mount with its intent and every file with its title; read files there with your usual\n\
         tools. The files are read-only and generated: to change them, edit `memorix.toml` and\n\
         run `memorix build`. `memorix skill` explains the rest.\n{END}\n"
    )
}

/// `text` with the managed block replaced in place, or appended after one added newline
/// (which `remove_block` takes away again, so removal restores the file exactly).
fn with_block(text: &str, block: &str) -> String {
    if let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) {
        let end = e + END.len() + usize::from(text[e + END.len()..].starts_with('\n'));
        return format!("{}{block}{}", &text[..b], &text[end..]);
    }
    if text.is_empty() { block.to_string() } else { format!("{text}\n{block}") }
}

/// `text` without the managed block (and, at the end of the file, the newline added before it).
fn remove_block(text: &str) -> String {
    let (Some(b), Some(e)) = (text.find(BEGIN), text.find(END)) else { return text.to_string() };
    let end = e + END.len() + usize::from(text[e + END.len()..].starts_with('\n'));
    let mut head = text[..b].to_string();
    let tail = &text[end..];
    if tail.is_empty() && head.ends_with('\n') {
        head.pop();
    }
    format!("{head}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_round_trips_exactly() {
        for original in ["# Agents\n\nBe careful.\n", "# Agents", "", "# A\n\n"] {
            let added = with_block(original, &block(".memory"));
            assert!(added.contains(BEGIN));
            assert_eq!(with_block(&added, &block(".memory")), added, "idempotent");
            assert_eq!(remove_block(&added), original, "{original:?}");
        }
        let mid = format!("top\n{BEGIN}\nold\n{END}\nbottom\n");
        let updated = with_block(&mid, "NEW\n");
        assert_eq!(updated, "top\nNEW\nbottom\n");
    }
}
