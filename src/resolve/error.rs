//! What can go wrong evaluating a manifest against the Store and the project's pins.

use miette::Diagnostic;

use crate::model::Id;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    View(#[from] crate::view::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Pins(#[from] Box<crate::pins::PinError>),

    /// An error resolving one `select` entry, with the mount and line that asked for it.
    #[error("{at}, mount `{mount}`: {inner}")]
    #[diagnostic(forward(inner))]
    InMount { mount: String, at: String, inner: Box<Error> },

    #[error("memorix.toml has a dependency cycle: {cycle}")]
    #[diagnostic(
        code(memorix::resolve::cycle),
        help(
            "a [sources] folder inside the memory directory would feed a build its own output; move the folder out"
        )
    )]
    Cycle { cycle: String },

    #[error("mount `{mount}` uses {locator}, but [pins] lists no pin files")]
    #[diagnostic(
        code(memorix::resolve::no_pin_files),
        help("add e.g. `[pins] files = [\"requirements.txt\"]` to memorix.toml")
    )]
    NoPinFiles { mount: String, locator: String },

    #[error("mount `{mount}` would mix two versions of {library}: {first}, {second}")]
    #[diagnostic(
        code(memorix::resolve::mixed_versions),
        help("a mount holds one version of a library; use one version selector per library")
    )]
    MixedVersions {
        mount: String,
        library: String,
        /// `LOCATOR gives VERSION`
        first: String,
        second: String,
    },

    #[error("{count} mounts cannot be resolved")]
    #[diagnostic(code(memorix::resolve::mounts), help("each is listed with its own fix"))]
    Mounts {
        count: usize,
        #[related]
        errors: Vec<Error>,
    },

    #[error("memorix.lock: mount `{mount}` {problem}")]
    #[diagnostic(code(memorix::resolve::lock_mismatch), help("run `memorix lock`"))]
    LockMismatch { mount: String, problem: String },
}

impl Error {
    /// The object a Store read found missing (`what`, id).
    pub fn missing_object(&self) -> Option<(&'static str, Id)> {
        match self {
            Error::Store(e) => e.missing_object(),
            Error::View(e) => e.missing_object(),
            _ => None,
        }
    }
}
