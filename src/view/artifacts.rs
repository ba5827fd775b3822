//! Derived artifacts of a derivation, computed once per derivation id and kept with it in the
//! Store (`derivations/<aa>/<id>/artifacts/`): a built-in, deterministic `SUMMARY.md` of its
//! headings, and the output of each `[artifacts]` hook command (an LLM summariser, an
//! embedder), cached by (derivation id, hash of the command).

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::ops::Range;
use std::process::Command;

use sha2::{Digest, Sha256};

use super::derivation_plan::{Delta, DerivationPlan};
use super::error::Result;
use crate::diagnostics::FromIo;
use crate::manifest::ArtifactDecl;
use crate::model::{Id, Name, StorePath};
use crate::store::{Store, Writer};

pub const SUMMARY: &str = "SUMMARY.md";
/// Each file's title (its first heading), for INDEX.md without reading every blob again.
pub const TITLES: &str = "titles.json";

/// The headings (up to level 3) in the first 64 KiB of the blob at `path`, as (level,
/// text): a real Markdown or reStructuredText heading, or a manifest's description; never a
/// comment of a code or configuration file (book: design/delivery.md#titles).
pub fn headings(store: &Store, path: &str, blob: &Id) -> crate::store::Result<Vec<(usize, String)>> {
    let mut head = Vec::with_capacity(1 << 16);
    store
        .objects()
        .open_blob(blob)?
        .take(1 << 16)
        .read_to_end(&mut head)
        .map_err(crate::store::Error::io("read", &store.objects().blob_path(blob)))?;
    Ok(super::outline::headings(path, &String::from_utf8_lossy(&head)))
}

/// The built-in summary (every file with its outline, a pure function of the derivation) and
/// each file's title. A plan computed from a base derivation takes the base's lines for the
/// files it did not touch, so only changed files are read.
pub fn summary(store: &Store, id: &Id, plan: &DerivationPlan) -> Result<(String, BTreeMap<String, String>)> {
    use std::fmt::Write;
    let base = plan.delta.as_ref().and_then(|d| base_sections(store, plan, d));
    let mut s = header(id, plan.files.len());
    // The base's text is most of the new one: sized up front, not copied as it grows.
    s.reserve(base.as_ref().map_or(0, |(t, _)| t.len() + 4096));
    // Paths come sorted: the map is built in one pass at the end, not by 100k inserts.
    let mut titles = Vec::with_capacity(plan.files.len());
    for (path, origin) in &plan.files {
        if let Some((text, range)) = base.as_ref().and_then(|(t, at)| Some((t, at.get(path)?.clone()))) {
            let section = &text[range];
            // After `` - `path` `` (checked by `base_sections`).
            if let Some(title) = section["- ``".len() + path.as_str().len()..].strip_prefix(": ") {
                titles.push((path.to_string(), title.split('\n').next().unwrap_or_default().to_string()));
            }
            s += section;
            continue;
        }
        let hs = headings(store, path.as_str(), &origin.blob)?;
        match hs.split_first() {
            Some(((_, title), rest)) => {
                let _ = writeln!(s, "- `{path}`: {title}");
                for (level, h) in rest {
                    let _ = writeln!(s, "{}- {h}", "  ".repeat(level.saturating_sub(1).max(1)));
                }
                titles.push((path.to_string(), title.clone()));
            }
            None => {
                let _ = writeln!(s, "- `{path}`");
            }
        }
    }
    Ok((s, titles.into_iter().collect()))
}

fn header(id: &Id, files: usize) -> String {
    format!("# Summary of derivation {id}\n\n{files} files.\n\n")
}

/// The base derivation's `SUMMARY.md` with the byte range of each file's lines, for the files
/// `plan` did not touch. Each file's lines start with `` - `path` `` at the start of a line
/// (outline lines are indented), so splitting there gives one section per base file; `None`
/// unless every section starts with the path expected there.
fn base_sections<'p>(
    store: &Store,
    plan: &'p DerivationPlan,
    delta: &'p Delta,
) -> Option<(String, HashMap<&'p StorePath, Range<usize>>)> {
    let text = String::from_utf8(store.records().artifact(&delta.base, &name(SUMMARY))?).ok()?;
    // The base's files, in order: the untouched ones and the touched ones it had.
    let untouched = plan.files.keys().filter(|p| !delta.paths.contains_key(*p)).map(|p| (p, true));
    let had = delta.paths.iter().filter(|(_, had)| **had).map(|(p, _)| (p, false));
    let mut paths: Vec<(&StorePath, bool)> = untouched.chain(had).collect();
    paths.sort();
    let head = header(&delta.base, paths.len());
    let head = text.starts_with(&head).then_some(head.len())?;
    let mut starts = Vec::with_capacity(paths.len() + 1);
    let mut at = head;
    for line in text[head..].split_inclusive('\n') {
        if line.starts_with("- `") {
            starts.push(at);
        }
        at += line.len();
    }
    if starts.len() != paths.len() || starts.first().is_some_and(|s| *s != head) {
        return None;
    }
    starts.push(text.len());
    let mut sections = HashMap::with_capacity(paths.len());
    for (i, (path, keep)) in paths.into_iter().enumerate() {
        let section = &text[starts[i]..starts[i + 1]];
        let rest = section.strip_prefix("- `")?.strip_prefix(path.as_str())?;
        if !rest.starts_with("`: ") && rest != "`\n" {
            return None;
        }
        if keep {
            sections.insert(path, starts[i]..starts[i + 1]);
        }
    }
    Some((text, sections))
}

