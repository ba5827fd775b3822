//! `poetry.lock`, lock-versions 1.x and 2.x (and the unversioned 1.0 files before them).
//!
//! The lock does not record what the project depends on directly (pyproject.toml does), so no
//! poetry pin is `direct`: several versions of one library are settled by markers or by the
//! mount's `version`.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{check_major, from_toml};
use super::text::Lines;
use super::{Ecosystem, Pin, PinFile, PinnedArtifact, normalize};

const HELP: &str = "poetry.lock is generated: run `poetry lock` to write it again";

/// The newest lock-version major this reader knows.
const NEWEST_MAJOR: u64 = 2;

#[derive(Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<Package>,
    metadata: Option<Metadata>,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "lock-version")]
    lock_version: Option<Spanned<String>>,
    /// lock-versions 1.x: each package's files, by package name.
    #[serde(default)]
    files: BTreeMap<String, Vec<File>>,
    /// Unversioned 1.0 files: each package's sha256 digests, by package name.
    #[serde(default)]
    hashes: BTreeMap<String, Vec<String>>,
}

/// `{file = "anyio-4.13.0.tar.gz", hash = "sha256:..."}`.
#[derive(Deserialize)]
struct File {
    file: String,
    hash: String,
}

impl File {
    fn pinned(&self) -> PinnedArtifact {
        PinnedArtifact { file: Some(self.file.clone()), url: None, hash: Some(self.hash.clone()) }
    }
}

#[derive(Deserialize)]
struct Package {
    name: Spanned<String>,
    version: String,
    /// lock-version 1.0 and earlier.
    marker: Option<String>,
    /// lock-version 2.1: one marker, or one per dependency group.
    markers: Option<Markers>,
    source: Option<Source>,
    /// lock-version 2.x.
    #[serde(default)]
    files: Vec<File>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Markers {
    One(String),
    PerGroup(BTreeMap<String, String>),
}

#[derive(Deserialize)]
struct Source {
    #[serde(rename = "type")]
    kind: String,
    url: Option<String>,
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let lock: Lock = from_toml(text, name, "poetry.lock", HELP)?;
    check_major(
        name,
        text,
        lock.metadata.as_ref().and_then(|m| m.lock_version.as_ref()),
        NEWEST_MAJOR,
        "poetry.lock lock-version",
    )?;
    let lines = Lines::new(text);
    for p in &lock.package {
        let mut pin = Pin::new(p.name.get_ref(), &p.version, &file.path, lines.of(p.name.span().start));
        pin.markers = match &p.markers {
            Some(Markers::One(m)) => Some(m.clone()),
            Some(Markers::PerGroup(groups)) => any_of(groups.values()),
            None => p.marker.clone(),
        };
        pin.source = p.source.as_ref().map(|s| match &s.url {
            Some(url) => format!("{}+{url}", s.kind),
            None => s.kind.clone(),
        });
        pin.artifacts = artifacts(p, lock.metadata.as_ref());
        file.pins.push(pin);
    }
    Ok(())
}

/// A package's files: its own `files` (2.x), else those `[metadata.files]` lists under its
/// name whose file name has its version (1.x), else `[metadata.hashes]` (1.0).
fn artifacts(p: &Package, metadata: Option<&Metadata>) -> Vec<PinnedArtifact> {
    if !p.files.is_empty() {
        return p.files.iter().map(File::pinned).collect();
    }
    let Some(meta) = metadata else { return Vec::new() };
    let key = normalize(Ecosystem::Python, p.name.get_ref());
    let named = |n: &String| normalize(Ecosystem::Python, n) == key;
    if let Some((_, files)) = meta.files.iter().find(|(n, _)| named(n)) {
        let version = format!("-{}", p.version);
        return files.iter().filter(|f| f.file.contains(&version)).map(File::pinned).collect();
    }
    meta.hashes
        .iter()
        .find(|(n, _)| named(n))
        .map(|(_, hashes)| {
            let hash = |h: &String| PinnedArtifact::hashed(&format!("sha256:{h}"));
            hashes.iter().map(hash).collect()
        })
        .unwrap_or_default()
}

/// A package installed for several groups applies under any group's marker.
fn any_of<'a>(markers: impl Iterator<Item = &'a String>) -> Option<String> {
    let mut distinct: Vec<&String> = markers.collect();
    distinct.sort();
    distinct.dedup();
    match distinct.as_slice() {
        [] => None,
        [one] => Some((*one).clone()),
        many => Some(many.iter().map(|m| format!("({m})")).collect::<Vec<_>>().join(" or ")),
    }
}
