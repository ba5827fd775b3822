//! Fetching what a resolve will need (book: design/fetching.md#registry-docs): before
//! resolving, each `@pin` locator whose library has no acceptable version in the Store (nor in
//! the substituters, asked first) is fetched from its registry and ingested, so the resolve,
//! which never writes the Store, finds it there like any hand-ingested version.

use std::collections::BTreeSet;

use super::context::Context;
use super::error::{Error, FetchFailure, Result};
use crate::fetch::{self, Fetched, Filter, Locked, Registry, Request};
use crate::lock::{LockedLocator, Lockfile};
use crate::manifest::{Manifest, MountDecl};
use crate::model::{EntryKind, Locator, Selector, StorePath};
use crate::pins::ResolvedPin;
use crate::resolve::PinSource;
use crate::store::{Store, Writer};

/// What fetching before a resolve did: the libraries fetched, and every one that could not be
/// (kept to explain the resolve's error, which names the versions the Store has).
#[derive(Debug, Default)]
pub struct Fetching {
    pub fetched: Vec<Fetched>,
    pub failures: Vec<FetchFailure>,
}

impl Fetching {
    /// The resolve's error, with why the fetch that would have avoided it did not happen.
    pub(crate) fn explain(mut self, e: crate::resolve::Error) -> Error {
        if self.failures.len() > 1 {
            return Error::fetch_failed(self.failures);
        }
        match self.failures.pop() {
            Some(f) if no_version(&e) => {
                Error::Unfetched(Box::new(super::error::Unfetched { resolve: e, fetch: f.error }))
            }
            _ => e.into(),
        }
    }

    /// The failures as one error when there are several, or one that is a failed check (a hash
    /// or tree that does not match: exit 1, whatever a resolve would say); one other failure is
    /// left for the resolve's error to explain.
    pub(crate) fn check(&mut self) -> Result<()> {
        if self.failures.len() > 1 {
            return Err(Error::fetch_failed(std::mem::take(&mut self.failures)));
        }
        if self.failures.first().is_some_and(|f| f.error.exit_code() == 1) {
            return Err(self.failures.pop().expect("just seen").error.into());
        }
        Ok(())
    }

    /// The one failure left, as the error to show when a resolve did not name one.
    pub(crate) fn into_failure(mut self) -> Option<Box<fetch::Error>> {
        self.failures.pop().map(|f| f.error)
    }
}

impl std::error::Error for FetchFailure {}

impl miette::Diagnostic for FetchFailure {
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.error.code()
    }

    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.error.help()
    }
}

impl FetchFailure {
    fn new(req: &Request, error: Box<fetch::Error>) -> FetchFailure {
        FetchFailure {
            library: req.library.clone(),
            version: req.version.clone(),
            site: req.site.clone(),
            error,
        }
    }
}

/// Whether a resolve failed because the Store has no acceptable version of a library.
fn no_version(e: &crate::resolve::Error) -> bool {
    use crate::resolve::Error as R;
    use crate::store::Error as S;
    match e {
        R::InMount { inner, .. } => no_version(inner),
        R::Store(S::NoVersions { .. } | S::NoAcceptableVersion { .. } | S::EmptyKind { .. }) => true,
        _ => false,
    }
}

/// Fetches the pinned docs the Store lacks, each on its own: what could be fetched is in the
/// Store whatever became of the others. Reproducing the lock (`build --locked`), a docs view
/// must unpack to the tree the lock has; locking, the artifact is still held to the lock's
/// hash but the tree is what this memorix keeps, which the new lock records.
pub(crate) fn fetch_pinned(ctx: &Context, writer: &Writer, reproduce: bool) -> Result<Fetching> {
    let project = ctx.project()?;
    let m = &project.manifest;
    let mut requests = wanted(m, Some(writer.store), project.clean_lock()?, None);
    if !reproduce {
        requests.iter_mut().filter_map(|r| r.locked.as_mut()).for_each(|l| l.tree = None);
    }
    fetch_requests(ctx, m, writer, requests)
}

