//! Every error memorix reports: one enum, each variant with an error code and a `help:`.
//!
//! Errors exit 2 (bad input, usage, a locator that resolves to nothing, I/O), except a fetched
//! object whose hash does not match (1). Checks that find problems (`verify`) are not errors:
//! they report and exit 1.

use std::io;
use std::path::{Path, PathBuf};

use miette::Diagnostic;

use crate::model::id::Id;
use crate::model::{Kind, LocatorError};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Locator(#[from] LocatorError),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Manifest(Box<crate::manifest::ManifestError>),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Pins(Box<crate::pins::PinError>),

    #[error("could not {action} {}: {source}", path.display())]
    #[diagnostic(code(memorix::io), help("{}", io_help(source)))]
    Io { action: &'static str, path: PathBuf, source: io::Error },

    #[error("no memorix store at {}", path.display())]
    #[diagnostic(
        code(memorix::store::missing),
        help("`memorix ingest` creates the store; pass --store DIR or set MEMORIX_STORE to use another")
    )]
    StoreMissing { path: PathBuf },

    #[error("{} is not a memorix store (it has files but no VERSION)", path.display())]
    #[diagnostic(
        code(memorix::store::not_a_store),
        help("point --store (or MEMORIX_STORE) at an empty or existing store directory")
    )]
    NotAStore { path: PathBuf },

    #[error("store format {found} at {} is newer than this memorix understands (format {supported})", path.display())]
    #[diagnostic(code(memorix::store::too_new), help("upgrade memorix to read this store"))]
    StoreTooNew { path: PathBuf, found: u64, supported: u64 },

    #[error("the store's VERSION file {} is corrupt: {found:?}", path.display())]
    #[diagnostic(
        code(memorix::store::bad_version),
        help("a store written by this memorix holds `1`; restore the file, or move the store aside")
    )]
    StoreVersionCorrupt { path: PathBuf, found: String },

    #[error("corrupt {what} {}: {reason}", path.display())]
    #[diagnostic(code(memorix::store::corrupt), help("run `memorix verify` to list every damaged object"))]
    CorruptObject { what: &'static str, path: PathBuf, reason: String },

    #[error("{what} {id} is missing from the store")]
    #[diagnostic(
        code(memorix::store::missing_object),
        help("run `memorix verify` to list every damaged object")
    )]
    MissingObject { what: &'static str, id: Id },

    #[error("blob {id} ({paths}) was purged from the Store on {time}: its content is gone")]
    #[diagnostic(
        code(memorix::store::purged),
        help("select something else, or ingest a replacement at that path and run `memorix update`")
    )]
    Purged { id: Id, paths: String, time: String },

    #[error("`{kind}` has no generations in this store yet")]
    #[diagnostic(
        code(memorix::resolve::empty_kind),
        help("add content with `memorix ingest {kind}/PATH SRC`")
    )]
    EmptyKind { kind: Kind },

    #[error("`{kind}` has no generation {selector}")]
    #[diagnostic(
        code(memorix::resolve::no_generation),
        help("`memorix log {kind}` lists the generations this store has")
    )]
    NoSuchGeneration { kind: Kind, selector: String },

    #[error("`{path}` does not exist in {kind}@g{seq}")]
    #[diagnostic(code(memorix::resolve::not_found), help("`memorix ls {kind}/` lists what is there"))]
    PathNotFound { kind: Kind, path: String, seq: u64 },

    #[error("the store has no versions of `{library}` at {place}")]
    #[diagnostic(
        code(memorix::resolve::no_versions),
        help(
            "ingest one with `memorix ingest {place} DIR --version X` (`memorix versions` lists what the store has)"
        )
    )]
    NoVersions { library: String, place: String },

    #[error(
        "no version of `{library}` in the store matches {wanted} (match = \"{policy}\"); the store has: {available}"
    )]
    #[diagnostic(
        code(memorix::resolve::no_acceptable_version),
        help(
            "ingest the docs for {wanted} with `memorix ingest ... --version {wanted}`, or loosen the mount's `match`"
        )
    )]
    NoAcceptableVersion { library: String, wanted: String, policy: &'static str, available: String },

    #[error("`{path}` is a directory")]
    #[diagnostic(code(memorix::resolve::is_directory), help("use `memorix ls {path}/` to list it"))]
    IsDirectory { path: String },

    #[error("`{path}` is a file, but the locator ends with `/` (a subtree)")]
    #[diagnostic(code(memorix::resolve::not_directory), help("drop the trailing `/` to name the file"))]
    NotDirectory { path: String },

    #[error("no object in the store has an id starting with {prefix}")]
    #[diagnostic(
        code(memorix::show::unknown_id),
        help("ids are printed by `memorix log` and `memorix ls --json`")
    )]
    UnknownId { prefix: String },

    #[error("id prefix {prefix} is ambiguous: {}", candidates.join(", "))]
    #[diagnostic(code(memorix::show::ambiguous_id), help("type more hex digits"))]
    AmbiguousId { prefix: String, candidates: Vec<String> },

    #[error("`{0}` is not an id or id prefix")]
    #[diagnostic(code(memorix::show::bad_id), help("give at least 8 hex digits, with or without `sha256:`"))]
    BadId(String),

    #[error("source {} does not exist", path.display())]
    #[diagnostic(code(memorix::ingest::missing_source), help("check the path; `-` reads standard input"))]
    SourceMissing { path: PathBuf },

    #[error("symlink {} points outside the source ({})", path.display(), target.display())]
    #[diagnostic(
        code(memorix::ingest::escaping_symlink),
        help(
            "memorix stores a symlink only as the file it points to inside the source; copy the target in, or ignore the link in .memorixignore"
        )
    )]
    EscapingSymlink { path: PathBuf, target: PathBuf },

    #[error("symlink {} points to nothing ({})", path.display(), target.display())]
    #[diagnostic(
        code(memorix::ingest::dangling_symlink),
        help("remove the link, or list it in a .memorixignore file inside the source")
    )]
    DanglingSymlink { path: PathBuf, target: PathBuf },

    #[error("{} is a {what}, not a regular file or directory", path.display())]
    #[diagnostic(
        code(memorix::ingest::special_file),
        help("list it in a .memorixignore file inside the source to skip it")
    )]
    SpecialFile { path: PathBuf, what: &'static str },

    #[error("{} has a name that is not valid UTF-8", path.display())]
    #[diagnostic(code(memorix::ingest::non_utf8), help("rename the file, or list it in .memorixignore"))]
    NonUtf8Name { path: PathBuf },

    #[error("{} has a name memorix cannot store: {problem}", path.display())]
    #[diagnostic(code(memorix::ingest::bad_name), help("rename the file, or list it in .memorixignore"))]
    BadName { path: PathBuf, problem: &'static str },

    #[error("could not walk {}: {message}", path.display())]
    #[diagnostic(code(memorix::ingest::walk), help("check permissions and symlinks under the source"))]
    Walk { path: PathBuf, message: String },

    #[error("two files claim `{path}`: {first} and {second}, and no rule decides between them")]
    #[diagnostic(
        code(memorix::conflict::ambiguous),
        help("settle it in memorix.toml:\n\n    [overrides]\n    \"{path}\" = \"{first}\"")
    )]
    AmbiguousConflict { path: String, first: String, second: String },

    #[error("the override for `{path}` names {named}, which is not a candidate there")]
    #[diagnostic(code(memorix::conflict::bad_override), help("the candidates at `{path}` are: {}", candidates.join(", ")))]
    OverrideNotCandidate { path: String, named: String, candidates: Vec<String> },

    #[error("the override for `{path}` matches no file in the environment")]
    #[diagnostic(
        code(memorix::conflict::override_unused),
        help("fix the path in [overrides], or remove the entry")
    )]
    OverrideUnused { path: String },

    #[error("mount `{mount}`: `{path}` is a file ({file}) and a directory ({dir})")]
    #[diagnostic(
        code(memorix::conflict::file_and_directory),
        help("exclude one of them with `exclude = [...]` in the mount")
    )]
    FileDirClash { mount: String, path: String, file: String, dir: String },

    #[error("{}:{line}: memorix.lock is not a valid lock: {message}", path.display())]
    #[diagnostic(
        code(memorix::lock::corrupt),
        help("memorix.lock is generated: delete it and run `memorix lock` to write it again")
    )]
    LockCorrupt { path: PathBuf, line: usize, message: String },

    #[error("{} has lock format version {found}; this memorix writes version 1", path.display())]
    #[diagnostic(
        code(memorix::lock::version),
        help("upgrade memorix, or delete the lock and run `memorix lock`")
    )]
    LockVersion { path: PathBuf, found: u32 },

    #[error("memorix.toml has a dependency cycle: {cycle}")]
    #[diagnostic(
        code(memorix::resolve::cycle),
        help(
            "a [sources] folder inside the memory directory would feed a build its own output; move the folder out"
        )
    )]
    Cycle { cycle: String },

    #[error("{url:?} is not a remote store URL: {reason}")]
    #[diagnostic(
        code(memorix::remote::bad_url),
        help("remotes are s3://BUCKET[/PREFIX], file:///ABSOLUTE/DIR or http(s)://HOST[/PATH] (read-only)")
    )]
    RemoteUrl { url: String, reason: String },

    #[error("no remote named `{name}`")]
    #[diagnostic(code(memorix::remote::unknown), help("{}", remote_choices(known)))]
    UnknownRemote { name: String, known: Vec<String> },

    #[error("a remote named `{name}` already exists ({url})")]
    #[diagnostic(
        code(memorix::remote::exists),
        help("`memorix remote remove {name}` first, or pick another name")
    )]
    RemoteExists { name: String, url: String },

    #[error("{message}")]
    #[diagnostic(code(memorix::remote::which), help("{}", remote_choices(known)))]
    NoRemoteChosen { message: String, known: Vec<String> },

    #[error("{url} is read-only: memorix cannot push over plain HTTP")]
    #[diagnostic(
        code(memorix::remote::read_only),
        help("push to the s3:// or file:// store behind it; http(s):// remotes only serve substitutions")
    )]
    RemoteReadOnly { url: String },

    #[error("remote {remote}: could not {action} {key}: {message}")]
    #[diagnostic(
        code(memorix::remote::unreachable),
        help(
            "check the URL, the network and the AWS_* credentials (MEMORIX_S3_ENDPOINT or AWS_ENDPOINT_URL for a local server); nothing half-transferred was kept, so run the command again"
        )
    )]
    RemoteFailed { remote: String, action: &'static str, key: String, message: String },

    #[error("remote {remote} served a damaged {object}: {reason}")]
    #[diagnostic(
        code(memorix::remote::corrupt),
        help(
            "the object was rejected and did not enter the store; repair the remote (`memorix push --all` from a healthy store re-uploads nothing that exists, so delete the damaged object there first)"
        )
    )]
    RemoteCorrupt { remote: String, object: String, reason: String },

    #[error("cannot push: {object}, which {needed_by}, is not in the store")]
    #[diagnostic(
        code(memorix::remote::incomplete),
        help("run `memorix build` (or `memorix pull`) so the store holds what the lock needs, then push")
    )]
    PushIncomplete { object: String, needed_by: String },

    #[error("remote {remote} lacks {} objects memorix.lock needs, e.g. {}", missing.len(), missing[0])]
    #[diagnostic(
        code(memorix::remote::missing),
        help("push them from a store that has them (`memorix push` in the project), then pull again")
    )]
    RemoteMissing { remote: String, missing: Vec<String> },

    #[error("{}: {message}", path.display())]
    #[diagnostic(
        code(memorix::remote::config),
        help("fix or delete the file; `memorix remote add` writes it")
    )]
    RemoteConfig { path: PathBuf, message: String },

    #[error("{message}")]
    #[diagnostic(code(memorix::usage))]
    Usage {
        message: String,
        #[help]
        help: Option<String>,
    },
}

