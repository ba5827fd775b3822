//! The docs view of an artifact (book: design/fetching.md#the-docs-view): what an agent reads
//! to use the library — READMEs, changelogs, `docs/`, `doc/`, `examples/`, text documents, the
//! package manifest and the API surface of its ecosystem — never tests, benches, CI files or
//! binaries. `[fetch.LIB] include` adds files, `exclude` removes them.

use globset::GlobSet;

use super::Registry;

/// What one library keeps beyond (include) or out of (exclude) the default view.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub include: Option<GlobSet>,
    pub exclude: Option<GlobSet>,
}

/// Directories never kept: tests, benches, CI and caches.
const NEVER: &[&str] = &[
    "test",
    "tests",
    "testing",
    "bench",
    "benches",
    "benchmarks",
    ".github",
    ".circleci",
    ".gitlab",
    ".git",
    "ci",
    "__pycache__",
    "node_modules",
    "fuzz",
];

/// Files named like these (case aside) are kept wherever they are.
const NAMED: &[&str] = &["readme", "changelog", "changes", "history", "news"];

/// The manifests that give versions, features and entry points.
const MANIFESTS: &[&str] = &["Cargo.toml", "package.json", "pyproject.toml", "PKG-INFO"];

/// The paths of `files` (relative, top directory stripped) that the docs view keeps.
pub fn keep<'a>(
    registry: Registry,
    files: &'a [(String, Vec<u8>)],
    filter: &Filter,
) -> Vec<&'a (String, Vec<u8>)> {
    let entries = npm_entries(registry, files);
    files
        .iter()
        .filter(|(path, bytes)| {
            if filter.exclude.as_ref().is_some_and(|g| g.is_match(path)) || binary(bytes) {
                return false;
            }
            filter.include.as_ref().is_some_and(|g| g.is_match(path))
                || default_view(registry, path, &entries)
        })
        .collect()
}

/// Whether the default view keeps `path`.
fn default_view(registry: Registry, path: &str, npm_entries: &[String]) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let name = parts[parts.len() - 1];
    let dirs = &parts[..parts.len() - 1];
    if dirs.iter().any(|d| NEVER.contains(&d.to_ascii_lowercase().as_str())) || test_file(name) {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    if NAMED.iter().any(|n| lower.starts_with(n)) || (dirs.is_empty() && MANIFESTS.contains(&name)) {
        return true;
    }
    if matches!(dirs.first(), Some(&("docs" | "doc" | "examples"))) {
        return true;
    }
    if [".md", ".rst", ".txt"].iter().any(|e| lower.ends_with(e)) {
        return true;
    }
    match registry {
        Registry::CratesIo => dirs.first() == Some(&"src") && lower.ends_with(".rs"),
        Registry::Pypi => lower.ends_with(".py") || lower.ends_with(".pyi"),
        Registry::Npm => lower.ends_with(".d.ts") || npm_entries.iter().any(|e| e == path),
    }
}

/// `test_x.py`, `x_test.py`, `conftest.py`, `x.test.js`, `x.spec.ts`.
fn test_file(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name);
    stem.starts_with("test_")
        || stem.ends_with("_test")
        || name == "conftest.py"
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// Binary content: a NUL byte in the first 8 KiB, as git decides.
fn binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// The entry files an npm `package.json` names (`main`, `module`, `types`, `typings`,
/// `browser` and string values of `exports`), as archive paths.
fn npm_entries(registry: Registry, files: &[(String, Vec<u8>)]) -> Vec<String> {
    if registry != Registry::Npm {
        return Vec::new();
    }
    let manifest = files.iter().find(|(p, _)| p == "package.json");
    let json = manifest.and_then(|(_, m)| serde_json::from_slice::<serde_json::Value>(m).ok());
    let json = json.unwrap_or_default();
    let mut out = Vec::new();
    let mut add = |v: &serde_json::Value| {
        if let Some(s) = v.as_str() {
            let p = s.trim_start_matches("./").to_string();
            out.push(p.clone());
            if !p.ends_with(".js") && !p.ends_with(".json") {
                out.push(format!("{p}.js"));
                out.push(format!("{p}/index.js"));
            }
        }
    };
    for key in ["main", "module", "types", "typings", "browser"] {
        add(&json[key]);
    }
    let mut stack = vec![&json["exports"]];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => stack.extend(m.values()),
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            other => add(other),
        }
    }
    if out.is_empty() {
        // npm's own default entry.
        out.push("index.js".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(registry: Registry, paths: &[&str]) -> Vec<String> {
        let files: Vec<(String, Vec<u8>)> = paths.iter().map(|p| (p.to_string(), b"text".to_vec())).collect();
        keep(registry, &files, &Filter::default()).into_iter().map(|(p, _)| p.clone()).collect()
    }

    #[test]
    fn the_default_view_keeps_docs_and_api_and_drops_tests() {
        let crate_files = [
            "README.md",
            "Cargo.toml",
            "Cargo.toml.orig",
            "src/lib.rs",
            "tests/a.rs",
            "benches/b.rs",
            "build.rs",
        ];
        assert_eq!(kept(Registry::CratesIo, &crate_files), ["README.md", "Cargo.toml", "src/lib.rs"]);
        let sdist =
            ["PKG-INFO", "docs/api.rst", "src/click/core.py", "tests/test_core.py", "setup.py", "docs/x.png"];
        assert_eq!(
            kept(Registry::Pypi, &sdist),
            ["PKG-INFO", "docs/api.rst", "src/click/core.py", "setup.py", "docs/x.png"]
        );
        let npm = ["package.json", "index.js", "lib/util.js", "index.d.ts", "license.md"];
        assert_eq!(kept(Registry::Npm, &npm), ["package.json", "index.js", "index.d.ts", "license.md"]);
    }
}
