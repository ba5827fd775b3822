//! `package-lock.json` and `npm-shrinkwrap.json`, lockfileVersion 1 to 3.
//!
//! A root (the project, `packages[""]`, and each workspace member, as Cargo's members are)
//! depends directly on what it declares; the copy it uses is the one in its own
//! `node_modules`, else the hoisted one at the top (v1 lists no declarations: its top-level
//! `dependencies` stand for them). Copies nested under another package are that package's own.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::error::Result;
use super::error::unsupported;
use super::json::{self, str_at};
use super::{Pin, PinFile, PinnedArtifact, url_file_name};

const HELP: &str = "package-lock.json is generated: run `npm install` to write it again";

/// The newest lockfileVersion this reader knows.
const NEWEST: u64 = 3;

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let root = json::object(text, name, "package-lock.json", HELP)?;
    let version = root.get("lockfileVersion").and_then(Value::as_u64).unwrap_or(1);
    if version > NEWEST {
        let at = text.find("\"lockfileVersion\"").unwrap_or(0);
        let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        let what = format!("package-lock.json lockfileVersion {version}");
        let help = format!("this memorix reads lockfileVersion 1 to {NEWEST}; upgrade memorix");
        return Err(unsupported(name, text, at..end, what, help).into());
    }
    let lines = json::object_lines(text);
    if let Some(packages) = root.get("packages").and_then(Value::as_object) {
        packages_tree(packages, &lines, file);
    } else if let Some(deps) = root.get("dependencies").and_then(Value::as_object) {
        let mut at = vec!["dependencies"];
        v1_tree(deps, &mut at, &lines, file);
        v1_declared(file);
    }
    file.pins.sort_by_key(|p| p.line);
    Ok(())
}

/// lockfileVersion 2 and 3: `packages` by install path. The project (`""`) and each workspace
/// member (a folder outside node_modules) declare their dependencies; each resolves to the
/// copy in the member's own node_modules, else the hoisted one at the top, as Node finds it.
/// Everything else at the top of node_modules is hoisted there for some dependency's sake.
fn packages_tree(packages: &Map<String, Value>, lines: &HashMap<Vec<&str>, usize>, file: &mut PinFile) {
    let mut roots: HashMap<&str, Vec<&str>> = HashMap::new();
    for (folder, entry) in packages.iter().filter(|(k, _)| !k.contains("node_modules/")) {
        for kind in ["dependencies", "devDependencies", "optionalDependencies"] {
            for dep in entry.get(kind).and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
                let own = format!("{folder}/node_modules/{dep}");
                let key = match packages.contains_key(&own) && !folder.is_empty() {
                    true => packages.get_key_value(&own).map(|(k, _)| k.as_str()),
                    false => packages.get_key_value(&format!("node_modules/{dep}")).map(|(k, _)| k.as_str()),
                };
                if let Some(key) = key {
                    let members = roots.entry(key).or_default();
                    if !members.contains(&folder.as_str()) {
                        members.push(folder);
                    }
                }
            }
        }
    }
    for (key, entry) in packages {
        let Some((under, name)) = installed(key) else { continue };
        // Links point at workspace folders, which are the project's own code.
        if entry.get("link").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        let Some(version) = str_at(entry, "version") else { continue };
        let line = lines.get(&["packages", key.as_str()][..]).copied().unwrap_or(0);
        let mut pin = Pin::new(name, version, &file.path, line);
        pin.visible = under.is_empty() || !under.contains("node_modules");
        if let Some(members) = roots.get(key.as_str()) {
            pin.direct = true;
            pin.members = members.iter().map(|m| m.to_string()).collect();
        }
        // An alias (`"strip-ansi-cjs": "npm:strip-ansi@^6.0.1"`) records the real name.
        pin.package = str_at(entry, "name").filter(|real| *real != name).map(str::to_string);
        pin.artifacts = artifacts(entry);
        file.pins.push(pin);
    }
}

/// `key` of an installed package: the folder whose `node_modules` holds it ("" for the
/// project's), and its name. `None` for the project and workspace folders.
fn installed(key: &str) -> Option<(&str, &str)> {
    if let Some(name) = key.strip_prefix("node_modules/")
        && !name.contains("/node_modules/")
    {
        return Some(("", name));
    }
    let (under, name) = key.rsplit_once("/node_modules/")?;
    Some((under, name))
}

/// `resolved` and `integrity` (SRI; several space-separated hashes are several artifacts).
fn artifacts(entry: &Value) -> Vec<PinnedArtifact> {
    let url = str_at(entry, "resolved").filter(|u| u.contains("://")).map(str::to_string);
    let file = url.as_deref().and_then(url_file_name);
    let hashes: Vec<&str> =
        str_at(entry, "integrity").map(|i| i.split_whitespace().collect()).unwrap_or_default();
    if hashes.is_empty() {
        return url.map(|url| vec![PinnedArtifact { file, url: Some(url), hash: None }]).unwrap_or_default();
    }
    hashes
        .into_iter()
        .map(|h| PinnedArtifact { file: file.clone(), url: url.clone(), hash: Some(h.to_string()) })
        .collect()
}

/// v1 hoists every package it can to the top: of those, the ones package.json beside it
/// declares are the project's own dependencies (without a package.json, all of them).
fn v1_declared(file: &mut PinFile) {
    let dir = file.path.parent().unwrap_or(std::path::Path::new(""));
    let Some(roots) = super::beside::package_json_roots(dir) else { return };
    let declared: Vec<&str> =
        roots.iter().filter(|r| r.folder.is_empty()).flat_map(|r| &r.deps).map(|(n, _)| n.as_str()).collect();
    for pin in file.pins.iter_mut().filter(|p| p.direct) {
        if !declared.contains(&pin.name.as_str()) {
            pin.direct = false;
            pin.members.clear();
        }
    }
}

/// `npm:strip-ansi@6.0.1` -> (`strip-ansi`, `6.0.1`): an alias names the real package.
fn alias(version: &str) -> Option<(&str, &str)> {
    let spec = version.strip_prefix("npm:")?;
    let at = spec.get(1..)?.rfind('@')? + 1;
    Some((&spec[..at], &spec[at + 1..]))
}

/// lockfileVersion 1: `dependencies` nest; `at` is the key path of `deps`.
fn v1_tree<'a>(
    deps: &'a Map<String, Value>,
    at: &mut Vec<&'a str>,
    lines: &HashMap<Vec<&str>, usize>,
    file: &mut PinFile,
) {
    for (name, entry) in deps {
        at.push(name);
        // `file:` versions are workspace folders and local packages, not published versions.
        if let Some(version) = str_at(entry, "version").filter(|v| !v.starts_with("file:")) {
            // An alias: `"version": "npm:strip-ansi@6.0.1"`.
            let (package, version) = match alias(version) {
                Some((real, v)) => (Some(real.to_string()), v),
                None => (None, version),
            };
            let mut pin = Pin::new(name, version, &file.path, lines.get(at.as_slice()).copied().unwrap_or(0));
            pin.direct = at.len() == 2;
            pin.visible = pin.direct;
            pin.package = package;
            if pin.direct {
                pin.members.push(String::new());
            }
            pin.artifacts = artifacts(entry);
            file.pins.push(pin);
        }
        if let Some(nested) = entry.get("dependencies").and_then(Value::as_object) {
            at.push("dependencies");
            v1_tree(nested, at, lines, file);
            at.pop();
        }
        at.pop();
    }
}
