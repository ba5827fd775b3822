use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::profile::{Moved, Target, history, move_to};

/// Show the profile: every environment this project's memory has been bound to
///
/// Example: `memorix profile` (the current generation is marked `*`)
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {}

pub fn profile(ctx: &Context, _args: ProfileArgs) -> Result<u8> {
    let p = history(&ctx.ops(false))?;
    if ctx.json {
        render::json(&p)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for b in p.bindings.iter().rev() {
        let mark = if Some(b.generation) == p.current { "*" } else { " " };
        s.line(format_args!("{mark} {:>3}  {}  {}  {}", b.generation, b.environment, b.time, b.reason));
    }
    if p.bindings.is_empty() {
        s.line(format_args!("No profile generations yet: run `memorix build`"));
    }
    render::note(ctx, &s)?;
    Ok(0)
}

/// Move the project's memory back to the previous profile generation
///
/// .memory/ is swapped atomically to that environment; memorix.lock is not changed (run
/// `memorix build` to return to what the lock says).
///
/// Examples: `memorix rollback`, `memorix rollback --to 2`
#[derive(Debug, clap::Args)]
pub struct RollbackArgs {
    /// Go to profile generation N instead of the previous one
    #[arg(long, value_name = "N")]
    to: Option<u64>,
}

pub fn rollback(ctx: &Context, args: RollbackArgs) -> Result<u8> {
    let target = args.to.map_or(Target::Previous, Target::Generation);
    report(ctx, &move_to(&mut ctx.ops(false), target)?)
}

/// Activate a profile generation N, or any stored environment by id
///
/// Examples: `memorix activate 3`, `memorix activate 5b1b8d2f`
#[derive(Debug, clap::Args)]
pub struct ActivateArgs {
    /// A profile generation number, or an environment id (prefix)
    #[arg(value_name = "N|ENV_ID")]
    target: String,
}

pub fn activate(ctx: &Context, args: ActivateArgs) -> Result<u8> {
    let target = match args.target.parse::<u64>() {
        Ok(n) if args.target.len() < 8 => Target::Generation(n),
        _ => Target::Environment(args.target),
    };
    report(ctx, &move_to(&mut ctx.ops(false), target)?)
}

fn report(ctx: &Context, m: &Moved) -> Result<u8> {
    if ctx.json {
        render::json(m)?;
        return Ok(0);
    }
    let from = m.from.map(|g| format!("generation {g}")).unwrap_or_else(|| "nothing".into());
    let mut s = render::Text::default();
    s.line(format_args!(
        "Activated profile generation {} (environment {}), from {from}: {}, {} reused",
        m.to,
        m.environment.short(),
        render::count(m.placed.files, "file"),
        m.placed.reused
    ));
    super::build::harness_lines(&mut s, &m.harness, "Wrote");
    render::note(ctx, &s)?;
    Ok(0)
}
