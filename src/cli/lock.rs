use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::lock::{Healed, check, lock};

/// Resolve memorix.toml into memorix.lock
///
/// Sticky like Cargo.lock: only mounts that are new or whose select/include/exclude/overrides
/// or [sources] changed are resolved again; the others keep their locked content. The file is
/// rewritten only when its text changes. A lock with git merge-conflict markers is healed.
///
/// With --check the lock is not written: exit 0 when it matches memorix.toml, its pins and
/// sources, and every id recomputes; exit 1 with the reason when it is stale (for CI). Objects
/// it names that the Store lacks are fetched from the substituters first; when none has them
/// the lock cannot be judged here (exit 2), which is not stale. `status --check` and
/// `build --locked` give the same verdict.
///
/// Examples: `memorix lock`, `memorix lock --check`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check that memorix.lock is current instead of writing it
    #[arg(long)]
    check: bool,

    /// Say which mounts would be resolved afresh and write nothing
    #[arg(long, conflicts_with = "check")]
    dry_run: bool,

    #[command(flatten)]
    net: super::Offline,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    if args.dry_run {
        return super::status::dry_run(ctx, args.net.offline, false);
    }
    if args.check {
        let report = check(&ctx.ops(args.net.offline))?;
        if ctx.json {
            render::json(&report)?;
        } else if report.ok {
            render::text("memorix.lock is up to date\n")?;
        } else {
            let mut s = Text::default();
            s.line("memorix.lock is stale:");
            for p in &report.problems {
                s.line(format_args!("  - {p}"));
            }
            render::text(&s)?;
        }
        return Ok(if report.ok { 0 } else { 1 });
    }
    let outcome = lock(&mut ctx.ops(args.net.offline))?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    super::fetch::lines(&mut s, &outcome.fetched);
    match &outcome.healed {
        Some(Healed::Conflict) => s.line(format_args!("Healed merge-conflict markers in memorix.lock")),
        Some(Healed::Corrupt(why)) => {
            s.line(format_args!("Replaced an invalid lock ({why}): every mount resolved afresh"))
        }
        None => {}
    }
    for m in &outcome.sources_moved {
        s.line(super::build::source_move(m));
    }
    match (outcome.written, outcome.resolved.is_empty()) {
        (false, _) => s.line(format_args!("memorix.lock is up to date")),
        (true, true) => s.line(format_args!("Wrote memorix.lock")),
        (true, false) => {
            s.line(format_args!("Wrote memorix.lock (resolved {})", outcome.resolved.join(", ")))
        }
    }
    for m in &outcome.moved {
        s.line(format_args!("Moved {} {} -> {} ({})", m.library, m.from, m.to, m.mount));
    }
    render::note(ctx, &s)?;
    Ok(0)
}
