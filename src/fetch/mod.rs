//! Fetchers (book: design/fetching.md): `git` takes a git source at its commit; the rest
//! fetches the docs of a pinned library, from the release artifact its registry serves for the
//! pinned version, verified by the hash the pin file records (or, where it records none, by the
//! one memorix.lock recorded the first time), unpacked into the docs view and ingested as
//! `docs/<lib>/` version V — the generation a hand `memorix ingest docs/<lib>/ DIR --version V`
//! makes. Everything is downloaded, verified and unpacked before the Store is touched, so a bad
//! artifact stores nothing.

pub mod archive;
mod crates;
mod error;
pub mod git;
pub mod hash;
mod http;
mod npm;
mod pypi;
mod registries;
pub mod select;

use serde::Serialize;

pub use error::{Error, Result};
use hash::ArtifactHash;
pub use registries::Registries;
pub use select::Filter;

use crate::model::{Id, Locator, StorePath};
use crate::pins::{Ecosystem, PinnedArtifact};
use crate::progress::Progress;
use crate::store::Writer;
use crate::store::objects::{Dir, Tree};
use crate::store::records::{FetchRecord, VersionLabel};

/// A registry memorix fetches from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Registry {
    CratesIo,
    Pypi,
    Npm,
}

impl Registry {
    /// The registry that serves an ecosystem's packages, if memorix fetches from it.
    pub fn of(eco: Ecosystem) -> Option<Registry> {
        match eco {
            Ecosystem::Cargo => Some(Registry::CratesIo),
            Ecosystem::Python => Some(Registry::Pypi),
            Ecosystem::Npm => Some(Registry::Npm),
            _ => None,
        }
    }

    /// The registry `memorix.lock` (or the Store's fetch record) names.
    pub fn parse(name: &str) -> Option<Registry> {
        [Registry::CratesIo, Registry::Pypi, Registry::Npm].into_iter().find(|r| r.as_str() == name)
    }

    /// The name `memorix.lock` records.
    pub fn as_str(self) -> &'static str {
        match self {
            Registry::CratesIo => "crates-io",
            Registry::Pypi => "pypi",
            Registry::Npm => "npm",
        }
    }

    /// The environment variable that points it elsewhere.
    pub fn env(self) -> &'static str {
        match self {
            Registry::CratesIo => "MEMORIX_CRATES_INDEX",
            Registry::Pypi => "MEMORIX_PYPI_INDEX",
            Registry::Npm => "MEMORIX_NPM_REGISTRY",
        }
    }
}

/// What memorix.lock recorded of an earlier fetch of this locator: every fetch must match it.
#[derive(Debug, Clone)]
pub struct Locked {
    pub artifact: String,
    pub hash: String,
    /// The tree the lock has; `None` when the lock's entry is not a fetch to reproduce.
    pub tree: Option<Id>,
}

/// One library at one version to fetch, and what accepts it.
#[derive(Debug, Clone)]
pub struct Request {
    pub registry: Registry,
    /// Normalized name.
    pub library: String,
    /// The name the registry serves it under, as the pin file records it (checked against
    /// the ecosystem's grammar when the pin file was read).
    pub package: String,
    /// As pinned; the registry is asked for exactly this one.
    pub version: String,
    /// The version the docs are tagged with (a local label stripped).
    pub docs_version: String,
    /// Where it is ingested: `docs/<lib>/`.
    pub dest: Locator,
    /// What the pin file records: artifacts with their hashes.
    pub pinned: Vec<PinnedArtifact>,
    /// The pin file as listed, and `file:line` of the pin, for messages.
    pub pin_file: String,
    pub site: String,
    pub locked: Option<Locked>,
    pub filter: Filter,
}

impl Request {
    /// The pin file's hashes that memorix can verify, each with the file it names (if any).
    pub fn accepted(&self) -> Vec<(Option<String>, ArtifactHash)> {
        let parse = |a: &PinnedArtifact| Some((a.file.clone(), ArtifactHash::parse(a.hash.as_deref()?)?));
        self.pinned.iter().filter_map(parse).collect()
    }

