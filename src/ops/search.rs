//! `memorix search QUERY`: ranked full-text search over an environment's files, answered with
//! the file, line, library and version an agent can cite (book: search.md).

use std::io::Read;

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use crate::diagnostics::FromIo;
use crate::lock::{LockedFetch, LockedPin};
use crate::model::{Id, IdPrefix, Kind, Locator, StorePath};
use crate::profile::Profile;
use crate::search::{self, Searchable};
use crate::store::Store;

/// Snippets show at most this many bytes of a line.
const SNIPPET_LINE: usize = 160;

pub struct SearchRequest {
    pub query: String,
    /// An environment id (prefix); the current profile's environment when `None`.
    pub env: Option<String>,
    /// Only the mounts of this library (or at this mount path).
    pub lib: Option<String>,
    pub kind: Option<Kind>,
    pub limit: usize,
    /// Answer at most this many bytes, as `memorix search` prints them.
    pub budget: Option<usize>,
}

/// One locator of a mount, with what it resolved to.
#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub locator: String,
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<LockedPin>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<LockedFetch>,
}

/// A mount of the searched environment.
#[derive(Debug, Clone)]
pub struct Mount {
    pub path: StorePath,
    pub derivation: Id,
    pub sources: Vec<Source>,
}

impl Mount {
    /// The library it delivers: the pin's, else the first name after a docs locator's kind.
    pub fn library(&self) -> Option<String> {
        let s = self.sources.first()?;
        if let Some(pin) = &s.pin {
            return Some(pin.library.clone());
        }
        let loc = Locator::parse(&s.locator).ok().filter(|l| l.kind == Kind::Docs)?;
        loc.path.components().next().map(str::to_string)
    }

    /// The version all its versioned locators agree on.
    pub fn version(&self) -> Option<String> {
        let mut vs = self.sources.iter().filter_map(|s| s.version.clone());
        let first = vs.next()?;
        vs.all(|v| v == first).then_some(first)
    }

    fn kinds(&self) -> Vec<Kind> {
        self.sources.iter().filter_map(|s| Locator::parse(&s.locator).ok().map(|l| l.kind)).collect()
    }
}

/// The environment a search or an MCP answer reads, with its mounts.
pub struct Scope {
    pub environment: Id,
    pub mounts: Vec<Mount>,
}

/// The environment named by `env` (an id prefix), else the current profile's.
pub fn scope(ctx: &Context, env: Option<&str>) -> Result<Scope> {
    let store = ctx.store()?;
    let project = ctx.project()?;
    let environment = match env {
        Some(text) => {
            let prefix = IdPrefix::parse(text).ok_or_else(|| Error::BadId(text.to_string()))?;
            super::profile::store_environment(store, &prefix)?
        }
        None => Profile::load(&project.state_dir)?.current().ok_or(Error::NoActiveEnvironment)?.environment,
    };
    let record = store.records().read_environment(&environment)?;
    let lock = project.clean_lock().ok().flatten();
    let mut mounts = Vec::new();
    for (path, derivation) in record.mounts {
        let locked = lock.and_then(|l| l.mounts.get(path.as_str())).filter(|m| m.derivation == derivation);
        let sources = match locked {
            Some(m) => m
                .locators
                .iter()
                .map(|l| Source {
                    locator: l.locator.clone(),
                    version: l.version.clone(),
                    pin: l.pin.clone(),
                    fetched: l.fetched.clone(),
                })
                .collect(),
            None => store
                .records()
                .read_derivation(&derivation)?
                .provenance
                .into_iter()
                .map(|p| Source { locator: p.locator, version: p.version, pin: None, fetched: None })
                .collect(),
        };
        mounts.push(Mount { path, derivation, sources });
    }
    Ok(Scope { environment, mounts })
}

/// One ranked answer.
#[derive(Debug, Serialize)]
pub struct SearchHit {
    /// Path in the memory directory.
    pub path: String,
    /// The line that matches best.
    pub line: u64,
    pub library: Option<String>,
    pub version: Option<String>,
    pub mount: String,
    pub blob: Id,
    pub derivation: Id,
    pub score: f32,
    pub snippet: String,
}

impl SearchHit {
    /// Its size as `memorix search` prints it: `path:line  lib@version`, then each snippet
    /// line indented by four spaces.
    pub fn printed_len(&self) -> usize {
        let cite = self
            .library
            .as_ref()
            .map_or(0, |l| 2 + l.len() + self.version.as_ref().map_or(0, |v| 1 + v.len()));
        let head = self.path.len() + 1 + self.line.to_string().len() + cite + 1;
        head + self.snippet.lines().map(|l| 4 + l.len() + 1).sum::<usize>()
    }
}

