use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::init::{Agents, init};

/// Set up memorix in a project (safe to run again)
///
/// Writes a commented memorix.toml (unless one exists), creates .memorix/, adds .memory/ and
/// .memorix/ to .git/info/exclude, and writes a .ignore with `!/.memory/` so rg, fd and agent
/// search tools still find the memory. With --agents (or when AGENTS.md / CLAUDE.md exist) a
/// managed block in those files points agents at .memory/INDEX.md.
///
/// Example: `memorix init --agents`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project name [default: the directory's name]
    #[arg(long)]
    name: Option<String>,

    /// Write the managed block into AGENTS.md (created if neither it nor CLAUDE.md exists)
    #[arg(long, conflicts_with = "remove_agents")]
    agents: bool,

    /// Take the managed block out of AGENTS.md / CLAUDE.md
    #[arg(long)]
    remove_agents: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = &ctx.cwd;
    let agents = match (args.agents, args.remove_agents) {
        (true, _) => Agents::Write,
        (_, true) => Agents::Remove,
        _ => Agents::IfPresent,
    };
    let outcome = init(cwd, args.name.as_deref(), agents)?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    if outcome.manifest_written {
        s.line(format_args!(
            "Created memorix.toml for `{}`. Declare mounts in it, then run `memorix build`.",
            outcome.name
        ));
    } else {
        s.line(format_args!("memorix.toml exists; left as it is"));
    }
    for c in &outcome.changed {
        s.line(format_args!("Updated {c}"));
    }
    render::note(ctx, &s)?;
    for n in &outcome.notes {
        render::warn(n);
    }
    Ok(0)
}
