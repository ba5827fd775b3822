//! `composer.lock` (Composer ecosystem): `packages` and `packages-dev`, each with its version
//! (a `v` prefix dropped: `v1.2.3` is release 1.2.3) and `dist` (`url`, `shasum`).

use serde_json::Value;

use super::error::Result;
use super::json::{self, str_at};
use super::{Pin, PinFile, PinnedArtifact};

const HELP: &str = "composer.lock is generated: run `composer update --lock` to write it again";

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let root = json::object(text, name, "composer.lock", HELP)?;
    let lines: Vec<&str> = text.lines().collect();
    for section in ["packages", "packages-dev"] {
        let Some(packages) = root.get(section).and_then(Value::as_array) else { continue };
        let items = json::array_item_lines(text, section);
        for (i, package) in packages.iter().enumerate() {
            let (Some(package_name), Some(version)) = (str_at(package, "name"), str_at(package, "version"))
            else {
                continue;
            };
            // The `"name"` line of the item, which composer writes first.
            let line = items.get(i).map_or(0, |&start| {
                let name_line =
                    lines.iter().skip(start).take(4).position(|l| l.trim_start().starts_with("\"name\""));
                name_line.map_or(start, |n| start + n + 1)
            });
            let version = version
                .strip_prefix(['v', 'V'])
                .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                .unwrap_or(version);
            let mut pin = Pin::new(package_name, version, &file.path, line);
            pin.source = Some(section.to_string());
            pin.artifacts = dist(package).into_iter().collect();
            file.pins.push(pin);
        }
    }
    Ok(())
}

/// `"dist": {"url": "...", "shasum": "<sha1 hex>"}` (the shasum is often empty). The URL is
/// usually an API zipball (`.../zipball/<ref>`), which names no file.
fn dist(package: &Value) -> Option<PinnedArtifact> {
    let dist = package.get("dist")?;
    let url = str_at(dist, "url").map(str::to_string);
    let hash = str_at(dist, "shasum").filter(|s| !s.is_empty()).map(|s| format!("sha1:{s}"));
    Some(PinnedArtifact { file: None, url, hash })
}
