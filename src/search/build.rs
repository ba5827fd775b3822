//! Building a derivation's index, deterministically, and storing it as an artifact.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use sha2::{Digest, Sha256};
use tantivy::Directory;
use tantivy::directory::RamDirectory;
use tantivy::index::SegmentComponent;
use tantivy::indexer::{IndexWriterOptions, NoMergePolicy};
use tantivy::store::Compressor;
use tantivy::{Index, IndexSettings, IndexWriter, TantivyDocument};

use super::error::{Error, Result};
use super::{Fields, pack, tokens};
use crate::diagnostics::FromIo;
use crate::model::{Id, Name};
use crate::store::derivation::{DerivationEntry, DerivationRecord};
use crate::store::{Store, Writer};

/// The artifact's name; the suffix changes when the index's form does.
pub const ARTIFACT: &str = "search-v1.tar";
/// Files larger than this are indexed by their first bytes only.
pub const MAX_FILE: u64 = 4 << 20;
/// A chunk (one ranked unit, answered as `path:line`) ends after this many lines, or before
/// a Markdown heading.
const CHUNK_LINES: usize = 40;
/// The files a committed segment without deletes may have.
const COMPONENTS: [SegmentComponent; 6] = [
    SegmentComponent::Postings,
    SegmentComponent::Positions,
    SegmentComponent::FastFields,
    SegmentComponent::FieldNorms,
    SegmentComponent::Terms,
    SegmentComponent::Store,
];
/// Memory the one indexing thread fills before it writes a segment.
const BUDGET: usize = 256 << 20;

/// Builds the indexes the Store lacks of `derivations`, several at once (each by one thread,
/// so each is the same bytes as alone), and stores them.
pub fn ensure_all(writer: &Writer, derivations: &[(Id, DerivationRecord)]) -> Result<()> {
    use rayon::prelude::*;
    let name = Name::new(ARTIFACT).expect("a file name");
    let missing: Vec<(Id, &[DerivationEntry])> = derivations
        .iter()
        .filter(|(id, _)| !writer.store.records().has_artifact(id, &name))
        .map(|(id, record)| (*id, record.entries.as_slice()))
        .collect();
    let store = writer.store;
    let built: Vec<Result<(Id, Vec<u8>)>> =
        missing.par_iter().map(|(id, entries)| build(store, id, entries).map(|bytes| (*id, bytes))).collect();
    for b in built {
        let (id, bytes) = b?;
        writer.records().put_artifact(&id, &name, &bytes)?;
    }
    Ok(())
}

/// Builds the index of derivation `id` and stores it, replacing a damaged one.
pub fn put(writer: &Writer, id: &Id, record: &DerivationRecord) -> Result<()> {
    let bytes = build(writer.store, id, &record.entries)?;
    writer.records().put_artifact(id, &Name::new(ARTIFACT).expect("a file name"), &bytes)?;
    Ok(())
}

/// The packed index of a derivation's files: a function of its (path, blob) entries alone,
/// which its id hashes (origins and provenance are not hashed, so they stay out).
fn build(store: &Store, id: &Id, entries: &[DerivationEntry]) -> Result<Vec<u8>> {
    let failed = |e: tantivy::TantivyError| Error::Build { derivation: *id, reason: e.to_string() };
    let (schema, fields) = Fields::schema();
    let settings = IndexSettings {
        docstore_compression: Compressor::None,
        docstore_compress_dedicated_thread: false,
        ..IndexSettings::default()
    };
    // Files are read back from the RAM directory itself: through the index they lose their footer.
    let ram = RamDirectory::create();
    let index = Index::create(ram.clone(), schema, settings).map_err(failed)?;
    index.tokenizers().register(tokens::NAME, tokens::CodeTokenizer::default());
    let options = IndexWriterOptions::builder()
        .num_worker_threads(1)
        .num_merge_threads(1)
        .memory_budget_per_thread(BUDGET)
        .build();
    let mut w: IndexWriter = index.writer_with_options(options).map_err(failed)?;
    w.set_merge_policy(Box::new(NoMergePolicy));
    for entry in entries {
        let Some(text) = text_of(store, &entry.blob)? else { continue };
        for (line, end, body) in chunks(&text) {
            let mut doc = TantivyDocument::default();
            doc.add_text(fields.path, entry.path.as_str());
            doc.add_text(fields.name, entry.path.as_str());
            doc.add_text(fields.blob, entry.blob.to_string());
            doc.add_text(fields.body, body);
            doc.add_u64(fields.line, line as u64);
            doc.add_u64(fields.end, end as u64);
            w.add_document(doc).map_err(failed)?;
        }
    }
    w.commit().map_err(failed)?;
    w.wait_merging_threads().map_err(failed)?;
    canonical_files(&index, &ram).map(|files| pack::pack(&files)).map_err(failed)
}

