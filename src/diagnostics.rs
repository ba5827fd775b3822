//! What every module's errors share. Each layer owns its error type (`store::Error`,
//! `manifest::Error`, `resolve::Error`, ...), each variant with an error code and a `help:`;
//! the operations' error, `ops::Error`, wraps them all and the CLI renders it with
//! miette. This module holds only the one failure every layer meets: an I/O error, with what
//! memorix was doing and to which path.

use std::io;
use std::path::{Path, PathBuf};

use miette::Diagnostic;

/// An I/O failure while doing `action` to `path`.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("could not {action} {}: {source}", path.display())]
#[diagnostic(code(memorix::io), help("{}", io_help(source)))]
pub struct IoError {
    pub action: &'static str,
    pub path: PathBuf,
    pub source: io::Error,
}

fn io_help(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::StorageFull => {
            "the disk is full; free space and retry (nothing already stored was changed)"
        }
        io::ErrorKind::PermissionDenied => "check the permissions of this path",
        io::ErrorKind::NotFound => "check that the path exists",
        _ => "check the path and retry",
    }
}

/// Builds any module's error from an I/O failure: `.map_err(Error::io("read", path))?`.
pub trait FromIo: From<IoError> {
    fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Self + 'a {
        move |source| IoError { action, path: path.to_path_buf(), source }.into()
    }
}

impl<E: From<IoError>> FromIo for E {}

/// The most bytes of one line a report shows either side of what it points at.
const LINE_WINDOW: usize = 120;

/// A file's text as an error report quotes it. miette renders every byte of the lines it
/// shows, and a hostile file's 60 MB line would take it most of a minute, so what it reads is
/// cut to a window around the span (a long span is cut too). Offsets stay the file's, so a
/// label, and a `--json` report's span, point into the file itself.
#[derive(Debug)]
pub struct Quoted(String);

impl Quoted {
    pub fn new(text: &str) -> Quoted {
        Quoted(text.to_string())
    }

    /// `span` no longer than the window (it is what a report underlines).
    pub fn cut(span: std::ops::Range<usize>) -> miette::SourceSpan {
        (span.start, span.end.saturating_sub(span.start).min(LINE_WINDOW)).into()
    }
}

impl miette::SourceCode for Quoted {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text = self.0.as_str();
        let whole = text.read_span(span, before, after)?;
        let start = whole.span().offset();
        let end = start + whole.data().len();
        if end - start <= 4 * LINE_WINDOW {
            return Ok(whole);
        }
        let boundary = |mut at: usize| {
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        };
        let from = boundary(span.offset().saturating_sub(LINE_WINDOW).max(start));
        let to = boundary((span.offset() + span.len().min(LINE_WINDOW) + LINE_WINDOW).min(end)).max(from);
        let lines = |range: std::ops::Range<usize>| text[range].bytes().filter(|b| *b == b'\n').count();
        Ok(Box::new(miette::MietteSpanContents::new(
            &text.as_bytes()[from..to],
            (from, to - from).into(),
            whole.line() + lines(start..from),
            whole.column(),
            lines(from..to),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miette::SourceCode;

    #[test]
    fn a_long_line_is_quoted_around_the_span_with_the_files_offsets() {
        let long = format!("{}X{}", "é".repeat(10_000), "b".repeat(10_000));
        let text = format!("first\nsecond\n{long}\nlast\n");
        let at = text.find('X').unwrap();
        let quoted = Quoted::new(&text);
        let shown = quoted.read_span(&Quoted::cut(at..text.len()), 1, 1).unwrap();
        assert!(shown.data().len() <= 3 * LINE_WINDOW, "{} bytes", shown.data().len());
        let offset = shown.span().offset();
        assert_eq!(shown.data()[at - offset], b'X', "offsets are the file's");
        assert_eq!(shown.line(), 2);
        // A short text is quoted whole.
        let short = Quoted::new("a = 1\nb = 2\n");
        assert_eq!(short.read_span(&(4, 1).into(), 1, 1).unwrap().data(), b"a = 1\nb = 2\n");
    }
}
