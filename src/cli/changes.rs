use super::Context;
use super::render;
use crate::ops::changes::changes;
use crate::ops::error::Result;

/// Show what changed between two versions of a library: changelog entries and API difference
///
/// Both versions must be in the Store. Without FROM and TO: the versions the last `memorix
/// update` moved LIBRARY between (the text of its mount's CHANGES.md). Examples: `memorix
/// changes httpx`, `memorix changes httpx 0.23.3 0.28.1`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The library, e.g. httpx
    library: String,
    /// The version moved from (default: the one the last update moved from)
    from: Option<String>,
    /// The version moved to (default: the one memorix.lock has)
    to: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let found = changes(&ctx.ops(false), &args.library, args.from.as_deref(), args.to.as_deref())?;
    if ctx.json {
        render::json(&found)?;
        return Ok(0);
    }
    render::text(&found.text)?;
    Ok(0)
}
