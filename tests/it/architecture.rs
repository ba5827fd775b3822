//! The module graph matches the layering declared in book/src/architecture.md.
//!
//! Every file of `src/` is parsed with `syn`, and every path it writes is resolved the way
//! the compiler resolves it: `use` trees with their groups, renames and globs (`use crate as
//! root;` then `root::ops::…`), `self::` and `super::` relative to the module the file (or an
//! inline `mod`) is, names a `use` or a glob import brought into scope, and the paths inside
//! macro invocations, read from their tokens. Literals are tokens, so no string, raw string
//! or comment can hide a path or make one up. What a path names is then held to the chapter:
//! the table of which top-level module may import which, the floors inside `ops/` and
//! `store/` (and inside each of the Store's folders, `store/objects/` and the others), and the
//! items of lower layers `cli` may name besides `ops`.
//!
//! `cargo test --test it architecture:: -- --nocapture` prints the module graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use syn::visit::{self, Visit};

const DOC: &str = "book/src/architecture.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------------------------
// Reading the crate
// ---------------------------------------------------------------------------------------------

/// A module as a path from the crate root (`["store", "tree"]`; the root is `[]`).
type Mod = Vec<String>;

/// How a path came to be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    /// A leaf of a `use` tree.
    Use,
    /// A path of two or more segments in an expression, type, pattern or bound.
    Path,
    /// A path read from the tokens of a macro invocation.
    Macro,
}

/// One path as written in one module.
#[derive(Clone, Debug)]
struct Written {
    segs: Vec<String>,
    line: usize,
    how: How,
}

/// What one module (a file, or an inline `mod` in it) declares and writes.
#[derive(Default, Debug)]
struct Scope {
    /// The file it is in, relative to `src/`.
    file: String,
    /// The module of that file (an inline `mod tests` belongs to its file's module).
    node: Mod,
    /// The root of the crate it is in: `[]` for the library, `["main"]` for the binary.
    crate_root: Mod,
    /// Submodules declared in it (`mod x;` or `mod x { … }`).
    children: BTreeSet<String>,
    /// Names a `use` brings into scope, with the path as written.
    names: BTreeMap<String, Vec<String>>,
    /// Paths of glob imports (`use super::*`), as written.
    globs: Vec<Vec<String>>,
    /// Every path written in it.
    written: Vec<Written>,
    /// The type of each inherent or trait `impl` block in it, as written, with its line.
    impls: Vec<(Vec<String>, usize)>,
}

/// The modules of a crate (the library and, as `main`, the binary), keyed by path.
#[derive(Default, Debug)]
struct Crate {
    scopes: BTreeMap<Mod, Scope>,
}

/// The module a file of `src/` is: `lib.rs` the root, `main.rs` the binary (`main`),
/// `a/mod.rs` is `a`, `a/b.rs` is `a::b`.
fn module_of(rel: &str) -> Mod {
    match rel {
        "lib.rs" => Vec::new(),
        "main.rs" => vec!["main".into()],
        _ => {
            let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            parts
        }
    }
}

impl Crate {
    /// Parses `files` (path relative to `src/`, text).
    fn parse<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Crate {
        let mut krate = Crate::default();
        for (rel, text) in files {
            let ast = syn::parse_file(text).unwrap_or_with(rel);
            let module = module_of(rel);
            let crate_root = if rel == "main.rs" { module.clone() } else { Vec::new() };
            let scope = krate.scopes.entry(module.clone()).or_default();
            scope.file = rel.to_string();
            scope.node = module.clone();
            scope.crate_root = crate_root.clone();
            let mut c = Collector {
                krate: &mut krate,
                stack: vec![module.clone()],
                file: rel,
                node: module,
                crate_root,
            };
            c.visit_file(&ast);
        }
        krate
    }

    /// Reads every `.rs` file under `src/`.
    fn read(src: &Path) -> Crate {
        let texts: Vec<(String, String)> = sources(src)
            .into_iter()
            .map(|f| {
                let rel = f.strip_prefix(src).expect("below src").to_string_lossy().into_owned();
                let text = fs::read_to_string(&f).expect("a source file");
                (rel, text)
            })
            .collect();
        Crate::parse(texts.iter().map(|(r, t)| (r.as_str(), t.as_str())))
    }

    /// The module path `segs`, written in module `at`, names, or `None` when it names
    /// something outside the crate (`std::…`, a dependency) or a local item.
    fn resolve(&self, at: &Mod, segs: &[String]) -> Option<Mod> {
        self.resolve_in(at, segs, &mut BTreeSet::new())
    }

