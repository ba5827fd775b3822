use std::fmt::Write;
use std::io;

use super::{Context, render};
use crate::diagnostics::FromIo;
use crate::ops::error::{Error, Result};
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
    let shown = show(&ctx.store, &args.id)?;
    if ctx.json {
        render::json(&shown)?;
        return Ok(0);
    }
    let mut s = String::new();
    match shown {
        Shown::Blob { mut content, .. } => {
            return match io::copy(&mut content, &mut io::stdout().lock()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                    Err(Error::io("write", std::path::Path::new("<stdout>"))(e))
                }
                _ => Ok(0),
            };
        }
        Shown::Tree { id, entries } => {
            writeln!(s, "tree {id}").expect("writing to a string");
            for e in entries {
                let slash = if e.kind == crate::model::EntryKind::Tree { "/" } else { "" };
                writeln!(s, "{} {} {}{slash}", e.kind.as_str(), e.id, e.name).expect("writing to a string");
            }
        }
        Shown::Generation { id, generation: g } => {
            writeln!(s, "generation {id}").expect("writing to a string");
            writeln!(s, "kind:    {}", g.kind).expect("writing to a string");
            writeln!(s, "seq:     {}", g.seq).expect("writing to a string");
            writeln!(s, "root:    {}", g.root).expect("writing to a string");
            let parent = g.parent.map(|p| p.to_string()).unwrap_or_else(|| "(none)".into());
            writeln!(s, "parent:  {parent}").expect("writing to a string");
            for t in &g.tags {
                writeln!(s, "tag:     {} {} at {} ({})", t.library, t.version, t.path, t.tree)
                    .expect("writing to a string");
            }
            writeln!(s, "time:    {}", g.meta.time).expect("writing to a string");
            if let Some(m) = &g.meta.message {
                writeln!(s, "message: {m}").expect("writing to a string");
            }
        }
        Shown::Derivation { id, record } => {
            writeln!(s, "derivation {id}").expect("writing to a string");
            for p in &record.provenance {
                writeln!(s, "locator  {} -> {} {}", p.locator, p.kind.as_str(), p.id)
                    .expect("writing to a string");
            }
            for o in &record.origins {
                writeln!(s, "file     {} <- {}", o.path, o.place()).expect("writing to a string");
            }
            for d in &record.decisions {
                writeln!(s, "decided  {}: {} over {} ({})", d.path, d.winner, d.loser, d.rule_name())
                    .expect("writing to a string");
            }
        }
        Shown::Environment { id, record } => {
            writeln!(s, "environment {id}").expect("writing to a string");
            for (mount, drv) in &record.mounts {
                writeln!(s, "mount    {mount}/ -> derivation {drv}").expect("writing to a string");
            }
            for d in &record.decisions {
                writeln!(s, "decided  {}: mount {} over {} ({})", d.path, d.winner, d.loser, d.rule_name())
                    .expect("writing to a string");
            }
        }
    }
    render::text(&s)?;
    Ok(0)
}
