//! `memorix add --deps`: one mount per dependency a pin file pins
//! (book: design/fetching.md#a-mount-per-dependency), each selecting `docs/<name>/@pin`,
//! written through toml_edit and locked, so the docs of forty dependencies are fetched at their
//! pinned versions without forty hand edits.
//!
//! The outcome is per dependency, as a package manager's is: every dependency whose docs can
//! be had is mounted, every other one is listed with its reason and fix, in one run. What was
//! fetched stays in the Store, so a second run fetches only what failed.

use std::collections::{BTreeMap, BTreeSet};

use miette::Diagnostic;
use serde::Serialize;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::context::Context;
use super::edit::{parse_doc, write_then_lock};
use super::error::FetchFailure;
use super::error::{Error, Result};
use super::fetch::{fetch_requests, wanted};
use super::lock::LockOutcome;
use crate::fetch::{Fetched, Registry};
use crate::manifest::{self, Manifest};
use crate::pins::{self, Ecosystem, Pin, PinFile};
use crate::resolve::PinSource;

/// Which dependencies get a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// What the project itself depends on: every workspace member's dependencies, from the
    /// lockfile where it records them, else from the manifest beside it.
    Direct,
    /// Every package the pin file pins.
    All,
}

/// One dependency `add --deps` looked at, and the mount it gets (or would have got).
#[derive(Debug, Clone, Serialize)]
pub struct Dep {
    /// The name the code imports it by: as the pin file spells it (PEP 503 for Python), the
    /// alias for an npm alias.
    pub library: String,
    /// The registry's name for it, when `library` is an alias.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// As pinned.
    pub version: String,
    pub ecosystem: Ecosystem,
    /// The pin file that pins it (project-relative), and `file:line` of the pin.
    pub file: String,
    pub at: String,
    pub mount: String,
    /// Where members pin it at different versions: the members' files this version is for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub applies_to: Vec<String>,
    /// Set when the mount must choose among several pinned versions.
    #[serde(skip)]
    choose_version: bool,
}

/// A dependency that got no mount, why, and what to do.
#[derive(Debug, Serialize)]
pub struct NotAdded {
    #[serde(flatten)]
    pub dep: Dep,
    pub reason: String,
    pub fix: String,
    /// The error code behind the reason, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// 1 for a check that failed (a hash), else 2; 0 for a notice.
    #[serde(skip)]
    pub exit: u8,
}

#[derive(Debug, Serialize)]
pub struct DepsAdded {
    pub scope: Scope,
    /// Mounts written to memorix.toml, by name.
    pub added: Vec<Dep>,
    /// Dependencies a mount already selects (left as they are).
    pub kept: Vec<Dep>,
    /// Left out by design, with a notice: not served by a registry memorix fetches from (path,
    /// git and workspace packages, other ecosystems), nothing a docs view keeps (binary-only
    /// wheels), past the size cap, or pinned only by a range.
    pub skipped: Vec<NotAdded>,
    /// Could not be added: each with its reason and fix.
    pub failed: Vec<NotAdded>,
    /// Pin files that do not say which packages the project depends on directly.
    pub undirected: Vec<String>,
    /// The pin file `--pins` added to `[pins] files`, if it was not listed.
    pub listed: Option<String>,
    /// The target written as `[pins] markers` to settle versions pinned under markers.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub target: BTreeMap<String, String>,
    /// Docs fetched from the registries.
    pub fetched: Vec<Fetched>,
    /// The lock, when memorix.toml changed (only when a mount was added).
    pub lock: Option<LockOutcome>,
}

impl DepsAdded {
    /// The exit code: 0 when every dependency was mounted or skipped by design; 2 (1 for a
    /// hash that does not match) when one could not be added or a pin file did not say.
    pub fn exit_code(&self) -> u8 {
        let undirected = if self.undirected.is_empty() { 0 } else { 2 };
        self.failed.iter().map(|f| f.exit).max().unwrap_or(0).max(undirected)
    }
}

