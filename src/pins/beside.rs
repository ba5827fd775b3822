//! The manifests beside a lockfile. Some lockfiles do not say what the project depends on
//! directly (poetry.lock, pdm.lock, Pipfile.lock, composer.lock, yarn.lock v1), or where its
//! workspace members are (Cargo.lock); the manifest the package manager itself reads beside
//! them does: pyproject.toml, Pipfile, composer.json, package.json and its workspaces,
//! Cargo.toml and its members. Read leniently: a manifest that is missing or does not parse
//! tells nothing, and the lockfile is read as it would be alone.

use std::collections::HashMap;
use std::path::Path;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::format::Format;
use super::{PinFile, normalize};

/// One root of a workspace: its folder relative to the lockfile's ("" for the project) and
/// what it depends on, as (name, range) pairs.
#[derive(Debug, Default)]
pub(super) struct Root {
    pub folder: String,
    pub deps: Vec<(String, String)>,
}

/// How deep workspace globs are followed below the project (`packages/*/*` is 2).
const MAX_DEPTH: usize = 6;

/// Marks the pins the manifest beside a lockfile names as direct, for the formats that do not
/// record it; returns whether a manifest said.
pub(super) fn mark_direct(format: Format, file: &mut PinFile) -> bool {
    let dir = file.path.parent().unwrap_or(Path::new("")).to_path_buf();
    // (the lockfile section the name is pinned in, when the manifest says, and the name)
    let names: Option<Vec<(Option<&str>, String)>> =
        match format {
            Format::Poetry | Format::Pdm | Format::Pylock => read(&dir.join("pyproject.toml"))
                .map(|t| pyproject(&t).into_iter().map(|n| (None, n)).collect()),
            Format::Pipfile => read(&dir.join("Pipfile")).map(|t| pipfile(&t)),
            Format::Composer => read(&dir.join("composer.json"))
                .map(|t| composer(&t).into_iter().map(|n| (None, n)).collect()),
            _ => None,
        };
    let Some(names) = names else { return false };
    let eco = file.ecosystem;
    let wanted: Vec<(Option<&str>, String)> = names.iter().map(|(s, n)| (*s, normalize(eco, n))).collect();
    for pin in &mut file.pins {
        let name = normalize(eco, &pin.name);
        let section = pin.source.as_deref();
        if wanted.iter().any(|(s, n)| *n == name && (s.is_none() || *s == section)) {
            pin.direct = true;
            pin.members = vec![String::new()];
        }
    }
    true
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The distribution names a PEP 508 requirement list names (`httpx[http2]>=0.27` -> httpx).
fn requirement_names<'a>(reqs: impl IntoIterator<Item = &'a toml::Value>) -> Vec<String> {
    reqs.into_iter()
        .filter_map(toml::Value::as_str)
        .filter_map(|r| r.parse::<pep508_rs::Requirement>().ok())
        .map(|r| r.name.to_string())
        .collect()
}

/// pyproject.toml: PEP 621 `dependencies` and `optional-dependencies`, PEP 735
/// `[dependency-groups]`, poetry's dependency tables and groups, pdm's dev-dependencies.
fn pyproject(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml::Table>() else { return Vec::new() };
    let get = |path: &[&str]| path.iter().try_fold(&doc, |t, k| t.get(*k)?.as_table());
    let arrays = |t: Option<&toml::Table>| -> Vec<String> {
        t.into_iter()
            .flat_map(|t| t.values())
            .filter_map(toml::Value::as_array)
            .flat_map(requirement_names)
            .collect()
    };
    let mut out = Vec::new();
    if let Some(project) = get(&["project"]) {
        out.extend(
            project.get("dependencies").and_then(|d| d.as_array()).map(requirement_names).unwrap_or_default(),
        );
        out.extend(arrays(project.get("optional-dependencies").and_then(|o| o.as_table())));
    }
    out.extend(arrays(get(&["dependency-groups"])));
    out.extend(arrays(get(&["tool", "pdm", "dev-dependencies"])));
    let poetry_keys = |t: Option<&toml::Table>| -> Vec<String> {
        t.into_iter().flat_map(|t| t.keys()).filter(|k| *k != "python").cloned().collect()
    };
    out.extend(poetry_keys(get(&["tool", "poetry", "dependencies"])));
    out.extend(poetry_keys(get(&["tool", "poetry", "dev-dependencies"])));
    if let Some(groups) = get(&["tool", "poetry", "group"]) {
        for group in groups.values().filter_map(toml::Value::as_table) {
            out.extend(poetry_keys(group.get("dependencies").and_then(|d| d.as_table())));
        }
    }
    out
}

/// Pipfile: `[packages]` (pinned in Pipfile.lock's `default`) and `[dev-packages]`
/// (`develop`), each with the lockfile section it is pinned in.
fn pipfile(text: &str) -> Vec<(Option<&'static str>, String)> {
    let Ok(doc) = text.parse::<toml::Table>() else { return Vec::new() };
    [("packages", "default"), ("dev-packages", "develop")]
        .iter()
        .filter_map(|(k, section)| Some((*section, doc.get(*k)?.as_table()?)))
        .flat_map(|(section, t)| t.keys().map(move |k| (Some(section), k.clone())))
        .collect()
}

/// composer.json: `require` and `require-dev`, without the platform (`php`, `ext-*`).
fn composer(text: &str) -> Vec<String> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else { return Vec::new() };
    let platform = |n: &str| n == "php" || n.starts_with("ext-") || n.starts_with("lib-") || !n.contains('/');
    ["require", "require-dev"]
        .iter()
        .filter_map(|k| doc.get(*k)?.as_object())
        .flat_map(|m| m.keys())
        .filter(|n| !platform(n))
        .cloned()
        .collect()
}

