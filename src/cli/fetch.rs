use super::Context;
use super::render::{self, Text};
use crate::fetch::Fetched;
use crate::ops::error::Result;

/// Fetch the docs of pinned libraries from their registries, without building
///
/// For each `@pin` mount whose library the Store lacks at the pinned version (or the version
/// memorix.lock names), downloads the release artifact from crates.io, PyPI or npm, verifies
/// it against the hash the pin file records (Cargo.lock checksum, uv.lock/poetry.lock/
/// requirements hashes, package-lock integrity; else memorix.lock's, else the registry's),
/// and ingests its docs view as `docs/<lib>/` version V. `build`, `lock` and `update` do this
/// on their own; this command warms a CI cache.
///
/// Examples: `memorix fetch`, `memorix fetch matchit http`, `memorix fetch --json`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only these libraries (as the pin file names them); all when none
    libraries: Vec<String>,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let fetched = crate::ops::fetch::fetch(&mut ctx.ops(false), &args.libraries)?;
    if ctx.json {
        render::json(&fetched)?;
        return Ok(0);
    }
    let mut s = Text::default();
    if fetched.is_empty() {
        s.line("Nothing to fetch: the Store has the docs of every pinned library");
    }
    lines(&mut s, &fetched);
    render::note(ctx, &s)?;
    Ok(0)
}

/// One line per fetched library: what, from where, verified by which hash.
pub fn lines(s: &mut Text, fetched: &[Fetched]) {
    for f in fetched {
        s.line(format_args!(
            "Fetched {} {} from {} ({}, {} files) into {}, verified by {} ({})",
            f.library,
            f.version,
            f.registry.as_str(),
            f.artifact,
            f.files,
            f.place,
            f.verified_by,
            f.hash
        ));
        if f.skipped > 0 {
            s.line(format_args!("  skipped {} unsafe archive entries (links, `..`, too large)", f.skipped));
        }
    }
}
