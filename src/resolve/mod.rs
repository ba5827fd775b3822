//! Evaluating a manifest into a lock: each mount's locators resolved against the Store (its
//! `[sources]` already ingested, or hashed in memory for a check), derivations and the
//! environment planned. Resolving reads the Store and never writes it. Sticky like Cargo.lock:
//! a mount whose inputs did not change keeps its locked resolution.

pub mod error;
pub mod graph;
pub mod preview;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::lock::{
    LockedEnvironment, LockedFetch, LockedLocator, LockedMount, LockedPin, LockedSource, Lockfile, VERSION,
};
use crate::manifest::{Manifest, MountDecl, SourceDecl};
use crate::model::{EntryKind, Id, Kind, Locator, Selector, canonical};
use crate::pins::{Pins, ResolvedPin};
use crate::store::Store;
use crate::store::objects::{self, Overlay, Snapshot, TreeSource};
use crate::view::derivation_plan::{self as derivation, DerivationPlan, Selected};
use crate::view::environment_plan::{self as environment, EnvironmentPlan};
pub use error::{Error, Result};
pub use graph::Graph;

/// Which mounts `resolve` must resolve again although their lock entry is current.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Refresh {
    /// None: the lock is sticky (`memorix lock`, `memorix build`).
    #[default]
    Nothing,
    /// `memorix update`: every mount.
    All,
    /// `memorix update MOUNT...`
    Mounts(std::collections::BTreeSet<String>),
    /// `memorix update --source PLACE...`: those git sources move to what they follow now (the
    /// mounts they feed are resolved again because their content changed).
    Sources(std::collections::BTreeSet<String>),
}

impl Refresh {
    fn includes(&self, mount: &str) -> bool {
        match self {
            Refresh::Nothing | Refresh::Sources(_) => false,
            Refresh::All => true,
            Refresh::Mounts(names) => names.contains(mount),
        }
    }

    /// Whether the git source `key` moves to what it follows now.
    pub fn moves_source(&self, key: &str) -> bool {
        match self {
            Refresh::All => true,
            Refresh::Sources(keys) => keys.contains(key),
            Refresh::Nothing | Refresh::Mounts(_) => false,
        }
    }
}

/// A manifest evaluated: the lock and the plans behind it.
pub struct Resolution {
    pub lock: Lockfile,
    /// Per mount, in manifest (path) order.
    pub derivations: Vec<DerivationPlan>,
    pub environment: EnvironmentPlan,
    /// Mounts resolved afresh (new, or their inputs changed).
    pub resolved: Vec<String>,
    /// (key, id) of each plan computed here, for the Store to remember: each mount whose plan
    /// was computed by walking its trees (see [`plan_key`]), and the environment (see
    /// [`environment_key`]).
    pub planned: Vec<(Id, Id)>,
}

/// What planning a mount's locked selection depends on: memorix's version, the mount's path,
/// its inputs and its locked locators. The Store remembers the derivation it gave.
pub fn plan_key(mount: &MountDecl, locked: &LockedMount) -> Id {
    #[derive(Serialize)]
    struct Key<'a> {
        version: &'a str,
        mount: &'a str,
        inputs: &'a Id,
        locators: &'a [LockedLocator],
    }
    let key = Key {
        version: env!("CARGO_PKG_VERSION"),
        mount: mount.path.as_str(),
        inputs: &locked.inputs,
        locators: &locked.locators,
    };
    canonical::object_id("plan", &canonical::encode(&key))
}

/// What planning the environment from its mounts' derivations depends on: memorix's version,
/// each mount's path and derivation, and the `[overrides]`. The Store remembers the environment
/// it gave, so checking a lock needs no derivation record when its ids are the remembered ones.
pub fn environment_key(m: &Manifest, derivations: &[Id]) -> Id {
    #[derive(Serialize)]
    struct Key<'a> {
        version: &'a str,
        mounts: Vec<(&'a str, &'a Id)>,
        overrides: Vec<(String, String)>,
    }
    let key = Key {
        version: env!("CARGO_PKG_VERSION"),
        mounts: m.mounts.iter().map(|x| x.path.as_str()).zip(derivations).collect(),
        overrides: m.overrides.iter().map(|o| (o.path.to_string(), o.winner.place())).collect(),
    };
    canonical::object_id("environment-plan", &canonical::encode(&key))
}

