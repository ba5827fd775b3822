use super::{Context, render};
use crate::ops::error::{Error, Result};
use crate::ops::graph::{Format, graph};

/// Print the manifest's dependency graph (sources -> locators -> mounts -> environment)
///
/// Example: `memorix graph --format mermaid`
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Output format
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    format: GraphFormat,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum GraphFormat {
    /// Graphviz (`memorix graph | dot -Tsvg > graph.svg`)
    Dot,
    /// Mermaid flowchart (renders in GitHub Markdown)
    Mermaid,
}

pub fn run(ctx: &Context, args: Args) -> Result<u8> {
    if ctx.json {
        return Err(Error::NoJson {
            command: "graph",
            prints: "a graph in a drawing language",
            instead: "drop --json and choose the language with --format dot|mermaid; `memorix --json status` lists the mounts",
        });
    }
    let format = match args.format {
        GraphFormat::Dot => Format::Dot,
        GraphFormat::Mermaid => Format::Mermaid,
    };
    render::text(&graph(&ctx.ops(false), format)?)?;
    Ok(0)
}
