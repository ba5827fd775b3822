//! `memorix trust [--revoke]`: the commands a project's memorix.toml names (`[artifacts]`
//! hooks) run only in a project the user trusted on this machine, as `direnv allow` and
//! `mise trust` work: a plain `memorix build` of a fresh clone never runs them. Trust is kept
//! in the user's configuration, keyed by the project's canonical path and a hash of its hooks,
//! so an edited hook (or a project moved elsewhere) needs trusting again.

use std::path::{Path, PathBuf};

use miette::Diagnostic;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::context::Context;
use super::error::Result;
use super::project::Project;
use crate::diagnostics::FromIo;
use crate::manifest::ArtifactDecl;
use crate::remote::config::config_dir;
use crate::store::fsutil;

/// One trusted project: `$XDG_CONFIG_HOME/memorix/trusted/<hash of its path>.toml`.
#[derive(Serialize, Deserialize)]
struct Record {
    project: PathBuf,
    hooks: String,
}

/// A hook as `memorix trust` and a build's notice show it.
#[derive(Debug, Clone, Serialize)]
pub struct Hook {
    pub name: String,
    pub command: Vec<String>,
}

/// What `memorix trust` recorded, or `--revoke` removed.
#[derive(Debug, Serialize)]
pub struct Trust {
    pub project: PathBuf,
    /// `sha256:<hex>` of the hooks trusted.
    pub hooks_hash: String,
    pub hooks: Vec<Hook>,
    /// Whether the record changed: a new trust, or a trust that was there and is gone.
    pub changed: bool,
}

/// The notice of a build that left hooks unrun: a warning, not an error (the memory is
/// built; only the hooks' outputs are missing, and the next build after a trust adds them).
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error(
    "memorix.toml's [artifacts] hooks were not run: {names}. memorix runs a project's commands only where you trusted them on this machine"
)]
#[diagnostic(
    code(memorix::trust::untrusted),
    severity(Warning),
    help(
        "read the hooks in memorix.toml (`memorix trust` lists them too), then run `memorix trust`; the next `memorix build` runs them"
    )
)]
pub struct Untrusted {
    pub names: String,
}

/// The hooks of `hooks` as trust covers them: names and commands, in order.
pub fn hooks_hash(hooks: &[ArtifactDecl]) -> String {
    let listed: Vec<(&str, &[String])> =
        hooks.iter().map(|h| (h.name.as_str(), h.command.as_slice())).collect();
    let json = serde_json::to_vec(&listed).expect("hooks serialize");
    format!("sha256:{}", hex::encode(Sha256::digest(json)))
}

fn record_path(project: &Path) -> PathBuf {
    let key = hex::encode(Sha256::digest(project.as_os_str().as_encoded_bytes()));
    config_dir().join("trusted").join(format!("{}.toml", &key[..32]))
}

/// Whether the user trusted `project`'s hooks as memorix.toml has them now.
pub fn is_trusted(project: &Project) -> bool {
    let real = project.confined.real();
    let Ok(text) = std::fs::read_to_string(record_path(real)) else { return false };
    toml::from_str::<Record>(&text)
        .is_ok_and(|r| r.project == real && r.hooks == hooks_hash(&project.manifest.artifacts))
}

/// Records trust in the project, for its hooks as they are now.
pub fn trust(ctx: &Context) -> Result<Trust> {
    let project = ctx.project()?;
    let mut out = described(project);
    out.changed = !is_trusted(project);
    let path = record_path(&out.project);
    let dir = path.parent().expect("the record lies in a directory");
    fsutil::create_dir(dir)?;
    let record = Record { project: out.project.clone(), hooks: out.hooks_hash.clone() };
    let text = format!(
        "# Written by `memorix trust`: the [artifacts] hooks of this project may run.\n{}",
        toml::to_string(&record).expect("a record serializes")
    );
    fsutil::write_atomic(dir, &path, text.as_bytes())?;
    Ok(out)
}

/// Removes the trust of the project.
pub fn revoke(ctx: &Context) -> Result<Trust> {
    let mut out = described(ctx.project()?);
    let path = record_path(&out.project);
    out.changed = match std::fs::remove_file(&path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(super::error::Error::io("remove", &path)(e)),
    };
    Ok(out)
}

fn described(project: &Project) -> Trust {
    let hooks = &project.manifest.artifacts;
    Trust {
        project: project.confined.real().to_path_buf(),
        hooks_hash: hooks_hash(hooks),
        hooks: hooks.iter().map(|h| Hook { name: h.name.clone(), command: h.command.clone() }).collect(),
        changed: false,
    }
}