/// Adds a mount per dependency of `pins_file` (else of every `[pins] files` entry), then locks.
pub fn add_deps(ctx: &mut Context, scope: Scope, pins_file: Option<&str>) -> Result<DepsAdded> {
    let path = manifest::find(ctx.cwd())?;
    let (m, text) = manifest::load_text(&path, ctx.cwd())?;
    let mut doc = parse_doc(&path, &text)?;
    let files: Vec<String> = match pins_file {
        Some(f) => vec![f.trim_start_matches("./").to_string()],
        None => m.pins.files.clone(),
    };
    if files.is_empty() {
        return Err(Error::NoPinFilesToRead);
    }
    let listed = files.iter().find(|f| !m.pins.files.contains(f)).cloned();
    if let Some(f) = &listed {
        list_pin_file(&mut doc, f)?;
    }
    let mut out = DepsAdded {
        scope,
        added: Vec::new(),
        kept: Vec::new(),
        skipped: Vec::new(),
        failed: Vec::new(),
        undirected: Vec::new(),
        listed,
        target: BTreeMap::new(),
        fetched: Vec::new(),
        lock: None,
    };
    let mut libraries: BTreeMap<(Ecosystem, String), Vec<(String, Pin)>> = BTreeMap::new();
    for file in &files {
        let parsed = pins::parse_named(&m.dir.join(file), file)?;
        collect(&parsed, file, scope, &mut out, &mut libraries);
    }
    let mut planned = Vec::new();
    let mut split_by_markers = false;
    for ((eco, _), pins) in &libraries {
        split_by_markers |= plan_library(&m, *eco, pins, &mut out, &mut planned);
    }
    if split_by_markers && m.pins.markers.is_empty() {
        out.target = pins::default_target(&m.dir, &files);
        set_target(&mut doc, &out.target)?;
    }
    for dep in &planned {
        insert_mount(&mut doc, dep)?;
    }
    let problems = fetch_planned(ctx, &m, &doc, &mut planned, &mut out)?;
    for dep in planned {
        match problems.get(&dep.mount) {
            Some(p) => {
                remove_mount(&mut doc, &dep.mount);
                let not_added = NotAdded {
                    dep,
                    reason: p.reason.clone(),
                    fix: p.fix.clone(),
                    code: p.code.clone(),
                    exit: p.exit,
                };
                if p.exit == 0 { out.skipped.push(not_added) } else { out.failed.push(not_added) }
            }
            None => out.added.push(dep),
        }
    }
    // Nothing added: memorix.toml stays as it was (no pin file listed, no target declared).
    if out.added.is_empty() {
        out.target.clear();
        out.listed = None;
        return Ok(out);
    }
    let new = doc.to_string();
    if new != text {
        out.lock = Some(write_then_lock(ctx, &path, &text, &new)?);
    }
    Ok(out)
}

/// The pins of `file` that `scope` takes, grouped by library; what cannot be mounted at all
/// (a name that is not one, a range) goes to `out` at once.
fn collect(
    file: &PinFile,
    name: &str,
    scope: Scope,
    out: &mut DepsAdded,
    libraries: &mut BTreeMap<(Ecosystem, String), Vec<(String, Pin)>>,
) {
    let eco = file.ecosystem;
    if scope == Scope::Direct && !file.records_direct() {
        out.undirected.push(name.to_string());
        return;
    }
    let taken = |p: &&Pin| scope == Scope::All || p.direct;
    for (pin, why) in file.refused.iter().filter(|(p, _)| scope == Scope::All || p.direct) {
        let dep = dep(eco, name, pin, &pins::name::shown(&pin.name));
        let fix = format!("{name} names a package that is not one: fix or regenerate {name}");
        out.failed.push(NotAdded {
            dep,
            reason: format!("not a package name: {why}"),
            fix,
            code: None,
            exit: 2,
        });
    }
    for pin in file.unpinned.iter().filter(taken) {
        let dep = dep(eco, name, pin, &pins::library_name(eco, &pin.name));
        let reason = format!("{name} gives only `{}`, not one version", pin.version);
        let fix = format!("pin it exactly (`{}==X.Y.Z`), or compile {name} with pip-compile or uv", pin.name);
        out.skipped.push(NotAdded { dep, reason, fix, code: None, exit: 0 });
    }
    // The project's own packages (Cargo's workspace members and path packages) are not
    // dependencies whose docs anyone fetches.
    let own = |p: &Pin| eco == Ecosystem::Cargo && p.source.is_none();
    for pin in file.pins.iter().filter(taken).filter(|p| !own(p)) {
        let key = (eco, pins::normalize(eco, &pin.name));
        libraries.entry(key).or_default().push((name.to_string(), pin.clone()));
    }
}

