//! The operations' error: every layer's error, wrapped as it is (codes, messages and help
//! unchanged), plus what only an operation can get wrong. The CLI renders it with miette.

use std::path::PathBuf;

use miette::Diagnostic;

use crate::diagnostics::IoError;
use crate::model::{Kind, LocatorError};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Locator(#[from] LocatorError),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Confine(#[from] crate::confine::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Manifest(#[from] crate::manifest::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Lock(#[from] crate::lock::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Pins(#[from] Box<crate::pins::PinError>),

    #[error(transparent)]
    #[diagnostic(transparent)]
    View(#[from] crate::view::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Resolve(#[from] crate::resolve::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Remote(#[from] crate::remote::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Search(#[from] crate::search::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Deliver(#[from] crate::deliver::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Fetch(#[from] Box<crate::fetch::Error>),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Unfetched(Box<Unfetched>),

    #[error("could not fetch the docs of {count} libraries")]
    #[diagnostic(code(memorix::fetch::failed), help("each is listed with its own fix; {kept}"))]
    FetchFailed {
        count: usize,
        /// What became of the rest: fetched and kept, or (fetching off) nothing written.
        kept: &'static str,
        #[related]
        failures: Vec<FetchFailure>,
    },

    #[error(transparent)]
    #[diagnostic(transparent)]
    Profile(#[from] crate::profile::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Git(#[from] crate::fetch::git::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Harness(#[from] crate::harness::sync::Error),

    #[error("git source `{source_key}` at commit {commit} gives {got}, but memorix.lock has {locked}")]
    #[diagnostic(
        code(memorix::ops::git_content_mismatch),
        help(
            "the commit's content is not what was locked (a rewritten repository?); inspect it, then `memorix update --source {source_key}` to accept what it holds now"
        )
    )]
    GitContentMismatch { source_key: String, commit: String, locked: crate::model::Id, got: crate::model::Id },

    #[error("cannot {verb}: {count} objects memorix.lock names are not in the Store (the first: {first})")]
    #[diagnostic(
        code(memorix::ops::objects_missing),
        help("{why}. The lock holds: nothing it was made from changed")
    )]
    ObjectsMissing { verb: &'static str, count: usize, first: String, why: String },

    #[error("memorix.toml has no git source `{key}`")]
    #[diagnostic(code(memorix::build::unknown_git_source), help("the git sources are: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") }))]
    UnknownGitSource { key: String, known: Vec<String> },

    #[error("unknown agent harness `{name}`")]
    #[diagnostic(
        code(memorix::doctor::unknown_harness),
        help("{}the harnesses memorix knows: {}", suggestion.as_ref().map(|s| format!("did you mean `{s}`? ")).unwrap_or_default(), known.join(", "))
    )]
    UnknownHarness { name: String, suggestion: Option<String>, known: Vec<String> },

    #[error("--cwd {dir}: not a folder of this project")]
    #[diagnostic(
        code(memorix::doctor::bad_cwd),
        help(
            "name a folder inside the project, relative to its root (e.g. `--cwd packages/a`), without `..`"
        )
    )]
    BadSessionDir { dir: String },

    #[error("no pin file to read dependencies from: [pins] files is empty")]
    #[diagnostic(
        code(memorix::add::no_pin_files),
        help("name one: `memorix add --deps --pins Cargo.lock` (it is added to [pins] files)")
    )]
    NoPinFilesToRead,

    #[error("which versions of {library} to compare: name them, or update its pin first")]
    #[diagnostic(
        code(memorix::changes::versions),
        help(
            "`memorix changes {library} FROM TO` compares two versions the Store holds (`memorix versions {library}`); without them it compares the versions the last `memorix update` moved between"
        )
    )]
    ChangesVersions { library: String },

    #[error("the Store has no version {version} of {library}")]
    #[diagnostic(
        code(memorix::changes::no_version),
        help("versions held: {}; the project pins no such library and the Store has no version of it from a registry, so memorix cannot tell where to fetch it: pin it and run `memorix build`, or ingest it with `memorix ingest docs/{library}/ DIR --version {version}`", if held.is_empty() { "none" } else { held })
    )]
    ChangesNoVersion { library: String, version: String, held: String },

    #[error("{library} {version} is not in the Store, and fetching it from {registry} is off ({why})")]
    #[diagnostic(
        code(memorix::changes::offline),
        help(
            "run `memorix changes` without --offline to fetch it from {registry}, or ingest it by hand: `memorix ingest docs/{library}/ DIR --version {version}`"
        )
    )]
    ChangesOffline { library: String, version: String, registry: &'static str, why: &'static str },

    #[error("memorix.toml has no mount `{name}`")]
    #[diagnostic(code(memorix::ops::unknown_mount), help("{}", mount_choices(suggestion, known)))]
    UnknownMount { name: String, known: Vec<String>, suggestion: Option<String> },

    #[error("{}: invalid TOML: {message}", path.display())]
    #[diagnostic(
        code(memorix::ops::invalid_toml),
        help("fix memorix.toml by hand; `memorix build` points at the line")
    )]
    InvalidToml { path: PathBuf, message: String },

    #[error("{what} in memorix.toml is not a table")]
    #[diagnostic(code(memorix::ops::not_a_table), help("write it as a [table] so `memorix add` can edit it"))]
    NotATable { what: String },

    #[error("quest {quest} is an environment's; `add --quest` takes a derivation quest")]
    #[diagnostic(
        code(memorix::add::environment_quest),
        help("`memorix quest search TEXT` lists both kinds; pick a derivation")
    )]
    EnvironmentQuest { quest: String },

    #[error("this project has no active environment")]
    #[diagnostic(code(memorix::ops::no_active_environment), help("run `memorix build` first"))]
    NoActiveEnvironment,

    #[error("this project has no profile generations yet")]
    #[diagnostic(code(memorix::profile::empty), help("run `memorix build` first"))]
    NoProfileGenerations,

    #[error("the profile has no generation {generation}")]
    #[diagnostic(code(memorix::profile::no_generation), help("`memorix profile` lists the generations"))]
    NoSuchProfileGeneration { generation: u64 },

    #[error("profile generation {current} is the first; there is nothing to roll back to")]
    #[diagnostic(code(memorix::profile::first), help("`memorix profile` lists the generations"))]
    NothingToRollBack { current: u64 },

    #[error("`{path}` is not a file of the active environment")]
    #[diagnostic(code(memorix::explain::not_a_file), help("`ls {memory}` shows what it holds"))]
    NotInEnvironment { path: String, memory: String },

    #[error("`{path}` is not a path inside the memory directory: {why}")]
    #[diagnostic(
        code(memorix::explain::bad_path),
        help("name a delivered file, e.g. .memory/python/style.md")
    )]
    NotAMemoryPath { path: String, why: &'static str },

    #[error("nothing in the Store matches {target}")]
    #[diagnostic(code(memorix::purge::nothing), help("name a Store path (rules/x.md) or a blob id"))]
    NothingToPurge { target: String },

    #[error("refusing to remove all of `{kind}/`")]
    #[diagnostic(code(memorix::rm::kind_root), help("name the paths inside {kind}/ to remove"))]
    RemoveKindRoot { kind: Kind },

    #[error("--version tags a directory: DEST must be a subtree such as docs/httpx/ (and not --merge)")]
    #[diagnostic(
        code(memorix::ingest::version_needs_tree),
        help("e.g. memorix ingest {example}/ DIR --version 1.2.3")
    )]
    VersionNeedsTree { example: String },

    #[error("nothing to run")]
    #[diagnostic(code(memorix::run::nothing), help("memorix run -- CMD [ARGS...]"))]
    NothingToRun,

    #[error("`{program}`: command not found")]
    #[diagnostic(
        code(memorix::run::not_found),
        help("check the spelling, or that it is on PATH (`command -v {program}`)")
    )]
    CommandNotFound { program: String },

    #[error("`{program}` cannot be run: permission denied")]
    #[diagnostic(code(memorix::run::not_executable), help("make it executable (`chmod +x {program}`)"))]
    CommandNotExecutable { program: String },

    #[error("corrupt run record {}: line {line}: {message}", path.display())]
    #[diagnostic(code(memorix::run::corrupt), help("memorix appends to this file; remove the damaged line"))]
    CorruptRunRecord { path: PathBuf, line: usize, message: String },

    #[error("{} exists and is not empty", dir.display())]
    #[diagnostic(code(memorix::checkout::not_empty), help("name a new directory"))]
    CheckoutNotEmpty { dir: PathBuf },

    #[error("memorix.lock is missing")]
    #[diagnostic(code(memorix::remote::lock_missing), help("run `memorix lock` (or `memorix build`)"))]
    LockMissing,

    #[error("memorix.lock has git merge-conflict markers (the first at line {line})")]
    #[diagnostic(code(memorix::remote::lock_conflicted), help("run `memorix lock` to heal it"))]
    LockConflicted { line: usize },

    #[error("`{0}` is not an id or id prefix")]
    #[diagnostic(code(memorix::ops::bad_id), help("give at least 8 hex digits, with or without `sha256:`"))]
    BadId(String),

    #[error("no object in the store has an id starting with {prefix}")]
    #[diagnostic(
        code(memorix::show::unknown_id),
        help("ids are printed by `memorix log` and `memorix ls --json`")
    )]
    UnknownId { prefix: String },

    #[error("no environment in the store has an id starting with {prefix}")]
    #[diagnostic(
        code(memorix::profile::unknown_environment),
        help("`memorix profile` lists this project's environments")
    )]
    UnknownEnvironment { prefix: String },

    #[error("{file} is not a JSON object, so memorix does not add its MCP server to it")]
    #[diagnostic(
        code(memorix::init::mcp_config),
        help(
            "fix the file (an MCP configuration is a JSON object with a servers object), or set `mcp = false` in [agents]"
        )
    )]
    McpConfigNotAnObject { file: String },

    #[error("no mount of the environment delivers a library or mount named `{name}`")]
    #[diagnostic(
        code(memorix::search::no_library),
        help("`memorix search` without `--lib` searches every mount; memorix.toml lists them")
    )]
    NoSuchLibrary { name: String },

    #[error("no quest has an id starting with {prefix}")]
    #[diagnostic(code(memorix::quest::unknown), help("`memorix quest list` lists them"))]
    UnknownQuest { prefix: String },

    #[error("id prefix {prefix} is ambiguous: {}", candidates.join(", "))]
    #[diagnostic(code(memorix::ops::ambiguous_id), help("type more hex digits"))]
    AmbiguousId { prefix: String, candidates: Vec<String> },

    #[error("`memorix {command}` has no --json output: it prints {prints}")]
    #[diagnostic(code(memorix::cli::no_json), help("{instead}"))]
    NoJson { command: &'static str, prints: &'static str, instead: &'static str },

    #[error("`{dir}` is a directory; cat prints one file")]
    #[diagnostic(
        code(memorix::cat::is_directory),
        help("`memorix ls {dir}` lists it{}", first.as_ref().map(|f| format!("; e.g. `memorix cat {f}`")).unwrap_or_default())
    )]
    IsDirectory { dir: String, first: Option<String> },
}

