//! Resolving a locator against the store: which generation (or tagged version), and what is
//! at its path; and finding objects by a prefix of their id.

use std::fs;
use std::io;
use std::path::Path;

use super::generation::GenRef;
use crate::diagnostics::FromIo;
use crate::model::version::{self, MatchPolicy};
use crate::model::{EntryKind, Id, IdPrefix, Kind, Locator, Selector, StorePath};
use crate::store::Store;
use crate::store::error::{Error, Result};

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
            Some(Selector::Version(v)) => self.locate_version(loc, None, v, MatchPolicy::Exact, None, None),
            Some(Selector::Pin) => Err(Error::PinOutsideProject { locator: loc.to_string() }),
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

    /// `loc`'s path inside the tagged version of `library` that `policy` picks for `wanted`,
    /// comparing versions by `scheme` (a pinned library's ecosystem's) where given.
    /// Without a library name, the library tagged at the deepest path at or above `loc`.
    /// Of several variants of the picked version: the one whose tree is `prefer` (the project's
    /// own source of it), else the registry's release, else the latest ingested.
    pub fn locate_version(
        &self,
        loc: &Locator,
        library: Option<&str>,
        wanted: &str,
        policy: MatchPolicy,
        scheme: Option<version::Scheme>,
        prefer: Option<&Id>,
    ) -> Result<Located> {
        let index = self.versions(loc.kind)?;
        let under = |path: &StorePath| loc.path.starts_with(path);
        let by_path = || {
            let tagged = index.libraries.iter().flat_map(|(k, es)| es.iter().map(move |e| (k, e)));
            let deepest = tagged.filter(|(_, e)| under(&e.path)).max_by_key(|(_, e)| e.path.as_str().len());
            deepest.map(|(k, _)| k.as_str())
        };
        let library = library.or_else(by_path).or(loc.path.file_name()).unwrap_or(loc.kind.as_str());
        // Versions of the library ingested at the locator's path or above it.
        let entries: Vec<_> = index.entries(library).iter().filter(|e| under(&e.path)).collect();
        if entries.is_empty() {
            return Err(Error::NoVersions { library: library.to_string(), place: loc.place() });
        }
        let known: Vec<&str> = entries.iter().map(|e| e.version.as_str()).collect();
        let Some(picked) = version::pick(scheme, policy, wanted, &known) else {
            let mut available: Vec<String> = known.iter().map(|s| s.to_string()).collect();
            version::sort_descending(&mut available);
            return Err(Error::NoAcceptableVersion {
                library: library.to_string(),
                wanted: wanted.to_string(),
                policy: policy.as_str(),
                available: available.join(", "),
            });
        };
        let variants: Vec<_> = entries.iter().rev().filter(|e| e.version == picked).collect();
        let entry = prefer
            .and_then(|t| variants.iter().find(|e| e.tree == *t))
            .or_else(|| variants.iter().find(|e| self.fetched(&e.tree).is_some()))
            .unwrap_or(&variants[0]);
        let rest = loc.path.strip_prefix(&entry.path).expect("entries lie at or above the locator");
        let (kind, id) = self.lookup(&entry.tree, &rest)?.ok_or_else(|| Error::PathNotFound {
            kind: loc.kind,
            path: loc.place(),
            seq: entry.seq,
        })?;
        check_subtree(loc, kind)?;
        let generation =
            GenRef { id: entry.generation, generation: self.read_generation(loc.kind, &entry.generation)? };
        let tagged = (super::versions::library_key(library), entry.version.clone());
        Ok(Located { generation, kind, id, version: Some(tagged) })
    }
}

fn check_subtree(loc: &Locator, kind: EntryKind) -> Result<()> {
    if loc.subtree && kind == EntryKind::Blob {
        return Err(Error::NotDirectory { path: loc.place() });
    }
    Ok(())
}

/// An object found by a prefix of its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    Blob(Id),
    Tree(Id),
    Generation(Kind, Id),
    Derivation(Id),
    Environment(Id),
}

impl Found {
    pub fn id(&self) -> Id {
        match self {
            Found::Blob(id)
            | Found::Tree(id)
            | Found::Generation(_, id)
            | Found::Derivation(id)
            | Found::Environment(id) => *id,
        }
    }
}

impl Store {
    /// Every object whose id starts with `prefix`: blobs, trees, generations, derivations and
    /// environments.
    pub(in crate::store) fn objects_matching(&self, prefix: &IdPrefix) -> Result<Vec<Found>> {
        let fan = &prefix.as_hex()[..2];
        let mut found = Vec::new();
        found.extend(ids_in(&self.root().join("blobs").join(fan), prefix, "")?.into_iter().map(Found::Blob));
        let mut trees = ids_in(&self.root().join("trees").join(fan), prefix, ".json")?;
        trees.extend(self.packed_matching(prefix)?);
        trees.sort();
        trees.dedup();
        found.extend(trees.into_iter().map(Found::Tree));
        found.extend(self.derivations_matching(prefix)?.into_iter().map(Found::Derivation));
        found.extend(self.environments_matching(prefix)?.into_iter().map(Found::Environment));
        for kind in Kind::ALL {
            found.extend(
                self.generations_matching(kind, prefix)?.into_iter().map(|id| Found::Generation(kind, id)),
            );
        }
        Ok(found)
    }

    /// The packed trees whose id starts with `prefix`.
    fn packed_matching(&self, prefix: &IdPrefix) -> Result<Vec<Id>> {
        let first = u8::from_str_radix(&prefix.as_hex()[..2], 16).expect("a prefix is hex");
        let mut out = Vec::new();
        for pack in self.packs()?.iter() {
            let ids = pack.ids_from(first).map_err(Error::io("read", pack.path()))?;
            out.extend(ids.into_iter().filter(|id| prefix.matches(id)));
        }
        Ok(out)
    }

    pub(super) fn derivations_matching(&self, prefix: &IdPrefix) -> Result<Vec<Id>> {
        ids_in(&self.root().join("derivations").join(&prefix.as_hex()[..2]), prefix, "")
    }

    pub(super) fn environments_matching(&self, prefix: &IdPrefix) -> Result<Vec<Id>> {
        ids_in(&self.root().join("environments").join(&prefix.as_hex()[..2]), prefix, "")
    }
}

/// The ids named by the entries of `dir` (with `suffix`) that start with `prefix`, sorted.
fn ids_in(dir: &Path, prefix: &IdPrefix, suffix: &str) -> Result<Vec<Id>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("read", dir)(e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(Error::io("read", dir))?;
        let name = entry.file_name();
        let Some(hex) = name.to_str().and_then(|n| n.strip_suffix(suffix)) else { continue };
        if hex.starts_with(prefix.as_hex())
            && let Some(id) = Id::from_hex(hex)
        {
            out.push(id);
        }
    }
    out.sort();
    Ok(out)
}
