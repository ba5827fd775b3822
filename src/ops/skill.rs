//! `memorix skill [--install]`: the agent skill document that teaches an agent the CLI.

use std::path::{Path, PathBuf};

use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::store::fsutil;

pub use crate::harness::SKILL;

/// Writes `DIR/memorix/SKILL.md`; returns its path.
pub fn install(dir: &Path) -> Result<PathBuf> {
    let target = dir.join("memorix");
    fsutil::create_dir(&target)?;
    let file = target.join("SKILL.md");
    std::fs::write(&file, SKILL).map_err(Error::io("write", &file))?;
    Ok(file)
}
