//! `memorix add --deps`: one mount per dependency a pin file pins (DESIGN.md §13.1), each
//! selecting `docs/<name>/@pin`, written through toml_edit and locked, so the docs of forty
//! dependencies are fetched at their pinned versions without forty hand edits.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::edit::{parse_doc, write_then_lock};
use super::error::{Error, Result};
use super::lock::LockOutcome;
use crate::diagnostics::FromIo;
use crate::fetch::Registry;
use crate::manifest;
use crate::pins::{self, Ecosystem, Pin, PinFile};
use crate::progress::Progress;

/// Which dependencies get a mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// What the project itself depends on (workspace members, the root package, every line
    /// of a requirements file).
    Direct,
    /// Every package the pin file pins.
    All,
}

/// One dependency `add --deps` looked at.
#[derive(Debug, Serialize)]
pub struct Dep {
    pub library: String,
    /// As pinned; several, comma-separated, when the file pins several under markers.
    pub version: String,
    pub ecosystem: Ecosystem,
    /// The pin file that pins it (project-relative).
    pub file: String,
    pub mount: String,
}

#[derive(Debug, Serialize)]
pub struct DepsAdded {
    pub scope: Scope,
    /// Mounts written to memorix.toml, by name.
    pub added: Vec<Dep>,
    /// Dependencies a mount already selects (left as they are).
    pub kept: Vec<Dep>,
    /// Pins no registry memorix fetches from serves: path and git dependencies, other
    /// ecosystems (their docs can still be ingested by hand and mounted).
    pub skipped: Vec<Dep>,
    /// The pin file `--pins` added to `[pins] files`, if it was not listed.
    pub listed: Option<String>,
    pub lock: LockOutcome,
}

/// Adds a mount per dependency of `pins_file` (else of every `[pins] files` entry), then locks.
pub fn add_deps(
    start: &Path,
    store_root: &Path,
    scope: Scope,
    pins_file: Option<&str>,
    offline: bool,
    progress: &dyn Progress,
) -> Result<DepsAdded> {
    let path = manifest::find(start)?;
    let m = manifest::load(&path, start)?;
    let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
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
    let mut deps: BTreeMap<String, (Dep, bool)> = BTreeMap::new();
    for file in &files {
        let parsed = pins::parse_named(&m.dir.join(file), file)?;
        if scope == Scope::Direct && !parsed.records_direct() {
            return Err(Error::DirectUnknown { file: file.clone() });
        }
        for pin in parsed.pins.iter().filter(|p| scope == Scope::All || p.direct) {
            let dep = dep(&parsed, file, pin);
            match deps.get_mut(&dep.library) {
                // Several versions (under different markers): the resolve picks one; say all.
                Some((seen, _)) if !seen.version.split(", ").any(|v| v == dep.version) => {
                    seen.version = format!("{}, {}", seen.version, dep.version);
                }
                Some(_) => {}
                None => {
                    let fetchable = fetchable(parsed.ecosystem, pin);
                    deps.insert(dep.library.clone(), (dep, fetchable));
                }
            }
        }
    }
    let selected: Vec<String> =
        m.mounts.iter().flat_map(|d| d.select.iter().map(|l| l.to_string())).collect();
    let (mut added, mut kept, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for (_, (dep, fetchable)) in deps {
        let locator = locator(&dep.library);
        if selected.contains(&locator) || m.mounts.iter().any(|d| d.path.as_str() == dep.mount) {
            kept.push(dep);
        } else if !fetchable {
            skipped.push(dep);
        } else {
            insert_mount(&mut doc, &dep, &locator)?;
            added.push(dep);
        }
    }
    let lock = write_then_lock(&path, &text, &doc.to_string(), start, store_root, offline, progress)?;
    Ok(DepsAdded { scope, added, kept, skipped, listed, lock })
}

fn dep(file: &PinFile, name: &str, pin: &Pin) -> Dep {
    let library = pins::normalize(file.ecosystem, &pin.name);
    Dep {
        mount: format!("libs/{library}"),
        library,
        version: pin.version.clone(),
        ecosystem: file.ecosystem,
        file: name.to_string(),
    }
}

fn locator(library: &str) -> String {
    format!("docs/{library}/@pin")
}

/// Whether a registry memorix fetches from serves the pin: not a path, git or workspace
/// package (Cargo.lock marks registry packages with a `registry+`/`sparse+` source; Python and
/// npm pins name one only when it is not the default index).
fn fetchable(eco: Ecosystem, pin: &Pin) -> bool {
    let from_registry = |s: &str| ["registry+", "sparse+", "legacy"].iter().any(|p| s.starts_with(p));
    Registry::of(eco).is_some()
        && match (eco, pin.source.as_deref()) {
            (Ecosystem::Cargo, None) => false,
            (_, None) => true,
            (_, Some(s)) => from_registry(s),
        }
}

/// `[pins] files` gains `file` (the table is created when missing).
fn list_pin_file(doc: &mut DocumentMut, file: &str) -> Result<()> {
    let pins = doc.entry("pins").or_insert_with(|| Item::Table(Table::new()));
    let pins = pins.as_table_like_mut().ok_or_else(|| Error::NotATable { what: "[pins]".into() })?;
    let files = pins.entry("files").or_insert_with(|| value(Array::new()));
    let files = files.as_array_mut().ok_or_else(|| Error::NotATable { what: "[pins] files".into() })?;
    files.push(file);
    Ok(())
}

/// `[mounts."libs/<name>"]` selecting the library's docs at the pinned version. A name that
/// is not one path segment (npm's `@scope/pkg`) says which library it is.
fn insert_mount(doc: &mut DocumentMut, dep: &Dep, locator: &str) -> Result<()> {
    let mounts = doc.entry("mounts").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let mounts = mounts.as_table_mut().ok_or_else(|| Error::NotATable { what: "[mounts]".into() })?;
    let mut table = Table::new();
    table.insert("select", value(Array::from_iter([locator])));
    if dep.library.contains('/') {
        table.insert("library", value(&dep.library));
    }
    table.insert("intent", value(format!("{} docs at the version {} pins", dep.library, dep.file)));
    mounts.insert(&dep.mount, Item::Table(table));
    Ok(())
}
