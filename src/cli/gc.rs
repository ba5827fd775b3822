use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::gc::{gc, purge};

/// Remove temp files and objects no generation, derivation or environment reaches
///
/// Nothing reachable is ever removed: every generation on a ref's chain is kept with all it
/// names. Example: `memorix gc --dry-run`
#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// List what would be removed, remove nothing
    #[arg(long)]
    dry_run: bool,
}

pub fn run_gc(ctx: &Context, args: GcArgs) -> Result<u8> {
    let out = gc(&ctx.ops(false), args.dry_run)?;
    if ctx.json {
        render::json(&out)?;
        return Ok(0);
    }
    let mut s = Text::default();
    if ctx.verbose || args.dry_run {
        for p in &out.roots {
            s.line(format_args!("  keeps what {p} needs"));
        }
        for p in &out.gone {
            s.line(format_args!("  forgets {p} (its manifest is gone)"));
        }
        for p in &out.unreachable {
            s.line(format_args!("  {p}"));
        }
    }
    let verb = if args.dry_run { "Would remove" } else { "Removed" };
    s.line(format_args!(
        "{verb} {} temp files and {} unreachable objects ({} bytes)",
        out.temp_files,
        out.unreachable.len(),
        out.bytes
    ));
    render::text(&s)?;
    Ok(0)
}

/// Erase content from the Store and every generation (e.g. a leaked secret)
///
/// Every blob that ever stood at PATH (or the blob with that id) is deleted with all its
/// hardlinks; history keeps naming the ids, and anything that needs them later fails saying
/// they were purged. Copies already delivered into projects' .memory/ are not reached.
/// Without --yes, prints what would be erased and changes nothing (exit 2).
///
/// Example: `memorix purge rules/team/secrets.md --yes`
#[derive(Debug, clap::Args)]
pub struct PurgeArgs {
    /// A Store path (rules/x.md or a subtree rules/x/) or a blob id
    #[arg(value_name = "PATH|BLOB")]
    target: String,

    /// Really erase
    #[arg(long)]
    yes: bool,
}

pub fn run_purge(ctx: &Context, args: PurgeArgs) -> Result<u8> {
    let out = purge(&ctx.ops(false), &args.target, args.yes)?;
    if ctx.json {
        render::json(&out)?;
        return Ok(if out.erased { 0 } else { 2 });
    }
    let mut s = Text::default();
    for r in &out.blobs {
        s.line(format_args!("  {} {}", r.blob, r.paths.join(", ")));
    }
    if out.erased {
        s.line(format_args!(
            "Erased {} and {} to them",
            render::count(out.blobs.len(), "blob"),
            render::count(out.links, "hardlink")
        ));
        render::text(&s)?;
        Ok(0)
    } else {
        s.line(format_args!(
            "Would erase {} from every generation; run again with --yes to do it",
            render::count(out.blobs.len(), "blob")
        ));
        render::text(&s)?;
        Ok(2)
    }
}
