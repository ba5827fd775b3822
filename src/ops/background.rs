//! Work a command leaves to a detached process once it has answered: after the first ingest
//! of a kind, `latest/`'s spare checkout is empty (and after an ingest that packed its blobs,
//! they wait in `incoming/` and `latest/` shows the previous tip), and after the first activation of a project
//! nothing is kept to double-buffer `.memory/` with; filling either (a whole tree of hardlinks)
//! would otherwise fall on the next command the user waits for. The finished command hands its
//! lock over (the store's, [`take_handoff`], or the project's, [`fill_memory_later`]); the
//! detached process inherits it as standard input, so the lock is held without a gap and any
//! later command waits for the fill like for any other.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::context::Context;
use super::error::Result;
use crate::diagnostics::FromIo;
use crate::store::lock::{take_handoff, take_over};

/// The hidden subcommands the detached process runs.
pub const FILL_SPARES: &str = "__fill-spares";
pub const FILL_MEMORY: &str = "__fill-memory";

/// A project whose kept `.memory/` tree is to be filled once the command answers: (state
/// directory, project directory), and then the project lock handed over for it.
static MEMORY_WANTED: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);
static MEMORY_HANDOFF: Mutex<Option<(PathBuf, PathBuf, File)>> = Mutex::new(None);

/// Asks for the kept tree of `project` to be filled after this command, holding the project
/// lock it holds now (handed over when that lock is released, see [`hand_over_project`]).
pub fn fill_memory_later(project: &super::project::Project) {
    let dirs = (project.state_dir.clone(), project.manifest.dir.clone());
    *MEMORY_WANTED.lock().expect("not poisoned") = Some(dirs);
}

/// Called as the project lock of `state_dir` is released: keeps it held (a second handle to
/// the same open file) for the detached fill, if one was asked for, and leaves the marker that
/// tells a command waiting for the lock that no other command holds it.
pub fn hand_over_project(state_dir: &Path, lock: &File) {
    let mut wanted = MEMORY_WANTED.lock().expect("not poisoned");
    if wanted.as_ref().is_none_or(|(s, _)| s != state_dir) {
        return;
    }
    let (state_dir, project) = wanted.take().expect("checked");
    if let Ok(lock) = lock.try_clone() {
        // Never through a link planted in a repository: the marker is created, not opened.
        let _ = std::fs::OpenOptions::new().write(true).create_new(true).open(memory_marker(&state_dir));
        *MEMORY_HANDOFF.lock().expect("not poisoned") = Some((state_dir, project, lock));
    }
}

/// Present while a project's lock is handed over to fill its kept tree.
pub fn memory_marker(state_dir: &Path) -> PathBuf {
    state_dir.join("tmp").join("filling")
}

/// Starts the detached fills for the locks this process handed over. A process that cannot
/// be started leaves things as they are: the next command does the work itself.
pub fn spawn_pending() {
    if let Some((root, lock)) = take_handoff() {
        detached(lock, |c| c.arg("--store").arg(&root).arg(FILL_SPARES));
    }
    let handed = MEMORY_HANDOFF.lock().expect("not poisoned").take();
    if let Some((state_dir, project, lock)) = handed
        && !detached(lock, |c| c.arg("-C").arg(&project).arg(FILL_MEMORY))
    {
        let _ = std::fs::remove_file(memory_marker(&state_dir));
    }
}

/// Runs this executable with `args`, the lock `lock` as its standard input; false when it
/// could not be started.
fn detached(lock: File, args: impl FnOnce(&mut Command) -> &mut Command) -> bool {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else { return false };
    args(&mut Command::new(exe))
        .stdin(Stdio::from(lock))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the terminal's process group: a Ctrl-C meant for the next command spares it.
        .process_group(0)
        .spawn()
        .is_ok()
}

/// Fills the kept memory tree of the project in the working directory, holding the project
/// lock handed over as standard input; then releases the lock, then the marker. The project is
/// opened (and its paths checked) afresh.
pub fn fill_memory(ctx: &Context) -> Result<()> {
    let project = ctx.project()?;
    let state_dir = &project.state_dir;
    let lock = take_over(stdin_lock()?, &state_dir.join("lock"))?;
    let filled = crate::deliver::fill_kept(state_dir, &project.manifest.memory_dir());
    let _ = rustix::fs::flock(&lock, rustix::fs::FlockOperation::Unlock);
    let _ = std::fs::remove_file(memory_marker(state_dir));
    Ok(filled?)
}

/// The lock handed over as standard input.
fn stdin_lock() -> Result<File> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned();
    Ok(File::from(fd.map_err(crate::store::Error::io("read the lock from", Path::new("standard input")))?))
}

/// Fills the spare checkouts of the Store, holding the lock handed over as standard input:
/// first the blobs an ingest packed go to their files and `latest/` is brought to each ref
/// (an ingest that packed blobs left both to this process), then the spares.
pub fn fill_spares(ctx: &Context) -> Result<()> {
    let store = ctx.store()?;
    let writer = store.writer_inherited(stdin_lock()?)?;
    writer.maintenance().unpack_incoming()?;
    writer.maintenance().heal_latest()?;
    writer.maintenance().fill_spares()?;
    writer.end_filling();
    Ok(())
}
