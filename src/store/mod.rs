//! The Store: content-addressed blobs, canonical tree objects, generations per kind, refs, and
//! the read-only `latest/` checkouts (book: design/store.md#layout).

pub mod error;
pub mod fsutil;
pub mod maintenance;
pub mod mutex;
pub mod objects;
pub mod records;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::diagnostics::FromIo;
use crate::model::{Id, Kind};
use crate::progress::Progress;

pub use error::{Error, Result};
pub use mutex::Writer;

/// The on-disk format this build writes (`store/VERSION`). Format 2 added the packs of
/// `incoming/`, which an older memorix would not look in
/// (book: design/store.md#format-versions).
pub const FORMAT_VERSION: u64 = 2;

/// The oldest format this build reads: each format so far holds everything the one before
/// it does, so an older Store is read as it is and upgraded by its first writer.
const OLDEST_FORMAT: u64 = 1;

/// Top-level names a store may hold; a directory with anything else and no VERSION is not ours.
const LAYOUT: &[&str] = &[
    "VERSION",
    "lock",
    "tmp",
    "blobs",
    "trees",
    "packs",
    "incoming",
    "generations",
    "refs",
    "latest",
    "spare",
    "index",
    "derivations",
    "environments",
    "quests",
    "purged",
    "roots",
    "fetched",
];

/// Store handles opened or created by this process ([`Store::opened`]).
static OPENED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A handle on a store directory whose VERSION has been checked.
#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    /// The format its VERSION named when it was opened.
    format: u64,
    /// Shared by clones: a pack opened once serves every handle.
    packs: std::sync::Arc<objects::pack::Packs>,
    /// Trees this process read and checked, shared by clones (see [`objects::tree::Decoded`]).
    decoded: std::sync::Arc<objects::tree::Decoded>,
}

