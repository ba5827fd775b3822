//! JSON lockfiles (package-lock.json, Pipfile.lock, composer.lock): parsing with the error's
//! line, and the line of each object key, which JSON parsers do not keep.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::error::{Result, line_start, syntax};

/// The top-level object of `text` (a lockfile named `name`, of kind `what`).
pub(crate) fn object(text: &str, name: &str, what: &'static str, help: &str) -> Result<Map<String, Value>> {
    let doc: Value = serde_json::from_str(text).map_err(|e| {
        let at = offset(text, e.line(), e.column());
        // The message names the line and column too; the span carries them.
        let message = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        syntax(name, text, Some(at..at), what, message.trim_end_matches(&position), help)
    })?;
    match doc {
        Value::Object(map) => Ok(map),
        _ => Err(syntax(name, text, Some(0..0), what, "the file is not a JSON object", help).into()),
    }
}

/// The 1-based line of each `"key": {` (or `"key": [`) by the path of keys down to it, read
/// from the layout the tools write (one key per line, nesting by indentation). JSON keeps no
/// positions, so this is best effort: a minified file has no such lines and its pins get line 0.
pub(crate) fn object_lines(text: &str) -> HashMap<Vec<&str>, usize> {
    let mut out = HashMap::new();
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let Some((key, rest)) = body.strip_prefix('"').and_then(|b| b.split_once('"')) else { continue };
        let opens =
            rest.trim_start().strip_prefix(':').is_some_and(|v| v.trim_start().starts_with(['{', '[']));
        if !opens {
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

/// The 1-based lines of the objects in the top-level array `key`, in order (composer's
/// `"packages": [ { ... }, ... ]`, indented by four spaces as composer writes it).
pub(crate) fn array_item_lines(text: &str, key: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut inside: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        match inside {
            None if indent <= 4 && body.starts_with(&format!("\"{key}\"")) && body.ends_with('[') => {
                inside = Some(indent)
            }
            Some(outer) if indent == outer && body.starts_with(']') => inside = None,
            Some(outer) if indent == outer + 4 && body.starts_with('{') => out.push(i + 1),
            _ => {}
        }
    }
    out
}

/// A string field of a JSON object.
pub(crate) fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// The byte offset of 1-based `line` and `column` (serde_json's error position).
fn offset(text: &str, line: usize, column: usize) -> usize {
    (line_start(text, line) + column.saturating_sub(1)).min(text.len())
}