fn dep(eco: Ecosystem, file: &str, pin: &Pin, library: &str) -> Dep {
    let at = match pin.line {
        0 => file.to_string(),
        n => format!("{file}:{n}"),
    };
    Dep {
        mount: format!("libs/{library}"),
        library: library.to_string(),
        package: pin.package.clone(),
        version: pin.version.clone(),
        ecosystem: eco,
        file: file.to_string(),
        at,
        applies_to: Vec::new(),
        choose_version: false,
    }
}

/// Plans the mounts of one library from its pins: one mount when one version serves; one per
/// version, each scoped to the members that use it, when members pin different versions.
/// Returns whether the versions differ only by markers (a target settles them).
fn plan_library(
    m: &Manifest,
    eco: Ecosystem,
    pins: &[(String, Pin)],
    out: &mut DepsAdded,
    planned: &mut Vec<Dep>,
) -> bool {
    let (file, first) = &pins[0];
    let library = pins::library_name(eco, &first.name);
    let base = dep(eco, file, first, &library);
    let selected = |locator: &str| m.mounts.iter().any(|d| d.select.iter().any(|l| l.to_string() == locator));
    if !fetchable(eco, first) {
        let (reason, fix) = unfetchable(eco, first);
        out.skipped.push(NotAdded { dep: base, reason, fix, code: None, exit: 0 });
        return false;
    }
    let mut versions: BTreeMap<String, Vec<&(String, Pin)>> = BTreeMap::new();
    for p in pins {
        versions.entry(pins::docs_version(eco, &p.1.version)).or_default().push(p);
    }
    let exists = |mount: &str| m.mounts.iter().any(|d| d.path.as_str() == mount);
    if versions.len() == 1 || markers_split(&versions) {
        if selected(&locator(&library)) || exists(&base.mount) {
            out.kept.push(base);
        } else {
            planned.push(base);
        }
        return versions.len() > 1;
    }
    let scoped = members_split(&versions);
    for group in versions.values() {
        let (file, pin) = group[0];
        let mut d = dep(eco, file, pin, &library);
        d.mount = format!("libs/{library}@{}", pins::docs_version(eco, &pin.version));
        d.choose_version = true;
        if let Some(members) = &scoped {
            d.applies_to = members[&pins::docs_version(eco, &pin.version)].clone();
        }
        if exists(&d.mount) { out.kept.push(d) } else { planned.push(d) }
    }
    false
}

/// Whether the versions differ by markers (the same roots, one version per environment).
fn markers_split(versions: &BTreeMap<String, Vec<&(String, Pin)>>) -> bool {
    let markers: BTreeSet<Option<&str>> =
        versions.values().flat_map(|g| g.iter().map(|(_, p)| p.markers.as_deref())).collect();
    markers.len() > 1 && markers.iter().all(Option::is_some)
}

