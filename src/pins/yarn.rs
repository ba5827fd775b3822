//! `yarn.lock`: classic (v1) and berry (yarn 2+, with `__metadata`), read with the
//! `yarn-lock-parser` crate (npm ecosystem).
//!
//! Berry lists the workspaces themselves (`resolution: "app@workspace:."`): they are the
//! roots, and what they depend on is direct. A `patch:` entry is the same release as the
//! `npm:` one it patches. Classic files do not say what the project depends on directly.
//!
//! Hashes: classic `integrity` is the SRI hash of the registry tarball and is recorded with
//! `resolved`; berry's `checksum` hashes yarn's own cache zip, not any registry artifact, so
//! a berry pin records no artifact.

use std::collections::HashSet;

use super::error::{Result, syntax};
use super::text::Lines;
use super::{Pin, PinFile, PinnedArtifact, url_file_name};

const HELP: &str = "yarn.lock is generated: run `yarn install` to write it again";

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    // A project without dependencies has a lockfile of comments, or none at all.
    if text.lines().all(|l| l.trim().is_empty() || l.starts_with('#')) {
        return Ok(());
    }
    let lock = yarn_lock_parser::parse_str(text).map_err(|e| {
        let yarn_lock_parser::YarnLockError::Parser { source } = e;
        let mut rest = None;
        let _ = source.map(|error| {
            rest = error.errors.first().map(|(input, _)| input.len());
            error
        });
        let at = rest.map(|len| text.len().saturating_sub(len));
        syntax(name, text, at.map(|a| a..a), "yarn.lock", "not a yarn.lock entry", HELP)
    })?;
    let berry = lock.version > 1;
    file.records_direct = berry;
    let workspace = |e: &yarn_lock_parser::Entry| e.resolved.contains("@workspace:");
    let direct: HashSet<(&str, &str)> = lock
        .entries
        .iter()
        .filter(|e| workspace(e))
        .flat_map(|e| e.dependencies.iter().chain(&e.optional_dependencies))
        .map(|(dep, range)| (*dep, npm_range(range.trim_matches('"'))))
        .collect();
    let lines = Lines::new(text);
    for entry in lock.entries.iter().filter(|e| !workspace(e) && is_release(e.version)) {
        let mut pin =
            Pin::new(entry.name, entry.version, &file.path, line_of_slice(text, &lines, entry.name));
        // A descriptor is `name@npm:^1.2.0` (berry) or `name@^1.2.0` (classic).
        pin.direct = entry.descriptors.iter().any(|(dep, range)| direct.contains(&(*dep, patched(range))));
        pin.source = protocol(entry.resolved).map(str::to_string);
        if !berry {
            pin.artifacts = classic_artifact(entry).into_iter().collect();
        }
        file.pins.push(pin);
    }
    Ok(())
}

/// `npm:^1.2.0` -> `^1.2.0`: berry writes the registry protocol, classic does not.
fn npm_range(range: &str) -> &str {
    range.strip_prefix("npm:").unwrap_or(range)
}

/// The range a descriptor asks for; a `patch:` descriptor asks for the range it patches
/// (`patch:typescript@npm%3A^5.7.2#optional!builtin<compat/typescript>` -> `^5.7.2`).
fn patched(range: &str) -> &str {
    let Some(inner) = range.strip_prefix("patch:") else { return npm_range(range) };
    let inner = inner.split('#').next().unwrap_or(inner);
    let range = inner.get(1..).and_then(|i| i.find('@')).map_or(inner, |at| &inner[at + 2..]);
    range.strip_prefix("npm%3A").unwrap_or(npm_range(range))
}

/// The 1-based line of `slice`, which the parser cut out of `text`.
fn line_of_slice(text: &str, lines: &Lines, slice: &str) -> usize {
    let offset = (slice.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    if offset > text.len() { 0 } else { lines.of(offset) }
}

/// A berry resolution's protocol when it is not the registry's (`patch`, `git`, ...).
fn protocol(resolution: &str) -> Option<&str> {
    let at = resolution.get(1..)?.find('@')? + 1;
    let protocol = resolution[at + 1..].split(':').next()?;
    let known = resolution[at + 1..].contains(':') && protocol != "npm";
    known.then_some(protocol)
}

/// A release version, not a workspace's `0.0.0-use.local` or a link.
fn is_release(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_digit()) && version != "0.0.0-use.local"
}

/// Classic `resolved "https://.../pkg-1.0.0.tgz#<sha1>"` and `integrity sha512-...`.
fn classic_artifact(entry: &yarn_lock_parser::Entry) -> Option<PinnedArtifact> {
    let url = (!entry.resolved.is_empty()).then(|| entry.resolved.to_string());
    let sha1 = entry.resolved.rsplit_once('#').map(|(_, h)| h).filter(|h| h.len() == 40);
    let hash = match entry.integrity {
        "" => sha1.map(|h| format!("sha1:{h}")),
        sri => Some(sri.to_string()),
    };
    if url.is_none() && hash.is_none() {
        return None;
    }
    Some(PinnedArtifact { file: url.as_deref().and_then(url_file_name), url, hash })
}
