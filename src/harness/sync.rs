//! Bringing a project's harness files in line with what an activation generates: planned
//! first (every refusal happens before `.memory/` is swapped), applied right after the swap.
//! Files memorix wrote whole are recognised by the generated-by line; in the user's files
//! only the managed block is touched, and a file whose markers are damaged is refused whole.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use miette::Diagnostic;
use serde::{Deserialize, Serialize};

use super::{BEGIN, Body, END, MARK, Output, PREFIX};
use crate::confine::Confined;
use crate::diagnostics::{FromIo, IoError};
use crate::model::Id;
use crate::model::harness::{AgentsSpec, HarnessName};
use crate::store::fsutil;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Confine(#[from] crate::confine::Error),

    #[error("{path} exists, and memorix did not write it: it will not overwrite your file")]
    #[diagnostic(
        code(memorix::harness::occupied),
        help(
            "memorix generates this file for an agent harness in [agents]; move your file elsewhere (or delete it), or drop the harness or the mount's applies-to"
        )
    )]
    Occupied { path: String },

    #[error("{path}: the memorix block markers are damaged ({why})")]
    #[diagnostic(
        code(memorix::harness::damaged_block),
        help(
            "memorix edits only the text between one `<!-- memorix:begin -->` line and one `<!-- memorix:end -->` line after it; fix the markers by hand (or delete both and the text between), then run `memorix build`. Your text was not changed"
        )
    )]
    DamagedBlock { path: String, why: String },
}

/// `.memorix/harness.json`: what the last sync wrote, so a build can tell by stats alone that
/// nothing needs doing.
pub const RECORD: &str = "harness.json";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    pub spec: Option<AgentsSpec>,
    pub environment: Option<Id>,
    /// Project-relative path -> (size, mtime ns, inode) right after writing.
    pub files: BTreeMap<String, (u64, i64, u64)>,
}

impl Record {
    pub fn load(state_dir: &Path) -> Option<Record> {
        serde_json::from_slice(&fs::read(state_dir.join(RECORD)).ok()?).ok()
    }

    /// Whether the files are still what the last sync of `spec` for `environment` wrote.
    pub fn fresh(&self, root: &Path, spec: Option<&AgentsSpec>, environment: Id) -> bool {
        self.spec.as_ref() == spec
            && (spec.is_none() || self.environment == Some(environment))
            && self.files.iter().all(|(p, s)| stat(&root.join(p)) == Some(*s))
    }
}

fn stat(path: &Path) -> Option<(u64, i64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).ok()?;
    Some((m.size(), m.mtime() * 1_000_000_000 + m.mtime_nsec(), m.ino()))
}

/// One change a sync makes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// Write `text` to `target` (the file a symlinked entry resolves to).
    Write {
        target: PathBuf,
        text: String,
    },
    Remove,
}

/// What a sync will change, by project-relative path, sorted.
#[derive(Debug, Default)]
pub struct Plan {
    changes: BTreeMap<String, (Change, &'static str)>,
    /// Every generated path, for the record.
    wanted: Vec<String>,
}

/// Project-relative paths written and removed.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Synced {
    pub written: Vec<String>,
    pub removed: Vec<String>,
    /// The files had been edited since memorix wrote them (`[agents]` is unchanged).
    pub restored: bool,
}

impl Synced {
    pub fn is_empty(&self) -> bool {
        self.written.is_empty() && self.removed.is_empty()
    }
}

