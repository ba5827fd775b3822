//! Version pins: a project's lockfiles and requirements files, and the one version of a
//! requested library they pin (book: design/versions.md#which-pin-a-mount-follows).
//!
//! One module per format (Cargo, Python, npm, Go, Composer and RubyGems lockfiles; see
//! `format.rs`); each fills a [`PinFile`] with its pins, their roots and the artifact hashes
//! it records. Parsing is lenient where the format is hand-written (requirements files,
//! pyproject.toml, environment files: an odd line is skipped, so only the requested library
//! has to make sense) and strict where it is generated (a broken lockfile is an error).
//! Markers are never evaluated against the host: only against the target a project declares,
//! so every machine resolves alike.

mod beside;
mod cargo;
mod composer;
mod conda;
mod error;
mod format;
mod gemfile;
mod gomod;
mod json;
mod markers;
mod npm;
mod pdm;
mod pipfile;
mod pnpm;
mod poetry;
mod pylock;
mod pyproject;
mod requirements;
mod text;
mod uv;
mod yaml;
mod yarn;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use error::Loc;
pub use error::{PinError, PinSite, Result};
use format::Format;
use markers::Target;

pub use crate::model::package::{self as name, Ecosystem};

/// What a pin file records about one release artifact of a pin, for fetching and verifying it
/// (book: design/fetching.md#verification). Any part may be missing: a requirements `--hash`
/// names no file.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PinnedArtifact {
    /// The artifact's file name, e.g. `httpx-0.28.1-py3-none-any.whl`.
    pub file: Option<String>,
    /// Where the pin file says it is downloaded from.
    pub url: Option<String>,
    /// In the source's own notation: `sha256:<hex>`, SRI `sha512-<base64>`, go.sum `h1:<base64>`.
    pub hash: Option<String>,
}

impl PinnedArtifact {
    /// An artifact known only by its hash (a requirements `--hash`, a go.sum line).
    pub fn hashed(hash: &str) -> PinnedArtifact {
        PinnedArtifact { file: None, url: None, hash: Some(hash.to_string()) }
    }
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
    /// Depended on directly by a root: a workspace member or the project itself.
    pub direct: bool,
    /// Where the roots' code finds it without declaring it (npm's hoisted copy at the top of
    /// node_modules): of several versions, the one an import resolves to.
    pub visible: bool,
    /// Where it comes from (registry URL, git URL); same version from two sources is ONE version.
    pub source: Option<String>,
    /// The release artifacts the file records for it, with their hashes.
    pub artifacts: Vec<PinnedArtifact>,
    /// The package the registry knows it by, when `name` is an alias of it
    /// (`"string-width-cjs": "npm:string-width@4.2.3"`): fetched as this, mounted as `name`.
    pub package: Option<String>,
    /// The roots that depend on it directly, by folder relative to the pin file's ("" for the
    /// project itself, `packages/app` for a workspace member), when the file says.
    pub members: Vec<String>,
}

impl Pin {
    /// A pin declared at `line` of `file`, not known to be direct, without markers or source.
    pub fn new(name: &str, version: &str, file: &Path, line: usize) -> Pin {
        Pin {
            name: name.to_string(),
            version: version.to_string(),
            markers: None,
            file: file.to_path_buf(),
            line,
            direct: false,
            visible: false,
            source: None,
            artifacts: Vec::new(),
            package: None,
            members: Vec::new(),
        }
    }

    /// The name the registry serves it under.
    pub fn package(&self) -> &str {
        self.package.as_deref().unwrap_or(&self.name)
    }
}

/// A parsed pin file.
#[derive(Clone, Debug)]
pub struct PinFile {
    /// As given to [`parse_file`].
    pub path: PathBuf,
    pub ecosystem: Ecosystem,
    pub pins: Vec<Pin>,
    /// Packages named with only a range (`httpx>=0.23`), not `==`; `version` holds the
    /// specifier text, e.g. ">=0.23" (empty for a bare name, `@ URL` for a URL or VCS line).
    pub unpinned: Vec<Pin>,
    /// Packages the file lists without any version: workspace members with a dynamic version.
    pub unversioned: Vec<Pin>,
    /// Files read through this one (`-r`/`-c` includes, go.sum), as shown in messages.
    pub includes: Vec<String>,
    /// Pins left out because a name is not one of the ecosystem's (a path, a query string):
    /// each with why, for `add --deps` to list.
    pub refused: Vec<(Pin, String)>,
    /// Whether the file says which packages the roots depend on directly; when it does not,
    /// several versions of one library are settled only by markers or the mount's version.
    records_direct: bool,
}

