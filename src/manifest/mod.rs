//! `memorix.toml`: parsing and validation, with errors that point at the TOML span.

pub mod init;
pub mod raw;

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};

use crate::confine::{self, Confined};
use crate::diagnostics::Quoted;
use crate::diagnostics::{FromIo, IoError};
use crate::model::version::MatchPolicy;
use crate::model::{GitRef, HarnessName, Locator, NameProblem, RemoteUrl, Selector, StorePath, git};
pub use raw::DeliveryMode;
use raw::RawManifest;

pub const FILE: &str = "memorix.toml";

/// The memory directory's index, written at activation: no mount may take its name.
pub const INDEX: &str = "INDEX.md";

/// Every file memorix writes at the memory directory's root besides the environment's: the
/// index, and the ignore files that keep the generated tree out of git (`.gitignore`) and in
/// the view of search tools built on the same ignore rules, dot-files included (`.ignore`).
pub const GENERATED: [&str; 3] = [INDEX, ".gitignore", ".ignore"];

/// A validated manifest.
#[derive(Debug)]
pub struct Manifest {
    /// The project directory (where memorix.toml is).
    pub dir: PathBuf,
    pub name: Option<String>,
    pub intent: Option<String>,
    /// The memory directory, relative to the project.
    pub memory: StorePath,
    pub delivery: DeliveryMode,
    pub sources: Vec<SourceDecl>,
    /// `[sources]` entries that are git repositories.
    pub git_sources: Vec<GitSourceDecl>,
    pub mounts: Vec<MountDecl>,
    pub overrides: Vec<OverrideDecl>,
    pub pins: PinsDecl,
    /// `[fetch.LIB]`, by library name as written.
    pub fetch: BTreeMap<String, FetchDecl>,
    pub artifacts: Vec<ArtifactDecl>,
    /// `[store] substituters`, in order.
    pub substituters: Vec<RemoteUrl>,
    /// `[agents]`; `None` when the table is absent (no harness files are written).
    pub agents: Option<AgentsDecl>,
}

/// `[agents]` (book: design/harnesses.md#what-memorix-generates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentsDecl {
    pub harnesses: Vec<HarnessName>,
    /// Bytes the always-loaded index may take.
    pub index_budget: u64,
    /// `members`: globs naming workspace member folders (`packages/*`), each given its own
    /// nested entry point.
    pub members: Vec<String>,
    /// `mcp = true`: `init --agents` registers `memorix mcp` with the harnesses.
    pub mcp: bool,
}

/// `index-budget` when `[agents]` does not say.
pub const DEFAULT_INDEX_BUDGET: u64 = 8 * 1024;

/// An `[artifacts]` hook: a command run once per derivation id.
#[derive(Debug, Clone)]
pub struct ArtifactDecl {
    pub name: String,
    pub command: Vec<String>,
}

/// `[pins]`: the lockfiles library versions come from, and the target their markers are
/// evaluated against (never the host).
#[derive(Debug, Clone, Default)]
pub struct PinsDecl {
    pub files: Vec<String>,
    pub markers: BTreeMap<String, String>,
    /// `[pins] fetch`: whether a `@pin` the Store lacks is fetched from its registry.
    pub fetch: bool,
}

/// `[fetch.LIB]`: what of a library's fetched artifact is kept besides the default view.
#[derive(Debug, Clone)]
pub struct FetchDecl {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// The two lists compiled.
    pub include_set: GlobSet,
    pub exclude_set: GlobSet,
}

/// A project folder ingested at `dest` at build time.
#[derive(Debug, Clone)]
pub struct SourceDecl {
    pub dest: Locator,
    /// Project-relative folder (or file).
    pub folder: StorePath,
    /// The folder as written in the manifest.
    pub written: String,
    /// Ingested as this version of the library named by the place's last component.
    pub version: Option<String>,
}

impl SourceDecl {
    /// The source's key in memorix.toml and memorix.lock: the place, with `@vVERSION`.
    pub fn key(&self) -> String {
        source_key(&self.dest, self.version.as_deref())
    }
}

/// A source placed at `dest` feeds locator `loc` when one path lies inside the other.
fn feeds(dest: &Locator, loc: &Locator) -> bool {
    dest.kind == loc.kind && (loc.path.starts_with(&dest.path) || dest.path.starts_with(&loc.path))
}

fn source_key(dest: &Locator, version: Option<&str>) -> String {
    match version {
        Some(v) => format!("{}@v{v}", dest.place()),
        None => dest.place(),
    }
}

/// A `[sources]` entry that is a git repository (book: design/fetching.md#git-sources):
/// memorix.lock pins it to a commit, kept until `memorix update` moves it.
#[derive(Debug, Clone)]
pub struct GitSourceDecl {
    pub dest: Locator,
    pub url: String,
    pub reference: GitRef,
    /// The repository subdirectory taken (the root when `None`).
    pub path: Option<StorePath>,
    pub version: Option<String>,
}

