//! The module graph matches the layering declared in book/src/architecture.md: every
//! `crate::…` and `super::…` path in `src/` (comments and strings aside) names a module its
//! layer may import, the declared table covers every module and has no cycle, and no
//! `impl Store` / `impl Writer` block lives outside `src/store/`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const DOC: &str = "book/src/architecture.md";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `module -> allowed, ...` lines of the doc's first ```text block after its heading.
fn declared() -> BTreeMap<String, BTreeSet<String>> {
    let doc = fs::read_to_string(root().join(DOC)).expect("the architecture chapter");
    let after = doc.split("## Who may import whom").nth(1).expect("the table's heading");
    let block = after.split("```text\n").nth(1).and_then(|b| b.split("```").next()).expect("a ```text table");
    let mut rules = BTreeMap::new();
    for line in block.lines().filter(|l| !l.trim().is_empty()) {
        let (module, allowed) =
            line.split_once("->").unwrap_or_else(|| panic!("{DOC}: `{line}` has no `->`"));
        let allowed = allowed.split(',').map(str::trim).filter(|m| !m.is_empty()).map(String::from).collect();
        rules.insert(module.trim().to_string(), allowed);
    }
    rules
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

/// The source with comments, strings and char literals blanked (newlines kept, so lines
/// still count).
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let start = i;
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                && (i == 0 || !b[i - 1].is_ascii_alphanumeric()) =>
            {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
                i += 2 + hashes;
                while i < b.len() && !b[i..].starts_with(&close) {
                    i += 1;
                }
                i += close.len();
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 3,
            _ => {
                i += 1;
                continue;
            }
        }
        blank(&mut out, start, i);
    }
    String::from_utf8(out).expect("blanking keeps UTF-8 boundaries of ASCII delimiters")
}

/// The top-level modules a path starting at `at` names: `crate::x…`, `crate::{x, y::z}`.
fn heads(rest: &str) -> Vec<String> {
    let rest = rest.trim_start();
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 0;
        let mut item = String::new();
        let mut out = Vec::new();
        for c in group.chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(c);
        }
        out.push(item);
        return out.iter().filter_map(|i| ident(i.trim())).collect();
    }
    ident(rest).into_iter().collect()
}

fn ident(s: &str) -> Option<String> {
    let name: String = s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The top-level module a file belongs to, and how many `super::` reach the crate root.
fn module_of(rel: &Path) -> (String, usize) {
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let top = parts[0].trim_end_matches(".rs").to_string();
    let depth = match parts.last().map(String::as_str) {
        Some("mod.rs") => parts.len() - 1,
        _ => parts.len(),
    };
    (top, depth)
}

/// (file:line, importing module, imported module) for every cross-module path in `src/`.
fn imports() -> Vec<(String, String, String)> {
    let src = root().join("src");
    let mut out = Vec::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).expect("below src");
        if rel == Path::new("lib.rs") || rel == Path::new("main.rs") {
            continue;
        }
        let (module, depth) = module_of(rel);
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        // Inline `mod name { ... }` blocks (tests) add a level `super::` must climb.
        let (mut braces, mut inline): (i64, Vec<i64>) = (0, Vec::new());
        for (n, line) in code.lines().enumerate() {
            let at = format!("src/{}:{}", rel.display(), n + 1);
            let words: Vec<&str> = line.split_whitespace().collect();
            let opens_mod = words.windows(3).any(|w| w[0] == "mod" && w[2] == "{")
                || words.windows(2).any(|w| w[0] == "mod" && w[1].ends_with('{'));
            if opens_mod {
                inline.push(braces);
            }
            braces += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            while inline.last().is_some_and(|open| braces <= *open) {
                inline.pop();
            }
            let depth = depth + inline.len();
            let mut named = Vec::new();
            for (i, _) in line.match_indices("crate::") {
                if i == 0 || !line.as_bytes()[i - 1].is_ascii_alphanumeric() {
                    named.extend(heads(&line[i + "crate::".len()..]));
                }
            }
            // `super::` as many times as the file is deep reaches the crate root.
            let to_root = "super::".repeat(depth);
            for (i, _) in line.match_indices(&to_root) {
                let before = &line[..i];
                if !before.ends_with("super::") {
                    named.extend(heads(&line[i + to_root.len()..]));
                }
            }
            for target in named.into_iter().filter(|t| *t != module) {
                out.push((at.clone(), module.clone(), target));
            }
        }
    }
    out
}

#[test]
fn every_import_follows_the_declared_layers() {
    let rules = declared();
    let edges = imports();
    let mut graph: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (_, from, to) in &edges {
        *graph.entry(from).or_default().entry(to).or_default() += 1;
    }
    println!("the module graph of src/ (imports counted per line):");
    for (from, tos) in &graph {
        let list: Vec<String> = tos.iter().map(|(t, n)| format!("{t} ({n})")).collect();
        println!("  {from:<12} -> {}", list.join(", "));
    }
    let mut broken = Vec::new();
    for (at, from, to) in &edges {
        match rules.get(from) {
            None => broken.push(format!("{at}: module `{from}` is not in the table of {DOC}")),
            Some(allowed) if !allowed.contains(to) => broken.push(format!(
                "{at}: `{from}` imports `{to}`, but {DOC} allows `{from}` only: {}",
                allowed.iter().cloned().collect::<Vec<_>>().join(", ")
            )),
            Some(_) => {}
        }
    }
    assert!(broken.is_empty(), "imports that break the layering:\n{}", broken.join("\n"));
}

#[test]
fn the_declared_layers_cover_every_module_and_have_no_cycle() {
    let rules = declared();
    let lib = fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    let modules: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').into())
        .collect();
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
}

#[test]
fn only_the_store_defines_what_the_store_does() {
    let src = root().join("src");
    let mut found = Vec::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).expect("below src");
        if rel.starts_with("store") {
            continue;
        }
        let code = code_only(&fs::read_to_string(&file).expect("a source file"));
        for (n, line) in code.lines().enumerate() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let names_store = |w: &&str| {
                let name = w.trim_end_matches('{').rsplit("::").next().unwrap_or("");
                let name = name.split('<').next().unwrap_or("");
                name == "Store" || name == "Writer"
            };
            if words.first().is_some_and(|w| w.starts_with("impl")) && words.iter().any(names_store) {
                found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "impl blocks of the Store outside src/store/:\n{}", found.join("\n"));
}

#[test]
fn the_reader_sees_through_comments_strings_and_groups() {
    let text = "use crate::{model::Id, store::{Store, tree::Tree}};\n// crate::ops\nlet s = \"crate::cli\";\nlet c = '\"'; use crate::view;";
    let code = code_only(text);
    assert!(!code.contains("crate::ops") && !code.contains("crate::cli"), "{code}");
    let line: Vec<&str> = code.lines().collect();
    assert_eq!(heads(&line[0]["use crate::".len()..]), ["model", "store"]);
    assert!(line[3].contains("crate::view"));
    assert_eq!(module_of(Path::new("store/mod.rs")), ("store".into(), 1));
    assert_eq!(module_of(Path::new("store/tree.rs")), ("store".into(), 2));
    assert_eq!(module_of(Path::new("fault.rs")), ("fault".into(), 1));
}
