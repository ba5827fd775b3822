//! Version pins: a project's lockfiles and requirements files, and the one version of a
//! requested library they pin (DESIGN.md §9).
//!
//! Parsing is lenient where the format is hand-written (requirements files: an odd line is
//! skipped, so only the requested library has to make sense) and strict where it is generated
//! (a broken TOML or JSON lockfile is an error). Markers are never evaluated against the
//! host: only against the target a project declares, so every machine resolves alike.

mod cargo;
mod error;
mod markers;
mod npm;
mod poetry;
mod requirements;
mod uv;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use error::{Loc, read_error};
pub use error::{PinError, PinSite, Result};
use markers::Target;

/// The package ecosystem of a pin file: names normalise and versions compare per ecosystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Cargo,
    Python,
    Npm,
}

/// One pinned package as a file declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// As written in the file.
    pub name: String,
    /// As written, e.g. "2.0.1+cu117".
    pub version: String,
    /// PEP 508 marker expression (requirements files; uv/poetry if present).
    pub markers: Option<String>,
    /// The file that declares it (an included requirements file, say).
    pub file: PathBuf,
    /// 1-based line of the declaration (best effort for TOML/JSON; 0 if unknown).
    pub line: usize,
    /// Depended on directly by a root/workspace package (Cargo, uv, npm); true for requirements.
    pub direct: bool,
    /// Cargo/uv/poetry source (registry URL, git URL); same version from two sources is ONE version.
    pub source: Option<String>,
}

/// A parsed pin file.
#[derive(Clone, Debug)]
pub struct PinFile {
    /// As given to [`parse_file`].
    pub path: PathBuf,
    pub ecosystem: Ecosystem,
    pub pins: Vec<Pin>,
    /// Requirements lines that name a package with only a range (`httpx>=0.23`), not `==`;
    /// `version` holds the specifier text, e.g. ">=0.23" (empty for a bare name, `@ URL` for
    /// a URL).
    pub unpinned: Vec<Pin>,
}

/// Parses one pin file; the format is chosen by file name: `Cargo.lock`; `uv.lock`;
/// `poetry.lock`; `package-lock.json` / `npm-shrinkwrap.json`; any other `*.txt` / `*.in`
/// is a pip requirements file.
pub fn parse_file(path: &Path) -> Result<PinFile> {
    parse_named(path, &path.display().to_string())
}

/// The formats memorix reads, by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Cargo,
    Uv,
    Poetry,
    Npm,
    Requirements,
}

fn format_of(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_str()?;
    // `Cargo.lock.v3` and the like are Cargo.lock files kept side by side (cargo-lock's tests).
    if name == "Cargo.lock" || name.starts_with("Cargo.lock.") {
        return Some(Format::Cargo);
    }
    // uv writes a PEP 723 script's lock next to it as `<script>.py.lock`.
    if name == "uv.lock" || name.ends_with(".py.lock") {
        return Some(Format::Uv);
    }
    match name {
        "poetry.lock" => Some(Format::Poetry),
        "package-lock.json" | "npm-shrinkwrap.json" => Some(Format::Npm),
        _ if name.ends_with(".txt") || name.ends_with(".in") => Some(Format::Requirements),
        _ => None,
    }
}

/// [`parse_file`], with `name` for the file in messages (the project-relative path).
fn parse_named(path: &Path, name: &str) -> Result<PinFile> {
    let format = format_of(path).ok_or_else(|| PinError::UnknownFormat { path: name.to_string() })?;
    type Parser = fn(&str, &str, &Path) -> Result<Vec<Pin>>;
    let (ecosystem, parse): (Ecosystem, Parser) = match format {
        // Requirements files include others, so they read their own files.
        Format::Requirements => return requirements::parse(path, name),
        Format::Cargo => (Ecosystem::Cargo, cargo::parse),
        Format::Uv => (Ecosystem::Python, uv::parse),
        Format::Poetry => (Ecosystem::Python, poetry::parse),
        Format::Npm => (Ecosystem::Npm, npm::parse),
    };
    let text = std::fs::read_to_string(path).map_err(read_error(name))?;
    let pins = parse(&text, name, path)?;
    Ok(PinFile { path: path.to_path_buf(), ecosystem, pins, unpinned: Vec::new() })
}

/// PEP 503 for Python (lowercase, runs of `-_.` -> `-`); Cargo: lowercase, `_` -> `-`; npm: as is.
pub fn normalize(eco: Ecosystem, name: &str) -> String {
    match eco {
        Ecosystem::Python => pep508_rs::PackageName::new(name.to_string())
            .map(|n| n.to_string())
            // Not a valid distribution name: it can match nothing that is, so keep it as is.
            .unwrap_or_else(|_| name.to_string()),
        Ecosystem::Cargo => name.to_lowercase().replace('_', "-"),
        Ecosystem::Npm => name.to_string(),
    }
}

