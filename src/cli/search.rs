use super::Context;
use super::render::{self, Text};
use crate::model::Kind;
use crate::ops::error::Result;
use crate::ops::search::{SearchRequest, search};

/// Search the delivered files of the project's environment, ranked
///
/// Identifiers match whole and by their words (`parse_url` matches `parse` and `url`;
/// `HttpClient` matches `http` and `client`). Each answer is `path:line`, the library and the
/// version it comes from, and the matching lines.
///
/// Example: `memorix search "proxy settings" --lib httpx`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to look for
    #[arg(value_name = "QUERY")]
    query: String,

    /// Search this stored environment (an id prefix) instead of the current one
    #[arg(long, value_name = "ID")]
    env: Option<String>,

    /// Only the mount of this library (or at this mount path)
    #[arg(long, value_name = "NAME")]
    lib: Option<String>,

    /// Only mounts of this kind
    #[arg(long, value_enum, value_name = "KIND")]
    kind: Option<KindArg>,

    /// At most this many answers
    #[arg(long, default_value_t = 10, value_name = "N")]
    limit: usize,

    /// At most this many bytes of output; answers past it are counted, not shown
    #[arg(long, value_name = "BYTES")]
    budget: Option<usize>,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum KindArg {
    Rules,
    Docs,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let req = SearchRequest {
        query: args.query,
        env: args.env,
        lib: args.lib,
        kind: args.kind.map(|k| match k {
            KindArg::Rules => Kind::Rules,
            KindArg::Docs => Kind::Docs,
        }),
        limit: args.limit,
        budget: args.budget,
    };
    let out = search(&ctx.ops(false), &req)?;
    if ctx.json {
        render::json(&out)?;
        return Ok(u8::from(out.hits.is_empty()));
    }
    let mut s = Text::default();
    for hit in &out.hits {
        s.push(format_args!("{}:{}", hit.path, hit.line));
        if let Some(lib) = &hit.library {
            s.push(format_args!("  {lib}"));
            if let Some(v) = &hit.version {
                s.push(format_args!("@{v}"));
            }
        }
        s.line("");
        for l in hit.snippet.lines() {
            s.line(format_args!("    {l}"));
        }
    }
    if out.omitted > 0 {
        render::warn(format_args!("{} left out by --budget", render::count(out.omitted, "more answer")));
    }
    render::text(&s)?;
    Ok(u8::from(out.hits.is_empty()))
}
