use std::path::PathBuf;

use super::Context;
use super::render::{self, Text};
use crate::model::Locator;
use crate::ops::error::Result;
use crate::ops::ingest::{ChangeKind, VersionLabel};
use crate::ops::ingest::{IngestRequest, ingest};

/// Add files to the Store as a new generation of one typed tree
///
/// A directory SRC replaces the subtree at DEST (use --merge to only add and change); a file
/// SRC lands at DEST, or at DEST/<name> when DEST ends with `/`. Several SRCs merge in order.
/// `-` reads stdin. .gitignore/.ignore/.memorixignore inside SRC are honoured; .git/ is never
/// stored. Content the Store already holds at DEST creates no generation.
///
/// Examples:
///   memorix ingest rules/python/ ~/team-rules/python/
///   memorix ingest docs/httpx/ ./httpx-docs/ --version 0.28.1
///   git show HEAD:AGENTS.md | memorix ingest rules/repo/AGENTS.md -
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Where to put the content: a locator without @selector, e.g. rules/python/
    #[arg(value_name = "DEST")]
    dest: String,

    /// Files or directories to ingest, or - for standard input
    #[arg(value_name = "SRC", required = true)]
    sources: Vec<PathBuf>,

    /// Only add and change files; keep what DEST holds that SRC does not
    #[arg(long)]
    merge: bool,

    /// A message recorded with the generation (not part of its id)
    #[arg(short, long, value_name = "MSG")]
    message: Option<String>,

    /// Tag the ingested directory as this version of a library (its own generation; the tip
    /// shows the highest version, an older one is recorded beside it)
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,

    /// The library the version belongs to [default: the last component of DEST]
    #[arg(long, value_name = "NAME", requires = "version")]
    library: Option<String>,
}

/// The kind part of a place such as `rules/python/`.
fn req_kind(place: &str) -> &str {
    place.split('/').next().unwrap_or(place)
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let dest = Locator::parse_place(&args.dest)?;
    let version = args.version.map(|version| VersionLabel { version, library: args.library });
    let req =
        IngestRequest { dest, sources: args.sources, merge: args.merge, message: args.message, version };
    let outcome = ingest(&ctx.ops(false), req)?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    match (&outcome.generation, &outcome.tip) {
        (Some(g), _) if outcome.version.as_ref().is_some_and(|v| !v.tip) => {
            let v = outcome.version.as_ref().expect("checked");
            s.line(format_args!(
                "Recorded {} {} in {} (an older version: latest/ keeps showing the highest)",
                v.library,
                v.version,
                render::generation(g)
            ));
        }
        (Some(g), _) if outcome.version.is_some() => {
            let v = outcome.version.as_ref().expect("checked");
            s.line(format_args!(
                "Ingested {} {} into {} as {}",
                v.library,
                v.version,
                outcome.dest,
                render::generation(g)
            ));
        }
        (Some(g), _) => {
            let count = |k| outcome.changes.iter().filter(|c| c.change == k).count();
            s.line(format_args!(
                "Ingested {} into {}: {} added, {} modified, {} removed",
                outcome.dest,
                render::generation(g),
                count(ChangeKind::Added),
                count(ChangeKind::Modified),
                count(ChangeKind::Removed),
            ));
        }
        (None, Some(tip)) => {
            s.line(format_args!(
                "Unchanged: {} already holds this content ({})",
                outcome.dest,
                render::generation(tip)
            ));
        }
        (None, None) => {
            s.line(format_args!("Unchanged: nothing to store at {}", outcome.dest));
        }
    }
    if ctx.verbose {
        let kind = req_kind(&outcome.dest);
        for c in &outcome.changes {
            s.line(format_args!("    {} {kind}/{}", c.change.letter(), c.path));
        }
    }
    render::note(ctx, &s)?;
    Ok(0)
}
