use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::explain::explain;

/// Tell where a file in .memory/ came from and which rule made it win
///
/// Example: `memorix explain .memory/python/style.md`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A file in the memory directory, e.g. .memory/python/style.md or python/style.md
    #[arg(value_name = "PATH")]
    path: String,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let e = explain(&ctx.ops(false), &args.path)?;
    if ctx.json {
        render::json(&e)?;
        return Ok(0);
    }
    let mut s = Text::default();
    s.line(format_args!("{}", e.path));
    s.line(format_args!("  from    {} ({})", e.origin, e.blob));
    s.line(format_args!("  by      {} in mount {}", e.locator, e.mount));
    s.line(format_args!(
        "  in      derivation {}, environment {}",
        e.derivation.short(),
        e.environment.short()
    ));
    if let Some(g) = e.generation {
        s.line(format_args!("  read    {} generation {}", e.kind, g.short()));
    }
    if let Some(v) = &e.version {
        s.line(format_args!("  version {v}"));
    }
    if let Some(f) = &e.fetched {
        s.line(format_args!("  fetched {} from {} ({})", f.artifact, f.registry, f.hash));
    }
    if let Some(c) = &e.compares {
        for (label, side) in [("old", &c.from), ("new", &c.to)] {
            let artifact = side.artifact.as_deref().unwrap_or("ingested by hand");
            s.line(format_args!(
                "  {label}     {} {} (tree {}, {artifact})",
                c.library,
                side.version,
                side.tree.short()
            ));
        }
    }
    if let Some(q) = e.quest {
        s.line(format_args!("  quest   {} (memorix quest show {})", q.short(), q.short()));
    }
    for d in &e.decisions {
        s.line(format_args!("  won     over {} ({}: {})", d.loser, d.rule_name(), d.rule.describe()));
    }
    if e.decisions.is_empty() {
        s.line(format_args!("  no conflict at this path"));
    }
    render::text(&s)?;
    Ok(0)
}