impl Plan {
    /// Each change with why: `(path, "is missing" | "differs ..." | "is left over ...")`.
    pub fn problems(&self) -> Vec<(String, String)> {
        self.changes.iter().map(|(p, (_, why))| (p.clone(), why.to_string())).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}

/// Compares the project with `wanted` (none when `[agents]` is gone): what to write, and the
/// generated files and blocks nothing wants any more.
pub fn plan(project: &Confined, wanted: &[Output]) -> Result<Plan> {
    let root = project.root();
    let mut plan = Plan { wanted: wanted.iter().map(|o| o.path.clone()).collect(), ..Plan::default() };
    let mut targets: Vec<PathBuf> = Vec::new();
    for o in wanted {
        let abs = root.join(&o.path);
        project.check(&abs)?;
        let target = match &o.body {
            Body::Whole(_) => {
                project.check_unlinked(&abs)?;
                abs
            }
            // CLAUDE.md is often a link to AGENTS.md: one file, one block.
            Body::Block(_) => entry_target(project, &o.path)?,
        };
        let old = crate::confine::read_text(&target)?;
        let (new, why) = match &o.body {
            Body::Whole(text) => {
                if old.as_deref().is_some_and(|t| t != text && !ours(t)) {
                    return Err(Error::Occupied { path: o.path.clone() });
                }
                (text.clone(), "differs from what memorix generates")
            }
            Body::Block(block) => {
                if targets.contains(&target) {
                    continue;
                }
                targets.push(target.clone());
                let text = with_block(&o.path, old.as_deref().unwrap_or_default(), block)?;
                (text, "has a memorix block that differs from what memorix generates")
            }
        };
        if old.as_deref() != Some(new.as_str()) {
            let why = if old.is_none() { "is missing" } else { why };
            plan.changes.insert(o.path.clone(), (Change::Write { target, text: new }, why));
        }
    }
    stale(project, &mut plan, &targets)?;
    Ok(plan)
}

/// Generated files and blocks no output wants: a dropped harness or mount, `[agents]` gone.
fn stale(project: &Confined, plan: &mut Plan, targets: &[PathBuf]) -> Result<()> {
    let root = project.root();
    let left = "is left from a harness or mount no longer declared";
    for h in HarnessName::ALL {
        let c = h.conventions();
        for scoped in c.scoped.iter() {
            let dir = scoped.dir;
            // memorix never wrote through a link, so a linked folder holds nothing of its.
            if project.check_unlinked(&root.join(dir)).is_err() {
                continue;
            }
            let Ok(entries) = fs::read_dir(root.join(dir)) else { continue };
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                let rel = format!("{dir}/{name}");
                let ours_by_name = name.starts_with(&format!("{}{PREFIX}", scoped.order));
                if ours_by_name && !plan.wanted.contains(&rel) && is_ours(project, &rel)? {
                    plan.changes.insert(rel, (Change::Remove, left));
                }
            }
        }
        for file in
            c.skills.iter().flat_map(|dir| ["SKILL.md", ".gitignore"].map(|f| format!("{dir}/{PREFIX}/{f}")))
        {
            if !plan.wanted.contains(&file) && is_ours(project, &file)? {
                plan.changes.insert(file, (Change::Remove, left));
            }
        }
        let Some(entry) = c.entry else { continue };
        stale_block(project, plan, targets, entry)?;
    }
    // Nested entry points of workspace members the last sync wrote (a member or `members`
    // since dropped): found by the record, as nothing in memorix.toml names them any more.
    let previous = Record::load(&root.join(".memorix")).map(|r| r.files).unwrap_or_default();
    for rel in previous.keys().filter(|p| p.ends_with("/AGENTS.md")) {
        stale_block(project, plan, targets, rel)?;
    }
    Ok(())
}

/// Takes the managed block out of `entry` when no output wants it (the file goes when
/// nothing else is in it).
fn stale_block(project: &Confined, plan: &mut Plan, targets: &[PathBuf], entry: &str) -> Result<()> {
    let left = "is left from a harness or mount no longer declared";
    let abs = project.root().join(entry);
    project.check(&abs)?;
    if plan.wanted.iter().any(|w| w == entry) || plan.changes.contains_key(entry) {
        return Ok(());
    }
    let target = entry_target(project, entry)?;
    if targets.contains(&target) {
        return Ok(());
    }
    let Some(text) = crate::confine::read_text(&target)? else { return Ok(()) };
    if text.lines().any(|l| [BEGIN, END].contains(&l.trim())) {
        let kept = without_block(entry, &text)?;
        let change = match kept.trim().is_empty() {
            true => Change::Remove,
            false => Change::Write { target, text: kept },
        };
        plan.changes.insert(entry.to_string(), (change, left));
    }
    Ok(())
}

