//! Full-text search over delivered files: one index per derivation, a derived artifact kept
//! beside its summary (`derivations/<aa>/<id>/artifacts/search-v1.tar`), and ranked queries over
//! the indexes of an environment's mounts with BM25 statistics summed over all of them, so a
//! library's rank does not depend on which other libraries its index was built beside.
//!
//! The artifact is a pure function of the derivation's files: it is built in the calling
//! thread, segment by segment, with an uncompressed document store, then each segment is renamed
//! after a hash of its own files (tantivy names segments with random UUIDs) and the files are
//! packed into a tar with fixed headers, sorted by name (book: search.md#the-index).

mod build;
mod error;
mod pack;
pub mod tokens;

pub use build::{ARTIFACT, MAX_FILE, ensure_all, put};
pub use error::{Error, Result};

use tantivy::collector::TopDocs;
use tantivy::query::{Bm25StatisticsProvider, BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, Value};
use tantivy::{Index, Searcher, TantivyDocument, Term};

use crate::model::{Id, Name};
use crate::store::Store;

/// The fields of every index, made in this order so their ids agree across indexes.
#[derive(Clone, Copy)]
struct Fields {
    /// The derivation path (stored).
    path: Field,
    /// The path's tokens, so a query naming a file's name finds it.
    name: Field,
    /// The blob's id (stored), so an answer needs no read of the derivation record.
    blob: Field,
    body: Field,
    /// First and last line of the chunk (1-based, stored).
    line: Field,
    end: Field,
}

impl Fields {
    fn schema() -> (Schema, Fields) {
        use tantivy::schema::{STORED, TextFieldIndexing, TextOptions};
        let mut b = Schema::builder();
        let code = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokens::NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields = Fields {
            path: b.add_text_field("path", STORED),
            name: b.add_text_field("name", code.clone()),
            blob: b.add_text_field("blob", STORED),
            body: b.add_text_field("body", code),
            line: b.add_u64_field("line", STORED),
            end: b.add_u64_field("end", STORED),
        };
        (b.build(), fields)
    }
}

/// A derivation's index, opened for queries.
pub struct Searchable {
    pub derivation: Id,
    searcher: Searcher,
    fields: Fields,
}

/// One ranked chunk: the derivation path and the lines it spans.
#[derive(Debug, Clone)]
pub struct Hit {
    /// Which of the searched indexes it came from.
    pub index: usize,
    pub path: String,
    pub blob: Id,
    pub line: u64,
    pub end: u64,
    pub score: f32,
}

/// A derivation's stored index, or `None` when it has not been built.
pub fn open(store: &Store, derivation: &Id) -> Result<Option<Searchable>> {
    let name = Name::new(ARTIFACT).expect("a file name");
    let Some(bytes) = store.records().artifact(derivation, &name) else { return Ok(None) };
    from_bytes(derivation, bytes).map(Some)
}

/// A stored index's bytes, opened for queries.
fn from_bytes(derivation: &Id, bytes: Vec<u8>) -> Result<Searchable> {
    let corrupt = |reason: String| Error::Corrupt { derivation: *derivation, reason };
    let dir = pack::PackDirectory::open(bytes).map_err(corrupt)?;
    let index = Index::open(dir).map_err(|e| corrupt(e.to_string()))?;
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()
        .map_err(|e: tantivy::TantivyError| corrupt(e.to_string()))?;
    Ok(Searchable { derivation: *derivation, searcher: reader.searcher(), fields: Fields::schema().1 })
}

/// The BM25 statistics of all the searched indexes together.
struct Global<'a>(&'a [Searchable]);

impl Bm25StatisticsProvider for Global<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.searcher.total_num_tokens(field)).sum()
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.searcher.total_num_docs()).sum()
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.searcher.doc_freq(term)).sum()
    }
}

/// The query: any of its tokens in the text, or (counted double) in the file's path.
fn query(fields: Fields, text: &str) -> Option<Box<dyn Query>> {
    let terms = tokens::query_terms(text);
    if terms.is_empty() {
        return None;
    }
    let mut any: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for t in &terms {
        let body = TermQuery::new(Term::from_field_text(fields.body, t), IndexRecordOption::WithFreqs);
        let name = TermQuery::new(Term::from_field_text(fields.name, t), IndexRecordOption::WithFreqs);
        any.push((Occur::Should, Box::new(body)));
        any.push((Occur::Should, Box::new(BoostQuery::new(Box::new(name), 2.0))));
    }
    Some(Box::new(BooleanQuery::new(any)))
}

/// The `limit` best chunks for `text` over `indexes`, best first; ties go by index, path, line.
pub fn search(indexes: &[Searchable], text: &str, limit: usize) -> Result<Vec<Hit>> {
    let Some(first) = indexes.first() else { return Ok(Vec::new()) };
    let Some(q) = query(first.fields, text) else { return Ok(Vec::new()) };
    let global = Global(indexes);
    let mut hits = Vec::new();
    for (i, s) in indexes.iter().enumerate() {
        let corrupt =
            |e: tantivy::TantivyError| Error::Corrupt { derivation: s.derivation, reason: e.to_string() };
        let top = TopDocs::with_limit(limit.max(1)).order_by_score();
        for (score, addr) in
            s.searcher.search_with_statistics_provider(q.as_ref(), &top, &global).map_err(corrupt)?
        {
            let doc: TantivyDocument = s.searcher.doc(addr).map_err(corrupt)?;
            let text = |f| doc.get_first(f).and_then(|v| v.as_str()).unwrap_or_default().to_string();
            let num = |f| doc.get_first(f).and_then(|v| v.as_u64()).unwrap_or_default();
            let (line, end) = (num(s.fields.line), num(s.fields.end));
            let blob = text(s.fields.blob)
                .parse::<Id>()
                .ok()
                .ok_or_else(|| Error::Corrupt { derivation: s.derivation, reason: "a bad blob id".into() })?;
            hits.push(Hit { index: i, path: text(s.fields.path), blob, line, end, score });
        }
    }
    hits.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then(a.index.cmp(&b.index))
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
    hits.truncate(limit);
    Ok(hits)
}
