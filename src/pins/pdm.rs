//! `pdm.lock`, lock_version 4.x: `[[package]]` with `version`, `marker`, `groups` and `files`
//! (`{file, hash}`). The lock names no roots (pyproject.toml does), so several versions of
//! one package are settled by markers or the mount.

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{check_major, from_toml};
use super::text::Lines;
use super::{Pin, PinFile, PinnedArtifact};

const HELP: &str = "pdm.lock is generated: run `pdm lock` to write it again";

/// The newest lock_version major this reader knows.
const NEWEST_MAJOR: u64 = 4;

#[derive(Deserialize)]
struct Lock {
    metadata: Option<Metadata>,
    #[serde(default)]
    package: Vec<Package>,
}

#[derive(Deserialize)]
struct Metadata {
    lock_version: Option<Spanned<String>>,
}

#[derive(Deserialize)]
struct Package {
    name: Spanned<String>,
    version: String,
    marker: Option<String>,
    #[serde(default)]
    groups: Vec<String>,
    #[serde(default)]
    files: Vec<File>,
}

#[derive(Deserialize)]
struct File {
    file: Option<String>,
    url: Option<String>,
    hash: Option<String>,
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let lock: Lock = from_toml(text, name, "pdm.lock", HELP)?;
    check_major(
        name,
        text,
        lock.metadata.as_ref().and_then(|m| m.lock_version.as_ref()),
        NEWEST_MAJOR,
        "pdm.lock lock_version",
    )?;
    let lines = Lines::new(text);
    for p in &lock.package {
        let mut pin = Pin::new(p.name.get_ref(), &p.version, &file.path, lines.of(p.name.span().start));
        pin.markers = p.marker.clone();
        pin.source = (!p.groups.is_empty()).then(|| p.groups.join(", "));
        pin.artifacts = p
            .files
            .iter()
            .map(|f| PinnedArtifact { file: f.file.clone(), url: f.url.clone(), hash: f.hash.clone() })
            .collect();
        file.pins.push(pin);
    }
    Ok(())
}
