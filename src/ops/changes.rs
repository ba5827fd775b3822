//! What changed between two versions of a library (book: design/outlines.md#changes):
//! `memorix changes LIB [FROM] [TO]`, and, when a build moves a pin, `CHANGES.md` in that
//! library's mount. Both versions are trees in the Store: the old one, when the Store lacks
//! it, is fetched and verified by what the previous memorix.lock recorded.

use serde::Serialize;

use super::context::Context;
use super::error::{Error, Result};
use super::lock::VersionMove;
use super::moved::{CHANGES, Moved, Side, recorded};
use super::project::Project;
use crate::deliver::Delivery;
use crate::fetch::{Locked, Registry, Request};
use crate::lock::LockedLocator;
use crate::model::{Id, Kind, Locator, Selector, StorePath};
use crate::outline::changelog::{self, Entry};
use crate::outline::{self, Difference};
use crate::pins::ResolvedPin;
use crate::resolve::PinSource;
use crate::store::{Store, Writer};
use crate::view::api;

/// What differs from one version to the other.
#[derive(Debug, Serialize)]
pub struct Changes {
    pub library: String,
    pub from: Side,
    pub to: Side,
    pub downgrade: bool,
    /// The changelog the entries come from (the newer version's), if the library has one.
    pub changelog: Option<String>,
    pub entries: Vec<Entry>,
    /// `None` when neither version has an outline (not a Rust, Python or npm library).
    pub api: Option<Difference>,
    /// The versions fetched to compare them (the Store lacked them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<crate::fetch::Fetched>,
    /// `CHANGES.md`.
    #[serde(skip)]
    pub text: String,
}

/// `memorix changes LIB [FROM] [TO]`: TO defaults to the version memorix.lock has, FROM to the
/// one the last update moved it from. A version the Store lacks is fetched from the library's
/// registry and verified like any pinned artifact: by the hash memorix.lock or the last update
/// recorded for it, else the registry's.
pub fn changes(ctx: &Context, library: &str, from: Option<&str>, to: Option<&str>) -> Result<Changes> {
    let project = ctx.project().ok();
    let last = project.map(recorded).unwrap_or_default();
    let last = last.iter().find(|m| library_key(&m.library) == library_key(library));
    let locked = project.and_then(|p| p.clean_lock().ok().flatten()).map(|l| locked_versions(l, library));
    let locked = locked.unwrap_or_default();
    let to = to.map(str::to_string).or_else(|| last.map(|m| m.to.version.clone()));
    let to = to.or_else(|| locked.first().map(|(v, _)| v.clone()));
    let from = from.map(str::to_string).or_else(|| last.map(|m| m.from.version.clone()));
    let (Some(from), Some(to)) = (from, to) else {
        return Err(Error::ChangesVersions { library: library.to_string() });
    };
    // What the project recorded of each version's artifact, to verify a fetch of it by.
    let mut known = locked;
    known.extend(last.into_iter().flat_map(|m| [&m.from, &m.to]).filter_map(side_artifact));
    let hash_of = |v: &str| known.iter().find(|(k, _)| k == v).map(|(_, l)| l.clone());
    let mut fetched = Vec::new();
    let from = obtain(ctx, library, &from, hash_of(&from), &mut fetched)?;
    let to = obtain(ctx, library, &to, hash_of(&to), &mut fetched)?;
    let mut changes = compute(ctx.store()?, library, from, to)?;
    changes.fetched = fetched;
    Ok(changes)
}

fn library_key(library: &str) -> String {
    crate::store::records::library_key(library)
}

/// The versions memorix.lock has of `library`, each with the artifact it was fetched from.
fn locked_versions(lock: &crate::lock::Lockfile, library: &str) -> Vec<(String, Locked)> {
    let entries = lock.mounts.values().flat_map(|m| &m.locators);
    let entries =
        entries.filter(|e| e.pin.as_ref().is_some_and(|p| library_key(&p.library) == library_key(library)));
    entries
        .filter_map(|e| {
            let f = e.fetched.as_ref();
            let locked = f.map(|f| Locked { artifact: f.artifact.clone(), hash: f.hash.clone(), tree: None });
            Some((e.version.clone()?, locked?))
        })
        .collect()
}