impl GitSourceDecl {
    pub fn key(&self) -> String {
        source_key(&self.dest, self.version.as_deref())
    }
}

#[derive(Debug, Clone)]
pub struct MountDecl {
    /// Mount path inside the memory directory, e.g. `python` or `libs/httpx`.
    pub path: StorePath,
    pub select: Vec<Locator>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub intent: Option<String>,
    /// How closely a `@pin` / `@v` version must match, as written (see [`MountDecl::policy`]).
    pub match_policy: Option<MatchPolicy>,
    /// The library a `@pin` asks for, when it is not the locator's last path component.
    pub library: Option<String>,
    /// Chooses among several pinned versions of the library.
    pub version: Option<String>,
    /// Where each `select` entry is written, `memorix.toml:7`, for errors found later.
    pub select_at: Vec<String>,
    /// `applies-to`: project-file globs; the mount is delivered path-scoped.
    pub applies_to: Vec<String>,
    /// `applies_to` compiled.
    pub applies_to_set: GlobSet,
    filter: Filter,
}

#[derive(Debug, Clone)]
struct Filter {
    include: Option<GlobSet>,
    exclude: GlobSet,
}

impl MountDecl {
    /// The `match` policy in force (default minor).
    pub fn policy(&self) -> MatchPolicy {
        self.match_policy.unwrap_or_default()
    }

    /// Whether a mount-relative path passes `include`/`exclude`.
    pub fn keeps(&self, rel: &str) -> bool {
        self.filter.include.as_ref().is_none_or(|s| s.is_match(rel)) && !self.filter.exclude.is_match(rel)
    }
}

#[derive(Debug, Clone)]
pub struct OverrideDecl {
    /// Environment path, e.g. `python/style.md`.
    pub path: StorePath,
    /// The Store file that wins there.
    pub winner: Locator,
    pub written: String,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong finding, reading or validating memorix.toml.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Invalid(Box<ManifestError>),

    #[error(transparent)]
    #[diagnostic(transparent)]
    File(Box<confine::Error>),

    #[error("no {FILE} in {} or any parent directory", start.display())]
    #[diagnostic(
        code(memorix::manifest::not_found),
        help("run `memorix init` to create one, or pass -C DIR")
    )]
    NotFound { start: PathBuf },
}

/// A manifest problem, pointing at its span in the file.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ManifestError {
    src: NamedSource<Quoted>,
    span: Option<(usize, usize)>,
    label: String,
    message: String,
    code: &'static str,
    /// Every manifest error says how to fix it.
    help: String,
}

impl Diagnostic for ManifestError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(&self.help))
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.src)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (start, len) = self.span?;
        Some(Box::new(std::iter::once(LabeledSpan::new(Some(self.label.clone()), start, len))))
    }
}

/// `"8KiB"`, `"16 KB"`, `"512B"`, `"1MiB"`: bytes.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..split].parse().ok()?;
    let unit: u64 = match t[split..].trim() {
        "" | "B" => 1,
        "KB" | "kB" => 1000,
        "KiB" => 1024,
        "MB" => 1000 * 1000,
        "MiB" => 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// Finds `memorix.toml` in `start` or its ancestors, like Cargo finds Cargo.toml.
pub fn find(start: &Path) -> Result<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let candidate = d.join(FILE);
        if candidate.is_file() {
            return Ok(candidate);
        }
        dir = d.parent();
    }
    Err(Error::NotFound { start: start.to_path_buf() })
}

/// Reads and validates a manifest file; errors name it relative to `base` (where the user
/// is) when it lies below.
pub fn load(path: &Path, base: &Path) -> Result<Manifest> {
    load_text(path, base).map(|(m, _)| m)
}

/// [`load`], and the text it read.
pub fn load_text(path: &Path, base: &Path) -> Result<(Manifest, String)> {
    let text = confine::read_text(path)
        .map_err(|e| Error::File(Box::new(e)))?
        .ok_or_else(|| Error::io("read", path)(std::io::ErrorKind::NotFound.into()))?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path.strip_prefix(base).unwrap_or(path).display().to_string();
    Ok((parse(&text, &name, &dir)?, text))
}

/// Span lookups in the parsed document, for errors found after deserialization.
struct Spans {
    doc: toml_edit::Document<String>,
}

impl Spans {
    fn item(&self, path: &[&str]) -> Option<&toml_edit::Item> {
        let mut item = self.doc.as_item();
        for k in path {
            item = item.as_table_like()?.get(k)?;
        }
        Some(item)
    }

