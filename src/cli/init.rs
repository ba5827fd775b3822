use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::init::{Agents, AgentsEdit, init};

/// Set up memorix in a project (safe to run again)
///
/// Writes a commented memorix.toml (unless one exists) whose `[pins] files` lists the lockfiles
/// found here, and whose mounts are commented examples: nothing is selected until you say so.
/// Creates .memorix/ (project state, kept out of git by its own .gitignore) and a .ignore with
/// `!/.memory/` so rg, fd and agent search tools find the memory. `.memory/` keeps itself out
/// of git. With --agents it adds `[agents]` to memorix.toml, from which `memorix build` writes
/// each agent harness's entry points (a managed block in AGENTS.md, CLAUDE.md importing it).
///
/// Example: `memorix init --agents`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project name [default: the directory's name]
    #[arg(long)]
    name: Option<String>,

    /// Add `[agents]` (harnesses agents-md and claude) to memorix.toml
    #[arg(long, conflicts_with = "remove_agents")]
    agents: bool,

    /// Remove `[agents]` (the next build removes the generated files)
    #[arg(long)]
    remove_agents: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let agents = match (args.agents, args.remove_agents) {
        (true, _) => Agents::Write,
        (_, true) => Agents::Remove,
        _ => Agents::Keep,
    };
    let outcome = init(&ctx.ops(false), args.name.as_deref(), agents)?;
    if ctx.json {
        render::json(&outcome)?;
        return Ok(0);
    }
    let mut s = Text::default();
    let agents = if outcome.agents_configured && outcome.manifest_written { " with [agents]" } else { "" };
    match (outcome.manifest_written, outcome.agents) {
        (true, _) => s.line(format_args!(
            "Created memorix.toml for `{}`{agents}. Declare mounts in it, then run `memorix build`.",
            outcome.name
        )),
        (false, AgentsEdit::Added) => s.line(format_args!(
            "Added [agents] to memorix.toml: `memorix build` writes each harness's entry points"
        )),
        (false, AgentsEdit::Removed) => s.line(format_args!(
            "Removed [agents] from memorix.toml: the next `memorix build` removes the files it generated"
        )),
        (false, AgentsEdit::Unchanged) => s.line(format_args!("memorix.toml exists; left as it is")),
    }
    if !outcome.pins.is_empty() {
        s.line(format_args!("Pins versions from {}", outcome.pins.join(", ")));
    }
    if outcome.ignore_updated {
        s.line(format_args!("Updated .ignore"));
    }
    for c in &outcome.changed {
        s.line(format_args!("Updated {c}"));
    }
    if outcome.manifest_written && !outcome.agents_configured {
        s.line(format_args!(
            "No agent harness is set up: `memorix init --agents` adds [agents], from which `memorix build` writes AGENTS.md and CLAUDE.md"
        ));
    }
    super::build::commit_lines(&mut s, &outcome.commit, &outcome.generated);
    render::note(ctx, &s)?;
    Ok(0)
}
