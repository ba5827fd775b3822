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
use crate::model::harness::{Discovery, HarnessName, ScopeKey, Scoped, Search};

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

/// Examines `harnesses` in the project at `project` whose memory directory is `memory`, for a
/// session started in `cwd` (project-relative, `""` for the root).
pub fn examine(
    project: &Confined,
    memory: &str,
    harnesses: &[HarnessName],
    configured: &[HarnessName],
    cwd: &str,
) -> Report {
    let files = ProjectFiles::walk(project.root(), memory);
    let reports: Vec<HarnessReport> = harnesses
        .iter()
        .map(|h| examine_one(project, memory, *h, configured.contains(h), &files, cwd))
        .collect();
    let problems = reports.iter().map(|r| r.problems.len()).sum();
    Report { harnesses: reports, setup: None, problems }
}

fn examine_one(
    project: &Confined,
    memory: &str,
    h: HarnessName,
    configured: bool,
    files: &ProjectFiles,
    cwd: &str,
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
    match c.discovery {
        Discovery::Each => {
            for name in loads(project, h) {
                load(project, &name, None, c.at_imports, 0, &mut texts);
            }
        }
        Discovery::FirstMatch => first_match(project, memory, c.loads, &mut r, &mut texts),
        Discovery::PerDirectory => per_directory(project, memory, c.loads, cwd, &mut r, &mut texts),
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
    if let (Some(cap), Discovery::PerDirectory) = (c.cap, c.discovery) {
        cut_chain(&r.loads, cap, c.products, &mut r.problems);
    } else if let Some(cap) = c.cap
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
    if let Some(caps) = c.char_caps {
        let chars: u64 = texts.iter().map(|(_, t)| t.chars().count() as u64).sum();
        for (key, text) in &texts {
            file_cap(path_name(key), text, caps.per_file, c.products, &mut r.problems);
        }
        if chars > caps.total {
            r.problems.push(Problem {
                code: "cap_exceeded",
                message: format!(
                    "{}: {chars} characters always on, but {} reads at most {} characters of rules in all: the last {} are never read",
                    r.loads.iter().map(|l| l.path.as_str()).collect::<Vec<_>>().join(" + "),
                    c.products,
                    caps.total,
                    chars - caps.total
                ),
            });
        }
    }
    duplicates(&texts, &mut r);
    if c.at_imports {
        outside_imports(&texts, &mut r);
    }
    if let Some(dir) = c.skills {
        skills(project, dir, &mut r);
    }
    search(project, memory, c.search, c.products, &mut r);
    r
}

/// The files a harness loads at session start: Gemini CLI reads the names
/// `.gemini/settings.json` gives in `context.fileName` (a name or a list) instead of GEMINI.md.
fn loads(project: &Confined, h: HarnessName) -> Vec<String> {
    let names = h.conventions().loads.iter().map(|n| n.to_string()).collect();
    if h != HarnessName::Gemini {
        return names;
    }
    let Some(settings) = read(project, ".gemini/settings.json") else { return names };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(&settings) else { return names };
    let given = match &json["context"]["fileName"] {
        serde_json::Value::String(one) => vec![one.clone()],
        serde_json::Value::Array(many) => {
            many.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()
        }
        _ => return names,
    };
    // Names only, at the project root: a path in settings never leads the simulation elsewhere.
    given.into_iter().filter(|n| !n.is_empty() && !n.contains(['/', '\\']) && n != ".." && n != ".").collect()
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
    // Cline joins its rules in numeric-prefix order (`2-` before `10-`); the others by name.
    names.sort_by_key(|n| {
        let digits = n.chars().take_while(char::is_ascii_digit).collect::<String>();
        (digits.parse::<u64>().unwrap_or(u64::MAX), n.clone())
    });
    let caps = h.conventions().char_caps;
    for name in names.into_iter().filter(|n| n.ends_with(suffix)) {
        let rel = format!("{dir}/{name}");
        let Some(text) = read(project, &rel) else { continue };
        let always = matches!(rule_scope(key, &text), Ok(None));
        if let (Some(caps), false) = (caps, always) {
            // Always-on rules are counted with what loads at session start.
            file_cap(&rel, &text, caps.per_file, h.conventions().products, &mut r.problems);
        }
        match rule_scope(key, &text) {
            Err(why) => {
                let message = format!("{rel}: {why}; {h} would not load it as a scoped rule");
                r.problems.push(Problem { code: "bad_front_matter", message });
            }
            Ok(None) => texts.push((format!("{rel}\0always applied"), text)),
            Ok(Some(globs)) => {
                let matches = files.matching(&globs);
                // A rule without globs (manual, model decision) loads when asked for.
                if matches == 0 && !globs.is_empty() {
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
    super::split_front(text).map(|(fm, _)| fm)
}

/// A scoped rule's globs (`None`: loaded always), or why its harness would reject it.
fn rule_scope(key: ScopeKey, text: &str) -> Result<Option<Vec<String>>, String> {
    let Some(fm) = front(text) else {
        return match key {
            // A rule without front matter applies everywhere.
            ScopeKey::PathsList | ScopeKey::ApplyTo | ScopeKey::KiroInclusion => Ok(None),
            // Windsurf: a rule without a trigger is applied only when mentioned.
            ScopeKey::WindsurfTrigger => Ok(Some(Vec::new())),
            ScopeKey::CursorGlobs => Err("no front matter (description, globs, alwaysApply)".into()),
        };
    };
    if key == ScopeKey::CursorGlobs {
        return cursor_scope(fm);
    }
    let docs = Yaml::load_from_str(fm).map_err(|e| format!("front matter is not YAML: {e}"))?;
    let doc = docs.first().filter(|d| d.is_mapping()).ok_or("front matter is not a mapping")?;
    match key {
        ScopeKey::WindsurfTrigger => return windsurf_scope(doc),
        ScopeKey::KiroInclusion => return kiro_scope(doc),
        _ => {}
    }
    if key == ScopeKey::ApplyTo
        && let Some(v) = doc.as_mapping_get("excludeAgent")
    {
        let ok = v.as_str().is_some_and(|a| ["code-review", "coding-agent"].contains(&a));
        if !ok {
            return Err("`excludeAgent` is neither code-review nor coding-agent".into());
        }
    }
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

/// Globs given as one comma-separated string or a list of strings.
fn glob_values(name: &str, v: &Yaml) -> Result<Vec<String>, String> {
    match (v.as_str(), v.as_sequence()) {
        (Some(s), _) => Ok(s.split(',').map(|g| g.trim().to_string()).filter(|g| !g.is_empty()).collect()),
        (_, Some(seq)) => seq
            .iter()
            .map(|g| {
                g.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("`{name}` lists a value that is not a glob"))
            })
            .collect(),
        _ => Err(format!("`{name}` is neither a glob string nor a list of globs")),
    }
}

/// Windsurf: `trigger: always_on` loads always, `glob` on `globs`, the others when asked for.
fn windsurf_scope(doc: &Yaml) -> Result<Option<Vec<String>>, String> {
    let trigger = doc.as_mapping_get("trigger").map(|t| t.as_str().ok_or("`trigger` is not a string"));
    match trigger.transpose()? {
        Some("always_on") => Ok(None),
        Some("glob") => {
            let globs = doc.as_mapping_get("globs").ok_or("`trigger: glob` without `globs`")?;
            let globs = glob_values("globs", globs)?;
            if globs.is_empty() {
                return Err("`trigger: glob` with empty `globs`".into());
            }
            Ok(Some(globs))
        }
        None | Some("manual") | Some("model_decision") => Ok(Some(Vec::new())),
        Some(other) => Err(format!("trigger is {other:?}, not always_on, glob, model_decision or manual")),
    }
}

/// Kiro: `inclusion: always` (the default) loads always, `fileMatch` on `fileMatchPattern`,
/// `manual` and `auto` when asked for.
fn kiro_scope(doc: &Yaml) -> Result<Option<Vec<String>>, String> {
    let inclusion = doc.as_mapping_get("inclusion").map(|t| t.as_str().ok_or("`inclusion` is not a string"));
    match inclusion.transpose()? {
        None | Some("always") => Ok(None),
        Some("fileMatch") => {
            let p = doc
                .as_mapping_get("fileMatchPattern")
                .ok_or("`inclusion: fileMatch` without `fileMatchPattern`")?;
            let globs = glob_values("fileMatchPattern", p)?;
            if globs.is_empty() {
                return Err("`inclusion: fileMatch` with an empty `fileMatchPattern`".into());
            }
            Ok(Some(globs))
        }
        Some("manual") | Some("auto") => Ok(Some(Vec::new())),
        Some(other) => Err(format!("inclusion is {other:?}, not always, fileMatch, manual or auto")),
    }
}

/// Only the first file of `names` that exists is read (Zed); the others are reported when
/// they carry the memory's index, which that harness then never sees.
fn first_match(
    project: &Confined,
    memory: &str,
    names: &[&str],
    r: &mut HarnessReport,
    texts: &mut Vec<(String, String)>,
) {
    let mut first: Option<(&str, bool)> = None;
    for name in names {
        let Some(text) = read(project, name) else { continue };
        match first {
            None => {
                first = Some((name, points_into(&text, memory)));
                texts.push((format!("{name}\0first of its list"), text));
            }
            // The memory is lost when the file read does not point at it and this one does.
            Some((winner, false)) if points_into(&text, memory) => r.problems.push(Problem {
                code: "never_reached",
                message: format!(
                    "{name} ({} bytes) is never read: {} reads only the first of its rule files that exists, and {winner} comes first; move {winner}'s text into {name} and delete {winner}",
                    text.len(),
                    r.products
                ),
            }),
            Some((winner, _)) => r.notes.push(format!("{name} is never read: {winner} comes first in its list")),
        }
    }
}

/// In each directory from the root down to `cwd`, the first of `names` there that is not
/// empty (Codex: `AGENTS.override.md` hides `AGENTS.md`).
fn per_directory(
    project: &Confined,
    memory: &str,
    names: &[&str],
    cwd: &str,
    r: &mut HarnessReport,
    texts: &mut Vec<(String, String)>,
) {
    let parts: Vec<&str> = cwd.split('/').filter(|p| !p.is_empty()).collect();
    for depth in 0..=parts.len() {
        let dir = parts[..depth].join("/");
        let at = |name: &str| if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") };
        let mut winner: Option<(String, bool)> = None;
        for name in names {
            let rel = at(name);
            let Some(text) = read(project, &rel).filter(|t| !t.trim().is_empty()) else { continue };
            match &winner {
                None => {
                    winner = Some((rel.clone(), points_into(&text, memory)));
                    texts.push((rel, text));
                }
                Some((w, false)) if points_into(&text, memory) => r.problems.push(Problem {
                    code: "never_reached",
                    message: format!(
                        "{rel} ({} bytes) is never read: {} reads one file a directory and {w} comes first",
                        text.len(),
                        r.products
                    ),
                }),
                Some((w, _)) => {
                    r.notes.push(format!("{rel} is never read: {w} comes first in its directory"))
                }
            }
        }
    }
}

/// The chain of files read root first, cut at `cap` bytes: which file is cut and which are
/// never read.
fn cut_chain(loads: &[Loaded], cap: u64, products: &str, problems: &mut Vec<Problem>) {
    let mut used = 0u64;
    for (i, l) in loads.iter().enumerate() {
        if used + l.bytes <= cap {
            used += l.bytes;
            continue;
        }
        let kept = cap - used;
        let rest: Vec<&str> = loads[i + 1..].iter().map(|l| l.path.as_str()).collect();
        let never = match rest.is_empty() {
            true => String::new(),
            false => format!("; never read: {}", rest.join(", ")),
        };
        problems.push(Problem {
            code: "cap_exceeded",
            message: format!(
                "{}: {} bytes from the root down, but {products} stops at {} KiB ({cap} bytes): {} is cut after {kept} of its {} bytes{never}",
                loads.iter().map(|l| l.path.as_str()).collect::<Vec<_>>().join(" + "),
                loads.iter().map(|l| l.bytes).sum::<u64>(),
                cap / 1024,
                l.path,
                l.bytes
            ),
        });
        return;
    }
}

/// A file past the harness's per-file limit in characters.
fn file_cap(rel: &str, text: &str, limit: u64, products: &str, problems: &mut Vec<Problem>) {
    let chars = text.chars().count() as u64;
    if chars > limit {
        problems.push(Problem {
            code: "file_cap_exceeded",
            message: format!(
                "{rel}: {chars} characters, but {products} reads at most {limit} characters of a rule file: the last {} are cut",
                chars - limit
            ),
        });
    }
}

fn points_into(text: &str, memory: &str) -> bool {
    text.contains(&format!("{memory}/")) || text.lines().any(|l| l.trim() == super::BEGIN)
}

/// Every skill in `dir` (`<dir>/<name>/SKILL.md`), checked against the Agent Skills
/// specification: `name` 1-64 lowercase letters, digits and single hyphens, equal to its
/// folder; `description` 1-1,024 characters.
fn skills(project: &Confined, dir: &str, r: &mut HarnessReport) {
    let Ok(entries) = std::fs::read_dir(project.root().join(dir)) else { return };
    let mut folders: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    folders.sort();
    for folder in folders {
        let rel = format!("{dir}/{folder}/SKILL.md");
        let Some(text) = read(project, &rel) else { continue };
        if let Err(why) = skill_front_matter(&text, &folder) {
            let products = r.products;
            r.problems.push(Problem {
                code: "skill_rejected",
                message: format!("{rel}: {why}; {products} will not load the skill"),
            });
        }
        r.skills.push(rel);
    }
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

/// Why the Agent Skills specification rejects a SKILL.md in `folder`, if it does.
pub fn skill_front_matter(text: &str, folder: &str) -> Result<(), String> {
    let fm = front(text).ok_or("SKILL.md does not start with front matter")?;
    let docs = Yaml::load_from_str(fm).map_err(|e| format!("front matter is not YAML: {e}"))?;
    let doc = docs.first().ok_or("empty front matter")?;
    let field =
        |k: &str| doc.as_mapping_get(k).and_then(|v| v.as_str()).ok_or(format!("front matter has no `{k}`"));
    let (name, description) = (field("name")?, field("description")?);
    let chars = name.chars().count();
    let allowed = name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if chars == 0 || chars > 64 {
        return Err(format!("name is {chars} characters; the specification allows 1 to 64"));
    }
    if !allowed || name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "name {name:?} is not lowercase letters, digits and single hyphens (none first or last)"
        ));
    }
    if name != folder {
        return Err(format!("name {name:?} differs from its folder {folder:?}"));
    }
    let chars = description.chars().count();
    if chars == 0 || chars > 1024 {
        return Err(format!("description is {chars} characters; the specification allows 1 to 1024"));
    }
    Ok(())
}

/// The same paragraph in two loaded files (or twice in one): tokens paid twice per message.
/// Front matter and memorix's own header (its marker line, which every generated file
/// shares) are not text the agent reads twice as content, so they are not compared.
fn duplicates(texts: &[(String, String)], r: &mut HarnessReport) {
    for ((a, b), bytes) in duplicate_pairs(texts) {
        let within = if a == b { format!("twice in {a}") } else { format!("in both {a} and {b}") };
        r.problems.push(Problem {
            code: "loaded_twice",
            message: format!(
                "the same text ({bytes} bytes) is loaded {within}: it costs its tokens twice on every message"
            ),
        });
    }
}

/// The pairs of files (by name) that share paragraphs, with the bytes they share.
fn duplicate_pairs(texts: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (path, text) in texts {
        let body = super::split_front(text).map_or(text.as_str(), |(_, body)| body);
        let paragraphs = body.split("\n\n").map(str::trim);
        for para in paragraphs.filter(|p| p.len() >= DUPLICATE_MIN && !p.starts_with(super::MARK)) {
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
    pairs
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
        let excluded = "---\napplyTo: \"src/**\"\nexcludeAgent: \"code-review\"\n---\n";
        assert_eq!(rule_scope(ScopeKey::ApplyTo, excluded), Ok(Some(vec!["src/**".into()])));
        assert!(rule_scope(ScopeKey::ApplyTo, "---\napplyTo: \"a\"\nexcludeAgent: everyone\n---\n").is_err());
        let windsurf = "---\ntrigger: glob\nglobs: \"src/**,lib/**\"\n---\n";
        assert_eq!(
            rule_scope(ScopeKey::WindsurfTrigger, windsurf),
            Ok(Some(vec!["src/**".into(), "lib/**".into()]))
        );
        assert_eq!(rule_scope(ScopeKey::WindsurfTrigger, "---\ntrigger: always_on\n---\n"), Ok(None));
        assert!(rule_scope(ScopeKey::WindsurfTrigger, "---\ntrigger: sometimes\n---\n").is_err());
        let kiro = "---\ninclusion: fileMatch\nfileMatchPattern: [\"a/**\", \"b/*.ts\"]\n---\n";
        assert_eq!(rule_scope(ScopeKey::KiroInclusion, kiro), Ok(Some(vec!["a/**".into(), "b/*.ts".into()])));
        assert_eq!(rule_scope(ScopeKey::KiroInclusion, "no front matter\n"), Ok(None));
        assert!(rule_scope(ScopeKey::KiroInclusion, "---\ninclusion: fileMatch\n---\n").is_err());
    }

    #[test]
    fn skills_are_held_to_the_specification() {
        let skill =
            |name: &str, description: &str| format!("---\nname: {name}\ndescription: {description}\n---\n");
        assert_eq!(skill_front_matter(&skill("pdf-tools", "Reads PDFs."), "pdf-tools"), Ok(()));
        for (name, folder) in
            [("pdf--tools", "pdf--tools"), ("-pdf", "-pdf"), ("Pdf", "Pdf"), ("pdf", "other")]
        {
            assert!(skill_front_matter(&skill(name, "x"), folder).is_err(), "{name} in {folder}");
        }
        let long = "a".repeat(65);
        assert!(skill_front_matter(&skill(&long, "x"), &long).unwrap_err().contains("65 characters"));
        let wordy = "w".repeat(1025);
        assert!(skill_front_matter(&skill("ok", &wordy), "ok").unwrap_err().contains("1025 characters"));
    }

    #[test]
    fn generated_headers_and_front_matter_are_not_loaded_twice() {
        let rule = |lib: &str| {
            let head = format!(
                "---\npaths:\n  - \"**\"\n---\n{}\n# Project memory for `**`\n\n",
                super::super::MARK
            );
            format!("{head}{lib} docs at the version yarn.lock pins, a paragraph long enough to count\n")
        };
        let texts = vec![("a.md".to_string(), rule("rollup")), ("b.md".to_string(), rule("globals"))];
        assert!(duplicate_pairs(&texts).is_empty());
        let same = vec![("a.md".to_string(), rule("rollup")), ("b.md".to_string(), rule("rollup"))];
        assert_eq!(duplicate_pairs(&same).len(), 1);
    }

    #[test]
    fn imports_outside_code_are_followed() {
        let text = "See @AGENTS.md and @docs/x.md\n```\n@not/this.md\n```\nmail me@example.com `@code.md`\n";
        assert_eq!(at_imports(text), vec!["AGENTS.md", "docs/x.md"]);
    }
}
