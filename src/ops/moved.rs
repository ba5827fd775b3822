//! The versions the last update moved, `.memorix/moved.json`
//! (book: design/outlines.md#changes): per library, the two versions with the artifacts they
//! came from and the blob of the `CHANGES.md` that compares them. Read by delivery, the
//! agents' index and `explain`.

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::project::Project;
use crate::model::Id;

const RECORD: &str = "moved.json";
/// The file `CHANGES.md` is placed as in a moved library's mount.
pub const CHANGES: &str = "CHANGES.md";

/// One version of a library: its tree and the artifact it was fetched from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Side {
    pub version: String,
    pub tree: Id,
    /// `pypi httpx-0.23.3.tar.gz sha256:…`, when it was fetched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
}

/// A library whose version the last update moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    pub mount: String,
    pub library: String,
    pub from: Side,
    pub to: Side,
    /// `CHANGES.md`'s blob.
    pub changes: Id,
}

/// The moves the last update recorded (none when there is no record, or it does not read).
pub fn recorded(project: &Project) -> Vec<Moved> {
    let text = std::fs::read(project.state_dir.join(RECORD)).ok();
    text.and_then(|t| serde_json::from_slice(&t).ok()).unwrap_or_default()
}

/// Replaces the record.
pub(crate) fn record(project: &Project, moves: &[Moved]) -> Result<()> {
    let json = serde_json::to_vec_pretty(moves).expect("moves serialize");
    crate::store::fsutil::write_atomic(&project.state_dir, &project.state_dir.join(RECORD), &json)?;
    Ok(())
}
