use super::{Context, render};
use crate::diagnostics::Result;
use crate::ops::init::init;

/// Start a project: write a commented memorix.toml and create .memorix/
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The project name [default: the directory's name]
    #[arg(long)]
    name: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let outcome = init(&cwd, args.name.as_deref())?;
    if ctx.json {
        render::json(&outcome)?;
    } else {
        render::text(&format!(
            "Created memorix.toml for `{}`. Declare mounts in it, then run `memorix build`.\n",
            outcome.name
        ))?;
    }
    Ok(0)
}
