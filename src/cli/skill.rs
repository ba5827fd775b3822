use std::path::PathBuf;

use super::{Context, render};
use crate::ops::error::Result;
use crate::ops::skill::{SKILL, install};

/// Print the agent skill (SKILL.md), or install it for Claude Code / Codex
///
/// Example: `memorix skill --install` writes .claude/skills/memorix/SKILL.md in the project.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write DIR/memorix/SKILL.md instead of printing [default DIR: .claude/skills]
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".claude/skills")]
    install: Option<PathBuf>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let Some(dir) = args.install else {
        render::text(SKILL)?;
        return Ok(0);
    };
    let file = install(&ctx.ops(false), &dir)?;
    render::note(ctx, &format!("Installed {}\n", file.display()))?;
    Ok(0)
}