/// The artifact a recorded move names (`pypi httpx-0.23.3.tar.gz sha256:…`), as a fetch must
/// match it.
fn side_artifact(side: &Side) -> Option<(String, Locked)> {
    let mut words = side.artifact.as_deref()?.split(' ').skip(1);
    let (artifact, hash) = (words.next()?.to_string(), words.next()?.to_string());
    Some((side.version.clone(), Locked { artifact, hash, tree: None }))
}

/// `library` at `version` from the Store, fetched first when the Store lacks it and the
/// project pins the library or the Store holds another version of it fetched from a registry
/// (which says where to fetch it from).
fn obtain(
    ctx: &Context,
    library: &str,
    version: &str,
    locked: Option<Locked>,
    fetched: &mut Vec<crate::fetch::Fetched>,
) -> Result<Side> {
    let store = ctx.store()?;
    let missing = match side(store, library, version) {
        Ok(found) => return Ok(found),
        Err(e) => e,
    };
    let site = format!("memorix changes {library} ({version})");
    let Some(request) = version_request(ctx, store, library, (version, version), locked, site) else {
        return Err(missing);
    };
    let writer = ctx.writer()?;
    let allowed = ctx.project().map_or(true, |p| p.manifest.pins.fetch);
    let mut fetching = super::fetch::fetch_unless_off(ctx, allowed, &writer, vec![request])?;
    fetching.check()?;
    if let Some(failure) = fetching.failures.pop() {
        return Err(match *failure.error {
            crate::fetch::Error::Offline { registry, why, .. } => Error::ChangesOffline {
                library: library.to_string(),
                version: version.to_string(),
                registry,
                why,
            },
            other => other.into(),
        });
    }
    fetched.append(&mut fetching.fetched);
    drop(writer);
    side(store, library, version)
}

/// The request that fetches `library` at `version` (as pinned, and as its docs are tagged):
/// from the registry, under the package name, into the place and with the `[fetch.LIB]` filter
/// of the project's pin of the library; without one, from the registry the Store's other
/// versions of it came from, into `docs/<lib>/`. `None` when neither says where it comes from.
fn version_request(
    ctx: &Context,
    store: &Store,
    library: &str,
    (version, docs_version): (&str, &str),
    locked: Option<Locked>,
    site: String,
) -> Option<Request> {
    let manifest = ctx.project().ok().map(|p| &p.manifest);
    let mut request = match manifest.and_then(|m| Some((m, pinned(m, library)?))) {
        Some((m, (registry, loc, pin))) => super::fetch::request(m, registry, &loc, pin, None),
        None => {
            let index = store.records().versions(Kind::Docs).ok()?;
            let mut records =
                index.entries(library).iter().rev().filter_map(|e| store.records().fetched(&e.tree));
            let registry = records.find_map(|f| Registry::parse(&f.registry))?;
            Request {
                registry,
                library: library.to_string(),
                package: library.to_string(),
                version: String::new(),
                docs_version: String::new(),
                dest: Locator::new(Kind::Docs, StorePath::new(library).ok()?, true),
                pinned: Vec::new(),
                pin_file: String::new(),
                site: String::new(),
                locked: None,
                filter: manifest.map(|m| super::fetch::filter(m, library)).unwrap_or_default(),
            }
        }
    };
    // The pin file's hashes are those of the version it pins, not of this one.
    if request.version != version {
        request.pinned.clear();
    }
    request.version = version.to_string();
    request.docs_version = docs_version.to_string();
    request.pin_file = "memorix.lock".into();
    request.site = site;
    request.locked = locked;
    Some(request)
}

