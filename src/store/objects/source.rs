//! Reading ingest sources from the file system: ignore files, `.git/`, symlinks, special files.
//!
//! A source is scanned completely before anything is written, so a bad source (an escaping
//! symlink, a FIFO, a name that is not UTF-8) leaves the store untouched.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::blob::hash_file;
use super::merkle::Dir;
use super::tree::Tree;
use crate::diagnostics::FromIo;
use crate::model::{EntryKind, Id, Locator, Name, NameProblem, StorePath};
use crate::store::error::{Error, Result};
use std::collections::HashMap;

use rayon::prelude::*;

/// One file found in a source: where it goes (relative to the source root) and where it is.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub rel: StorePath,
    pub abs: PathBuf,
}

/// What a source argument is.
#[derive(Debug)]
pub enum Scanned {
    Stdin,
    File(PathBuf),
    Dir(Vec<SourceFile>),
}

/// How the sources land at DEST.
#[derive(Debug)]
pub enum Layout {
    /// One file at DEST itself.
    File(PathBuf),
    Stdin,
    /// A directory: the files at DEST/<rel>, replacing DEST unless only files were given.
    Tree {
        files: Vec<(StorePath, PathBuf)>,
        replaces: bool,
    },
}

/// Checks the destination and scans every source before the store is touched.
pub fn layout(dest: &Locator, sources: &[PathBuf]) -> Result<Layout> {
    if sources.is_empty() {
        return Err(Error::NothingToIngest);
    }
    let mut scanned = sources.iter().map(|s| scan(s)).collect::<Result<Vec<_>>>()?;
    // One file (or stdin) into a DEST without trailing slash lands at DEST itself.
    if !dest.subtree && scanned.len() == 1 && !matches!(scanned[0], Scanned::Dir(_)) {
        return Ok(match scanned.pop().expect("one source") {
            Scanned::File(p) => Layout::File(p),
            _ => Layout::Stdin,
        });
    }
    let mut files = Vec::new();
    let mut replaces = false;
    for s in scanned {
        match s {
            Scanned::Stdin => {
                return Err(Error::StdinNeedsName { dest: dest.place() });
            }
            Scanned::File(p) => {
                let name = file_name(&p)?;
                files.push((StorePath::root().join(&name), p));
            }
            Scanned::Dir(found) => {
                replaces = true;
                files.extend(found.into_iter().map(|f| (f.rel, f.abs)));
            }
        }
    }
    Ok(Layout::Tree { files, replaces })
}

/// A source's content hashed in memory, without writing: for checking a lock.
pub struct Snapshot {
    pub kind: EntryKind,
    pub id: Id,
    pub trees: HashMap<Id, Tree>,
}

/// Hashes what `layout` would ingest (stdin excluded), computing tree ids in memory.
pub fn snapshot(layout: Layout) -> Result<Snapshot> {
    let mut trees = HashMap::new();
    let (kind, id) = match layout {
        Layout::Stdin => return Err(Error::StdinSource),
        Layout::File(p) => (EntryKind::Blob, hash_file(&p).map_err(Error::io("read", &p))?),
        Layout::Tree { files, .. } => {
            let ids = files
                .par_iter()
                .map(|(_, abs)| hash_file(abs).map_err(Error::io("read", abs)))
                .collect::<Result<Vec<Id>>>()?;
            let mut dir = Dir::default();
            for ((rel, _), id) in files.iter().zip(ids) {
                dir.insert_blob(rel, id);
            }
            let root = dir.build(&mut |t: &Tree| {
                let id = t.id();
                trees.insert(id, t.clone());
                Ok(id)
            })?;
            (EntryKind::Tree, root.unwrap_or_else(Tree::empty_id))
        }
    };
    Ok(Snapshot { kind, id, trees })
}

/// Scans one source argument (`-` is standard input).
pub fn scan(arg: &Path) -> Result<Scanned> {
    if arg == Path::new("-") {
        return Ok(Scanned::Stdin);
    }
    let meta = match fs::metadata(arg) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Error::SourceMissing { path: arg.to_path_buf() });
        }
        Err(e) => return Err(Error::io("stat", arg)(e)),
    };
    if meta.is_file() {
        return Ok(Scanned::File(arg.to_path_buf()));
    }
    if !meta.is_dir() {
        return Err(Error::SpecialFile { path: arg.to_path_buf(), what: special_kind(&meta.file_type()) });
    }
    scan_dir(arg).map(Scanned::Dir)
}

fn special_kind(t: &fs::FileType) -> &'static str {
    if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_char_device() {
        "character device"
    } else {
        "special file"
    }
}

