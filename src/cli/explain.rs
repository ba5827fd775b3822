use std::fmt::Write;

use super::{Context, render};
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
    let cwd = std::env::current_dir().unwrap_or_default();
    let e = explain(&cwd, &ctx.store, &args.path)?;
    if ctx.json {
        render::json(&e)?;
        return Ok(0);
    }
    let mut s = String::new();
    writeln!(s, "{}", e.path).expect("writing to a string");
    writeln!(s, "  from    {} ({})", e.origin, e.blob).expect("writing to a string");
    writeln!(s, "  by      {} in mount {}", e.locator, e.mount).expect("writing to a string");
    writeln!(s, "  in      derivation {}, environment {}", e.derivation.short(), e.environment.short())
        .expect("writing to a string");
    if let Some(g) = e.generation {
        writeln!(s, "  read    {} generation {}", e.kind, g.short()).expect("writing to a string");
    }
    if let Some(v) = &e.version {
        writeln!(s, "  version {v}").expect("writing to a string");
    }
    if let Some(q) = e.quest {
        writeln!(s, "  quest   {} (memorix quest show {})", q.short(), q.short())
            .expect("writing to a string");
    }
    for d in &e.decisions {
        writeln!(s, "  won     over {} ({}: {})", d.loser, d.rule_name(), d.rule.describe())
            .expect("writing to a string");
    }
    if e.decisions.is_empty() {
        writeln!(s, "  no conflict at this path").expect("writing to a string");
    }
    render::text(&s)?;
    Ok(0)
}
