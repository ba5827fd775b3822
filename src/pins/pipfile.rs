//! `Pipfile.lock` (pipenv): the `default` and `develop` sections, each package with its
//! `==` version, markers and `hashes`. The file does not say which packages the Pipfile
//! names, so a package pinned differently in the two sections is settled by the mount.

use serde_json::Value;

use super::error::Result;
use super::json::{self, str_at};
use super::{Pin, PinFile, PinnedArtifact};

const HELP: &str = "Pipfile.lock is generated: run `pipenv lock` to write it again";

/// The sections that pin packages; custom categories (pipenv 2023+) are read too.
const NOT_SECTIONS: [&str; 1] = ["_meta"];

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let root = json::object(text, name, "Pipfile.lock", HELP)?;
    let lines = json::object_lines(text);
    for (section, packages) in root.iter().filter(|(k, _)| !NOT_SECTIONS.contains(&k.as_str())) {
        let Some(packages) = packages.as_object() else { continue };
        for (package, entry) in packages {
            let line = lines.get(&[section.as_str(), package.as_str()][..]).copied().unwrap_or(0);
            let mut pin = Pin::new(package, "", &file.path, line);
            pin.markers = str_at(entry, "markers").map(str::to_string);
            pin.source = Some(section.clone());
            let written = str_at(entry, "version").unwrap_or("");
            match written.strip_prefix("===").or_else(|| written.strip_prefix("==")) {
                Some(version) => {
                    pin.version = version.trim().to_string();
                    pin.artifacts = hashes(entry);
                    file.pins.push(pin);
                }
                // A VCS, path or URL entry names no release.
                None => {
                    pin.version = ["git", "path", "file"]
                        .iter()
                        .find_map(|k| str_at(entry, k).map(|v| format!("@ {v}")))
                        .unwrap_or_else(|| written.to_string());
                    file.unpinned.push(pin);
                }
            }
        }
    }
    Ok(())
}

/// `"hashes": ["sha256:..."]`: pip accepts an artifact matching any of them.
fn hashes(entry: &Value) -> Vec<PinnedArtifact> {
    let list = entry.get("hashes").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    list.iter().filter_map(Value::as_str).map(PinnedArtifact::hashed).collect()
}