/// package.json beside a lockfile and each of its workspaces' (`"workspaces": ["packages/*"]`
/// or `{"packages": [...]}`), with their `dependencies`, `devDependencies` and
/// `optionalDependencies`. `None` without a package.json.
pub(super) fn package_json_roots(dir: &Path) -> Option<Vec<Root>> {
    let text = read(&dir.join("package.json"))?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    let mut roots = vec![npm_root(String::new(), &doc)];
    let workspaces = doc.get("workspaces").map(|w| w.get("packages").unwrap_or(w));
    let patterns: Vec<&str> =
        workspaces.and_then(|w| w.as_array()).into_iter().flatten().filter_map(|p| p.as_str()).collect();
    for folder in expand(dir, &patterns, &[], "package.json") {
        let member = read(&dir.join(&folder).join("package.json"));
        if let Some(doc) = member.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok()) {
            roots.push(npm_root(folder, &doc));
        }
    }
    Some(roots)
}

fn npm_root(folder: String, doc: &serde_json::Value) -> Root {
    let kinds = ["dependencies", "devDependencies", "optionalDependencies"];
    let deps = kinds
        .iter()
        .filter_map(|k| doc.get(*k)?.as_object())
        .flatten()
        .filter_map(|(name, range)| Some((name.clone(), range.as_str()?.to_string())))
        .collect();
    Root { folder, deps }
}

/// Cargo.toml beside a Cargo.lock: the folder of each workspace package, by package name
/// (the root package at "", members by `[workspace] members` minus `exclude`).
pub(super) fn cargo_members(dir: &Path) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let Some(root) = read(&dir.join("Cargo.toml")).and_then(|t| t.parse::<toml::Table>().ok()) else {
        return out;
    };
    let package_name = |t: &toml::Table| Some(t.get("package")?.get("name")?.as_str()?.to_string());
    if let Some(name) = package_name(&root) {
        out.insert(name, String::new());
    }
    let list = |key: &str| -> Vec<String> {
        let items = root.get("workspace").and_then(|w| w.get(key)).and_then(|m| m.as_array());
        items.into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
    };
    let (members, exclude) = (list("members"), list("exclude"));
    let members: Vec<&str> = members.iter().map(String::as_str).collect();
    let exclude: Vec<&str> = exclude.iter().map(String::as_str).collect();
    for folder in expand(dir, &members, &exclude, "Cargo.toml") {
        let manifest =
            read(&dir.join(&folder).join("Cargo.toml")).and_then(|t| t.parse::<toml::Table>().ok());
        if let Some(name) = manifest.as_ref().and_then(package_name) {
            out.entry(name).or_insert(folder);
        }
    }
    out
}

/// The folders under `dir` that match one of `patterns` (globs, or plain paths; a leading `!`
/// excludes, as npm writes it) and none of `exclude`, and hold a file named `marker`; sorted.
/// Never followed: links, hidden folders, `node_modules`, `target`.
fn expand(dir: &Path, patterns: &[&str], exclude: &[&str], marker: &str) -> Vec<String> {
    let (negated, positive): (Vec<&str>, Vec<&str>) = patterns.iter().partition(|p| p.starts_with('!'));
    let exclude: Vec<&str> = exclude.iter().copied().chain(negated.iter().map(|p| &p[1..])).collect();
    let (Some(include), Some(exclude)) = (glob_set(&positive), glob_set(&exclude)) else { return Vec::new() };
    let mut out = Vec::new();
    walk(dir, "", 0, &mut |rel| {
        if include.is_match(rel) && !exclude.is_match(rel) && dir.join(rel).join(marker).is_file() {
            out.push(rel.to_string());
        }
    });
    out.sort();
    out
}

fn glob_set(patterns: &[&str]) -> Option<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_start_matches("./").trim_end_matches('/');
        set.add(GlobBuilder::new(p).literal_separator(true).build().ok()?);
    }
    set.build().ok()
}

fn walk(dir: &Path, rel: &str, depth: usize, found: &mut dyn FnMut(&str)) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir.join(rel)) else { return };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && n != "node_modules" && n != "target")
        .collect();
    names.sort();
    for name in names {
        let sub = if rel.is_empty() { name } else { format!("{rel}/{name}") };
        found(&sub);
        walk(dir, &sub, depth + 1, found);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyproject_names_every_kind_of_direct_dependency() {
        let text = r#"
[project]
dependencies = ["httpx[http2]>=0.27", "anyio ; python_version < '3.11'"]
[project.optional-dependencies]
cli = ["click>=8"]
[dependency-groups]
dev = ["pytest", {include-group = "lint"}]
[tool.poetry.dependencies]
python = "^3.9"
requests = "^2.31"
[tool.poetry.group.docs.dependencies]
mkdocs = "*"
[tool.pdm.dev-dependencies]
lint = ["ruff==0.5"]
"#;
        let mut names = pyproject(text);
        names.sort();
        assert_eq!(names, ["anyio", "click", "httpx", "mkdocs", "pytest", "requests", "ruff"]);
    }

    #[test]
    fn workspaces_expand_to_member_folders() {
        let tmp = tempfile::tempdir().unwrap();
        for d in ["packages/a", "packages/b", "packages/skip", "node_modules/x", "docs"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
            std::fs::write(tmp.path().join(d).join("package.json"), "{}").unwrap();
        }
        let found = expand(tmp.path(), &["packages/*", "!packages/skip"], &[], "package.json");
        assert_eq!(found, ["packages/a", "packages/b"]);
    }
}
