//! Locators: `kind "/" path [ "/" ] [ "@" selector ]` (book: design/locators.md#grammar).
//!
//! Every path that reaches the Store goes through [`Name`] and [`StorePath`], so a path with
//! `..`, an absolute path, an empty or `.` component, NUL or a backslash cannot be built.

use std::fmt;

use super::id::IdPrefix;
use super::kind::Kind;
use super::path::{Name, NameProblem, StorePath};
use miette::{Diagnostic, LabeledSpan, SourceCode};

/// Which state of a typed tree a locator reads.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Selector {
    /// The current tip (`refs/<kind>/latest`).
    Latest,
    /// Generation number N of this store (`@gN`).
    Generation(u64),
    /// A generation by (a unique prefix of) its hash.
    Hash(IdPrefix),
    /// A version of a library, `@v0.28.1`.
    Version(String),
    /// The version the project's lockfiles pin.
    Pin,
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Latest => f.write_str("latest"),
            Selector::Generation(n) => write!(f, "g{n}"),
            Selector::Hash(p) => write!(f, "{p}"),
            Selector::Version(v) => write!(f, "v{v}"),
            Selector::Pin => f.write_str("pin"),
        }
    }
}

/// A parsed locator. Built only through [`Locator::parse`] or from validated parts.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Locator {
    pub kind: Kind,
    pub path: StorePath,
    /// Written with a trailing `/`: the locator names a subtree.
    pub subtree: bool,
    pub selector: Option<Selector>,
}

impl Locator {
    pub fn new(kind: Kind, path: StorePath, subtree: bool) -> Locator {
        let subtree = subtree || path.is_root();
        Locator { kind, path, subtree, selector: None }
    }

    pub fn parse(input: &str) -> Result<Locator, LocatorError> {
        parse(input, true)
    }

    /// Parses an ingest/rm destination, which names a place and takes no `@selector`: an `@`
    /// followed by text that is no selector is part of a name (`docs/img/logo@2x.md`).
    pub fn parse_place(input: &str) -> Result<Locator, LocatorError> {
        let loc = match parse(input, true) {
            Err(e) if matches!(e.problem, LocatorProblem::BadSelector(_)) => parse(input, false)?,
            parsed => parsed?,
        };
        if loc.selector.is_some() {
            let at = input.rfind('@').unwrap_or(0);
            return Err(LocatorError::new(input, at..input.len(), LocatorProblem::SelectorNotAllowed));
        }
        Ok(loc)
    }

    /// Parses a Store file's place, `kind/path` (an override's winner, a recorded origin). A
    /// place takes no selector, so an `@` is part of the name (`docs/img/logo@2x.md`).
    pub fn parse_file(input: &str) -> Option<Locator> {
        parse(input, false).ok().filter(|l| !l.subtree)
    }

    /// `kind/path` with a trailing `/` for subtrees, without the selector.
    pub fn place(&self) -> String {
        let mut s = format!("{}/{}", self.kind, self.path);
        if self.subtree && !self.path.is_root() {
            s.push('/');
        }
        s
    }
}

impl fmt::Display for Locator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.place())?;
        if let Some(sel) = &self.selector {
            write!(f, "@{sel}")?;
        }
        Ok(())
    }
}

/// What is wrong with a locator; each has its own error code.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum LocatorProblem {
    Empty,
    Absolute,
    UnknownKind { found: String, suggestion: Option<&'static str> },
    Name(NameProblem),
    BadSelector(String),
    GenerationZero,
    SelectorNotAllowed,
}

impl LocatorProblem {
    fn code(&self) -> &'static str {
        match self {
            LocatorProblem::Empty => "memorix::locator::empty",
            LocatorProblem::Absolute => "memorix::locator::absolute",
            LocatorProblem::UnknownKind { .. } => "memorix::locator::unknown_kind",
            LocatorProblem::Name(NameProblem::DotDot) => "memorix::locator::parent_dir",
            LocatorProblem::Name(_) => "memorix::locator::bad_component",
            LocatorProblem::BadSelector(_) => "memorix::locator::bad_selector",
            LocatorProblem::GenerationZero => "memorix::locator::generation_zero",
            LocatorProblem::SelectorNotAllowed => "memorix::locator::selector_not_allowed",
        }
    }

    fn message(&self) -> String {
        match self {
            LocatorProblem::Empty => "empty locator".into(),
            LocatorProblem::Absolute => "absolute path".into(),
            LocatorProblem::UnknownKind { found, .. } => format!("unknown kind `{found}`"),
            LocatorProblem::Name(p) => p.describe().into(),
            LocatorProblem::BadSelector(s) => format!("unknown selector `@{s}`"),
            LocatorProblem::GenerationZero => "generations are numbered from 1".into(),
            LocatorProblem::SelectorNotAllowed => "a destination takes no `@selector`".into(),
        }
    }

    fn help(&self) -> String {
        match self {
            LocatorProblem::Empty => "write kind/path, e.g. rules/python/style.md".into(),
            LocatorProblem::Absolute => {
                "locators start with a kind: rules/, docs/ or chat/ (not a file system path)".into()
            }
            LocatorProblem::UnknownKind { suggestion: Some(s), .. } => {
                format!("did you mean `{s}`? the kinds are rules, docs and chat")
            }
            LocatorProblem::UnknownKind { .. } => "the kinds are rules, docs and chat".into(),
            LocatorProblem::Name(NameProblem::DotDot) => {
                "locators cannot leave their tree; name the path from the kind down".into()
            }
            LocatorProblem::Name(NameProblem::Empty) => "remove the doubled `/`".into(),
            LocatorProblem::Name(NameProblem::Backslash) => "separate components with `/`".into(),
            LocatorProblem::Name(_) => "remove this part of the path".into(),
            LocatorProblem::BadSelector(_) => {
                "selectors are @latest, @gN, @<hash prefix of 8+ hex digits>, @vVERSION or @pin; \
                 a path containing `@` needs an explicit selector, e.g. path@latest"
                    .into()
            }
            LocatorProblem::GenerationZero => "the first generation of a kind is @g1".into(),
            LocatorProblem::SelectorNotAllowed => {
                "ingest and rm write the current tip; drop the @... part".into()
            }
        }
    }
}

