//! `uv.lock` (lock version 1, any revision), and a script's `<name>.py.lock`.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{from_toml, unsupported};
use super::text::Lines;
use super::{Ecosystem, Pin, PinFile, PinnedArtifact, normalize, url_file_name};

const HELP: &str = "uv.lock is generated: run `uv lock` to write it again";

/// The newest uv.lock version this reader knows.
const NEWEST: i64 = 1;

#[derive(Deserialize)]
struct Lock {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    package: Vec<Package>,
    manifest: Option<Manifest>,
}

/// `[manifest]`: the workspace members, or a script's own requirements.
#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    members: Vec<String>,
    #[serde(default)]
    requirements: Vec<Dependency>,
}

#[derive(Deserialize)]
struct Package {
    name: Spanned<String>,
    /// Absent for a workspace member with a dynamic version.
    version: Option<String>,
    source: Option<BTreeMap<String, toml::Value>>,
    #[serde(rename = "resolution-markers", default)]
    resolution_markers: Vec<String>,
    #[serde(default)]
    dependencies: Vec<Dependency>,
    #[serde(rename = "optional-dependencies", default)]
    optional_dependencies: BTreeMap<String, Vec<Dependency>>,
    #[serde(rename = "dev-dependencies", default)]
    dev_dependencies: BTreeMap<String, Vec<Dependency>>,
    sdist: Option<Artifact>,
    #[serde(default)]
    wheels: Vec<Artifact>,
}

/// An sdist or a wheel: where it is, and its hash (`sha256:<hex>`).
#[derive(Deserialize)]
struct Artifact {
    url: Option<String>,
    path: Option<String>,
    hash: Option<String>,
}

impl Artifact {
    fn pinned(&self) -> PinnedArtifact {
        let file = self.url.as_deref().or(self.path.as_deref()).and_then(url_file_name);
        PinnedArtifact { file, url: self.url.clone(), hash: self.hash.clone() }
    }
}

/// A dependency edge; `version` is written only when the lock has several versions.
#[derive(Deserialize)]
struct Dependency {
    name: String,
    version: Option<String>,
}

impl Package {
    /// The project itself: `source = { editable = "." }` or `{ virtual = "." }`, or a member.
    fn is_root(&self, members: &HashSet<String>) -> bool {
        let own = self.source.as_ref().is_some_and(|s| {
            ["editable", "virtual"].iter().any(|k| s.get(*k).and_then(toml::Value::as_str) == Some("."))
        });
        own || members.contains(&normalize(Ecosystem::Python, self.name.get_ref()))
    }

    /// The folder of a root, relative to the lock ("" for the project itself).
    fn folder(&self) -> String {
        let path = self.source.as_ref().and_then(|s| {
            ["editable", "virtual"].iter().find_map(|k| s.get(*k).and_then(toml::Value::as_str))
        });
        match path.map(|p| p.trim_start_matches("./")) {
            None | Some(".") | Some("") => String::new(),
            Some(p) => p.to_string(),
        }
    }

    fn all_dependencies(&self) -> impl Iterator<Item = &Dependency> {
        self.dependencies
            .iter()
            .chain(self.optional_dependencies.values().flatten())
            .chain(self.dev_dependencies.values().flatten())
    }
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let lock: Lock = from_toml(text, name, "uv.lock", HELP)?;
    if let Some(v) = &lock.version
        && *v.get_ref() > NEWEST
    {
        let what = format!("uv.lock version {}", v.get_ref());
        let help = format!("this memorix reads uv.lock version {NEWEST}; upgrade memorix");
        return Err(unsupported(name, text, v.span(), what, help).into());
    }

    let norm = |n: &str| normalize(Ecosystem::Python, n);
    let members: HashSet<String> = lock.manifest.iter().flat_map(|m| &m.members).map(|m| norm(m)).collect();
    // Edges from a root without a version mean the lock's only version of that name; each
    // edge remembers the root's folder.
    let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
    let mut by_version: HashMap<(String, String), Vec<String>> = HashMap::new();
    let roots = lock.package.iter().filter(|p| p.is_root(&members));
    let edges = roots.flat_map(|p| p.all_dependencies().map(move |d| (p.folder(), d)));
    let script = lock.manifest.iter().flat_map(|m| &m.requirements).map(|d| (String::new(), d));
    for (folder, dep) in edges.chain(script) {
        let folders = match &dep.version {
            Some(v) => by_version.entry((norm(&dep.name), v.clone())).or_default(),
            None => by_name.entry(norm(&dep.name)).or_default(),
        };
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }

    let lines = Lines::new(text);
    for p in &lock.package {
        let line = lines.of(p.name.span().start);
        let source = p.source.as_ref().map(source_text);
        // A workspace member with a dynamic version has none in the lock.
        let Some(version) = &p.version else {
            let mut member = Pin::new(p.name.get_ref(), "", &file.path, line);
            member.source = source;
            file.unversioned.push(member);
            continue;
        };
        let key = norm(p.name.get_ref());
        let mut pin = Pin::new(p.name.get_ref(), version, &file.path, line);
        let folders = by_name.get(&key).into_iter().chain(by_version.get(&(key.clone(), version.clone())));
        pin.members = folders.flatten().cloned().collect();
        pin.direct = !pin.members.is_empty();
        pin.markers = fork_markers(&p.resolution_markers);
        pin.source = source;
        pin.artifacts = p.sdist.iter().chain(&p.wheels).map(Artifact::pinned).collect();
        file.pins.push(pin);
    }
    Ok(())
}

/// A package forked by uv applies under any of its forks' markers.
fn fork_markers(forks: &[String]) -> Option<String> {
    match forks {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(many.iter().map(|m| format!("({m})")).collect::<Vec<_>>().join(" or ")),
    }
}

/// `{ registry = "https://pypi.org/simple" }` -> `registry+https://pypi.org/simple`.
fn source_text(source: &BTreeMap<String, toml::Value>) -> String {
    source
        .iter()
        .map(|(kind, v)| match v.as_str() {
            Some(s) => format!("{kind}+{s}"),
            None => format!("{kind}+{v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}
