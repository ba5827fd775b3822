//! `Cargo.lock`, formats v1 to v4, read with the `cargo-lock` crate.

use std::collections::HashSet;
use std::str::FromStr;

use serde::Deserialize;
use toml::Spanned;

use super::error::Result;
use super::error::{from_toml, line_of, syntax, unsupported};
use super::{Pin, PinFile, PinnedArtifact};

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

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let located: Located = from_toml(text, name, "Cargo.lock", HELP)?;
    if let Some(v) = &located.version
        && *v.get_ref() > NEWEST
    {
        let what = format!("Cargo.lock format version {}", v.get_ref());
        let help = format!("this memorix reads Cargo.lock versions 1 to {NEWEST}; upgrade memorix");
        return Err(unsupported(name, text, v.span(), what, help).into());
    }
    let lock = cargo_lock::Lockfile::from_str(text)
        .map_err(|e| syntax(name, text, None, "Cargo.lock", &e.to_string(), HELP))?;

    // Workspace members (and path dependencies) have no source; what they depend on is direct.
    let roots = lock.packages.iter().filter(|p| p.source.is_none()).chain(&lock.root);
    let direct: HashSet<(&str, &semver::Version)> =
        roots.flat_map(|p| &p.dependencies).map(|d| (d.name.as_str(), &d.version)).collect();

    let declared = located.package.iter().map(Some).chain(std::iter::repeat(None));
    let packages = lock.packages.iter().zip(declared).chain(lock.root.iter().zip([located.root.as_ref()]));
    for (p, at) in packages {
        let line = at
            .filter(|n| n.name.get_ref() == p.name.as_str())
            .map_or(0, |n| line_of(text, n.name.span().start));
        let mut pin = Pin::new(p.name.as_str(), &p.version.to_string(), &file.path, line);
        pin.direct = direct.contains(&(p.name.as_str(), &p.version));
        pin.source = p.source.as_ref().map(|s| s.to_string());
        // The checksum is the sha256 of the `.crate` the registry serves.
        pin.artifacts = p
            .checksum
            .iter()
            .map(|c| PinnedArtifact {
                file: Some(format!("{}-{}.crate", p.name, p.version)),
                url: None,
                hash: Some(format!("sha256:{c}")),
            })
            .collect();
        file.pins.push(pin);
    }
    Ok(())
}