fn is_ours(project: &Confined, rel: &str) -> Result<bool> {
    let abs = project.root().join(rel);
    project.check(&abs)?;
    if project.check_unlinked(&abs).is_err() {
        return Ok(false);
    }
    Ok(crate::confine::read_text(&abs).ok().flatten().is_some_and(|t| ours(&t)))
}

/// The file an entry file's managed block is written to: the entry itself, never through a
/// link, except a link to another entry file memorix manages (`CLAUDE.md -> AGENTS.md`),
/// which is then the target.
fn entry_target(project: &Confined, rel: &str) -> Result<PathBuf> {
    let abs = project.root().join(rel);
    let parent = abs.parent().expect("an entry file lies in the project");
    project.check_unlinked(parent)?;
    if !fs::symlink_metadata(&abs).is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(abs);
    }
    let dest = fs::read_link(&abs).map_err(IoError::io("read the link", &abs))?;
    let entries = HarnessName::ALL.iter().filter_map(|h| h.conventions().entry);
    for other in entries.filter(|e| *e != rel) {
        let candidate = project.root().join(other);
        if crate::confine::lexical(&parent.join(&dest)) == crate::confine::lexical(&candidate) {
            project.check_unlinked(&candidate)?;
            return Ok(candidate);
        }
    }
    Err(crate::confine::Error::Linked { path: abs, target: dest }.into())
}

/// The bytes of the user's own text in entry file `rel`, outside memorix's block, with the
/// blank line [`with_block`] puts between them (0 when the file is absent or unreadable:
/// [`plan`] reports why).
pub fn user_len(project: &Confined, rel: &str) -> u64 {
    let text = entry_target(project, rel).ok().and_then(|t| crate::confine::read_text(&t).ok().flatten());
    let own = text.and_then(|t| without_block(rel, &t).ok()).unwrap_or_default();
    if own.is_empty() { 0 } else { own.len() as u64 + 2 }
}

/// A file memorix wrote whole carries the generated-by line near its top (after front
/// matter; as a `#` comment in a `.gitignore`), or is the skill `memorix skill --install` wrote.
fn ours(text: &str) -> bool {
    text.lines().take(40).any(|l| l.strip_prefix("# ").unwrap_or(l) == MARK) || text == super::SKILL
}

/// Applies `plan`, then records what the files are now.
pub fn apply(
    project: &Confined,
    state_dir: &Path,
    plan: Plan,
    spec: Option<&AgentsSpec>,
    environment: Id,
) -> Result<Synced> {
    let root = project.root();
    let mut synced = Synced::default();
    for (rel, (change, _)) in plan.changes {
        let abs = root.join(&rel);
        match change {
            Change::Write { target, text } => {
                let dir = target.parent().expect("a project file lies in a directory");
                fsutil::create_dir(dir)?;
                fsutil::write_atomic(dir, &target, text.as_bytes())?;
                synced.written.push(rel);
            }
            Change::Remove => {
                fs::remove_file(&abs).map_err(IoError::io("remove", &abs))?;
                remove_empty_parents(root, &abs);
                synced.removed.push(rel);
            }
        }
    }
    let files = plan.wanted.iter().filter_map(|p| Some((p.clone(), stat(&root.join(p))?))).collect();
    let record = Record { spec: spec.cloned(), environment: Some(environment), files };
    let bytes = serde_json::to_vec(&record).expect("a record serializes");
    fsutil::write_atomic(state_dir, &state_dir.join(RECORD), &bytes)?;
    Ok(synced)
}