impl PinFile {
    /// Whether the file says which packages the project depends on directly.
    pub fn records_direct(&self) -> bool {
        self.records_direct
    }

    fn new(path: &Path, format: Format) -> PinFile {
        PinFile {
            path: path.to_path_buf(),
            ecosystem: format.ecosystem(),
            pins: Vec::new(),
            unpinned: Vec::new(),
            unversioned: Vec::new(),
            includes: Vec::new(),
            refused: Vec::new(),
            records_direct: format.records_direct(),
        }
    }
}

/// Whether a file named `name` in a project's root is one a package manager writes to pin
/// versions, for `memorix init` to list in `[pins] files`: lockfiles, `requirements*.txt`
/// and go.mod. pyproject.toml and `.in` files usually hold ranges, so they are left to the user.
pub fn conventional(name: &str) -> bool {
    match format::by_name(name) {
        Some(Format::Pyproject) | None => false,
        Some(Format::Requirements) => {
            name.starts_with("requirements") && (name.ends_with(".txt") || name.ends_with(".lock"))
        }
        Some(_) => !name.starts_with("Cargo.lock."),
    }
}

/// The most packages one pin file may list (with what it includes). The largest real
/// lockfiles list tens of thousands; past this, resolving and reporting would be the hostile
/// file's to size.
pub const MAX_PACKAGES: usize = 100_000;

/// Parses one pin file. The format comes from the file name when it is one a tool writes
/// (`Cargo.lock`, `pnpm-lock.yaml`, `requirements-dev.txt`, ...), else from the content.
pub fn parse_file(path: &Path) -> Result<PinFile> {
    parse_named(path, &path.display().to_string())
}

/// [`parse_file`], with `name` for the file in messages (the project-relative path).
pub fn parse_named(path: &Path, name: &str) -> Result<PinFile> {
    let text = text::read(path, name)?;
    let format = format::detect(path, &text)
        .ok_or_else(|| PinError::UnknownFormat { path: name.to_string(), known: format::KNOWN })?;
    type Parser = fn(&str, &str, &mut PinFile) -> Result<()>;
    let parse: Parser = match format {
        Format::Cargo => cargo::parse,
        Format::Uv => uv::parse,
        Format::Poetry => poetry::parse,
        Format::Npm => npm::parse,
        Format::Pnpm => pnpm::parse,
        Format::Yarn => yarn::parse,
        Format::Requirements => requirements::parse,
        Format::Pipfile => pipfile::parse,
        Format::Pylock => pylock::parse,
        Format::Pdm => pdm::parse,
        Format::Pyproject => pyproject::parse,
        Format::Conda => conda::parse,
        Format::GoMod => gomod::parse,
        Format::Composer => composer::parse,
        Format::Gemfile => gemfile::parse,
    };
    within_cap(name, package_headers(format, &text))?;
    let mut file = PinFile::new(path, format);
    parse(&text, name, &mut file)?;
    if !file.records_direct && beside::mark_direct(format, &mut file) {
        file.records_direct = true;
    }
    refuse_bad_names(&mut file);
    within_cap(name, file.pins.len())?;
    Ok(file)
}

/// Refuses pin file `name` when it lists more than [`MAX_PACKAGES`] packages.
fn within_cap(name: &str, count: usize) -> Result<()> {
    if count > MAX_PACKAGES {
        return Err(PinError::TooMany { path: name.to_string(), count, max: MAX_PACKAGES }.into());
    }
    Ok(())
}