impl Store {
    /// The store location: `--store`, else `$MEMORIX_STORE`, else `$XDG_DATA_HOME/memorix/store`.
    pub fn default_location() -> PathBuf {
        if let Some(dir) = std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir).join("memorix/store");
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| ".".into());
        home.join(".local/share/memorix/store")
    }

    /// How many Store handles this process has opened or created: a developer aid that
    /// `MEMORIX_TRACE_OPENS` prints (see `ops::trace::Trace`).
    pub fn opened() -> usize {
        OPENED.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Opens an existing store for reading.
    pub fn open(root: &Path) -> Result<Store> {
        let version = root.join("VERSION");
        let format = match fsutil::read_text(&version) {
            Ok(text) => check_version(&version, &text)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(if root.is_dir() && !is_vacant(root)? {
                    Error::NotAStore { path: root.to_path_buf() }
                } else {
                    Error::StoreMissing { path: root.to_path_buf() }
                });
            }
            Err(e) => return Err(Error::io("read", &version)(e)),
        };
        Ok(Store::handle(root, format))
    }

    /// A handle on the checked Store at `root` of `format`, counted in [`Store::opened`].
    fn handle(root: &Path, format: u64) -> Store {
        OPENED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Store { root: root.to_path_buf(), format, packs: Default::default(), decoded: Default::default() }
    }

    /// Opens the store, creating an empty one first if the directory is absent or empty.
    pub fn open_or_create(root: &Path, progress: &dyn Progress) -> Result<Store> {
        match Store::open(root) {
            Err(Error::StoreMissing { .. }) => Store::create(root, progress),
            // Another first writer may be laying the Store out under its lock: wait for it.
            Err(Error::NotAStore { .. }) if root.join("lock").is_file() => Store::create(root, progress),
            other => other,
        }
    }

    /// Creates the layout under the writer lock, so concurrent first writers agree.
    fn create(root: &Path, progress: &dyn Progress) -> Result<Store> {
        fs::create_dir_all(root).map_err(Error::io("create the store directory", root))?;
        let _lock = mutex::lock_exclusive(root, &mutex::filling_marker(root), progress)?;
        if root.join("VERSION").exists() {
            return Store::open(root);
        }
        if !is_vacant(root)? {
            return Err(Error::NotAStore { path: root.to_path_buf() });
        }
        for top in ["tmp", "refs", "latest", "spare"] {
            fsutil::create_dir(&root.join(top))?;
        }
        for top in ["blobs", "trees"] {
            let dir = root.join(top);
            fsutil::create_dir(&dir)?;
            for byte in 0..=255u8 {
                fsutil::create_dir(&dir.join(format!("{byte:02x}")))?;
            }
        }
        for kind in Kind::ALL {
            fsutil::create_dir(&root.join("generations").join(kind.as_str()).join("index"))?;
            fsutil::create_dir(&root.join("refs").join(kind.as_str()))?;
        }
        // VERSION last: a store is only a store once its layout exists.
        fsutil::write_atomic(
            &root.join("tmp"),
            &root.join("VERSION"),
            format!("{FORMAT_VERSION}\n").as_bytes(),
        )?;
        fsutil::sync_dir(root)?;
        // Never silently: a first run should say where everything it ingests goes.
        progress.notice(&format!(
            "Created a Store at {} (--store DIR or MEMORIX_STORE choose another)",
            root.display()
        ));
        Ok(Store::handle(root, FORMAT_VERSION))
    }

    /// Raises an older Store's VERSION to this build's format, under the writer lock and
    /// before anything is written: an older memorix then refuses the Store with `too_new`
    /// instead of missing what it cannot read (book: design/store.md#format-versions).
    pub(super) fn upgrade_format(&self) -> Result<()> {
        if self.format >= FORMAT_VERSION {
            return Ok(());
        }
        let version = format!("{FORMAT_VERSION}\n");
        fsutil::write_atomic(&self.tmp_dir(), &self.root.join("VERSION"), version.as_bytes())?;
        Ok(fsutil::sync_dir(&self.root)?)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    fn blob_path(&self, id: &Id) -> PathBuf {
        let hex = id.hex();
        self.root.join("blobs").join(&hex[..2]).join(hex)
    }

    fn tree_path(&self, id: &Id) -> PathBuf {
        let hex = id.hex();
        self.root.join("trees").join(&hex[..2]).join(format!("{hex}.json"))
    }

    fn generation_path(&self, kind: Kind, id: &Id) -> PathBuf {
        self.generations_dir(kind).join(format!("{}.json", id.hex()))
    }

    fn generations_dir(&self, kind: Kind) -> PathBuf {
        self.root.join("generations").join(kind.as_str())
    }

    fn index_path(&self, kind: Kind, seq: u64) -> PathBuf {
        self.generations_dir(kind).join("index").join(seq.to_string())
    }

    fn ref_path(&self, kind: Kind) -> PathBuf {
        self.root.join("refs").join(kind.as_str()).join("latest")
    }

    fn latest_dir(&self) -> PathBuf {
        self.root.join("latest")
    }

    fn spare_dir(&self) -> PathBuf {
        self.root.join("spare")
    }
}

/// The format a VERSION file names, if this build reads it.
fn check_version(path: &Path, text: &str) -> Result<u64> {
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    match trimmed.parse::<u64>() {
        Ok(v) if (OLDEST_FORMAT..=FORMAT_VERSION).contains(&v) => Ok(v),
        Ok(v) if v > FORMAT_VERSION => {
            Err(Error::StoreTooNew { path: path.to_path_buf(), found: v, supported: FORMAT_VERSION })
        }
        _ => Err(Error::StoreVersionCorrupt { path: path.to_path_buf(), found: text.to_string() }),
    }
}

/// Whether a directory without VERSION may become a store: empty, or holding only what an
/// interrupted creation leaves (the lock and empty layout directories). Anything else is
/// someone's data, never cleaned up as a store's temp files.
fn is_vacant(root: &Path) -> Result<bool> {
    let entries = fs::read_dir(root).map_err(Error::io("read", root))?;
    for entry in entries {
        let entry = entry.map_err(Error::io("read", root))?;
        let name = entry.file_name();
        let path = entry.path();
        let vacant = if name == "lock" {
            fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
        } else {
            LAYOUT.iter().any(|n| name == *n) && has_no_files(&path)?
        };
        if !vacant {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A directory tree with directories only.
fn has_no_files(dir: &Path) -> Result<bool> {
    let Ok(meta) = fs::symlink_metadata(dir) else { return Ok(false) };
    if !meta.is_dir() {
        return Ok(false);
    }
    for entry in fs::read_dir(dir).map_err(Error::io("read", dir))? {
        if !has_no_files(&entry.map_err(Error::io("read", dir))?.path())? {
            return Ok(false);
        }
    }
    Ok(true)
}