fn mount_choices(suggestion: &Option<String>, known: &[String]) -> String {
    match suggestion {
        Some(s) => format!("did you mean `{s}`? the mounts are: {}", known.join(", ")),
        None => format!("the mounts are: {}", known.join(", ")),
    }
}

impl From<crate::fetch::Error> for Error {
    fn from(e: crate::fetch::Error) -> Error {
        Error::Fetch(Box::new(e))
    }
}

impl Error {
    /// Several libraries whose docs could not be fetched, listed in one error.
    pub(crate) fn fetch_failed(failures: Vec<FetchFailure>) -> Error {
        let off = failures.iter().all(|f| matches!(*f.error, crate::fetch::Error::Offline { .. }));
        let kept = match off {
            true => "fetching is off, and nothing was written",
            false => "what could be fetched is in the Store and is not fetched again",
        };
        Error::FetchFailed { count: failures.len(), kept, failures }
    }

    /// Exit code 2 for every error but a fetched object whose hash does not match (1, a check
    /// that failed, book: design/reliability.md#exit-codes) and a command `run` cannot start
    /// (127 and 126, as a shell says); other checks that fail exit 1 without an error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Remote(e) => e.exit_code(),
            Error::Fetch(e) => e.exit_code(),
            Error::FetchFailed { failures, .. } => {
                failures.iter().map(|f| f.error.exit_code()).max().unwrap_or(2)
            }
            Error::CommandNotFound { .. } => 127,
            Error::GitContentMismatch { .. } => 1,
            Error::CommandNotExecutable { .. } => 126,
            _ => 2,
        }
    }
}

/// A resolve that found no acceptable version of a library, and why fetching it did not help:
/// the resolve's error (its code, and the versions the Store has), with the fetch's answer.
#[derive(Debug, thiserror::Error)]
#[error("{resolve}")]
pub struct Unfetched {
    pub resolve: crate::resolve::Error,
    pub fetch: Box<crate::fetch::Error>,
}

impl Diagnostic for Unfetched {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.resolve.code()
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        let fetch_help = self.fetch.help().map(|h| format!(" ({h})")).unwrap_or_default();
        let own = self.resolve.help().map(|h| format!("{h}. ")).unwrap_or_default();
        Some(Box::new(format!("{own}Fetching it did not help: {}{fetch_help}", self.fetch)))
    }
}

/// One library whose docs could not be fetched, and the mounts that wanted them.
#[derive(Debug)]
pub struct FetchFailure {
    pub library: String,
    pub version: String,
    /// `file:line` of the pin.
    pub site: String,
    pub error: Box<crate::fetch::Error>,
}

impl std::fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} ({}): {}", self.library, self.version, self.site, self.error)
    }
}
