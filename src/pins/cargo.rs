//! `Cargo.lock`, formats v1 to v4. Dependencies name a package by `name`, `name version` or
//! `name version (source)`; they are looked up by name in a map, so a file of any shape reads
//! in time linear in its size.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{from_toml, syntax, unsupported};
use super::text::Lines;
use super::{Pin, PinFile, PinnedArtifact};

const HELP: &str = "Cargo.lock is generated: run `cargo generate-lockfile` to write it again";

/// The newest Cargo.lock format memorix reads.
const NEWEST: i64 = 4;

#[derive(Deserialize)]
struct Lockfile {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    package: Vec<Package>,
    /// Format v1 kept the workspace's root package apart.
    root: Option<Package>,
    /// Format v1 kept checksums here: `"checksum NAME VERSION (SOURCE)" = "HEX"`.
    #[serde(default)]
    metadata: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Package {
    name: Spanned<String>,
    version: Spanned<String>,
    source: Option<String>,
    checksum: Option<String>,
    #[serde(default)]
    dependencies: Vec<Spanned<String>>,
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let lock: Lockfile = from_toml(text, name, "Cargo.lock", HELP)?;
    if let Some(v) = &lock.version
        && *v.get_ref() > NEWEST
    {
        let what = format!("Cargo.lock format version {}", v.get_ref());
        let help = format!("this memorix reads Cargo.lock versions 1 to {NEWEST}; upgrade memorix");
        return Err(unsupported(name, text, v.span(), what, help).into());
    }
    let packages: Vec<&Package> = lock.package.iter().chain(&lock.root).collect();
    for p in &packages {
        if let Err(e) = semver::Version::parse(p.version.get_ref()) {
            let message = format!("version `{}` of `{}`: {e}", p.version.get_ref(), p.name.get_ref());
            return Err(syntax(name, text, Some(p.version.span()), "Cargo.lock", &message, HELP).into());
        }
    }
    let direct = direct(&packages, text, name)?;
    // Cargo.toml beside says where each workspace package is.
    let folders = super::beside::cargo_members(file.path.parent().unwrap_or(std::path::Path::new("")));
    let lines = Lines::new(text);
    for p in packages {
        let (package, version) = (p.name.get_ref(), p.version.get_ref());
        let mut pin = Pin::new(package, version, &file.path, lines.of(p.name.span().start));
        let roots = direct.get(&(package.as_str(), version.as_str()));
        pin.direct = roots.is_some();
        pin.members = roots.into_iter().flatten().filter_map(|r| folders.get(*r).cloned()).collect();
        pin.source = p.source.clone();
        let v1 = || {
            let source = p.source.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
            lock.metadata.get(&format!("checksum {package} {version}{source}")).filter(|c| *c != "<none>")
        };
        // The checksum is the sha256 of the `.crate` the registry serves.
        pin.artifacts = p
            .checksum
            .as_ref()
            .or_else(v1)
            .map(|c| PinnedArtifact {
                file: Some(format!("{package}-{version}.crate")),
                url: None,
                hash: Some(format!("sha256:{c}")),
            })
            .into_iter()
            .collect();
        file.pins.push(pin);
    }
    Ok(())
}

/// The `(name, version)` of every package a workspace member (a package without a source,
/// or v1's root) depends on, with the members that do: Cargo's direct dependencies.
type Direct<'a> = HashMap<(&'a str, &'a str), Vec<&'a str>>;

fn direct<'a>(packages: &[&'a Package], text: &str, name: &str) -> Result<Direct<'a>> {
    let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in packages {
        by_name.entry(p.name.get_ref()).or_default().push(p.version.get_ref());
    }
    let mut direct = Direct::new();
    let roots = packages.iter().filter(|p| p.source.is_none());
    for (root, dep) in roots.flat_map(|p| p.dependencies.iter().map(move |d| (p.name.get_ref().as_str(), d)))
    {
        let mut words = dep.get_ref().split(' ');
        let dep_name = words.next().unwrap_or_default();
        let known = by_name.get(dep_name).map(Vec::as_slice).unwrap_or_default();
        let version = match words.next() {
            Some(v) => known.iter().find(|k| **k == v).copied(),
            // Without a version the name alone is unique in the file.
            None if known.len() == 1 => Some(known[0]),
            None => None,
        };
        let Some(version) = version else {
            let message = format!("dependency `{}` names no single package in the file", dep.get_ref());
            return Err(syntax(name, text, Some(dep.span()), "Cargo.lock", &message, HELP).into());
        };
        let dep_name = by_name.get_key_value(dep_name).map(|(k, _)| *k).unwrap_or_default();
        let members = direct.entry((dep_name, version)).or_default();
        if !members.contains(&root) {
            members.push(root);
        }
    }
    Ok(direct)
}
