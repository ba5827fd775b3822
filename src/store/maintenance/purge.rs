//! Purging: the explicit, loud erasure of content from every generation (a leaked secret).
//! History keeps naming the ids; `purged/<hex>` records what was erased, when and from where,
//! so a later read says so instead of reporting damage (those tombstones are read beside the
//! blobs, in objects/tombstone.rs).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, IdPrefix, Locator};
use crate::store::error::{Error, Result};
use crate::store::records::generation::now_rfc3339;
use crate::store::{Store, Writer, fsutil};

use crate::store::objects::tombstone::PurgeRecord;

/// What to erase: every blob that ever stood at a Store path, or blobs by id.
pub enum PurgeTarget {
    Blob(IdPrefix),
    Path(Locator),
}

impl Store {
    /// The blobs `target` names, each with the places it stood, stamped now.
    pub(super) fn purge_candidates(&self, target: &PurgeTarget) -> Result<Vec<PurgeRecord>> {
        let mut found: BTreeMap<Id, BTreeSet<String>> = BTreeMap::new();
        match target {
            PurgeTarget::Blob(prefix) => {
                let fan = self.root().join("blobs").join(&prefix.as_hex()[..2]);
                for e in fs::read_dir(fan).into_iter().flatten().flatten() {
                    let id = e.file_name().to_str().and_then(Id::from_hex).filter(|id| prefix.matches(id));
                    if let Some(id) = id {
                        found.entry(id).or_default().insert(format!("blob {id}"));
                    }
                }
            }
            PurgeTarget::Path(loc) => self.blobs_ever_at(loc, &mut found)?,
        }
        let time = now_rfc3339();
        Ok(found
            .into_iter()
            .map(|(blob, paths)| PurgeRecord { blob, paths: paths.into_iter().collect(), time: time.clone() })
            .collect())
    }

    /// Every blob at or under `loc` in any generation of its kind, tagged versions included.
    fn blobs_ever_at(&self, loc: &Locator, found: &mut BTreeMap<Id, BTreeSet<String>>) -> Result<()> {
        for g in self.history(loc.kind)? {
            let tagged =
                g.generation.tags.iter().filter_map(|t| Some((t.tree, loc.path.strip_prefix(&t.path)?)));
            for (root, path) in std::iter::once((g.generation.root, loc.path.clone())).chain(tagged) {
                match self.lookup(&root, &path)? {
                    Some((EntryKind::Blob, id)) => {
                        found.entry(id).or_default().insert(loc.place());
                    }
                    Some((EntryKind::Tree, id)) => {
                        for (p, blob) in self.walk_files(&id)? {
                            let place = format!("{}/{p}", loc.place().trim_end_matches('/'));
                            found.entry(blob).or_default().insert(place);
                        }
                    }
                    None => {}
                }
            }
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Erases the blobs of `records` and every hardlink to them in checkouts, derivations and
    /// environments, and records each purge. Returns how many links were removed.
    pub(super) fn purge(&self, records: &[PurgeRecord]) -> Result<usize> {
        let store = self.store;
        let inodes: HashSet<(u64, u64)> = records
            .iter()
            .filter_map(|r| fs::symlink_metadata(store.blob_path(&r.blob)).ok())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        // Hardlinks share the bytes: each one must go for the content to be gone.
        let mut links = 0;
        for top in ["latest", "spare", "derivations", "environments"] {
            for path in files_under(&store.root().join(top)) {
                let Ok(m) = fs::symlink_metadata(&path) else { continue };
                if m.is_file() && inodes.contains(&(m.dev(), m.ino())) {
                    remove_from_readonly_dir(&path)?;
                    links += 1;
                }
            }
        }
        store.drop_stat_caches()?;
        let marks = store.root().join("purged");
        fsutil::create_dir(&marks)?;
        for r in records {
            let bytes = serde_json::to_vec_pretty(r).expect("a record serializes");
            fsutil::write_atomic(&store.tmp_dir(), &marks.join(r.blob.hex()), &bytes)?;
            let path = store.blob_path(&r.blob);
            if fs::symlink_metadata(&path).is_ok() {
                fs::remove_file(&path).map_err(Error::io("remove", &path))?;
            }
        }
        self.sync()?;
        Ok(links)
    }
}

fn remove_from_readonly_dir(path: &Path) -> Result<()> {
    let dir = path.parent().expect("a file has a parent");
    let mode = fs::metadata(dir).map(|d| d.permissions().mode()).unwrap_or(0o555);
    fsutil::set_mode(dir, 0o755)?;
    fs::remove_file(path).map_err(Error::io("remove", path))?;
    Ok(fsutil::set_mode(dir, mode & 0o777)?)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}