    fn not_found(&self, registry: Registry, url: &str, answer: String, known: String) -> Box<Error> {
        Box::new(Error::NotFound {
            registry: registry.as_str(),
            what: format!("{} {}", self.library, self.version),
            url: url.to_string(),
            answer,
            site: self.site.clone(),
            known: if known.is_empty() { "none".into() } else { known },
        })
    }
}

/// An artifact a registry offers for a request.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub url: String,
    pub file: String,
    /// The hash the registry publishes for it.
    pub published: Option<ArtifactHash>,
}

/// One library fetched and ingested.
#[derive(Debug, Clone, Serialize)]
pub struct Fetched {
    pub registry: Registry,
    pub library: String,
    pub version: String,
    pub artifact: String,
    pub url: String,
    /// The hash it was verified by, as memorix.lock records it.
    pub hash: String,
    /// What said the hash: `Cargo.lock`, `memorix.lock`, or the registry (trust on first use).
    pub verified_by: String,
    pub place: String,
    pub tree: Id,
    pub files: usize,
    /// Archive entries left out as unsafe (links, devices, `..`, too large).
    pub skipped: usize,
    pub bytes: usize,
}

/// How many artifacts are downloaded at once: enough to hide latency, few enough to be polite
/// to a registry (cargo and npm use a handful of connections per host too).
const PARALLEL: usize = 8;

/// Downloaded, verified and cut to the docs view; not yet in the Store.
struct Ready {
    cand: Candidate,
    hash: ArtifactHash,
    verified_by: String,
    files: Vec<(String, Vec<u8>)>,
    /// How many of `files` a Store path can hold (set when staged).
    kept: usize,
    skipped: usize,
    bytes: usize,
}

/// What became of one request: fetched and ingested, or why not. One failure never stops the
/// others.
#[derive(Debug)]
pub struct Outcome {
    pub request: Request,
    pub result: Result<Fetched>,
}

