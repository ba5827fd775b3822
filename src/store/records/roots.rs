//! The projects that use this Store and what each one's lock and profile need. `gc` keeps all
//! of it (a store filled by `pull` holds objects no generation of its own reaches) and
//! `verify` checks it as strictly as the history. A project whose manifest is gone is
//! forgotten by the next `gc`.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::{Id, Kind};
use crate::store::error::Result;
use crate::store::{Store, Writer, fsutil};

/// `roots/<hash of the project>.json`: what one project needs from this Store.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectRoots {
    /// The project's directory.
    pub project: String,
    /// The file whose presence says the project is still there (its manifest).
    pub manifest: String,
    #[serde(default)]
    pub environments: BTreeSet<Id>,
    #[serde(default)]
    pub derivations: BTreeSet<Id>,
    /// Subtrees and files its locators resolved to.
    #[serde(default)]
    pub trees: BTreeSet<Id>,
    #[serde(default)]
    pub blobs: BTreeSet<Id>,
    /// Generations its `@gN` / hash locators name.
    #[serde(default)]
    pub generations: BTreeSet<(Kind, Id)>,
}

impl ProjectRoots {
    /// Whether the project is still where it was recorded.
    pub fn is_live(&self) -> bool {
        Path::new(&self.manifest).is_file()
    }
}

impl Store {
    fn roots_dir(&self) -> PathBuf {
        self.root().join("roots")
    }

    fn roots_path(&self, project: &str) -> PathBuf {
        let digest = hex::encode(Sha256::digest(project.as_bytes()));
        self.roots_dir().join(format!("{}.json", &digest[..32]))
    }

    /// Every recorded project, sorted by directory; unreadable records are skipped (they are
    /// rewritten by the project's next build).
    pub(in crate::store) fn project_roots(&self) -> Result<Vec<ProjectRoots>> {
        let dir = self.roots_dir();
        let Ok(entries) = fs::read_dir(&dir) else { return Ok(Vec::new()) };
        let mut out: Vec<ProjectRoots> = entries
            .flatten()
            .filter_map(|e| serde_json::from_slice(&fsutil::read_object(&e.path()).ok()?).ok())
            .collect();
        out.sort_by(|a, b| a.project.cmp(&b.project));
        Ok(out)
    }
}

impl Writer<'_> {
    /// Records what a project needs (replacing its previous record) when it changed.
    pub(super) fn record_project(&self, roots: &ProjectRoots) -> Result<()> {
        let path = self.store.roots_path(&roots.project);
        let bytes = serde_json::to_vec_pretty(roots).expect("roots serialize");
        if fsutil::read_object(&path).ok().as_deref() == Some(bytes.as_slice()) {
            return Ok(());
        }
        fsutil::create_dir(&self.store.roots_dir())?;
        Ok(fsutil::write_atomic(&self.store.tmp_dir(), &path, &bytes)?)
    }

    /// Drops the record of a project that is gone.
    pub(in crate::store) fn forget_project(&self, roots: &ProjectRoots) -> Result<()> {
        let path = self.store.roots_path(&roots.project);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(crate::store::Error::io("remove", &path)(e))
            }
            _ => Ok(()),
        }
    }
}
