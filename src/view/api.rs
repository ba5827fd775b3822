//! The API outline of a library's docs derivation (book: design/outlines.md#outline): `API.md`
//! and its data among its derived artifacts, computed once per derivation id from its
//! files. `API.md` is also a blob, so delivery places it in the mount like any file.

use std::io::Read;

use super::derivation_plan::DerivationPlan;
use super::error::Result;
use crate::diagnostics::FromIo;
use crate::model::{Id, Name};
use crate::outline::{self, Outline};
use crate::store::{Store, Writer};

/// The file the outline is placed as in the mount.
pub const API: &str = "API.md";
/// The derived artifacts: the outline as Markdown and as data. The name says which outliner
/// made them, so a memorix that outlines differently derives its own rather than serving
/// another's (as the search index's does).
pub const ARTIFACT: &str = "api-v2.md";
pub const ARTIFACT_JSON: &str = "api-v2.json";

/// The most bytes of one file an outline reads: generated sources past this are not API.
const FILE_CAP: u64 = 1 << 20;

/// Whether an outline or a changelog may read `path`: sources, manifests, changelogs.
fn wanted(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let top = !path.contains('/');
    [".rs", ".py", ".pyi", ".d.ts", ".js", ".mjs", ".cjs"].iter().any(|e| name.ends_with(e))
        || (top && ["Cargo.toml", "package.json", "PKG-INFO", "pyproject.toml"].contains(&name))
        || (top && outline::changelog::NAMES.iter().any(|n| name.to_ascii_lowercase().starts_with(n)))
}

/// The files of a library version an outline and a changelog read, with their content.
pub fn sources<'a>(
    store: &Store,
    files: impl IntoIterator<Item = (&'a str, &'a Id)>,
) -> crate::store::Result<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for (path, blob) in files.into_iter().filter(|(p, _)| wanted(p)) {
        let mut bytes = Vec::new();
        store
            .objects()
            .open_blob(blob)?
            .take(FILE_CAP + 1)
            .read_to_end(&mut bytes)
            .map_err(crate::store::Error::io("read", &store.objects().blob_path(blob)))?;
        if bytes.len() as u64 <= FILE_CAP {
            out.push((path.to_string(), bytes));
        }
    }
    Ok(out)
}

/// The outline of `sources`.
pub fn outline_of(sources: &[(String, Vec<u8>)]) -> Option<Outline> {
    outline::outline(&sources.iter().map(|(p, b)| (p.as_str(), b.as_slice())).collect())
}

/// `httpx 0.28.1` for each library version the derivation's locators resolved to.
fn title(plan: &DerivationPlan) -> Option<String> {
    let names = super::derivation_plan::library_versions(&plan.provenance);
    (!names.is_empty()).then(|| names.join(", "))
}

/// Computes the outline of a derivation of library versions, when it lacks one, and keeps
/// `API.md`'s blob in the Store (a `gc` may have dropped it; the artifact brings it back).
pub fn ensure(writer: &Writer, id: &Id, plan: &DerivationPlan) -> Result<()> {
    let store = writer.store;
    let Some(title) = title(plan) else { return Ok(()) };
    if let Some(text) = store.records().artifact(id, &name(ARTIFACT)) {
        if !store.objects().has_blob(&Id::of_bytes(&text)) {
            writer.objects().put_blob_bytes(&text)?;
        }
        return Ok(());
    }
    if store.records().has_artifact(id, &name(ARTIFACT_JSON)) {
        return Ok(());
    }
    let files = plan.files.iter().map(|(p, o)| (p.as_str(), &o.blob));
    let outline = outline_of(&sources(store, files)?);
    // No outline is an answer too: an empty `api.json` says so without reading again.
    let json = serde_json::to_vec(&outline).expect("outlines serialize");
    if let Some(outline) = &outline {
        let text = outline::render(&title, outline);
        writer.objects().put_blob_bytes(text.as_bytes())?;
        writer.records().put_artifact(id, &name(ARTIFACT), text.as_bytes())?;
    }
    writer.records().put_artifact(id, &name(ARTIFACT_JSON), &json)?;
    Ok(())
}

/// The blob of a derivation's `API.md`, when it has one and the Store holds it.
pub fn api_blob(store: &Store, id: &Id) -> Option<Id> {
    let blob = Id::of_bytes(&store.records().artifact(id, &name(ARTIFACT))?);
    store.objects().has_blob(&blob).then_some(blob)
}

fn name(text: &str) -> Name {
    Name::new(text).expect("artifact names are file names")
}
