use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::trust::{revoke, trust};

/// Allow the commands this project's memorix.toml names ([artifacts] hooks) to run here
///
/// Like `direnv allow`: a build runs a project's hooks only once you have read them and
/// trusted the project on this machine. Trust covers the hooks as they are now; an edited hook
/// (or the project moved) needs `memorix trust` again. Kept in
/// $XDG_CONFIG_HOME/memorix/trusted/. Example: `memorix trust`, `memorix trust --revoke`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Withdraw the trust: the hooks no longer run
    #[arg(long)]
    revoke: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let out = if args.revoke { revoke(&ctx.ops(false))? } else { trust(&ctx.ops(false))? };
    if ctx.json {
        render::json(&out)?;
        return Ok(0);
    }
    let mut s = Text::default();
    let project = out.project.display();
    match (args.revoke, out.changed, out.hooks.is_empty()) {
        (true, true, _) => s.line(format_args!("Revoked the trust of {project}: its hooks no longer run")),
        (true, false, _) => s.line(format_args!("{project} was not trusted; nothing to revoke")),
        (false, _, true) => s.line(format_args!(
            "Trusted {project}: memorix.toml names no [artifacts] hooks (a hook added later needs `memorix trust` again)"
        )),
        (false, _, false) => {
            s.line(format_args!("Trusted the [artifacts] hooks of {project} ({}):", out.hooks_hash));
            for h in &out.hooks {
                s.line(format_args!("  {} = {:?}", h.name, h.command));
            }
            s.line(format_args!("They run at the next `memorix build`."));
        }
    }
    render::note(ctx, &s)?;
    Ok(0)
}
