//! What a run received, and replaying it: `memorix run`, `memorix runs`, `memorix checkout`,
//! `memorix diff`.

use std::collections::BTreeMap;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::context::Context;
use super::error::{Error, Result};
use super::project::Project;
use crate::deliver::{self, Delivery};
use crate::diagnostics::FromIo;
use crate::model::{Id, IdPrefix};
use crate::profile::Profile;
use crate::store::Store;
use crate::store::records::{self, EnvFiles, now_rfc3339};

pub const RUNS: &str = "runs.jsonl";

/// One line of `.memorix/runs.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunRecord {
    pub environment: Id,
    pub generation: u64,
    pub command: Vec<String>,
    pub exit_code: Option<i32>,
    pub started: String,
    pub finished: String,
    /// For a search or a read made through `memorix mcp`: what was asked and what it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
}

/// A search or a read made through the MCP server, as the run ledger keeps it: enough to
/// replay it on the same environment and to audit what an agent read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Access {
    /// `search` or `read`.
    pub tool: String,
    /// The query, or the path read.
    pub request: String,
    /// The files answered, each `path:line` with its blob and version.
    pub answered: Vec<Answered>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Answered {
    pub path: String,
    pub lines: String,
    pub blob: Id,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Runs `command` with `MEMORIX_ENVIRONMENT` (and `MEMORIX_PROFILE_GENERATION`) set to what
/// `.memory/` shows, appends the record, and counts a read on the environment's quests.
pub fn run(ctx: &Context, command: &[String]) -> Result<RunRecord> {
    let project = ctx.project()?;
    let profile = Profile::load(&project.state_dir)?;
    let binding = profile.current().cloned().ok_or(Error::NoActiveEnvironment)?;
    let (program, args) = command.split_first().ok_or(Error::NothingToRun)?;
    let started = now_rfc3339();
    let status = Command::new(program)
        .args(args)
        .env("MEMORIX_ENVIRONMENT", binding.environment.to_string())
        .env("MEMORIX_PROFILE_GENERATION", binding.generation.to_string())
        .status()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::CommandNotFound { program: program.clone() },
            std::io::ErrorKind::PermissionDenied => Error::CommandNotExecutable { program: program.clone() },
            _ => Error::io("run", Path::new(program))(e),
        })?;
    let record = RunRecord {
        environment: binding.environment,
        generation: binding.generation,
        command: command.to_vec(),
        exit_code: status.code(),
        started,
        finished: now_rfc3339(),
        access: None,
    };
    append(project, &record)?;
    count_reads(ctx, &binding.environment)?;
    Ok(record)
}

/// Appends one record to the run ledger (`.memorix/runs.jsonl`), one line written at once.
pub fn append(project: &Project, record: &RunRecord) -> Result<()> {
    let path = project.state_dir.join(RUNS);
    let mut line = serde_json::to_string(record).expect("a record serializes");
    line.push('\n');
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(Error::io("append to", &path))
}

/// Bumps `reads` on the quests whose current resolve for this project is what the run read.
fn count_reads(ctx: &Context, env: &Id) -> Result<()> {
    let store = ctx.store()?;
    let writer = store.writer(ctx.progress)?;
    let m = &ctx.project()?.manifest;
    let dir = records::project_key(&m.dir);
    let mut ids = vec![(crate::view::environment_quest(m), String::new())];
    ids.extend(m.mounts.iter().map(|x| (crate::view::derivation_quest(x), x.path.to_string())));
    let record = store.records().read_environment(env)?;
    for (id, mount) in ids {
        let current = if mount.is_empty() {
            Some(*env)
        } else {
            record.mounts.iter().find(|(p, _)| p.as_str() == mount).map(|(_, d)| *d)
        };
        if let Some(current) = current {
            writer.records().count_read(&id, &dir, &mount, &current)?;
        }
    }
    Ok(())
}

pub fn runs(ctx: &Context) -> Result<Vec<RunRecord>> {
    let project = ctx.project()?;
    let path = project.state_dir.join(RUNS);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", &path)(e)),
    };
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| Error::CorruptRunRecord {
                path: path.clone(),
                line: i + 1,
                message: e.to_string(),
            })
        })
        .collect()
}

/// An environment named by a profile generation number or an id prefix.
fn environment(store: &Store, project: Option<&Project>, text: &str) -> Result<Id> {
    if let (Ok(n), Some(p)) = (text.parse::<u64>(), project)
        && text.len() < 8
    {
        let profile = Profile::load(&p.state_dir)?;
        let found = profile.bindings.iter().find(|b| b.generation == n);
        return found.map(|b| b.environment).ok_or(Error::NoSuchProfileGeneration { generation: n });
    }
    let prefix = IdPrefix::parse(text).ok_or_else(|| Error::BadId(text.to_string()))?;
    super::profile::store_environment(store, &prefix)
}

/// `memorix checkout ENV DIR`: any stored environment, materialised for replay.
pub fn checkout(ctx: &Context, env: &str, dir: &Path) -> Result<(Id, usize)> {
    let project = ctx.project_if_any();
    let store = ctx.store()?;
    let id = environment(store, project, env)?;
    if dir.exists() && fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        return Err(Error::CheckoutNotEmpty { dir: dir.to_path_buf() });
    }
    let delivery = Delivery::from_store(store, id, project.map(|p| &p.manifest), 0)?;
    Ok((id, deliver::checkout(store, dir, &delivery)?))
}

fn files_of(store: &Store, id: &Id) -> Result<EnvFiles> {
    Ok(store.records().environment_files(&store.records().read_environment(id)?)?)
}

#[derive(Debug, Serialize)]
pub struct EnvDiff {
    pub from: Id,
    pub to: Id,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
    /// Mounts whose derivation changed: (mount, from, to).
    pub mounts: Vec<(String, Option<Id>, Option<Id>)>,
}

/// `memorix diff A B`: two environments (by profile generation or id).
pub fn diff(ctx: &Context, a: &str, b: &str) -> Result<EnvDiff> {
    let project = ctx.project_if_any();
    let store = ctx.store()?;
    let (from, to) = (environment(store, project, a)?, environment(store, project, b)?);
    let blobs = |f: EnvFiles| -> BTreeMap<String, Id> {
        f.into_iter().map(|(p, (_, b))| (p.to_string(), b)).collect()
    };
    let (x, y) = (blobs(files_of(store, &from)?), blobs(files_of(store, &to)?));
    let mounts_of = |id: &Id| -> Result<BTreeMap<String, Id>> {
        Ok(store
            .records()
            .read_environment(id)?
            .mounts
            .into_iter()
            .map(|(p, d)| (p.to_string(), d))
            .collect())
    };
    let (mx, my) = (mounts_of(&from)?, mounts_of(&to)?);
    let mut names: Vec<&String> = mx.keys().chain(my.keys()).collect();
    names.sort();
    names.dedup();
    Ok(EnvDiff {
        from,
        to,
        added: y.keys().filter(|k| !x.contains_key(*k)).cloned().collect(),
        removed: x.keys().filter(|k| !y.contains_key(*k)).cloned().collect(),
        modified: x
            .iter()
            .filter(|(k, v)| y.get(*k).is_some_and(|w| w != *v))
            .map(|(k, _)| k.clone())
            .collect(),
        mounts: names
            .into_iter()
            .filter(|n| mx.get(*n) != my.get(*n))
            .map(|n| (n.clone(), mx.get(n).copied(), my.get(n).copied()))
            .collect(),
    })
}
