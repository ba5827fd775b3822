use super::Context;
use super::render::{self, Text};
use crate::harness::doctor::HarnessReport;
use crate::ops::doctor::doctor;
use crate::ops::error::Result;

/// Show what each agent harness loads from this project at session start, and what is wrong
///
/// Per harness (those `[agents]` names, else all): the files it reads when a session starts
/// (imports and always-applied rules included) with bytes and approximate tokens, its
/// path-scoped rules and the project files they match, its skills. Problems: a size cap
/// exceeded (Codex stops at 32 KiB, Windsurf at 6,000 characters a rule), the same text loaded
/// twice, scoped rules whose globs match no file, front matter the harness would reject, a
/// file a first-match loader never reaches (Zed), a skill the Agent Skills specification
/// rejects, a memory directory its search skips, and no harness pointed at the memory at all.
///
/// Examples: `memorix doctor`, `memorix doctor --harness claude`, `memorix doctor --check`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this harness: agents-md, claude, cursor, copilot, gemini, codex, windsurf, cline,
    /// kiro, zed or junie
    #[arg(long, value_name = "NAME")]
    harness: Option<String>,

    /// The folder a session starts in, relative to the project root (Codex and Cline read an
    /// AGENTS.md in each folder from the root down to it)
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,

    /// Exit 1 when any problem is found, for CI
    #[arg(long)]
    check: bool,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let report = doctor(&ctx.ops(false), args.harness.as_deref(), args.cwd.as_deref())?;
    let code = if args.check && report.problems > 0 { 1 } else { 0 };
    if ctx.json {
        render::json(&report)?;
        return Ok(code);
    }
    let mut s = Text::default();
    for h in &report.harnesses {
        harness(&mut s, h);
    }
    if let Some(p) = &report.setup {
        s.line(format_args!("problem ({}): {}", p.code, p.message));
    }
    match report.problems {
        0 => s.line("No problems found"),
        n => s.line(format_args!("{} found", render::count(n, "problem"))),
    }
    render::text(&s)?;
    Ok(code)
}

fn harness(s: &mut Text, h: &HarnessReport) {
    let configured = if h.configured { "" } else { ", not in [agents]" };
    s.line(format_args!("{}: {} (conventions checked {}{configured})", h.harness, h.products, h.checked));
    if h.loads.is_empty() {
        s.line("  loads nothing from this project at session start");
    } else {
        s.line("  loads at session start:");
        let width = h.loads.iter().map(|l| l.path.len()).max().unwrap_or(0);
        for l in &h.loads {
            let via = l.via.as_ref().map(|v| format!(" ({v})")).unwrap_or_default();
            s.line(format_args!("    {:width$}  {:>7} bytes  ~{} tokens{via}", l.path, l.bytes, l.tokens));
        }
        let cap = h.cap.map(|c| format!(" of a {c}-byte cap")).unwrap_or_default();
        s.line(format_args!("  total {} bytes, ~{} tokens{cap}", h.bytes, h.tokens));
    }
    for r in &h.on_demand {
        let globs = if r.globs.is_empty() { "(by description)".to_string() } else { r.globs.join(", ") };
        s.line(format_args!(
            "  on demand: {} for {globs} ({})",
            r.path,
            render::count(r.matches, "project file")
        ));
    }
    for skill in &h.skills {
        s.line(format_args!("  skill: {skill}"));
    }
    for n in &h.notes {
        s.line(format_args!("  note: {n}"));
    }
    for p in &h.problems {
        s.line(format_args!("  problem ({}): {}", p.code, p.message));
    }
}
