//! A crate's public API, parsed with `syn`: the modules `src/lib.rs` declares (`mod x;`
//! followed to `x.rs` or `x/mod.rs`, `#[cfg(test)]` ones skipped), their `pub` items and the
//! `pub` methods of inherent impls. An item of a private module counts where a public module
//! re-exports it (`pub use`), listed under the shortest such path; another crate's item a
//! public module re-exports is listed as a re-export with its path.

use std::collections::BTreeMap;

use syn::{Attribute, ImplItem, Item as SynItem, UseTree, Visibility};

use super::{Files, Item, first_line, signature_line};

/// One public-looking definition where it was written.
struct Def {
    module: Vec<String>,
    name: String,
    /// For a method: its type's name.
    owner: Option<String>,
    kind: &'static str,
    signature: String,
    doc: String,
}

/// A `pub use` in `module`: `source` (absolute, from the crate root) seen there as `name`; a
/// glob has no name. `written` is its path as written, which says whether it names another
/// crate's item.
struct Reexport {
    module: Vec<String>,
    source: Vec<String>,
    name: Option<String>,
    written: Vec<String>,
    doc: String,
}

#[derive(Default)]
struct Crate {
    defs: Vec<Def>,
    reexports: Vec<Reexport>,
    /// Every module with whether it is reachable by a chain of `pub mod`.
    public: BTreeMap<Vec<String>, bool>,
}

/// The crate's public items.
pub fn items(files: &Files) -> Vec<Item> {
    let Some(root) = files.get("src/lib.rs") else { return Vec::new() };
    let name = crate_name(files).unwrap_or_else(|| "crate".into());
    let mut krate = Crate::default();
    krate.file(files, root, Vec::new(), true, "src");
    krate.listed(&name)
}

/// `[package] name` of Cargo.toml, as Rust paths write it.
fn crate_name(files: &Files) -> Option<String> {
    let text = std::str::from_utf8(files.get("Cargo.toml")?).ok()?;
    let value: toml::Table = toml::from_str(text).ok()?;
    Some(value.get("package")?.get("name")?.as_str()?.replace('-', "_"))
}

impl Crate {
    fn file(&mut self, files: &Files, bytes: &[u8], module: Vec<String>, public: bool, dir: &str) {
        let Some(parsed) = std::str::from_utf8(bytes).ok().and_then(|t| syn::parse_file(t).ok()) else {
            return;
        };
        self.items(files, &parsed.items, module, public, dir);
    }

    /// The items of one module; `dir` is where its `mod x;` files are.
    fn items(&mut self, files: &Files, items: &[SynItem], module: Vec<String>, public: bool, dir: &str) {
        self.public.insert(module.clone(), public);
        for item in items {
            match item {
                SynItem::Mod(m) if !skipped(&m.attrs) => {
                    let mut child = module.clone();
                    child.push(m.ident.to_string());
                    let sub = format!("{dir}/{}", m.ident);
                    let vis = public && is_pub(&m.vis);
                    match &m.content {
                        Some((_, inner)) => self.items(files, inner, child, vis, &sub),
                        None => {
                            let found = [format!("{sub}.rs"), format!("{sub}/mod.rs")]
                                .into_iter()
                                .find_map(|p| files.get(p.as_str()).copied());
                            if let Some(bytes) = found {
                                self.file(files, bytes, child, vis, &sub);
                            }
                        }
                    }
                }
                SynItem::Use(u) if is_pub(&u.vis) && !skipped(&u.attrs) => {
                    let mut out = Vec::new();
                    flatten(&u.tree, Vec::new(), &mut out);
                    for (path, name) in out {
                        if let Some(source) = absolute(&module, &path) {
                            let (module, doc) = (module.clone(), doc(&u.attrs));
                            self.reexports.push(Reexport { module, source, name, written: path, doc });
                        }
                    }
                }
                SynItem::Impl(i) if i.trait_.is_none() && !skipped(&i.attrs) => self.methods(&module, i),
                other => {
                    if let Some(def) = def(&module, other) {
                        self.defs.push(def);
                    }
                }
            }
        }
    }

    /// The `pub` functions and constants of an inherent impl.
    fn methods(&mut self, module: &[String], imp: &syn::ItemImpl) {
        let syn::Type::Path(ty) = &*imp.self_ty else { return };
        let Some(owner) = ty.path.segments.last().map(|s| s.ident.to_string()) else { return };
        for item in &imp.items {
            let (name, kind, signature, attrs) = match item {
                ImplItem::Fn(f) if is_pub(&f.vis) => {
                    let sig = unparse_fn(&f.vis, &f.sig);
                    (f.sig.ident.to_string(), "method", sig, &f.attrs)
                }
                ImplItem::Const(c) if is_pub(&c.vis) => {
                    let sig = format!("pub const {}: {}", c.ident, type_text(&c.ty));
                    (c.ident.to_string(), "const", sig, &c.attrs)
                }
                _ => continue,
            };
            if skipped(attrs) {
                continue;
            }
            self.defs.push(Def {
                module: module.to_vec(),
                name,
                owner: Some(owner.clone()),
                kind,
                signature,
                doc: doc(attrs),
            });
        }
    }