    /// The span of the key `path.last()` inside the table at `path[..-1]`.
    fn key(&self, path: &[&str]) -> Option<Range<usize>> {
        let (last, parent) = path.split_last()?;
        let table = self.item(parent)?.as_table_like()?;
        table.key(last)?.span()
    }

    fn value(&self, path: &[&str]) -> Option<Range<usize>> {
        self.item(path)?.span().or_else(|| self.key(path))
    }

    fn element(&self, path: &[&str], i: usize) -> Option<Range<usize>> {
        self.item(path)?.as_array()?.get(i)?.span().or_else(|| self.value(path))
    }
}

struct Ctx<'a> {
    name: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    /// The 1-based line of a byte offset.
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())].matches('\n').count() + 1
    }

    fn err(
        &self,
        span: Option<Range<usize>>,
        code: &'static str,
        message: String,
        label: &str,
        help: impl Into<String>,
    ) -> Error {
        let line = span.as_ref().map(|s| self.line(s.start));
        let message = match line {
            Some(l) => format!("{}:{l}: {message}", self.name),
            None => format!("{}: {message}", self.name),
        };
        Error::Invalid(Box::new(ManifestError {
            src: NamedSource::new(self.name, Quoted::new(self.text)),
            span: span.map(|s| {
                let cut = Quoted::cut(s);
                (cut.offset(), cut.len())
            }),
            label: label.to_string(),
            message,
            code,
            help: help.into(),
        }))
    }
}

/// What a TOML syntax error needs, whichever it is.
const SYNTAX_HELP: &str = "fix the TOML at the marked place: strings in double quotes, arrays closed with `]`, each [table] header on a line of its own (https://toml.io)";

/// A glob's rules, for every glob memorix.toml holds.
const GLOB_HELP: &str = "globs match paths inside the mount: `*` stays in one folder, `**` crosses folders, e.g. \"**/drafts/**\"";

/// Parses manifest text; `name` labels errors, `dir` is the project directory.
pub fn parse(text: &str, name: &str, dir: &Path) -> Result<Manifest> {
    let ctx = Ctx { name, text };
    if let Some(at) = crate::confine::toml_too_deep(text) {
        let message = format!("invalid TOML: nests deeper than {} levels", crate::confine::MAX_NESTING);
        let help = "memorix.toml is configuration: keep tables and arrays a few levels deep";
        return Err(ctx.err(Some(at..at + 1), "memorix::manifest::syntax", message, "here", help));
    }
    let doc = toml_edit::Document::parse(text.to_string()).map_err(|e| {
        ctx.err(
            e.span(),
            "memorix::manifest::syntax",
            format!("invalid TOML: {}", e.message().trim_end()),
            "here",
            SYNTAX_HELP,
        )
    })?;
    let raw: RawManifest = toml::from_str(text).map_err(|e| serde_error(&ctx, &e))?;
    let p = Parser { ctx, spans: Spans { doc }, dir, confined: Confined::new(dir).ok() };
    let pins = raw.pins.unwrap_or_default();
    p.check_pin_files(&pins.files)?;
    let artifacts = p.artifacts(&raw.artifacts)?;
    let substituters = p.substituters(&raw.store.map(|s| s.substituters).unwrap_or_default())?;
    let project = raw.project;
    let memory = p.memory(project.memory.as_deref())?;
    let (sources, git_sources) = p.sources(&raw.sources)?;
    p.check_memory_apart(&memory, &sources, &pins.files)?;
    let mounts = p.mounts(&raw.mounts, &memory)?;
    let overrides = p.overrides(&raw.overrides, &mounts)?;
    let fetch = p.fetch(&raw.fetch)?;
    let agents = raw.agents.as_ref().map(|a| p.agents(a)).transpose()?;
    Ok(Manifest {
        dir: dir.to_path_buf(),
        pins: PinsDecl { files: pins.files, markers: pins.markers, fetch: pins.fetch.unwrap_or(true) },
        fetch,
        artifacts,
        name: project.name,
        intent: project.intent,
        memory,
        delivery: project.delivery.unwrap_or_default(),
        sources,
        git_sources,
        mounts,
        overrides,
        substituters,
        agents,
    })
}

/// Validates the parts of a parsed manifest, each error pointing at its span.
struct Parser<'a> {
    ctx: Ctx<'a>,
    spans: Spans,
    dir: &'a Path,
    /// The project as memorix may touch it (absent when the directory is, as in tests that
    /// parse text alone).
    confined: Option<Confined>,
}

