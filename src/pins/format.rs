//! Which pin format a file is: by its name when the name is one a tool writes, else by its
//! content, so `[pins] files` may list a lockfile under any name (`locks/web.yaml`).

use std::path::Path;

use super::Ecosystem;

/// The formats memorix reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Cargo,
    Uv,
    Poetry,
    Npm,
    Pnpm,
    Yarn,
    Requirements,
    Pipfile,
    Pylock,
    Pdm,
    Pyproject,
    Conda,
    GoMod,
    Composer,
    Gemfile,
}

/// Every format with the file names that tell it, for the "unknown format" help.
pub(crate) const KNOWN: &str = "Cargo.lock; uv.lock (or a script's <name>.py.lock); poetry.lock; \
Pipfile.lock; pylock.toml; pdm.lock; pyproject.toml (exact == pins); pip requirements files \
(*.txt, *.in, rye's requirements.lock); conda environment files (environment.yml); \
package-lock.json / npm-shrinkwrap.json; pnpm-lock.yaml; yarn.lock; go.mod (with go.sum); \
composer.lock; Gemfile.lock";

impl Format {
    pub(crate) fn ecosystem(self) -> Ecosystem {
        match self {
            Format::Cargo => Ecosystem::Cargo,
            Format::Npm | Format::Pnpm | Format::Yarn => Ecosystem::Npm,
            Format::GoMod => Ecosystem::Go,
            Format::Composer => Ecosystem::Composer,
            Format::Gemfile => Ecosystem::RubyGems,
            Format::Uv
            | Format::Poetry
            | Format::Requirements
            | Format::Pipfile
            | Format::Pylock
            | Format::Pdm
            | Format::Pyproject
            | Format::Conda => Ecosystem::Python,
        }
    }

    /// Whether the format says which packages the project depends on directly; when it does
    /// not, several versions of one library are settled only by markers or the mount.
    pub(crate) fn records_direct(self) -> bool {
        !matches!(self, Format::Poetry | Format::Pdm | Format::Pylock | Format::Pipfile | Format::Composer)
    }
}

/// The format of `path`, from its name, else from `text`.
pub(crate) fn detect(path: &Path, text: &str) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    by_name(name).or_else(|| by_content(text))
}

/// The format of the file named `name`, when the name alone tells.
pub(crate) fn by_name(name: &str) -> Option<Format> {
    // `Cargo.lock.v3` and the like are Cargo.lock files kept side by side (as in the rustsec cargo-lock tests).
    if name == "Cargo.lock" || name.starts_with("Cargo.lock.") {
        return Some(Format::Cargo);
    }
    // uv writes a PEP 723 script's lock next to it as `<script>.py.lock`.
    if name == "uv.lock" || name.ends_with(".py.lock") {
        return Some(Format::Uv);
    }
    // PEP 751: `pylock.toml`, or `pylock.<name>.toml`.
    if name == "pylock.toml" || (name.starts_with("pylock.") && name.ends_with(".toml")) {
        return Some(Format::Pylock);
    }
    let format = match name {
        "poetry.lock" => Format::Poetry,
        "package-lock.json" | "npm-shrinkwrap.json" => Format::Npm,
        "pnpm-lock.yaml" => Format::Pnpm,
        "yarn.lock" => Format::Yarn,
        "Pipfile.lock" => Format::Pipfile,
        "pdm.lock" => Format::Pdm,
        "pyproject.toml" => Format::Pyproject,
        "go.mod" => Format::GoMod,
        "composer.lock" => Format::Composer,
        "Gemfile.lock" | "gems.locked" => Format::Gemfile,
        "environment.yml" | "environment.yaml" => Format::Conda,
        // rye writes requirements syntax under these names.
        "requirements.lock" | "requirements-dev.lock" => Format::Requirements,
        _ if name.ends_with(".txt") || name.ends_with(".in") => Format::Requirements,
        _ => return None,
    };
    Some(format)
}

/// The format `text` is written in, from the marks each tool leaves in its files.
pub(crate) fn by_content(text: &str) -> Option<Format> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let has = |line: &str| lines.contains(&line);
    let starts = |prefix: &str| lines.iter().any(|l| l.starts_with(prefix));
    let body = text.trim_start();
    if body.starts_with('{') {
        return if text.contains("\"lockfileVersion\"") {
            Some(Format::Npm)
        } else if text.contains("\"_meta\"") && text.contains("\"default\"") {
            Some(Format::Pipfile)
        } else if text.contains("\"content-hash\"") || text.contains("\"packages-dev\"") {
            Some(Format::Composer)
        } else {
            None
        };
    }
    if starts("# yarn lockfile v1") || has("__metadata:") {
        Some(Format::Yarn)
    } else if starts("lockfileVersion:") {
        Some(Format::Pnpm)
    } else if starts("module ") && (starts("go ") || starts("require")) {
        Some(Format::GoMod)
    } else if has("DEPENDENCIES") && (has("GEM") || has("PATH") || has("GIT")) {
        Some(Format::Gemfile)
    } else if has("[[packages]]") && starts("lock-version") {
        Some(Format::Pylock)
    } else if has("[[package]]") {
        toml_lock(text, &starts)
    } else if has("[project]") {
        Some(Format::Pyproject)
    } else if starts("dependencies:") && (starts("channels:") || starts("name:")) {
        Some(Format::Conda)
    } else if lines.iter().any(|l| is_requirement_pin(l)) {
        Some(Format::Requirements)
    } else {
        None
    }
}

/// Which TOML lockfile with `[[package]]` tables `text` is.
fn toml_lock(text: &str, starts: &dyn Fn(&str) -> bool) -> Option<Format> {
    if starts("lock_version") || text.contains("[metadata]\ngroups") {
        Some(Format::Pdm)
    } else if starts("lock-version") || starts("content-hash") {
        Some(Format::Poetry)
    } else if starts("source = {") || starts("requires-python") {
        Some(Format::Uv)
    } else if starts("checksum = ") || text.contains("@generated by Cargo") || starts("version = ") {
        Some(Format::Cargo)
    } else {
        None
    }
}

/// `name==version` at the start of a line, as pip freeze and pip-compile write it.
fn is_requirement_pin(line: &str) -> bool {
    let name_end = line.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')));
    let Some(end) = name_end.filter(|&e| e > 0) else { return false };
    let rest = line[end..].trim_start();
    let rest = match rest.strip_prefix('[') {
        Some(extras) => extras.split_once(']').map_or("", |(_, r)| r.trim_start()),
        None => rest,
    };
    rest.strip_prefix("==").is_some_and(|v| v.trim_start().starts_with(|c: char| c.is_ascii_digit()))
}