    /// Every definition at the shortest public path it is reached by.
    fn listed(&self, krate: &str) -> Vec<Item> {
        let mut out = Vec::new();
        for d in &self.defs {
            let target = d.owner.as_ref().unwrap_or(&d.name);
            let Some((module, name)) = self.reached(&d.module, target, 0) else { continue };
            let name = match &d.owner {
                Some(_) => format!("{name}::{}", d.name),
                None => name,
            };
            let module = std::iter::once(krate.to_string()).chain(module).collect::<Vec<_>>().join("::");
            out.push(Item {
                module,
                name,
                kind: d.kind.into(),
                signature: d.signature.clone(),
                doc: d.doc.clone(),
            });
        }
        out.extend(self.foreign(krate));
        out
    }

    /// The items of other crates a public module re-exports (`pub use bytes::Bytes;`), which
    /// this crate cannot outline: each listed as a re-export with its path.
    fn foreign(&self, krate: &str) -> Vec<Item> {
        let mut out = Vec::new();
        for r in self.reexports.iter().filter(|r| self.is_foreign(r)) {
            let path = r.written.join("::");
            let (name, signature) = match &r.name {
                Some(n) if r.written.last() == Some(n) => (n.clone(), format!("pub use {path}")),
                Some(n) => (n.clone(), format!("pub use {path} as {n}")),
                None => (format!("{path}::*"), format!("pub use {path}::*")),
            };
            let Some((module, name)) = self.reached(&r.module, &name, 0) else { continue };
            let module = std::iter::once(krate.to_string()).chain(module).collect::<Vec<_>>().join("::");
            out.push(Item { module, name, kind: "re-export".into(), signature, doc: r.doc.clone() });
        }
        out
    }

    /// Whether a `pub use` names another crate: its path starts neither from `crate`, `self`
    /// or `super` nor with a module of this crate beside it.
    fn is_foreign(&self, r: &Reexport) -> bool {
        match r.written.first().map(String::as_str) {
            None | Some("crate" | "self" | "super") => false,
            Some(first) => !self.public.contains_key(&[r.module.as_slice(), &[first.to_string()]].concat()),
        }
    }

    /// The shortest public (module, name) that `name` defined in `module` is reached by:
    /// where it is, if that module is public, or where a `pub use` re-exports it.
    fn reached(&self, module: &[String], name: &str, depth: usize) -> Option<(Vec<String>, String)> {
        let mut found: Vec<(Vec<String>, String)> = Vec::new();
        if self.public.get(module).copied().unwrap_or(false) {
            found.push((module.to_vec(), name.to_string()));
        }
        if depth < 4 {
            for r in &self.reexports {
                let hit = match &r.name {
                    Some(alias) => r
                        .source
                        .split_last()
                        .is_some_and(|(last, m)| last == name && m == module)
                        .then(|| alias.clone()),
                    None => (r.source == module).then(|| name.to_string()),
                };
                if let Some(alias) = hit
                    && let Some(at) = self.reached(&r.module, &alias, depth + 1)
                {
                    found.push(at);
                }
            }
        }
        found.into_iter().min_by(|a, b| a.0.len().cmp(&b.0.len()).then_with(|| a.cmp(b)))
    }
}

