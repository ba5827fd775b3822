use super::{Context, render};
use crate::ops::edit::{Addition, Edited, add, remove};
use crate::ops::error::Result;

/// Add locators (or a quest's selection) to a mount in memorix.toml, then lock
///
/// The mount is created when new; memorix.toml keeps its comments and formatting.
/// Examples: `memorix add python rules/python/ --intent "Python rules"`,
/// `memorix add web --quest 3f2a9c01` (reuse a view found with `memorix quest search`).
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The mount path inside .memory/, e.g. python or libs/httpx
    #[arg(value_name = "MOUNT")]
    mount: String,

    /// Locators to append to the mount's select
    #[arg(value_name = "LOCATOR", required_unless_present = "quest", conflicts_with = "quest")]
    locators: Vec<String>,

    /// Use this (derivation) quest's selection for the mount
    #[arg(long, value_name = "ID")]
    quest: Option<String>,

    /// Why the mount exists (grep-able quest text)
    #[arg(long, value_name = "TEXT")]
    intent: Option<String>,
}

pub fn add_cmd(ctx: &Context, args: AddArgs) -> Result<u8> {
    let cwd = &ctx.cwd;
    let what = match args.quest {
        Some(id) => Addition::Quest { id, intent: args.intent },
        None => Addition::Locators { locators: args.locators, intent: args.intent },
    };
    report(ctx, &add(cwd, &ctx.store, &args.mount, what, &ctx.progress)?, "Added")
}

/// Remove a mount from memorix.toml (and its overrides), then lock
///
/// Example: `memorix remove python`
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    #[arg(value_name = "MOUNT")]
    mount: String,
}

pub fn remove_cmd(ctx: &Context, args: RemoveArgs) -> Result<u8> {
    let cwd = &ctx.cwd;
    report(ctx, &remove(cwd, &ctx.store, &args.mount, &ctx.progress)?, "Removed")
}

fn report(ctx: &Context, e: &Edited, verb: &str) -> Result<u8> {
    if ctx.json {
        render::json(e)?;
        return Ok(0);
    }
    let lock = if e.lock.written { "wrote memorix.lock" } else { "memorix.lock unchanged" };
    let what = if e.created { "new mount" } else { "mount" };
    render::note(
        ctx,
        &format!("{verb} {what} `{}` in memorix.toml; {lock}. Run `memorix build` to deliver it.\n", e.mount),
    )?;
    Ok(0)
}
