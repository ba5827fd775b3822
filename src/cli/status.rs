use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::status::{Status, status};
use crate::resolve::preview::MountState;

/// Show which mounts are stale: what the Store, the pins or the sources changed since the lock
///
/// A mount is stale when `memorix update` would change it. Nothing is written.
///
/// Examples: `memorix status`, `memorix status --check` (exit 1 when stale)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Exit 1 when any mount is stale or not locked (for CI)
    #[arg(long)]
    check: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = &ctx.cwd;
    let st = status(cwd, &ctx.store, None)?;
    let code = if args.check && !st.fresh { 1 } else { 0 };
    if ctx.json {
        render::json(&st)?;
    } else {
        render::text(&describe(&st))?;
    }
    Ok(code)
}

/// One block per mount: its state, then what changed.
pub fn describe(st: &Status) -> Text {
    let mut s = Text::default();
    if let Some(p) = &st.lock_problem {
        s.line(format_args!("{p}"));
    }
    for m in &st.mounts {
        let state = match m.state {
            MountState::Fresh => "fresh",
            MountState::Stale => "stale",
            MountState::Unlocked => "not locked (new or edited in memorix.toml; `memorix lock` resolves it)",
        };
        s.line(format_args!("{}: {state}", m.mount));
        for v in &m.versions {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
            s.line(format_args!("    version {}: {} -> {}", v.locator, show(&v.from), show(&v.to)));
        }
        if m.state == MountState::Unlocked {
            continue;
        }
        for (letter, list) in [("A", &m.added), ("M", &m.modified), ("D", &m.removed)] {
            for p in list {
                s.line(format_args!("    {letter} {p}"));
            }
        }
    }
    s
}
