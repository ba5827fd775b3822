use super::Context;
use super::render::{self, Text};
use crate::ops::build::{Activated, BuildOutcome, BuildRequest, HookFailure, build, ignored_by_git};
use crate::ops::error::Result;
use crate::ops::git_sources::SourceMove;
use crate::resolve::Refresh;

/// Build the project's memory: lock, realise in the Store, activate .memory/
///
/// Resolves memorix.toml into memorix.lock when needed, ingests [sources], stores each mount's
/// derivation and the environment, records a profile binding and places the files in the
/// memory directory as read-only copies, swapped in atomically. Does nothing when the memory
/// directory already shows the locked environment. Objects memorix.lock names that the Store
/// lacks (a fresh clone) are fetched from the substituters first, unless --offline.
///
/// Examples: `memorix build`, `memorix -C examples/webapp build`, `memorix build --locked` (CI)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Materialise exactly memorix.lock; exit 1 without changing anything when it is stale
    #[arg(long)]
    locked: bool,

    /// --locked and --offline: the Store must already hold everything memorix.lock names
    #[arg(long)]
    frozen: bool,

    /// Say what the build would change (the lock, the memory directory) and write nothing
    #[arg(long, conflicts_with_all = ["locked", "frozen"])]
    dry_run: bool,

    #[command(flatten)]
    net: super::Offline,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    if args.dry_run {
        return super::status::dry_run(ctx, args.net.offline, true);
    }
    let req = BuildRequest { locked: args.locked || args.frozen, refresh: Refresh::Nothing };
    let outcome = build(&mut ctx.ops(args.net.offline || args.frozen), &req)?;
    report(ctx, &outcome)
}

/// "Moved rules/team/ (URL): 0123456789ab -> 89abcdef0123", or "Locked ... at ..." the first time.
pub fn source_move(m: &SourceMove) -> String {
    let short = |c: &str| c[..12.min(c.len())].to_string();
    match &m.from {
        Some(from) => format!("Moved {} ({}): {} -> {}", m.source, m.url, short(from), short(&m.to)),
        None => format!("Locked {} ({}) at {}", m.source, m.url, short(&m.to)),
    }
}

/// One notice for the hooks an untrusted project did not run, a warning per hook that failed.
fn hook_warnings(failures: &[HookFailure]) {
    let mut untrusted: Vec<&str> = failures.iter().filter(|f| f.untrusted).map(|f| f.name.as_str()).collect();
    untrusted.sort_unstable();
    untrusted.dedup();
    if !untrusted.is_empty() {
        let names = untrusted.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        render::diagnostic(crate::ops::trust::Untrusted { names });
    }
    for f in failures.iter().filter(|f| !f.untrusted) {
        render::warn(format_args!(
            "artifact `{}` for derivation {} failed ({}); it runs again on the next build",
            f.name,
            f.derivation.short(),
            f.message
        ));
    }
}

/// Renders a build (or update) outcome; exit 1 when `--locked` refused.
pub fn report(ctx: &Context, outcome: &BuildOutcome) -> Result<u8> {
    if ctx.json {
        render::json(&outcome)?;
        return Ok(if outcome.refused.is_some() { 1 } else { 0 });
    }
    let mut s = Text::default();
    if let Some(report) = &outcome.refused {
        s.line(format_args!("memorix.lock is stale; --locked refuses to change it:"));
        for p in &report.problems {
            s.line(format_args!("  - {p}"));
        }
        s.line(format_args!("Run `memorix lock` (or `memorix build`) to update it."));
        render::note(ctx, &s)?;
        return Ok(1);
    }
    hook_warnings(&outcome.artifact_failures);
    let env = outcome.environment.expect("a build that was not refused has an environment");
    if let Some(store) = outcome.joined_store.as_ref().filter(|_| !ctx.store_chosen) {
        s.line(format_args!(
            "Stored this project's memory in the Store at {} (--store DIR or MEMORIX_STORE choose another)",
            store.display()
        ));
    }
    for m in &outcome.sources_moved {
        s.line(source_move(m));
    }
    super::fetch::lines(&mut s, &outcome.fetched);
    if outcome.lock_written {
        s.line(format_args!("Wrote memorix.lock"));
    }
    for m in &outcome.moved {
        s.line(format_args!("Moved {} {} -> {} ({})", m.library, m.from, m.to, m.mount));
    }
    if outcome.ignore_updated {
        s.line(format_args!(
            "Added the memory directory to .ignore, so rg, fd and agents' search tools see it"
        ));
    }
    activation_lines(&mut s, outcome, env);
    commit_lines(&mut s, &outcome.commit, &outcome.generated);
    if ctx.verbose {
        for d in &outcome.derivations {
            let new = if d.new { "new" } else { "reused" };
            s.line(format_args!(
                "    {}/ -> derivation {} ({new}), quest {}",
                d.mount,
                d.id,
                d.quest.short()
            ));
        }
    }
    render::note(ctx, &s)?;
    Ok(0)
}

