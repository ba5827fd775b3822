//! `memorix add` and `memorix remove`: edit memorix.toml through toml_edit (comments, order
//! and formatting kept), then lock. A manifest whose lock fails is put back as it was.

use std::path::Path;

use serde::Serialize;
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::context::Context;
use super::error::{Error, Result};
use super::lock::{LockOutcome, lock};
use super::quest::show;
use crate::diagnostics::FromIo;
use crate::manifest;
use crate::model::Locator;
use crate::store::fsutil;
use crate::store::records::QuestKind;

/// What `add` puts into the mount.
pub enum Addition {
    /// Locators appended to the mount's `select` (the mount is created if new).
    Locators { locators: Vec<String>, intent: Option<String> },
    /// A derivation quest's selection becomes the mount (reusing a view found by search).
    Quest { id: String, intent: Option<String> },
}

#[derive(Debug, Serialize)]
pub struct Edited {
    pub mount: String,
    pub created: bool,
    pub lock: LockOutcome,
}

pub fn add(ctx: &mut Context, mount: &str, what: Addition) -> Result<Edited> {
    let path = manifest::find(ctx.cwd())?;
    let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
    let mut doc = parse_doc(&path, &text)?;
    let mount = mount.trim_end_matches('/');
    let (select, keys, intent): (Vec<String>, Vec<(&str, Item)>, Option<String>) = match what {
        Addition::Locators { locators, intent } => {
            for l in &locators {
                Locator::parse(l)?;
            }
            (locators, Vec::new(), intent)
        }
        Addition::Quest { id, intent } => {
            let q = show(ctx, &id)?;
            if q.kind != QuestKind::Derivation {
                return Err(Error::EnvironmentQuest { quest: q.id.short() });
            }
            let s = q.selection.into_iter().next().expect("a derivation quest has one selection");
            let strings = |v: &[String]| value(Array::from_iter(v.iter().map(String::as_str)));
            let mut keys = Vec::new();
            if !s.include.is_empty() {
                keys.push(("include", strings(&s.include)));
            }
            if !s.exclude.is_empty() {
                keys.push(("exclude", strings(&s.exclude)));
            }
            for (k, v) in [("match", s.match_policy), ("library", s.library), ("version", s.version)] {
                if let Some(v) = v {
                    keys.push((k, value(v)));
                }
            }
            (s.select, keys, intent.or(q.intents.into_iter().next()))
        }
    };
    let mounts = doc.entry("mounts").or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let mounts = mounts.as_table_mut().ok_or_else(|| Error::NotATable { what: "[mounts]".into() })?;
    let created = !mounts.contains_key(mount);
    let table = mounts.entry(mount).or_insert_with(|| Item::Table(Table::new()));
    let table =
        table.as_table_like_mut().ok_or_else(|| Error::NotATable { what: format!("mounts.{mount}") })?;
    let existing = table.get_mut("select").and_then(|i| i.as_array_mut());
    match existing {
        Some(array) => {
            for l in select {
                if !array.iter().any(|v| v.as_str() == Some(l.as_str())) {
                    array.push(l);
                }
            }
        }
        None => {
            table.insert("select", value(Array::from_iter(select)));
        }
    }
    for (k, v) in keys {
        table.insert(k, v);
    }
    if let Some(intent) = intent {
        table.insert("intent", value(intent));
    }
    let lock = write_then_lock(ctx, &path, &text, &doc.to_string())?;
    Ok(Edited { mount: mount.to_string(), created, lock })
}

pub fn remove(ctx: &mut Context, mount: &str) -> Result<Edited> {
    let path = manifest::find(ctx.cwd())?;
    let text = std::fs::read_to_string(&path).map_err(Error::io("read", &path))?;
    let mut doc = parse_doc(&path, &text)?;
    let mount = mount.trim_end_matches('/');
    let mounts = doc.get_mut("mounts").and_then(Item::as_table_like_mut);
    let known: Vec<String> =
        mounts.as_ref().map(|t| t.iter().map(|(k, _)| k.to_string()).collect()).unwrap_or_default();
    if mounts.and_then(|t| t.remove(mount)).is_none() {
        let close = known.iter().find(|k| strsim::levenshtein(k, mount) <= 2);
        return Err(Error::UnknownMount {
            name: mount.to_string(),
            suggestion: close.map(|c| c.to_string()),
            known,
        });
    }
    // Overrides for paths inside the removed mount would name no mount any more.
    if let Some(overrides) = doc.get_mut("overrides").and_then(Item::as_table_like_mut) {
        let inside: Vec<String> = overrides
            .iter()
            .map(|(k, _)| k.to_string())
            .filter(|k| k == mount || k.starts_with(&format!("{mount}/")))
            .collect();
        for k in inside {
            overrides.remove(&k);
        }
    }
    let lock = write_then_lock(ctx, &path, &text, &doc.to_string())?;
    Ok(Edited { mount: mount.to_string(), created: false, lock })
}

/// memorix.toml as an editable document.
pub(super) fn parse_doc(path: &Path, text: &str) -> Result<DocumentMut> {
    text.parse().map_err(|e: toml_edit::TomlError| Error::InvalidToml {
        path: path.to_path_buf(),
        message: e.message().to_string(),
    })
}

/// Writes the edited manifest and locks (the project opened afresh); on failure the original
/// text is written back.
pub(super) fn write_then_lock(ctx: &mut Context, path: &Path, old: &str, new: &str) -> Result<LockOutcome> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fsutil::write_atomic(dir, path, new.as_bytes())?;
    ctx.reopen_project();
    match lock(ctx) {
        Ok(outcome) => Ok(outcome),
        Err(e) => {
            fsutil::write_atomic(dir, path, old.as_bytes())?;
            ctx.reopen_project();
            Err(e)
        }
    }
}
