//! A Python package's public API, parsed with tree-sitter-python: the modules of its packages
//! (directories with `__init__.py`, at the top or under `src/`; a `.pyi` stub wins over its
//! `.py`), the names each exports (`__all__`, else those without a leading underscore, its
//! own and those it imports from its package; a name bound only under `if TYPE_CHECKING:`
//! counts only where `__all__` lists it), and the public methods of each class. An item
//! is listed once, under the shortest public module that exports it (`httpx.Client`, not
//! `httpx._client.Client`).

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Parser};

use super::{Files, Item, first_line, one_line, signature_line};

/// One definition at the top of a module, with its members.
struct Def {
    kind: &'static str,
    signature: String,
    doc: String,
    members: Vec<(String, String, String)>,
}

/// What one module defines and exports.
#[derive(Default)]
struct Module {
    defs: BTreeMap<String, Def>,
    /// `__all__`, when it is a literal list or tuple of strings.
    all: Option<Vec<String>>,
    /// Names imported from the package: name -> (module, name there).
    imports: BTreeMap<String, (String, String)>,
    /// Modules imported whole (`from ._client import *`).
    globs: Vec<String>,
    /// Names bound only under `if TYPE_CHECKING:`, which exist at run time only where a lazy
    /// module `__getattr__` provides what `__all__` lists.
    typing_only: BTreeSet<String>,
}

impl Module {
    /// The names it exports.
    fn exports(&self) -> BTreeSet<&str> {
        match &self.all {
            Some(all) => all.iter().map(String::as_str).collect(),
            None => self
                .defs
                .keys()
                .chain(self.imports.keys())
                .map(String::as_str)
                .filter(|n| !n.starts_with('_') && !self.typing_only.contains(*n))
                .collect(),
        }
    }
}

/// The package's public items.
pub fn items(files: &Files) -> Vec<Item> {
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return Vec::new();
    }
    let modules: BTreeMap<String, Module> = sources(files)
        .into_iter()
        .filter_map(|(name, (bytes, init))| {
            let tree = parser.parse(bytes, None)?;
            // Relative imports start from the package: an `__init__` is its own.
            let package = match name.rsplit_once('.') {
                _ if init => name.clone(),
                Some((parent, _)) => parent.to_string(),
                None => String::new(),
            };
            Some((name.clone(), module(&package, tree.root_node(), bytes)))
        })
        .collect();
    // Each definition's shortest public (module, name).
    let mut best: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    for (m, module) in modules.iter().filter(|(m, _)| public(m)) {
        for name in module.exports() {
            if let Some(at) = resolve(&modules, m, name, 0) {
                let shown = (m.clone(), name.to_string());
                let better = best
                    .get(&at)
                    .is_none_or(|b| (b.0.matches('.').count(), b) > (shown.0.matches('.').count(), &shown));
                if better {
                    best.insert(at, shown);
                }
            }
        }
    }
    let mut out = Vec::new();
    for ((m, name), (module, shown)) in best {
        let def = &modules[&m].defs[&name];
        out.push(Item {
            module: module.clone(),
            name: shown.clone(),
            kind: def.kind.into(),
            signature: def.signature.clone(),
            doc: def.doc.clone(),
        });
        for (member, signature, doc) in &def.members {
            let name = format!("{shown}.{member}");
            out.push(Item {
                module: module.clone(),
                name,
                kind: "method".into(),
                signature: signature.clone(),
                doc: doc.clone(),
            });
        }
    }
    out
}

/// Top-level directories that hold a project's other Python, never its package.
const NOT_PACKAGES: &[&str] =
    &["tests", "test", "testing", "docs", "doc", "examples", "benchmarks", "scripts", "tools"];

