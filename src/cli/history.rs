use std::path::PathBuf;

use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::history;

/// Run a command with the project's memory environment recorded
///
/// Sets MEMORIX_ENVIRONMENT (and MEMORIX_PROFILE_GENERATION) to what .memory/ shows, runs the
/// command, appends a record to .memorix/runs.jsonl and exits with the command's exit code.
/// Example: `memorix run -- claude -p "fix the failing test"`
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The command and its arguments
    #[arg(value_name = "CMD", required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

pub fn run(ctx: &Context, args: RunArgs) -> Result<u8> {
    let record = history::run(&ctx.ops(false), &args.command)?;
    Ok(record.exit_code.map_or(1, |c| c.clamp(0, 255) as u8))
}

/// List the recorded runs and the environment each one read, newest first
///
/// Example: `memorix runs --json`
#[derive(Debug, clap::Args)]
pub struct RunsArgs {}

pub fn runs(ctx: &Context, _args: RunsArgs) -> Result<u8> {
    let mut records = history::runs(&ctx.ops(false))?;
    records.reverse();
    if ctx.json {
        render::json(&records)?;
        return Ok(0);
    }
    let mut s = Text::default();
    for r in &records {
        let code = r.exit_code.map(|c| c.to_string()).unwrap_or_else(|| "signal".into());
        s.line(format_args!(
            "{}  gen {:<3} {}  exit {code:<6} {}",
            r.started,
            r.generation,
            r.environment.short(),
            r.command.join(" ")
        ));
        for a in r.access.iter().flat_map(|a| &a.answered) {
            let version = a.version.as_deref().map(|v| format!(" @{v}")).unwrap_or_default();
            s.line(format_args!("    {}:{}{version} ({})", a.path, a.lines, a.blob.short()));
        }
    }
    render::text(&s)?;
    Ok(0)
}

/// Materialise any stored environment into a new directory, e.g. to replay a past run
///
/// Example: `memorix checkout 2 /tmp/replay`
#[derive(Debug, clap::Args)]
pub struct CheckoutArgs {
    /// A profile generation number, or an environment id (prefix)
    #[arg(value_name = "ENV")]
    env: String,
    /// A new (or empty) directory
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub fn checkout(ctx: &Context, args: CheckoutArgs) -> Result<u8> {
    let (id, files) = history::checkout(&ctx.ops(false), &args.env, &args.dir)?;
    if ctx.json {
        render::json(&serde_json::json!({ "environment": id, "dir": args.dir, "files": files }))?;
        return Ok(0);
    }
    render::text(&format!(
        "Checked out environment {} into {}: {}\n",
        id.short(),
        args.dir.display(),
        render::count(files, "file")
    ))?;
    Ok(0)
}

/// Compare two environments (profile generations or environment ids)
///
/// Example: `memorix diff 1 2`
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    #[arg(value_name = "A")]
    a: String,
    #[arg(value_name = "B")]
    b: String,
}

pub fn diff(ctx: &Context, args: DiffArgs) -> Result<u8> {
    let d = history::diff(&ctx.ops(false), &args.a, &args.b)?;
    if ctx.json {
        render::json(&d)?;
        return Ok(0);
    }
    let mut s = Text::default();
    s.line(format_args!("{} -> {}", d.from.short(), d.to.short()));
    for (mount, from, to) in &d.mounts {
        let show = |i: &Option<crate::model::Id>| i.map(|i| i.short()).unwrap_or_else(|| "-".into());
        s.line(format_args!("  mount {mount}/: derivation {} -> {}", show(from), show(to)));
    }
    for (letter, list) in [("A", &d.added), ("M", &d.modified), ("D", &d.removed)] {
        for p in list {
            s.line(format_args!("  {letter} {p}"));
        }
    }
    render::text(&s)?;
    Ok(0)
}