/// A locator that does not parse, with the offending span for miette.
#[derive(Debug, thiserror::Error)]
#[error("invalid locator `{input}`: {}", problem.message())]
pub struct LocatorError {
    input: String,
    span: (usize, usize),
    pub problem: LocatorProblem,
}

impl LocatorError {
    fn new(input: &str, span: std::ops::Range<usize>, problem: LocatorProblem) -> LocatorError {
        LocatorError { input: input.to_string(), span: (span.start, span.end - span.start), problem }
    }
}

impl Diagnostic for LocatorError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.problem.code()))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.problem.help()))
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.input)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label = LabeledSpan::new(Some(self.problem.message()), self.span.0, self.span.1);
        Some(Box::new(std::iter::once(label)))
    }
}

impl LocatorError {
    /// The blamed span shifted to where the locator text starts in a larger file.
    pub fn span_in(&self, offset: usize) -> std::ops::Range<usize> {
        offset + self.span.0..offset + self.span.0 + self.span.1
    }

    pub fn problem_code(&self) -> &'static str {
        self.problem.code()
    }

    pub fn problem_label(&self) -> String {
        self.problem.message()
    }

    pub fn problem_help(&self) -> String {
        self.problem.help()
    }
}

/// Parses a locator; with `selectors` false, an `@` is part of a name like any other character.
fn parse(input: &str, selectors: bool) -> Result<Locator, LocatorError> {
    let err = |range: std::ops::Range<usize>, p| Err(LocatorError::new(input, range, p));
    if input.is_empty() {
        return err(0..0, LocatorProblem::Empty);
    }
    // NUL and backslash are wrong anywhere, including in the selector.
    if let Some(i) = input.find(['\0', '\\']) {
        let p = if input.as_bytes()[i] == 0 { NameProblem::Nul } else { NameProblem::Backslash };
        return err(i..i + 1, LocatorProblem::Name(p));
    }
    if input.starts_with('/') {
        return err(0..1, LocatorProblem::Absolute);
    }

    // The selector is the text after the last `@` when that text holds no `/`.
    let (body, selector) = match input.rfind('@') {
        Some(at) if selectors && !input[at + 1..].contains('/') => {
            let text = &input[at + 1..];
            let sel = parse_selector(text).map_err(|p| LocatorError::new(input, at..input.len(), p))?;
            (&input[..at], Some(sel))
        }
        _ => (input, None),
    };

    let (kind_text, rest) = match body.find('/') {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let Some(kind) = Kind::parse(kind_text) else {
        let suggestion =
            Kind::ALL.into_iter().map(Kind::as_str).find(|k| strsim::levenshtein(k, kind_text) <= 2);
        let end = kind_text.len().max(1).min(input.len());
        return err(0..end, LocatorProblem::UnknownKind { found: kind_text.into(), suggestion });
    };
    // `rules` and `rules@g2` name the whole tree, like `rules/`.
    let rest = rest.unwrap_or("");

    let subtree = rest.is_empty() || rest.ends_with('/');
    let path_text = rest.strip_suffix('/').unwrap_or(rest);
    let base = kind_text.len() + 1;
    if !path_text.is_empty() {
        let mut offset = base;
        for part in path_text.split('/') {
            if let Err(p) = Name::check(part) {
                let span = if part.is_empty() {
                    // Point at the doubled slash.
                    offset.saturating_sub(1)..offset + 1
                } else {
                    offset..offset + part.len()
                };
                return err(span, LocatorProblem::Name(p));
            }
            offset += part.len() + 1;
        }
    } else if rest.len() > 1 || rest == "/" {
        // `rules//`
        return err(base..base + 1, LocatorProblem::Name(NameProblem::Empty));
    }
    let path = StorePath::new(path_text).expect("every component was checked above");
    Ok(Locator { kind, path, subtree, selector })
}

fn parse_selector(text: &str) -> Result<Selector, LocatorProblem> {
    if text == "latest" {
        return Ok(Selector::Latest);
    }
    if text == "pin" {
        return Ok(Selector::Pin);
    }
    if let Some(n) = text.strip_prefix('g')
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        return match n.parse::<u64>() {
            Ok(0) => Err(LocatorProblem::GenerationZero),
            Ok(n) => Ok(Selector::Generation(n)),
            Err(_) => Err(LocatorProblem::BadSelector(text.into())),
        };
    }
    if let Some(v) = text.strip_prefix('v')
        && v.starts_with(|c: char| c.is_ascii_digit())
    {
        return Ok(Selector::Version(v.to_string()));
    }
    if let Some(p) = IdPrefix::parse(text) {
        return Ok(Selector::Hash(p));
    }
    Err(LocatorProblem::BadSelector(text.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Locator {
        Locator::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn bad(s: &str) -> (LocatorProblem, (usize, usize)) {
        let e = Locator::parse(s).expect_err(s);
        (e.problem, e.span)
    }

    #[test]
    fn parses_the_forms_of_design_section_4() {
        let l = ok("rules/lang/cpp.md@latest");
        assert_eq!((l.kind, l.path.as_str(), l.subtree), (Kind::Rules, "lang/cpp.md", false));
        assert_eq!(l.selector, Some(Selector::Latest));
        let l = ok("docs/api/@g3");
        assert_eq!((l.path.as_str(), l.subtree, l.selector), ("api", true, Some(Selector::Generation(3))));
        assert_eq!(ok("docs/httpx/@v0.28.1").selector, Some(Selector::Version("0.28.1".into())));
        assert_eq!(ok("docs/httpx/@pin").selector, Some(Selector::Pin));
        let l = ok("rules/");
        assert!(l.path.is_root() && l.subtree && l.selector.is_none());
        assert!(ok("rules").path.is_root());
        assert!(ok("rules@g2").path.is_root());
        let l = ok("docs/npm/@types/node/");
        assert_eq!((l.path.as_str(), l.selector), ("npm/@types/node", None));
        let l = ok("rules/x@sha256:0123456789abcdef");
        assert_eq!(l.selector, Some(Selector::Hash(IdPrefix::parse("0123456789abcdef").unwrap())));
    }

    #[test]
    fn display_round_trips() {
        for s in ["rules/lang/cpp.md@latest", "docs/api/@g3", "rules/", "chat/a/b.jsonl"] {
            assert_eq!(ok(s).to_string(), s);
        }
    }

    #[test]
    fn rejects_with_spans_at_the_bad_character() {
        assert_eq!(bad("rules/a/../b"), (LocatorProblem::Name(NameProblem::DotDot), (8, 2)));
        assert_eq!(bad("/rules/a").0, LocatorProblem::Absolute);
        assert_eq!(bad("rules/a//b"), (LocatorProblem::Name(NameProblem::Empty), (7, 2)));
        assert_eq!(bad("rules/a\\b"), (LocatorProblem::Name(NameProblem::Backslash), (7, 1)));
        assert_eq!(bad("rules/a\0b"), (LocatorProblem::Name(NameProblem::Nul), (7, 1)));
        assert_eq!(bad("rules/./b"), (LocatorProblem::Name(NameProblem::Dot), (6, 1)));
        assert_eq!(bad("rules/x@g0").0, LocatorProblem::GenerationZero);
        assert!(matches!(bad("rules/x@y.md").0, LocatorProblem::BadSelector(_)));
        assert!(matches!(bad("rulez/x").0, LocatorProblem::UnknownKind { suggestion: Some("rules"), .. }));
        assert_eq!(bad("").0, LocatorProblem::Empty);
    }

    #[test]
    fn place_rejects_selectors() {
        assert_eq!(
            Locator::parse_place("rules/a@g1").unwrap_err().problem,
            LocatorProblem::SelectorNotAllowed
        );
        assert_eq!(Locator::parse_place("rules/a/").unwrap().place(), "rules/a/");
        // Text after `@` that is no selector is part of the name.
        assert_eq!(Locator::parse_place("rules/img/logo@2x.md").unwrap().path.as_str(), "img/logo@2x.md");
        assert_eq!(Locator::parse_place("rules/a@b/").unwrap().place(), "rules/a@b/");
    }

    #[test]
    fn a_file_place_keeps_its_at_sign_and_names_one_file() {
        let file = Locator::parse_file("docs/img/logo@2x.md").unwrap();
        assert_eq!((file.kind, file.path.as_str(), file.subtree), (Kind::Docs, "img/logo@2x.md", false));
        assert_eq!(file.place(), "docs/img/logo@2x.md");
        for bad in ["docs", "docs/", "docs/a/", "/docs/a", "doc/a", "docs/a//b", "docs/../a", "docs/a\\b"] {
            assert_eq!(Locator::parse_file(bad), None, "{bad}");
        }
    }

    #[test]
    fn store_path_prefixes() {
        let p = StorePath::new("a/bc/d").unwrap();
        assert!(p.starts_with(&StorePath::new("a/bc").unwrap()));
        assert!(!p.starts_with(&StorePath::new("a/b").unwrap()));
        assert!(p.starts_with(&StorePath::root()));
        assert_eq!(p.file_name(), Some("d"));
    }
}
