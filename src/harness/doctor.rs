//! `memorix doctor`: what each harness loads at session start by its documented rules (the
//! table in `model::harness`), read from the project as it is on disk, and what would stop
//! the memory from reaching the agent: a cap exceeded, text loaded twice, scoped rules whose
//! globs match no project file, front matter the harness would reject, a memory directory
//! its search cannot see.

use std::collections::BTreeMap;
use std::path::Path;

use globset::{GlobBuilder, GlobSetBuilder};
use saphyr::{LoadableYamlNode, Yaml};
use serde::Serialize;

use crate::confine::Confined;
use crate::model::harness::{HarnessName, ScopeKey, Scoped, Search};

/// Imports are followed this deep (Claude Code follows four hops).
const IMPORT_DEPTH: usize = 4;
/// A paragraph at least this long, found twice in what one harness loads, is a duplicate.
const DUPLICATE_MIN: usize = 64;

#[derive(Debug, Serialize)]
pub struct Report {
    pub harnesses: Vec<HarnessReport>,
    /// What keeps every harness from the memory: no `[agents]`, or no build since.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<Problem>,
    /// Problems found, `setup` included.
    pub problems: usize,
}

#[derive(Debug, Serialize)]
pub struct HarnessReport {
    pub harness: HarnessName,
    pub products: &'static str,
    pub checked: &'static str,
    /// Named in `[agents] harnesses`.
    pub configured: bool,
    /// Loaded at session start, in order.
    pub loads: Vec<Loaded>,
    pub bytes: u64,
    pub tokens: u64,
    pub cap: Option<u64>,
    /// Path-scoped rules, loaded when the agent works on a matching file.
    pub on_demand: Vec<ScopedRule>,
    pub skills: Vec<String>,
    pub problems: Vec<Problem>,
    pub notes: Vec<String>,
    /// Something it loads at session start names the memory directory.
    #[serde(skip)]
    pub points_into_memory: bool,
}

