//! An npm package's public API, parsed with tree-sitter-typescript: the exports of its `.d.ts`
//! declarations, or, for a package without them, of the entry files `package.json` names
//! (ES `export`s and CommonJS `module.exports` / `exports.x`). The entry module is the
//! package's name; another file is `name/path`.

use std::collections::BTreeMap;

use tree_sitter::{Node, Parser};

use super::{Files, Item, first_line, one_line, signature_line};

/// A declaration at the top of a file.
struct Decl {
    kind: &'static str,
    signature: String,
    doc: String,
    members: Vec<(String, &'static str, String, String)>,
}

/// The package's public items.
pub fn items(files: &Files) -> Vec<Item> {
    let manifest =
        files.get("package.json").and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok());
    let manifest = manifest.unwrap_or_default();
    let name = manifest["name"].as_str().unwrap_or("package").to_string();
    let entries = entries(&manifest);
    let declared: Vec<&str> = files.keys().copied().filter(|p| p.ends_with(".d.ts")).collect();
    let sources: Vec<&str> = match declared.is_empty() {
        false => declared,
        true => files.keys().copied().filter(|p| entries.iter().any(|e| e == p)).collect(),
    };
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for path in sources {
        let src = files[path];
        let Some(tree) = parser.parse(src, None) else { continue };
        let module = module_name(&name, path, &entries);
        exports(tree.root_node(), src, &module, &mut out);
    }
    out
}

/// The files `main`, `module`, `types`, `typings` and `exports` name, as archive paths, or
/// `index.js` (npm's default entry).
fn entries(manifest: &serde_json::Value) -> Vec<String> {
    let mut named = Vec::new();
    let mut stack: Vec<&serde_json::Value> =
        ["main", "module", "types", "typings", "exports"].iter().map(|k| &manifest[*k]).collect();
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => stack.extend(m.values()),
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            serde_json::Value::String(s) => named.push(s.trim_start_matches("./").to_string()),
            _ => {}
        }
    }
    if named.is_empty() {
        named.push("index.js".into());
    }
    let mut out = Vec::new();
    for p in named {
        if !p.ends_with(".js") && !p.ends_with(".ts") && !p.ends_with(".mjs") && !p.ends_with(".cjs") {
            out.push(format!("{p}.js"));
            out.push(format!("{p}.d.ts"));
            out.push(format!("{p}/index.js"));
        }
        out.push(p);
    }
    out
}

/// `name` for an entry file or an `index`, else `name/path` without its extension.
fn module_name(name: &str, path: &str, entries: &[String]) -> String {
    let stem = [".d.ts", ".d.mts", ".d.cts", ".js", ".mjs", ".cjs"]
        .iter()
        .find_map(|e| path.strip_suffix(e))
        .unwrap_or(path);
    let entry = entries.iter().any(|e| e == path || e == stem || e.strip_suffix(".js") == Some(stem));
    match stem.strip_suffix("index").map(|s| s.trim_end_matches('/')) {
        _ if entry => name.to_string(),
        Some("") => name.to_string(),
        Some(dir) => format!("{name}/{dir}"),
        None => format!("{name}/{stem}"),
    }
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or_default()
}

/// The exports of one file's top level.
fn exports(root: Node, src: &[u8], module: &str, out: &mut Vec<Item>) {
    let mut cursor = root.walk();
    let top: Vec<Node> = root.named_children(&mut cursor).collect();
    let mut locals: BTreeMap<String, Decl> = BTreeMap::new();
    for node in &top {
        for (name, decl) in declarations(*node, src) {
            locals.insert(name, decl);
        }
    }
    let mut push = |name: String, decl: &Decl| {
        out.push(Item {
            module: module.to_string(),
            name: name.clone(),
            kind: decl.kind.into(),
            signature: decl.signature.clone(),
            doc: decl.doc.clone(),
        });
        for (member, kind, signature, doc) in &decl.members {
            let (name, kind, signature, doc) =
                (format!("{name}.{member}"), (*kind).into(), signature.clone(), doc.clone());
            out.push(Item { module: module.to_string(), name, kind, signature, doc });
        }
    };
    for node in top {
        for (name, decl) in exported(node, src, &locals) {
            push(name, &decl);
        }
    }
}

