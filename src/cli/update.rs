use std::collections::BTreeSet;

use super::{Context, build::report};
use crate::diagnostics::Result;
use crate::ops::build::{BuildRequest, build};
use crate::resolve::Refresh;

/// Move mounts to the Store's current content and rebuild
///
/// Resolves the named mounts (all when none are named) again: `@latest` locators move to the
/// current tips and `@pin` locators to the versions the pin files pin now. Every other mount
/// keeps its locked content byte for byte. Then writes memorix.lock and activates .memory/.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Mount paths as in memorix.toml, e.g. python or libs/httpx
    #[arg(value_name = "MOUNT")]
    mounts: Vec<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let refresh = match args.mounts.is_empty() {
        true => Refresh::All,
        false => Refresh::Mounts(
            args.mounts.iter().map(|m| m.trim_end_matches('/').to_string()).collect::<BTreeSet<_>>(),
        ),
    };
    let outcome = build(&cwd, &ctx.store, &BuildRequest { locked: false, refresh }, &ctx.progress)?;
    report(ctx, &outcome)
}