/// The package's module files by dotted name, each with whether it is an `__init__`: every
/// `.py`/`.pyi` whose directories up from the top (or `src/`) each hold an `__init__`, but
/// for a leading run of namespace directories (PEP 420: no `__init__` and no module of their
/// own, as `google/` of google-genai or `opentelemetry/` of opentelemetry-api).
fn sources<'a>(files: &Files<'a>) -> BTreeMap<String, (&'a [u8], bool)> {
    let has =
        |dir: &str, names: &[&str]| names.iter().any(|i| files.contains_key(format!("{dir}/{i}").as_str()));
    let package = |dir: &str| has(dir, &["__init__.py", "__init__.pyi"]);
    let modules_in = |dir: &str| {
        files.keys().any(|p| {
            p.strip_prefix(dir)
                .and_then(|r| r.strip_prefix('/'))
                .is_some_and(|r| !r.contains('/') && (r.ends_with(".py") || r.ends_with(".pyi")))
        })
    };
    let mut out: BTreeMap<String, (&str, &[u8], bool)> = BTreeMap::new();
    for (path, bytes) in files {
        let Some(stem) = path.strip_suffix(".pyi").or_else(|| path.strip_suffix(".py")) else { continue };
        let rel = stem.strip_prefix("src/").unwrap_or(stem);
        let parts: Vec<&str> = rel.split('/').collect();
        // A stub-only package (PEP 561: `requests-stubs/`, as types-requests ships) types the
        // package it names.
        let stubs = parts.len() > 1 && parts[0].strip_suffix("-stubs").is_some_and(|p| !p.contains('-'));
        let odd = |(i, p): (usize, &&str)| {
            p.is_empty() || p.contains('.') || (p.contains('-') && !(i == 0 && stubs))
        };
        if parts.len() < 2 || parts.iter().enumerate().any(odd) {
            continue;
        }
        let top = path.len() - rel.len() - if path.ends_with(".pyi") { 4 } else { 3 };
        let dir = |n: usize| format!("{}{}", &path[..top], parts[..n].join("/"));
        let namespaces = (1..parts.len()).take_while(|n| !package(&dir(*n)) && !modules_in(&dir(*n))).count();
        let inside = namespaces + 1 < parts.len()
            && (namespaces + 1..parts.len()).all(|n| package(&dir(n)))
            && !(namespaces > 0 && NOT_PACKAGES.contains(&parts[0]));
        if !inside {
            continue;
        }
        let mut dotted = parts.clone();
        if stubs {
            dotted[0] = parts[0].trim_end_matches("-stubs");
        }
        let init = dotted.last() == Some(&"__init__");
        if init {
            dotted.pop();
        }
        let name = dotted.join(".");
        // A stub says what the module exports, better than its source.
        if out.get(&name).is_none_or(|(p, _, _)| !p.ends_with(".pyi")) {
            out.insert(name, (path, bytes, init));
        }
    }
    out.into_iter().map(|(n, (_, b, init))| (n, (b, init))).collect()
}

/// A module is public when none of its dotted parts starts with `_`.
fn public(module: &str) -> bool {
    module.split('.').all(|p| !p.starts_with('_'))
}

/// Where `name` as `module` exports it is defined, following imports from the package.
fn resolve(
    modules: &BTreeMap<String, Module>,
    module: &str,
    name: &str,
    depth: usize,
) -> Option<(String, String)> {
    let m = modules.get(module)?;
    if m.defs.contains_key(name) {
        return Some((module.to_string(), name.to_string()));
    }
    if depth > 8 {
        return None;
    }
    if let Some((from, there)) = m.imports.get(name) {
        return resolve(modules, from, there, depth + 1);
    }
    // A `*` import brings in what that module exports.
    m.globs.iter().find_map(|from| {
        let exported = modules.get(from)?.exports().contains(name);
        exported.then(|| resolve(modules, from, name, depth + 1)).flatten()
    })
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or_default()
}

/// What one module's top level defines, exports and imports; `package` is the one it is in.
fn module(package: &str, root: Node, src: &[u8]) -> Module {
    let mut out = Module::default();
    statements(package, root, src, &mut out);
    out
}

