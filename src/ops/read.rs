//! What the MCP server answers besides search: a delivered file's lines with where they came
//! from, the environment's libraries with their pins and artifacts, and the run ledger's
//! record of what an agent searched and read (book: mcp.md).

use std::io::Read;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use super::explain::{Explanation, explain};
use super::history::{Access, Answered, RunRecord};
use super::search::{Scope, SearchOutcome, Source, cut, scope};
use crate::diagnostics::FromIo;
use crate::model::Id;
use crate::profile::Profile;
use crate::store::records::now_rfc3339;

/// Lines longer than this are cut in a read (a minified file is one line).
const READ_LINE: usize = 2000;

pub struct ReadRequest {
    /// A path in the memory directory (`libs/httpx/docs/api.md` or `.memory/libs/...`).
    pub path: String,
    /// First line, from 1.
    pub from: Option<usize>,
    /// Last line (inclusive).
    pub to: Option<usize>,
    /// At most this many bytes of text.
    pub budget: usize,
}

/// Lines of a delivered file, and where they came from.
#[derive(Debug, Serialize)]
pub struct ReadOutcome {
    pub path: String,
    pub from: usize,
    /// The last line returned (less than asked when the budget or the file ended first).
    pub to: usize,
    pub lines: usize,
    pub text: String,
    /// Whether the budget cut the range short.
    pub truncated: bool,
    pub library: Option<String>,
    pub version: Option<String>,
    pub provenance: Explanation,
}

pub fn read(ctx: &Context, req: &ReadRequest) -> Result<ReadOutcome> {
    let provenance = explain(ctx, &req.path)?;
    let store = ctx.store()?;
    let path = store.objects().blob_path(&provenance.blob);
    let mut bytes = Vec::new();
    store.objects().open_blob(&provenance.blob)?.read_to_end(&mut bytes).map_err(Error::io("read", &path))?;
    let text = String::from_utf8_lossy(&bytes);
    let lines = text.lines().count();
    let from = req.from.unwrap_or(1).max(1);
    let last = req.to.unwrap_or(lines).min(lines);
    let (mut out, mut to, mut truncated) = (String::new(), from.saturating_sub(1), false);
    for line in text.lines().skip(from - 1).take((last + 1).saturating_sub(from)) {
        let line = cut(line, READ_LINE);
        if out.len() + line.len() + 1 > req.budget {
            truncated = true;
            break;
        }
        out.push_str(&line);
        out.push('\n');
        to += 1;
    }
    let mount = scope(ctx, None)?.mounts.into_iter().find(|m| m.path.as_str() == provenance.mount);
    Ok(ReadOutcome {
        path: provenance.path.clone(),
        from,
        to,
        lines,
        text: out,
        truncated,
        library: mount.as_ref().and_then(|m| m.library()),
        version: provenance.version.clone().or_else(|| mount.and_then(|m| m.version())),
        provenance,
    })
}

/// One library (or other mount) of the environment.
#[derive(Debug, Serialize)]
pub struct Library {
    pub mount: String,
    pub library: Option<String>,
    pub version: Option<String>,
    /// `file:line` of the pin that chose the version, for `@pin` locators.
    pub pinned_at: Option<String>,
    pub derivation: Id,
    /// Each locator with what it resolved to and, for fetched docs, the registry artifact and
    /// its hash.
    pub sources: Vec<Source>,
}

#[derive(Debug, Serialize)]
pub struct Libraries {
    pub environment: Id,
    pub libraries: Vec<Library>,
}

pub fn libraries(ctx: &Context) -> Result<Libraries> {
    let Scope { environment, mounts } = scope(ctx, None)?;
    // What the pin files say now; a pin that no longer resolves just has no line.
    let pins = super::pins::pins(ctx).unwrap_or_default();
    let libraries = mounts
        .into_iter()
        .map(|m| {
            let pinned_at = pins
                .iter()
                .find(|p| p.mount == m.path.as_str() && m.sources.iter().any(|s| s.locator == p.locator))
                .map(|p| p.pin.at.clone());
            Library {
                mount: m.path.to_string(),
                library: m.library(),
                version: m.version(),
                pinned_at,
                derivation: m.derivation,
                sources: m.sources,
            }
        })
        .collect();
    Ok(Libraries { environment, libraries })
}

/// Appends a search's answers to the run ledger.
pub fn record_search(ctx: &Context, out: &SearchOutcome) -> Result<()> {
    let answered = out
        .hits
        .iter()
        .map(|h| Answered {
            path: h.path.clone(),
            lines: h.line.to_string(),
            blob: h.blob,
            version: h.version.clone(),
        })
        .collect();
    record(ctx, Access { tool: "search".into(), request: out.query.clone(), answered })
}

/// Appends a read to the run ledger.
pub fn record_read(ctx: &Context, out: &ReadOutcome) -> Result<()> {
    let answered = vec![Answered {
        path: out.path.clone(),
        lines: format!("{}-{}", out.from, out.to),
        blob: out.provenance.blob,
        version: out.version.clone(),
    }];
    record(ctx, Access { tool: "read".into(), request: out.path.clone(), answered })
}

fn record(ctx: &Context, access: Access) -> Result<()> {
    let project = ctx.project()?;
    let binding = Profile::load(&project.state_dir)?.current().cloned().ok_or(Error::NoActiveEnvironment)?;
    let time = now_rfc3339();
    let record = RunRecord {
        environment: binding.environment,
        generation: binding.generation,
        command: vec!["memorix".into(), "mcp".into(), access.tool.clone(), access.request.clone()],
        exit_code: Some(0),
        started: time.clone(),
        finished: time,
        access: Some(access),
    };
    super::history::append(project, &record)
}
