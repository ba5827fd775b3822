use super::Context;
use super::render::{self, Text};
use crate::ops::error::Result;
use crate::ops::show::{Shown, show};

/// Show any object (blob, tree, generation) by a unique prefix of its id.
///
/// A blob prints its content; a tree its entries; a generation its fields. At least 8 hex
/// digits, with or without `sha256:`.
///
/// Example: `memorix show 3f2a9c01`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An id or unique id prefix, e.g. sha256:3f2a9c01 or 3f2a9c01
    #[arg(value_name = "ID")]
    id: String,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    let shown = show(&ctx.ops(false), &args.id)?;
    if ctx.json {
        render::json(&shown)?;
        return Ok(0);
    }
    let mut s = Text::default();
    match shown {
        Shown::Blob { mut content, .. } => {
            render::copy(&mut content)?;
            return Ok(0);
        }
        Shown::Tree { id, entries } => {
            s.line(format_args!("tree {id}"));
            for e in entries {
                let slash = if e.kind == crate::model::EntryKind::Tree { "/" } else { "" };
                s.line(format_args!("{} {} {}{slash}", e.kind.as_str(), e.id, e.name));
            }
        }
        Shown::Generation { id, generation: g } => {
            s.line(format_args!("generation {id}"));
            s.line(format_args!("kind:    {}", g.kind));
            s.line(format_args!("seq:     {}", g.seq));
            s.line(format_args!("root:    {}", g.root));
            let parent = g.parent.map(|p| p.to_string()).unwrap_or_else(|| "(none)".into());
            s.line(format_args!("parent:  {parent}"));
            for t in &g.tags {
                s.line(format_args!("tag:     {} {} at {} ({})", t.library, t.version, t.path, t.tree));
            }
            s.line(format_args!("time:    {}", g.meta.time));
            if let Some(m) = &g.meta.message {
                s.line(format_args!("message: {m}"));
            }
        }
        Shown::Derivation { id, record } => {
            s.line(format_args!("derivation {id}"));
            for p in &record.provenance {
                s.line(format_args!("locator  {} -> {} {}", p.locator, p.kind.as_str(), p.id));
            }
            for o in &record.origins {
                s.line(format_args!("file     {} <- {}", o.path, o.place()));
            }
            for d in &record.decisions {
                s.line(format_args!(
                    "decided  {}: {} over {} ({})",
                    d.path,
                    d.winner,
                    d.loser,
                    d.rule_name()
                ));
            }
        }
        Shown::Environment { id, record } => {
            s.line(format_args!("environment {id}"));
            for (mount, drv) in &record.mounts {
                s.line(format_args!("mount    {mount}/ -> derivation {drv}"));
            }
            for d in &record.decisions {
                s.line(format_args!(
                    "decided  {}: mount {} over {} ({})",
                    d.path,
                    d.winner,
                    d.loser,
                    d.rule_name()
                ));
            }
        }
    }
    render::text(&s)?;
    Ok(0)
}