#[derive(Debug, Serialize)]
pub struct SearchOutcome {
    pub environment: Id,
    pub query: String,
    pub hits: Vec<SearchHit>,
    /// Hits left out to keep within the budget.
    pub omitted: usize,
}

pub fn search(ctx: &Context, req: &SearchRequest) -> Result<SearchOutcome> {
    let scope = scope(ctx, req.env.as_deref())?;
    let mounts: Vec<&Mount> = scope
        .mounts
        .iter()
        .filter(|m| req.lib.as_ref().is_none_or(|lib| wanted(m, lib)))
        .filter(|m| req.kind.is_none_or(|k| m.kinds().contains(&k)))
        .collect();
    if let Some(lib) = req.lib.as_ref().filter(|_| mounts.is_empty()) {
        return Err(Error::NoSuchLibrary { name: lib.clone() });
    }
    let indexes = open_indexes(ctx, &mounts)?;
    let store = ctx.store()?;
    let terms = search::tokens::query_terms(&req.query);
    let mut out = SearchOutcome {
        environment: scope.environment,
        query: req.query.clone(),
        hits: Vec::new(),
        omitted: 0,
    };
    let mut used = 0;
    for hit in search::search(&indexes, &req.query, req.limit)? {
        let m = mounts[hit.index];
        let (line, snippet) = snippet(store, &hit, &terms)?;
        let mut found = SearchHit {
            path: format!("{}/{}", m.path, hit.path),
            line,
            library: m.library(),
            version: m.version(),
            mount: m.path.to_string(),
            blob: hit.blob,
            derivation: m.derivation,
            score: hit.score,
            snippet,
        };
        let over = |found: &SearchHit| req.budget.is_some_and(|b| used + found.printed_len() > b);
        // The best answer keeps its citation when its lines do not fit.
        if out.hits.is_empty() && over(&found) {
            found.snippet.clear();
        }
        if over(&found) || out.omitted > 0 {
            out.omitted += 1;
            continue;
        }
        used += found.printed_len();
        out.hits.push(found);
    }
    Ok(out)
}

/// Whether `lib` names the mount's library or its path.
fn wanted(m: &Mount, lib: &str) -> bool {
    m.path.as_str() == lib.trim_end_matches('/') || m.library().is_some_and(|l| l.eq_ignore_ascii_case(lib))
}

/// The mounts' indexes, one per mount in order: built first for derivations stored before
/// search existed, and built again where a stored one is damaged.
pub fn open_indexes(ctx: &Context, mounts: &[&Mount]) -> Result<Vec<Searchable>> {
    let store = ctx.store()?;
    let mut writer = None;
    let mut out = Vec::with_capacity(mounts.len());
    for m in mounts {
        if let Ok(Some(index)) = search::open(store, &m.derivation) {
            out.push(index);
            continue;
        }
        if writer.is_none() {
            writer = Some(ctx.writer()?);
        }
        let record = store.records().read_derivation(&m.derivation)?;
        search::put(writer.as_ref().expect("just taken"), &m.derivation, &record)?;
        let corrupt = || search::Error::Corrupt { derivation: m.derivation, reason: "not stored".into() };
        out.push(search::open(store, &m.derivation)?.ok_or_else(corrupt)?);
    }
    Ok(out)
}

/// The best line of a hit's chunk (the one with the most query words) and the lines around it.
fn snippet(store: &Store, hit: &search::Hit, terms: &[String]) -> Result<(u64, String)> {
    let path = store.objects().blob_path(&hit.blob);
    let mut text = String::new();
    let mut bytes = Vec::new();
    store
        .objects()
        .open_blob(&hit.blob)?
        .take(search::MAX_FILE)
        .read_to_end(&mut bytes)
        .map_err(Error::io("read", &path))?;
    text.push_str(&String::from_utf8_lossy(&bytes));
    let first = hit.line.max(1) as usize;
    let lines: Vec<&str> =
        text.lines().skip(first - 1).take((hit.end as usize + 1).saturating_sub(first)).collect();
    let score = |l: &str| {
        let mut n = 0;
        search::tokens::each(l, |_, _, t| n += usize::from(terms.contains(&t)));
        n
    };
    let best = (0..lines.len()).max_by_key(|i| (score(lines[*i]), std::cmp::Reverse(*i))).unwrap_or(0);
    let shown = lines[best.saturating_sub(1)..(best + 2).min(lines.len())]
        .iter()
        .map(|l| cut(l.trim_end(), SNIPPET_LINE))
        .filter(|l| !l.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Ok(((first + best) as u64, shown))
}

/// `s` without control characters (third-party text reaches a terminal), cut to at most `max`
/// bytes at a character boundary, with `…` when cut.
pub fn cut(s: &str, max: usize) -> String {
    let s: String = s.chars().map(|c| if c == '\t' { ' ' } else { c }).filter(|c| !c.is_control()).collect();
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