    /// [`Crate::resolve`], with the (module, name) pairs already looked up in this resolution:
    /// glob imports may form a cycle (`use super::*` beside `pub use child::*`).
    fn resolve_in(&self, at: &Mod, segs: &[String], seen: &mut BTreeSet<(Mod, String)>) -> Option<Mod> {
        let (first, rest) = segs.split_first()?;
        let scope = self.scopes.get(at)?;
        let base = match first.as_str() {
            "crate" | "$crate" => scope.crate_root.clone(),
            "self" => at.clone(),
            "super" => {
                let mut p = at.clone();
                p.pop()?;
                p
            }
            "::" | "Self" => return None,
            // The binary names the library by its crate name.
            "memorix" if !scope.crate_root.is_empty() => Vec::new(),
            name => {
                let mut found = self.lookup(at, name, seen)?;
                found.extend(rest.iter().cloned());
                return Some(found);
            }
        };
        let mut path = base;
        let mut rest = rest.iter().peekable();
        while let Some(s) = rest.peek() {
            match s.as_str() {
                "super" => {
                    path.pop()?;
                }
                "self" => {}
                _ => break,
            }
            rest.next();
        }
        path.extend(rest.cloned());
        Some(path)
    }

    /// What a single name means in module `at`: a submodule, a name a `use` brought, or a
    /// name a glob import brought.
    fn lookup(&self, at: &Mod, name: &str, seen: &mut BTreeSet<(Mod, String)>) -> Option<Mod> {
        if !seen.insert((at.clone(), name.to_string())) {
            return None;
        }
        let scope = self.scopes.get(at)?;
        if scope.children.contains(name) {
            let mut m = at.clone();
            m.push(name.to_string());
            return Some(m);
        }
        if let Some(path) = scope.names.get(name) {
            return self.resolve_in(at, path, seen);
        }
        for glob in &scope.globs {
            let Some(m) = self.resolve_in(at, glob, seen) else { continue };
            if self.scopes.contains_key(&m)
                && m != *at
                && let Some(found) = self.lookup(&m, name, seen)
            {
                return Some(found);
            }
        }
        None
    }

    /// The longest prefix of `path` that is a module of the crate.
    fn module_in<'p>(&self, path: &'p [String]) -> (&'p [String], &'p [String]) {
        (0..=path.len())
            .rev()
            .map(|n| path.split_at(n))
            .find(|(m, _)| self.scopes.contains_key(*m))
            .expect("the crate root is a module")
    }

    /// Every path written in the crate that names another module of it.
    fn imports(&self) -> Vec<Import> {
        let mut out = Vec::new();
        for (at, scope) in &self.scopes {
            for w in &scope.written {
                let Some(target) = self.resolve(at, &w.segs) else { continue };
                let (module, item) = self.module_in(&target);
                let to = self.scopes[module].node.clone();
                if to.is_empty() || to == scope.node {
                    continue;
                }
                out.push(Import {
                    at: format!("src/{}:{}", scope.file, w.line),
                    from: scope.node.clone(),
                    to,
                    item: item.first().cloned(),
                    written: w.segs.join("::"),
                    how: w.how,
                });
            }
        }
        out.sort_by(|a, b| (&a.at, &a.written).cmp(&(&b.at, &b.written)));
        out.dedup_by(|a, b| a.at == b.at && a.written == b.written);
        out
    }

    /// The file-level modules (the nodes of the graph).
    fn nodes(&self) -> BTreeSet<Mod> {
        self.scopes.values().map(|s| s.node.clone()).collect()
    }
}

trait ParseOrPanic<T> {
    fn unwrap_or_with(self, file: &str) -> T;
}

impl<T> ParseOrPanic<T> for syn::Result<T> {
    fn unwrap_or_with(self, file: &str) -> T {
        self.unwrap_or_else(|e| {
            let at = e.span().start();
            panic!("src/{file}:{}:{}: syn cannot parse it: {e}", at.line, at.column + 1)
        })
    }
}

/// One path that names another module of the crate.
#[derive(Clone, Debug)]
struct Import {
    at: String,
    from: Mod,
    to: Mod,
    /// The item of `to` it names, if it goes past the module (`Store` in `store::Store`).
    item: Option<String>,
    written: String,
    how: How,
}

impl Import {
    /// Where and how it is written, as the failures say it: ``src/a.rs:3: use `b::c` ``.
    fn shown(&self) -> String {
        let how = match self.how {
            How::Use => "use",
            How::Path => "path",
            How::Macro => "path in a macro",
        };
        format!("{}: {how} `{}`", self.at, self.written)
    }
}

struct Collector<'k> {
    krate: &'k mut Crate,
    stack: Vec<Mod>,
    file: &'k str,
    node: Mod,
    crate_root: Mod,
}

impl Collector<'_> {
    fn scope(&mut self) -> &mut Scope {
        let at = self.stack.last().expect("in a module").clone();
        self.krate.scopes.get_mut(&at).expect("a scope per module on the stack")
    }

    fn write(&mut self, segs: Vec<String>, line: usize, how: How) {
        self.scope().written.push(Written { segs, line, how });
    }
}