/// The titles of a derivation's files, when its artifacts have been computed.
pub fn titles(store: &Store, id: &Id) -> Option<BTreeMap<String, String>> {
    serde_json::from_slice(&store.records().artifact(id, &name(TITLES))?).ok()
}

fn name(text: &str) -> Name {
    Name::new(text).expect("artifact names are file names")
}

/// The file a hook's output for a derivation is cached in.
fn hook_name(hook: &ArtifactDecl) -> Name {
    let digest = hex::encode(Sha256::digest(hook.command.join("\0").as_bytes()));
    name(&format!("{}-{}.txt", hook.name, &digest[..12]))
}

/// A hook's cached output, if it ran.
pub fn hook_output(store: &Store, id: &Id, hook: &ArtifactDecl) -> Option<String> {
    String::from_utf8(store.records().artifact(id, &hook_name(hook))?).ok()
}

/// One hook that failed, or was not run (its output is not cached, so the next build tries
/// again).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HookFailure {
    pub name: String,
    pub derivation: Id,
    pub message: String,
    /// Not run: the user has not trusted the project's hooks on this machine.
    pub untrusted: bool,
}

/// How a build's `[artifacts]` hooks fared.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Whether the user trusted the project's hooks on this machine: only then do they run.
    pub trusted: bool,
    pub failures: Vec<HookFailure>,
    /// Whether a hook ran and its output is new (INDEX.md shows it).
    pub ran: bool,
}

/// Computes what the derivation lacks: its API outline, `SUMMARY.md` and the titles, then
/// each hook's output.
/// A hook runs only when trusted; an output already in the Store (keyed by derivation and
/// command: made before, or by another project with the same selection and hook) needs no
/// run, so no trust.
pub fn ensure(
    writer: &Writer,
    id: &Id,
    plan: &DerivationPlan,
    decls: &[ArtifactDecl],
    hooks: &mut Hooks,
) -> Result<()> {
    let store = writer.store;
    super::api::ensure(writer, id, plan)?;
    if !store.records().has_artifact(id, &name(SUMMARY)) || !store.records().has_artifact(id, &name(TITLES)) {
        let (text, titles) = summary(store, id, plan)?;
        let titles = serde_json::to_vec(&titles).expect("titles serialize");
        writer.records().put_artifact(id, &name(TITLES), &titles)?;
        writer.records().put_artifact(id, &name(SUMMARY), text.as_bytes())?;
    }
    for hook in decls {
        let out = hook_name(hook);
        if store.records().has_artifact(id, &out) {
            continue;
        }
        if !hooks.trusted {
            let message = "not run: the project's hooks are not trusted on this machine".into();
            hooks.failures.push(HookFailure {
                name: hook.name.clone(),
                derivation: *id,
                message,
                untrusted: true,
            });
            continue;
        }
        let tree = writer.records().derivation_tree(&plan.record())?;
        let run = Command::new(&hook.command[0])
            .args(&hook.command[1..])
            .current_dir(&tree)
            .env("MEMORIX_DERIVATION", id.to_string())
            .env("MEMORIX_TREE", &tree)
            .env("MEMORIX_SUMMARY", store.records().artifact_path(id, &name(SUMMARY)))
            .output();
        let message = match run {
            Ok(o) if o.status.success() => {
                writer.records().put_artifact(id, &out, &o.stdout)?;
                hooks.ran = true;
                continue;
            }
            Ok(o) => format!("exited with {}: {}", o.status, String::from_utf8_lossy(&o.stderr).trim()),
            Err(e) => format!("could not run {}: {e}", hook.command[0]),
        };
        hooks.failures.push(HookFailure {
            name: hook.name.clone(),
            derivation: *id,
            message,
            untrusted: false,
        });
    }
    Ok(())
}
