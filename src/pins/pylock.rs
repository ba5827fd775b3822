//! `pylock.toml` (PEP 751), lock-version 1.x: `[[packages]]` with `version`, `marker`, and
//! `sdist` / `wheels` / `archive` entries carrying `url` and `hashes`. The file names no
//! roots, so several versions of one package are settled by markers or the mount.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{check_major, from_toml};
use super::text::Lines;
use super::{Pin, PinFile, PinnedArtifact, url_file_name};

const HELP: &str =
    "pylock.toml is generated: run the locker that wrote it (`uv export`, `pip lock`, `pdm export`) again";

/// The newest lock-version major this reader knows.
const NEWEST_MAJOR: u64 = 1;

#[derive(Deserialize)]
struct Lock {
    #[serde(rename = "lock-version")]
    lock_version: Option<Spanned<String>>,
    #[serde(default)]
    packages: Vec<Package>,
}

#[derive(Deserialize)]
struct Package {
    name: Spanned<String>,
    /// Absent for a directory or VCS package.
    version: Option<String>,
    marker: Option<String>,
    index: Option<String>,
    vcs: Option<BTreeMap<String, toml::Value>>,
    directory: Option<BTreeMap<String, toml::Value>>,
    sdist: Option<Artifact>,
    #[serde(default)]
    wheels: Vec<Artifact>,
    archive: Option<Artifact>,
}

#[derive(Deserialize)]
struct Artifact {
    name: Option<String>,
    url: Option<String>,
    path: Option<String>,
    #[serde(default)]
    hashes: BTreeMap<String, String>,
}

impl Artifact {
    /// One artifact per hash (`{sha256 = "..."}` -> `sha256:...`).
    fn pinned(&self) -> Vec<PinnedArtifact> {
        let file = self
            .name
            .clone()
            .or_else(|| self.url.as_deref().or(self.path.as_deref()).and_then(url_file_name));
        let one = |hash: Option<String>| PinnedArtifact { file: file.clone(), url: self.url.clone(), hash };
        if self.hashes.is_empty() {
            return vec![one(None)];
        }
        self.hashes.iter().map(|(algorithm, hex)| one(Some(format!("{algorithm}:{hex}")))).collect()
    }
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let lock: Lock = from_toml(text, name, "pylock.toml", HELP)?;
    check_major(name, text, lock.lock_version.as_ref(), NEWEST_MAJOR, "pylock.toml lock-version")?;
    let lines = Lines::new(text);
    for p in &lock.packages {
        let line = lines.of(p.name.span().start);
        let mut pin = Pin::new(p.name.get_ref(), p.version.as_deref().unwrap_or(""), &file.path, line);
        pin.markers = p.marker.clone();
        pin.source = p.index.clone();
        let Some(_) = &p.version else {
            let place = p.vcs.as_ref().or(p.directory.as_ref()).and_then(|t| t.get("url").or(t.get("path")));
            pin.source = place.and_then(toml::Value::as_str).map(str::to_string);
            file.unversioned.push(pin);
            continue;
        };
        pin.artifacts =
            p.sdist.iter().chain(&p.wheels).chain(&p.archive).flat_map(Artifact::pinned).collect();
        file.pins.push(pin);
    }
    Ok(())
}
