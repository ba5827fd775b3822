use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::pins::{MountPin, pins};

/// Show the version each `@pin` mount resolves to, the file and line that pin it, and why
///
/// Reads the lockfiles in `[pins] files` as `memorix lock` does (markers against `[pins]
/// markers` only); the Store is not read. `-v` adds the artifacts and hashes each pin records.
///
/// Examples: `memorix pins`, `memorix pins --json`
#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(ctx: &Context, _args: Args) -> Result<u8> {
    let rows = pins(&ctx.ops(false))?;
    if ctx.json {
        render::json(&rows)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for row in &rows {
        describe(&mut s, row, ctx.verbose);
    }
    if rows.is_empty() {
        s.line(format_args!("No mount selects a pinned version: use a locator such as docs/httpx/@pin"));
    }
    render::text(&s)?;
    Ok(0)
}

/// `mount  library version  file:line  (ecosystem)`, then why, and what else is worth knowing.
fn describe(s: &mut Text, row: &MountPin, verbose: bool) {
    let p = &row.pin;
    s.line(format_args!("{} ({})", row.mount, row.locator));
    s.line(format_args!("  {} {} ({}) at {}", p.library, p.version, p.ecosystem.as_str(), p.at));
    s.line(format_args!("  why: {}", p.reason.describe()));
    if p.docs_version != p.version {
        s.line(format_args!("  docs: {} (the label is stripped)", p.docs_version));
    }
    if !p.same_release.is_empty() {
        s.line(format_args!("  same release: {}", p.same_release.join(", ")));
    }
    if let Some(m) = &p.markers {
        s.line(format_args!("  marker: {m}"));
    }
    if verbose {
        for a in &p.artifacts {
            let name = a.file.as_deref().or(a.url.as_deref()).unwrap_or("artifact");
            s.line(format_args!("  artifact: {name} {}", a.hash.as_deref().unwrap_or("(no hash)")));
        }
    }
}
