//! `memorix versions [LIBRARY|PATH]`: the library versions the Store holds.

use serde::Serialize;

use super::context::Context;
use super::error::Result;
use crate::model::{Id, Kind, Locator, StorePath, version};
use crate::store::records::library_key;

#[derive(Debug, Serialize)]
pub struct LibraryVersions {
    pub kind: Kind,
    pub library: String,
    /// Where it is ingested, e.g. `docs/httpx/`.
    pub place: String,
    /// Highest first.
    pub versions: Vec<VersionRow>,
}

#[derive(Debug, Serialize)]
pub struct VersionRow {
    pub version: String,
    pub tree: Id,
    pub generation: Id,
    pub seq: u64,
    /// The version `latest/` shows.
    pub latest: bool,
    /// The registry and artifact it was fetched from; none for docs ingested by hand or from a
    /// project's sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<String>,
}

/// Every tagged library, or those named `filter` (a library name, or a locator place).
pub fn versions(ctx: &Context, filter: Option<&str>) -> Result<Vec<LibraryVersions>> {
    let store = ctx.store()?;
    let place = filter
        .filter(|f| f.contains('/') || Kind::parse(f).is_some())
        .map(Locator::parse_place)
        .transpose()?;
    let mut out = Vec::new();
    for kind in Kind::ALL {
        if place.as_ref().is_some_and(|p| p.kind != kind) {
            continue;
        }
        let index = store.records().versions(kind)?;
        let tip_root = store.records().latest(kind)?.map(|g| g.generation.root);
        for (key, entries) in &index.libraries {
            if place.is_none() && filter.is_some_and(|f| library_key(f) != *key) {
                continue;
            }
            // A library may be ingested at several places; list each.
            let mut paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
            paths.dedup();
            for path in paths {
                let at = StorePath::new(path).expect("index paths come from validated tags");
                if place.as_ref().is_some_and(|p| !at.starts_with(&p.path) && !p.path.starts_with(&at)) {
                    continue;
                }
                let here: Vec<_> = entries.iter().filter(|e| e.path.as_str() == path).collect();
                let shown = match tip_root {
                    Some(root) => store.objects().lookup(&root, &at)?.map(|(_, id)| id),
                    None => None,
                };
                let mut order: Vec<String> = here.iter().map(|e| e.version.clone()).collect();
                order.dedup();
                version::sort_descending(&mut order);
                order.dedup();
                // Each variant of a version (content from another origin) is a row of its own.
                let versions = order
                    .iter()
                    .flat_map(|v| here.iter().filter(move |e| &e.version == v))
                    .map(|e| VersionRow {
                        version: e.version.clone(),
                        tree: e.tree,
                        generation: e.generation,
                        seq: e.seq,
                        latest: shown == Some(e.tree),
                        fetched: store
                            .records()
                            .fetched(&e.tree)
                            .map(|r| format!("{} {}", r.registry, r.artifact)),
                    })
                    .collect();
                let library = key.clone();
                out.push(LibraryVersions { kind, library, place: format!("{kind}/{path}/"), versions });
            }
        }
    }
    Ok(out)
}