#[derive(Serialize)]
struct MountInputs<'a> {
    select: Vec<String>,
    include: &'a [String],
    exclude: &'a [String],
    #[serde(rename = "match")]
    match_policy: Option<String>,
    library: Option<String>,
    version: Option<String>,
    overrides: Vec<(String, String)>,
}

/// Hash of what decides a mount's resolution. `intent` and comments are not in it.
pub fn mount_inputs(m: &Manifest, mount: &MountDecl) -> Id {
    let inputs = MountInputs {
        select: mount.select.iter().map(Locator::to_string).collect(),
        include: &mount.include,
        exclude: &mount.exclude,
        match_policy: mount.match_policy.map(|p| p.as_str().to_string()),
        library: mount.library.clone(),
        version: mount.version.clone(),
        overrides: m.overrides_under(&mount.path).map(|o| (o.path.to_string(), o.winner.place())).collect(),
    };
    canonical::object_id("inputs", &canonical::encode(&inputs))
}

/// Hashes a source folder in memory, as `ingest` would store it.
pub fn snapshot_source(m: &Manifest, s: &SourceDecl) -> Result<Snapshot> {
    let layout = objects::layout(&s.dest, &[m.dir.join(s.folder.as_str())])?;
    Ok(objects::snapshot(layout)?)
}

fn is_pinned(loc: &Locator) -> bool {
    matches!(loc.selector, Some(Selector::Generation(_) | Selector::Hash(_)))
}

/// Resolves a locator of `mount` against the Store's current state. `own` is the content of
/// the project's sources feeding it: of several variants of a version, the project's own wins.
/// Also returns the tagged (library, version) it came from.
pub(crate) fn resolve_fresh(
    store: &Store,
    pins: &PinSource,
    mount: &MountDecl,
    loc: &Locator,
    own: &[Id],
) -> Result<Fresh> {
    let mut pin = None;
    let found = match &loc.selector {
        Some(Selector::Version(v)) => {
            let prefer = own.first();
            store.locate_version(loc, mount.library.as_deref(), v, mount.policy(), None, prefer)?
        }
        Some(Selector::Pin) => {
            let p = pins.pin(mount, loc)?;
            let found = locate_pinned(store, mount, loc, &p, own)?;
            pin = Some(LockedPin { library: p.library, file: p.file, version: p.version });
            found
        }
        _ => store.locate(loc)?,
    };
    let pinned = is_pinned(loc);
    let selected = Selected {
        locator: loc.clone(),
        kind: found.kind,
        id: found.id,
        generation: Some(found.generation.id),
        pinned_seq: pinned.then_some(found.generation.generation.seq),
        version: found.version.as_ref().map(|(_, v)| v.clone()),
    };
    let locked = LockedLocator {
        locator: loc.to_string(),
        kind: found.kind,
        id: found.id,
        generation: pinned.then_some(found.generation.id),
        version: found.version.as_ref().map(|(_, v)| v.clone()),
        fetched: pin.as_ref().and_then(|_| store.records().fetched(&found.id)).map(|r| LockedFetch {
            registry: r.registry,
            artifact: r.artifact,
            hash: r.hash,
        }),
        pin,
    };
    Ok((selected, locked, found.version))
}

/// The pinned version of `p` at `loc`, preferring among its variants the one of `own`.
fn locate_pinned(
    store: &Store,
    mount: &MountDecl,
    loc: &Locator,
    p: &ResolvedPin,
    own: &[Id],
) -> crate::store::Result<crate::store::records::Located> {
    let scheme = Some(p.ecosystem.scheme());
    let (library, version, policy) = (Some(p.library.as_str()), &p.docs_version, mount.policy());
    // Several sources may feed one locator (one per version): the one of the picked version.
    let found = store.locate_version(loc, library, version, policy, scheme, None)?;
    if own.contains(&found.id) {
        return Ok(found);
    }
    for tree in own {
        if let Ok(f) = store.locate_version(loc, library, version, policy, scheme, Some(tree))
            && f.version == found.version
            && f.id != found.id
        {
            return Ok(f);
        }
    }
    Ok(found)
}