/// When every version is used by its own members (folders no other version's members share),
/// the `applies-to` globs of each version: `packages/app/**`, `**` for the project itself.
fn members_split(versions: &BTreeMap<String, Vec<&(String, Pin)>>) -> Option<BTreeMap<String, Vec<String>>> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut out = BTreeMap::new();
    for (version, group) in versions {
        let members: BTreeSet<&str> =
            group.iter().flat_map(|(_, p)| p.members.iter().map(String::as_str)).collect();
        if members.is_empty() || members.iter().any(|f| !seen.insert(f)) {
            return None;
        }
        let globs = members.iter().map(|f| if f.is_empty() { "**".to_string() } else { format!("{f}/**") });
        out.insert(version.clone(), globs.collect());
    }
    Some(out)
}

fn locator(library: &str) -> String {
    format!("docs/{library}/@pin")
}

/// Sources (as the pin files write them) that are not a registry's release: a git checkout, a
/// folder, a link, a workspace package, a URL.
const NOT_RELEASES: [&str; 13] = [
    "git",
    "path",
    "directory",
    "editable",
    "virtual",
    "url",
    "file",
    "link",
    "workspace",
    "portal",
    "exec",
    "github",
    "hg",
];

/// Whether a registry memorix fetches from serves the pin. Cargo.lock marks registry packages
/// with a `registry+`/`sparse+` source (no source: a workspace package); the Python and npm
/// files name a source only when it is not the default index (or, for Pipfile.lock, the
/// section), so only the kinds above are left out. A patched npm package's docs are its
/// release's.
fn fetchable(eco: Ecosystem, pin: &Pin) -> bool {
    Registry::of(eco).is_some()
        && match (eco, pin.source.as_deref()) {
            (Ecosystem::Cargo, None) => false,
            (Ecosystem::Cargo, Some(s)) => s.starts_with("registry+") || s.starts_with("sparse+"),
            (_, None) => true,
            (_, Some(s)) => !NOT_RELEASES.iter().any(|p| s.starts_with(p)),
        }
}

/// Why a pin is not fetched, and what to do instead.
fn unfetchable(eco: Ecosystem, pin: &Pin) -> (String, String) {
    match Registry::of(eco) {
        None => (
            format!("memorix fetches docs from crates.io, PyPI and npm, not for {}", eco.as_str()),
            format!(
                "ingest its docs by hand: `memorix ingest docs/{}/ DIR --version {}`",
                pin.name, pin.version
            ),
        ),
        Some(_) => (
            format!("not from a registry ({})", pin.source.as_deref().unwrap_or("a workspace package")),
            "its docs are the project's own, or ingest them by hand, or list them in [sources]".into(),
        ),
    }
}

/// Why a planned mount cannot be added.
struct Problem {
    reason: String,
    fix: String,
    code: Option<String>,
    exit: u8,
}

impl Problem {
    fn of(e: &dyn Diagnostic, exit: u8) -> Problem {
        Problem {
            reason: e.to_string(),
            fix: e.help().map(|h| h.to_string()).unwrap_or_default(),
            code: e.code().map(|c| c.to_string()),
            exit,
        }
    }

    /// A fetch failure: a package with nothing to read, or past the size cap, is skipped
    /// (exit 0) as a notice; anything else failed.
    fn fetch(f: &FetchFailure) -> Problem {
        use crate::fetch::Error as F;
        let notice =
            matches!(*f.error, F::NothingKept { .. } | F::TooLarge { .. } | F::ArtifactTooLarge { .. });
        Problem::of(&*f.error, if notice { 0 } else { f.error.exit_code() })
    }
}

