//! Where the registries are: the public ones by default; the user config's `[registries]`
//! (`$XDG_CONFIG_HOME/memorix/config.toml`) for mirrors and private indexes; and
//! `MEMORIX_CRATES_INDEX`, `MEMORIX_PYPI_INDEX`, `MEMORIX_NPM_REGISTRY` over both.

use std::path::PathBuf;

use serde::Deserialize;

use super::Registry;
use super::error::{Error, Result};

/// Base URLs, each ending with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registries {
    /// A sparse index whose `config.json` names `dl`.
    pub crates: String,
    /// A Simple API index.
    pub pypi: String,
    pub npm: String,
}

#[derive(Debug, Default, Deserialize)]
struct UserConfig {
    #[serde(default)]
    registries: RawRegistries,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRegistries {
    #[serde(rename = "crates-io")]
    crates_io: Option<String>,
    pypi: Option<String>,
    npm: Option<String>,
}

impl Registries {
    /// The public registries.
    pub fn public() -> Registries {
        Registries {
            crates: "https://index.crates.io/".into(),
            pypi: "https://pypi.org/simple/".into(),
            npm: "https://registry.npmjs.org/".into(),
        }
    }

    /// Defaults, then the user config, then the environment.
    pub fn load() -> Result<Registries> {
        let config = read_user_config();
        let pick = |reg: Registry, configured: Option<String>, default: String| -> Result<String> {
            let from_env = std::env::var(reg.env()).ok().filter(|v| !v.is_empty());
            base_url(reg.env(), from_env.or(configured).unwrap_or(default))
        };
        let public = Registries::public();
        let r = config.registries;
        Ok(Registries {
            crates: pick(Registry::CratesIo, r.crates_io, public.crates)?,
            pypi: pick(Registry::Pypi, r.pypi, public.pypi)?,
            npm: pick(Registry::Npm, r.npm, public.npm)?,
        })
    }
}

/// `$XDG_CONFIG_HOME/memorix/config.toml`; a missing or unreadable file is no configuration.
fn read_user_config() -> UserConfig {
    let base =
        std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).unwrap_or_else(
            || std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| ".".into()).join(".config"),
        );
    let text = std::fs::read_to_string(base.join("memorix/config.toml")).unwrap_or_default();
    toml::from_str(&text).unwrap_or_default()
}

/// A registry URL, checked to be http(s), with a trailing `/`.
fn base_url(what: &'static str, url: String) -> Result<String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Error::BadRegistryUrl { what, url }.into());
    }
    Ok(if url.ends_with('/') { url } else { format!("{url}/") })
}