/// The leaves of a `use` tree: the full path, the name it binds (`None` for a glob), and the
/// line the leaf is on (a group may span many).
fn leaves(tree: &syn::UseTree, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>, usize)>) {
    let with = |name: &syn::Ident| {
        let mut p = prefix.to_vec();
        p.push(name.to_string());
        p
    };
    let line = |name: &syn::Ident| name.span().start().line;
    match tree {
        syn::UseTree::Path(p) => leaves(&p.tree, &with(&p.ident), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.to_vec(), prefix.last().cloned(), line(&n.ident)));
        }
        syn::UseTree::Name(n) => out.push((with(&n.ident), Some(n.ident.to_string()), line(&n.ident))),
        syn::UseTree::Rename(r) if r.ident == "self" => {
            out.push((prefix.to_vec(), Some(r.rename.to_string()), line(&r.ident)));
        }
        syn::UseTree::Rename(r) => out.push((with(&r.ident), Some(r.rename.to_string()), line(&r.ident))),
        syn::UseTree::Glob(g) => out.push((prefix.to_vec(), None, g.star_token.spans[0].start().line)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| leaves(t, prefix, out)),
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let name = m.ident.to_string();
        self.scope().children.insert(name.clone());
        let Some((_, items)) = &m.content else { return };
        let mut inner = self.stack.last().expect("in a module").clone();
        inner.push(name);
        let scope = self.krate.scopes.entry(inner.clone()).or_default();
        scope.file = self.file.to_string();
        scope.node = self.node.clone();
        scope.crate_root = self.crate_root.clone();
        self.stack.push(inner);
        for item in items {
            self.visit_item(item);
        }
        self.stack.pop();
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let prefix: Vec<String> = if u.leading_colon.is_some() { vec!["::".into()] } else { Vec::new() };
        let mut found = Vec::new();
        leaves(&u.tree, &prefix, &mut found);
        for (path, name, line) in found {
            match name {
                Some(name) if name != "_" => {
                    self.scope().names.insert(name, path.clone());
                }
                Some(_) => {}
                None => self.scope().globs.push(path.clone()),
            }
            self.write(path, line, How::Use);
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.segments.len() >= 2 || p.leading_colon.is_some() {
            let mut segs: Vec<String> =
                if p.leading_colon.is_some() { vec!["::".into()] } else { Vec::new() };
            segs.extend(p.segments.iter().map(|s| s.ident.to_string()));
            let line = p.segments.first().map_or(0, |s| s.ident.span().start().line);
            self.write(segs, line, How::Path);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        let mut found = Vec::new();
        macro_paths(m.tokens.clone(), &mut found);
        for (segs, line) in found {
            self.write(segs, line, How::Macro);
        }
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let syn::Type::Path(p) = &*i.self_ty {
            let segs = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = i.impl_token.span.start().line;
            self.scope().impls.push((segs, line));
        }
        visit::visit_item_impl(self, i);
    }

    // `pub(in crate::x)` says who may see an item; it imports nothing.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}
}

/// Whether `tts[i..]` starts with `::`.
fn colons(tts: &[TokenTree], i: usize) -> bool {
    matches!((tts.get(i), tts.get(i + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':')
}

fn ident_at(tts: &[TokenTree], i: usize) -> Option<String> {
    match tts.get(i) {
        Some(TokenTree::Ident(id)) => Some(id.to_string()),
        _ => None,
    }
}

/// The paths of two or more segments in a macro's tokens (`crate :: a :: b`, `$crate :: x`,
/// `alias :: ops :: f`), with their lines; groups are read too.
fn macro_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, usize)>) {
    let tts: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < tts.len() {
        if let TokenTree::Group(g) = &tts[i] {
            macro_paths(g.stream(), out);
            i += 1;
            continue;
        }
        let line = tts[i].span().start().line;
        let mut segs = Vec::new();
        let mut j = i;
        let dollar = matches!(&tts[i], TokenTree::Punct(p) if p.as_char() == '$');
        if dollar && ident_at(&tts, i + 1).as_deref() == Some("crate") {
            segs.push("$crate".to_string());
            j += 2;
        } else if colons(&tts, i) && ident_at(&tts, i + 2).is_some() {
            segs.push("::".to_string());
            j += 2;
        }
        if segs.is_empty() {
            match ident_at(&tts, j) {
                Some(id) => {
                    segs.push(id);
                    j += 1;
                }
                None => {
                    i += 1;
                    continue;
                }
            }
        }
        while colons(&tts, j) {
            let Some(id) = ident_at(&tts, j + 2) else { break };
            segs.push(id);
            j += 3;
        }
        if segs.len() >= 2 {
            out.push((segs, line));
        }
        i = j.max(i + 1);
    }
}

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read src").map(|e| e.expect("a dir entry").path()) {
            if e.is_dir() {
                stack.push(e);
            } else if e.extension().is_some_and(|x| x == "rs") {
                out.push(e);
            }
        }
    }
    out.sort();
    out
}

fn name(m: &[String]) -> String {
    if m.is_empty() { "crate".into() } else { m.join("::") }
}

// ---------------------------------------------------------------------------------------------
// The module graph
// ---------------------------------------------------------------------------------------------

