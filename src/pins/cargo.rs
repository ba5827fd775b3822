//! `Cargo.lock`, formats v1 to v4, read with the `cargo-lock` crate.

use std::collections::HashSet;
use std::path::Path;
use std::str::FromStr;

use serde::Deserialize;
use toml::Spanned;

use super::Pin;
use super::error::Result;
use super::error::{Loc, PinError, line_of, syntax};

const HELP: &str = "Cargo.lock is generated: run `cargo generate-lockfile` to write it again";

/// The newest Cargo.lock format `cargo-lock` reads.
const NEWEST: i64 = 4;

/// Just enough of the file to know where each package is declared.
#[derive(Deserialize)]
struct Located {
    version: Option<Spanned<i64>>,
    #[serde(default)]
    package: Vec<Named>,
    root: Option<Named>,
}

#[derive(Deserialize)]
struct Named {
    name: Spanned<String>,
}

pub(super) fn parse(text: &str, name: &str, path: &Path) -> Result<Vec<Pin>> {
    let located: Located =
        toml::from_str(text).map_err(|e| syntax(name, text, e.span(), "Cargo.lock", e.message(), HELP))?;
    if let Some(v) = &located.version
        && *v.get_ref() > NEWEST
    {
        let loc = Loc { name, text: Some(text), line: line_of(text, v.span().start) };
        let (src, _) = loc.source();
        return Err(PinError::UnsupportedVersion {
            at: loc.at(),
            what: format!("Cargo.lock format version {}", v.get_ref()),
            help: format!("this memorix reads Cargo.lock versions 1 to {NEWEST}; upgrade memorix"),
            src,
            span: Some(v.span().into()),
        }
        .into());
    }
    let lock = cargo_lock::Lockfile::from_str(text)
        .map_err(|e| syntax(name, text, None, "Cargo.lock", &e.to_string(), HELP))?;

    // Workspace members (and path dependencies) have no source; what they depend on is direct.
    let roots = lock.packages.iter().filter(|p| p.source.is_none()).chain(&lock.root);
    let direct: HashSet<(&str, &semver::Version)> =
        roots.flat_map(|p| &p.dependencies).map(|d| (d.name.as_str(), &d.version)).collect();

    let declared = located.package.iter().map(Some).chain(std::iter::repeat(None));
    let packages = lock.packages.iter().zip(declared).chain(lock.root.iter().zip([located.root.as_ref()]));
    Ok(packages
        .map(|(p, at)| Pin {
            name: p.name.to_string(),
            version: p.version.to_string(),
            markers: None,
            file: path.to_path_buf(),
            line: at
                .filter(|n| n.name.get_ref() == p.name.as_str())
                .map_or(0, |n| line_of(text, n.name.span().start)),
            direct: direct.contains(&(p.name.as_str(), &p.version)),
            source: p.source.as_ref().map(|s| s.to_string()),
        })
        .collect())
}
