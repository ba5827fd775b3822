use super::Context;
use super::render;
use crate::ops::changes::changes;
use crate::ops::error::Result;

/// Show what changed between two versions of a library: changelog entries and API difference
///
/// A version the Store lacks is fetched from the library's registry (the one the project pins
/// it from, or the one the Store's other versions of it came from), verified by the hash
/// memorix.lock or the last update recorded for it, else the registry's. Without FROM and TO: the versions the last `memorix
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
    #[command(flatten)]
    net: super::Offline,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let found = changes(&ctx.ops(args.net.offline), &args.library, args.from.as_deref(), args.to.as_deref())?;
    if ctx.json {
        render::json(&found)?;
        return Ok(0);
    }
    // What was fetched goes to stderr: stdout is CHANGES.md's text.
    let mut fetched = render::Text::default();
    super::fetch::lines(&mut fetched, &found.fetched);
    render::aside(ctx, &fetched);
    render::text(&found.text)?;
    Ok(0)
}