/// Fetches `requests` (for the manifest `m`) unless fetching is off, each with its own outcome.
pub(crate) fn fetch_requests(
    ctx: &Context,
    m: &Manifest,
    writer: &Writer,
    requests: Vec<Request>,
) -> Result<Fetching> {
    fetch_unless_off(ctx, m.pins.fetch, writer, requests)
}

/// Fetches `requests` unless fetching is off (`--offline`, or `allowed` false: the project's
/// `[pins] fetch = false`), each with its own outcome.
pub(crate) fn fetch_unless_off(
    ctx: &Context,
    allowed: bool,
    writer: &Writer,
    requests: Vec<Request>,
) -> Result<Fetching> {
    if requests.is_empty() {
        return Ok(Fetching::default());
    }
    let offline = ctx.net.offline;
    if offline || !allowed {
        return Ok(Fetching { fetched: Vec::new(), failures: refused(&requests, offline) });
    }
    let mut out = Fetching::default();
    for o in fetch::fetch_all(writer, ctx.net.registries()?, requests, ctx.progress)? {
        match o.result {
            Ok(f) => out.fetched.push(f),
            Err(e) => out.failures.push(FetchFailure::new(&o.request, e)),
        }
    }
    Ok(out)
}

/// Each request as the failure fetching it is when fetching is off (`offline`, or
/// `[pins] fetch = false`): what names the version, the registry and the command.
fn refused(requests: &[Request], offline: bool) -> Vec<FetchFailure> {
    let why = if offline { "--offline" } else { "[pins] fetch = false" };
    requests
        .iter()
        .map(|r| {
            let registry = r.registry.as_str();
            let (library, version) = (r.library.clone(), r.version.clone());
            FetchFailure::new(r, Box::new(fetch::Error::Offline { library, version, registry, why }))
        })
        .collect()
}

/// With fetching off, the libraries the Store lacks are known before anything is written: a
/// build that cannot succeed refuses here, leaving no Store, `.ignore` or `.memorix/` behind
/// (the Store's absence meaning it holds nothing). Every such library is listed.
pub(crate) fn refuse_unfetchable(ctx: &Context) -> Result<()> {
    let project = ctx.project()?;
    let m = &project.manifest;
    let offline = ctx.net.offline;
    if !offline && m.pins.fetch {
        return Ok(());
    }
    let store = ctx.existing_store().ok().flatten();
    let mut failures = refused(&wanted(m, store, project.clean_lock()?, None), offline);
    match failures.len() {
        0 => Ok(()),
        1 => Err(failures.pop().expect("one").error.into()),
        _ => Err(Error::fetch_failed(failures)),
    }
}

/// `memorix fetch [LIB...]`: fetches what the project's `@pin` mounts need and the Store
/// lacks (only the named libraries, when some are named), without building.
pub fn fetch(ctx: &mut Context, libraries: &[String]) -> Result<Vec<Fetched>> {
    let _project_lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let project = ctx.project()?;
    let writer = ctx.writer()?;
    writer.maintenance().heal_latest()?;
    let only: BTreeSet<String> = libraries.iter().cloned().collect();
    let requests = wanted(&project.manifest, Some(writer.store), project.clean_lock()?, Some(&only));
    let mut fetching = fetch_requests(ctx, &project.manifest, &writer, requests)?;
    fetching.check()?;
    match fetching.failures.pop() {
        Some(f) => Err(f.error.into()),
        None => Ok(fetching.fetched),
    }
}

/// The fetch requests for every `@pin` locator whose docs the Store lacks, one per
/// (registry, library, version). Pins that do not resolve are left to the resolve to report.
pub(crate) fn wanted(
    m: &Manifest,
    store: Option<&Store>,
    lock: Option<&Lockfile>,
    only: Option<&BTreeSet<String>>,
) -> Vec<Request> {
    let pins = PinSource::new(m);
    let mut out: Vec<Request> = Vec::new();
    for mount in &m.mounts {
        for (i, loc) in mount.select.iter().enumerate() {
            // The project's own `[sources]` provide what they feed; the registry does not.
            if loc.selector != Some(Selector::Pin) || m.sources_feeding(loc).next().is_some() {
                continue;
            }
            let Ok(pin) = pins.pin(mount, loc) else { continue };
            let Some(registry) = Registry::of(pin.ecosystem) else { continue };
            if only.is_some_and(|o| !o.is_empty() && !o.contains(&pin.library)) {
                continue;
            }
            let entry = locked_entry(lock, mount, i, loc, &pin);
            if !lacks(store, mount, loc, &pin, entry) {
                continue;
            }
            let key = (registry, pin.library.clone(), pin.version.clone());
            if out.iter().any(|r| (r.registry, r.library.clone(), r.version.clone()) == key) {
                continue;
            }
            out.push(request(m, registry, loc, pin, entry));
        }
    }
    out
}