/// `.claude/skills/memorix/` and `.cursor/rules/` go when the last generated file in them does.
fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| *d != root && d.starts_with(root)) {
        if fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// Where the markers are: `(begin, end)` byte offsets, or none; damaged markers are an error.
/// A marker is a line of its own (memorix writes them so): the same text inside a line (a
/// user's note about memorix, an escaped title) is no marker.
fn markers(path: &str, text: &str) -> Result<Option<(usize, usize)>> {
    let line_of = |at: usize| text[..at].lines().count() + 1;
    let at = |marker: &str| -> Vec<usize> {
        let mut start = 0;
        let mut found = Vec::new();
        for line in text.split_inclusive('\n') {
            if line.trim() == marker {
                found.push(start + (line.len() - line.trim_start().len()));
            }
            start += line.len();
        }
        found
    };
    let (begins, ends) = (at(BEGIN), at(END));
    let damaged = |why: String| Err(Error::DamagedBlock { path: path.to_string(), why });
    match (begins.as_slice(), ends.as_slice()) {
        ([], []) => Ok(None),
        ([b], [e]) if b < e => Ok(Some((*b, *e))),
        ([b], [e]) => damaged(format!(
            "the end marker on line {} comes before the begin marker on line {}",
            line_of(*e),
            line_of(*b)
        )),
        ([_], []) => damaged("a begin marker without an end marker".into()),
        ([], [_]) => damaged("an end marker without a begin marker".into()),
        (b, e) => {
            damaged(format!("{} begin and {} end markers; there must be one of each", b.len(), e.len()))
        }
    }
}

/// `text` with its managed block replaced by `block`, or `block` appended after a blank line.
pub fn with_block(path: &str, text: &str, block: &str) -> Result<String> {
    if let Some((b, e)) = markers(path, text)? {
        let end = e + END.len() + usize::from(text[e + END.len()..].starts_with('\n'));
        return Ok(format!("{}{block}{}", &text[..b], &text[end..]));
    }
    Ok(match text {
        "" => block.to_string(),
        t if t.ends_with('\n') => format!("{t}\n{block}"),
        t => format!("{t}\n\n{block}"),
    })
}

/// `text` without the managed block (and the blank line [`with_block`] put before it).
pub fn without_block(path: &str, text: &str) -> Result<String> {
    let Some((b, e)) = markers(path, text)? else { return Ok(text.to_string()) };
    let end = e + END.len() + usize::from(text[e + END.len()..].starts_with('\n'));
    let mut head = text[..b].to_string();
    let tail = &text[end..];
    if tail.is_empty() && head.ends_with("\n\n") {
        head.pop();
    }
    Ok(format!("{head}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_round_trips_exactly() {
        let block = format!("{BEGIN}\nindex\n{END}\n");
        for original in ["# Agents\n\nBe careful.\n", "# Agents", "", "# A\n\n"] {
            let added = with_block("AGENTS.md", original, &block).unwrap();
            assert!(added.contains(BEGIN));
            assert_eq!(with_block("AGENTS.md", &added, &block).unwrap(), added, "idempotent");
            let removed = without_block("AGENTS.md", &added).unwrap();
            assert_eq!(removed.trim_end(), original.trim_end(), "{original:?}");
        }
        let mid = format!("top\n{BEGIN}\nold\n{END}\nbottom\n");
        assert_eq!(with_block("A", &mid, "NEW\n").unwrap(), "top\nNEW\nbottom\n");
    }

    #[test]
    fn damaged_markers_are_refused_with_where() {
        let two = format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n");
        let backwards = format!("x\n{END}\n{BEGIN}\n");
        for (text, why) in [
            (format!("a\n{BEGIN}\nb\n"), "a begin marker without an end marker"),
            (backwards, "the end marker on line 2 comes before the begin marker on line 3"),
            (two, "2 begin and 2 end markers"),
        ] {
            let err = with_block("AGENTS.md", &text, "x").unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
    }
}
