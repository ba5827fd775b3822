//! What can go wrong reading or writing the Store, resolving a locator in it, or scanning what
//! is ingested into it.

use std::path::{Path, PathBuf};

use miette::Diagnostic;

use crate::diagnostics::IoError;
use crate::model::{Id, Kind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

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
        help(
            "a store written by this memorix holds `2` (or `1`, from an older memorix); restore the file, or move the store aside"
        )
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
    #[diagnostic(code(memorix::store::empty_kind), help("add content with `memorix ingest {kind}/PATH SRC`"))]
    EmptyKind { kind: Kind },

    #[error("`{kind}` has no generation {selector}")]
    #[diagnostic(
        code(memorix::store::no_generation),
        help("`memorix log {kind}` lists the generations this store has")
    )]
    NoSuchGeneration { kind: Kind, selector: String },

    #[error("@{selector} names a version, not a generation")]
    #[diagnostic(
        code(memorix::store::not_a_generation),
        help("a generation is @latest, @gN or a hash prefix; versions resolve through `memorix versions`")
    )]
    NotAGeneration { selector: String },

    #[error("`{locator}` resolves through a project's [pins]")]
    #[diagnostic(
        code(memorix::store::pin_outside_project),
        help("use @pin in a memorix.toml mount, or name a version with @vVERSION")
    )]
    PinOutsideProject { locator: String },

    #[error("id prefix {prefix} is ambiguous: {}", candidates.join(", "))]
    #[diagnostic(code(memorix::store::ambiguous_id), help("type more hex digits"))]
    AmbiguousId { prefix: String, candidates: Vec<String> },

    #[error("`{path}` does not exist in {kind}@g{seq}")]
    #[diagnostic(code(memorix::store::not_found), help("`memorix ls {kind}/` lists what is there"))]
    PathNotFound { kind: Kind, path: String, seq: u64 },

    #[error("the store has no versions of `{library}` at {place}")]
    #[diagnostic(
        code(memorix::store::no_versions),
        help(
            "ingest one with `memorix ingest {place} DIR --version X` (`memorix versions` lists what the store has)"
        )
    )]
    NoVersions { library: String, place: String },

    #[error(
        "no version of `{library}` in the store matches {wanted} (match = \"{policy}\"); the store has: {available}"
    )]
    #[diagnostic(
        code(memorix::store::no_acceptable_version),
        help(
            "ingest the docs for {wanted} with `memorix ingest ... --version {wanted}`, or loosen the mount's `match`"
        )
    )]
    NoAcceptableVersion { library: String, wanted: String, policy: &'static str, available: String },

    #[error("`{path}` is a file, but the locator ends with `/` (a subtree)")]
    #[diagnostic(code(memorix::store::not_directory), help("drop the trailing `/` to name the file"))]
    NotDirectory { path: String },

    #[error("nothing to ingest")]
    #[diagnostic(
        code(memorix::store::no_source),
        help("name at least one SRC (a file, a directory, or - for standard input)")
    )]
    NothingToIngest,

    #[error("standard input has no file name to place inside a directory")]
    #[diagnostic(
        code(memorix::store::stdin_needs_name),
        help("name the file in DEST, e.g. `memorix ingest {dest}notes.md -`")
    )]
    StdinNeedsName { dest: String },

    #[error("standard input cannot be a project source")]
    #[diagnostic(code(memorix::store::stdin_source), help("name a folder inside the project in [sources]"))]
    StdinSource,

    #[error("{} has no file name", path.display())]
    #[diagnostic(code(memorix::store::no_file_name), help("name a file or a directory, not `..` or `/`"))]
    NoFileName { path: PathBuf },

    #[error("source {} does not exist", path.display())]
    #[diagnostic(code(memorix::store::missing_source), help("check the path; `-` reads standard input"))]
    SourceMissing { path: PathBuf },

    #[error("symlink {} points outside the source ({})", path.display(), target.display())]
    #[diagnostic(
        code(memorix::store::escaping_symlink),
        help(
            "memorix stores a symlink only as the file it points to inside the source; copy the target in, or ignore the link in .memorixignore"
        )
    )]
    EscapingSymlink { path: PathBuf, target: PathBuf },

    #[error("symlink {} points to nothing ({})", path.display(), target.display())]
    #[diagnostic(
        code(memorix::store::dangling_symlink),
        help("remove the link, or list it in a .memorixignore file inside the source")
    )]
    DanglingSymlink { path: PathBuf, target: PathBuf },

    #[error("{} is a {what}, not a regular file or directory", path.display())]
    #[diagnostic(
        code(memorix::store::special_file),
        help("list it in a .memorixignore file inside the source to skip it")
    )]
    SpecialFile { path: PathBuf, what: &'static str },

    #[error("{} has a name that is not valid UTF-8", path.display())]
    #[diagnostic(code(memorix::store::non_utf8), help("rename the file, or list it in .memorixignore"))]
    NonUtf8Name { path: PathBuf },

    #[error("{} has a name memorix cannot store: {problem}", path.display())]
    #[diagnostic(code(memorix::store::bad_name), help("rename the file, or list it in .memorixignore"))]
    BadName { path: PathBuf, problem: &'static str },

    #[error("could not walk {}: {message}", path.display())]
    #[diagnostic(code(memorix::store::walk), help("check permissions and symlinks under the source"))]
    Walk { path: PathBuf, message: String },
}

impl Error {
    pub fn corrupt(what: &'static str, path: &Path, reason: impl Into<String>) -> Error {
        Error::CorruptObject { what, path: path.to_path_buf(), reason: reason.into() }
    }

    /// The object a read found missing (`what`, id), for callers that report it per mount.
    pub fn missing_object(&self) -> Option<(&'static str, Id)> {
        match self {
            Error::MissingObject { what, id } => Some((what, *id)),
            _ => None,
        }
    }
}
