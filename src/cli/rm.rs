use super::Context;
use super::render::{self, Text};
use crate::model::Locator;
use crate::ops::error::Result;
use crate::ops::rm::{RmRequest, rm};

/// Remove files or subtrees from the tip, recording a new generation.
///
/// The content stays addressable through earlier generations (e.g. `memorix cat
/// rules/old.md@g1`); nothing is erased.
///
/// Example: `memorix rm rules/python/old.md -m "superseded"`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Locators without @selector, e.g. rules/python/old.md or docs/httpx/
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<String>,

    /// A message recorded with the generation (not part of its id)
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let paths = args.paths.iter().map(|p| Locator::parse_place(p)).collect::<Result<Vec<_>, _>>()?;
    let outcome = rm(&ctx.ops(false), RmRequest { paths, message: args.message })?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for k in &outcome.generations {
        let n = k.changes.len();
        let files = if n == 1 { "file" } else { "files" };
        s.line(format_args!("Removed {n} {files}: now {}", render::generation(&k.generation)));
    }
    render::note(ctx, &s)?;
    Ok(0)
}
