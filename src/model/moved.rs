//! A library version a build moved (book: design/outlines.md#changes): the two versions with
//! the artifacts they came from, and the blob of the `CHANGES.md` that compares them. The last
//! update's moves are recorded in the project, and each profile binding keeps those it
//! delivered, so a rollback places the same `CHANGES.md` and `gc` keeps it.

use serde::{Deserialize, Serialize};

use super::Id;

/// One version of a library: its tree and the artifact it was fetched from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub version: String,
    pub tree: Id,
    /// `pypi httpx-0.23.3.tar.gz sha256:…`, when it was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
}

/// A library whose version a build moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    pub mount: String,
    pub library: String,
    pub from: Side,
    pub to: Side,
    /// `CHANGES.md`'s blob.
    pub changes: Id,
}
