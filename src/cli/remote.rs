use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::remote::{self, PushScope};
use crate::remote::transfer::RefOutcome;

/// Manage remote stores (user-level, in $XDG_CONFIG_HOME/memorix/remotes.toml)
///
/// A remote is s3://BUCKET[/PREFIX] (credentials from the AWS_* variables; AWS_ENDPOINT_URL or
/// MEMORIX_S3_ENDPOINT for another S3-compatible server), file:///DIR, or http(s)://HOST/PATH
/// (read-only). `list` also shows the project's [store] substituters.
///
/// Examples: `memorix remote add cache s3://team-memory/store`, `memorix remote list`
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: RemoteCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RemoteCommand {
    /// Add a remote under NAME
    Add {
        #[arg(value_name = "NAME")]
        name: String,
        #[arg(value_name = "URL")]
        url: String,
    },
    /// List the remotes
    List,
    /// Remove the remote NAME (nothing on the remote is deleted)
    Remove {
        #[arg(value_name = "NAME")]
        name: String,
    },
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let mut s = Text::default();
    match args.command {
        RemoteCommand::Add { name, url } => {
            let added = remote::add(&name, &url)?;
            if ctx.json {
                render::json(&added)?;
                return Ok(0);
            }
            s.line(format_args!("Added remote {name} ({})", added.url));
            render::note(ctx, &s)?;
        }
        RemoteCommand::Remove { name } => {
            let removed = remote::remove(&name)?;
            if ctx.json {
                render::json(&removed)?;
                return Ok(0);
            }
            s.line(format_args!("Removed remote {name} ({})", removed.url));
            render::note(ctx, &s)?;
        }
        RemoteCommand::List => {
            let remotes = remote::list(&ctx.ops(false))?;
            if ctx.json {
                render::json(&remotes)?;
                return Ok(0);
            }
            for r in &remotes {
                let name = r.name.as_deref().unwrap_or("(substituter)");
                s.line(format_args!("{name:<14} {}  [{}]", r.url, r.from));
            }
            render::text(&s)?;
        }
    }
    Ok(0)
}

/// Upload what memorix.lock needs (or the whole store) to a remote store
///
/// Uploads the lock's environment and derivations, the generations it names, every tree and
/// blob under its locators, and the project's quests (merged with the remote's, never
/// replaced). Objects the remote has are not uploaded again. With --all: every object and
/// quest, and each refs/<kind>/latest the remote lacks or that ours descends from; a ref that
/// moved on both sides is reported and left alone (exit 1).
///
/// REMOTE is a name from `memorix remote list` or a URL; it may be left out when one remote is
/// configured.
///
/// Examples: `memorix push`, `memorix push cache --all`, `memorix push file:///mnt/memory`
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    #[arg(value_name = "REMOTE")]
    remote: Option<String>,
    /// Push everything in the store, with its refs
    #[arg(long, conflicts_with = "lock")]
    all: bool,
    /// Push the closure of the project's memorix.lock (the default)
    #[arg(long)]
    lock: bool,
}

pub fn push(ctx: &Context, args: PushArgs) -> Result<u8> {
    let scope = if args.all { PushScope::All } else { PushScope::Lock };
    let report = remote::push(&ctx.ops(false), args.remote.as_deref(), scope)?;
    let diverged: Vec<_> = report.refs.iter().filter(|r| r.outcome == RefOutcome::Diverged).collect();
    let code = if diverged.is_empty() { 0 } else { 1 };
    if ctx.json {
        render::json(&report)?;
        return Ok(code);
    }
    let mut s = Text::default();
    s.line(format_args!(
        "Pushed to {}: {} of {} objects uploaded ({} already there)",
        report.remote,
        report.uploaded,
        report.objects,
        report.objects - report.uploaded
    ));
    let q = &report.quests;
    if q.uploaded + q.merged + q.unchanged > 0 {
        s.line(format_args!(
            "Quests: {} uploaded, {} merged, {} unchanged",
            q.uploaded, q.merged, q.unchanged
        ));
    }
    for r in report.refs.iter().filter(|r| r.outcome != RefOutcome::Diverged) {
        let what = match r.outcome {
            RefOutcome::Created => "created",
            RefOutcome::FastForward => "fast-forwarded",
            _ => "up to date",
        };
        s.line(format_args!("refs/{}/latest {what} ({})", r.kind, r.local.short()));
    }
    render::note(ctx, &s)?;
    for r in diverged {
        let theirs = r.remote.map(|id| id.short()).unwrap_or_default();
        render::warn(format_args!(
            "refs/{}/latest moved on the remote too ({theirs}, not in our history; ours is {}): left alone",
            r.kind,
            r.local.short()
        ));
    }
    Ok(code)
}

/// Fetch what memorix.lock needs from a remote store into the Store
///
/// Fetches the objects the Store lacks, checks each one's hash on arrival (a damaged one is
/// rejected and never stored: exit 1), and merges the remote's records of the project's
/// quests. `memorix build --locked` does the same from the substituters by itself.
///
/// Examples: `memorix pull`, `memorix pull cache`, `memorix pull file:///mnt/memory`
#[derive(Debug, clap::Args)]
pub struct PullArgs {
    #[arg(value_name = "REMOTE")]
    remote: Option<String>,
}

pub fn pull(ctx: &Context, args: PullArgs) -> Result<u8> {
    let report = remote::pull(&mut ctx.ops(false), args.remote.as_deref())?;
    if ctx.json {
        render::json(&report)?;
        return Ok(0);
    }
    let s = format!(
        "Pulled from {}: {} objects ({} bytes), {} quests merged\n",
        report.remote, report.fetched.fetched, report.fetched.bytes, report.quests
    );
    render::note(ctx, &s)?;
    Ok(0)
}
