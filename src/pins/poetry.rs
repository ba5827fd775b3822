//! `poetry.lock`, lock-versions 1.x and 2.x (and the unversioned 1.0 files before them).
//!
//! The lock does not record what the project depends on directly (pyproject.toml does), so no
//! poetry pin is `direct`: several versions of one library are settled by markers or by the
//! mount's `version`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::Pin;
use super::error::Result;
use super::error::{Loc, PinError, line_of, syntax};

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

pub(super) fn parse(text: &str, name: &str, path: &Path) -> Result<Vec<Pin>> {
    let lock: Lock =
        toml::from_str(text).map_err(|e| syntax(name, text, e.span(), "poetry.lock", e.message(), HELP))?;
    if let Some(v) = lock.metadata.as_ref().and_then(|m| m.lock_version.as_ref()) {
        let major = v.get_ref().split('.').next().and_then(|m| m.parse::<u64>().ok());
        if major.is_none_or(|m| m > NEWEST_MAJOR) {
            let loc = Loc { name, text: Some(text), line: line_of(text, v.span().start) };
            let (src, _) = loc.source();
            return Err(PinError::UnsupportedVersion {
                at: loc.at(),
                what: format!("poetry.lock lock-version {}", v.get_ref()),
                help: format!(
                    "this memorix reads poetry.lock lock-versions 1.x and {NEWEST_MAJOR}.x; upgrade memorix, or lock with an older poetry"
                ),
                src,
                span: Some(v.span().into()),
            }
            .into());
        }
    }
    Ok(lock
        .package
        .iter()
        .map(|p| Pin {
            name: p.name.get_ref().clone(),
            version: p.version.clone(),
            markers: match &p.markers {
                Some(Markers::One(m)) => Some(m.clone()),
                Some(Markers::PerGroup(groups)) => any_of(groups.values()),
                None => p.marker.clone(),
            },
            file: path.to_path_buf(),
            line: line_of(text, p.name.span().start),
            direct: false,
            source: p.source.as_ref().map(|s| match &s.url {
                Some(url) => format!("{}+{url}", s.kind),
                None => s.kind.clone(),
            }),
        })
        .collect())
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
