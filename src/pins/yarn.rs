//! `yarn.lock`: classic (v1) and berry (yarn 2+, with `__metadata`), read with the
//! `yarn-lock-parser` crate (npm ecosystem).
//!
//! Berry lists the workspaces themselves (`resolution: "app@workspace:."`): they are the
//! roots, and what they depend on is direct. A `patch:` entry is the same release as the
//! `npm:` one it patches. Classic files do not say what the project depends on directly: the
//! package.json beside them (and its workspaces') does. An alias
//! (`string-width-cjs@npm:string-width@^4.2.0`) is a pin of the real package under the alias.
//!
//! Hashes: classic `integrity` is the SRI hash of the registry tarball and is recorded with
//! `resolved`; berry's `checksum` hashes yarn's own cache zip, not any registry artifact, so
//! a berry pin records no artifact.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::beside::{self, Root};
use super::error::{Result, syntax};
use super::text::Lines;
use super::{Pin, PinFile, PinnedArtifact, url_file_name};

const HELP: &str = "yarn.lock is generated: run `yarn install` to write it again";

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    // A project without dependencies has a lockfile of comments, or none at all.
    if text.lines().all(|l| l.trim().is_empty() || l.starts_with('#')) {
        return Ok(());
    }
    let lock = yarn_lock_parser::parse_str(text).map_err(|e| {
        let yarn_lock_parser::YarnLockError::Parser { source } = e;
        let mut rest = None;
        let _ = source.map(|error| {
            rest = error.errors.first().map(|(input, _)| input.len());
            error
        });
        let at = rest.map(|len| text.len().saturating_sub(len));
        syntax(name, text, at.map(|a| a..a), "yarn.lock", "not a yarn.lock entry", HELP)
    })?;
    let berry = lock.version > 1;
    let workspace = |e: &yarn_lock_parser::Entry| e.resolved.contains("@workspace:");
    let roots: Vec<Root> = if berry {
        let catalogs = catalogs(&file.path);
        lock.entries.iter().filter(|e| workspace(e)).map(|e| berry_root(e, &catalogs)).collect()
    } else {
        // Classic files do not list the workspaces: package.json beside them does.
        let dir = file.path.parent().unwrap_or(std::path::Path::new(""));
        beside::package_json_roots(dir).unwrap_or_default()
    };
    file.records_direct = !roots.is_empty();
    let mut direct: HashMap<(&str, &str), Vec<&str>> = HashMap::new();
    for root in &roots {
        for (dep, range) in &root.deps {
            direct.entry((dep.as_str(), patched(range))).or_default().push(&root.folder);
        }
    }
    let entries: Vec<_> = lock.entries.iter().filter(|e| !workspace(e) && is_release(e.version)).collect();
    // Per entry, the names the roots import it by (its own, or aliases), each with those roots.
    let mut named: Vec<BTreeMap<&str, Vec<String>>> = vec![BTreeMap::new(); entries.len()];
    let mut matched: HashSet<(&str, &str)> = HashSet::new();
    for (i, entry) in entries.iter().enumerate() {
        for (dep, range) in &entry.descriptors {
            if let Some(folders) = direct.get(&(*dep, patched(range))) {
                matched.insert((*dep, patched(range)));
                add_folders(named[i].entry(dep).or_default(), folders);
            }
        }
    }
    // `resolutions` rewrite a root's descriptor (`browserslist: ^4.24.0` is locked as
    // `browserslist@npm:4.28.4`): the one release of that name, else the one they name.
    let resolutions = resolutions(&file.path);
    // Only a registry range: `workspace:^` names a member, `link:`/`portal:` a folder.
    let registry_range = |r: &str| !r.contains(':') || r.starts_with("npm:");
    let unmatched = direct.iter().filter(|(k, _)| !matched.contains(*k) && registry_range(k.1));
    for ((dep, _), folders) in unmatched {
        let of_dep: Vec<usize> = (0..entries.len()).filter(|i| real_package(entries[*i]) == *dep).collect();
        let versions: HashSet<&str> = of_dep.iter().map(|i| entries[*i].version).collect();
        let pick = match versions.len() {
            1 => of_dep.first().copied(),
            _ => {
                resolutions.get(*dep).and_then(|v| of_dep.iter().copied().find(|i| entries[*i].version == v))
            }
        };
        if let Some(i) = pick {
            add_folders(named[i].entry(dep).or_default(), folders);
        }
    }
    let lines = Lines::new(text);
    for (entry, names) in entries.iter().zip(&named) {
        let real = real_package(entry);
        let mut pin = Pin::new(real, entry.version, &file.path, line_of_slice(text, &lines, entry.name));
        pin.source = match berry {
            true => protocol(entry.resolved).map(str::to_string),
            false => classic_source(entry.resolved),
        };
        if !berry {
            pin.artifacts = classic_artifact(entry).into_iter().collect();
        }
        for (name, members) in names {
            let mut named = pin.clone();
            named.direct = true;
            named.members = members.clone();
            if *name != real {
                named.name = name.to_string();
                named.package = Some(real.to_string());
            }
            file.pins.push(named);
        }
        if !names.contains_key(real) {
            file.pins.push(pin);
        }
    }
    Ok(())
}