/// A blob's text, `None` for binary content (a NUL in its first 8 KiB).
fn text_of(store: &Store, blob: &Id) -> Result<Option<String>> {
    let mut bytes = Vec::new();
    let path = store.objects().blob_path(blob);
    store
        .objects()
        .open_blob(blob)?
        .take(MAX_FILE)
        .read_to_end(&mut bytes)
        .map_err(crate::store::Error::io("read", &path))?;
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The chunks of a text as (first line, last line, text), lines counted from 1.
pub(super) fn chunks(text: &str) -> Vec<(usize, usize, &str)> {
    let mut out = Vec::new();
    let (mut start, mut start_line, mut lines) = (0, 1, 0);
    let mut at = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let heading = line.starts_with('#') && line.trim_start_matches('#').starts_with(' ');
        if lines > 0 && (lines >= CHUNK_LINES || heading) {
            out.push((start_line, n, &text[start..at]));
            (start, start_line, lines) = (at, n + 1, 0);
        }
        at += line.len();
        lines += 1;
    }
    if lines > 0 {
        out.push((start_line, start_line + lines - 1, &text[start..at]));
    }
    out
}

/// The index's files, with each segment named after a hash of its files instead of its
/// random UUID, and `meta.json` saying so (its keys sorted, as serde_json writes a map).
fn canonical_files(index: &Index, dir: &RamDirectory) -> tantivy::Result<BTreeMap<String, Vec<u8>>> {
    let mut files = BTreeMap::new();
    let mut meta: serde_json::Value = serde_json::from_slice(&dir.atomic_read("meta.json".as_ref())?)
        .map_err(|e| tantivy::TantivyError::InternalError(e.to_string()))?;
    let mut renamed = HashMap::new();
    for segment in index.searchable_segment_metas()? {
        let mut parts = BTreeMap::new();
        for component in COMPONENTS {
            let path = segment.relative_path(component);
            if dir.exists(&path)? {
                let ext = path.to_string_lossy()[segment.id().uuid_string().len()..].to_string();
                parts.insert(ext, dir.open_read(&path)?.read_bytes()?.as_slice().to_vec());
            }
        }
        let mut hash = Sha256::new();
        for (ext, bytes) in &parts {
            hash.update(ext.as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
        let new = hex::encode(&hash.finalize()[..16]);
        for (ext, bytes) in parts {
            files.insert(format!("{new}{ext}"), bytes);
        }
        let hyphenated = tantivy::index::SegmentId::from_uuid_string(&new)
            .map_err(|e| tantivy::TantivyError::InternalError(e.to_string()))?;
        renamed.insert(segment.id(), hyphenated);
    }
    if let Some(segments) = meta.get_mut("segments").and_then(|s| s.as_array_mut()) {
        for s in segments.iter_mut() {
            let old = serde_json::from_value(s["segment_id"].clone())
                .map_err(|e| tantivy::TantivyError::InternalError(e.to_string()))?;
            s["segment_id"] = serde_json::to_value(renamed[&old]).expect("a segment id serializes");
        }
        segments.sort_by_key(|s| s["segment_id"].as_str().unwrap_or_default().to_string());
    }
    files.insert("meta.json".into(), serde_json::to_vec(&meta).expect("json serializes"));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::chunks;

    #[test]
    fn chunks_end_before_headings_and_after_forty_lines() {
        let text = "intro\n# A\na\n## B\n".to_string() + &"x\n".repeat(45);
        let c: Vec<(usize, usize)> = chunks(&text).iter().map(|(a, b, _)| (*a, *b)).collect();
        assert_eq!(c, [(1, 1), (2, 3), (4, 43), (44, 49)]);
    }
}