impl Parser<'_> {
    /// A file or folder the manifest names must not lead out of the project through a symlink
    /// (a hostile repository could name `./r -> ~/.ssh` as a source), nor be a special file.
    fn check_inside(&self, span: Option<Range<usize>>, abs: &Path) -> Result<()> {
        let Some(confined) = &self.confined else { return Ok(()) };
        confined.check(abs).map_err(|e| {
            let code = match e {
                confine::Error::Special { .. } => "memorix::confine::special_file",
                _ => "memorix::confine::outside",
            };
            let help = e.help().map(|h| h.to_string()).unwrap_or_default();
            self.ctx.err(span, code, e.to_string(), "here", help)
        })
    }

    /// Every `[pins] files` entry is a file inside the project.
    fn check_pin_files(&self, files: &[String]) -> Result<()> {
        let (ctx, spans, dir) = (&self.ctx, &self.spans, self.dir);
        for (i, file) in files.iter().enumerate() {
            let path = project_path(file).ok().filter(|p| !p.is_root()).ok_or_else(|| {
                ctx.err(
                    spans.element(&["pins", "files"], i),
                    "memorix::manifest::bad_pin_file",
                    format!("pin file {file:?} is not a file inside the project"),
                    "here",
                    "list lockfiles relative to memorix.toml, e.g. \"Cargo.lock\"",
                )
            })?;
            self.check_inside(spans.element(&["pins", "files"], i), &dir.join(path.as_str()))?;
            if !dir.join(path.as_str()).is_file() {
                return Err(ctx.err(
                    spans.element(&["pins", "files"], i),
                    "memorix::manifest::missing_pin_file",
                    format!("pin file {file:?} does not exist"),
                    "not found",
                    format!("create {} or remove it from [pins] files", dir.join(path.as_str()).display()),
                ));
            }
        }
        Ok(())
    }

    fn artifacts(&self, raw: &BTreeMap<String, raw::RawArtifact>) -> Result<Vec<ArtifactDecl>> {
        let mut artifacts = Vec::new();
        for (name, a) in raw {
            let key = ["artifacts", name.as_str()];
            if crate::model::Name::new(name).is_err() {
                return Err(self.ctx.err(
                    self.spans.key(&key),
                    "memorix::manifest::bad_artifact",
                    format!("artifact name {name:?} is not a file name"),
                    "here",
                    "name the artifact with a plain file name, e.g. [artifacts.summary]",
                ));
            }
            if a.command.is_empty() {
                return Err(self.ctx.err(
                    self.spans.value(&[key[0], key[1], "command"]),
                    "memorix::manifest::bad_artifact",
                    format!("artifact `{name}` has an empty command"),
                    "empty",
                    "e.g. command = [\"python3\", \"summarise.py\"]",
                ));
            }
            artifacts.push(ArtifactDecl { name: name.clone(), command: a.command.clone() });
        }
        Ok(artifacts)
    }

    fn substituters(&self, urls: &[String]) -> Result<Vec<RemoteUrl>> {
        let parse = |(i, url): (usize, &String)| {
            RemoteUrl::parse(url).map_err(|why| {
                self.ctx.err(
                    self.spans.element(&["store", "substituters"], i),
                    "memorix::manifest::bad_substituter",
                    format!("substituter {url:?} is not a remote store URL: {why}"),
                    "here",
                    "use s3://BUCKET/PREFIX, file:///ABSOLUTE/DIR or https://HOST/PATH",
                )
            })
        };
        urls.iter().enumerate().map(parse).collect()
    }

    /// The memory directory: inside the project, and never the project itself (activation
    /// swaps it out whole).
    fn memory(&self, written: Option<&str>) -> Result<StorePath> {
        let Some(m) = written else { return Ok(StorePath::new(".memory").expect("a valid default")) };
        project_path(m)
            .and_then(|p| if p.is_root() { Err("is the project itself".into()) } else { Ok(p) })
            .map_err(|why| {
                self.ctx.err(
                    self.spans.value(&["project", "memory"]),
                    "memorix::manifest::bad_memory",
                    format!("`memory = {m:?}` {why}"),
                    "here",
                    "name a directory inside the project, e.g. \".memory\"",
                )
            })
    }

    /// Activation replaces the memory directory whole, so it may not hold, or lie inside, what
    /// the project itself is made of: its git repository, memorix's state, the manifest and
    /// lock, a pin file, or a `[sources]` folder it would lie inside (a source folder inside
    /// the memory is a dependency cycle, which the graph reports).
    fn check_memory_apart(&self, memory: &StorePath, sources: &[SourceDecl], pins: &[String]) -> Result<()> {
        let own = [".git", ".memorix", FILE, "memorix.lock"];
        let mut taken: Vec<(String, String, bool)> =
            own.iter().map(|p| (p.to_string(), format!("`{p}`"), true)).collect();
        taken.extend(pins.iter().map(|f| (f.clone(), format!("the pin file {f:?}"), true)));
        taken.extend(
            sources
                .iter()
                .map(|s| (s.folder.to_string(), format!("the source folder {:?}", s.written), false)),
        );
        for (path, what, either_way) in taken {
            let Ok(path) = project_path(&path) else { continue };
            if memory.starts_with(&path) || (either_way && path.starts_with(memory)) {
                return Err(self.ctx.err(
                    self.spans.value(&["project", "memory"]),
                    "memorix::manifest::bad_memory",
                    format!("`memory = \"{memory}\"` overlaps {what}: building would replace it"),
                    "here",
                    "name a directory of its own for the memory, e.g. \".memory\"",
                ));
            }
        }
        Ok(())
    }

    fn sources(
        &self,
        raw: &BTreeMap<String, raw::RawSource>,
    ) -> Result<(Vec<SourceDecl>, Vec<GitSourceDecl>)> {
        let (mut folders, mut gits) = (Vec::new(), Vec::new());
        for (dest, value) in raw {
            match value {
                raw::RawSource::Folder(folder) => folders.push(self.source(dest, folder)?),
                raw::RawSource::Git(g) => gits.push(self.git_source(dest, g)?),
            }
        }
        Ok((folders, gits))
    }

    /// A git source: one of branch, tag or rev (none follows the default branch); a rev is a
    /// full commit id; `path` stays inside the repository.
    fn git_source(&self, dest_text: &str, g: &raw::RawGitSource) -> Result<GitSourceDecl> {
        let key = ["sources", dest_text];
        let bad = |field: &str, message: String, help: &str| {
            let span = self.spans.value(&["sources", dest_text, field]).or_else(|| self.spans.value(&key));
            self.ctx.err(span, "memorix::manifest::bad_git_source", message, "here", help)
        };
        let (mut dest, version) = self.source_place(dest_text)?;
        dest.selector = None;
        if let Some(why) = git::url_problem(&g.git) {
            return Err(bad(
                "git",
                format!("{:?} is not a repository URL: it {why}", g.git),
                "e.g. git = \"https://github.com/acme/agent-rules\"",
            ));
        }
        for (field, name) in [("branch", &g.branch), ("tag", &g.tag)] {
            if let Some(why) = name.as_deref().and_then(git::ref_problem) {
                let message = format!("{field} {:?} {why}", name.as_deref().unwrap_or_default());
                return Err(bad(
                    field,
                    message,
                    "name a branch or tag as `git branch` or `git tag` lists it",
                ));
            }
        }
        let reference = match (&g.branch, &g.tag, &g.rev) {
            (None, None, None) => GitRef::DefaultBranch,
            (Some(b), None, None) => GitRef::Branch(b.clone()),
            (None, Some(t), None) => GitRef::Tag(t.clone()),
            (None, None, Some(r)) if r.len() == 40 && r.bytes().all(|c| c.is_ascii_hexdigit()) => {
                GitRef::Rev(r.to_ascii_lowercase())
            }
            (None, None, Some(r)) => {
                return Err(bad(
                    "rev",
                    format!("rev {r:?} is not a full commit id"),
                    "give all 40 hex digits, or follow a branch or tag",
                ));
            }
            _ => {
                return Err(bad(
                    "git",
                    "a git source follows one of branch, tag or rev".into(),
                    "keep one of them",
                ));
            }
        };
        let path = match g.path.as_deref() {
            None => None,
            Some(p) => Some(project_path(p).map_err(|why| {
                bad("path", format!("path {p:?} {why}"), "a subdirectory of the repository, e.g. \"python/\"")
            })?)
            .filter(|p| !p.is_root()),
        };
        Ok(GitSourceDecl { dest, url: g.git.clone(), reference, path, version })
    }

    /// A source's key: a Store place, optionally `@vVERSION` of a library's docs.
    fn source_place(&self, dest_text: &str) -> Result<(Locator, Option<String>)> {
        let key = ["sources", dest_text];
        let bad_key = |message: String| {
            self.ctx.err(
                self.spans.key(&key),
                "memorix::manifest::bad_source",
                message,
                "this Store place",
                "a source's key is a Store place such as \"rules/webapp/\", or \"docs/httpx/@v0.28.1\" for a version of a library's docs",
            )
        };
        let mut dest = Locator::parse(dest_text).map_err(|e| bad_key(e.to_string()))?;
        let version = match dest.selector.take() {
            None => None,
            Some(Selector::Version(v)) if dest.subtree && !dest.path.is_root() => Some(v),
            Some(other) => return Err(bad_key(format!("a source cannot take @{other}"))),
        };
        Ok((dest, version))
    }

    /// A source's key is a Store place, optionally with `@vVERSION` for a docs version; its
    /// value a folder inside the project.
    fn source(&self, dest_text: &str, folder_text: &str) -> Result<SourceDecl> {
        let (ctx, spans) = (&self.ctx, &self.spans);
        let key = ["sources", dest_text];
        let (dest, version) = self.source_place(dest_text)?;
        let bad_folder = |code: &'static str, message: String, label: &str, help: String| {
            ctx.err(spans.value(&key), code, message, label, help)
        };
        let inside = "name a folder inside the project, e.g. \"./agent-rules\"".to_string();
        let folder = project_path(folder_text).map_err(|why| {
            bad_folder(
                "memorix::manifest::bad_source",
                format!("source folder {folder_text:?} {why}"),
                "here",
                inside.clone(),
            )
        })?;
        if folder.is_root() {
            return Err(bad_folder(
                "memorix::manifest::bad_source",
                "a source cannot be the whole project".into(),
                "here",
                inside,
            ));
        }
        let abs = self.dir.join(folder.as_str());
        self.check_inside(spans.value(&key), &abs)?;
        if !abs.exists() {
            return Err(bad_folder(
                "memorix::manifest::missing_source",
                format!("source folder {folder_text:?} does not exist"),
                "not found",
                format!("create {} or fix the path", abs.display()),
            ));
        }
        Ok(SourceDecl { dest, folder, written: folder_text.to_string(), version })
    }

    fn mounts(&self, raw: &BTreeMap<String, raw::RawMount>, memory: &StorePath) -> Result<Vec<MountDecl>> {
        let mut mounts =
            raw.iter().map(|(name, m)| self.mount(name, m, memory)).collect::<Result<Vec<MountDecl>>>()?;
        // TOML keys are unique, but `"python"` and `"python/"` name one mount.
        mounts.sort_by(|a, b| a.path.cmp(&b.path));
        if let Some(w) = mounts.windows(2).find(|w| w[0].path == w[1].path) {
            return Err(self.ctx.err(
                None,
                "memorix::manifest::duplicate_mount",
                format!("mount path {} is declared twice", w[0].path),
                "here",
                "`[mounts.x]` and `[mounts.\"x/\"]` name one mount; keep one of them",
            ));
        }
        Ok(mounts)
    }

    fn mount(&self, name: &str, m: &raw::RawMount, memory: &StorePath) -> Result<MountDecl> {
        let (ctx, spans) = (&self.ctx, &self.spans);
        let key = ["mounts", name];
        let bad = |message: String, help: String| {
            ctx.err(spans.key(&key), "memorix::manifest::bad_mount", message, "here", help)
        };
        let path = project_path(name).map_err(|why| {
            bad(
                format!("mount path {name:?} {why}"),
                format!("mount paths stay inside the memory directory ({memory}), e.g. \"python\" or \"libs/httpx\""),
            )
        })?;
        if path.is_root() {
            return Err(bad("a mount needs a path".into(), "e.g. [mounts.python]".into()));
        }
        if GENERATED.contains(&path.as_str()) {
            return Err(bad(
                format!("mount path {name:?} is taken by a file memorix writes in the memory directory"),
                "choose another mount path".into(),
            ));
        }
        if m.select.is_empty() {
            return Err(ctx.err(
                spans.value(&[key[0], key[1], "select"]),
                "memorix::manifest::empty_select",
                format!("mount `{name}` selects nothing"),
                "empty",
                "list at least one locator, e.g. select = [\"rules/python/\"]",
            ));
        }
        let select = m
            .select
            .iter()
            .enumerate()
            .map(|(i, text)| self.locator(name, i, text))
            .collect::<Result<_>>()?;
        if let Some(library) = m.library.as_deref()
            && !crate::model::package::valid_in_any(library)
        {
            return Err(ctx.err(
                spans.value(&[key[0], key[1], "library"]),
                "memorix::manifest::bad_library",
                format!(
                    "mount `{name}`: `library` {:?} is not a package name",
                    crate::model::package::shown(library)
                ),
                "not a name",
                "name the library as its pin file does, e.g. library = \"@babel/core\" or \"serde_json\"",
            ));
        }
        let filter = Filter {
            include: if m.include.is_empty() { None } else { Some(self.globs(name, "include", &m.include)?) },
            exclude: self.globs(name, "exclude", &m.exclude)?,
        };
        Ok(MountDecl {
            path,
            select,
            include: m.include.clone(),
            exclude: m.exclude.clone(),
            intent: m.intent.clone(),
            match_policy: m.match_policy,
            library: m.library.clone(),
            version: m.version.clone(),
            select_at: (0..m.select.len()).map(|i| self.place_of(&["mounts", name, "select"], i)).collect(),
            applies_to: m.applies_to.clone(),
            applies_to_set: self.globs(name, "applies-to", &m.applies_to)?,
            filter,
        })
    }

    /// `memorix.toml:LINE` of an array element (the file alone when its span is unknown).
    fn place_of(&self, path: &[&str], i: usize) -> String {
        match self.spans.element(path, i) {
            Some(s) => format!("{}:{}", self.ctx.name, self.ctx.line(s.start)),
            None => self.ctx.name.to_string(),
        }
    }

    /// A mount's `select[i]`; an error points inside the string at the character blamed.
    fn locator(&self, mount: &str, i: usize, text: &str) -> Result<Locator> {
        Locator::parse(text).map_err(|e| {
            let elem = self.spans.element(&["mounts", mount, "select"], i);
            let span = elem.map(|s| e.span_in(s.start + 1));
            self.ctx.err(span, e.problem_code(), e.to_string(), &e.problem_label(), e.problem_help())
        })
    }

    /// `[fetch.LIB]` tables, their globs compiled.
    fn fetch(&self, raw: &BTreeMap<String, raw::RawFetch>) -> Result<BTreeMap<String, FetchDecl>> {
        let mut out = BTreeMap::new();
        for (lib, f) in raw {
            let decl = FetchDecl {
                include: f.include.clone(),
                exclude: f.exclude.clone(),
                include_set: self.globs_at(["fetch", lib, "include"], &f.include)?,
                exclude_set: self.globs_at(["fetch", lib, "exclude"], &f.exclude)?,
            };
            out.insert(lib.clone(), decl);
        }
        Ok(out)
    }

    /// `[agents]`: known harness names (a near miss is suggested), a size for the budget.
    fn agents(&self, raw: &raw::RawAgents) -> Result<AgentsDecl> {
        let mut harnesses = Vec::new();
        let names = raw
            .harnesses
            .clone()
            .unwrap_or_else(|| HarnessName::DEFAULT.iter().map(|h| h.as_str().to_string()).collect());
        for (i, name) in names.iter().enumerate() {
            let Some(h) = HarnessName::parse(name) else {
                let known: Vec<&str> = HarnessName::ALL.iter().map(|h| h.as_str()).collect();
                let near = known.iter().find(|k| strsim::levenshtein(k, name) <= 2);
                let mean = near.map(|n| format!("did you mean \"{n}\"? ")).unwrap_or_default();
                return Err(self.ctx.err(
                    self.spans.element(&["agents", "harnesses"], i),
                    "memorix::manifest::unknown_harness",
                    format!("unknown agent harness {name:?}"),
                    "here",
                    format!("{mean}the harnesses memorix knows: {}", known.join(", ")),
                ));
            };
            if !harnesses.contains(&h) {
                harnesses.push(h);
            }
        }
        let index_budget = match &raw.index_budget {
            None => DEFAULT_INDEX_BUDGET,
            Some(raw::RawSize::Bytes(n)) => *n,
            Some(raw::RawSize::Text(t)) => parse_size(t).ok_or_else(|| {
                self.ctx.err(
                    self.spans.value(&["agents", "index-budget"]),
                    "memorix::manifest::bad_size",
                    format!("index-budget {t:?} is not a size"),
                    "here",
                    "write bytes with a unit, e.g. \"8KiB\", \"16 KB\" or 8192",
                )
            })?,
        };
        let members = raw.members.clone().unwrap_or_default();
        for (i, m) in members.iter().enumerate() {
            let bad = m.is_empty()
                || m.starts_with('/')
                || m.contains('\\')
                || m.chars().any(char::is_control)
                || m.split('/').any(|c| c.is_empty() || c == "." || c == "..")
                || globset::Glob::new(m).is_err();
            if bad {
                return Err(self.ctx.err(
                    self.spans.element(&["agents", "members"], i),
                    "memorix::manifest::bad_member",
                    format!("members entry {m:?} is not a folder glob inside the project"),
                    "here",
                    "write a relative folder glob like \"packages/*\": no leading `/`, no `.` or `..`, no empty parts",
                ));
            }
        }
        Ok(AgentsDecl { harnesses, index_budget, members, mcp: raw.mcp.unwrap_or(false) })
    }

    fn globs(&self, mount: &str, field: &str, list: &[String]) -> Result<GlobSet> {
        self.globs_at(["mounts", mount, field], list)
    }

    fn globs_at(&self, at: [&str; 3], list: &[String]) -> Result<GlobSet> {
        let err = |span, message: String| {
            self.ctx.err(span, "memorix::manifest::bad_glob", message, "here", GLOB_HELP)
        };
        let mut b = GlobSetBuilder::new();
        for (i, g) in list.iter().enumerate() {
            // A glob reaches generated front matter (`applies-to`): a line break there would
            // add keys of its own (`alwaysApply: true`).
            if g.chars().any(char::is_control) {
                let message = format!("glob {g:?} holds a control character (a line break, a tab, ESC)");
                return Err(err(self.spans.element(&at, i), message));
            }
            let glob = compile_glob(g)
                .map_err(|e| err(self.spans.element(&at, i), format!("invalid glob {g:?}: {e}")))?;
            b.add(glob);
        }
        b.build().map_err(|e| err(self.spans.value(&at), e.to_string()))
    }

    /// Each override names a file under a mount, and the Store file that wins there.
    fn overrides(&self, raw: &BTreeMap<String, String>, mounts: &[MountDecl]) -> Result<Vec<OverrideDecl>> {
        let mut overrides = Vec::new();
        for (path_text, winner_text) in raw {
            let key = ["overrides", path_text.as_str()];
            let bad = |span, message: String, help: &str| {
                self.ctx.err(span, "memorix::manifest::bad_override", message, "here", help)
            };
            let path = project_path(path_text).map_err(|why| {
                bad(
                    self.spans.key(&key),
                    format!("override path {path_text:?} {why}"),
                    "an override's key is a path inside the memory directory, e.g. \"python/style.md\"",
                )
            })?;
            if !mounts.iter().any(|m| path.starts_with(&m.path)) {
                return Err(bad(
                    self.spans.key(&key),
                    format!("override path {path_text:?} is under no mount"),
                    "an override's key is a file path inside one of the [mounts]",
                ));
            }
            let winner = Locator::parse_file(winner_text).ok_or_else(|| {
                bad(
                    self.spans.value(&key),
                    format!("override value {winner_text:?} is not a Store file path"),
                    "name the Store file that should win, e.g. \"rules/python/style.md\"",
                )
            })?;
            overrides.push(OverrideDecl { path, winner, written: winner_text.clone() });
        }
        Ok(overrides)
    }
}