/// The module graph as text: each module with the modules it imports (and how many paths
/// name each), then the counts: modules, edges, and edges per pair of top-level modules.
fn graph_report(krate: &Crate) -> String {
    let imports = krate.imports();
    let mut edges: BTreeMap<&Mod, BTreeMap<&Mod, usize>> = BTreeMap::new();
    for i in &imports {
        *edges.entry(&i.from).or_default().entry(&i.to).or_default() += 1;
    }
    let nodes = krate.nodes();
    let mut out =
        String::from("# The module graph of src/: module -> modules it imports (paths naming each)\n");
    for n in &nodes {
        let tos = edges
            .get(n)
            .map(|t| t.iter().map(|(m, c)| format!("{} ({c})", name(m))).collect::<Vec<_>>().join(", "));
        out += &format!("{} -> {}\n", name(n), tos.unwrap_or_default());
    }
    let count: usize = edges.values().map(BTreeMap::len).sum();
    let mut pairs: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (from, tos) in &edges {
        for to in tos.keys() {
            *pairs.entry((name(&from[..1.min(from.len())]), name(&to[..1]))).or_default() += 1;
        }
    }
    out += &format!(
        "\n# Counts\nmodules: {}\nedges (module pairs): {count}\npaths naming another module: {}\n",
        nodes.len(),
        imports.len()
    );
    let mut below: BTreeMap<String, usize> = BTreeMap::new();
    for i in imports.iter().filter(|i| top(&i.from) == "cli" && !CLI_FREE.contains(&top(&i.to))) {
        let item = i.item.as_ref().map_or_else(|| name(&i.to), |item| format!("{}::{item}", name(&i.to)));
        *below.entry(item).or_default() += 1;
    }
    out += "\n# What cli names below ops, besides model, diagnostics and progress (paths naming it)\n";
    for (item, n) in &below {
        out += &format!("{item} ({n})\n");
    }
    out += "\n# Edges per layer pair (top-level module -> top-level module: module pairs)\n";
    for ((a, b), n) in &pairs {
        let kind = if a == b { "  (inside)" } else { "" };
        out += &format!("{a} -> {b}: {n}{kind}\n");
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The rules of book/src/architecture.md
// ---------------------------------------------------------------------------------------------

fn chapter() -> String {
    fs::read_to_string(root().join(DOC)).expect("the architecture chapter")
}

/// The lines of the first ```text block after `heading`.
fn block(doc: &str, heading: &str) -> Vec<String> {
    let after = doc.split(heading).nth(1).unwrap_or_else(|| panic!("{DOC}: no heading `{heading}`"));
    let block = after.split("```text\n").nth(1).and_then(|b| b.split("```").next());
    let block = block.unwrap_or_else(|| panic!("{DOC}: no ```text block after `{heading}`"));
    block.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

/// `module -> allowed, ...`: which top-level modules each one may import.
fn declared() -> BTreeMap<String, BTreeSet<String>> {
    let mut rules = BTreeMap::new();
    for line in block(&chapter(), "## Who may import whom") {
        let (module, allowed) =
            line.split_once("->").unwrap_or_else(|| panic!("{DOC}: `{line}` has no `->`"));
        let allowed = allowed.split(',').map(str::trim).filter(|m| !m.is_empty()).map(String::from).collect();
        rules.insert(module.trim().to_string(), allowed);
    }
    rules
}

/// The floors inside a directory module: `store 0: error` lines, and `store/records 0: …` for
/// a folder inside it that has floors of its own; `(cycle)` after the number marks a floor
/// whose entries import each other. An entry of a directory's floors is a file (`tree`), a
/// folder taken whole (`mcp`: its files count as one), or a folder with floors of its own,
/// listed twice: its files (`records/`) and its `mod.rs` (`records/mod`).
#[derive(Debug, Default)]
struct Floors {
    /// Directory (`store`, `store/records`) -> entry -> floor.
    floor: BTreeMap<String, BTreeMap<String, usize>>,
    /// (directory, floor) pairs declared a cycle.
    cycles: BTreeSet<(String, usize)>,
}

impl Floors {
    fn parse(lines: &[String]) -> Floors {
        let mut out = Floors::default();
        for line in lines {
            let (head, files) = line.split_once(':').unwrap_or_else(|| panic!("{DOC}: `{line}` has no `:`"));
            let mut words = head.split_whitespace();
            let (Some(dir), Some(n)) = (words.next(), words.next()) else { panic!("{DOC}: `{line}`") };
            let n: usize = n.parse().unwrap_or_else(|_| panic!("{DOC}: `{line}`: no floor number"));
            if words.next() == Some("(cycle)") {
                out.cycles.insert((dir.to_string(), n));
            }
            let map = out.floor.entry(dir.to_string()).or_default();
            for f in files.split(',').map(str::trim).filter(|f| !f.is_empty()) {
                assert!(map.insert(f.to_string(), n).is_none(), "{DOC}: {dir}: {f} is on two floors");
            }
        }
        out
    }

    /// The entry of the floors of `dir` that `node`, a module below `dir`, falls in.
    fn entry(&self, dir: &[String], node: &[String]) -> String {
        let name = &node[dir.len()];
        if !self.floor.contains_key(&format!("{}/{name}", dir.join("/"))) {
            name.clone()
        } else if node.len() == dir.len() + 1 {
            format!("{name}/mod")
        } else {
            format!("{name}/")
        }
    }

    /// Where an import from module `a` to module `b` is judged: the deepest directory with
    /// floors whose different entries they fall in, with those entries; `None` when no floors
    /// apply (another top-level module, a directory's own `mod.rs`, a folder taken whole).
    fn judge(&self, a: &[String], b: &[String]) -> Option<(String, String, String)> {
        let top = a.first().filter(|top| b.first() == Some(*top))?;
        let mut dir: Mod = vec![top.clone()];
        loop {
            if !self.floor.contains_key(&dir.join("/")) || a.len() <= dir.len() || b.len() <= dir.len() {
                return None;
            }
            let (ea, eb) = (self.entry(&dir, a), self.entry(&dir, b));
            if ea != eb {
                return Some((dir.join("/"), ea, eb));
            }
            if !ea.ends_with('/') {
                return None;
            }
            dir.push(a[dir.len()].clone());
        }
    }

    /// The imports that climb a floor, one line each.
    fn violations(&self, imports: &[Import]) -> Vec<String> {
        let mut broken = Vec::new();
        for i in imports {
            let Some((dir, a, b)) = self.judge(&i.from, &i.to) else { continue };
            let floor = &self.floor[&dir];
            let at = i.shown();
            match (floor.get(&a), floor.get(&b)) {
                (Some(fa), Some(fb)) if fb > fa => broken.push(format!(
                    "{at}: `{dir}/{a}` (floor {fa}) imports `{dir}/{b}` (floor {fb}): inside `{dir}/`, a file imports only its floor and the floors below ({DOC})"
                )),
                (None, _) => broken.push(format!("{at}: `{dir}/{a}` is on no floor of {DOC}")),
                (_, None) => broken.push(format!("{at}: `{dir}/{b}` is on no floor of {DOC}")),
                _ => {}
            }
        }
        broken
    }
}

fn floors() -> Floors {
    Floors::parse(&block(&chapter(), "## Floors inside ops and store"))
}

/// What `cli` may name of the layers below `ops` besides `model`, `diagnostics` and
/// `progress`: `module::path::Item` lines.
fn cli_allowed() -> BTreeSet<String> {
    block(&chapter(), "## What cli names below ops")
        .into_iter()
        .map(|l| l.split_whitespace().next().expect("a non-empty line").to_string())
        .collect()
}

/// The layers `cli` imports freely.
const CLI_FREE: [&str; 5] = ["cli", "ops", "model", "diagnostics", "progress"];

fn top(m: &[String]) -> &str {
    m.first().map_or("crate", String::as_str)
}

/// Every import that breaks a rule of the chapter, one line each.
fn violations(krate: &Crate) -> Vec<String> {
    let rules = declared();
    let floors = floors();
    let cli = cli_allowed();
    let mut broken = Vec::new();
    let imports = krate.imports();
    for i in &imports {
        let (from, to) = (top(&i.from), top(&i.to));
        let at = i.shown();
        if from == "main" {
            if to != "cli" {
                broken.push(format!(
                    "{at}: the binary (src/main.rs) names `{}`; it may call only `cli`",
                    name(&i.to)
                ));
            }
            continue;
        }
        if from != to {
            match rules.get(from) {
                None => broken.push(format!("{at}: module `{from}` is not in the table of {DOC}")),
                Some(allowed) if !allowed.contains(to) => broken.push(format!(
                    "{at}: `{from}` imports `{}`, but {DOC} allows `{from}` only: {}",
                    name(&i.to),
                    allowed.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                Some(_) => {}
            }
        }
        if from == "cli" && !CLI_FREE.contains(&to) {
            let item = match &i.item {
                Some(item) => format!("{}::{item}", name(&i.to)),
                None => name(&i.to),
            };
            // A module named whole (`use crate::store::diff;`) is fine when an item of it is
            // listed: what is named through it is checked item by item.
            let listed = cli.contains(&item)
                || (i.item.is_none() && cli.iter().any(|c| c.starts_with(&format!("{item}::"))));
            if !listed {
                broken.push(format!(
                    "{at}: `cli` names `{item}`; it reaches the layers below ops only through ops (and the items {DOC} lists under \"What cli names below ops\")"
                ));
            }
        }
    }
    broken.extend(floors.violations(&imports));
    broken
}

/// The cycles among the entries of `dir`'s floors (strongly connected sets of more than one
/// entry), each sorted; the directory's `mod.rs` aside.
fn cycles(krate: &Crate, floors: &Floors, dir: &str) -> Vec<Vec<String>> {
    let d: Mod = dir.split('/').map(String::from).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for n in krate.nodes().into_iter().filter(|n| n.len() > d.len() && n.starts_with(&d)) {
        edges.entry(floors.entry(&d, &n)).or_default();
    }
    for i in krate.imports() {
        if let Some((at, a, b)) = floors.judge(&i.from, &i.to)
            && at == dir
        {
            edges.entry(a).or_default().insert(b);
        }
    }
    // Two files are in one cycle when each reaches the other.
    let reach = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for m in edges.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = edges.keys().map(|k| (k, reach(k))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for (k, r) in &reached {
        let cycle: Vec<String> =
            r.iter().filter(|m| reached.get(m).is_some_and(|back| back.contains(*k))).cloned().collect();
        if cycle.len() > 1 && !out.contains(&cycle) {
            out.push(cycle);
        }
    }
    out
}

#[test]
fn every_import_follows_the_declared_layers() {
    let broken = violations(&Crate::read(&root().join("src")));
    assert!(broken.is_empty(), "imports that break the layering:\n{}", broken.join("\n"));
}

#[test]
fn the_declared_layers_cover_every_module_and_have_no_cycle() {
    let krate = Crate::read(&root().join("src"));
    let rules = declared();
    let modules: BTreeSet<String> = krate.scopes[&Vec::<String>::new()].children.iter().cloned().collect();
    let table: BTreeSet<String> = rules.keys().cloned().collect();
    assert_eq!(table, modules, "{DOC} lists exactly the crate's top-level modules");
    for (module, allowed) in &rules {
        for m in allowed {
            assert!(rules.contains_key(m), "{DOC}: `{module}` may import `{m}`, which is no module");
        }
    }
    // Repeatedly remove modules all of whose allowed imports are removed; what stays is a cycle.
    let mut left: BTreeMap<&String, &BTreeSet<String>> = rules.iter().collect();
    while let Some(next) =
        left.iter().find(|(_, deps)| deps.iter().all(|d| !left.contains_key(d))).map(|(m, _)| *m)
    {
        left.remove(next);
    }
    assert!(left.is_empty(), "{DOC} declares a cycle among: {:?}", left.keys().collect::<Vec<_>>());

    // The floors list every file of ops/ and store/ (and of a folder with floors of its own)
    // once, and a cycle only where declared.
    let floors = floors();
    for (dir, floor) in &floors.floor {
        let d: Mod = dir.split('/').map(String::from).collect();
        if let Some((parent, name)) = dir.rsplit_once('/') {
            let listed = floors.floor.get(parent).is_some_and(|p| p.contains_key(&format!("{name}/")));
            assert!(listed, "{DOC}: {dir} has floors, but {parent}'s floors do not list `{name}/`");
        }
        let entries: BTreeSet<String> = krate
            .nodes()
            .into_iter()
            .filter(|n| n.len() > d.len() && n.starts_with(&d))
            .map(|n| floors.entry(&d, &n))
            .collect();
        let listed: BTreeSet<String> = floor.keys().cloned().collect();
        assert_eq!(listed, entries, "{DOC}: the floors of {dir}/ list exactly its files");
        for cycle in cycles(&krate, &floors, dir) {
            let on: BTreeSet<usize> = cycle.iter().map(|f| floor[f]).collect();
            let declared = on.len() == 1 && floors.cycles.contains(&(dir.clone(), *on.first().expect("one")));
            assert!(
                declared,
                "{dir}/ has a cycle, {}, that {DOC} does not declare: put it on one floor marked (cycle), or break it",
                cycle.join(" <-> ")
            );
        }
    }
    for (dir, n) in &floors.cycles {
        let floor = &floors.floor[dir];
        let members: BTreeSet<&String> = floor.iter().filter(|(_, f)| *f == n).map(|(m, _)| m).collect();
        let real =
            cycles(&krate, &floors, dir).into_iter().any(|c| c.iter().collect::<BTreeSet<_>>() == members);
        assert!(
            real,
            "{DOC}: {dir} floor {n} is declared a cycle, but its files do not form one: drop `(cycle)`"
        );
    }
}

/// The floors hold inside folders with floors of their own, on a small Store of two folders:
/// a file of the lower folder naming one of the higher, a file naming its folder's `mod.rs`
/// (which sits above both folders) and a file naming a higher floor of its own folder are
/// reported; the other way round, and a `mod.rs` naming the other folder's, are not.
#[test]
fn floors_hold_inside_nested_folders() {
    let files = [
        ("lib.rs", "pub mod store;\n"),
        ("store/mod.rs", "pub mod error;\npub mod high;\npub mod low;\npub struct Store;\n"),
        ("store/error.rs", "pub struct Error;\n"),
        ("store/low/mod.rs", "pub(in crate::store) mod a;\nmod b;\npub use a::A;\n"),
        ("store/low/a.rs", "use crate::store::Store;\nuse crate::store::error::Error;\npub struct A;\n"),
        ("store/low/b.rs", "use super::a::A;\nuse crate::store::high::c::C;\nuse super::A as Again;\n"),
        ("store/high/mod.rs", "pub(in crate::store) mod c;\nmod d;\nuse super::low::A;\n"),
        ("store/high/c.rs", "use crate::store::low::a::A;\npub struct C;\n"),
        ("store/high/d.rs", "use super::c::C;\n"),
    ];
    let lines = [
        "store 0: error",
        "store 1: low/",
        "store 2: high/",
        "store 3: high/mod, low/mod",
        "store/low 0: a",
        "store/low 1: b",
        "store/high 0: d",
        "store/high 1: c",
    ];
    let broken = Floors::parse(&lines.map(String::from)).violations(&Crate::parse(files).imports());
    let at: Vec<&str> = broken.iter().map(|b| b.split(": ").next().expect("a location")).collect();
    assert_eq!(at, ["src/store/high/d.rs:1", "src/store/low/b.rs:2", "src/store/low/b.rs:3"], "{broken:#?}");
    assert!(broken[1].contains("`store/low/` (floor 1) imports `store/high/` (floor 2)"), "{broken:#?}");
    assert!(broken[2].contains("imports `store/low/mod` (floor 3)"), "{broken:#?}");
}

#[test]
fn only_the_store_defines_what_the_store_does() {
    let krate = Crate::read(&root().join("src"));
    let mut found = Vec::new();
    for (at, scope) in &krate.scopes {
        if scope.node.first().is_some_and(|m| m == "store") {
            continue;
        }
        for (segs, line) in &scope.impls {
            let target = krate.resolve(at, segs).unwrap_or_else(|| segs.clone());
            if target == ["store", "Store"]
                || target == ["store", "Writer"]
                || target == ["store", "mutex", "Writer"]
            {
                found.push(format!("src/{}:{line}: impl {}", scope.file, segs.join("::")));
            }
        }
    }
    assert!(found.is_empty(), "impl blocks of the Store outside src/store/:\n{}", found.join("\n"));
}

/// Prints the module graph (`-- --nocapture`), or writes it to the file
/// `MEMORIX_MODULE_GRAPH` names.
#[test]
fn the_module_graph() {
    let report = graph_report(&Crate::read(&root().join("src")));
    match std::env::var_os("MEMORIX_MODULE_GRAPH") {
        Some(file) => fs::write(&file, report).expect("write the module graph"),
        None => println!("{report}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Citations of the book
// ---------------------------------------------------------------------------------------------

/// The anchors of a Markdown page's headings, as mdBook makes them: the heading's text
/// lowercased, whitespace as `-`, everything but letters, digits, `_` and `-` dropped, and a
/// repeated anchor numbered (`-1`, `-2`). Headings inside fenced blocks do not count.
fn anchors(page: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) else { continue };
        let text = heading.trim_start_matches('#').trim();
        let base: String = text
            .chars()
            .filter_map(|c| match c {
                c if c.is_alphanumeric() || c == '_' || c == '-' => Some(c.to_ascii_lowercase()),
                c if c.is_whitespace() => Some('-'),
                _ => None,
            })
            .collect();
        let mut id = base.clone();
        let mut n = 0;
        while !out.insert(id.clone()) {
            n += 1;
            id = format!("{base}-{n}");
        }
    }
    out
}

/// What is wrong with a reference to `target` (`page.md` or `page.md#anchor`, relative to
/// `dir` inside the book), or `None` when the page and the heading exist.
fn broken(book: &Path, dir: &Path, target: &str) -> Option<String> {
    let (page, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let mut path = book.join(dir);
    for part in page.split('/') {
        match part {
            ".." => {
                path.pop();
            }
            "." | "" => {}
            p => path.push(p),
        }
    }
    let Ok(text) = fs::read_to_string(&path) else {
        return Some(format!("no chapter {}", path.strip_prefix(book).unwrap_or(&path).display()));
    };
    match anchor {
        Some(a) if !anchors(&text).contains(a) => Some(format!(
            "{page} has no heading `#{a}` (its anchors: {})",
            anchors(&text).into_iter().collect::<Vec<_>>().join(", ")
        )),
        _ => None,
    }
}

/// Every `book: PAGE.md[#anchor]` citation in `text`, with its line; a `book:` that is not
/// followed by a page on the same line is returned as it is, to be reported.
fn citations(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("book:") {
            let rest = line[at + "book:".len()..].trim_start();
            let target: String =
                rest.chars().take_while(|c| c.is_alphanumeric() || "_-./#".contains(*c)).collect();
            let target = target.trim_end_matches('.').to_string();
            out.push((n + 1, target));
        }
    }
    out
}

/// The files whose comments may cite the book: the crate, its tests, fuzz targets, benches,
/// examples and scripts.
fn citing_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["src", "tests", "fuzz/fuzz_targets", "benches", "examples", "scripts"] {
        let dir = root().join(dir);
        if !dir.is_dir() {
            continue;
        }
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in fs::read_dir(&d).expect("read a source dir").map(|e| e.expect("a dir entry").path()) {
                if e.is_dir() {
                    stack.push(e);
                } else if e.extension().is_some_and(|x| x == "rs" || x == "sh") {
                    files.push(e);
                }
            }
        }
    }
    files.push(root().join("build.rs"));
    files.sort();
    files
}

#[test]
fn source_comments_cite_book_chapters_that_exist() {
    let book = root().join("book/src");
    let mut bad = Vec::new();
    let mut cited = 0;
    for file in citing_files() {
        let text = fs::read_to_string(&file).expect("a source file");
        let rel = file.strip_prefix(root()).expect("in the repository").display().to_string();
        // This file names DESIGN.md and `book:` to look for them.
        if rel == "tests/it/architecture.rs" {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if line.contains("DESIGN.md") {
                bad.push(format!("{rel}:{}: cites DESIGN.md, which is not in the repository: cite the book's design part instead (book: design/…md#heading)", n + 1));
            }
        }
        for (line, target) in citations(&text) {
            cited += 1;
            if !target.contains(".md") {
                bad.push(format!(
                    "{rel}:{line}: `book:` names no page (write `book: design/lock.md#heading` on one line)"
                ));
            } else if let Some(why) = broken(&book, Path::new(""), &target) {
                bad.push(format!("{rel}:{line}: book: {target}: {why}"));
            }
        }
    }
    assert!(bad.is_empty(), "citations of the book that lead nowhere:\n{}", bad.join("\n"));
    assert!(cited >= 30, "the sources cite the design part ({cited} citations found)");
}

#[test]
fn every_book_page_is_in_the_summary_and_every_link_resolves() {
    let book = root().join("book/src");
    let summary = fs::read_to_string(book.join("SUMMARY.md")).expect("SUMMARY.md");
    let links = |text: &str| -> Vec<String> {
        text.split("](").skip(1).filter_map(|s| s.split(')').next()).map(String::from).collect()
    };
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let mut pages = Vec::new();
    let mut stack = vec![book.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).expect("read book/src").map(|e| e.expect("a dir entry").path()) {
            if e.is_dir() {
                stack.push(e);
            } else if e.extension().is_some_and(|x| x == "md") {
                pages.push(e);
            }
        }
    }
    pages.sort();
    let mut bad = Vec::new();
    for page in &pages {
        let rel = page.strip_prefix(&book).expect("in the book");
        if rel != Path::new("SUMMARY.md") && !listed.contains(&rel.display().to_string()) {
            bad.push(format!("book/src/{}: not in SUMMARY.md", rel.display()));
        }
        let text = fs::read_to_string(page).expect("a page");
        let dir = rel.parent().unwrap_or(Path::new(""));
        for target in links(&text) {
            let local = !target.contains("://") && !target.starts_with('#') && target.contains(".md");
            if let Some(why) = local.then(|| broken(&book, dir, &target)).flatten() {
                bad.push(format!("book/src/{}: link ({target}): {why}", rel.display()));
            }
        }
    }
    assert!(bad.is_empty(), "the book's pages and links:\n{}", bad.join("\n"));
}

/// The five forms a reader of text misses, on a small crate: a `use` group over several lines,
/// `use super::super::{…}` over several lines, `use crate as root;` then `root::…`, a path in
/// a macro's tokens, and a path after a raw byte string on the same line; and what must not
/// count: the same paths inside string literals and comments.
#[test]
fn the_reader_resolves_paths_as_the_compiler_does() {
    let files = [
        ("lib.rs", "pub mod cli;\npub mod ops;\npub mod store;\n"),
        ("ops/mod.rs", "pub mod build;\n"),
        ("ops/build.rs", "pub fn run() {}\n"),
        ("store/mod.rs", "pub mod tree;\npub struct Store;\n"),
        ("store/tree.rs", "pub struct Tree;\n"),
        ("cli/mod.rs", "pub mod deep;\npub mod render;\n"),
        (
            "cli/render.rs",
            concat!(
                "use crate::{\n    ops::build,\n    store::tree,\n};\n",
                "// crate::store::Store in a comment\n",
                "const S: &str = \"crate::store::Store\";\n",
                "const B: &[u8] = br#\"a \" crate::ops \"#; fn f() { let _ = crate::store::Store; }\n",
                "fn g() { let _ = format!(\"{:?} crate::ops\", crate::store::tree::Tree); }\n",
            ),
        ),
        ("cli/deep/mod.rs", "pub mod inner;\n"),
        (
            "cli/deep/inner.rs",
            concat!(
                "use super::super::{\n    super::ops::build,\n    render,\n};\n",
                "use crate as root;\n",
                "fn h() { root::ops::build::run(); }\n",
                "mod tests {\n    use super::*;\n    fn t() { root::store::Store; }\n}\n",
            ),
        ),
    ];
    let krate = Crate::parse(files);
    let found: BTreeSet<(String, String, String)> =
        krate.imports().into_iter().map(|i| (i.at, name(&i.to), i.written)).collect();
    let want = [
        ("src/cli/render.rs:2", "ops::build", "crate::ops::build"),
        ("src/cli/render.rs:3", "store::tree", "crate::store::tree"),
        ("src/cli/render.rs:7", "store", "crate::store::Store"),
        ("src/cli/render.rs:8", "store::tree", "crate::store::tree::Tree"),
        ("src/cli/deep/inner.rs:2", "ops::build", "super::super::super::ops::build"),
        ("src/cli/deep/inner.rs:6", "ops::build", "root::ops::build::run"),
        ("src/cli/deep/inner.rs:9", "store", "root::store::Store"),
    ];
    for (at, to, written) in want {
        assert!(
            found.contains(&(at.to_string(), to.to_string(), written.to_string())),
            "{at}: `{written}` -> {to} not found in {found:#?}"
        );
    }
    let lines: BTreeSet<&str> = found.iter().map(|(at, _, _)| at.as_str()).collect();
    assert!(!lines.contains("src/cli/render.rs:5") && !lines.contains("src/cli/render.rs:6"), "{found:#?}");
    assert_eq!(found.iter().filter(|(at, _, _)| at == "src/cli/render.rs:7").count(), 1, "{found:#?}");
    assert_eq!(found.iter().filter(|(at, _, _)| at == "src/cli/render.rs:8").count(), 1, "{found:#?}");
    assert_eq!(module_of("store/mod.rs"), ["store"]);
    assert_eq!(module_of("store/tree.rs"), ["store", "tree"]);
    assert_eq!(module_of("lib.rs"), Vec::<String>::new());
}
