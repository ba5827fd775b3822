//! The project as memorix may touch it. A repository may be hostile: whatever links, files or
//! names it holds, memorix reads only the project (and the Store and the user's config) and
//! writes only the project's memory and state directories. So every project path memorix
//! reads or writes is checked first: it may not be, or pass through, a symlink that leads out
//! of the project, and where a file is expected it may not be a FIFO, socket or device (which
//! would block a read forever or write to hardware). A link that stays inside the project
//! (`CLAUDE.md -> AGENTS.md`) is fine.

use std::fs;
use std::io;
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

use miette::Diagnostic;

use crate::diagnostics::{FromIo, IoError};

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error("{} leads outside the project (to {})", path.display(), target.display())]
    #[diagnostic(
        code(memorix::confine::outside),
        help(
            "memorix reads and writes only inside the project; replace the symlink with a real file or directory, or remove it"
        )
    )]
    Outside { path: PathBuf, target: PathBuf },

    #[error("{} is a symbolic link (to {}); memorix writes agent harness files only as real files", path.display(), target.display())]
    #[diagnostic(
        code(memorix::confine::linked),
        help(
            "a link would carry the write elsewhere, even inside the project (AGENTS.md -> .git/config); only a link from one entry file to another (CLAUDE.md -> AGENTS.md) is followed. Replace the link with a real file or directory, or remove it"
        )
    )]
    Linked { path: PathBuf, target: PathBuf },

    #[error("{} is {} MiB; memorix reads project files of at most {} MiB", path.display(), size >> 20, MAX_FILE >> 20)]
    #[diagnostic(
        code(memorix::confine::too_large),
        help("a manifest, lock or pin file that large is not one a tool wrote; check the file")
    )]
    TooLarge { path: PathBuf, size: u64 },

    #[error("{} is a {what}, where memorix expects a regular file or directory", path.display())]
    #[diagnostic(code(memorix::confine::special_file), help("remove it; memorix never opens special files"))]
    Special { path: PathBuf, what: &'static str },
}

/// The largest manifest, lock or pin file memorix reads: parsing stays bounded in time and
/// memory whatever a hostile repository commits.
pub const MAX_FILE: u64 = 64 << 20;

/// Reads a text file of at most [`MAX_FILE`] bytes; `None` when it does not exist.
pub fn read_text(path: &Path) -> Result<Option<String>, Error> {
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("open", path)(e)),
    };
    let size = file.metadata().map_err(Error::io("stat", path))?.len();
    if size > MAX_FILE {
        return Err(Error::TooLarge { path: path.to_path_buf(), size });
    }
    let mut text = String::new();
    io::Read::read_to_string(&mut io::Read::take(file, MAX_FILE + 1), &mut text)
        .map_err(Error::io("read", path))?;
    if text.len() as u64 > MAX_FILE {
        return Err(Error::TooLarge { path: path.to_path_buf(), size: text.len() as u64 });
    }
    Ok(Some(text))
}

/// The deepest nesting a TOML file memorix reads may have: brackets, inline tables and the
/// parts of a dotted key or table header. Real manifests and lockfiles nest a few levels; a
/// hostile one nested a million deep costs a parser seconds and gigabytes before it gives up.
pub const MAX_NESTING: usize = 64;

/// Where TOML `text` first nests deeper than [`MAX_NESTING`], if it does: a byte offset, found
/// in one pass that skips strings and comments, before any parser builds a tree of it.
pub fn toml_too_deep(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    // Open brackets, each with whether it is an inline table (where keys come) and the key
    // parts before it; `outer` sums those.
    let mut open: Vec<(bool, usize)> = Vec::new();
    let mut outer = 0;
    // Parts of the key (or table header) being read, and whether one is being read.
    let (mut parts, mut in_key, mut header) = (0, true, false);
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'\'' => i = skip_string(bytes, i),
            b'#' => i = bytes[i..].iter().position(|&c| c == b'\n').map_or(bytes.len(), |n| i + n),
            b'\n' if open.is_empty() => (in_key, header, parts) = (true, false, 0),
            b'[' if open.is_empty() && in_key && !header => header = true,
            b'[' | b'{' => {
                open.push((b == b'{', parts));
                outer += parts;
                (in_key, parts) = (b == b'{', 0);
            }
            b']' | b'}' => {
                outer -= open.pop().map_or(0, |(_, p)| p);
                (in_key, parts) = (false, 0);
            }
            b',' => (in_key, parts) = (open.last().is_some_and(|(table, _)| *table), 0),
            b'=' => in_key = false,
            b'.' if in_key || header => parts += 1,
            _ => {}
        }
        if open.len() + outer + parts > MAX_NESTING {
            return Some(i.min(bytes.len().saturating_sub(1)));
        }
        i += 1;
    }
    None
}