#[derive(Debug, Serialize)]
pub struct Loaded {
    pub path: String,
    pub bytes: u64,
    pub tokens: u64,
    /// Why it is loaded when not by name: `imported by CLAUDE.md`, `alwaysApply`.
    pub via: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ScopedRule {
    pub path: String,
    pub globs: Vec<String>,
    /// Project files the globs match.
    pub matches: usize,
}

#[derive(Debug, Serialize)]
pub struct Problem {
    pub code: &'static str,
    pub message: String,
}

/// Approximate tokens: a byte count over four, as the usual rule of thumb for English and code.
fn tokens(bytes: u64) -> u64 {
    bytes.div_ceil(4)
}

/// Examines `harnesses` in the project at `project` whose memory directory is `memory`.
pub fn examine(
    project: &Confined,
    memory: &str,
    harnesses: &[HarnessName],
    configured: &[HarnessName],
) -> Report {
    let files = ProjectFiles::walk(project.root(), memory);
    let reports: Vec<HarnessReport> =
        harnesses.iter().map(|h| examine_one(project, memory, *h, configured.contains(h), &files)).collect();
    let problems = reports.iter().map(|r| r.problems.len()).sum();
    Report { harnesses: reports, setup: None, problems }
}

fn examine_one(
    project: &Confined,
    memory: &str,
    h: HarnessName,
    configured: bool,
    files: &ProjectFiles,
) -> HarnessReport {
    let c = h.conventions();
    let mut r = HarnessReport {
        harness: h,
        products: c.products,
        checked: c.checked,
        configured,
        loads: Vec::new(),
        bytes: 0,
        tokens: 0,
        cap: c.cap,
        on_demand: Vec::new(),
        skills: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
        points_into_memory: false,
    };
    let mut texts: Vec<(String, String)> = Vec::new();
    for name in c.loads {
        load(project, name, None, c.at_imports, 0, &mut texts);
    }
    if let Some(scoped) = c.scoped {
        scoped_rules(project, scoped, files, &mut r, &mut texts);
    }
    r.loads = texts
        .iter()
        .map(|(key, text)| {
            let bytes = text.len() as u64;
            Loaded { path: path_name(key).to_string(), bytes, tokens: tokens(bytes), via: path_via(key) }
        })
        .collect();
    r.points_into_memory = texts.iter().any(|(_, t)| t.contains(&format!("{memory}/")));
    r.bytes = r.loads.iter().map(|l| l.bytes).sum();
    r.tokens = tokens(r.bytes);
    if let Some(cap) = c.cap
        && r.bytes > cap
    {
        r.problems.push(Problem {
            code: "cap_exceeded",
            message: format!(
                "{}: {} bytes, but {} stops reading project instructions at {} KiB ({cap} bytes): the last {} bytes are never read",
                r.loads.iter().map(|l| l.path.as_str()).collect::<Vec<_>>().join(" + "),
                r.bytes,
                if h == HarnessName::AgentsMd { "Codex" } else { c.products },
                cap / 1024,
                r.bytes - cap
            ),
        });
    }
    duplicates(&texts, &mut r);
    if c.at_imports {
        outside_imports(&texts, &mut r);
    }
    if let Some(dir) = c.skills {
        let rel = format!("{dir}/memorix/SKILL.md");
        if let Some(text) = read(project, &rel) {
            if let Err(why) = skill_front_matter(&text) {
                r.problems.push(Problem { code: "bad_front_matter", message: format!("{rel}: {why}") });
            }
            r.skills.push(rel);
        }
    }
    search(project, memory, c.search, c.products, &mut r);
    r
}

/// Paths in `texts` carry how they were reached: `AGENTS.md\0imported by CLAUDE.md`.
fn path_name(p: &str) -> &str {
    p.split('\0').next().unwrap_or(p)
}

fn path_via(p: &str) -> Option<String> {
    p.split_once('\0').map(|(_, v)| v.to_string())
}

fn read(project: &Confined, rel: &str) -> Option<String> {
    let abs = project.root().join(rel);
    project.check(&abs).ok()?;
    if !abs.is_file() {
        return None;
    }
    crate::confine::read_text(&abs).ok().flatten()
}

/// Loads `rel` (once) and, for a harness that follows `@path` lines, what it imports.
fn load(
    project: &Confined,
    rel: &str,
    via: Option<&str>,
    imports: bool,
    depth: usize,
    texts: &mut Vec<(String, String)>,
) {
    if texts.iter().any(|(p, _)| path_name(p) == rel) {
        return;
    }
    let Some(text) = read(project, rel) else { return };
    let key = match via {
        Some(v) => format!("{rel}\0imported by {v}"),
        None => rel.to_string(),
    };
    texts.push((key, text.clone()));
    if !imports || depth >= IMPORT_DEPTH {
        return;
    }
    let base = Path::new(rel).parent().unwrap_or(Path::new(""));
    for target in at_imports(&text) {
        let joined = base.join(target.trim_start_matches("./"));
        let Some(norm) = normal(&joined) else { continue };
        load(project, &norm, Some(rel), imports, depth + 1, texts);
    }
}

/// `@`-imports that leave the project (absolute, `~`, `..` above it) in what the harness
/// loads: it would read that file into the session (`@~/.ssh/id_rsa`) at start.
fn outside_imports(texts: &[(String, String)], r: &mut HarnessReport) {
    for (key, text) in texts {
        let rel = path_name(key);
        let base = Path::new(rel).parent().unwrap_or(Path::new(""));
        for target in at_imports(text) {
            if target.starts_with(['/', '~']) || normal(&base.join(target)).is_none() {
                r.problems.push(Problem {
                    code: "import_outside",
                    message: format!(
                        "{rel} imports @{target}, outside the project: {} would load it at session start; remove the line",
                        r.products
                    ),
                });
            }
        }
    }
}

/// `@path` tokens outside code: what Claude Code and Gemini CLI import.
fn at_imports(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for word in line.split_whitespace().filter(|w| !w.starts_with('`')) {
            if let Some(p) = word.strip_prefix('@')
                && (p.contains('.') || p.contains('/'))
                && !p.contains('@')
            {
                out.push(p);
            }
        }
    }
    out
}

