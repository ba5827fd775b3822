//! `pnpm-lock.yaml`, lockfileVersion 5 to 9 (npm ecosystem).
//!
//! The importers (the project and each workspace package) are the roots: what they list under
//! `dependencies`, `devDependencies` and `optionalDependencies` is direct. Every entry of
//! `packages` is a pin: `name@version` (v9), `/name@version(peer@x)` (v6), `/name/version_peer`
//! (v5). pnpm 11 writes a second YAML document (its own tooling) ahead of the lockfile; every
//! document is read.

use std::collections::{BTreeMap, HashMap};

use super::error::Result;
use super::error::{line_start, syntax_at_line, unsupported};
use super::yaml::{self, Node};
use super::{Pin, PinFile, PinnedArtifact, url_file_name};

const HELP: &str = "pnpm-lock.yaml is generated: run `pnpm install` to write it again";

/// The newest lockfileVersion major this reader knows.
const NEWEST: u64 = 9;

/// The dependency kinds of an importer that make a package direct.
const KINDS: [&str; 3] = ["dependencies", "devDependencies", "optionalDependencies"];

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let docs = yaml::load(text)
        .map_err(|e| syntax_at_line(name, text, e.line, "pnpm-lock.yaml", &e.message, HELP))?;
    for doc in &docs {
        let major = lockfile_major(doc);
        if let Some((major, line)) = major.filter(|(m, _)| *m > NEWEST) {
            let start = line_start(text, line);
            let what = format!("pnpm-lock.yaml lockfileVersion {major}");
            let help = format!("this memorix reads lockfileVersion 5 to {NEWEST}; upgrade memorix");
            return Err(unsupported(name, text, start..start, what, help).into());
        }
        let slash_keys = major.is_some_and(|(m, _)| m < 6);
        let roots = roots(doc, slash_keys);
        for (key, entry) in doc.get("packages").map(Node::entries).unwrap_or_default() {
            let Some((pkg, version)) = key.text().and_then(|k| package_key(k, slash_keys)) else { continue };
            let pkg = entry.text_at("name").unwrap_or(pkg);
            let Some(version) = entry.text_at("version").or(Some(version)).filter(|v| is_release(v)) else {
                continue;
            };
            let mut pin = Pin::new(pkg, version, &file.path, key.line);
            pin.artifacts = entry.get("resolution").map(artifact).into_iter().flatten().collect();
            // Under an alias the code imports it by the alias: a pin of its own, mounted so.
            for (alias, members) in roots.get(&(pkg.to_string(), version.to_string())).into_iter().flatten() {
                let mut named = pin.clone();
                named.direct = true;
                named.members = members.clone();
                if alias != pkg {
                    named.name = alias.clone();
                    named.package = Some(pkg.to_string());
                }
                file.pins.push(named);
            }
            if !roots.get(&(pkg.to_string(), version.to_string())).is_some_and(|a| a.contains_key(pkg)) {
                file.pins.push(pin);
            }
        }
    }
    Ok(())
}

/// `lockfileVersion` (`'9.0'`, `5.4`, `5`): its major and line.
fn lockfile_major(doc: &Node) -> Option<(u64, usize)> {
    let node = doc.get("lockfileVersion")?;
    let major = node.text()?.split('.').next()?.parse().ok()?;
    Some((major, node.line))
}

/// What the importers depend on directly: (package, version) -> the name each importer uses
/// for it (the package's own, or an alias) -> the importers (folders, "" for the project).
type Roots = HashMap<(String, String), BTreeMap<String, Vec<String>>>;

fn roots(doc: &Node, slash_keys: bool) -> Roots {
    // A single project before v9 may keep its dependencies at the top level.
    let importers: Vec<(&str, &Node)> = match doc.get("importers") {
        Some(map) => map.entries().iter().filter_map(|(k, importer)| Some((k.text()?, importer))).collect(),
        None => vec![(".", doc)],
    };
    let mut out = Roots::new();
    for (folder, importer) in importers {
        let folder = if folder == "." { "" } else { folder.trim_start_matches("./") };
        for kind in KINDS {
            for (dep, spec) in importer.get(kind).map(Node::entries).unwrap_or_default() {
                let Some(dep) = dep.text() else { continue };
                // v6+: `{ specifier, version }`; v5: the version itself.
                let Some(version) = spec.text_at("version").or(spec.text()) else { continue };
                if let Some(resolved) = resolved(dep, version, slash_keys) {
                    let members = out.entry(resolved).or_default().entry(dep.to_string()).or_default();
                    if !members.iter().any(|m| m == folder) {
                        members.push(folder.to_string());
                    }
                }
            }
        }
    }
    out
}

/// The package an importer's `dep: version` installs: an alias names another package
/// (`string-width-cjs: string-width@4.2.3`, v5 `/string-width/4.2.3`); `link:` and `file:`
/// are the project's own folders.
fn resolved(dep: &str, version: &str, slash_keys: bool) -> Option<(String, String)> {
    let version = strip_peers(version);
    if is_release(version) {
        return Some((dep.to_string(), version.to_string()));
    }
    let (name, version) = package_key(version, slash_keys)?;
    is_release(version).then(|| (name.to_string(), version.to_string()))
}

/// `(name, version)` of a `packages` key.
fn package_key(key: &str, slash_keys: bool) -> Option<(&str, &str)> {
    let key = key.strip_prefix('/').unwrap_or(key);
    if slash_keys {
        // v5: `@scope/name/1.0.0_peer@2.0.0`.
        let (name, version) = key.rsplit_once('/')?;
        let version = version.split('_').next().unwrap_or(version);
        return (!name.is_empty()).then_some((name, version));
    }
    let key = strip_peers(key);
    let at = key.get(1..)?.rfind('@')? + 1;
    Some((&key[..at], &key[at + 1..]))
}

/// `4.1.10(@types/node@22.0.0)(typescript@5.6.2)` -> `4.1.10`.
fn strip_peers(version: &str) -> &str {
    version.split('(').next().unwrap_or(version)
}

/// A registry release (`1.2.3`), not `link:../x`, `file:...` or a tarball URL.
fn is_release(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_digit()) && !version.contains([':', '/'])
}

/// `resolution: {integrity: sha512-..., tarball: https://...}`.
fn artifact(resolution: &Node) -> Option<PinnedArtifact> {
    let hash = resolution.text_at("integrity").map(str::to_string);
    let url = resolution.text_at("tarball").filter(|t| t.contains("://")).map(str::to_string);
    if hash.is_none() && url.is_none() {
        return None;
    }
    Some(PinnedArtifact { file: url.as_deref().and_then(url_file_name), url, hash })
}
