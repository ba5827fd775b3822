use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::status::{DeliveryState, Status, status};
use crate::resolve::preview::MountState;

/// Show whether memorix.lock holds, what `update` would change, and what .memory/ shows
///
/// Per mount: fresh; update available (the Store moved on: `memorix update` takes it, the
/// lock still holds); stale (a pin moved or a source changed: the lock no longer holds); not
/// locked; or the error that mount gives. Then whether .memory/ shows the lock's environment
/// as delivered: files edited, missing or purged, or a profile rolled back, and whether the
/// agent harness files (`[agents]`) are what `memorix build` writes. What the lock names and
/// the Store lacks is fetched into the Store first, as `build --locked` would: objects from the
/// substituters, git sources at their locked commits, pinned docs from their registries
/// (`--offline` fetches nothing). The project, its lock and .memory/ are never written.
///
/// Examples: `memorix status`, `memorix status --check` (exit 1 when the lock is stale, as
/// `lock --check` and `build --locked` say, and also when an update is available)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Exit 1 when memorix.lock no longer holds (the verdict of `lock --check`), a mount has
    /// an update available (what `memorix update` would take), or an agent harness file is not
    /// what `memorix build` writes, for CI
    #[arg(long)]
    check: bool,

    #[command(flatten)]
    net: super::Offline,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let st = status(&ctx.ops(args.net.offline), None)?;
    // A generated harness file that was edited or is out of date is what teammates commit.
    let update = st.mounts.iter().any(|m| m.state == MountState::UpdateAvailable);
    let code = if args.check && (!st.fresh || update || !st.delivery.harness.is_empty()) { 1 } else { 0 };
    if ctx.json {
        render::json(&st)?;
    } else {
        let mut s = describe(&st);
        delivery(&mut s, &st.delivery);
        render::text(&s)?;
    }
    Ok(code)
}

/// The lock's problems, then one block per mount: its state, then what changed.
pub fn describe(st: &Status) -> Text {
    let mut s = Text::default();
    if let Some(p) = &st.lock_problem {
        s.line(format_args!("{p}"));
    }
    let attributed = |p: &String| st.mounts.iter().any(|m| m.why.as_ref() == Some(p));
    let general: Vec<&String> = st.problems.iter().filter(|p| !attributed(p)).collect();
    if !general.is_empty() {
        s.line("memorix.lock is stale:");
        for p in general {
            s.line(format_args!("  - {p}"));
        }
    }
    for m in &st.mounts {
        let state = match m.state {
            MountState::Fresh => "fresh".to_string(),
            MountState::UpdateAvailable => {
                format!("update available (the Store moved on; `memorix update {}` takes it)", m.mount)
            }
            MountState::Stale => {
                let why = m.why.as_deref().unwrap_or_default();
                format!("stale: {}", why.strip_prefix(&format!("mount `{}`: ", m.mount)).unwrap_or(why))
            }
            MountState::Unlocked => {
                "not locked (new or edited in memorix.toml; `memorix lock` resolves it)".to_string()
            }
            MountState::Error => format!("error: {}", m.why.as_deref().unwrap_or_default()),
        };
        s.line(format_args!("{}: {state}", m.mount));
        for v in &m.versions {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
            s.line(format_args!("    version {}: {} -> {}", v.locator, show(&v.from), show(&v.to)));
        }
        if matches!(m.state, MountState::Unlocked | MountState::Error) {
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

/// What `build` (with `deliver`) or `lock` would change, from the same report: `--dry-run`.
pub fn dry_run(ctx: &Context, offline: bool, deliver: bool) -> Result<u8> {
    let st = status(&ctx.ops(offline), None)?;
    if ctx.json {
        render::json(&st)?;
        return Ok(0);
    }
    let mut s = Text::default();
    let relock: Vec<_> =
        st.mounts.iter().filter(|m| matches!(m.state, MountState::Stale | MountState::Unlocked)).collect();
    if let Some(p) = &st.lock_problem {
        s.line(format_args!("Would write memorix.lock: {p}"));
    } else if !st.fresh || !relock.is_empty() {
        s.line("Would write memorix.lock");
    }
    for m in &relock {
        s.line(format_args!(
            "  resolve {} afresh: {} added, {} modified, {} removed",
            m.mount,
            render::count(m.added.len(), "file"),
            m.modified.len(),
            m.removed.len()
        ));
    }
    for m in st.mounts.iter().filter(|m| m.state == MountState::Error) {
        s.line(format_args!("  {} cannot resolve: {}", m.mount, m.why.as_deref().unwrap_or_default()));
    }
    if deliver && !st.delivery.ok() {
        let mut repairs = Text::default();
        delivery(&mut repairs, &st.delivery);
        s.push(&*repairs);
    } else if deliver && !s.is_empty() {
        s.line(format_args!("Would activate the new environment in {}/", st.delivery.memory));
    }
    if s.is_empty() {
        s.line(if deliver {
            "Nothing to do: memorix.lock holds and .memory/ shows it"
        } else {
            "memorix.lock is up to date"
        });
    }
    render::text(&s)?;
    Ok(0)
}

/// What `.memory/` shows, when `memorix build` has something to repair (silent when it shows
/// the lock's environment as delivered).
fn delivery(s: &mut Text, d: &DeliveryState) {
    let memory = format!("{}/", d.memory);
    let (Some(env), Some(generation)) = (d.environment, d.generation) else {
        s.line(format_args!("{memory}: not built in this checkout; `memorix build` delivers it"));
        return;
    };
    if d.ok() {
        return;
    }
    s.line(format_args!(
        "{memory}: environment {} (generation {generation}), needs `memorix build`:",
        env.short()
    ));
    if d.lock_not_active {
        let how = if d.rolled_back {
            "the profile was rolled back"
        } else {
            "memorix.lock changed since the last build"
        };
        s.line(format_args!("    {how}; the lock's environment is not active"));
    }
    let drift = &d.drift;
    if d.deleted {
        s.line(format_args!("    deleted: all {} of its files are missing", drift.missing.len()));
        return;
    }
    for (what, list) in [
        ("edited", &drift.edited),
        ("missing", &drift.missing),
        ("not delivered", &drift.foreign),
        ("purged", &drift.purged),
    ] {
        for p in list {
            s.line(format_args!("    {what}: {p}"));
        }
    }
    for (path, why) in &d.harness {
        match path.is_empty() {
            true => s.line(format_args!("    agent harness files: {why}")),
            false => s.line(format_args!("    agent harness file {path} {why}")),
        }
    }
}