/// A project-relative path without `.` and `..`; `None` when it leaves the project.
fn normal(p: &Path) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::Normal(s) => parts.push(s.to_str()?),
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The harness's path-scoped rule files: always-applied ones load at session start, the rest
/// on demand; each one's front matter is checked and its globs matched against the project.
fn scoped_rules(
    project: &Confined,
    scoped: Scoped,
    files: &ProjectFiles,
    r: &mut HarnessReport,
    texts: &mut Vec<(String, String)>,
) {
    let (h, dir, suffix, key) = (r.harness, scoped.dir, scoped.suffix, scoped.key);
    let Ok(entries) = std::fs::read_dir(project.root().join(dir)) else { return };
    let mut names: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for name in names.into_iter().filter(|n| n.ends_with(suffix)) {
        let rel = format!("{dir}/{name}");
        let Some(text) = read(project, &rel) else { continue };
        match rule_scope(key, &text) {
            Err(why) => {
                let message = format!("{rel}: {why}; {h} would not load it as a scoped rule");
                r.problems.push(Problem { code: "bad_front_matter", message });
            }
            Ok(None) => texts.push((format!("{rel}\0always applied"), text)),
            Ok(Some(globs)) => {
                let matches = files.matching(&globs);
                if matches == 0 {
                    r.problems.push(Problem {
                        code: "globs_match_nothing",
                        message: format!(
                            "{rel}: {} match no file of the project: the rule never loads",
                            globs.join(", ")
                        ),
                    });
                }
                r.on_demand.push(ScopedRule { path: rel, globs, matches });
            }
        }
    }
}

/// The front matter block of `text`, if it starts with one.
fn front(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n").map(|i| i + 1).or_else(|| rest.strip_suffix("---\n").map(str::len))?;
    Some(&rest[..end])
}

/// A scoped rule's globs (`None`: loaded always), or why its harness would reject it.
fn rule_scope(key: ScopeKey, text: &str) -> Result<Option<Vec<String>>, String> {
    let Some(fm) = front(text) else {
        return match key {
            // A rule without front matter applies everywhere.
            ScopeKey::PathsList | ScopeKey::ApplyTo => Ok(None),
            ScopeKey::CursorGlobs => Err("no front matter (description, globs, alwaysApply)".into()),
        };
    };
    if key == ScopeKey::CursorGlobs {
        return cursor_scope(fm);
    }
    let docs = Yaml::load_from_str(fm).map_err(|e| format!("front matter is not YAML: {e}"))?;
    let doc = docs.first().filter(|d| d.is_mapping()).ok_or("front matter is not a mapping")?;
    let name = if key == ScopeKey::PathsList { "paths" } else { "applyTo" };
    let Some(v) = doc.as_mapping_get(name) else { return Ok(None) };
    let globs: Vec<String> = match (key, v.as_str(), v.as_sequence()) {
        (ScopeKey::PathsList, _, Some(seq)) => seq
            .iter()
            .map(|g| g.as_str().map(str::to_string).ok_or("`paths` lists a value that is not a glob"))
            .collect::<Result<_, _>>()?,
        (_, Some(s), _) => s.split(',').map(|g| g.trim().to_string()).filter(|g| !g.is_empty()).collect(),
        _ => return Err(format!("`{name}` is neither a glob string nor a list of globs")),
    };
    let everywhere = globs.iter().any(|g| g == "**" || g == "**/*" || g == "*");
    Ok((!everywhere).then_some(globs))
}

/// Cursor reads `.mdc` front matter as `key: value` lines.
fn cursor_scope(fm: &str) -> Result<Option<Vec<String>>, String> {
    let mut keys = BTreeMap::new();
    for line in fm.lines().filter(|l| !l.trim().is_empty()) {
        let (k, v) =
            line.split_once(':').ok_or_else(|| format!("front matter line {line:?} is not `key: value`"))?;
        keys.insert(k.trim(), v.trim());
    }
    let always = match keys.get("alwaysApply").copied() {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => return Err(format!("alwaysApply is {other:?}, not true or false")),
    };
    let globs: Vec<String> = keys
        .get("globs")
        .map(|g| {
            g.split(',').map(|s| s.trim().trim_matches('"').to_string()).filter(|s| !s.is_empty()).collect()
        })
        .unwrap_or_default();
    match (always, globs.is_empty()) {
        (true, _) => Ok(None),
        (false, false) => Ok(Some(globs)),
        (false, true) if keys.contains_key("description") => Ok(Some(Vec::new())),
        (false, true) => Err("neither alwaysApply, globs nor a description: it never applies".into()),
    }
}

fn skill_front_matter(text: &str) -> Result<(), String> {
    let fm = front(text).ok_or("SKILL.md does not start with front matter")?;
    let docs = Yaml::load_from_str(fm).map_err(|e| format!("front matter is not YAML: {e}"))?;
    let doc = docs.first().ok_or("empty front matter")?;
    for k in ["name", "description"] {
        if doc.as_mapping_get(k).and_then(|v| v.as_str()).is_none() {
            return Err(format!("front matter has no `{k}`"));
        }
    }
    Ok(())
}