/// A module-level item as an outline entry, when it is `pub` and not a test.
fn def(module: &[String], item: &SynItem) -> Option<Def> {
    let (name, kind, attrs, signature) = match item {
        SynItem::Fn(f) if is_pub(&f.vis) => {
            (f.sig.ident.to_string(), "fn", &f.attrs, unparse_fn(&f.vis, &f.sig))
        }
        SynItem::Struct(s) if is_pub(&s.vis) => {
            let mut bare = s.clone();
            bare.attrs.clear();
            bare.fields = syn::Fields::Unit;
            bare.semi_token = Some(Default::default());
            (s.ident.to_string(), "struct", &s.attrs, unparse(SynItem::Struct(bare)))
        }
        SynItem::Enum(e) if is_pub(&e.vis) => {
            let mut bare = e.clone();
            bare.attrs.clear();
            bare.variants.clear();
            (e.ident.to_string(), "enum", &e.attrs, unparse(SynItem::Enum(bare)))
        }
        SynItem::Trait(t) if is_pub(&t.vis) => {
            let mut bare = t.clone();
            bare.attrs.clear();
            bare.items.clear();
            (t.ident.to_string(), "trait", &t.attrs, unparse(SynItem::Trait(bare)))
        }
        SynItem::Type(t) if is_pub(&t.vis) => {
            let mut bare = t.clone();
            bare.attrs.clear();
            (t.ident.to_string(), "type", &t.attrs, unparse(SynItem::Type(bare)))
        }
        SynItem::Const(c) if is_pub(&c.vis) => {
            (c.ident.to_string(), "const", &c.attrs, format!("pub const {}: {}", c.ident, type_text(&c.ty)))
        }
        SynItem::Static(s) if is_pub(&s.vis) => {
            (s.ident.to_string(), "static", &s.attrs, format!("pub static {}: {}", s.ident, type_text(&s.ty)))
        }
        SynItem::Macro(m) if m.attrs.iter().any(|a| a.path().is_ident("macro_export")) => {
            let name = m.ident.as_ref()?.to_string();
            let sig = format!("macro_rules! {name}");
            (name, "macro", &m.attrs, sig)
        }
        _ => return None,
    };
    if skipped(attrs) {
        return None;
    }
    // An exported macro is at the crate root, wherever it is written.
    let module = if kind == "macro" { Vec::new() } else { module.to_vec() };
    Some(Def { module, name, owner: None, kind, signature, doc: doc(attrs) })
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// `#[cfg(test)]` (or any `cfg` naming `test`) and `#[doc(hidden)]` items are not API.
fn skipped(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        let words = || {
            let tokens = a.meta.require_list().map(|l| l.tokens.clone()).unwrap_or_default();
            tokens.into_iter().flat_map(idents).collect::<Vec<String>>()
        };
        (a.path().is_ident("cfg") && words().iter().any(|w| w == "test"))
            || (a.path().is_ident("doc") && words().iter().any(|w| w == "hidden"))
    })
}

/// The identifiers of a token tree, nested groups included.
fn idents(tree: proc_macro2::TokenTree) -> Vec<String> {
    match tree {
        proc_macro2::TokenTree::Ident(i) => vec![i.to_string()],
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().flat_map(idents).collect(),
        _ => Vec::new(),
    }
}

/// The first line of the `///` comments.
fn doc(attrs: &[Attribute]) -> String {
    let text: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    first_line(&text.join("\n"))
}

/// Each path a use tree names, with its name there (`None` for a glob).
fn flatten(tree: &UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let with = |s: String| {
        let mut p = prefix.clone();
        p.push(s);
        p
    };
    match tree {
        UseTree::Path(p) => flatten(&p.tree, with(p.ident.to_string()), out),
        UseTree::Name(n) => out.push((with(n.ident.to_string()), Some(n.ident.to_string()))),
        UseTree::Rename(r) => out.push((with(r.ident.to_string()), Some(r.rename.to_string()))),
        UseTree::Glob(_) => out.push((prefix, None)),
        UseTree::Group(g) => g.items.iter().for_each(|t| flatten(t, prefix.clone(), out)),
    }
}

/// A use path from `module` as a path from the crate root (`crate::`, `self::`, `super::`, or
/// a child module); `None` when it climbs above the root.
fn absolute(module: &[String], path: &[String]) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    let mut base = match first.as_str() {
        "crate" => return Some(rest.to_vec()),
        "self" => return Some([module, rest].concat()),
        "super" => module.split_last()?.1.to_vec(),
        _ => return Some([module, path].concat()),
    };
    let mut rest = rest;
    while let Some(("super", more)) = rest.split_first().map(|(f, m)| (f.as_str(), m)) {
        base.pop()?;
        rest = more;
    }
    Some([base.as_slice(), rest].concat())
}

/// A function's signature as a function with an empty body (a method's included).
fn unparse_fn(vis: &Visibility, sig: &syn::Signature) -> String {
    syn::parse2::<syn::ItemFn>(quote::quote!(#vis #sig {}))
        .map(|f| unparse(SynItem::Fn(f)))
        .unwrap_or_default()
}

/// A type as rustfmt writes it, through a type alias.
fn type_text(ty: &syn::Type) -> String {
    let alias = syn::parse2::<syn::ItemType>(quote::quote!(type T = #ty;));
    alias.map(|a| unparse(SynItem::Type(a)).trim_start_matches("type T = ").to_string()).unwrap_or_default()
}

/// One item as rustfmt would write it, on one line, without its (emptied) body.
fn unparse(item: SynItem) -> String {
    let file = syn::File { shebang: None, frontmatter: None, attrs: Vec::new(), items: vec![item] };
    let text = signature_line(&prettyplease::unparse(&file));
    let text = text.replace("< ", "<").replace(", >", ">");
    let text = text.trim_end_matches(';').trim_end_matches("{}").trim_end_matches("{ }");
    text.trim_end().to_string()
}
