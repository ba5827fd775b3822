use super::Context;
use super::render::{self, Text};
use crate::ops::build::{BuildOutcome, BuildRequest, build};
use crate::ops::error::Result;
use crate::resolve::Refresh;

/// Build the project's memory: lock, realise in the Store, activate .memory/
///
/// Resolves memorix.toml into memorix.lock when needed, ingests [sources], stores each mount's
/// derivation and the environment, records a profile binding and places the files in the
/// memory directory as read-only copies, swapped in atomically. Does nothing when the memory
/// directory already shows the locked environment.
///
/// Examples: `memorix build`, `memorix -C examples/webapp build`, `memorix build --locked` (CI)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Materialise exactly memorix.lock; exit 1 without changing anything when it is stale
    #[arg(long)]
    locked: bool,

    /// Never fetch what the store lacks from the substituters (--locked is the only build that
    /// fetches); a missing object is then reported
    #[arg(long, env = "MEMORIX_OFFLINE", value_parser = clap::builder::BoolishValueParser::new())]
    offline: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = &ctx.cwd;
    let req = BuildRequest { locked: args.locked, refresh: Refresh::Nothing, offline: args.offline };
    let outcome = build(cwd, &ctx.store, &req, &ctx.progress)?;
    report(ctx, &outcome)
}

/// Renders a build (or update) outcome; exit 1 when `--locked` refused.
pub fn report(ctx: &Context, outcome: &BuildOutcome) -> Result<u8> {
    if ctx.json {
        render::json(&outcome)?;
        return Ok(if outcome.refused.is_some() { 1 } else { 0 });
    }
    let mut s = Text::default();
    if let Some(report) = &outcome.refused {
        s.line(format_args!("memorix.lock is stale; --locked refuses to change it:"));
        for p in &report.problems {
            s.line(format_args!("  - {p}"));
        }
        s.line(format_args!("Run `memorix lock` (or `memorix build`) to update it."));
        render::note(ctx, &s)?;
        return Ok(1);
    }
    for f in &outcome.artifact_failures {
        render::warn(format_args!(
            "artifact `{}` for derivation {} failed ({}); it runs again on the next build",
            f.name,
            f.derivation.short(),
            f.message
        ));
    }
    let env = outcome.environment.expect("a build that was not refused has an environment");
    if outcome.lock_written {
        s.line(format_args!("Wrote memorix.lock"));
    }
    match &outcome.activated {
        None => s.line(format_args!(
            "Nothing to do: .memory/ already shows environment {} (profile generation {})",
            env.short(),
            outcome.generation.unwrap_or_default()
        )),
        Some(a) => {
            let new = outcome.derivations.iter().filter(|d| d.new).count();
            s.line(format_args!(
                "Built environment {} ({} mounts, {new} new derivations)",
                env.short(),
                outcome.derivations.len()
            ));
            s.line(format_args!(
                "Activated {}/ at profile generation {}: {} files",
                a.memory, a.generation, a.files
            ));
            if !a.purged.is_empty() {
                s.line(format_args!(
                    "Left out {} files whose content was purged from the Store: {}",
                    a.purged.len(),
                    a.purged.join(", ")
                ));
            }
        }
    }
    if ctx.verbose {
        for d in &outcome.derivations {
            let new = if d.new { "new" } else { "reused" };
            s.line(format_args!(
                "    {}/ -> derivation {} ({new}), quest {}",
                d.mount,
                d.id,
                d.quest.short()
            ));
        }
    }
    render::note(ctx, &s)?;
    Ok(0)
}
