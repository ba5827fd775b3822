//! Code-aware tokens, the same for the index and for queries: each identifier whole
//! (`parse_url`, `HttpClient`) and, when it has several parts, each part split on `_` and on
//! case changes (`parse`, `url`; `http`, `client`), all lowercased, so a query for the whole
//! identifier or for one of its words finds it.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Words longer than this are data (hashes, base64), not identifiers: not indexed.
const MAX_WORD: usize = 64;

/// The name the index's schema gives the tokenizer.
pub const NAME: &str = "memorix-code";

/// Calls `emit(from, to, token)` for every token of `text`, in order.
pub fn each(text: &str, mut emit: impl FnMut(usize, usize, String)) {
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let word_char = c.is_alphanumeric() || c == '_';
        match (start, word_char) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                word(&text[s..i], s, &mut emit);
                start = None;
            }
            _ => {}
        }
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

fn word(w: &str, at: usize, emit: &mut impl FnMut(usize, usize, String)) {
    let w_trim = w.trim_matches('_');
    if w_trim.is_empty() || w.len() > MAX_WORD {
        return;
    }
    let at = at + (w.len() - w.trim_start_matches('_').len());
    emit(at, at + w_trim.len(), w_trim.to_lowercase());
    let parts = parts(w_trim);
    if parts.len() > 1 {
        for (from, to) in parts {
            emit(at + from, at + to, w_trim[from..to].to_lowercase());
        }
    }
}

/// The byte ranges of an identifier's words: split on `_`, before an upper-case letter that
/// follows a lower-case letter or digit (`httpClient`), and before the last capital of a run
/// followed by a lower-case letter (`HTTPClient` -> `HTTP`, `Client`).
fn parts(w: &str) -> Vec<(usize, usize)> {
    let chars: Vec<(usize, char)> = w.char_indices().collect();
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            continue;
        }
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|n| n.1);
        let boundary = c.is_uppercase()
            && prev.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
            });
        match start {
            Some(s) if boundary => {
                out.push((s, i));
                start = Some(i);
            }
            None => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, w.len()));
    }
    out
}

/// The tokenizer the index is built with (see [`each`]).
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    tokens: Vec<Token>,
}

/// The tokens of one text, made up front.
pub struct Stream<'a> {
    tokens: &'a mut [Token],
    at: Option<usize>,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = Stream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream<'a> {
        self.tokens.clear();
        let tokens = &mut self.tokens;
        each(text, |offset_from, offset_to, text| {
            let position = tokens.len();
            tokens.push(Token { offset_from, offset_to, position, text, position_length: 1 });
        });
        Stream { tokens: &mut self.tokens, at: None }
    }
}

impl TokenStream for Stream<'_> {
    fn advance(&mut self) -> bool {
        let next = self.at.map_or(0, |a| a + 1);
        self.at = Some(next);
        next < self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at.unwrap_or(0)]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at.unwrap_or(0)]
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
    }
}
