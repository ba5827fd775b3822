use super::Context;
use super::render::{self, Text};
use crate::model::{EntryKind, Locator};
use crate::ops::error::Result;
use crate::ops::ls::{LsRequest, ls};

/// List what a locator names: a directory's entries, or one file.
///
/// Directories end with `/`. Examples: `memorix ls rules/`, `memorix ls docs/httpx/@g2 -r`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A locator, e.g. rules/python/ or rules/python/@g3
    #[arg(value_name = "LOCATOR")]
    locator: String,

    /// List every file below, by path
    #[arg(short, long)]
    recursive: bool,

    /// Show type, size and id
    #[arg(short, long)]
    long: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let locator = Locator::parse(&args.locator)?;
    let outcome = ls(&ctx.ops(false), &LsRequest { locator, recursive: args.recursive })?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for e in &outcome.entries {
        if args.long {
            let size = e.size.map(|n| n.to_string()).unwrap_or_else(|| "-".into());
            let kind = match e.kind {
                EntryKind::Blob => "blob",
                EntryKind::Tree => "tree",
            };
            s.line(format_args!("{kind} {size:>9} {} {}", e.id.short(), e.path));
        } else {
            s.line(format_args!("{}", e.path));
        }
    }
    render::text(&s)?;
    Ok(0)
}
