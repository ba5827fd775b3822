//! `memorix graph`: the manifest's dependency graph as Graphviz dot or Mermaid.

use std::path::Path;

use super::error::Result;
use super::project::Project;
use crate::resolve::Graph;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Dot,
    Mermaid,
}

pub fn graph(start: &Path, format: Format) -> Result<String> {
    let project = Project::open(start)?;
    let g = Graph::build(&project.manifest)?;
    Ok(match format {
        Format::Dot => g.to_dot(&project.manifest),
        Format::Mermaid => g.to_mermaid(&project.manifest),
    })
}
