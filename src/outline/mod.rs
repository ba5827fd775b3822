//! API outlines of a library version (book: design/outlines.md#outline): the public items of
//! its Rust crate (`syn`), Python package (tree-sitter-python) or npm package (its `.d.ts`
//! declarations, else its entry files, with tree-sitter-typescript), each with its module,
//! kind, signature and the first line of its doc comment; and the difference between two
//! outlines. A pure function of the files, so the same derivation outlines the same on every
//! machine. Doc comments are third-party text: kept to one capped line, escaped when rendered.

pub mod changelog;
mod python;
mod render;
mod rust;
mod script;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use render::{render, render_changes};

/// The files of a library version: relative path -> content.
pub type Files<'a> = BTreeMap<&'a str, &'a [u8]>;

/// The most characters of a doc comment's first line an item keeps.
pub const DOC_CAP: usize = 160;

/// One public item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Item {
    /// Where it is reached from: `http`, `httpx`, `click.core`, `ms`.
    pub module: String,
    /// Its name in that module; a member is `Type::name` (Rust) or `Class.name`.
    pub name: String,
    /// `fn`, `method`, `struct`, `class`, `function`, `interface`, `default`, ….
    pub kind: String,
    /// The declaration without its body, on one line.
    pub signature: String,
    /// The first line of its doc comment, capped; empty when it has none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
}

/// Which parser read the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Python,
    #[serde(rename = "typescript")]
    TypeScript,
}

impl Language {
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::TypeScript => "TypeScript/JavaScript",
        }
    }
}

/// The public items of one library version, sorted by module and name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outline {
    pub language: Language,
    pub items: Vec<Item>,
}

/// The outline of `files`, by the language its manifest says (`PKG-INFO`, which only a
/// Python sdist has, even one with a Rust extension and its `Cargo.toml`; `Cargo.toml`,
/// `package.json`, `pyproject.toml`/`setup.py`, else `.py` files); `None` when it is none of
/// them or has no public item.
pub fn outline(files: &Files) -> Option<Outline> {
    let has = |p: &str| files.contains_key(p);
    let (language, mut items) = if has("PKG-INFO") {
        (Language::Python, python::items(files))
    } else if has("Cargo.toml") {
        (Language::Rust, rust::items(files))
    } else if has("package.json") {
        (Language::TypeScript, script::items(files))
    } else if has("pyproject.toml") || has("setup.py") || files.keys().any(|p| p.ends_with(".py")) {
        (Language::Python, python::items(files))
    } else {
        return None;
    };
    items.sort();
    items.dedup_by(|a, b| a.module == b.module && a.name == b.name);
    (!items.is_empty()).then_some(Outline { language, items })
}

/// An item whose signature changed: before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changed {
    pub before: Item,
    pub after: Item,
}

/// What differs between two outlines, each list sorted by module and name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub removed: Vec<Item>,
    pub added: Vec<Item>,
    pub changed: Vec<Changed>,
}

impl Difference {
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty() && self.added.is_empty() && self.changed.is_empty()
    }
}

/// The items of `to` that `from` lacks, those it dropped, and those whose kind or signature
/// differs, matched by (module, name).
pub fn difference(from: &[Item], to: &[Item]) -> Difference {
    let key = |i: &Item| (i.module.clone(), i.name.clone());
    let before: BTreeMap<_, &Item> = from.iter().map(|i| (key(i), i)).collect();
    let after: BTreeMap<_, &Item> = to.iter().map(|i| (key(i), i)).collect();
    let mut diff = Difference::default();
    for (k, b) in &before {
        match after.get(k) {
            None => diff.removed.push((*b).clone()),
            Some(a) if a.signature != b.signature || a.kind != b.kind => {
                diff.changed.push(Changed { before: (*b).clone(), after: (*a).clone() })
            }
            Some(_) => {}
        }
    }
    diff.added = after.iter().filter(|(k, _)| !before.contains_key(*k)).map(|(_, a)| (*a).clone()).collect();
    diff
}

/// `text` on one line: runs of whitespace (line breaks included) become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A declaration on one line, without the space a line break left inside brackets
/// (`f( a, b, )` is `f(a, b)`), so formatting alone never reads as a changed signature.
fn signature_line(text: &str) -> String {
    let mut s = one_line(text);
    for (from, to) in [
        ("( ", "("),
        ("[ ", "["),
        (", )", ")"),
        (", ]", "]"),
        (" )", ")"),
        (" ]", "]"),
        ("function (", "function("),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// The first non-empty line of a doc comment, capped at [`DOC_CAP`] characters.
fn first_line(doc: &str) -> String {
    let line = doc.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default();
    match line.char_indices().nth(DOC_CAP) {
        Some((at, _)) => format!("{}…", line[..at].trim_end()),
        None => line.to_string(),
    }
}