/// The registry, locator and pin of the project's `@pin` of `library`.
fn pinned(m: &crate::manifest::Manifest, library: &str) -> Option<(Registry, Locator, ResolvedPin)> {
    let pins = PinSource::new(m);
    m.mounts.iter().find_map(|mount| {
        mount.select.iter().filter(|l| l.selector == Some(Selector::Pin)).find_map(|loc| {
            let pin = pins.pin(mount, loc).ok()?;
            let registry = Registry::of(pin.ecosystem)?;
            (library_key(&pin.library) == library_key(library)).then(|| (registry, loc.clone(), pin))
        })
    })
}

/// A version of `library` the Store holds under `docs/`.
fn side(store: &Store, library: &str, version: &str) -> Result<Side> {
    let index = store.records().versions(Kind::Docs)?;
    let entries = index.entries(library);
    let Some(entry) = entries.iter().rev().find(|e| e.version == version) else {
        let held = entries.iter().map(|e| e.version.clone()).collect::<Vec<_>>().join(", ");
        return Err(Error::ChangesNoVersion {
            library: library.to_string(),
            version: version.to_string(),
            held,
        });
    };
    let artifact =
        store.records().fetched(&entry.tree).map(|f| format!("{} {} {}", f.registry, f.artifact, f.hash));
    Ok(Side { version: version.to_string(), tree: entry.tree, artifact })
}

/// The changes from one tree to the other: the newer version's changelog cut between them,
/// and the difference of their outlines.
pub fn compute(store: &Store, library: &str, from: Side, to: Side) -> Result<Changes> {
    let read = |tree: &Id| -> Result<Vec<(String, Vec<u8>)>> {
        let files = store.objects().walk_files(tree)?;
        Ok(api::sources(store, files.iter().map(|(p, b)| (p.as_str(), b)))?)
    };
    let (old, new) = (read(&from.tree)?, read(&to.tree)?);
    let scheme = crate::model::version::scheme_for([from.version.as_str(), to.version.as_str()]);
    let downgrade =
        crate::model::version::compare(scheme, &to.version, &from.version) == Some(std::cmp::Ordering::Less);
    let (newer, older) = if downgrade { (&old, &new) } else { (&new, &old) };
    let found = |files: &[(String, Vec<u8>)]| -> Option<(String, Vec<Entry>)> {
        let map: outline::Files = files.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect();
        let (path, text) = changelog::find(&map)?;
        Some((path.to_string(), changelog::entries(path, text)))
    };
    let log = found(newer).or_else(|| found(older));
    let entries =
        log.as_ref().map(|(_, e)| changelog::between(e, &from.version, &to.version)).unwrap_or_default();
    let (a, b) = (api::outline_of(&old), api::outline_of(&new));
    let api = match (&a, &b) {
        (None, None) => None,
        _ => Some(outline::difference(
            a.as_ref().map_or(&[][..], |o| &o.items),
            b.as_ref().map_or(&[][..], |o| &o.items),
        )),
    };
    let changelog = log.map(|(p, _)| p);
    let text = outline::render_changes(
        library,
        (&from.version, &to.version),
        downgrade,
        changelog.as_deref().map(|p| (p, entries.as_slice())),
        api.as_ref(),
    );
    Ok(Changes {
        library: library.to_string(),
        from,
        to,
        downgrade,
        changelog,
        entries,
        api,
        fetched: Vec::new(),
        text,
    })
}