/// Globs match mount-relative paths; `*` stays inside one component, `**` crosses them.
fn compile_glob(g: &str) -> std::result::Result<Glob, globset::Error> {
    GlobBuilder::new(g).literal_separator(true).build()
}

/// A path inside the project: relative, no `..`, leading `./` and trailing `/` allowed.
fn project_path(text: &str) -> std::result::Result<StorePath, String> {
    if text.starts_with('/') {
        return Err("is absolute".into());
    }
    let trimmed = text.trim_end_matches('/');
    let mut parts = trimmed.split('/').peekable();
    while parts.peek() == Some(&".") {
        parts.next();
    }
    let rest: Vec<&str> = parts.collect();
    if rest.len() == 1 && rest[0].is_empty() {
        return Ok(StorePath::root());
    }
    StorePath::new(&rest.join("/")).map_err(|p| match p {
        NameProblem::DotDot => "leaves the project (`..`)".to_string(),
        other => format!("has a {}", other.describe()),
    })
}

/// Turns a serde error into a diagnostic; unknown keys get a "did you mean".
fn serde_error(ctx: &Ctx, e: &toml::de::Error) -> Error {
    let msg = e.message();
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        if let Some((found, expected)) = names.split_first() {
            let suggestion = expected
                .iter()
                .min_by_key(|c| strsim::levenshtein(found, c))
                .filter(|c| strsim::levenshtein(found, c) <= 3);
            let help = match suggestion {
                Some(s) => format!("did you mean `{s}`? known keys here: {}", expected.join(", ")),
                None => format!("known keys here: {}", expected.join(", ")),
            };
            return ctx.err(
                e.span(),
                "memorix::manifest::unknown_key",
                format!("unknown key `{found}`"),
                "unknown key",
                help,
            );
        }
    }
    let help =
        "the manifest chapter of the book (and schema/memorix.schema.json) lists every key and its type";
    ctx.err(e.span(), "memorix::manifest::invalid", msg.to_string(), "here", help)
}

