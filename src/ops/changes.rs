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
use crate::model::{Id, Kind, Locator, StorePath};
use crate::outline::changelog::{self, Entry};
use crate::outline::{self, Difference};
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
    /// `CHANGES.md`.
    #[serde(skip)]
    pub text: String,
}

/// `memorix changes LIB [FROM] [TO]`: TO defaults to the version memorix.lock has, FROM to the
/// one the last update moved it from.
pub fn changes(ctx: &Context, library: &str, from: Option<&str>, to: Option<&str>) -> Result<Changes> {
    let store = ctx.store()?;
    let project = ctx.project().ok();
    let last = project.map(recorded).unwrap_or_default();
    let last = last.iter().find(|m| {
        crate::store::versions::library_key(&m.library) == crate::store::versions::library_key(library)
    });
    let locked = project.and_then(|p| p.clean_lock().ok().flatten()).and_then(|l| {
        l.mounts
            .values()
            .flat_map(|m| &m.locators)
            .find(|e| e.pin.as_ref().is_some_and(|p| p.library == library))
            .and_then(|e| e.version.clone())
    });
    let to = to.map(str::to_string).or_else(|| last.map(|m| m.to.version.clone())).or(locked);
    let from = from.map(str::to_string).or_else(|| last.map(|m| m.from.version.clone()));
    let (Some(from), Some(to)) = (from, to) else {
        return Err(Error::ChangesVersions { library: library.to_string() });
    };
    let from = side(store, library, &from)?;
    let to = side(store, library, &to)?;
    compute(store, library, from, to)
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
    Ok(Changes { library: library.to_string(), from, to, downgrade, changelog, entries, api, text })
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
            let _ = refetch(ctx, writer, &project.manifest, old);
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
fn refetch(
    ctx: &Context,
    writer: &Writer,
    m: &crate::manifest::Manifest,
    entry: &LockedLocator,
) -> Result<()> {
    let (Some(f), Some(pin)) = (&entry.fetched, &entry.pin) else { return Ok(()) };
    let registry = match f.registry.as_str() {
        "crates-io" => Registry::CratesIo,
        "pypi" => Registry::Pypi,
        "npm" => Registry::Npm,
        _ => return Ok(()),
    };
    let Ok(loc) = Locator::parse(&entry.locator) else { return Ok(()) };
    let path = StorePath::new(&pin.library).unwrap_or_else(|_| loc.path.clone());
    let request = Request {
        registry,
        library: pin.library.clone(),
        package: pin.library.clone(),
        version: pin.version.clone(),
        docs_version: entry.version.clone().unwrap_or_else(|| pin.version.clone()),
        dest: Locator::new(loc.kind, path, true),
        pinned: Vec::new(),
        pin_file: "memorix.lock".into(),
        site: format!("memorix.lock before this update ({} {})", pin.library, pin.version),
        locked: Some(Locked { artifact: f.artifact.clone(), hash: f.hash.clone(), tree: Some(entry.id) }),
        filter: super::fetch::filter(m, &pin.library),
    };
    let mut fetching = super::fetch::fetch_requests(ctx, m, writer, vec![request])?;
    fetching.check()?;
    Ok(())
}

/// The recorded moves whose mount `delivery` has, at the version moved to.
pub(crate) fn current(project: &Project, delivery: &Delivery) -> Vec<Moved> {
    let holds = |m: &Moved| {
        let version = format!(" {}", m.to.version);
        delivery.mounts.iter().any(|d| d.path == m.mount && d.versions.iter().any(|v| v.ends_with(&version)))
    };
    recorded(project).into_iter().filter(holds).collect()
}

/// Places each current move's `CHANGES.md` in its mount, unless the library has a file of
/// that name there.
pub(crate) fn place(store: &Store, project: &Project, delivery: &mut Delivery) {
    for m in current(project, delivery).into_iter().filter(|m| store.objects().has_blob(&m.changes)) {
        delivery
            .files
            .entry(format!("{}/{CHANGES}", m.mount))
            .or_insert_with(|| (m.mount.clone(), m.changes));
    }
}
