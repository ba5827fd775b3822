//! `[agents] mcp = true`: memorix's server entry in the project MCP configuration of the
//! harnesses that read one (`.mcp.json` for Claude Code, `.cursor/mcp.json`, `.vscode/mcp.json`).
//! Only the `memorix` entry is memorix's: the rest of each file is the user's and is kept as
//! it is, its keys in the user's order and each of their values as the user wrote it, at the
//! file's indentation. A file that is not a JSON object is not touched
//! (book: mcp.md#registering-the-server).

use std::path::Path;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::error::{Error, Result};
use crate::confine::Confined;
use crate::diagnostics::FromIo;
use crate::store::fsutil;

/// The server's name in each file.
const NAME: &str = "memorix";

/// (file, the key its servers are under, memorix's entry).
fn files() -> [(&'static str, &'static str, Value); 3] {
    let entry = json!({"command": "memorix", "args": ["mcp"]});
    let vscode = json!({"type": "stdio", "command": "memorix", "args": ["mcp"]});
    [
        (".mcp.json", "mcpServers", entry.clone()),
        (".cursor/mcp.json", "mcpServers", entry),
        (".vscode/mcp.json", "servers", vscode),
    ]
}

/// A JSON object's members in the order its text has them, each value as its text.
#[derive(Default)]
struct Members(Vec<(String, Box<RawValue>)>);

impl Members {
    /// The members of the object `text` is, `None` when it is not an object.
    fn parse(text: &str) -> Option<Members> {
        serde_json::from_str(text).ok()
    }

    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_ref())
    }

    /// Sets `key` in its place, or last when the object lacks it.
    fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    fn remove(&mut self, key: &str) {
        self.0.retain(|(k, _)| k != key);
    }

    /// The object's text with its closing brace `depth` levels of `indent` in: its members one
    /// a line, their values as they came (each already at its place).
    fn to_text(&self, indent: &str, depth: usize) -> Box<RawValue> {
        if self.0.is_empty() {
            return raw("{}");
        }
        let pad = indent.repeat(depth);
        let key = |k: &String| serde_json::to_string(k).expect("a string serializes");
        let members: Vec<String> =
            self.0.iter().map(|(k, v)| format!("{pad}{indent}{}: {}", key(k), v.get())).collect();
        raw(&format!("{{\n{}\n{pad}}}", members.join(",\n")))
    }
}

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Members, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Object)
    }
}

/// JSON text as a raw value (text memorix made, so valid).
fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).expect("memorix writes valid JSON")
}

/// memorix's entry, pretty, its closing brace `depth` levels of `indent` in (a newline in JSON
/// text is never inside a string).
fn entry_text(entry: &Value, indent: &str, depth: usize) -> Box<RawValue> {
    let mut text = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    entry.serialize(&mut serde_json::Serializer::with_formatter(&mut text, fmt)).expect("JSON serializes");
    let text = String::from_utf8(text).expect("serde_json writes UTF-8");
    raw(&text.replace('\n', &format!("\n{}", indent.repeat(depth))))
}

/// The indentation of the file's first indented line (two spaces when it has none).
fn indent_of(text: &str) -> String {
    let mut pads = text.lines().skip(1).map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()]);
    pads.find(|p| !p.is_empty()).unwrap_or("  ").to_string()
}

/// Adds memorix's entry to each file (`add`), or takes it out, removing a file left empty.
/// Returns the files changed.
pub fn register(confined: &Confined, state: &Path, add: bool) -> Result<Vec<String>> {
    let dir = confined.root().to_path_buf();
    let mut changed = Vec::new();
    for (file, key, entry) in files() {
        let path = dir.join(file);
        confined.check(&path)?;
        let old = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        let not_object = |file: String| Error::McpConfigNotAnObject { file };
        let mut doc = match &old {
            Some(text) => Members::parse(text).ok_or_else(|| not_object(file.to_string()))?,
            None if add => Members::default(),
            None => continue,
        };
        let indent = indent_of(old.as_deref().unwrap_or_default());
        let mut servers = match doc.get(key) {
            Some(s) => Members::parse(s.get()).ok_or_else(|| not_object(format!("{file} ({key})")))?,
            None => Members::default(),
        };
        let value = |v: Option<&RawValue>| v.and_then(|v| serde_json::from_str::<Value>(v.get()).ok());
        let before = value(servers.get(NAME));
        if add {
            servers.set(NAME, entry_text(&entry, &indent, 2));
        } else {
            servers.remove(NAME);
        }
        if before == value(servers.get(NAME)) && old.is_some() {
            continue;
        }
        match servers.0.is_empty() {
            true => doc.remove(key),
            false => doc.set(key, servers.to_text(&indent, 1)),
        }
        if doc.0.is_empty() {
            std::fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(Error::io("create", parent))?;
            }
            let text = doc.to_text(&indent, 0).get().to_string() + "\n";
            fsutil::write_atomic(state, &path, text.as_bytes())?;
        }
        changed.push(file.to_string());
    }
    Ok(changed)
}
