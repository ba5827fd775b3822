//! What one command works with, made once by the CLI from its arguments and handed to the
//! operation, as cargo hands its commands a `Workspace` and a `GlobalContext`: where it runs,
//! the project (memorix.toml read when first asked for, memorix.lock read and parsed once),
//! the Store (opened once, or created), the network policy and the progress display.
//! Nothing below an operation opens the project or the Store again: it takes the context.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use super::error::Result;
use super::project::{Project, ProjectGuard};
use crate::fetch::Registries;
use crate::manifest::Manifest;
use crate::model::RemoteUrl;
use crate::progress::Progress;
use crate::remote::config::Remotes;
use crate::store::{Store, Writer};

pub struct Context<'p> {
    /// The working directory (after `-C`): where the project is looked for.
    cwd: PathBuf,
    store_root: PathBuf,
    pub net: Network,
    pub progress: &'p dyn Progress,
    project: OnceCell<Project>,
    store: OnceCell<Store>,
}

impl<'p> Context<'p> {
    pub fn new(cwd: PathBuf, store_root: PathBuf, net: Network, progress: &'p dyn Progress) -> Context<'p> {
        Context { cwd, store_root, net, progress, project: OnceCell::new(), store: OnceCell::new() }
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Where the Store is (or is to be created).
    pub fn store_root(&self) -> &Path {
        &self.store_root
    }

    /// The project found from the working directory, opened at the first call.
    pub fn project(&self) -> Result<&Project> {
        if let Some(p) = self.project.get() {
            return Ok(p);
        }
        let project = Project::open(&self.cwd)?;
        Ok(self.project.get_or_init(|| project))
    }

    /// The project, for a command that works without one too.
    pub fn project_if_any(&self) -> Option<&Project> {
        self.project().ok()
    }

    /// Takes the project mutex (see [`Project::guard`]); held until the guard is dropped.
    pub fn guard_project(&mut self) -> Result<ProjectGuard> {
        self.project()?;
        let project = self.project.get_mut().expect("just opened");
        project.guard(self.progress)
    }

    /// memorix.toml was written: the project is opened again when next asked for.
    pub fn reopen_project(&mut self) {
        self.project.take();
    }

    /// Where the Store is when neither `--store` nor `MEMORIX_STORE` names it.
    pub fn default_store_root() -> PathBuf {
        Store::default_location()
    }

    /// The Store, which must exist.
    pub fn store(&self) -> Result<&Store> {
        if let Some(s) = self.store.get() {
            return Ok(s);
        }
        let store = Store::open(&self.store_root)?;
        Ok(self.store.get_or_init(|| store))
    }

    /// The Store, `None` while there is none (a Store that cannot be opened is an error).
    pub fn existing_store(&self) -> Result<Option<&Store>> {
        match self.store() {
            Ok(s) => Ok(Some(s)),
            Err(super::Error::Store(crate::store::Error::StoreMissing { .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The Store, created empty first when there is none.
    pub fn store_or_create(&self) -> Result<&Store> {
        if let Some(s) = self.store.get() {
            return Ok(s);
        }
        let store = Store::open_or_create(&self.store_root, self.progress)?;
        Ok(self.store.get_or_init(|| store))
    }

    /// The Store's writer lock (the Store created first when there is none).
    pub fn writer(&self) -> Result<Writer<'_>> {
        Ok(self.store_or_create()?.writer(self.progress)?)
    }
}

/// What a command may reach over the network, and where it looks.
#[derive(Default)]
pub struct Network {
    /// `--offline` (and `--frozen`, which is `--locked --offline`): no substituter, registry or
    /// git remote is reached; what is missing is reported.
    pub offline: bool,
    registries: OnceCell<Registries>,
    remotes: OnceCell<Remotes>,
}

impl Network {
    pub fn new(offline: bool) -> Network {
        Network { offline, ..Network::default() }
    }

    /// The registries pinned docs are fetched from, read when first needed.
    pub fn registries(&self) -> Result<&Registries> {
        if let Some(r) = self.registries.get() {
            return Ok(r);
        }
        let registries = Registries::load()?;
        Ok(self.registries.get_or_init(|| registries))
    }

    /// The user's remotes (`remotes.toml`), read when first needed.
    pub fn remotes(&self) -> Result<&Remotes> {
        if let Some(r) = self.remotes.get() {
            return Ok(r);
        }
        let remotes = Remotes::load(&Remotes::location())?;
        Ok(self.remotes.get_or_init(|| remotes))
    }

    /// Where what the Store lacks of a lock is fetched from: the project's `[store]
    /// substituters`, then, unless offline, the user's remotes.
    pub fn substituters(&self, m: &Manifest) -> Result<Vec<RemoteUrl>> {
        let mut urls = m.substituters.clone();
        if !self.offline {
            let remotes = self.remotes()?;
            for url in remotes.names().iter().filter_map(|n| remotes.url(n)) {
                if !urls.contains(&url) {
                    urls.push(url);
                }
            }
        }
        Ok(urls)
    }
}