/// Walks a source directory on all cores (honouring `.gitignore`, `.ignore` and
/// `.memorixignore`, skipping `.git/`); files come back sorted by path, and of several bad
/// entries the first by path is reported, so the outcome does not depend on thread timing.
fn scan_dir(root: &Path) -> Result<Vec<SourceFile>> {
    let canonical_root = fs::canonicalize(root).map_err(Error::io("resolve", root))?;
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(false)
        .require_git(false)
        .add_custom_ignore_filename(".memorixignore")
        .follow_links(true)
        .filter_entry(|e| e.file_name() != ".git")
        .build_parallel();
    let found = std::sync::Mutex::new(Vec::new());
    walker.run(|| {
        Box::new(|entry| {
            let (path, outcome) = match entry {
                Ok(entry) => (entry.path().to_path_buf(), source_file(root, &canonical_root, &entry)),
                Err(e) => (root.to_path_buf(), Err(walk_error(root, e))),
            };
            found.lock().expect("not poisoned").push((path, outcome));
            ignore::WalkState::Continue
        })
    });
    let mut found = found.into_inner().expect("not poisoned");
    // Errors of the walk itself carry the root: their text orders them.
    let text = |o: &Result<Option<SourceFile>>| o.as_ref().err().map(ToString::to_string);
    found.sort_unstable_by(|(p, a), (q, b)| {
        use std::os::unix::ffi::OsStrExt;
        p.as_os_str().as_bytes().cmp(q.as_os_str().as_bytes()).then_with(|| text(a).cmp(&text(b)))
    });
    found.into_iter().filter_map(|(_, outcome)| outcome.transpose()).collect()
}

/// The source file an entry of the walk is, if it is one (directories are not).
fn source_file(root: &Path, canonical_root: &Path, entry: &ignore::DirEntry) -> Result<Option<SourceFile>> {
    if entry.depth() == 0 {
        return Ok(None);
    }
    let path = entry.path();
    if entry.path_is_symlink() {
        let target = fs::canonicalize(path).map_err(Error::io("resolve the symlink", path))?;
        if !target.starts_with(canonical_root) {
            return Err(Error::EscapingSymlink { path: path.to_path_buf(), target });
        }
    }
    let Some(file_type) = entry.file_type() else { return Ok(None) };
    if file_type.is_dir() {
        return Ok(None);
    }
    if !file_type.is_file() {
        return Err(Error::SpecialFile { path: path.to_path_buf(), what: special_kind(&file_type) });
    }
    let rel = path.strip_prefix(root).expect("the walker stays under its root");
    Ok(Some(SourceFile { rel: store_path(path, rel)?, abs: path.to_path_buf() }))
}

/// Converts a relative file-system path into a store path, refusing names a locator cannot
/// address.
fn store_path(full: &Path, rel: &Path) -> Result<StorePath> {
    let mut parts = Vec::new();
    for comp in rel.components() {
        let name =
            comp.as_os_str().to_str().ok_or_else(|| Error::NonUtf8Name { path: full.to_path_buf() })?;
        Name::new(name).map_err(|p| bad_name(full, p))?;
        no_control(full, name)?;
        parts.push(name);
    }
    StorePath::new(&parts.join("/")).map_err(|p| bad_name(full, p))
}

/// The store name a file SRC gets when it lands in a directory DEST.
pub fn file_name(path: &Path) -> Result<Name> {
    let name = path.file_name().ok_or_else(|| Error::NoFileName { path: path.to_path_buf() })?;
    let name = name.to_str().ok_or_else(|| Error::NonUtf8Name { path: path.to_path_buf() })?;
    no_control(path, name)?;
    Name::new(name).map_err(|p| bad_name(path, p))
}

/// A name with a control character (a line break, ESC) is refused: file names reach indexes
/// and terminals, where such a character would start a line or a terminal command of its own.
fn no_control(path: &Path, name: &str) -> Result<()> {
    match name.chars().any(char::is_control) {
        true => Err(Error::BadName {
            path: path.to_path_buf(),
            problem: "it holds a control character (a line break, a tab, ESC)",
        }),
        false => Ok(()),
    }
}

fn bad_name(path: &Path, problem: NameProblem) -> Error {
    Error::BadName { path: path.to_path_buf(), problem: problem.describe() }
}

fn walk_error(root: &Path, err: ignore::Error) -> Error {
    let mut path = root.to_path_buf();
    let mut e = &err;
    loop {
        match e {
            ignore::Error::WithPath { path: p, err } => {
                path = p.clone();
                e = err;
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => e = err,
            ignore::Error::Loop { child, .. } => {
                return Error::Walk { path: child.clone(), message: "symlink loop".into() };
            }
            ignore::Error::Io(io) if io.kind() == io::ErrorKind::NotFound => {
                let target = fs::read_link(&path).unwrap_or_default();
                return Error::DanglingSymlink { path, target };
            }
            other => return Error::Walk { path, message: other.to_string() },
        }
    }
}