/// The content ids of the project's sources that feed `loc` (their lock entries).
pub(crate) fn own_content(m: &Manifest, sources: &BTreeMap<String, LockedSource>, loc: &Locator) -> Vec<Id> {
    m.source_keys_feeding(loc).filter_map(|k| sources.get(&k).map(|s| s.hash)).collect()
}

/// The project's pin files, parsed on first use (only mounts with `@pin` need them).
pub struct PinSource<'m> {
    manifest: &'m Manifest,
    pins: std::cell::OnceCell<Pins>,
}

impl<'m> PinSource<'m> {
    pub fn new(manifest: &'m Manifest) -> PinSource<'m> {
        PinSource { manifest, pins: std::cell::OnceCell::new() }
    }

    /// The pin of the library `loc` (a `@pin` locator of `mount`) asks for.
    pub fn pin(&self, mount: &MountDecl, loc: &Locator) -> Result<ResolvedPin> {
        let m = self.manifest;
        if m.pins.files.is_empty() {
            return Err(Error::NoPinFiles { mount: mount.path.to_string(), locator: loc.to_string() });
        }
        let pins = match self.pins.get() {
            Some(p) => p,
            None => {
                let loaded = Pins::load(&m.dir, &m.pins.files, &m.pins.markers)?;
                self.pins.get_or_init(|| loaded)
            }
        };
        let library = mount.library.as_deref().or(loc.path.file_name()).unwrap_or(loc.kind.as_str());
        Ok(pins.resolve(library, mount.version.as_deref())?)
    }

    /// Whether the pins behind a locked mount moved (a requested library's version changed).
    pub fn moved(&self, mount: &MountDecl, locked: &LockedMount) -> Result<Option<String>> {
        for (loc, entry) in mount.select.iter().zip(&locked.locators) {
            let Some(was) = &entry.pin else { continue };
            let now = self.pin(mount, loc)?;
            if now.version != was.version || now.file != was.file {
                return Ok(Some(format!(
                    "mount `{}`: {} now pins {} {} (memorix.lock has {} from {})",
                    mount.path, now.file, now.library, now.version, was.version, was.file
                )));
            }
        }
        Ok(None)
    }
}

pub(crate) type Fresh = (Selected, LockedLocator, Option<(String, String)>);

/// Rebuilds a mount's selection from its lock entry (no re-resolution).
pub(crate) fn from_lock(
    store: Option<&Store>,
    mount: &MountDecl,
    locked: &LockedMount,
) -> Result<Vec<Selected>> {
    let mismatch = |problem: String| Error::LockMismatch { mount: mount.path.to_string(), problem };
    if locked.locators.len() != mount.select.len() {
        return Err(mismatch("lists other locators than memorix.toml".into()));
    }
    let mut out = Vec::new();
    for (loc, entry) in mount.select.iter().zip(&locked.locators) {
        if entry.locator != loc.to_string() {
            return Err(mismatch(format!("locks {} where memorix.toml has {loc}", entry.locator)));
        }
        // Resolving never gives a subtree locator a file (`check_subtree`), so a lock that
        // says so was edited by hand; planning from it would take the file name of `rules/`.
        if loc.subtree && entry.kind == EntryKind::Blob {
            return Err(mismatch(format!("locks the subtree {loc} as a file")));
        }
        let pinned_seq = match (&entry.generation, store) {
            (Some(g), Some(s)) => Some(s.records().read_generation(loc.kind, g)?.seq),
            (Some(g), None) => {
                return Err(crate::store::Error::MissingObject { what: "generation", id: *g }.into());
            }
            (None, _) => None,
        };
        out.push(Selected {
            locator: loc.clone(),
            kind: entry.kind,
            id: entry.id,
            generation: entry.generation,
            pinned_seq,
            version: entry.version.clone(),
        });
    }
    Ok(out)
}

/// A mount never holds two versions of one library.
fn one_version_per_library(mount: &MountDecl, fresh: &[Fresh]) -> Result<()> {
    let mut seen: BTreeMap<(Kind, &str), (&Locator, &str)> = BTreeMap::new();
    for (selected, _, tagged) in fresh {
        let loc = &selected.locator;
        let Some((library, version)) = tagged else { continue };
        match seen.get(&(loc.kind, library.as_str())) {
            Some((other, v)) if *v != version.as_str() => {
                return Err(Error::MixedVersions {
                    mount: mount.path.to_string(),
                    library: library.clone(),
                    first: format!("{other} gives {v}"),
                    second: format!("{loc} gives {version}"),
                });
            }
            _ => {
                seen.insert((loc.kind, library), (loc, version));
            }
        }
    }
    Ok(())
}

pub(crate) fn plan_mount(
    trees: &dyn TreeSource,
    m: &Manifest,
    mount: &MountDecl,
    selected: &[Selected],
) -> Result<DerivationPlan> {
    let overrides: Vec<_> = m.overrides_under(&mount.path).collect();
    Ok(derivation::plan(trees, mount, selected, &overrides)?)
}

/// The mount's plan computed from the previous lock's derivation of the same inputs, by the
/// diff of its locators' trees (what `update` after an ingest mostly does); `None` when there
/// is no such derivation in the Store.
fn replan_mount(
    store: &Store,
    m: &Manifest,
    mount: &MountDecl,
    previous: Option<&Lockfile>,
    inputs: &Id,
    selected: &[Selected],
) -> Result<Option<DerivationPlan>> {
    let locked = previous.and_then(|p| p.mounts.get(mount.path.as_str())).filter(|l| l.inputs == *inputs);
    let Some(record) = locked.and_then(|l| store.records().read_derivation(&l.derivation).ok()) else {
        return Ok(None);
    };
    let overrides: Vec<_> = m.overrides_under(&mount.path).collect();
    Ok(derivation::replan(store, mount, DerivationPlan::from_record(record), selected, &overrides)?)
}

/// Names the mount and the manifest line of a `select` entry that failed to resolve.
pub(crate) fn in_mount(mount: &MountDecl, at: &str, e: Error) -> Error {
    Error::InMount { mount: mount.path.to_string(), at: at.to_string(), inner: Box::new(e) }
}

/// Evaluates the manifest for writing a lock, given its `[sources]` as the Store now holds
/// them: keeps each mount of `previous` whose inputs and feeding sources did not change,
/// resolves the rest against the Store.
pub fn resolve(
    m: &Manifest,
    store: &Store,
    previous: Option<&Lockfile>,
    refresh: &Refresh,
    sources: BTreeMap<String, LockedSource>,
) -> Result<Resolution> {
    Graph::build(m)?;
    let mut mounts = BTreeMap::new();
    let mut derivations = Vec::new();
    let mut resolved = Vec::new();
    let mut planned = Vec::new();
    let mut failed = Vec::new();
    let pins = PinSource::new(m);
    for mount in &m.mounts {
        match resolve_mount(m, store, previous, refresh, &sources, &pins, mount) {
            Ok(r) => {
                if r.fresh {
                    resolved.push(mount.path.to_string());
                }
                planned.extend(r.planned);
                mounts.insert(mount.path.to_string(), r.locked);
                derivations.push(r.plan);
            }
            // An object this Store lacks is not the mount's fault: the caller fetches it.
            Err(e) if e.missing_object().is_some() => return Err(e),
            // Every mount that fails is named, not the first one only.
            Err(e) => failed.push(e),
        }
    }
    match failed.len() {
        0 => {}
        1 => return Err(failed.remove(0)),
        count => return Err(Error::Mounts { count, errors: failed }),
    }
    let pairs: Vec<_> = m.mounts.iter().map(|x| x.path.clone()).zip(derivations.iter()).collect();
    let environment = environment::plan(&pairs, &m.overrides)?;
    let ids: Vec<Id> = derivations.iter().map(DerivationPlan::id).collect();
    planned.push((environment_key(m, &ids), environment.id()));
    let lock = Lockfile {
        version: VERSION,
        environment: LockedEnvironment { id: environment.id() },
        mounts,
        sources,
    };
    Ok(Resolution { lock, derivations, environment, resolved, planned })
}

/// One mount resolved: its lock entry, its plan, whether it was resolved afresh, and the plan
/// keys computed by walking its trees.
struct MountResolution {
    locked: LockedMount,
    plan: DerivationPlan,
    fresh: bool,
    planned: Option<(Id, Id)>,
}

/// Keeps `mount`'s lock entry when its inputs, feeding sources and pins did not change (and
/// `refresh` does not name it), else resolves it against the Store; then plans it.
fn resolve_mount(
    m: &Manifest,
    store: &Store,
    previous: Option<&Lockfile>,
    refresh: &Refresh,
    sources: &BTreeMap<String, LockedSource>,
    pins: &PinSource,
    mount: &MountDecl,
) -> Result<MountResolution> {
    let name = mount.path.to_string();
    let inputs = mount_inputs(m, mount);
    let sources_moved = mount.select.iter().any(|loc| {
        m.source_keys_feeding(loc)
            .any(|place| previous.and_then(|p| p.sources.get(&place)) != sources.get(&place))
    });
    let keep = previous.and_then(|p| p.mounts.get(&name)).filter(|l| l.inputs == inputs && !sources_moved);
    let keep = keep.filter(|_| !refresh.includes(&name));
    // A requested library whose pinned version changed is resolved again.
    let keep = match keep {
        Some(l) if pins.moved(mount, l)?.is_some() => None,
        other => other,
    };
    let (selected, locators, fresh) = match keep.map(|l| from_lock(Some(store), mount, l)) {
        Some(Ok(sel)) => (sel, keep.expect("kept").locators.clone(), false),
        _ => {
            let pairs = mount
                .select
                .iter()
                .zip(&mount.select_at)
                .map(|(l, at)| {
                    let own = own_content(m, sources, l);
                    resolve_fresh(store, pins, mount, l, &own).map_err(|e| in_mount(mount, at, e))
                })
                .collect::<Result<Vec<_>>>()?;
            one_version_per_library(mount, &pairs)?;
            let (selected, locators) = pairs.into_iter().map(|(s, l, _)| (s, l)).unzip();
            (selected, locators, true)
        }
    };
    // A kept mount whose derivation is stored needs no tree walk.
    let stored = keep
        .filter(|_| !fresh)
        .and_then(|l| store.records().read_derivation(&l.derivation).ok())
        .map(DerivationPlan::from_record);
    let walked = stored.is_none();
    let plan = match stored {
        Some(p) => p,
        None => match replan_mount(store, m, mount, previous, &inputs, &selected)? {
            Some(p) => p,
            None => plan_mount(store, m, mount, &selected)?,
        },
    };
    let locked = LockedMount { inputs, derivation: plan.id(), locators };
    let planned = walked.then(|| (plan_key(mount, &locked), plan.id()));
    Ok(MountResolution { locked, plan, fresh, planned })
}

/// Whether a lock still holds: the one judgement `status --check`, `lock --check` and
/// `build --locked` share.
#[derive(Debug, Serialize, Default)]
pub struct CheckReport {
    /// The lock matches the manifest, its pins and sources, and every id recomputes.
    pub ok: bool,
    /// Why it is stale, one line each.
    pub problems: Vec<String>,
    /// The mounts a problem concerns, with the first reason for each.
    pub stale: BTreeMap<String, String>,
    /// Objects the lock names that this Store lacks (`tree 1a2b...`). They make the lock
    /// impossible to judge here, not stale: a substituter that has them settles it.
    pub missing: Vec<String>,
}

impl CheckReport {
    fn stale(&mut self, mount: Option<&str>, problem: String) {
        if let Some(mount) = mount {
            self.stale.entry(mount.to_string()).or_insert_with(|| problem.clone());
        }
        self.problems.push(problem);
    }
}

/// Checks `lock` against the manifest without writing anything: inputs and sources must match
/// and every id must recompute from the Store (plus the sources, hashed in memory), or be the
/// one the Store remembers planning. With `realise`, returns the plans for realising the
/// lock on success; without, a lock whose ids are all remembered is judged without reading a
/// derivation record.
pub fn check(
    m: &Manifest,
    store: Option<&Store>,
    lock: &Lockfile,
    realise: bool,
) -> Result<(CheckReport, Option<Resolution>)> {
    Graph::build(m)?;
    let mut report = CheckReport::default();
    let mut overlay = Overlay { store, trees: Default::default() };
    for s in &m.sources {
        let snap = snapshot_source(m, s)?;
        overlay.trees.extend(snap.trees);
        if let Some(problem) = source_problem(lock, s, &snap.id) {
            let users = m.mounts.iter().filter(|x| x.select.iter().any(|l| inside(&s.dest, l)));
            let users: Vec<String> = users.map(|x| x.path.to_string()).collect();
            for u in &users {
                report.stale.entry(u.clone()).or_insert_with(|| problem.clone());
            }
            report.stale(None, problem);
        }
    }
    for g in &m.git_sources {
        if let Some(problem) = git_source_problem(lock, g) {
            let users = m.mounts.iter().filter(|x| x.select.iter().any(|l| inside(&g.dest, l)));
            for u in users {
                report.stale.entry(u.path.to_string()).or_insert_with(|| problem.clone());
            }
            report.stale(None, problem);
        }
    }
    let declared =
        |p: &String| m.sources.iter().any(|s| s.key() == *p) || m.git_sources.iter().any(|g| g.key() == *p);
    for place in lock.sources.keys().filter(|p| !declared(p)) {
        report.stale(None, format!("source `{place}` is in memorix.lock but not in memorix.toml"));
    }
    for name in lock.mounts.keys().filter(|n| m.mounts.iter().all(|x| x.path.as_str() != n.as_str())) {
        report.stale(None, format!("mount `{name}` is in memorix.lock but not in memorix.toml"));
    }
    let mut held = Vec::new();
    let pins = PinSource::new(m);
    for mount in &m.mounts {
        held.extend(check_mount(&overlay, m, mount, lock, &pins, &mut report)?);
    }
    if !report.problems.is_empty() || !report.missing.is_empty() {
        return Ok((report, None));
    }
    let ids: Vec<Id> =
        m.mounts.iter().filter_map(|x| lock.mounts.get(x.path.as_str())).map(|l| l.derivation).collect();
    let remembered = store.and_then(|s| s.records().remembered_plan(&environment_key(m, &ids)));
    if !realise && remembered == Some(lock.environment.id) {
        report.ok = true;
        return Ok((report, None));
    }
    let mut derivations = Vec::new();
    for (h, id) in held.into_iter().zip(&ids) {
        derivations.push(match h {
            Held::Plan(plan) => plan,
            Held::Remembered(store) => DerivationPlan::from_record(store.records().read_derivation(id)?),
        });
    }
    let pairs: Vec<_> = m.mounts.iter().map(|x| x.path.clone()).zip(derivations.iter()).collect();
    let environment = environment::plan(&pairs, &m.overrides)?;
    if environment.id() != lock.environment.id {
        report.stale(
            None,
            format!(
                "environment does not recompute: memorix.lock has {}, its mounts give {}",
                lock.environment.id,
                environment.id()
            ),
        );
        return Ok((report, None));
    }
    report.ok = true;
    let resolution = Resolution {
        lock: lock.clone(),
        derivations,
        environment,
        resolved: Vec::new(),
        planned: Vec::new(),
    };
    Ok((report, Some(resolution)))
}

/// Whether locator `l` lies inside the source placed at `dest`.
fn inside(dest: &Locator, l: &Locator) -> bool {
    dest.kind == l.kind && l.path.starts_with(&dest.path)
}

/// Why source `s` (now hashing to `now`) no longer matches the lock, if it does not.
fn source_problem(lock: &Lockfile, s: &crate::manifest::SourceDecl, now: &Id) -> Option<String> {
    let place = s.key();
    match lock.sources.get(&place) {
        None => Some(format!("source `{place}` ({}) is not in memorix.lock", s.written)),
        Some(l) if l.path != s.folder.as_str() => {
            Some(format!("source `{place}` is locked from {} but memorix.toml reads {}", l.path, s.folder))
        }
        Some(l) if l.hash != *now => Some(format!(
            "source `{place}` ({}) changed: memorix.lock has {}, the folder now hashes to {now}",
            s.written, l.hash
        )),
        Some(_) => None,
    }
}

/// The lock entry `l` still describes what git source `g` asks for: its repository, what it
/// follows and its subdirectory.
pub(crate) fn git_origin_matches(l: &crate::lock::LockedSource, g: &crate::manifest::GitSourceDecl) -> bool {
    l.git.as_deref() == Some(g.url.as_str())
        && l.follows.as_deref() == Some(g.reference.to_string().as_str())
        && l.path == g.path.as_ref().map(|p| p.to_string()).unwrap_or_default()
}

/// Why git source `g` no longer matches the lock, if it does not: the lock names another
/// origin (memorix.toml changed it) or none. A branch that moved on is not staleness.
fn git_source_problem(lock: &Lockfile, g: &crate::manifest::GitSourceDecl) -> Option<String> {
    let place = g.key();
    let Some(l) = lock.sources.get(&place) else {
        return Some(format!("source `{place}` (git {}) is not in memorix.lock", g.url));
    };
    if !git_origin_matches(l, g) {
        let path = g.path.as_ref().map(|p| p.to_string()).unwrap_or_default();
        let follows = g.reference.to_string();
        return Some(format!(
            "source `{place}`: memorix.toml follows {follows} of {} (path {path:?}); memorix.lock has {} of {} (path {:?})",
            g.url,
            l.follows.as_deref().unwrap_or("a folder"),
            l.git.as_deref().unwrap_or("the project"),
            l.path
        ));
    }
    None
}

/// A mount whose lock entry holds: its plan, or the Store that remembers planning it.
enum Held<'s> {
    Plan(DerivationPlan),
    Remembered(&'s Store),
}

/// Checks one mount against its lock entry; `None` when it does not hold.
fn check_mount<'s>(
    overlay: &Overlay<'s>,
    m: &Manifest,
    mount: &MountDecl,
    lock: &Lockfile,
    pins: &PinSource,
    report: &mut CheckReport,
) -> Result<Option<Held<'s>>> {
    let name = mount.path.to_string();
    let Some(locked) = lock.mounts.get(&name) else {
        report.stale(Some(&name), format!("mount `{name}` is not in memorix.lock"));
        return Ok(None);
    };
    if locked.inputs != mount_inputs(m, mount) {
        let why = format!(
            "mount `{name}`: its select, include, exclude or overrides changed since memorix.lock was written"
        );
        report.stale(Some(&name), why);
        return Ok(None);
    }
    if let Some(moved) = pins.moved(mount, locked)? {
        report.stale(Some(&name), moved);
        return Ok(None);
    }
    // A derivation the Store remembers this very selection planning to needs no tree walk.
    let remembered = overlay.store.filter(|s| {
        s.records().remembered_plan(&plan_key(mount, locked)) == Some(locked.derivation)
            && s.records().has_derivation(&locked.derivation)
    });
    if let Some(store) = remembered {
        return Ok(Some(Held::Remembered(store)));
    }
    let plan = from_lock(overlay.store, mount, locked).and_then(|sel| plan_mount(overlay, m, mount, &sel));
    match plan {
        Ok(plan) if plan.id() == locked.derivation => Ok(Some(Held::Plan(plan))),
        Ok(plan) => {
            let why = format!(
                "mount `{name}`: derivation does not recompute: memorix.lock has {}, its locked locators give {}",
                locked.derivation,
                plan.id()
            );
            report.stale(Some(&name), why);
            Ok(None)
        }
        Err(e) => match e.missing_object() {
            Some((what, id)) => {
                report.missing.push(format!("{what} {id}"));
                Ok(None)
            }
            None => Err(e),
        },
    }
}