impl Manifest {
    pub fn mount(&self, path: &StorePath) -> Option<&MountDecl> {
        self.mounts.iter().find(|m| &m.path == path)
    }

    /// The project-relative memory directory as a file-system path.
    pub fn memory_dir(&self) -> PathBuf {
        self.dir.join(self.memory.as_str())
    }

    /// Sources of `kind` whose Store place overlaps `loc`'s path (they feed it).
    /// The lock keys of every source (folder or git) whose place overlaps `loc`.
    pub fn source_keys_feeding<'a>(&'a self, loc: &'a Locator) -> impl Iterator<Item = String> + 'a {
        let gits = self.git_sources.iter().filter(move |g| feeds(&g.dest, loc)).map(GitSourceDecl::key);
        self.sources_feeding(loc).map(SourceDecl::key).chain(gits)
    }

    pub fn sources_feeding<'a>(&'a self, loc: &'a Locator) -> impl Iterator<Item = &'a SourceDecl> + 'a {
        self.sources.iter().filter(move |s| feeds(&s.dest, loc))
    }

    pub fn overrides_under<'a>(
        &'a self,
        mount: &'a StorePath,
    ) -> impl Iterator<Item = &'a OverrideDecl> + 'a {
        self.overrides.iter().filter(move |o| o.path.starts_with(mount))
    }
}
