//! Work a command leaves to a detached process once it has answered: after the first ingest
//! of a kind, `latest/`'s spare checkout is empty, and filling it (a whole tree of hardlinks)
//! would otherwise fall on the next ingest the user waits for. The finished writer hands its
//! store lock over ([`take_handoff`]); the detached process inherits it as standard input, so
//! the lock is held without a gap and any later writer waits for the fill like for any other.

use std::path::Path;
use std::process::{Command, Stdio};

use super::error::Result;
use crate::diagnostics::FromIo;
use crate::store::Store;
use crate::store::lock::take_handoff;

/// The hidden subcommand the detached process runs.
pub const FILL_SPARES: &str = "__fill-spares";

/// Starts the detached fill if a writer of this process handed its lock over. A process that
/// cannot be started leaves the spare as it is: the next ingest fills it itself.
pub fn spawn_pending() {
    use std::os::unix::process::CommandExt;
    let Some((root, lock)) = take_handoff() else { return };
    let Ok(exe) = std::env::current_exe() else { return };
    let _ = Command::new(exe)
        .arg("--store")
        .arg(&root)
        .arg(FILL_SPARES)
        .stdin(Stdio::from(lock))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Out of the terminal's process group: a Ctrl-C meant for the next command spares it.
        .process_group(0)
        .spawn();
}

/// Fills the spare checkouts of the store at `store_root`, holding the lock handed over as
/// standard input.
pub fn fill_spares(store_root: &Path) -> Result<()> {
    use std::os::fd::AsFd;
    let store = Store::open(store_root)?;
    let lock = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(crate::store::Error::io("read the lock from", Path::new("standard input")))?;
    let writer = store.writer_inherited(std::fs::File::from(lock))?;
    writer.fill_spares()?;
    writer.end_filling();
    Ok(())
}
