use super::Context;
use super::render::{self, Text};
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
    let libraries = versions(&ctx.ops(false), args.filter.as_deref())?;
    if ctx.json {
        render::json(&libraries)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for lib in &libraries {
        s.line(format_args!("{} {}", lib.library, lib.place));
        for v in &lib.versions {
            let mark = if v.latest { "latest" } else { "" };
            let origin = v.fetched.as_ref().map(|f| format!("  from {f}")).unwrap_or_default();
            s.line(format_args!(
                "  {:<12} {mark:<6} {}  {}@g{}{origin}",
                v.version,
                v.tree.short(),
                lib.kind,
                v.seq
            ));
        }
    }
    if libraries.is_empty() {
        s.line(format_args!("No versions: tag a directory with `memorix ingest docs/LIB/ DIR --version X`"));
    }
    render::text(&s)?;
    Ok(0)
}