fn io_help(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::StorageFull => {
            "the disk is full; free space and retry (nothing already stored was changed)"
        }
        io::ErrorKind::PermissionDenied => "check the permissions of this path",
        io::ErrorKind::NotFound => "check that the path exists",
        _ => "check the path and retry",
    }
}

fn remote_choices(known: &[String]) -> String {
    if known.is_empty() {
        "add one with `memorix remote add NAME URL`, or name a URL directly".to_string()
    } else {
        format!("the remotes are: {}; a URL works too", known.join(", "))
    }
}

impl Error {
    /// An I/O failure while doing `action` to `path`.
    pub fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Error + 'a {
        move |source| Error::Io { action, path: path.to_path_buf(), source }
    }

    pub fn usage(message: impl Into<String>, help: impl Into<Option<String>>) -> Error {
        Error::Usage { message: message.into(), help: help.into() }
    }

    pub fn corrupt(what: &'static str, path: &Path, reason: impl Into<String>) -> Error {
        Error::CorruptObject { what, path: path.to_path_buf(), reason: reason.into() }
    }

    /// Exit code 2 for every error but a fetched object whose hash does not match (1, a check
    /// that failed, DESIGN.md §6); other checks that fail exit 1 without an error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::RemoteCorrupt { .. } => 1,
            _ => 2,
        }
    }
}