/// The `[[package]]` headers of a TOML lockfile (`[[packages]]` in pylock.toml), each one
/// package: counted before parsing, so a file far past [`MAX_PACKAGES`] is refused without
/// building its tables. (The count after parsing still holds for every format.)
fn package_headers(format: Format, text: &str) -> usize {
    let header = match format {
        Format::Cargo | Format::Uv | Format::Poetry | Format::Pdm => "[[package]]",
        Format::Pylock => "[[packages]]",
        _ => return 0,
    };
    text.lines().filter(|l| l.trim() == header).count()
}

/// A target for `[pins] markers` for a project that declares none while its pins split by
/// markers: the Python version the project says it runs on (`.python-version`, else the lower
/// bound of `requires-python` in pyproject.toml or a listed uv.lock), on 64-bit Linux with
/// CPython, where agents' sandboxes and CI run. Written into memorix.toml, so every machine
/// resolves the same.
pub fn default_target(project_dir: &Path, files: &[String]) -> BTreeMap<String, String> {
    let python = python_of(project_dir, files).unwrap_or_else(|| "3.12".to_string());
    [
        ("python_version", python.as_str()),
        ("sys_platform", "linux"),
        ("platform_system", "Linux"),
        ("platform_machine", "x86_64"),
        ("os_name", "posix"),
        ("implementation_name", "cpython"),
        ("platform_python_implementation", "CPython"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// `X.Y` of the Python a project declares it runs on.
fn python_of(project_dir: &Path, files: &[String]) -> Option<String> {
    let major_minor = |v: &pep440_rs::Version| {
        let r = v.release();
        Some(format!("{}.{}", r.first()?, r.get(1).copied().unwrap_or(0)))
    };
    let pinned = std::fs::read_to_string(project_dir.join(".python-version")).ok().and_then(|t| {
        let line = t.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'))?.to_string();
        let digits = line.trim_start_matches(|c: char| !c.is_ascii_digit());
        major_minor(&digits.parse::<pep440_rs::Version>().ok()?)
    });
    let lower_bound = |path: &Path| -> Option<String> {
        let doc: toml::Table = std::fs::read_to_string(path).ok()?.parse().ok()?;
        let spec = doc.get("project").and_then(|p| p.get("requires-python")).or(doc.get("requires-python"))?;
        let specs: pep440_rs::VersionSpecifiers = spec.as_str()?.parse().ok()?;
        let lower = specs.iter().find(|s| {
            use pep440_rs::Operator::*;
            matches!(s.operator(), GreaterThanEqual | TildeEqual | Equal | EqualStar | GreaterThan)
        })?;
        major_minor(lower.version())
    };
    let uv_locks = files.iter().filter(|f| f.ends_with("uv.lock")).map(|f| project_dir.join(f));
    pinned
        .or_else(|| lower_bound(&project_dir.join("pyproject.toml")))
        .or_else(|| uv_locks.into_iter().find_map(|p| lower_bound(&p)))
}

/// Moves every pin whose name (or aliased package) is not one of its ecosystem's names into
/// `refused`: such a name never reaches a Store path or a URL.
fn refuse_bad_names(file: &mut PinFile) {
    let eco = file.ecosystem;
    let why = |p: &Pin| name::problem(eco, &p.name).or_else(|| name::problem(eco, p.package.as_deref()?));
    for list in [&mut file.pins, &mut file.unpinned, &mut file.unversioned] {
        if !list.iter().any(|p| why(p).is_some()) {
            continue;
        }
        for pin in std::mem::take(list) {
            match why(&pin) {
                Some(w) => file.refused.push((pin, w)),
                None => list.push(pin),
            }
        }
    }
}

/// PEP 503 for Python (lowercase, runs of `-_.` -> `-`); Cargo: lowercase, `_` -> `-`;
/// Composer: lowercase (Packagist names are); npm, Go module paths and gems: as written.
pub fn normalize(eco: Ecosystem, name: &str) -> String {
    match eco {
        Ecosystem::Python => pep508_rs::PackageName::new(name.to_string())
            .map(|n| n.to_string())
            // Not a valid distribution name: it can match nothing that is, so keep it as is.
            .unwrap_or_else(|_| name.to_string()),
        Ecosystem::Cargo => name.to_lowercase().replace('_', "-"),
        Ecosystem::Composer => name.to_lowercase(),
        Ecosystem::Npm | Ecosystem::Go | Ecosystem::RubyGems => name.to_string(),
    }
}

/// The name a library goes by in mounts, Store paths and messages: PEP 503 for Python (what
/// imports and indexes agree on), else as the pin file spells it (`encoding_rs`, `@babel/core`,
/// an npm alias).
pub fn library_name(eco: Ecosystem, name: &str) -> String {
    match eco {
        Ecosystem::Python => normalize(eco, name),
        _ => name.to_string(),
    }
}

/// `version` without a local version label / build metadata (`2.0.1+cu117` -> `2.0.1`,
/// Go's `v2.0.0+incompatible` -> `v2.0.0`): docs are published per release, not per build.
pub fn docs_version(eco: Ecosystem, version: &str) -> String {
    let has_local = match eco {
        Ecosystem::Python => version.parse::<pep440_rs::Version>().is_ok_and(|v| v.is_local()),
        Ecosystem::Cargo | Ecosystem::Npm | Ecosystem::Go | Ecosystem::Composer => {
            semver::Version::parse(version.strip_prefix('v').unwrap_or(version))
                .is_ok_and(|v| !v.build.is_empty())
        }
        Ecosystem::RubyGems => false,
    };
    match version.split_once('+') {
        Some((release, _)) if has_local => release.to_string(),
        _ => version.to_string(),
    }
}

/// Why a pin is the one a library resolves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The file pins one release of it.
    Only,
    /// Of several, the one a root (the project, a workspace member) depends on directly.
    RootDependency,
    /// Of several, the one whose markers the declared target (`[pins] markers`) admits.
    Target,
    /// Of several, the one the mount's `version = "..."` names.
    MountVersion,
}

impl Reason {
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Only => "the only version pinned",
            Reason::RootDependency => "a root dependency",
            Reason::Target => "the marker matches [pins] markers",
            Reason::MountVersion => "the mount's version",
        }
    }
}

