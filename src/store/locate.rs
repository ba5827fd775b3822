//! Resolving a locator against the store: which generation (or tagged version), and what is
//! at its path.

use super::Store;
use super::generation::GenRef;
use crate::diagnostics::{Error, Result};
use crate::model::version::{self, MatchPolicy};
use crate::model::{EntryKind, Id, Locator, Selector, StorePath};

/// What a locator names in one generation.
#[derive(Clone, Debug)]
pub struct Located {
    pub generation: GenRef,
    pub kind: EntryKind,
    pub id: Id,
    /// The tagged (library key, version) it came from (`@v`, `@pin`).
    pub version: Option<(String, String)>,
}

impl Store {
    /// Opens the locator's generation (or version) and walks to its path; a missing path is an
    /// error, as is a trailing `/` on a file.
    pub fn locate(&self, loc: &Locator) -> Result<Located> {
        match &loc.selector {
            Some(Selector::Version(v)) => self.locate_version(loc, None, v, MatchPolicy::Exact),
            Some(Selector::Pin) => Err(Error::usage(
                format!("`{loc}` resolves through a project's [pins]"),
                Some("use @pin in a memorix.toml mount, or name a version with @vVERSION".to_string()),
            )),
            selector => {
                let generation = self.select_generation(loc.kind, selector.as_ref())?;
                let root = generation.generation.root;
                let seq = generation.generation.seq;
                let found = self.lookup(&root, &loc.path)?;
                let (kind, id) =
                    found.ok_or_else(|| Error::PathNotFound { kind: loc.kind, path: loc.place(), seq })?;
                check_subtree(loc, kind)?;
                Ok(Located { generation, kind, id, version: None })
            }
        }
    }

    /// `loc`'s path inside the tagged version of `library` that `policy` picks for `wanted`.
    /// Without a library name, the library tagged at the deepest path at or above `loc`.
    pub fn locate_version(
        &self,
        loc: &Locator,
        library: Option<&str>,
        wanted: &str,
        policy: MatchPolicy,
    ) -> Result<Located> {
        let index = self.versions(loc.kind)?;
        let under = |path: &str| StorePath::new(path).is_ok_and(|p| loc.path.starts_with(&p));
        let by_path = || {
            let tagged = index.libraries.iter().flat_map(|(k, es)| es.iter().map(move |e| (k, e)));
            tagged.filter(|(_, e)| under(&e.path)).max_by_key(|(_, e)| e.path.len()).map(|(k, _)| k.as_str())
        };
        let library = library.or_else(by_path).or(loc.path.file_name()).unwrap_or(loc.kind.as_str());
        // Versions of the library ingested at the locator's path or above it.
        let entries: Vec<_> = index.entries(library).iter().filter(|e| under(&e.path)).collect();
        if entries.is_empty() {
            return Err(Error::NoVersions { library: library.to_string(), place: loc.place() });
        }
        let known: Vec<&str> = entries.iter().map(|e| e.version.as_str()).collect();
        let Some(picked) = version::pick(policy, wanted, &known) else {
            let mut available: Vec<String> = known.iter().map(|s| s.to_string()).collect();
            version::sort_descending(&mut available);
            return Err(Error::NoAcceptableVersion {
                library: library.to_string(),
                wanted: wanted.to_string(),
                policy: policy.as_str(),
                available: available.join(", "),
            });
        };
        let entry = entries.iter().rev().find(|e| e.version == picked).expect("picked from these");
        let base = StorePath::new(&entry.path).expect("checked above");
        let rest = StorePath::new(loc.path.as_str()[base.as_str().len()..].trim_start_matches('/'))
            .expect("a suffix of a valid path");
        let (kind, id) = self.lookup(&entry.tree, &rest)?.ok_or_else(|| Error::PathNotFound {
            kind: loc.kind,
            path: loc.place(),
            seq: entry.seq,
        })?;
        check_subtree(loc, kind)?;
        let generation =
            GenRef { id: entry.generation, generation: self.read_generation(loc.kind, &entry.generation)? };
        let tagged = (crate::store::versions::library_key(library), entry.version.clone());
        Ok(Located { generation, kind, id, version: Some(tagged) })
    }
}

fn check_subtree(loc: &Locator, kind: EntryKind) -> Result<()> {
    if loc.subtree && kind == EntryKind::Blob {
        return Err(Error::NotDirectory { path: loc.place() });
    }
    Ok(())
}
