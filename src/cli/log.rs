use std::fmt::Write;

use super::{Context, render};
use crate::model::Locator;
use crate::ops::error::Result;
use crate::ops::log::log;

/// Show generations, newest first, with the files each changed.
///
/// With KIND (rules, docs, chat) only that tree; with a PATH only the generations that changed
/// something at or below it. Examples: `memorix log`, `memorix log rules/python/style.md`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A kind or a path, e.g. rules or rules/python/
    #[arg(value_name = "KIND|PATH")]
    filter: Option<String>,

    /// List every changed file (default: the first 10 per generation)
    #[arg(long)]
    full: bool,
}

const SHOWN: usize = 10;

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let filter = args.filter.as_deref().map(Locator::parse_place).transpose()?;
    let entries = log(&ctx.store, filter.as_ref())?;
    if ctx.json {
        render::json(&entries)?;
        return Ok(0);
    }
    let mut s = String::new();
    for e in &entries {
        let g = &e.generation;
        write!(s, "{}@g{} {} {}", g.kind, g.seq, g.id, g.time).expect("writing to a string");
        if let Some(m) = &g.message {
            write!(s, "  {m}").expect("writing to a string");
        }
        s.push('\n');
        for t in &g.tags {
            writeln!(s, "    version {} {} at {}/{}/", t.library, t.version, g.kind, t.path)
                .expect("writing to a string");
        }
        let limit = if args.full { usize::MAX } else { SHOWN };
        for c in e.changes.iter().take(limit) {
            writeln!(s, "    {} {}/{}", c.change.letter(), g.kind, c.path).expect("writing to a string");
        }
        if e.changes.len() > limit {
            writeln!(s, "    ... and {} more (--full lists all)", e.changes.len() - limit)
                .expect("writing to a string");
        }
    }
    render::text(&s)?;
    Ok(0)
}