/// The version one library is pinned to, and where.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ResolvedPin {
    /// Normalized name.
    pub library: String,
    /// The name the registry serves it under, as the pin file records it (`encoding_rs`; the
    /// real package of an npm alias).
    pub package: String,
    pub ecosystem: Ecosystem,
    /// The pin file as listed in [pins].files (project-relative, e.g. "requirements.txt").
    pub file: String,
    /// As pinned, e.g. "2.0.1+cu117".
    pub version: String,
    /// Local version label stripped ("2.0.1"); equal to `version` otherwise.
    pub docs_version: String,
    /// `file:line` of the declaration (an included file's, for a requirements include).
    pub at: String,
    pub reason: Reason,
    /// The pin's markers, when it has any.
    pub markers: Option<String>,
    /// Other versions pinned that are the same release (`2.6.0+cpu` beside `2.6.0`).
    pub same_release: Vec<String>,
    /// The release artifacts the pin file records, with hashes (for fetching).
    pub artifacts: Vec<PinnedArtifact>,
}

/// All of a project's pin files, parsed.
#[derive(Debug)]
pub struct Pins {
    project_dir: PathBuf,
    /// Each file as listed in `[pins] files`, parsed.
    files: Vec<(String, PinFile)>,
    target: Target,
}

/// One file's choice for a library: the file as listed, its pins of it, and the one chosen.
struct Found<'p> {
    listed: &'p str,
    eco: Ecosystem,
    pin: &'p Pin,
    reason: Reason,
    same_release: Vec<String>,
}

