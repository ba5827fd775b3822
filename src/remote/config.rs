//! User-level remotes: `$XDG_CONFIG_HOME/memorix/remotes.toml` (default `~/.config/...`),
//! edited by `memorix remote add|remove`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::model::RemoteUrl;
use crate::store::fsutil;

const HEADER: &str =
    "# memorix remotes: `memorix remote add NAME URL` and `memorix remote remove NAME` edit this file.\n";

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remotes {
    #[serde(default)]
    pub remotes: BTreeMap<String, RemoteEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteEntry {
    pub url: String,
}

/// memorix's user configuration: `$XDG_CONFIG_HOME/memorix`, else `~/.config/memorix`.
pub fn config_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| ".".into());
            home.join(".config")
        });
    base.join("memorix")
}

impl Remotes {
    /// The file's location: `$XDG_CONFIG_HOME/memorix/remotes.toml`, else under `~/.config`.
    pub fn location() -> PathBuf {
        config_dir().join("remotes.toml")
    }

    /// Reads the file (none is no remotes); every URL in it must parse.
    pub fn load(path: &Path) -> Result<Remotes> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Remotes::default()),
            Err(e) => return Err(Error::io("read", path)(e)),
        };
        let remotes: Remotes = toml::from_str(&text)
            .map_err(|e| Error::Config { path: path.to_path_buf(), message: e.message().to_string() })?;
        for (name, entry) in &remotes.remotes {
            RemoteUrl::parse(&entry.url).map_err(|why| Error::Config {
                path: path.to_path_buf(),
                message: format!("remote `{name}`: {:?} {why}", entry.url),
            })?;
        }
        Ok(remotes)
    }

    pub fn save(&self, path: &Path) -> Result<()> {
        let dir = path.parent().expect("the file lives in a directory");
        fsutil::create_dir(dir)?;
        let text = format!("{HEADER}{}", toml::to_string(self).expect("remotes serialize"));
        Ok(fsutil::write_atomic(dir, path, text.as_bytes())?)
    }

    pub fn names(&self) -> Vec<String> {
        self.remotes.keys().cloned().collect()
    }

    pub fn url(&self, name: &str) -> Option<RemoteUrl> {
        self.remotes.get(name).and_then(|e| RemoteUrl::parse(&e.url).ok())
    }
}

/// A remote's name: letters, digits, `-`, `_` and `.`, so it never looks like a URL.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with(['-', '.']);
    if ok {
        return Ok(());
    }
    Err(Error::BadName { name: name.to_string() })
}
