//! What can go wrong planning a view: conflicts no rule settles, overrides that name nothing,
//! and the Store reads behind them.

use miette::Diagnostic;

use crate::diagnostics::IoError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error("two files claim `{path}`: {first} and {second}, and no rule decides between them")]
    #[diagnostic(
        code(memorix::view::ambiguous),
        help("settle it in memorix.toml:\n\n    [overrides]\n    \"{path}\" = \"{first}\"")
    )]
    AmbiguousConflict { path: String, first: String, second: String },

    #[error("the override for `{path}` names {named}, which is not a candidate there")]
    #[diagnostic(code(memorix::view::bad_override), help("the candidates at `{path}` are: {}", candidates.join(", ")))]
    OverrideNotCandidate { path: String, named: String, candidates: Vec<String> },

    #[error("the override for `{path}` matches no file in the environment")]
    #[diagnostic(
        code(memorix::view::override_unused),
        help("fix the path in [overrides], or remove the entry")
    )]
    OverrideUnused { path: String },

    #[error("mount `{mount}`: `{path}` is a file ({file}) and a directory ({dir})")]
    #[diagnostic(
        code(memorix::view::file_and_directory),
        help("exclude one of them with `exclude = [...]` in the mount")
    )]
    FileDirClash { mount: String, path: String, file: String, dir: String },
}

impl Error {
    /// The object a Store read found missing (`what`, id).
    pub fn missing_object(&self) -> Option<(&'static str, crate::model::Id)> {
        match self {
            Error::Store(e) => e.missing_object(),
            _ => None,
        }
    }
}