/// After a lock moved library versions: `CHANGES.md` for each docs mount whose pin moved,
/// recorded for delivery and the agents' index. The old version's tree is fetched (verified by
/// the previous lock's hash and tree) when the Store lacks it. A move that cannot be
/// described (the old tree is gone and cannot be fetched) is left out, never failing the build.
pub(crate) fn record_moves(ctx: &Context, writer: &Writer, moved: &[VersionMove]) -> Result<Vec<Moved>> {
    let project = ctx.project()?;
    let mut out = Vec::new();
    for mv in moved {
        let (Some(old), Some(new)) = (&mv.before, &mv.after) else { continue };
        if Locator::parse(&old.locator).ok().map(|l| l.kind) != Some(Kind::Docs) {
            continue;
        }
        if !writer.store.objects().has_tree(&old.id) {
            // Not fetched (offline, gone from the registry, or not what the lock recorded):
            // the move is left without its CHANGES.md.
            let _ = refetch(ctx, writer, old);
        }
        if !writer.store.objects().has_tree(&old.id) || !writer.store.objects().has_tree(&new.id) {
            continue;
        }
        let sided = |e: &LockedLocator, v: &str| Side {
            version: v.to_string(),
            tree: e.id,
            artifact: e.fetched.as_ref().map(|f| format!("{} {} {}", f.registry, f.artifact, f.hash)),
        };
        let changes = compute(writer.store, &mv.library, sided(old, &mv.from), sided(new, &mv.to))?;
        let blob = writer.objects().put_blob_bytes(changes.text.as_bytes())?;
        out.push(Moved {
            mount: mv.mount.clone(),
            library: mv.library.clone(),
            from: changes.from,
            to: changes.to,
            changes: blob,
        });
    }
    super::moved::record(project, &out)?;
    Ok(out)
}

/// Fetches the docs the previous lock recorded for `entry`, verified by its hash and tree.
fn refetch(ctx: &Context, writer: &Writer, entry: &LockedLocator) -> Result<()> {
    let (Some(f), Some(pin)) = (&entry.fetched, &entry.pin) else { return Ok(()) };
    let locked = Locked { artifact: f.artifact.clone(), hash: f.hash.clone(), tree: Some(entry.id) };
    let docs_version = entry.version.as_deref().unwrap_or(&pin.version);
    let site = format!("memorix.lock before this update ({} {})", pin.library, pin.version);
    let versions = (pin.version.as_str(), docs_version);
    let Some(request) = version_request(ctx, writer.store, &pin.library, versions, Some(locked), site) else {
        return Ok(());
    };
    let allowed = ctx.project()?.manifest.pins.fetch;
    let mut fetching = super::fetch::fetch_unless_off(ctx, allowed, writer, vec![request])?;
    fetching.check()?;
    Ok(())
}

/// The recorded moves whose mount `delivery` has, at the version moved to.
fn current(project: &Project, delivery: &Delivery) -> Vec<Moved> {
    let holds = |m: &Moved| {
        let version = format!(" {}", m.to.version);
        delivery.mounts.iter().any(|d| d.path == m.mount && d.versions.iter().any(|v| v.ends_with(&version)))
    };
    recorded(project).into_iter().filter(holds).collect()
}

/// Places the `CHANGES.md` of each move the last update recorded that `delivery` holds (see
/// [`place_moves`]).
pub(crate) fn place(store: &Store, project: &Project, delivery: &mut Delivery) {
    let moves = current(project, delivery);
    place_moves(store, delivery, moves);
}

/// Places the `CHANGES.md` a profile binding delivered (a rollback or an activation): the
/// moves it recorded, or, for a binding recorded before memorix kept them, those of the last
/// update it holds.
pub(crate) fn place_bound(
    store: &Store,
    project: &Project,
    binding: &crate::profile::Binding,
    delivery: &mut Delivery,
) {
    let moves = binding.moved.clone().unwrap_or_else(|| current(project, delivery));
    place_moves(store, delivery, moves);
}

/// Places each move's `CHANGES.md` in its mount, unless the library has a file of that name
/// there; `delivery.moved` lists the moves placed.
fn place_moves(store: &Store, delivery: &mut Delivery, moves: Vec<Moved>) {
    for m in moves.into_iter().filter(|m| store.objects().has_blob(&m.changes)) {
        let path = format!("{}/{CHANGES}", m.mount);
        if delivery.files.contains_key(&path) {
            continue;
        }
        delivery.files.insert(path, (m.mount.clone(), m.changes));
        delivery.moved.push(m);
    }
}