/// What the activation did (or why there was none), with the harness files it wrote.
fn activation_lines(s: &mut Text, outcome: &BuildOutcome, env: crate::model::Id) {
    match &outcome.activated {
        None if !outcome.harness.is_empty() => {
            let verb = if outcome.harness.restored { "Restored edited" } else { "Wrote" };
            harness_lines(s, &outcome.harness, verb);
            s.line(format_args!(
                ".memory/ already shows environment {} (profile generation {})",
                env.short(),
                outcome.generation.unwrap_or_default()
            ));
        }
        None => s.line(format_args!(
            "Nothing to do: .memory/ already shows environment {} (profile generation {})",
            env.short(),
            outcome.generation.unwrap_or_default()
        )),
        Some(a) => {
            repaired(s, a);
            let new = outcome.derivations.iter().filter(|d| d.new).count();
            s.line(format_args!(
                "Built environment {} ({}, {})",
                env.short(),
                render::count(outcome.derivations.len(), "mount"),
                render::count(new, "new derivation")
            ));
            s.line(format_args!(
                "Activated {}/ at profile generation {}: {}",
                a.memory,
                a.generation,
                render::count(a.files, "file")
            ));
            if !a.purged.is_empty() {
                s.line(format_args!(
                    "Left out {} whose content was purged from the Store: {}",
                    render::count(a.purged.len(), "file"),
                    a.purged.join(", ")
                ));
            }
            harness_lines(s, &outcome.harness, "Wrote");
        }
    }
}

/// Which of the files a run wrote belong in git, and what memorix generates and keeps out of
/// git itself: `git status` after a first run shows both kinds.
pub(super) fn commit_lines(s: &mut Text, commit: &[String], generated: &[String]) {
    if !commit.is_empty() {
        s.line(format_args!("To commit: {}", commit.join(", ")));
    }
    if !generated.is_empty() {
        s.line(format_args!("Generated, ignored by git: {}", generated.join(", ")));
    }
}

/// The agent harness files an activation wrote (or a build restored) and removed.
pub(super) fn harness_lines(s: &mut Text, synced: &crate::harness::sync::Synced, verb: &str) {
    // The skill folders keep themselves out of git: the generated line names them.
    let committed: Vec<&str> =
        synced.written.iter().filter(|p| ignored_by_git(p).is_none()).map(String::as_str).collect();
    if !committed.is_empty() {
        s.line(format_args!("{verb} agent harness files: {}", committed.join(", ")));
    }
    if !synced.removed.is_empty() {
        s.line(format_args!("Removed agent harness files: {}", synced.removed.join(", ")));
    }
}

/// What the build put right in the memory directory, before saying what it activated.
fn repaired(s: &mut Text, a: &Activated) {
    let r = &a.repaired;
    if let Some(generation) = r.rolled_back_to {
        s.line(format_args!(
            "The profile was rolled back to generation {generation}; activating the lock's environment as generation {}",
            a.generation
        ));
    }
    let (d, m) = (&r.drift, &a.memory);
    let files = |n: usize| render::count(n, "file");
    if !d.edited.is_empty() {
        s.line(format_args!("Restored {} edited in {m}/: {}", files(d.edited.len()), d.edited.join(", ")));
    }
    if !d.missing.is_empty() {
        s.line(format_args!("Restored {} missing from {m}/", files(d.missing.len())));
    }
    if !d.foreign.is_empty() {
        s.line(format_args!(
            "Removed {} memorix did not deliver from {m}/: {}",
            files(d.foreign.len()),
            d.foreign.join(", ")
        ));
    }
}
