use super::{Context, render};
use crate::model::Locator;
use crate::ops::cat::cat;
use crate::ops::error::{Error, Result};

/// Print a file's content exactly as it was ingested.
///
/// Examples: `memorix cat rules/python/style.md`, `memorix cat rules/python/style.md@g1`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A locator naming one file, optionally with @latest, @gN or @<generation hash>
    #[arg(value_name = "LOCATOR")]
    locator: String,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    if ctx.json {
        return Err(Error::NoJson {
            command: "cat",
            prints: "a file's bytes as they are",
            instead: "drop --json; `memorix --json ls LOCATOR` gives the file's id and size",
        });
    }
    let locator = Locator::parse(&args.locator)?;
    render::copy(&mut cat(&ctx.ops(false), &locator)?)?;
    Ok(0)
}