/// The lock's entry for locator `i` of `mount`, when it follows the same pin.
fn locked_entry<'l>(
    lock: Option<&'l Lockfile>,
    mount: &MountDecl,
    i: usize,
    loc: &Locator,
    pin: &ResolvedPin,
) -> Option<&'l LockedLocator> {
    let entry = lock?.mounts.get(mount.path.as_str())?.locators.get(i)?;
    let same = entry.locator == loc.to_string()
        && entry.pin.as_ref().is_some_and(|p| p.version == pin.version && p.file == pin.file);
    same.then_some(entry)
}

/// Whether the Store lacks the docs a `@pin` needs and a fetch can give them: the lock's tree
/// when the lock says it was fetched (a lock entry without `fetched` came from a hand ingest,
/// which only a substituter gives back), or else any version the mount's `match` accepts. No
/// Store (none yet) holds nothing.
fn lacks(
    store: Option<&Store>,
    mount: &MountDecl,
    loc: &Locator,
    pin: &ResolvedPin,
    entry: Option<&LockedLocator>,
) -> bool {
    if let Some(e) = entry {
        return e.fetched.is_some()
            && e.kind == EntryKind::Tree
            && !store.is_some_and(|s| s.objects().has_tree(&e.id));
    }
    let scheme = Some(pin.ecosystem.scheme());
    store.is_none_or(|s| {
        s.locate_version(loc, Some(&pin.library), &pin.docs_version, mount.policy(), scheme, None).is_err()
    })
}

/// What `[fetch.LIB]` keeps and leaves out.
fn filter_of(d: &crate::manifest::FetchDecl) -> Filter {
    Filter {
        include: (!d.include.is_empty()).then(|| d.include_set.clone()),
        exclude: (!d.exclude.is_empty()).then(|| d.exclude_set.clone()),
    }
}

/// The filter of `library` (a normalized name, as memorix.lock records it) by `[fetch.LIB]`.
pub(crate) fn filter(m: &Manifest, library: &str) -> Filter {
    let key = crate::store::records::library_key;
    m.fetch
        .iter()
        .find(|(name, _)| key(name) == key(library))
        .map_or_else(Filter::default, |(_, d)| filter_of(d))
}

/// One request: where the docs go (`docs/<lib>/`, or the locator's own place when it names
/// the library), the pin's hashes, what the lock recorded, and `[fetch.LIB]`.
pub(crate) fn request(
    m: &Manifest,
    registry: Registry,
    loc: &Locator,
    pin: ResolvedPin,
    entry: Option<&LockedLocator>,
) -> Request {
    let key = |n: &str| crate::store::records::library_key(n);
    let dest = if loc.path.file_name().is_some_and(|n| key(n) == key(&pin.library)) {
        Locator::new(loc.kind, loc.path.clone(), true)
    } else {
        let path = StorePath::new(&pin.library).unwrap_or_else(|_| loc.path.clone());
        Locator::new(loc.kind, path, true)
    };
    let decl = m.fetch.iter().find(|(name, _)| crate::pins::normalize(pin.ecosystem, name) == pin.library);
    let filter = decl.map_or_else(Filter::default, |(_, d)| filter_of(d));
    let locked = entry.and_then(|e| {
        let f = e.fetched.as_ref()?;
        Some(Locked { artifact: f.artifact.clone(), hash: f.hash.clone(), tree: Some(e.id) })
    });
    Request {
        registry,
        library: pin.library,
        package: pin.package,
        version: pin.version,
        docs_version: pin.docs_version,
        dest,
        pinned: pin.artifacts,
        pin_file: pin.file,
        site: pin.at,
        locked,
        filter,
    }
}
