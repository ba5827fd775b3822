use super::Context;
use super::render::{self, Text};
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

    /// Show only the newest N generations
    #[arg(short = 'n', long = "max-count", value_name = "N")]
    max_count: Option<usize>,
}

const SHOWN: usize = 10;

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let filter = args.filter.as_deref().map(Locator::parse_place).transpose()?;
    let entries = log(&ctx.ops(false), filter.as_ref(), args.max_count)?;
    if ctx.json {
        render::json(&entries)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for e in &entries {
        let g = &e.generation;
        s.push(format_args!("{}@g{} {} {}", g.kind, g.seq, g.id, g.time));
        if let Some(m) = &g.message {
            s.push(format_args!("  {m}"));
        }
        s.push('\n');
        for t in &g.tags {
            s.line(format_args!("    version {} {} at {}/{}/", t.library, t.version, g.kind, t.path));
        }
        let limit = if args.full { usize::MAX } else { SHOWN };
        for c in e.changes.iter().take(limit) {
            s.line(format_args!("    {} {}/{}", c.change.letter(), g.kind, c.path));
        }
        if e.changes.len() > limit {
            s.line(format_args!("    ... and {} more (--full lists all)", e.changes.len() - limit));
        }
    }
    render::text(&s)?;
    Ok(0)
}