/// The definitions, `__all__` and imports of a block of top-level statements. An `if
/// TYPE_CHECKING:` block's names are typing-only (see [`Module::exports`]); its `else:` is
/// what runs, read like the top level.
fn statements(package: &str, block: Node, src: &[u8], out: &mut Module) {
    let mut cursor = block.walk();
    for node in block.named_children(&mut cursor) {
        match node.kind() {
            "function_definition" | "class_definition" | "decorated_definition" => {
                if let Some((n, def)) = definition(node, src) {
                    out.defs.insert(n, def);
                }
            }
            "expression_statement" => assignment(node, src, out),
            "import_from_statement" => import(node, src, package, out),
            "if_statement" if type_checking(node, src) => {
                let before: BTreeSet<String> = out.defs.keys().chain(out.imports.keys()).cloned().collect();
                if let Some(body) = node.child_by_field_name("consequence") {
                    statements(package, body, src, out);
                }
                let bound = out.defs.keys().chain(out.imports.keys()).filter(|n| !before.contains(*n));
                out.typing_only.extend(bound.cloned().collect::<Vec<_>>());
                let mut c = node.walk();
                for alt in
                    node.children_by_field_name("alternative", &mut c).filter(|a| a.kind() == "else_clause")
                {
                    if let Some(body) = alt.child_by_field_name("body") {
                        statements(package, body, src, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `if TYPE_CHECKING:` (or `typing.TYPE_CHECKING`, `t.TYPE_CHECKING`).
fn type_checking(node: Node, src: &[u8]) -> bool {
    let condition = node.child_by_field_name("condition").map(|c| text(c, src)).unwrap_or_default();
    condition == "TYPE_CHECKING" || condition.ends_with(".TYPE_CHECKING")
}

/// A function or class (under its decorators), with its name.
fn definition(node: Node, src: &[u8]) -> Option<(String, Def)> {
    let node = match node.kind() {
        "decorated_definition" => node.child_by_field_name("definition")?,
        _ => node,
    };
    let name = text(node.child_by_field_name("name")?, src).to_string();
    let body = node.child_by_field_name("body");
    let doc = body.map(|b| docstring(b, src)).unwrap_or_default();
    let def = match node.kind() {
        "function_definition" => {
            Def { kind: "function", signature: function_signature(node, src), doc, members: Vec::new() }
        }
        "class_definition" => {
            let bases = node.child_by_field_name("superclasses").map(|s| text(s, src)).unwrap_or_default();
            let members = body.map(|b| members(b, src)).unwrap_or_default();
            Def { kind: "class", signature: signature_line(&format!("class {name}{bases}")), doc, members }
        }
        _ => return None,
    };
    Some((name, def))
}

/// `def name(params) -> ret`, `async` kept.
fn function_signature(node: Node, src: &[u8]) -> String {
    let head = node.child_by_field_name("name").map_or(node.start_byte(), |n| n.start_byte());
    let end = node
        .child_by_field_name("return_type")
        .or_else(|| node.child_by_field_name("parameters"))
        .map_or(head, |n| n.end_byte());
    let start = node.start_byte();
    signature_line(std::str::from_utf8(&src[start..end]).unwrap_or_default())
}

/// A class's public methods (and `__init__`, the constructor's signature).
fn members(body: Node, src: &[u8]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut cursor = body.walk();
    for node in body.named_children(&mut cursor) {
        let Some((name, def)) = ["function_definition", "decorated_definition"]
            .contains(&node.kind())
            .then(|| definition(node, src))
            .flatten()
        else {
            continue;
        };
        if def.kind == "function" && (!name.starts_with('_') || name == "__init__") {
            out.push((name, def.signature, def.doc));
        }
    }
    out
}

/// The first line of a body's docstring.
fn docstring(body: Node, src: &[u8]) -> String {
    let Some(first) = body.named_child(0).filter(|n| n.kind() == "expression_statement") else {
        return String::new();
    };
    let Some(string) = first.named_child(0).filter(|n| n.kind() == "string") else { return String::new() };
    let mut cursor = string.walk();
    let content: String = string
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "string_content")
        .map(|n| text(n, src))
        .collect();
    first_line(&content)
}

/// `NAME = …` or `NAME: T = …` at the top: a data item; `__all__ = [...]`: the exports.
fn assignment(node: Node, src: &[u8], out: &mut Module) {
    let Some(assign) =
        node.named_child(0).filter(|n| n.kind() == "assignment" || n.kind() == "augmented_assignment")
    else {
        return;
    };
    let Some(left) = assign.child_by_field_name("left").filter(|l| l.kind() == "identifier") else { return };
    let name = text(left, src).to_string();
    if name == "__all__" {
        let strings = assign.child_by_field_name("right").map(|r| strings(r, src));
        match (assign.kind(), strings, &mut out.all) {
            ("augmented_assignment", Some(more), Some(all)) => all.extend(more),
            (_, strings, _) => out.all = strings,
        }
        return;
    }
    let ty = assign.child_by_field_name("type").map(|t| format!(": {}", text(t, src))).unwrap_or_default();
    let signature = one_line(&format!("{name}{ty}"));
    out.defs.insert(name, Def { kind: "data", signature, doc: String::new(), members: Vec::new() });
}

/// The string literals of a list or tuple.
fn strings(node: Node, src: &[u8]) -> Vec<String> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|n| n.kind() == "string")
        .map(|s| {
            let mut c = s.walk();
            s.named_children(&mut c).filter(|n| n.kind() == "string_content").map(|n| text(n, src)).collect()
        })
        .collect()
}

/// `from .x import a, b as c` (or `from pkg.x import …`): the names it brings in and where
/// from (`.` is `package`, each further dot its parent).
fn import(node: Node, src: &[u8], package: &str, out: &mut Module) {
    let Some(from) = node.child_by_field_name("module_name") else { return };
    let raw = text(from, src);
    let dots = raw.chars().take_while(|c| *c == '.').count();
    let source = if dots > 0 {
        let mut base: Vec<&str> = package.split('.').collect();
        for _ in 1..dots {
            base.pop();
        }
        let rest = &raw[dots..];
        [base.join("."), rest.to_string()]
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(".")
    } else {
        raw.to_string()
    };
    let mut cursor = node.walk();
    if node.named_children(&mut cursor).any(|c| c.kind() == "wildcard_import") {
        out.globs.push(source);
        return;
    }
    for name in node.children_by_field_name("name", &mut cursor) {
        let (there, here) = match name.kind() {
            "aliased_import" => (name.child_by_field_name("name"), name.child_by_field_name("alias")),
            _ => (Some(name), Some(name)),
        };
        if let (Some(there), Some(here)) = (there, here) {
            out.imports.insert(text(here, src).to_string(), (source.clone(), text(there, src).to_string()));
        }
    }
}
