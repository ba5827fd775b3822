//! `memorix graph`: the manifest's dependency graph as Graphviz dot or Mermaid.

use super::context::Context;
use super::error::Result;
use crate::resolve::Graph;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Dot,
    Mermaid,
}

pub fn graph(ctx: &Context, format: Format) -> Result<String> {
    let project = ctx.project()?;
    let g = Graph::build(&project.manifest)?;
    Ok(match format {
        Format::Dot => g.to_dot(&project.manifest),
        Format::Mermaid => g.to_mermaid(&project.manifest),
    })
}
