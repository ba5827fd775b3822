use super::render::Text;
use super::{Context, render};
use crate::ops::deps::{Dep, DepsAdded, NotAdded, Scope, add_deps};
use crate::ops::edit::{Addition, Edited, add, remove};
use crate::ops::error::Result;

/// Add locators (or a quest's selection) to a mount in memorix.toml, then lock
///
/// The mount is created when new; memorix.toml keeps its comments and formatting.
/// Examples: `memorix add python rules/python/ --intent "Python rules"`,
/// `memorix add web --quest 3f2a9c01` (reuse a view found with `memorix quest search`),
/// `memorix add --deps` (a `libs/<name>` mount of `docs/<name>/@pin` per dependency).
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    /// The mount path inside .memory/, e.g. python or libs/httpx
    #[arg(value_name = "MOUNT", required_unless_present = "deps", conflicts_with = "deps")]
    mount: Option<String>,

    /// Locators to append to the mount's select
    #[arg(value_name = "LOCATOR", required_unless_present_any = ["quest", "deps"], conflicts_with = "quest")]
    locators: Vec<String>,

    /// A mount per dependency the pin files pin: direct (the default) or all
    #[arg(long, value_name = "WHICH", num_args = 0..=1, default_missing_value = "direct", hide_possible_values = true)]
    deps: Option<DepScope>,

    /// With --deps: this pin file only (listed in `[pins] files` if it is not)
    #[arg(long, value_name = "FILE", requires = "deps")]
    pins: Option<String>,

    /// Use this (derivation) quest's selection for the mount
    #[arg(long, value_name = "ID")]
    quest: Option<String>,

    /// Why the mount exists (grep-able quest text)
    #[arg(long, value_name = "TEXT")]
    intent: Option<String>,

    #[command(flatten)]
    net: super::Offline,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DepScope {
    Direct,
    All,
}

pub fn add_cmd(ctx: &Context, args: AddArgs) -> Result<u8> {
    if let Some(which) = args.deps {
        let scope = match which {
            DepScope::Direct => Scope::Direct,
            DepScope::All => Scope::All,
        };
        return report_deps(ctx, &add_deps(&mut ctx.ops(args.net.offline), scope, args.pins.as_deref())?);
    }
    let mount = args.mount.expect("clap requires MOUNT without --deps");
    let what = match args.quest {
        Some(id) => Addition::Quest { id, intent: args.intent },
        None => Addition::Locators { locators: args.locators, intent: args.intent },
    };
    report(ctx, &add(&mut ctx.ops(args.net.offline), &mount, what)?, "Added")
}

/// What was fetched, then a row per mount added or kept, then every dependency that got no
/// mount with its reason and fix, then the lock. Exit 2 (1 for a hash) when one could not be
/// added; what could was added all the same.
fn report_deps(ctx: &Context, d: &DepsAdded) -> Result<u8> {
    if ctx.json {
        render::json(d)?;
        return Ok(d.exit_code());
    }
    let mut s = Text::default();
    super::fetch::lines(&mut s, &d.fetched);
    if let Some(f) = &d.listed {
        s.line(format_args!("Listed {f} in [pins] files"));
    }
    if !d.target.is_empty() {
        let target: Vec<String> = d.target.iter().map(|(k, v)| format!("{k} = \"{v}\"")).collect();
        s.line(format_args!(
            "Declared the target [pins] markers = {{ {} }} (versions differ by markers)",
            target.join(", ")
        ));
    }
    let scope = match d.scope {
        Scope::Direct => "direct dependency",
        Scope::All => "dependency",
    };
    let n = d.added.len();
    match n {
        0 if d.failed.is_empty() => {
            s.line(format_args!("Added no mount: every {scope} has one or is skipped"))
        }
        0 => s.line(format_args!("Added no mount")),
        _ => s.line(format_args!("Added {n} {} to memorix.toml:", plural(n, "mount"))),
    }
    rows(&mut s, &d.added);
    if !d.kept.is_empty() {
        s.line(format_args!("Kept {} a mount already selects:", d.kept.len()));
        rows(&mut s, &d.kept);
    }
    for file in &d.undirected {
        s.line(format_args!(
            "Skipped {file}: neither it nor a manifest beside it says which packages the project depends on directly (`--deps all` mounts every package it pins)"
        ));
    }
    not_added(&mut s, &format!("Skipped {}", d.skipped.len()), &d.skipped);
    not_added(&mut s, &format!("Could not add {}", d.failed.len()), &d.failed);
    let lock = match &d.lock {
        Some(l) if l.written => "Wrote memorix.lock",
        _ => "memorix.lock unchanged",
    };
    match n {
        0 => s.line(format_args!("{lock}.")),
        _ => s.line(format_args!("{lock}. Run `memorix build` to deliver them.")),
    }
    render::note(ctx, &s)?;
    Ok(d.exit_code())
}

/// `  libs/http     http 1.5.0 (Cargo.lock)`, mount names aligned.
fn rows(s: &mut Text, deps: &[Dep]) {
    let width = deps.iter().map(|d| d.mount.len()).max().unwrap_or(0);
    for d in deps {
        let alias = d.package.as_ref().map(|p| format!(" (npm:{p})")).unwrap_or_default();
        let scope = match d.applies_to.as_slice() {
            [] => String::new(),
            globs => format!(" for {}", globs.join(", ")),
        };
        s.line(format_args!("  {:width$}  {}{alias} {} ({}){scope}", d.mount, d.library, d.version, d.file));
    }
}

/// `heading:` then each dependency with its reason, and its fix below it.
fn not_added(s: &mut Text, heading: &str, deps: &[NotAdded]) {
    if deps.is_empty() {
        return;
    }
    s.line(format_args!("{heading}:"));
    for d in deps {
        s.line(format_args!("  {} {} ({}): {}", d.dep.library, d.dep.version, d.dep.at, d.reason));
        if !d.fix.is_empty() {
            s.line(format_args!("      help: {}", d.fix));
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { word.to_string() } else { format!("{word}s") }
}

/// Remove a mount from memorix.toml (and its overrides), then lock
///
/// Example: `memorix remove python`
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    #[arg(value_name = "MOUNT")]
    mount: String,

    #[command(flatten)]
    net: super::Offline,
}

pub fn remove_cmd(ctx: &Context, args: RemoveArgs) -> Result<u8> {
    report(ctx, &remove(&mut ctx.ops(args.net.offline), &args.mount)?, "Removed")
}

fn report(ctx: &Context, e: &Edited, verb: &str) -> Result<u8> {
    if ctx.json {
        render::json(e)?;
        return Ok(0);
    }
    let lock = if e.lock.written { "wrote memorix.lock" } else { "memorix.lock unchanged" };
    let what = if e.created { "new mount" } else { "mount" };
    let mut s = Text::default();
    super::fetch::lines(&mut s, &e.lock.fetched);
    s.line(format_args!(
        "{verb} {what} `{}` in memorix.toml; {lock}. Run `memorix build` to deliver it.",
        e.mount
    ));
    render::note(ctx, &s)?;
    Ok(0)
}
