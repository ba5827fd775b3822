//! `pyproject.toml` read as a pin file: the exact pins (`httpx==0.28.1`) of `[project]
//! dependencies`, `[project.optional-dependencies]` and `[dependency-groups]` (PEP 735). Every
//! one is a direct dependency of the project; a range (`httpx>=0.23`) is "compile or pin it".
//! Read with toml_edit, which keeps each string's position (a group mixes strings and
//! `{include-group = "..."}` tables, which serde's positions do not survive).

use toml_edit::{Document, Item, Value};

use super::PinFile;
use super::error::Result;
use super::error::syntax;
use super::requirements::record;
use super::text::Lines;

const HELP: &str = "fix the TOML syntax of pyproject.toml";

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let doc = Document::parse(text.to_string())
        .map_err(|e| syntax(name, text, e.span(), "pyproject.toml", e.message(), HELP))?;
    let root = doc.as_table();
    let project = root.get("project");
    let lists = project
        .and_then(|p| p.get("dependencies"))
        .into_iter()
        .chain(tables(project.and_then(|p| p.get("optional-dependencies"))))
        .chain(tables(root.get("dependency-groups")));
    let path = file.path.clone();
    let lines = Lines::new(text);
    for spec in lists.filter_map(Item::as_array).flat_map(|a| a.iter()) {
        if let (Value::String(s), Some(span)) = (spec, spec.span()) {
            record(file, s.value().trim(), &path, lines.of(span.start), Vec::new());
        }
    }
    Ok(())
}

/// The values of a table (`docs = [...]` of `[project.optional-dependencies]`).
fn tables(item: Option<&Item>) -> impl Iterator<Item = &Item> {
    item.and_then(Item::as_table_like).into_iter().flat_map(|t| t.iter().map(|(_, v)| v))
}
