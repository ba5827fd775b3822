//! Small file-system primitives with the error context memorix reports.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::error::Error;
use crate::diagnostics::{FromIo, IoError};

/// Only I/O can fail here, so every layer can use these helpers with `?`.
type Result<T, E = IoError> = std::result::Result<T, E>;

/// Creates a directory; an existing one is fine.
pub fn create_dir(path: &Path) -> Result<()> {
    match fs::create_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(IoError::io("create directory", path)(e)),
    }
}

/// Writes `bytes` to a temp file in `tmp_dir`, then renames it over `dest` (not fsynced: the
/// caller makes a batch durable together).
pub fn write_atomic(tmp_dir: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_mode(tmp_dir, dest, bytes, 0o644)
}

pub fn write_atomic_mode(tmp_dir: &Path, dest: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    write_atomic_with(tmp_dir, dest, mode, |f| f.write_all(bytes))
}

/// [`write_atomic_mode`] of what `write` writes (buffered): a large record is streamed to
/// its file instead of being encoded in memory first.
pub fn write_atomic_with(
    tmp_dir: &Path,
    dest: &Path,
    mode: u32,
    write: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> Result<()> {
    let tmp = temp_path(tmp_dir, dest);
    let written = create_with_mode(&tmp, mode).and_then(|f| {
        let mut out = io::BufWriter::new(f);
        write(&mut out)?;
        out.into_inner().map_err(io::IntoInnerError::into_error).map(drop)
    });
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(IoError::io("write", &tmp)(e));
    }
    fs::rename(&tmp, dest).map_err(|e| {
        let _ = fs::remove_file(&tmp);
        IoError::io("rename into place", dest)(e)
    })
}

/// Writes a new immutable store object at `dest`: an unnamed file (`O_TMPFILE`) in `dest`'s
/// own directory, linked into place once complete, so a crash leaves no half-written object
/// and no temp file, and parallel writers do not contend on one temp directory. Falls back to
/// a temp file in `tmp_dir` and a rename where the file system has no `O_TMPFILE`.
pub fn write_object(tmp_dir: &Path, dest: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::sync::atomic::AtomicBool;
    static NO_TMPFILE: AtomicBool = AtomicBool::new(false);
    if !NO_TMPFILE.load(Ordering::Relaxed) {
        match link_tmpfile(dest, bytes, mode) {
            // Another thread stored the same content a moment ago.
            Ok(()) | Err(rustix::io::Errno::EXIST) => return Ok(()),
            Err(e)
                if matches!(
                    e,
                    rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::ISDIR | rustix::io::Errno::INVAL
                ) || (e == rustix::io::Errno::NOENT && !Path::new("/proc/self/fd").exists()) =>
            {
                NO_TMPFILE.store(true, Ordering::Relaxed);
            }
            Err(e) => return Err(IoError::io("write", dest)(e.into())),
        }
    }
    write_atomic_mode(tmp_dir, dest, bytes, mode)
}

fn link_tmpfile(dest: &Path, bytes: &[u8], mode: u32) -> rustix::io::Result<()> {
    use rustix::fs::{AtFlags, CWD, Mode, OFlags};
    let dir = dest.parent().expect("an object lives in a directory");
    let fd =
        rustix::fs::open(dir, OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC, Mode::from_raw_mode(mode))?;
    let mut rest = bytes;
    while !rest.is_empty() {
        match rustix::io::write(&fd, rest) {
            Ok(n) => rest = &rest[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e),
        }
    }
    let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    rustix::fs::linkat(CWD, proc_path.as_str(), CWD, dest, AtFlags::SYMLINK_FOLLOW)
}

/// A fresh temp file name in `tmp_dir` for something that will become `dest`. Unique within
/// this process; writers of one store never run at once (the store lock), and `tmp/` is
/// cleared when the lock is taken.
pub fn temp_path(tmp_dir: &Path, dest: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let pid = PID.get_or_init(std::process::id);
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    tmp_dir.join(format!(".{name}.{pid}.{n}"))
}

/// Whether `name` is one [`temp_path`] makes (`.<name>.<pid>.<n>`): a leftover of a write a
/// crash interrupted.
pub fn is_temp_name(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str().and_then(|n| n.strip_prefix('.')) else { return false };
    let mut tail = name.rsplitn(3, '.');
    let (n, pid) = (tail.next(), tail.next());
    tail.next().is_some_and(|rest| !rest.is_empty())
        && [n, pid].iter().all(|p| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
}

/// Whether the process that made temp file `name` ([`temp_path`]) is still running: its
/// write is in flight, not a leftover (two commands in one project may overlap before one
/// takes the project lock).
pub fn temp_writer_alive(name: &std::ffi::OsStr) -> bool {
    let pid = name.to_str().and_then(|n| n.rsplit('.').nth(1));
    pid.is_some_and(|pid| Path::new("/proc").join(pid).exists())
}

/// Creates a new file with `mode` set at creation (no separate chmod).
pub fn create_with_mode(path: &Path, mode: u32) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new().write(true).create_new(true).mode(mode).open(path)
}

/// fsyncs a directory so renames inside it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|f| f.sync_all()).map_err(IoError::io("sync", dir))
}

/// Makes every write of this file system durable at once (one `syncfs`,
/// book: design/reliability.md#durability).
pub fn sync_filesystem(any_path: &Path) -> Result<()> {
    let f = File::open(any_path).map_err(IoError::io("open", any_path))?;
    rustix::fs::syncfs(&f).map_err(|e| IoError::io("sync the file system of", any_path)(e.into()))
}

/// Opens a store object without following a symlink in its place (an adversarial store may
/// plant one pointing outside).
pub fn open_object(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32).open(path)
}

/// Reads a store object (see [`open_object`]).
pub fn read_object(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(4096);
    // Through `Take`, to skip the `fstat` and `lseek` of `File::read_to_end`'s size hint.
    open_object(path)?.take(u64::MAX).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Reads a store file as UTF-8 text, refusing a symlink in its place (see [`open_object`]).
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_object(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// The error for a store object that cannot be read: missing, a symlink, or an I/O failure.
pub fn object_error(what: &'static str, id: &crate::model::Id, path: &Path, e: io::Error) -> Error {
    match e.kind() {
        io::ErrorKind::NotFound => Error::MissingObject { what, id: *id },
        _ if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            Error::corrupt(what, path, "is a symlink, not a stored object")
        }
        _ => Error::io("read", path)(e),
    }
}

pub fn set_mode(path: &Path, mode: u32) -> Result<()> {
    fs::set_permissions(path, Permissions::from_mode(mode)).map_err(IoError::io("set permissions of", path))
}