/// The offset of the last byte of the TOML string starting at `at` (basic or literal, one
/// line or three quotes), or the end of the text.
fn skip_string(bytes: &[u8], at: usize) -> usize {
    let quote = bytes[at];
    let triple = bytes[at..].starts_with(&[quote; 3]);
    let (mut i, width) = if triple { (at + 3, 3) } else { (at + 1, 1) };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\n' if !triple => return i - 1,
            c if c == quote && bytes[i..].starts_with(&[quote; 3][..width]) => return i + width - 1,
            _ => {}
        }
        i += 1;
    }
    bytes.len()
}

/// A project directory, resolved once, that paths are checked against.
#[derive(Debug, Clone)]
pub struct Confined {
    /// As given (for messages and joins).
    root: PathBuf,
    /// With every symlink resolved (for comparisons).
    real: PathBuf,
}

impl Confined {
    pub fn new(root: &Path) -> Result<Confined, Error> {
        let real = root.canonicalize().map_err(Error::io("resolve", root))?;
        Ok(Confined { root: root.to_path_buf(), real })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root with every symlink resolved.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// Checks `path` (inside the project, absolute or relative to it): none of its existing
    /// components is a symlink leading out of the project, and an existing last component is a
    /// regular file, a directory, or a symlink to one inside the project.
    pub fn check(&self, path: &Path) -> Result<(), Error> {
        self.walk(path, |link| self.check_link(link))
    }

    /// Checks that no existing component of `path` (inside the project) is a symlink at all,
    /// dangling or not, nor a special file: for the files memorix writes for agent
    /// harnesses, where a link inside the project (`AGENTS.md -> .git/config`) would still
    /// carry the write to a file that is not one.
    pub fn check_unlinked(&self, path: &Path) -> Result<(), Error> {
        self.walk(path, |link| {
            let target = fs::read_link(link).map_err(Error::io("read the link", link))?;
            Err(Error::Linked { path: link.to_path_buf(), target })
        })
    }

    /// Calls `on_link` for each existing component of `path` that is a symlink, after
    /// refusing special files and parts that are not plain names.
    fn walk(&self, path: &Path, on_link: impl Fn(&Path) -> Result<(), Error>) -> Result<(), Error> {
        let rel = path.strip_prefix(&self.root).unwrap_or(path);
        let mut at = self.root.clone();
        for part in rel.components() {
            match part {
                Component::Normal(name) => at.push(name),
                // `..` and absolute parts never come from memorix's own joins; refuse them.
                _ => return Err(Error::Outside { path: path.to_path_buf(), target: path.to_path_buf() }),
            }
            let meta = match fs::symlink_metadata(&at) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(Error::io("stat", &at)(e)),
            };
            if meta.file_type().is_symlink() {
                on_link(&at)?;
            } else if let Some(what) = special(&meta.file_type()) {
                return Err(Error::Special { path: at, what });
            }
        }
        Ok(())
    }

