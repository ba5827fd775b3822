//! Building a derivation's index, deterministically, and storing it as an artifact.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use sha2::{Digest, Sha256};
use tantivy::Directory;
use tantivy::directory::RamDirectory;
use tantivy::index::{SegmentComponent, SegmentId, SegmentMeta};
use tantivy::store::Compressor;
use tantivy::tokenizer::TokenizerManager;
use tantivy::{Index, IndexSettings, SingleSegmentIndexWriter, TantivyDocument};

use super::error::{Error, Result};
use super::{Fields, pack, tokens};
use crate::model::{Id, Name};
use crate::store::records::{DerivationEntry, DerivationRecord};
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
/// Memory a part of an index fills before it is written as a segment.
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
    let built: Vec<Result<(Id, Vec<u8>)>> = missing
        .par_iter()
        .map(|(id, entries)| build(store, id, entries, BUDGET).map(|bytes| (*id, bytes)))
        .collect();
    for b in built {
        let (id, bytes) = b?;
        writer.records().put_artifact(&id, &name, &bytes)?;
    }
    Ok(())
}

/// Builds the index of derivation `id` and stores it, replacing a damaged one.
pub fn put(writer: &Writer, id: &Id, record: &DerivationRecord) -> Result<()> {
    let bytes = build(writer.store, id, &record.entries, BUDGET)?;
    writer.records().put_artifact(id, &Name::new(ARTIFACT).expect("a file name"), &bytes)?;
    Ok(())
}

/// The packed index of a derivation's files: a function of its (path, blob) entries alone,
/// which its id hashes (origins and provenance are not hashed, so they stay out). Each part is
/// one segment written in the calling thread, without a thread pool or a queue of documents
/// (which held up to 10,000 documents in memory); a part ends after the file that fills
/// `budget` ([`BUDGET`]), a point the content alone decides.
fn build(store: &Store, id: &Id, entries: &[DerivationEntry], budget: usize) -> Result<Vec<u8>> {
    let failed = |e: tantivy::TantivyError| Error::Build { derivation: *id, reason: e.to_string() };
    let (_, fields) = Fields::schema();
    let mut parts = Vec::new();
    // tantivy sizes a segment's term table from the budget it is given; a library of a few
    // files needs a small one (allocating and walking the full table cost a small index more
    // than its text). The table grows as it fills, and the segment's bytes do not depend on it.
    let table = (entries.len() << 16).max(2 << 20).min(budget);
    let (mut w, mut ram) = part(table).map_err(failed)?;
    let mut buf = Vec::new();
    for entry in entries {
        let Some(text) = text_of(store, &entry.blob, &mut buf)? else { continue };
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
        if w.mem_usage() >= budget {
            let (next, next_ram) = part(table).map_err(failed)?;
            parts.push((std::mem::replace(&mut w, next).finalize().map_err(failed)?, ram));
            ram = next_ram;
        }
    }
    parts.push((w.finalize().map_err(failed)?, ram));
    canonical_files(&parts).map(|files| pack::pack(&files)).map_err(failed)
}

/// A writer of one segment into a new RAM directory (the files are read back from the
/// directory itself: through the index they lose their footer), its term table sized for
/// `table` bytes of memory.
fn part(table: usize) -> tantivy::Result<(SingleSegmentIndexWriter, RamDirectory)> {
    let settings = IndexSettings {
        docstore_compression: Compressor::None,
        docstore_compress_dedicated_thread: false,
        ..IndexSettings::default()
    };
    let tokenizers = TokenizerManager::default();
    tokenizers.register(tokens::NAME, tokens::CodeTokenizer::default());
    let ram = RamDirectory::create();
    let w = Index::builder()
        .schema(Fields::schema().0)
        .settings(settings)
        .tokenizers(tokenizers)
        .single_segment_index_writer(ram.clone(), table)?;
    Ok((w, ram))
}

/// A blob's text, `None` for binary content (a NUL in its first 8 KiB); `buf` is reused
/// from file to file.
fn text_of<'b>(store: &Store, blob: &Id, buf: &'b mut Vec<u8>) -> Result<Option<Cow<'b, str>>> {
    store.objects().read_blob(blob, MAX_FILE, buf)?;
    if buf[..buf.len().min(8192)].contains(&0) {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(buf)))
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