/// The closest thing to a pin some file has, for the error when nothing pins a library.
enum Near<'p> {
    Range(&'p str, &'p Pin),
    Unversioned(&'p str, &'p Pin),
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
        let mut found: Vec<Found> = Vec::new();
        let mut near: Option<Near> = None;
        let mut excluded: Vec<&Pin> = Vec::new();
        for (listed, file) in &self.files {
            let eco = file.ecosystem;
            let key = normalize(eco, library);
            let matches = |p: &&Pin| normalize(eco, &p.name) == key;
            let candidates: Vec<&Pin> = file.pins.iter().filter(matches).collect();
            if candidates.is_empty() {
                let range = || file.unpinned.iter().find(matches).map(|p| Near::Range(listed, p));
                let member = || file.unversioned.iter().find(matches).map(|p| Near::Unversioned(listed, p));
                near = near.or_else(range).or_else(member);
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
                let narrowed = kept.len() < file.pins.iter().filter(matches).count();
                found.push(self.choose(library, listed, file, &kept, version, narrowed)?);
            }
        }
        let Some(first) = found.first() else { return Err(self.not_found(library, &excluded, near)) };
        let docs = docs_version(first.eco, &first.pin.version);
        if found.iter().any(|f| docs_version(f.eco, &f.pin.version) != docs) {
            let pins: Vec<&Pin> = found.iter().map(|f| f.pin).collect();
            return Err(PinError::Disagree {
                library: library.to_string(),
                listing: self.listing(&pins),
                sites: self.sites(&pins),
            }
            .into());
        }
        let pin = first.pin;
        Ok(ResolvedPin {
            library: library_name(first.eco, &pin.name),
            package: pin.package().to_string(),
            ecosystem: first.eco,
            file: first.listed.to_string(),
            version: pin.version.clone(),
            docs_version: docs,
            at: self.site(pin).at(),
            reason: first.reason,
            markers: pin.markers.clone(),
            same_release: first.same_release.clone(),
            artifacts: pin.artifacts.clone(),
        })
    }

    /// The error when no file pins `library`: every pin excluded by the target, only a range,
    /// a member without a version, or nothing at all.
    fn not_found(&self, library: &str, excluded: &[&Pin], near: Option<Near>) -> Box<PinError> {
        if !excluded.is_empty() {
            return PinError::ExcludedByMarkers {
                library: library.to_string(),
                listing: self.listing(excluded),
                sites: self.sites(excluded),
            }
            .into();
        }
        match near {
            Some(Near::Range(listed, p)) => {
                let site = self.site(p);
                let (src, span) = site.source();
                let what = if p.version.is_empty() {
                    "named without a version".to_string()
                } else {
                    format!("only `{}`", p.version)
                };
                let (at, library, file) = (site.at(), library.to_string(), listed.to_string());
                PinError::OnlyRange { at, library, file, what, src, span }.into()
            }
            Some(Near::Unversioned(listed, p)) => {
                let site = self.site(p);
                let (src, span) = site.source();
                let what = p.source.clone().unwrap_or_default();
                let (at, library, file) = (site.at(), library.to_string(), listed.to_string());
                PinError::Unversioned { at, library, file, what, src, span }.into()
            }
            None => {
                let searched = self.files.iter().map(|(l, f)| searched(l, f)).collect::<Vec<_>>().join(", ");
                PinError::NotPinned {
                    library: library.to_string(),
                    searched: if searched.is_empty() {
                        "no [pins] files are listed".into()
                    } else {
                        searched
                    },
                }
                .into()
            }
        }
    }

    /// The one pin among `candidates` (one file's pins of `library`, admitted by the target;
    /// `narrowed` when the target left out some), and why it is the one.
    fn choose<'p>(
        &self,
        library: &str,
        listed: &'p str,
        file: &PinFile,
        candidates: &[&'p Pin],
        version: Option<&str>,
        narrowed: bool,
    ) -> Result<Found<'p>> {
        let eco = file.ecosystem;
        let found = |pool: &[&'p Pin], reason| {
            let pin = preferred(eco, pool);
            let same_release = distinct_versions(pool)
                .into_iter()
                .filter(|v| *v != pin.version)
                .map(str::to_string)
                .collect();
            Ok(Found { listed, eco, pin, reason, same_release })
        };
        let mut pool: Vec<&Pin> = candidates.to_vec();
        if let Some(wanted) = version {
            let exact: Vec<&Pin> = pool.iter().copied().filter(|p| p.version == wanted).collect();
            pool = if exact.is_empty() {
                pool.into_iter().filter(|p| docs_version(eco, &p.version) == wanted).collect()
            } else {
                exact
            };
            if pool.is_empty() {
                return Err(PinError::NotACandidate {
                    library: library.to_string(),
                    version: wanted.to_string(),
                    choices: distinct_versions(candidates)
                        .iter()
                        .map(|v| format!("\"{v}\""))
                        .collect::<Vec<_>>()
                        .join(", "),
                    listing: self.listing(candidates),
                    sites: self.sites(candidates),
                }
                .into());
            }
        }
        if releases(eco, &pool).len() == 1 {
            let reason = if releases(eco, candidates).len() > 1 {
                Reason::MountVersion
            } else if narrowed {
                Reason::Target
            } else {
                Reason::Only
            };
            return found(&pool, reason);
        }
        // Several versions: the one a root package depends on directly is the one its code
        // uses; else the one its code finds (npm's hoisted copy).
        let mut direct: Vec<&Pin> = pool.iter().copied().filter(|p| p.direct).collect();
        if direct.is_empty() {
            direct = pool.iter().copied().filter(|p| p.visible).collect();
        }
        let why = match releases(eco, &direct).len() {
            1 => return found(&direct, Reason::RootDependency),
            0 if file.records_direct => "none of which the project depends on directly".to_string(),
            0 => format!("and {listed} does not record which one the project depends on"),
            _ => {
                pool = direct;
                "several of which the project depends on directly".to_string()
            }
        };
        if self.target.is_empty() && markers::differ(&pool) {
            return Err(PinError::MarkersNeeded {
                library: library.to_string(),
                listing: self.listing(&pool),
                assignment: markers::settling_assignment(eco, &pool, candidates),
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

    /// One line per pin: `file:line: name version (source); markers`.
    fn listing(&self, pins: &[&Pin]) -> String {
        pins.iter()
            .map(|p| match &p.markers {
                Some(m) => format!("  {}: {}; {m}", self.site(p).at(), describe(p)),
                None => format!("  {}: {}", self.site(p).at(), describe(p)),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The pins as related diagnostics, each pointing at its line; the markers are in the
    /// listing already, so they are not repeated here.
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

/// `listed`, and the files read through it, for "searched: ...".
fn searched(listed: &str, file: &PinFile) -> String {
    if file.includes.is_empty() {
        listed.to_string()
    } else {
        format!("{listed} [with {}]", file.includes.join(", "))
    }
}

/// `name version`, with the source when there is one.
fn describe(p: &Pin) -> String {
    match &p.source {
        Some(src) => format!("{} {} ({src})", p.name, p.version),
        None => format!("{} {}", p.name, p.version),
    }
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

/// The distinct releases among `pins` (`2.6.0` and `2.6.0+cpu` are one), in file order.
fn releases(eco: Ecosystem, pins: &[&Pin]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in pins {
        let release = docs_version(eco, &p.version);
        if !out.contains(&release) {
            out.push(release);
        }
    }
    out
}

/// Among pins of one release, the one without a label (`2.6.0` over `2.6.0+cpu`), else the first.
fn preferred<'p>(eco: Ecosystem, pool: &[&'p Pin]) -> &'p Pin {
    pool.iter().copied().find(|p| docs_version(eco, &p.version) == p.version).unwrap_or(pool[0])
}

/// The file name at the end of a URL or path (`.../httpx-0.28.1.tar.gz#sha256=...` ->
/// `httpx-0.28.1.tar.gz`).
pub(crate) fn url_file_name(url: &str) -> Option<String> {
    let path = url.split(['#', '?']).next().unwrap_or(url);
    let name = path.rsplit(['/', '\\']).next()?;
    (!name.is_empty()).then(|| name.to_string())
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
    pub(crate) fn source(
        &self,
    ) -> (Option<miette::NamedSource<crate::diagnostics::Quoted>>, Option<miette::SourceSpan>) {
        let text = text::read(&self.pin.file, &self.name).ok();
        Loc { name: &self.name, text: text.as_deref(), line: self.pin.line }.source()
    }
}

#[cfg(test)]
mod tests;
