//! Code-aware tokens, the same for the index and for queries: each identifier whole
//! (`parse_url`, `HttpClient`) and, when it has several parts, each part split on `_` and on
//! case changes (`parse`, `url`; `http`, `client`), all lowercased, so a query for the whole
//! identifier or for one of its words finds it.
//!
//! Indexing tokenizes every delivered byte, so the stream makes its tokens one at a time into
//! one reused buffer: no allocation per token.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Words longer than this are data (hashes, base64), not identifiers: not indexed.
const MAX_WORD: usize = 64;

/// The name the index's schema gives the tokenizer.
pub const NAME: &str = "memorix-code";

/// The tokens of a text, in order, as byte ranges of the text; the lowercased token of the
/// last range returned is in `text`.
struct Scan<'a> {
    src: &'a str,
    /// Where the search for the next word starts.
    at: usize,
    /// The parts of the current word (absolute ranges) and how many of them were returned.
    parts: &'a mut Vec<(usize, usize)>,
    next_part: usize,
}

impl<'a> Scan<'a> {
    fn new(src: &'a str, parts: &'a mut Vec<(usize, usize)>) -> Scan<'a> {
        parts.clear();
        Scan { src, at: 0, parts, next_part: 0 }
    }

    /// The next token's range, its lowercased text written to `text`.
    fn next(&mut self, text: &mut String) -> Option<(usize, usize)> {
        if self.next_part < self.parts.len() {
            let (from, to) = self.parts[self.next_part];
            self.next_part += 1;
            lower(&self.src[from..to], text);
            return Some((from, to));
        }
        loop {
            let (s, e, plain) = next_word(self.src, self.at)?;
            self.at = e;
            if e - s > MAX_WORD {
                continue;
            }
            // A word of lower-case ASCII letters and digits is its only token.
            let (from, to) = if plain {
                self.parts.clear();
                (s, e)
            } else {
                let w = &self.src[s..e];
                let trimmed = w.trim_matches('_');
                if trimmed.is_empty() {
                    continue;
                }
                let from = s + (w.len() - w.trim_start_matches('_').len());
                parts(trimmed, from, self.parts);
                if self.parts.len() < 2 {
                    self.parts.clear();
                }
                (from, from + trimmed.len())
            };
            self.next_part = 0;
            lower(&self.src[from..to], text);
            return Some((from, to));
        }
    }
}

/// Whether `c` belongs to a word: letters, digits and `_`.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The bytes of ASCII words: 1 for lower-case letters and digits, 2 for the rest (capitals and
/// `_`), 0 for what separates words.
const ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            1
        } else if c.is_ascii_uppercase() || c == b'_' {
            2
        } else {
            0
        };
        b += 1;
    }
    t
};

/// The range of the first word of `src` at or after byte `at`, and whether it is plain: lower-case
/// ASCII letters and digits only.
fn next_word(src: &str, at: usize) -> Option<(usize, usize, bool)> {
    let bytes = src.as_bytes();
    let mut i = at;
    let mut start = None;
    let mut plain = true;
    while i < bytes.len() {
        let b = bytes[i];
        let (class, len) = if b.is_ascii() {
            (ASCII[usize::from(b)], 1)
        } else {
            let c = src[i..].chars().next().expect("a char starts here");
            (if word_char(c) { 2 } else { 0 }, c.len_utf8())
        };
        match (start, class) {
            (None, 0) => {}
            (None, _) => start = Some(i),
            (Some(s), 0) => return Some((s, i, plain)),
            _ => {}
        }
        plain &= class != 2;
        i += len;
    }
    start.map(|s| (s, bytes.len(), plain))
}

/// Writes `w` lowercased to `out` (as `str::to_lowercase` would).
fn lower(w: &str, out: &mut String) {
    out.clear();
    if w.is_ascii() {
        out.push_str(w);
        out.make_ascii_lowercase();
    } else {
        out.push_str(&w.to_lowercase());
    }
}

/// Calls `emit(from, to, token)` for every token of `text`, in order.
pub fn each(text: &str, mut emit: impl FnMut(usize, usize, String)) {
    let mut parts = Vec::new();
    let mut scan = Scan::new(text, &mut parts);
    let mut t = String::new();
    while let Some((from, to)) = scan.next(&mut t) {
        emit(from, to, t.clone());
    }
}

/// The distinct tokens of a query, in order of first appearance.
pub fn query_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    each(text, |_, _, t| {
        if !out.contains(&t) {
            out.push(t);
        }
    });
    out
}

/// The byte ranges (offset by `at`) of an identifier's words into `out`: split on `_`, before
/// an upper-case letter that follows a lower-case letter or digit (`httpClient`), and before
/// the last capital of a run followed by a lower-case letter (`HTTPClient` -> `HTTP`, `Client`).
fn parts(w: &str, at: usize, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut chars = w.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let p = prev.replace(c);
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((at + s, at + i));
            }
            continue;
        }
        let boundary = c.is_uppercase()
            && p.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && chars.peek().is_some_and(|n| n.1.is_lowercase()))
            });
        match start {
            Some(s) if boundary => {
                out.push((at + s, at + i));
                start = Some(i);
            }
            None => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((at + s, at + w.len()));
    }
}

/// The tokenizer the index is built with (see [`each`]); it keeps its buffers between texts.
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    token: Token,
    parts: Vec<(usize, usize)>,
}

/// The tokens of one text, made as they are read.
pub struct Stream<'a> {
    scan: Scan<'a>,
    token: &'a mut Token,
    count: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = Stream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream<'a> {
        self.token.text.clear();
        Stream { scan: Scan::new(text, &mut self.parts), token: &mut self.token, count: 0 }
    }
}

impl TokenStream for Stream<'_> {
    fn advance(&mut self) -> bool {
        let Some((from, to)) = self.scan.next(&mut self.token.text) else { return false };
        self.token.offset_from = from;
        self.token.offset_to = to;
        self.token.position = self.count;
        self.token.position_length = 1;
        self.count += 1;
        true
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        each(text, |_, _, t| v.push(t));
        v
    }

    #[test]
    fn identifiers_are_kept_whole_and_split() {
        assert_eq!(all("parse_url"), ["parse_url", "parse", "url"]);
        assert_eq!(all("HTTPClient.send()"), ["httpclient", "http", "client", "send"]);
        assert_eq!(all("getV2Name"), ["getv2name", "get", "v2", "name"]);
        assert_eq!(all("__init__ x"), ["init", "x"]);
        assert_eq!(all("Ünïcode wörds"), ["ünïcode", "wörds"]);
        assert_eq!(all("retry_ HTTP2Client a1b2"), ["retry", "http2client", "http2", "client", "a1b2"]);
    }

    #[test]
    fn the_stream_gives_each_token_with_its_offsets_and_position() {
        let mut t = CodeTokenizer::default();
        let mut got = Vec::new();
        for text in ["a __parse_URL__ é", "Σx"] {
            let mut s = t.token_stream(text);
            while s.advance() {
                let k = s.token();
                got.push((k.text.clone(), k.offset_from, k.offset_to, k.position));
            }
        }
        let want = [
            ("a", 0, 1),
            ("parse_url", 4, 13),
            ("parse", 4, 9),
            ("url", 10, 13),
            ("é", 16, 18),
            ("σx", 0, 3),
        ];
        let want: Vec<(String, usize, usize, usize)> = want
            .iter()
            .enumerate()
            .map(|(i, (w, f, e))| (w.to_string(), *f, *e, if i < 5 { i } else { 0 }))
            .collect();
        assert_eq!(got, want);
    }
}