/// What one top-level statement exports: `export …`, `export default …`, `export = x`,
/// `module.exports = …`, `exports.x = …`.
fn exported(node: Node, src: &[u8], locals: &BTreeMap<String, Decl>) -> Vec<(String, Decl)> {
    let doc = doc_before(node, src);
    let local = |name: &str| {
        locals.get(name).map(|d| Decl {
            kind: d.kind,
            signature: d.signature.clone(),
            doc: d.doc.clone(),
            members: d.members.clone(),
        })
    };
    match node.kind() {
        "export_statement" => {
            let default = (0..node.child_count())
                .filter_map(|i| node.child(i as u32))
                .any(|c| matches!(c.kind(), "default" | "="));
            if let Some(decl) = node.child_by_field_name("declaration") {
                let mut found = declarations(decl, src);
                if default {
                    found.iter_mut().for_each(|(n, _)| *n = "default".into());
                }
                return found
                    .into_iter()
                    .map(|(n, mut d)| {
                        if d.doc.is_empty() {
                            d.doc = doc.clone();
                        }
                        (n, d)
                    })
                    .collect();
            }
            if let Some(value) = node
                .child_by_field_name("value")
                .or_else(|| default.then(|| node.named_children(&mut node.walk()).last()).flatten())
            {
                return value_decl(value, src, doc, &local)
                    .map(|d| ("default".to_string(), d))
                    .into_iter()
                    .collect();
            }
            let mut cursor = node.walk();
            let clause = node.named_children(&mut cursor).find(|c| c.kind() == "export_clause");
            let source = node.child_by_field_name("source").map(|s| text(s, src).to_string());
            let Some(clause) = clause else { return Vec::new() };
            let mut c2 = clause.walk();
            clause
                .named_children(&mut c2)
                .filter_map(|spec| {
                    let name = text(spec.child_by_field_name("name")?, src).to_string();
                    let alias =
                        spec.child_by_field_name("alias").map_or(name.clone(), |a| text(a, src).to_string());
                    let decl = match &source {
                        Some(from) => Decl {
                            kind: "re-export",
                            signature: format!("export {{ {} }} from {from}", text(spec, src)),
                            doc: String::new(),
                            members: Vec::new(),
                        },
                        None => local(&name)?,
                    };
                    Some((alias, decl))
                })
                .collect()
        }
        "expression_statement" => {
            let Some(assign) = node.named_child(0).filter(|n| n.kind() == "assignment_expression") else {
                return Vec::new();
            };
            // `exports = module.exports = f`: every target of the chain takes the innermost value.
            let mut targets = Vec::new();
            let mut value = Some(assign);
            while let Some(a) = value.filter(|v| v.kind() == "assignment_expression") {
                targets.extend(a.child_by_field_name("left").map(|l| text(l, src)));
                value = a.child_by_field_name("right");
            }
            let (Some(name), Some(value)) = (targets.into_iter().find_map(export_name), value) else {
                return Vec::new();
            };
            value_decl(value, src, doc, &local).map(|d| (name, d)).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The name a CommonJS assignment target exports: `module.exports` the default, `exports.x`
/// and `module.exports.x` the name `x`.
fn export_name(target: &str) -> Option<String> {
    match target {
        "module.exports" => Some("default".to_string()),
        t => t
            .strip_prefix("module.exports.")
            .or_else(|| t.strip_prefix("exports."))
            .filter(|n| n.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
            .map(str::to_string),
    }
}

/// An exported value: a function or class written there, or a local declaration by name.
fn value_decl(value: Node, src: &[u8], doc: String, local: &dyn Fn(&str) -> Option<Decl>) -> Option<Decl> {
    match value.kind() {
        "identifier" => local(text(value, src)).map(|mut d| {
            if d.doc.is_empty() {
                d.doc = doc;
            }
            d
        }),
        "function_expression" | "arrow_function" | "function" => {
            Some(Decl { kind: "function", signature: head(value, src), doc, members: Vec::new() })
        }
        "class" => {
            Some(Decl { kind: "class", signature: head(value, src), doc, members: members(value, src) })
        }
        _ => Some(Decl {
            kind: "value",
            signature: one_line(text(value, src)).chars().take(80).collect(),
            doc,
            members: Vec::new(),
        }),
    }
}

/// The names a declaration introduces, each described.
fn declarations(node: Node, src: &[u8]) -> Vec<(String, Decl)> {
    let doc = doc_before(node, src);
    let named = |kind: &'static str, members: Vec<(String, &'static str, String, String)>| {
        let name = node.child_by_field_name("name").map(|n| text(n, src).to_string());
        name.map(|n| (n, Decl { kind, signature: head(node, src), doc: doc.clone(), members }))
            .into_iter()
            .collect()
    };
    match node.kind() {
        "function_declaration" | "function_signature" | "generator_function_declaration" => {
            named("function", Vec::new())
        }
        "class_declaration" | "abstract_class_declaration" => named("class", members(node, src)),
        "interface_declaration" => named("interface", members(node, src)),
        "type_alias_declaration" => named("type", members(node, src)),
        "enum_declaration" => named("enum", Vec::new()),
        "internal_module" | "module" => named("namespace", Vec::new()),
        "ambient_declaration" => {
            let mut cursor = node.walk();
            let inner: Vec<Node> = node.named_children(&mut cursor).collect();
            inner
                .into_iter()
                .flat_map(|d| declarations(d, src))
                .map(|(n, mut d)| {
                    if d.doc.is_empty() {
                        d.doc = doc.clone();
                    }
                    (n, d)
                })
                .collect()
        }
        "lexical_declaration" | "variable_declaration" => {
            let keyword = node.child(0).map(|k| text(k, src)).unwrap_or("var");
            let mut cursor = node.walk();
            let declarators: Vec<Node> =
                node.named_children(&mut cursor).filter(|d| d.kind() == "variable_declarator").collect();
            declarators
                .into_iter()
                .filter_map(|d| {
                    let name = text(d.child_by_field_name("name")?, src).to_string();
                    let ty = d.child_by_field_name("type").map(|t| text(t, src)).unwrap_or_default();
                    let signature = one_line(&format!("{keyword} {name}{ty}"));
                    Some((name, Decl { kind: "variable", signature, doc: doc.clone(), members: Vec::new() }))
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The body of a class or interface, or the object type a type alias names, whose members
/// are listed with it.
fn body(node: Node) -> Option<Node> {
    node.child_by_field_name("body")
        .or_else(|| node.child_by_field_name("value").filter(|v| v.kind() == "object_type"))
}

/// The public members of a class (methods and fields, not `private`, `protected` or
/// `#name`), an interface or an object type alias (properties, methods, call and construct
/// signatures, the last two named `()` and `new`).
fn members(node: Node, src: &[u8]) -> Vec<(String, &'static str, String, String)> {
    let Some(body) = body(node) else { return Vec::new() };
    let mut cursor = body.walk();
    let mut out = Vec::new();
    for m in body.named_children(&mut cursor) {
        let (kind, unnamed) = match m.kind() {
            "method_definition" | "method_signature" | "abstract_method_signature" => ("method", None),
            "public_field_definition" | "property_signature" => ("property", None),
            "call_signature" => ("call", Some("()")),
            "construct_signature" => ("constructor", Some("new")),
            _ => continue,
        };
        let Some(name) = unnamed.or_else(|| m.child_by_field_name("name").map(|n| text(n, src))) else {
            continue;
        };
        let mut c = m.walk();
        let hidden =
            m.children(&mut c).any(|x| x.kind() == "accessibility_modifier" && text(x, src) != "public");
        if hidden || name.starts_with('#') {
            continue;
        }
        out.push((name.to_string(), kind, head(m, src), doc_before(m, src)));
    }
    out
}

/// A declaration's text up to its body (an object type alias up to its `{`, its members being
/// listed on their own), or whole without a trailing `;`, on one line.
fn head(node: Node, src: &[u8]) -> String {
    let end = body(node).map_or(node.end_byte(), |b| b.start_byte());
    let text = std::str::from_utf8(&src[node.start_byte()..end]).unwrap_or_default();
    let text = signature_line(text).trim_end_matches(';').trim_end().to_string();
    match node.kind() {
        "type_alias_declaration" if end != node.end_byte() => format!("{text} {{ … }}"),
        _ => text,
    }
}

/// The first line of the `/** … */` comment right before `node`.
fn doc_before(node: Node, src: &[u8]) -> String {
    let Some(prev) = node.prev_named_sibling().filter(|p| p.kind() == "comment") else {
        return String::new();
    };
    let Some(body) = text(prev, src).strip_prefix("/**").and_then(|t| t.strip_suffix("*/")) else {
        return String::new();
    };
    let lines: Vec<&str> = body.lines().map(|l| l.trim().trim_start_matches('*').trim()).collect();
    first_line(&lines.join("\n"))
}