/// The index's files, with each part's segment named after a hash of its files instead of its
/// random UUID, and one `meta.json` listing them all (its keys sorted, as serde_json writes a
/// map).
fn canonical_files(parts: &[(Index, RamDirectory)]) -> tantivy::Result<BTreeMap<String, Vec<u8>>> {
    let bad = |e: serde_json::Error| tantivy::TantivyError::InternalError(e.to_string());
    let mut files = BTreeMap::new();
    let mut meta: Option<serde_json::Value> = None;
    let mut segments = Vec::new();
    for (index, dir) in parts {
        let mut part: serde_json::Value =
            serde_json::from_slice(&dir.atomic_read("meta.json".as_ref())?).map_err(bad)?;
        let mut renamed = HashMap::new();
        for segment in index.searchable_segment_metas()? {
            renamed.insert(segment.id(), rename(&segment, dir, &mut files)?);
        }
        if let Some(list) = part.get_mut("segments").and_then(|s| s.as_array_mut()) {
            for mut s in list.drain(..) {
                let old = serde_json::from_value(s["segment_id"].clone()).map_err(bad)?;
                s["segment_id"] = serde_json::to_value(renamed[&old]).map_err(bad)?;
                segments.push(s);
            }
        }
        meta.get_or_insert(part);
    }
    segments.sort_by_key(|s| s["segment_id"].as_str().unwrap_or_default().to_string());
    let mut meta = meta.unwrap_or_default();
    meta["segments"] = serde_json::Value::Array(segments);
    files.insert("meta.json".into(), serde_json::to_vec(&meta).map_err(bad)?);
    Ok(files)
}

/// Puts a segment's files in `files` under a name hashed from their bytes; returns that name.
fn rename(
    segment: &SegmentMeta,
    dir: &RamDirectory,
    files: &mut BTreeMap<String, Vec<u8>>,
) -> tantivy::Result<SegmentId> {
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
    SegmentId::from_uuid_string(&new).map_err(|e| tantivy::TantivyError::InternalError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StorePath;
    use crate::progress::Silent;

    /// An index past its memory budget is several segments, the same bytes every time, and
    /// a query ranks over all of them.
    #[test]
    fn an_index_of_several_parts_is_deterministic_and_searched_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open_or_create(&dir.path().join("store"), &Silent).unwrap();
        let writer = store.writer(&Silent).unwrap();
        let entries: Vec<DerivationEntry> = (0..6)
            .map(|i| {
                let text = format!("# Page {i}\n\nretry_policy number{i}\n") + &"filler words\n".repeat(5000);
                let blob = writer.objects().put_blob_bytes(text.as_bytes()).unwrap();
                DerivationEntry { path: StorePath::new(&format!("docs/p{i}.md")).unwrap(), blob }
            })
            .collect();
        let id = Id::of_bytes(b"a derivation");
        // Each file fills the budget: one part each.
        let small = 1 << 20;
        let bytes = build(&store, &id, &entries, small).unwrap();
        assert_eq!(bytes, build(&store, &id, &entries, small).unwrap(), "the same bytes");
        let index = Index::open(pack::PackDirectory::open(bytes.clone()).unwrap()).unwrap();
        assert!(index.searchable_segment_metas().unwrap().len() > 1, "several segments");
        let searchable = || super::super::from_bytes(&id, bytes.clone()).unwrap();
        let hits = super::super::search(&[searchable()], "retry_policy", 10).unwrap();
        let paths: std::collections::BTreeSet<String> = hits.iter().map(|h| h.path.clone()).collect();
        assert_eq!(paths.len(), 6, "every part answers: {paths:?}");
        let one = super::super::search(&[searchable()], "number3", 10).unwrap();
        assert_eq!(one.iter().map(|h| h.path.as_str()).collect::<Vec<_>>(), ["docs/p3.md"]);
    }

    #[test]
    fn chunks_end_before_headings_and_after_forty_lines() {
        let text = "intro\n# A\na\n## B\n".to_string() + &"x\n".repeat(45);
        let c: Vec<(usize, usize)> = chunks(&text).iter().map(|(a, b, _)| (*a, *b)).collect();
        assert_eq!(c, [(1, 1), (2, 3), (4, 43), (44, 49)]);
    }
}