/// The same paragraph in two loaded files (or twice in one): tokens paid twice per message.
fn duplicates(texts: &[(String, String)], r: &mut HarnessReport) {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (path, text) in texts {
        for para in text.split("\n\n").map(str::trim).filter(|p| p.len() >= DUPLICATE_MIN) {
            match seen.get(para) {
                Some(first) => {
                    *pairs.entry((path_name(first).to_string(), path_name(path).to_string())).or_default() +=
                        para.len()
                }
                None => {
                    seen.insert(para, path);
                }
            }
        }
    }
    for ((a, b), bytes) in pairs {
        let within = if a == b { format!("twice in {a}") } else { format!("in both {a} and {b}") };
        r.problems.push(Problem {
            code: "loaded_twice",
            message: format!(
                "the same text ({bytes} bytes) is loaded {within}: it costs its tokens twice on every message"
            ),
        });
    }
}

/// Whether the harness's file search sees the memory directory.
fn search(project: &Confined, memory: &str, search: Search, products: &str, r: &mut HarnessReport) {
    if !project.root().join(memory).is_dir() {
        return;
    }
    match search {
        Search::Ripgrep => {
            let ignore = read(project, ".ignore").unwrap_or_default();
            if !ignore.lines().any(|l| l.trim() == format!("!/{memory}/")) {
                r.problems.push(Problem {
                    code: "not_searchable",
                    message: format!(
                        "{memory}/ is git-ignored and hidden, so the search of {products} (ripgrep rules) skips it: add `!/{memory}/` to .ignore (`memorix build` does)"
                    ),
                });
            }
        }
        Search::GitIgnore => r.notes.push(format!(
            "its search follows .gitignore, so it finds {memory}/ files by the paths the index gives, not by searching"
        )),
    }
}

/// The project's files (as git would list them: ignore rules apply), for matching globs.
struct ProjectFiles(Vec<String>);

impl ProjectFiles {
    /// At most this many files are matched against (a monorepo's globs are checked on a prefix).
    const MAX: usize = 200_000;

    fn walk(root: &Path, memory: &str) -> ProjectFiles {
        let mut out = Vec::new();
        let walk = ignore::WalkBuilder::new(root).hidden(false).require_git(false).build();
        for entry in walk.flatten().take(Self::MAX) {
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else { continue };
            let rel = rel.to_string_lossy().into_owned();
            if !rel.starts_with(".git/") && !rel.starts_with(&format!("{memory}/")) {
                out.push(rel);
            }
        }
        ProjectFiles(out)
    }

    fn matching(&self, globs: &[String]) -> usize {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            if let Ok(g) = GlobBuilder::new(g).literal_separator(true).build() {
                b.add(g);
            }
        }
        let Ok(set) = b.build() else { return 0 };
        self.0.iter().filter(|f| set.is_match(f)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_read_as_each_harness_reads_them() {
        let claude = "---\npaths:\n  - \"src/api/**\"\n---\nbody\n";
        assert_eq!(rule_scope(ScopeKey::PathsList, claude), Ok(Some(vec!["src/api/**".into()])));
        assert_eq!(rule_scope(ScopeKey::PathsList, "no front matter\n"), Ok(None));
        let copilot = "---\napplyTo: \"src/**/*.ts,lib/**\"\n---\n";
        assert_eq!(
            rule_scope(ScopeKey::ApplyTo, copilot),
            Ok(Some(vec!["src/**/*.ts".into(), "lib/**".into()]))
        );
        assert_eq!(rule_scope(ScopeKey::ApplyTo, "---\napplyTo: \"**\"\n---\n"), Ok(None));
        let cursor = "---\ndescription: x\nglobs: src/api/**,lib/*.rs\nalwaysApply: false\n---\n";
        assert_eq!(
            rule_scope(ScopeKey::CursorGlobs, cursor),
            Ok(Some(vec!["src/api/**".into(), "lib/*.rs".into()]))
        );
        assert!(rule_scope(ScopeKey::CursorGlobs, "---\nalwaysApply: maybe\n---\n").is_err());
        assert!(rule_scope(ScopeKey::PathsList, "---\npaths: [unclosed\n---\n").is_err());
    }

    #[test]
    fn imports_outside_code_are_followed() {
        let text = "See @AGENTS.md and @docs/x.md\n```\n@not/this.md\n```\nmail me@example.com `@code.md`\n";
        assert_eq!(at_imports(text), vec!["AGENTS.md", "docs/x.md"]);
    }
}
