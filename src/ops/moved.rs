//! The versions the last update moved, `.memorix/moved.json`
//! (book: design/outlines.md#changes): per library, the two versions with the artifacts they
//! came from and the blob of the `CHANGES.md` that compares them. Read by delivery, the
//! agents' index and `explain`; each profile binding keeps the moves it delivered.

use super::error::Result;
use super::project::Project;
pub use crate::model::moved::{Moved, Side};

/// The file `CHANGES.md` is placed as in a moved library's mount.
pub const CHANGES: &str = "CHANGES.md";

/// The moves the last update recorded (none when there is no record, or it does not read).
pub fn recorded(project: &Project) -> Vec<Moved> {
    project.moved()
}

/// The moves whose `CHANGES.md` the current profile binding delivers (the last update's, for
/// a binding recorded before memorix kept them).
pub fn delivered(project: &Project) -> Vec<Moved> {
    let profile = crate::profile::Profile::load(&project.state_dir).ok();
    let bound = profile.and_then(|p| p.current().and_then(|b| b.moved.clone()));
    bound.unwrap_or_else(|| recorded(project))
}

/// Replaces the record.
pub(crate) fn record(project: &Project, moves: &[Moved]) -> Result<()> {
    let json = serde_json::to_vec_pretty(moves).expect("moves serialize");
    crate::store::fsutil::write_atomic(
        &project.state_dir,
        &project.state_dir.join(super::project::MOVED),
        &json,
    )?;
    Ok(())
}
