//! What can go wrong building or reading a search index.

use miette::Diagnostic;

use crate::model::Id;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error("could not build the search index of derivation {derivation}: {reason}")]
    #[diagnostic(
        code(memorix::search::build),
        help(
            "the derivation's files are in the Store (`memorix verify` checks them); report this with the derivation id"
        )
    )]
    Build { derivation: Id, reason: String },

    #[error("the search index of derivation {derivation} is unreadable: {reason}")]
    #[diagnostic(
        code(memorix::search::corrupt),
        help(
            "`memorix search` builds a damaged index again; if this persists, `memorix verify` checks the Store"
        )
    )]
    Corrupt { derivation: Id, reason: String },
}
