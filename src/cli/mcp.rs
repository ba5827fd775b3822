use super::Context;
use super::render;
use crate::ops::error::Result;

/// Serve the project's memory to agents over the Model Context Protocol (stdio)
///
/// Tools: `search`, `read`, `libraries`, `explain`, scoped to the environment `.memory/`
/// shows; each search and read is appended to the run ledger (`memorix runs`). Register it
/// for Claude Code, Cursor and VS Code with `[agents] mcp = true` in memorix.toml.
///
/// Example: `memorix mcp`
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args) -> Result<u8> {
    // Fails here, before serving, outside a project or before its first build.
    crate::ops::search::scope(&ctx.ops(true), None)?;
    match crate::ops::mcp::serve(ctx.cwd.clone(), ctx.store.clone()) {
        Ok(()) => Ok(0),
        Err(stopped) => {
            render::diagnostic(stopped);
            Ok(2)
        }
    }
}
