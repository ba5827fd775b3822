//! `package-lock.json` and `npm-shrinkwrap.json`, lockfileVersion 1 to 3.
//!
//! What the root package uses is what sits at the top of `node_modules` (v2/v3:
//! `packages["node_modules/<name>"]`; v1: the top-level `dependencies.<name>`); copies nested
//! under another package are that package's own.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::Pin;
use super::error::Result;
use super::error::{Loc, PinError, line_of, syntax};

const HELP: &str = "package-lock.json is generated: run `npm install` to write it again";

/// The newest lockfileVersion this reader knows.
const NEWEST: u64 = 3;

pub(super) fn parse(text: &str, name: &str, path: &Path) -> Result<Vec<Pin>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        let at = offset(text, e.line(), e.column());
        // The message names the line and column too; the span carries them.
        let message = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        syntax(name, text, Some(at..at), "package-lock.json", message.trim_end_matches(&position), HELP)
    })?;
    let Some(root) = doc.as_object() else {
        return Err(syntax(
            name,
            text,
            Some(0..0),
            "package-lock.json",
            "the file is not a JSON object",
            HELP,
        )
        .into());
    };
    let version = root.get("lockfileVersion").and_then(Value::as_u64).unwrap_or(1);
    if version > NEWEST {
        let at = text.find("\"lockfileVersion\"").unwrap_or(0);
        let loc = Loc { name, text: Some(text), line: line_of(text, at) };
        let (src, span) = loc.source();
        return Err(PinError::UnsupportedVersion {
            at: loc.at(),
            what: format!("package-lock.json lockfileVersion {version}"),
            help: format!("this memorix reads lockfileVersion 1 to {NEWEST}; upgrade memorix"),
            src,
            span,
        }
        .into());
    }
    let lines = object_lines(text);
    let mut pins = Vec::new();
    if let Some(packages) = root.get("packages").and_then(Value::as_object) {
        for (key, entry) in packages {
            // "" is the project and other keys outside node_modules are workspace folders;
            // links point at those folders.
            let Some(installed) = key.strip_prefix("node_modules/") else { continue };
            let Some(version) = entry.get("version").and_then(Value::as_str) else { continue };
            if entry.get("link").and_then(Value::as_bool) == Some(true) {
                continue;
            }
            let name = installed.rsplit_once("/node_modules/").map_or(installed, |(_, n)| n);
            pins.push(Pin {
                name: name.to_string(),
                version: version.to_string(),
                markers: None,
                file: path.to_path_buf(),
                line: lines.get(&["packages", key.as_str()][..]).copied().unwrap_or(0),
                direct: name == installed,
                source: None,
            });
        }
    } else if let Some(deps) = root.get("dependencies").and_then(Value::as_object) {
        let mut at = vec!["dependencies"];
        v1_tree(deps, &mut at, &lines, path, &mut pins);
    }
    pins.sort_by_key(|p| p.line);
    Ok(pins)
}

/// lockfileVersion 1: `dependencies` nest; `at` is the key path of `deps`.
fn v1_tree<'a>(
    deps: &'a Map<String, Value>,
    at: &mut Vec<&'a str>,
    lines: &HashMap<Vec<&str>, usize>,
    path: &Path,
    pins: &mut Vec<Pin>,
) {
    for (name, entry) in deps {
        at.push(name);
        // `file:` versions are workspace folders and local packages, not published versions.
        if let Some(version) =
            entry.get("version").and_then(Value::as_str).filter(|v| !v.starts_with("file:"))
        {
            pins.push(Pin {
                name: name.clone(),
                version: version.to_string(),
                markers: None,
                file: path.to_path_buf(),
                line: lines.get(at.as_slice()).copied().unwrap_or(0),
                direct: at.len() == 2,
                source: None,
            });
        }
        if let Some(nested) = entry.get("dependencies").and_then(Value::as_object) {
            at.push("dependencies");
            v1_tree(nested, at, lines, path, pins);
            at.pop();
        }
        at.pop();
    }
}

/// The 1-based line of each `"key": {` by the path of keys down to it, read from the layout
/// npm writes (one key per line, nesting by indentation). JSON keeps no positions, so this is
/// best effort: a minified file has no such lines and its pins get line 0.
fn object_lines(text: &str) -> HashMap<Vec<&str>, usize> {
    let mut out = HashMap::new();
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let Some((key, rest)) = body.strip_prefix('"').and_then(|b| b.split_once('"')) else { continue };
        let opens_object =
            rest.trim_start().strip_prefix(':').is_some_and(|value| value.trim_start().starts_with('{'));
        if !opens_object {
            continue;
        }
        while open.last().is_some_and(|&(depth, _)| depth >= indent) {
            open.pop();
        }
        open.push((indent, key));
        out.insert(open.iter().map(|&(_, k)| k).collect(), i + 1);
    }
    out
}

/// The byte offset of 1-based `line` and `column` (serde_json's error position).
fn offset(text: &str, line: usize, column: usize) -> usize {
    let line_start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    (line_start + column.saturating_sub(1)).min(text.len())
}
