//! Work a command leaves to a detached process once it has answered: after the first ingest
//! of a kind, `latest/`'s spare checkout is empty (and after an ingest that packed its blobs,
//! they wait in `incoming/` and `latest/` shows the previous tip), and after the first activation of a project
//! nothing is kept to double-buffer `.memory/` with; filling either (a whole tree of hardlinks)
//! would otherwise fall on the next command the user waits for. The finished command hands its
//! lock over ([`super::handoff`]), and the detached process runs what is here.

use std::fs::File;
use std::path::Path;

use super::context::Context;
use super::error::Result;
use super::handoff::memory_marker;
use crate::diagnostics::FromIo;
use crate::store::mutex::take_over;

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
