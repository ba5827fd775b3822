//! `[agents] mcp = true`: memorix's server entry in the project MCP configuration of the
//! harnesses that read one (`.mcp.json` for Claude Code, `.cursor/mcp.json`, `.vscode/mcp.json`).
//! Only the `memorix` entry is memorix's: the rest of each file is the user's and is kept as
//! it is (its keys in order of their names, as serde_json writes an object). A file that is not
//! a JSON object is not touched (book: mcp.md#registering-the-server).

use std::path::Path;

use serde_json::{Map, Value, json};

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

/// Adds memorix's entry to each file (`add`), or takes it out, removing a file left empty.
/// Returns the files changed.
pub fn register(confined: &Confined, state: &Path, add: bool) -> Result<Vec<String>> {
    let dir = confined.root().to_path_buf();
    let mut changed = Vec::new();
    for (file, key, entry) in files() {
        let path = dir.join(file);
        confined.check(&path)?;
        let old = match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io("read", &path)(e)),
        };
        let mut doc = match &old {
            Some(bytes) => match serde_json::from_slice::<Value>(bytes) {
                Ok(Value::Object(map)) => map,
                _ => return Err(Error::McpConfigNotAnObject { file: file.to_string() }),
            },
            None if add => Map::new(),
            None => continue,
        };
        let servers = doc.entry(key).or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(servers) = servers else {
            return Err(Error::McpConfigNotAnObject { file: format!("{file} ({key})") });
        };
        let before = servers.get(NAME).cloned();
        if add {
            servers.insert(NAME.into(), entry);
        } else {
            servers.remove(NAME);
        }
        if before == servers.get(NAME).cloned() && old.is_some() {
            continue;
        }
        if servers.is_empty() {
            doc.remove(key);
        }
        if doc.is_empty() {
            std::fs::remove_file(&path).map_err(Error::io("remove", &path))?;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(Error::io("create", parent))?;
            }
            let text = serde_json::to_string_pretty(&Value::Object(doc)).expect("JSON serializes") + "\n";
            fsutil::write_atomic(state, &path, text.as_bytes())?;
        }
        changed.push(file.to_string());
    }
    Ok(changed)
}