fn add_folders(to: &mut Vec<String>, folders: &[&str]) {
    for f in folders {
        if !to.iter().any(|t| t == f) {
            to.push(f.to_string());
        }
    }
}

/// The root package.json's `resolutions` by package name (`"browserslist": "4.28.4"`); entries
/// keyed by a descriptor (`"interpret@npm:^2.2.0"`) are left to the descriptors.
fn resolutions(lock: &std::path::Path) -> HashMap<String, String> {
    let text = lock.parent().and_then(|d| std::fs::read_to_string(d.join("package.json")).ok());
    let doc: Option<serde_json::Value> = text.and_then(|t| serde_json::from_str(&t).ok());
    let map = doc.as_ref().and_then(|d| d.get("resolutions")?.as_object().cloned()).unwrap_or_default();
    map.into_iter()
        .filter(|(k, _)| !k.get(1..).is_some_and(|rest| rest.contains('@')))
        .filter_map(|(k, v)| Some((k, npm_range(v.as_str()?).to_string())))
        .collect()
}

/// A berry workspace entry as a root: its folder (`app@workspace:packages/app`) and what it
/// depends on, a `catalog:` range replaced by the catalog's.
fn berry_root(entry: &yarn_lock_parser::Entry, catalogs: &Catalogs) -> Root {
    let folder = entry.resolved.rsplit_once("@workspace:").map_or("", |(_, f)| f);
    let folder = if folder == "." { "" } else { folder.trim_start_matches("./") };
    let deps = entry.dependencies.iter().chain(&entry.optional_dependencies);
    let range = |dep: &str, range: &str| -> String {
        let range = range.trim_matches('"');
        let Some(catalog) = range.strip_prefix("catalog:") else { return range.to_string() };
        match catalogs.get(&(catalog.to_string(), dep.to_string())) {
            Some(r) if r.contains(':') => r.clone(),
            Some(r) => format!("npm:{r}"),
            None => range.to_string(),
        }
    };
    Root { folder: folder.to_string(), deps: deps.map(|(d, r)| (d.to_string(), range(d, r))).collect() }
}

/// yarn's catalogs (`.yarnrc.yml` beside the lock: `catalog:` is the default one, `catalogs:`
/// the named ones), as (catalog name, "" for the default; package) -> range.
type Catalogs = HashMap<(String, String), String>;

