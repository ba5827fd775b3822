use std::path::PathBuf;

use super::{Context, render};
use crate::diagnostics::FromIo;
use crate::ops::error::{Error, Result};
use crate::store::fsutil;

/// The agent skill document (SKILL.md) that teaches an agent to use memorix.
pub const SKILL: &str = include_str!("../../assets/SKILL.md");

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
    let target = dir.join("memorix");
    fsutil::create_dir(&target)?;
    let file = target.join("SKILL.md");
    std::fs::write(&file, SKILL).map_err(Error::io("write", &file))?;
    render::note(ctx, &format!("Installed {}\n", file.display()))?;
    Ok(0)
}