/// Resolves each planned mount's pin against the trial manifest `doc` and fetches what the
/// Store lacks, each on its own; returns the problem of each mount that cannot be added.
fn fetch_planned(
    ctx: &mut Context,
    m: &Manifest,
    doc: &DocumentMut,
    planned: &mut [Dep],
    out: &mut DepsAdded,
) -> Result<BTreeMap<String, Problem>> {
    let mut problems = BTreeMap::new();
    if planned.is_empty() {
        return Ok(problems);
    }
    let trial = manifest::parse(&doc.to_string(), "memorix.toml", &m.dir)?;
    let _project_lock = ctx.guard_project()?;
    let ctx = &*ctx;
    let writer = ctx.writer()?;
    writer.maintenance().heal_latest()?;
    let pins = PinSource::new(&trial);
    let mut by_pin: BTreeMap<(String, String), Vec<&str>> = BTreeMap::new();
    for dep in planned.iter_mut() {
        let Some(mount) = trial.mounts.iter().find(|d| d.path.as_str() == dep.mount) else { continue };
        match mount.select.first().map(|loc| pins.pin(mount, loc)) {
            Some(Ok(pin)) => {
                // The version the resolve takes (the target's, where markers split it).
                dep.version = pin.version.clone();
                by_pin.entry((pin.library, pin.version)).or_default().push(&dep.mount)
            }
            Some(Err(e)) => {
                problems.insert(dep.mount.clone(), Problem::of(&e, 2));
            }
            None => {}
        }
    }
    let only: BTreeSet<String> = by_pin.keys().map(|(l, _)| l.clone()).collect();
    let requests: Vec<_> = wanted(&trial, Some(writer.store), None, Some(&only))
        .into_iter()
        .filter(|r| by_pin.contains_key(&(r.library.clone(), r.version.clone())))
        .collect();
    let fetching = fetch_requests(ctx, &trial, &writer, requests)?;
    out.fetched = fetching.fetched;
    for f in &fetching.failures {
        for mount in by_pin.get(&(f.library.clone(), f.version.clone())).into_iter().flatten() {
            problems.insert(mount.to_string(), Problem::fetch(f));
        }
    }
    Ok(problems)
}

/// `[pins] files` gains `file` (the table is created when missing).
fn list_pin_file(doc: &mut DocumentMut, file: &str) -> Result<()> {
    let files = pins_table(doc)?.entry("files").or_insert_with(|| value(Array::new()));
    let files = files.as_array_mut().ok_or_else(|| Error::NotATable { what: "[pins] files".into() })?;
    files.push(file);
    Ok(())
}

fn pins_table(doc: &mut DocumentMut) -> Result<&mut dyn toml_edit::TableLike> {
    let pins = doc.entry("pins").or_insert_with(|| Item::Table(Table::new()));
    pins.as_table_like_mut().ok_or_else(|| Error::NotATable { what: "[pins]".into() })
}

/// `[pins] markers = { ... }`: the target that settles versions pinned under markers.
fn set_target(doc: &mut DocumentMut, target: &BTreeMap<String, String>) -> Result<()> {
    let mut table = InlineTable::new();
    for (k, v) in target {
        table.insert(k, v.as_str().into());
    }
    pins_table(doc)?.insert("markers", value(table));
    Ok(())
}

/// `[mounts."libs/<name>"]` selecting the library's docs at the pinned version. A name that
/// is not the locator's last component (npm's `@scope/pkg`, a per-version mount) says which
/// library it is; a per-version mount names its version and the members it is for.
fn insert_mount(doc: &mut DocumentMut, dep: &Dep) -> Result<()> {
    let mounts = doc.entry("mounts").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let mounts = mounts.as_table_mut().ok_or_else(|| Error::NotATable { what: "[mounts]".into() })?;
    let mut table = Table::new();
    table.insert("select", value(Array::from_iter([locator(&dep.library)])));
    if dep.library.contains('/') {
        table.insert("library", value(&dep.library));
    }
    if dep.choose_version {
        table.insert("version", value(&dep.version));
    }
    if !dep.applies_to.is_empty() {
        table.insert("applies-to", value(Array::from_iter(dep.applies_to.iter().map(String::as_str))));
    }
    table.insert("intent", value(format!("{} docs at the version {} pins", dep.library, dep.file)));
    mounts.insert(&dep.mount, Item::Table(table));
    Ok(())
}

fn remove_mount(doc: &mut DocumentMut, mount: &str) {
    if let Some(mounts) = doc.get_mut("mounts").and_then(Item::as_table_mut) {
        mounts.remove(mount);
    }
}
