use std::collections::BTreeSet;

use super::build::report;
use super::status::describe;
use super::{Context, render};
use crate::ops::build::{BuildRequest, build};
use crate::ops::error::Result;
use crate::ops::status::status;
use crate::resolve::Refresh;

/// Move mounts to the Store's current content and rebuild
///
/// Resolves the named mounts (all when none are named) again: `@latest` locators move to the
/// current tips and `@pin` locators to the versions the pin files pin now. Every other mount
/// keeps its locked content byte for byte. Then writes memorix.lock and activates .memory/.
///
/// Examples: `memorix update`, `memorix update python --dry-run`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Mount paths as in memorix.toml, e.g. python or libs/httpx
    #[arg(value_name = "MOUNT")]
    mounts: Vec<String>,

    /// Move this git source (its [sources] key, e.g. rules/team/) to the commit its branch or
    /// tag names now; the mounts it feeds follow. Repeatable
    #[arg(long = "source", value_name = "PLACE", conflicts_with_all = ["mounts", "dry_run"])]
    sources: Vec<String>,

    /// Print what would change (per mount: files added, modified, removed; version moves)
    /// and write nothing
    #[arg(long)]
    dry_run: bool,

    #[command(flatten)]
    net: super::Offline,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let names: BTreeSet<String> = args.mounts.iter().map(|m| m.trim_end_matches('/').to_string()).collect();
    if args.dry_run {
        let st = status(&ctx.ops(args.net.offline), (!names.is_empty()).then_some(&names))?;
        if ctx.json {
            render::json(&st)?;
        } else {
            render::text(&describe(&st))?;
        }
        return Ok(0);
    }
    let refresh = match (names.is_empty(), args.sources.is_empty()) {
        (_, false) => Refresh::Sources(args.sources.iter().cloned().collect()),
        (true, true) => Refresh::All,
        (false, true) => Refresh::Mounts(names),
    };
    let outcome = build(&mut ctx.ops(args.net.offline), &BuildRequest { locked: false, refresh })?;
    report(ctx, &outcome)
}