/// `version` without a local version label / build metadata (`2.0.1+cu117` -> `2.0.1`):
/// docs are published per release, not per build.
pub fn docs_version(eco: Ecosystem, version: &str) -> String {
    let has_local = match eco {
        Ecosystem::Python => version.parse::<pep440_rs::Version>().is_ok_and(|v| v.is_local()),
        Ecosystem::Cargo | Ecosystem::Npm => {
            semver::Version::parse(version).is_ok_and(|v| !v.build.is_empty())
        }
    };
    match version.split_once('+') {
        Some((release, _)) if has_local => release.to_string(),
        _ => version.to_string(),
    }
}

/// The version one library is pinned to, and where.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ResolvedPin {
    /// Normalized name.
    pub library: String,
    pub ecosystem: Ecosystem,
    /// The pin file as listed in [pins].files (project-relative, e.g. "requirements.txt").
    pub file: String,
    /// As pinned, e.g. "2.0.1+cu117".
    pub version: String,
    /// Local version label stripped ("2.0.1"); equal to `version` otherwise.
    pub docs_version: String,
}

/// All of a project's pin files, parsed.
#[derive(Debug)]
pub struct Pins {
    project_dir: PathBuf,
    /// Each file as listed in `[pins] files`, parsed.
    files: Vec<(String, PinFile)>,
    target: Target,
}

impl Pins {
    /// `project_dir` joined with each of `files` (as listed in memorix.toml `[pins] files`);
    /// `markers` is `[pins] markers` (target environment, e.g. sys_platform = "linux").
    pub fn load(project_dir: &Path, files: &[String], markers: &BTreeMap<String, String>) -> Result<Pins> {
        let target = Target::new(markers)?;
        let mut parsed = Vec::with_capacity(files.len());
        for listed in files {
            let file = parse_named(&project_dir.join(listed), listed)?;
            parsed.push((listed.clone(), file));
        }
        Ok(Pins { project_dir: project_dir.to_path_buf(), files: parsed, target })
    }

    /// The single version `library` is pinned to. `version` is a mount's explicit
    /// `version = "..."`, which chooses among several candidate versions.
    pub fn resolve(&self, library: &str, version: Option<&str>) -> Result<ResolvedPin> {
        let mut found: Vec<(&str, Ecosystem, &Pin)> = Vec::new();
        let mut only_range: Option<(&str, &Pin)> = None;
        let mut excluded: Vec<&Pin> = Vec::new();
        for (listed, file) in &self.files {
            let eco = file.ecosystem;
            let key = normalize(eco, library);
            let matches = |p: &&Pin| normalize(eco, &p.name) == key;
            let candidates: Vec<&Pin> = file.pins.iter().filter(matches).collect();
            if candidates.is_empty() {
                if only_range.is_none() {
                    only_range = file.unpinned.iter().find(matches).map(|p| (listed.as_str(), p));
                }
                continue;
            }
            let mut kept = Vec::with_capacity(candidates.len());
            for pin in candidates {
                if self.target.admits(pin, &self.site(pin), library)? {
                    kept.push(pin);
                } else {
                    excluded.push(pin);
                }
            }
            if !kept.is_empty() {
                let records_direct = format_of(&file.path) != Some(Format::Poetry);
                let chosen = self.choose(library, listed, eco, records_direct, &kept, version)?;
                found.push((listed, eco, chosen));
            }
        }

        let Some(&(file, eco, pin)) = found.first() else {
            if !excluded.is_empty() {
                return Err(PinError::ExcludedByMarkers {
                    library: library.to_string(),
                    listing: self.listing(&excluded),
                    sites: self.sites(&excluded),
                }
                .into());
            }
            if let Some((listed, p)) = only_range {
                let site = self.site(p);
                let (src, span) = site.source();
                let what = if p.version.is_empty() {
                    "named without a version".to_string()
                } else {
                    format!("only `{}`", p.version)
                };
                return Err(PinError::OnlyRange {
                    at: site.at(),
                    library: library.to_string(),
                    file: listed.to_string(),
                    what,
                    src,
                    span,
                }
                .into());
            }
            let searched = self.files.iter().map(|(l, _)| l.as_str()).collect::<Vec<_>>().join(", ");
            return Err(PinError::NotPinned {
                library: library.to_string(),
                searched: if searched.is_empty() { "no [pins] files are listed".into() } else { searched },
            }
            .into());
        };

        let docs = docs_version(eco, &pin.version);
        if found.iter().any(|(_, e, p)| docs_version(*e, &p.version) != docs) {
            let pins: Vec<&Pin> = found.iter().map(|(_, _, p)| *p).collect();
            return Err(PinError::Disagree {
                library: library.to_string(),
                listing: self.listing(&pins),
                sites: self.sites(&pins),
            }
            .into());
        }
        Ok(ResolvedPin {
            library: normalize(eco, library),
            ecosystem: eco,
            file: file.to_string(),
            version: pin.version.clone(),
            docs_version: docs,
        })
    }

