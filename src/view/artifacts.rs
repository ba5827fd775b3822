//! Derived artifacts of a derivation, computed once per derivation id and kept with it in the
//! Store (`derivations/<aa>/<id>/artifacts/`): a built-in, deterministic `SUMMARY.md` of its
//! headings, and the output of each `[artifacts]` hook command (an LLM summariser, an
//! embedder), cached by (derivation id, hash of the command).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

use sha2::{Digest, Sha256};

use super::derivation::DerivationPlan;
use crate::diagnostics::{Error, Result};
use crate::manifest::ArtifactDecl;
use crate::model::Id;
use crate::store::{Store, Writer, fsutil};

pub const SUMMARY: &str = "SUMMARY.md";
/// Each file's title (its first heading), for INDEX.md without reading every blob again.
pub const TITLES: &str = "titles.json";

/// The Markdown headings (up to `###`) in the first 64 KiB of a blob, as (level, text).
pub fn headings(store: &Store, blob: &Id) -> Result<Vec<(usize, String)>> {
    let mut head = Vec::with_capacity(1 << 16);
    store
        .open_blob(blob)?
        .take(1 << 16)
        .read_to_end(&mut head)
        .map_err(Error::io("read", &store.blob_path(blob)))?;
    let text = String::from_utf8_lossy(&head);
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let level = line.chars().take_while(|c| *c == '#').count();
        let rest = &line[level..];
        if !fenced && (1..=3).contains(&level) && rest.starts_with(' ') && !rest.trim().is_empty() {
            out.push((level, rest.trim().to_string()));
        }
    }
    Ok(out)
}

/// The built-in summary (every file with its outline, a pure function of the derivation) and
/// each file's title.
pub fn summary(store: &Store, id: &Id, plan: &DerivationPlan) -> Result<(String, BTreeMap<String, String>)> {
    let mut s = format!("# Summary of derivation {id}\n\n{} files.\n\n", plan.files.len());
    let mut titles = BTreeMap::new();
    for (path, origin) in &plan.files {
        let hs = headings(store, &origin.blob)?;
        match hs.split_first() {
            Some(((_, title), rest)) => {
                titles.insert(path.to_string(), title.clone());
                writeln!(s, "- `{path}`: {title}").expect("string");
                for (level, h) in rest {
                    writeln!(s, "{}- {h}", "  ".repeat(level.saturating_sub(1).max(1))).expect("string");
                }
            }
            None => writeln!(s, "- `{path}`").expect("string"),
        }
    }
    Ok((s, titles))
}

/// The titles of a derivation's files, when its artifacts have been computed.
pub fn titles(store: &Store, id: &Id) -> Option<BTreeMap<String, String>> {
    serde_json::from_slice(&fs::read(artifacts_dir(store, id).join(TITLES)).ok()?).ok()
}

fn artifacts_dir(store: &Store, id: &Id) -> PathBuf {
    store.derivation_dir(id).join("artifacts")
}

/// Where a hook's output for this derivation is cached.
fn hook_path(store: &Store, id: &Id, hook: &ArtifactDecl) -> PathBuf {
    let digest = hex::encode(Sha256::digest(hook.command.join("\0").as_bytes()));
    artifacts_dir(store, id).join(format!("{}-{}.txt", hook.name, &digest[..12]))
}

/// A hook's cached output, if it ran.
pub fn hook_output(store: &Store, id: &Id, hook: &ArtifactDecl) -> Option<String> {
    fs::read_to_string(hook_path(store, id, hook)).ok()
}

/// One hook that failed (its output is not cached, so the next build tries again).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookFailure {
    pub name: String,
    pub derivation: Id,
    pub message: String,
}

impl Writer<'_> {
    /// Computes what the derivation lacks: `SUMMARY.md`, then each hook's output.
    pub fn ensure_artifacts(
        &self,
        id: &Id,
        plan: &DerivationPlan,
        hooks: &[ArtifactDecl],
    ) -> Result<Vec<HookFailure>> {
        let dir = artifacts_dir(self.store, id);
        fsutil::create_dir(&dir)?;
        let summary_path = dir.join(SUMMARY);
        if !summary_path.exists() || !dir.join(TITLES).exists() {
            let (text, titles) = summary(self.store, id, plan)?;
            let titles = serde_json::to_vec(&titles).expect("titles serialize");
            fsutil::write_atomic_mode(&self.store.tmp_dir(), &dir.join(TITLES), &titles, 0o444)?;
            fsutil::write_atomic_mode(&self.store.tmp_dir(), &summary_path, text.as_bytes(), 0o444)?;
        }
        let mut failures = Vec::new();
        for hook in hooks {
            let out = hook_path(self.store, id, hook);
            if out.exists() {
                continue;
            }
            let tree = self.store.derivation_dir(id).join("tree");
            let run = Command::new(&hook.command[0])
                .args(&hook.command[1..])
                .current_dir(&tree)
                .env("MEMORIX_DERIVATION", id.to_string())
                .env("MEMORIX_TREE", &tree)
                .env("MEMORIX_SUMMARY", &summary_path)
                .output();
            match run {
                Ok(o) if o.status.success() => {
                    fsutil::write_atomic_mode(&self.store.tmp_dir(), &out, &o.stdout, 0o444)?;
                }
                Ok(o) => failures.push(HookFailure {
                    name: hook.name.clone(),
                    derivation: *id,
                    message: format!(
                        "exited with {}: {}",
                        o.status,
                        String::from_utf8_lossy(&o.stderr).trim()
                    ),
                }),
                Err(e) => failures.push(HookFailure {
                    name: hook.name.clone(),
                    derivation: *id,
                    message: format!("could not run {}: {e}", hook.command[0]),
                }),
            }
        }
        Ok(failures)
    }
}
