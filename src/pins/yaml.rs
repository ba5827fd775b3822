//! YAML pin files (pnpm-lock.yaml, yarn berry's yarn.lock, conda environment files), read with
//! the maintained pure-Rust `saphyr` into a small tree that keeps every scalar as written
//! (`1.10` stays `1.10`, not the float 1.1) and every node's line.

use saphyr::{MarkedYaml, YamlData, YamlLoader};
use saphyr_parser::Parser;

/// Deeper nesting than any lockfile has is refused rather than walked (no stack overflow).
const MAX_DEPTH: usize = 64;

/// A YAML node and the 1-based line it starts on.
#[derive(Debug)]
pub(crate) struct Node {
    pub line: usize,
    pub value: Value,
}

#[derive(Debug)]
pub(crate) enum Value {
    /// Any scalar, as written (quotes removed).
    Text(String),
    Map(Vec<(Node, Node)>),
    List(Vec<Node>),
}

impl Node {
    /// The value at `key` of a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries().iter().find(|(k, _)| k.text() == Some(key)).map(|(_, v)| v)
    }

    /// The value of a scalar (never empty: an empty scalar is no value).
    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Text(s) if !s.is_empty() => Some(s),
            _ => None,
        }
    }

    /// `get(key)`'s scalar.
    pub fn text_at(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::text)
    }

    /// A mapping's entries (none for anything else).
    pub fn entries(&self) -> &[(Node, Node)] {
        match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// A sequence's items (none for anything else).
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::List(items) => items,
            _ => &[],
        }
    }
}

/// A YAML syntax error: the message and the 1-based line.
pub(crate) struct Error {
    pub message: String,
    pub line: usize,
}

/// Every document of `text` (pnpm 11 writes two into one pnpm-lock.yaml).
pub(crate) fn load(text: &str) -> Result<Vec<Node>, Error> {
    let mut parser = Parser::new_from_str(text);
    let mut loader: YamlLoader<MarkedYaml> = YamlLoader::default();
    loader.early_parse(false);
    // Generated files do not repeat keys; a hand-edited one that does keeps the last, as the
    // tools that read it do.
    loader.allow_duplicate_keys(true);
    let lines = Lines::new(text);
    let scan =
        |e: &saphyr::ScanError| Error { message: e.info().to_string(), line: lines.of(e.marker().index()) };
    parser.load(&mut loader, true).map_err(|e| scan(&e))?;
    if let Some(e) = loader.error() {
        return Err(scan(e));
    }
    loader.into_documents().iter().map(|doc| convert(doc, &lines, 0)).collect()
}

/// Lines as memorix counts them (after each `\n`). YAML also breaks lines at a lone `\r`, so
/// the parser's own line numbers can run past the file's.
struct Lines {
    /// The character index of every `\n` (the parser's markers count characters).
    breaks: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        Lines { breaks: text.chars().enumerate().filter(|(_, c)| *c == '\n').map(|(i, _)| i).collect() }
    }

    /// The 1-based line of the character at `index`.
    fn of(&self, index: usize) -> usize {
        self.breaks.partition_point(|&b| b < index) + 1
    }
}

fn convert(node: &MarkedYaml, lines: &Lines, depth: usize) -> Result<Node, Error> {
    let line = lines.of(node.span.start.index());
    if depth > MAX_DEPTH {
        return Err(Error { message: format!("nested more than {MAX_DEPTH} levels deep"), line });
    }
    let value = match &node.data {
        YamlData::Representation(text, _, _) => Value::Text(text.to_string()),
        YamlData::Sequence(items) => {
            Value::List(items.iter().map(|n| convert(n, lines, depth + 1)).collect::<Result<_, _>>()?)
        }
        YamlData::Mapping(map) => Value::Map(
            map.iter()
                .map(|(k, v)| Ok((convert(k, lines, depth + 1)?, convert(v, lines, depth + 1)?)))
                .collect::<Result<_, _>>()?,
        ),
        YamlData::Tagged(_, inner) => return convert(inner, lines, depth + 1),
        // Early parsing is off, so values stay representations; anything else holds no text.
        YamlData::Value(_) | YamlData::Alias(_) | YamlData::BadValue => Value::Text(String::new()),
    };
    Ok(Node { line, value })
}
