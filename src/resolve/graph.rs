//! The manifest as a dependency graph: sources -> locators -> mounts -> environment. A source
//! folder inside the memory directory reads the environment's output, which closes a cycle.

use petgraph::algo::{kosaraju_scc, toposort};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;

use super::error::{Error, Result};
use crate::manifest::Manifest;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// `manifest.pins.files[i]`
    PinFile(usize),
    /// The pin of the library a `@pin` locator (`manifest.mounts[mount].select[index]`) asks for.
    Pin {
        mount: usize,
        index: usize,
    },
    /// `manifest.sources[i]`
    Source(usize),
    /// `manifest.mounts[mount].select[index]`
    Locator {
        mount: usize,
        index: usize,
    },
    /// `manifest.mounts[i]`
    Mount(usize),
    Environment,
}

pub struct Graph {
    pub graph: DiGraph<Node, ()>,
    /// Nodes in evaluation order.
    pub order: Vec<NodeIndex>,
}

impl Graph {
    /// Builds the graph and orders it; a cycle is an error that prints it.
    pub fn build(m: &Manifest) -> Result<Graph> {
        let mut graph = DiGraph::new();
        let sources: Vec<NodeIndex> = (0..m.sources.len()).map(|i| graph.add_node(Node::Source(i))).collect();
        let env = graph.add_node(Node::Environment);
        let pin_files: Vec<NodeIndex> =
            (0..m.pins.files.len()).map(|i| graph.add_node(Node::PinFile(i))).collect();
        // One pin node per requested library.
        let mut pins: Vec<(String, NodeIndex)> = Vec::new();
        for (mi, mount) in m.mounts.iter().enumerate() {
            let mn = graph.add_node(Node::Mount(mi));
            for (li, loc) in mount.select.iter().enumerate() {
                let ln = graph.add_node(Node::Locator { mount: mi, index: li });
                graph.add_edge(ln, mn, ());
                if loc.selector == Some(crate::model::Selector::Pin) {
                    let library = mount
                        .library
                        .clone()
                        .or(loc.path.file_name().map(str::to_string))
                        .unwrap_or_default();
                    let pn = match pins.iter().find(|(l, _)| *l == library) {
                        Some((_, n)) => *n,
                        None => {
                            let n = graph.add_node(Node::Pin { mount: mi, index: li });
                            for f in &pin_files {
                                graph.add_edge(*f, n, ());
                            }
                            pins.push((library, n));
                            n
                        }
                    };
                    graph.add_edge(pn, ln, ());
                }
                for (si, s) in m.sources.iter().enumerate() {
                    if m.sources_feeding(loc).any(|f| std::ptr::eq(f, s)) {
                        graph.add_edge(sources[si], ln, ());
                    }
                }
            }
            graph.add_edge(mn, env, ());
        }
        for (si, s) in m.sources.iter().enumerate() {
            if s.folder.starts_with(&m.memory) || m.memory.starts_with(&s.folder) {
                graph.add_edge(env, sources[si], ());
            }
        }
        match toposort(&graph, None) {
            Ok(order) => Ok(Graph { graph, order }),
            Err(cycle) => {
                let g = Graph { graph, order: Vec::new() };
                let path = g.cycle_through(cycle.node_id());
                let text: Vec<String> = path.iter().map(|n| g.label(m, *n)).collect();
                Err(Error::Cycle { cycle: text.join(" -> ") })
            }
        }
    }

    /// A cycle through `node` (which lies on one), starting at a source when one is on it.
    fn cycle_through(&self, node: NodeIndex) -> Vec<NodeIndex> {
        let scc = kosaraju_scc(&self.graph).into_iter().find(|c| c.contains(&node)).unwrap_or_default();
        let start = scc.iter().copied().find(|n| matches!(self.graph[*n], Node::Source(_))).unwrap_or(node);
        // Breadth-first inside the component until an edge leads back to `start`.
        let mut prev = std::collections::HashMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut last = start;
        'search: while let Some(n) = queue.pop_front() {
            for t in self.graph.neighbors(n) {
                if t == start {
                    last = n;
                    break 'search;
                }
                if scc.contains(&t) && !prev.contains_key(&t) {
                    prev.insert(t, n);
                    queue.push_back(t);
                }
            }
        }
        let mut back = Vec::new();
        let mut at = last;
        while at != start {
            back.push(at);
            at = prev[&at];
        }
        back.reverse();
        let mut path = vec![start];
        path.extend(back);
        path.push(start);
        path
    }

    pub fn label(&self, m: &Manifest, n: NodeIndex) -> String {
        match self.graph[n] {
            Node::PinFile(i) => format!("pin file {}", m.pins.files[i]),
            Node::Pin { mount, index } => {
                let d = &m.mounts[mount];
                let library = d.library.as_deref().or(d.select[index].path.file_name()).unwrap_or_default();
                format!("pin {library}")
            }
            Node::Source(i) => format!("source {} ({})", m.sources[i].key(), m.sources[i].written),
            Node::Locator { mount, index } => format!("locator {}", m.mounts[mount].select[index]),
            Node::Mount(i) => format!("mount {}", m.mounts[i].path),
            Node::Environment => format!("environment ({})", m.memory),
        }
    }

    pub fn to_dot(&self, m: &Manifest) -> String {
        let mut s = String::from("digraph memorix {\n  rankdir=LR;\n");
        for n in self.graph.node_indices() {
            let shape = match self.graph[n] {
                Node::PinFile(_) => "component",
                Node::Pin { .. } => "ellipse",
                Node::Source(_) => "folder",
                Node::Locator { .. } => "note",
                Node::Mount(_) => "box",
                Node::Environment => "doubleoctagon",
            };
            s.push_str(&format!("  n{} [label={:?}, shape={shape}];\n", n.index(), self.label(m, n)));
        }
        for e in self.graph.edge_references() {
            s.push_str(&format!("  n{} -> n{};\n", e.source().index(), e.target().index()));
        }
        s.push_str("}\n");
        s
    }

    pub fn to_mermaid(&self, m: &Manifest) -> String {
        let mut s = String::from("flowchart LR\n");
        for n in self.graph.node_indices() {
            let label = self.label(m, n).replace('"', "#quot;");
            s.push_str(&format!("  n{}[\"{label}\"]\n", n.index()));
        }
        for e in self.graph.edge_references() {
            s.push_str(&format!("  n{} --> n{}\n", e.source().index(), e.target().index()));
        }
        s
    }
}
