use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::lock::{check, lock};

/// Resolve memorix.toml into memorix.lock
///
/// Sticky like Cargo.lock: only mounts that are new or whose select/include/exclude/overrides
/// or [sources] changed are resolved again; the others keep their locked content. The file is
/// rewritten only when its text changes. A lock with git merge-conflict markers is healed.
///
/// With --check nothing is written: exit 0 when the lock matches memorix.toml and every id
/// recomputes from the Store, exit 1 with the reason otherwise (for CI).
///
/// Examples: `memorix lock`, `memorix lock --check`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Check that memorix.lock is current instead of writing it
    #[arg(long)]
    check: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = &ctx.cwd;
    if args.check {
        let report = check(cwd, &ctx.store)?;
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
    let outcome = lock(cwd, &ctx.store, &ctx.progress)?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    if outcome.healed {
        s.line(format_args!("Healed merge-conflict markers in memorix.lock"));
    }
    match (outcome.written, outcome.resolved.is_empty()) {
        (false, _) => s.line(format_args!("memorix.lock is up to date")),
        (true, true) => s.line(format_args!("Wrote memorix.lock")),
        (true, false) => {
            s.line(format_args!("Wrote memorix.lock (resolved {})", outcome.resolved.join(", ")))
        }
    }
    render::note(ctx, &s)?;
    Ok(0)
}
