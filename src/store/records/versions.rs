//! The version index: (library, version) -> tagged subtree, per kind. A rebuildable cache of
//! the generations' version tags, stored at `index/versions/<kind>.json` with the tip it was
//! built from; a reader that finds it behind the ref rebuilds it in memory.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::generation::GenRef;
use crate::model::{Id, Kind, StorePath};
use crate::store::error::Result;
use crate::store::{Store, Writer, fsutil};

/// One tagged version of a library.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionEntry {
    pub version: String,
    /// Where it was ingested, inside the kind's tree.
    pub path: StorePath,
    pub tree: Id,
    pub generation: Id,
    pub seq: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionIndex {
    /// The generation this index reflects.
    pub tip: Option<Id>,
    /// Normalized library name -> its versions in ingest order (a re-tag replaces in place;
    /// one version may appear once per variant: content from another origin).
    pub libraries: BTreeMap<String, Vec<VersionEntry>>,
}

/// Library names compare case-insensitively with `-`, `_` and `.` alike (`Flask_Login` is
/// `flask-login`), the loosest of the ecosystems' rules.
pub fn library_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.extend(c.to_lowercase());
    }
    out
}

impl VersionIndex {
    pub fn entries(&self, library: &str) -> &[VersionEntry] {
        self.libraries.get(&library_key(library)).map(Vec::as_slice).unwrap_or_default()
    }

    /// A re-tag of the same content replaces its entry; the same version with other content
    /// (a project's own docs beside the registry's release) is another variant of it.
    fn record(&mut self, library: &str, entry: VersionEntry) {
        let list = self.libraries.entry(library_key(library)).or_default();
        match list.iter_mut().find(|e| e.version == entry.version && e.tree == entry.tree) {
            Some(existing) => *existing = entry,
            None => list.push(entry),
        }
    }

    /// Records each version generation `g` tags.
    fn record_tags(&mut self, g: &GenRef) {
        for t in &g.generation.tags {
            let entry = VersionEntry {
                version: t.version.clone(),
                path: t.path.clone(),
                tree: t.tree,
                generation: g.id,
                seq: g.generation.seq,
            };
            self.record(&t.library, entry);
        }
    }
}

impl Store {
    fn version_index_path(&self, kind: Kind) -> PathBuf {
        self.root().join("index/versions").join(format!("{kind}.json"))
    }

    /// The version index of `kind`, rebuilt from the generations when the cache is behind.
    pub(super) fn versions(&self, kind: Kind) -> Result<VersionIndex> {
        let tip = self.latest(kind)?.map(|g| g.id);
        let cached: Option<VersionIndex> = fsutil::read_object(&self.version_index_path(kind))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        if let Some(index) = cached.filter(|i| i.tip == tip) {
            return Ok(index);
        }
        let mut index = VersionIndex { tip, libraries: BTreeMap::new() };
        let mut history = self.history(kind)?;
        history.reverse();
        for g in &history {
            index.record_tags(g);
        }
        Ok(index)
    }
}

impl Writer<'_> {
    /// Brings the cached index up to the just-published generation `g`: incrementally when the
    /// cache was at its parent, else by a rebuild.
    pub(super) fn update_version_index(&self, g: &GenRef) -> Result<()> {
        let kind = g.generation.kind;
        let path = self.store.version_index_path(kind);
        let cached: Option<VersionIndex> =
            fsutil::read_object(&path).ok().and_then(|b| serde_json::from_slice(&b).ok());
        let index = match cached.filter(|i| i.tip.is_some() && i.tip == g.generation.parent) {
            Some(mut index) => {
                index.tip = Some(g.id);
                index.record_tags(g);
                index
            }
            None => self.store.versions(kind)?,
        };
        let path = self.store.version_index_path(kind);
        fsutil::create_dir(path.parent().expect("index/versions"))?;
        let bytes = serde_json::to_vec_pretty(&index).expect("an index serializes");
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &path, &bytes)?)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn library_keys() {
        assert_eq!(super::library_key("Flask_Login"), "flask-login");
        assert_eq!(super::library_key("zope.interface"), "zope-interface");
        assert_eq!(super::library_key("serde_json"), "serde-json");
        assert_eq!(super::library_key("httpx"), "httpx");
    }
}