    /// The one pin among `candidates` (one file's pins of `library`, admitted by the target);
    /// `records_direct` is whether the file says what the project depends on directly.
    fn choose<'p>(
        &self,
        library: &str,
        listed: &str,
        eco: Ecosystem,
        records_direct: bool,
        candidates: &[&'p Pin],
        version: Option<&str>,
    ) -> Result<&'p Pin> {
        let mut pool: Vec<&Pin> = candidates.to_vec();
        if let Some(wanted) = version {
            let exact: Vec<&Pin> = pool.iter().copied().filter(|p| p.version == wanted).collect();
            pool = if exact.is_empty() {
                pool.into_iter().filter(|p| docs_version(eco, &p.version) == wanted).collect()
            } else {
                exact
            };
            if pool.is_empty() {
                let distinct = distinct_versions(candidates);
                return Err(PinError::NotACandidate {
                    library: library.to_string(),
                    version: wanted.to_string(),
                    choices: distinct.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", "),
                    listing: self.listing(candidates),
                    sites: self.sites(candidates),
                }
                .into());
            }
        }
        if distinct_versions(&pool).len() == 1 {
            return Ok(pool[0]);
        }
        // Several versions: the one a root package depends on directly is the one its code uses.
        let direct: Vec<&Pin> = pool.iter().copied().filter(|p| p.direct).collect();
        let why = match distinct_versions(&direct).len() {
            1 => return Ok(direct[0]),
            0 if records_direct => "none of which the project depends on directly".to_string(),
            0 => format!("and {listed} does not record which one the project depends on"),
            _ => {
                pool = direct;
                "several of which the project depends on directly".to_string()
            }
        };
        if self.target.is_empty() && markers::differ(&pool) {
            let (variable, value) = markers::settling_assignment(&pool);
            return Err(PinError::MarkersNeeded {
                library: library.to_string(),
                listing: self.listing(&pool),
                variable,
                value,
                sites: self.sites(&pool),
            }
            .into());
        }
        Err(PinError::Ambiguous {
            library: library.to_string(),
            file: listed.to_string(),
            why,
            first: pool[0].version.clone(),
            listing: self.listing(&pool),
            sites: self.sites(&pool),
        }
        .into())
    }

    /// A pin's file, named for messages: project-relative when it is inside the project.
    fn site<'p>(&self, pin: &'p Pin) -> Site<'p> {
        let name = pin.file.strip_prefix(&self.project_dir).unwrap_or(&pin.file).display().to_string();
        Site { name, pin }
    }

    /// One line per pin: `file:line: name version [; markers]`.
    fn listing(&self, pins: &[&Pin]) -> String {
        pins.iter()
            .map(|p| format!("  {}: {}", self.site(p).at(), describe(p)))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn sites(&self, pins: &[&Pin]) -> Vec<PinSite> {
        pins.iter()
            .map(|p| {
                let site = self.site(p);
                let (src, span) = site.source();
                PinSite { at: site.at(), what: describe(p), src, span }
            })
            .collect()
    }
}

/// `name version`, with the source and markers when there are any.
fn describe(p: &Pin) -> String {
    let mut s = format!("{} {}", p.name, p.version);
    if let Some(src) = &p.source {
        s.push_str(&format!(" ({src})"));
    }
    if let Some(m) = &p.markers {
        s.push_str(&format!("; {m}"));
    }
    s
}

/// The distinct version strings among `pins`, in file order.
fn distinct_versions<'p>(pins: &[&'p Pin]) -> Vec<&'p str> {
    let mut out: Vec<&str> = Vec::new();
    for p in pins {
        if !out.contains(&p.version.as_str()) {
            out.push(&p.version);
        }
    }
    out
}

/// A pin with its file's display name, for building errors that point at it.
pub(crate) struct Site<'p> {
    name: String,
    pin: &'p Pin,
}

impl Site<'_> {
    /// `file:line` of the pin.
    pub(crate) fn at(&self) -> String {
        Loc { name: &self.name, text: None, line: self.pin.line }.at()
    }

    /// The pin's line for miette. Errors are rare, so the file is read again only to show it.
    pub(crate) fn source(&self) -> (Option<miette::NamedSource<String>>, Option<miette::SourceSpan>) {
        let text = std::fs::read_to_string(&self.pin.file).ok();
        Loc { name: &self.name, text: text.as_deref(), line: self.pin.line }.source()
    }
}

#[cfg(test)]
mod tests;