    /// Checks every path of `paths`.
    pub fn check_all<'a>(&self, paths: impl IntoIterator<Item = &'a Path>) -> Result<(), Error> {
        paths.into_iter().try_for_each(|p| self.check(p))
    }

    /// A symlink is fine when it resolves inside the project (or dangles inside it).
    fn check_link(&self, link: &Path) -> Result<(), Error> {
        let target = match link.canonicalize() {
            Ok(t) => t,
            Err(_) => dangling_target(link)?,
        };
        if !target.starts_with(&self.real) {
            return Err(Error::Outside { path: link.to_path_buf(), target });
        }
        if let Ok(meta) = fs::metadata(link)
            && let Some(what) = special(&meta.file_type())
        {
            return Err(Error::Special { path: link.to_path_buf(), what });
        }
        Ok(())
    }

    /// Reads a project file that may be absent, after [`Confined::check`]; never blocks on a
    /// FIFO planted in its place.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, Error> {
        self.check(path)?;
        match fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io("read", path)(e)),
        }
    }
}

/// Where a dangling link would create a file, following a chain of links (`.claude -> c1`,
/// `c1 -> /elsewhere/x`) to its last one; a chain too long to follow leads nowhere inside.
fn dangling_target(link: &Path) -> Result<PathBuf, Error> {
    let mut at = link.to_path_buf();
    for _ in 0..40 {
        let dest = fs::read_link(&at).map_err(Error::io("read the link", &at))?;
        let base = at.parent().and_then(|p| p.canonicalize().ok()).unwrap_or_default();
        let next = lexical(&base.join(dest));
        if !fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink()) {
            return Ok(next);
        }
        at = next;
    }
    Ok(PathBuf::new())
}

fn special(t: &fs::FileType) -> Option<&'static str> {
    if t.is_fifo() {
        Some("FIFO")
    } else if t.is_socket() {
        Some("socket")
    } else if t.is_block_device() || t.is_char_device() {
        Some("device")
    } else {
        None
    }
}

/// `path` with `.` and `..` folded away without touching the file system (for a dangling link,
/// whose target cannot be canonicalized).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_nesting_counts_brackets_inline_tables_and_dotted_keys_outside_strings() {
        let deep = |open: &str, n: usize| format!("x = {}", open.repeat(n));
        assert!(toml_too_deep(&deep("[", MAX_NESTING + 1)).is_some());
        assert!(toml_too_deep(&deep("{a=", MAX_NESTING + 1)).is_some());
        assert!(toml_too_deep(&format!("{}a = 1\n", "a.".repeat(MAX_NESTING + 1))).is_some());
        assert!(toml_too_deep(&format!("[{}a]\n", "a.".repeat(MAX_NESTING + 1))).is_some());
        assert!(toml_too_deep(&deep("{a.", MAX_NESTING)).is_some());
        let quoted = format!(
            "a = \"{b}\"\nb = '{b}'\nc = \"\"\"\n{b}\n\"\"\"\n# {b}\nd = [1.5, 2.5, \"x.y\"]\n[[package]]\nname = \"a.b.c\"\n\"k.k\" = {{ v = \"1.0.0\", x.y = 1 }}\n",
            b = "[{.".repeat(200)
        );
        assert_eq!(toml_too_deep(&quoted), None, "{quoted}");
        let floats = format!("x = [{}]\n", "1.5, ".repeat(500));
        assert_eq!(toml_too_deep(&floats), None);
    }

    #[test]
    fn links_inside_pass_links_outside_and_fifos_do_not() {
        let outside = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("real")).unwrap();
        fs::write(root.join("AGENTS.md"), "x").unwrap();
        std::os::unix::fs::symlink("AGENTS.md", root.join("CLAUDE.md")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("nothing"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("real/new", root.join("dangling-in")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let c = Confined::new(root).unwrap();
        for ok in ["real", "real/missing/deeper", "AGENTS.md", "CLAUDE.md", "absent", "dangling-in"] {
            c.check(&root.join(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
        }
        for bad in ["out", "out/x", "dangling"] {
            assert!(matches!(c.check(&root.join(bad)), Err(Error::Outside { .. })), "{bad}");
        }
        assert!(matches!(c.check(&root.join("fifo")), Err(Error::Special { what: "FIFO", .. })));
        assert!(matches!(c.read(&root.join("fifo")), Err(Error::Special { .. })));
        assert_eq!(c.read(&root.join("absent")).unwrap(), None);
    }
}
