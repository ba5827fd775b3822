use std::fmt::Write;

use super::{Context, render};
use crate::ops::error::Result;
use crate::ops::versions::versions;

/// List the library versions the Store holds (from `ingest --version`)
///
/// Highest first; `latest` marks the version latest/ shows. Examples: `memorix versions`,
/// `memorix versions httpx`, `memorix versions docs/httpx/`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A library name, or a place such as docs/httpx/
    #[arg(value_name = "LIBRARY|PATH")]
    filter: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let libraries = versions(&ctx.store, args.filter.as_deref())?;
    if ctx.json {
        render::json(&libraries)?;
        return Ok(0);
    }
    let mut s = String::new();
    for lib in &libraries {
        writeln!(s, "{} {}", lib.library, lib.place).expect("writing to a string");
        for v in &lib.versions {
            let mark = if v.latest { "latest" } else { "" };
            writeln!(s, "  {:<12} {mark:<6} {}  {}@g{}", v.version, v.tree.short(), lib.kind, v.seq)
                .expect("writing to a string");
        }
    }
    if libraries.is_empty() {
        writeln!(s, "No versions: tag a directory with `memorix ingest docs/LIB/ DIR --version X`")
            .expect("writing to a string");
    }
    render::text(&s)?;
    Ok(0)
}
