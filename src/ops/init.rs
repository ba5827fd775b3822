//! `memorix init`: a commented starter manifest and the `.memorix/` state directory.

use std::path::Path;

use serde::Serialize;

use crate::diagnostics::{Error, Result};
use crate::manifest::{self, init::starter};
use crate::store::fsutil;

#[derive(Debug, Serialize)]
pub struct InitOutcome {
    pub manifest: String,
    pub name: String,
}

pub fn init(dir: &Path, name: Option<&str>) -> Result<InitOutcome> {
    let path = dir.join(manifest::FILE);
    if path.exists() {
        return Err(Error::usage(
            format!("{} already exists", path.display()),
            Some("edit it, or remove it to start over".to_string()),
        ));
    }
    let name = match name {
        Some(n) => n.to_string(),
        None => dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "project".to_string()),
    };
    let state = dir.join(".memorix");
    fsutil::create_dir(&state)?;
    fsutil::write_atomic(&state, &path, starter(&name).as_bytes())?;
    Ok(InitOutcome { manifest: path.display().to_string(), name })
}