/// Fetches every request, several at once over one connection pool, and ingests each as soon
/// as it is downloaded and verified (so only a few artifacts are in memory at a time); returns
/// each request's outcome, in request order. Only a client that cannot be built fails all.
pub fn fetch_all(
    writer: &Writer,
    registries: &Registries,
    requests: Vec<Request>,
    progress: &dyn Progress,
) -> Result<Vec<Outcome>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let client = http::Client::new()?;
    // crates.io's `config.json`, read once by the first crate's worker.
    let dl = std::sync::OnceLock::new();
    let n = requests.len();
    let task = progress.start("fetching", n as u64);
    // Popped from the back: reversed, so requests start in order.
    let queue = std::sync::Mutex::new(requests.into_iter().enumerate().rev().collect::<Vec<_>>());
    let mut outcomes: Vec<Option<Outcome>> = Vec::new();
    outcomes.resize_with(n, || None);
    let mut staged = Vec::new();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..n.min(PARALLEL) {
            let (tx, queue, client, dl) = (tx.clone(), &queue, &client, &dl);
            s.spawn(move || {
                while let Some((i, req)) = queue.lock().ok().and_then(|mut q| q.pop()) {
                    let ready = prepare(client, registries, dl, &req);
                    if tx.send((i, req, ready)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // Each verified artifact is written to the Store's tmp/ as it arrives, so only the few
        // being downloaded are in memory.
        for (i, req, ready) in rx {
            match ready.and_then(|r| stage(writer, &req, r)) {
                Ok(st) => staged.push((i, req, st)),
                Err(e) => outcomes[i] = Some(Outcome { request: req, result: Err(e) }),
            }
            task.advance(1);
        }
    });
    drop(task);
    for (i, req, fetched) in ingest_all(writer, staged)? {
        outcomes[i] = Some(Outcome { request: req, result: Ok(fetched) });
    }
    Ok(outcomes.into_iter().flatten().collect())
}

/// Downloads, verifies and unpacks one request.
fn prepare(
    client: &http::Client,
    registries: &Registries,
    dl: &std::sync::OnceLock<Result<String>>,
    req: &Request,
) -> Result<Ready> {
    let cand = match req.registry {
        Registry::CratesIo => match dl.get_or_init(|| crates::dl_template(client, &registries.crates)) {
            Ok(dl) => crates::locate(client, &registries.crates, dl, req)?,
            Err(e) => return Err(e.again()),
        },
        Registry::Pypi => pypi::locate(client, &registries.pypi, req)?,
        Registry::Npm => npm::locate(client, &registries.npm, req)?,
    };
    // The artifact's name comes from the registry's answer: it names a lock entry and picks
    // the unpacker, so it is one plain file name or nothing.
    if crate::model::Name::check(&cand.file).is_err() || cand.file.chars().any(char::is_control) {
        let why =
            format!("the artifact name {:?} is not a file name", crate::model::package::shown(&cand.file));
        return Err(Error::BadAnswer {
            registry: req.registry.as_str(),
            url: cand.url,
            why,
            env: req.registry.env(),
        }
        .into());
    }
    let bytes = match client.get(req.registry, &cand.url, "*/*")? {
        http::Answer::Ok(b) => b.bytes,
        http::Answer::Status(s) => {
            return Err(req.not_found(req.registry, &cand.url, format!("HTTP {s}"), String::new()));
        }
        http::Answer::TooLarge(size) => {
            return Err(Error::ArtifactTooLarge { file: cand.file, size, cap: http::MAX_BODY }.into());
        }
    };
    let (hash, verified_by) = verify(req, &cand, &bytes)?;
    let unpacked = archive::unpack(&cand.file, &bytes, archive::LIMITS)?;
    let files = select::keep(req.registry, &unpacked.files, &req.filter);
    if files.is_empty() {
        return Err(Error::NothingKept { file: cand.file.clone(), library: req.library.clone() }.into());
    }
    let size = bytes.len();
    Ok(Ready { cand, hash, verified_by, files, kept: 0, skipped: unpacked.skipped, bytes: size })
}

/// The hash `bytes` must match, checked: memorix.lock's when it has one, and the pin file's
/// when it records any (one of them must match); else the registry's, trusted on first use.
fn verify(req: &Request, cand: &Candidate, bytes: &[u8]) -> Result<(ArtifactHash, String)> {
    let mismatch = |expected: &ArtifactHash, from: &str| Error::HashMismatch {
        artifact: cand.file.clone(),
        registry: req.registry.as_str(),
        url: cand.url.clone(),
        expected: expected.to_string(),
        expected_from: from.to_string(),
        actual: expected.of(bytes).to_string(),
        site: req.site.clone(),
    };
    let locked = req.locked.as_ref().and_then(|l| ArtifactHash::parse(&l.hash));
    if let Some(h) = &locked
        && !h.matches(bytes)
    {
        return Err(mismatch(h, "memorix.lock").into());
    }
    let accepted: Vec<ArtifactHash> = req
        .accepted()
        .into_iter()
        .filter(|(file, _)| file.as_ref().is_none_or(|f| *f == cand.file))
        .map(|(_, h)| h)
        .collect();
    if let Some(first) = accepted.first() {
        return match accepted.iter().find(|h| h.matches(bytes)) {
            Some(h) => Ok((h.clone(), req.pin_file.clone())),
            None => Err(mismatch(first, &req.pin_file).into()),
        };
    }
    if let Some(h) = locked {
        return Ok((h, "memorix.lock".into()));
    }
    match &cand.published {
        Some(h) if h.matches(bytes) => {
            Ok((h.clone(), format!("{} (trusted on first use)", req.registry.as_str())))
        }
        Some(h) => Err(mismatch(h, &format!("the hash {} publishes", req.registry.as_str())).into()),
        None => {
            Ok((ArtifactHash::sha256_of(bytes), format!("{} (trusted on first use)", req.registry.as_str())))
        }
    }
}

/// A verified artifact whose kept files are blobs in the Store, as the directory a version is
/// made of, with its tree id.
struct Staged {
    ready: Ready,
    dir: Dir,
    tree: Id,
}

/// Hashes the kept files as ingest would and refuses a tree other than the one memorix.lock
/// has (nothing written then); else stores them as blobs. Names a Store path cannot hold are
/// left out.
fn stage(writer: &Writer, req: &Request, mut ready: Ready) -> Result<Staged> {
    use rayon::prelude::*;
    let files: Vec<(StorePath, Vec<u8>)> = std::mem::take(&mut ready.files)
        .into_iter()
        .filter_map(|(rel, bytes)| Some((StorePath::new(&rel).ok()?, bytes)))
        .collect();
    let mut dir = Dir::default();
    for (path, bytes) in &files {
        dir.insert_blob(path, Id::of_bytes(bytes));
    }
    let tree = dir.clone().build(&mut |t| Ok(t.id()))?.unwrap_or_else(Tree::empty_id);
    if let Some(expected) = req.locked.as_ref().and_then(|l| l.tree)
        && expected != tree
    {
        return Err(Error::TreeMismatch {
            library: req.library.clone(),
            version: req.version.clone(),
            artifact: ready.cand.file.clone(),
            expected: expected.to_string(),
            actual: tree.to_string(),
        }
        .into());
    }
    files.par_iter().try_for_each(|(_, bytes)| writer.objects().put_blob_bytes(bytes).map(|_| ()))?;
    ready.kept = files.len();
    Ok(Staged { ready, dir, tree })
}

/// Ingests every staged artifact as a version of its library, all in one generation (one
/// sync, one `latest/` refresh, like one `memorix ingest` of many sources), after recording
/// where each came from.
fn ingest_all(
    writer: &Writer,
    staged: Vec<(usize, Request, Staged)>,
) -> Result<Vec<(usize, Request, Fetched)>> {
    if staged.is_empty() {
        return Ok(Vec::new());
    }
    // The records go first: a version in the Store without one could never be locked with
    // `fetched`, so a fresh clone could not fetch it; a record without its version is inert.
    crate::fault::point("fetch.staged");
    for (_, req, st) in &staged {
        let record = FetchRecord {
            registry: req.registry.as_str().into(),
            artifact: st.ready.cand.file.clone(),
            hash: st.ready.hash.to_string(),
        };
        writer.records().record_fetched(&st.tree, &record)?;
    }
    crate::fault::point("fetch.recorded");
    let mut by_kind: std::collections::BTreeMap<crate::model::Kind, Vec<usize>> = Default::default();
    for (n, (_, req, _)) in staged.iter().enumerate() {
        by_kind.entry(req.dest.kind).or_default().push(n);
    }
    for (kind, members) in by_kind {
        let items = members
            .iter()
            .map(|n| {
                let (_, req, st) = &staged[*n];
                let library =
                    (req.dest.path.file_name() != Some(req.library.as_str())).then(|| req.library.clone());
                let label = VersionLabel { version: req.docs_version.clone(), library };
                (req.dest.clone(), st.dir.clone(), label)
            })
            .collect();
        let files: Vec<&str> = members.iter().map(|n| staged[*n].2.ready.cand.file.as_str()).collect();
        let message = format!("fetched {} from the registries", files.join(", "));
        writer.ingest_versions(kind, items, message)?;
    }
    Ok(staged
        .into_iter()
        .map(|(i, req, st)| {
            let files = st.ready.kept;
            let fetched = Fetched {
                registry: req.registry,
                library: req.library.clone(),
                version: req.docs_version.clone(),
                artifact: st.ready.cand.file.clone(),
                url: st.ready.cand.url.clone(),
                hash: st.ready.hash.to_string(),
                verified_by: st.ready.verified_by.clone(),
                place: req.dest.place(),
                tree: st.tree,
                files,
                skipped: st.ready.skipped,
                bytes: st.ready.bytes,
            };
            (i, req, fetched)
        })
        .collect())
}