fn catalogs(lock: &std::path::Path) -> Catalogs {
    let mut out = Catalogs::new();
    let rc = lock.parent().map(|d| d.join(".yarnrc.yml"));
    let Some(text) = rc.and_then(|p| std::fs::read_to_string(p).ok()) else { return out };
    let Ok(docs) = super::yaml::load(&text) else { return out };
    for doc in &docs {
        let named = doc.get("catalogs").map(|c| c.entries()).unwrap_or_default();
        let default = doc.get("catalog").map(|c| ("", c));
        let all = default.into_iter().chain(named.iter().filter_map(|(k, v)| Some((k.text()?, v))));
        for (catalog, entries) in all {
            for (package, range) in entries.entries() {
                if let (Some(p), Some(r)) = (package.text(), range.text()) {
                    out.insert((catalog.to_string(), p.to_string()), r.to_string());
                }
            }
        }
    }
    out
}

/// The package an entry is of: an alias descriptor (`string-width-cjs@npm:string-width@^4`)
/// names it; the entry's own name may be the alias.
fn real_package<'a>(entry: &yarn_lock_parser::Entry<'a>) -> &'a str {
    let aliased = entry.descriptors.iter().find_map(|(_, range)| {
        let spec = range.trim_matches('"').strip_prefix("npm:")?;
        let at = spec.get(1..)?.find('@')? + 1;
        Some(&spec[..at])
    });
    aliased.unwrap_or(entry.name)
}

/// `npm:^1.2.0` -> `^1.2.0`: berry writes the registry protocol, classic does not.
fn npm_range(range: &str) -> &str {
    range.strip_prefix("npm:").unwrap_or(range)
}

/// The range a descriptor asks for; a `patch:` descriptor asks for the range it patches
/// (`patch:typescript@npm%3A^5.7.2#optional!builtin<compat/typescript>` -> `^5.7.2`).
fn patched(range: &str) -> &str {
    let Some(inner) = range.strip_prefix("patch:") else { return npm_range(range) };
    let inner = inner.split('#').next().unwrap_or(inner);
    let range = inner.get(1..).and_then(|i| i.find('@')).map_or(inner, |at| &inner[at + 2..]);
    range.strip_prefix("npm%3A").unwrap_or(npm_range(range))
}

/// The 1-based line of `slice`, which the parser cut out of `text`.
fn line_of_slice(text: &str, lines: &Lines, slice: &str) -> usize {
    let offset = (slice.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    if offset > text.len() { 0 } else { lines.of(offset) }
}

/// A berry resolution's protocol when it is not the registry's (`patch`, `git`, ...).
fn protocol(resolution: &str) -> Option<&str> {
    let at = resolution.get(1..)?.find('@')? + 1;
    let protocol = resolution[at + 1..].split(':').next()?;
    let known = resolution[at + 1..].contains(':') && protocol != "npm";
    known.then_some(protocol)
}

/// A release version, not a workspace's `0.0.0-use.local` or a link.
fn is_release(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_digit()) && version != "0.0.0-use.local"
}

/// A classic entry resolved elsewhere than a registry tarball (`…/pkg/-/pkg-1.0.0.tgz`): a
/// GitHub shorthand's codeload URL, a git URL, a local folder.
fn classic_source(resolved: &str) -> Option<String> {
    let url = resolved.split('#').next().unwrap_or(resolved);
    let registry_tarball = url.contains("://") && url.contains("/-/") && url.ends_with(".tgz");
    (!resolved.is_empty() && !registry_tarball).then(|| format!("url+{url}"))
}

/// Classic `resolved "https://.../pkg-1.0.0.tgz#<sha1>"` and `integrity sha512-...`.
fn classic_artifact(entry: &yarn_lock_parser::Entry) -> Option<PinnedArtifact> {
    let url = (!entry.resolved.is_empty()).then(|| entry.resolved.to_string());
    let sha1 = entry.resolved.rsplit_once('#').map(|(_, h)| h).filter(|h| h.len() == 40);
    let hash = match entry.integrity {
        "" => sha1.map(|h| format!("sha1:{h}")),
        sri => Some(sri.to_string()),
    };
    if url.is_none() && hash.is_none() {
        return None;
    }
    Some(PinnedArtifact { file: url.as_deref().and_then(url_file_name), url, hash })
}
