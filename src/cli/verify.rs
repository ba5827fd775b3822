use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::verify::{verify, verify_project};

/// Check the whole Store: rehash every blob, check every tree, generation and ref, and that
/// each latest/<kind> matches its ref.
///
/// Prints one line per problem and exits 1 if there is any; exits 0 on a healthy store.
///
/// Example: `memorix verify --json`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also check that the project's .memory/ holds exactly its current environment
    #[arg(long)]
    project: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let report = if args.project { verify_project(&mut ctx.ops(false))? } else { verify(&ctx.ops(false))? };
    let code = if report.ok { 0 } else { 1 };
    if ctx.json {
        render::json(&report)?;
        return Ok(code);
    }
    let mut s = Text::default();
    for p in &report.problems {
        s.line(format_args!("{}: {}", p.object, p.message));
    }
    let c = &report.checked;
    let what = format!(
        "{} blobs, {} trees, {} generations, {} refs, {} files in latest/, {} derivations, {} environments",
        c.blobs, c.trees, c.generations, c.refs, c.latest_files, c.derivations, c.environments
    );
    let what =
        if args.project { format!("{what}, {} files in the memory directory", c.memory_files) } else { what };
    if ctx.verbose {
        for g in &report.garbage {
            s.line(format_args!("garbage: {}: {}", g.object, g.message));
        }
    }
    if report.ok {
        s.line(format_args!("ok: checked {what}"));
    } else {
        s.line(format_args!("{} found (checked {what})", render::count(report.problems.len(), "problem")));
    }
    if !report.garbage.is_empty() {
        s.line(format_args!(
            "{} leftovers of interrupted writes (garbage, not damage): `memorix gc` removes them{}",
            report.garbage.len(),
            if ctx.verbose { "" } else { " (-v lists them)" }
        ));
    }
    render::text(&s)?;
    Ok(code)
}
