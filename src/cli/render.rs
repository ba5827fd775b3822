//! The one place output is written: stdout for what a command was asked for, stderr for
//! warnings, progress and errors. A closed pipe (`| head`) ends output quietly; nothing here
//! panics on a write.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

use crate::diagnostics::FromIo;
use crate::ops::error::{Error, Result};
use crate::ops::log::GenSummary;
use crate::progress::{Progress, Silent, Task};

/// Text for stdout, assembled in memory and printed at once.
#[derive(Default)]
pub struct Text(String);

impl Text {
    /// Appends formatted text and a newline, e.g. `s.line(format_args!("{a} {b}"))`.
    pub fn line(&mut self, args: impl fmt::Display) {
        self.push(args);
        self.0.push('\n');
    }

    /// Appends formatted text without a newline.
    pub fn push(&mut self, args: impl fmt::Display) {
        // Formatting into a String cannot fail.
        let _ = fmt::Write::write_fmt(&mut self.0, format_args!("{args}"));
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

fn stdout_error(e: io::Error) -> Error {
    Error::io("write", Path::new("<stdout>"))(e)
}

/// Prints one pretty JSON document and a newline.
pub fn json<T: Serialize>(value: &T) -> Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)
        .map_err(io::Error::from)
        .and_then(|_| writeln!(out))
        .or_else(ignore_broken_pipe)
        .map_err(stdout_error)
}

/// Writes text to stdout.
pub fn text(s: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(s.as_bytes()).and_then(|_| out.flush()).or_else(ignore_broken_pipe).map_err(stdout_error)
}

/// Copies a reader (a blob's content) to stdout.
pub fn copy(content: &mut dyn io::Read) -> Result<()> {
    let mut out = io::stdout().lock();
    io::copy(content, &mut out)
        .and_then(|_| out.flush())
        .map(|_| ())
        .or_else(ignore_broken_pipe)
        .map_err(stdout_error)
}

fn ignore_broken_pipe(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe { Ok(()) } else { Err(e) }
}

/// A success message of a command that changes something; `-q` silences it.
pub fn note(ctx: &super::Context, s: &str) -> Result<()> {
    if ctx.quiet { Ok(()) } else { text(s) }
}

/// A note beside a command's output, on stderr (stdout being the output); `-q` silences it.
pub fn aside(ctx: &super::Context, s: &str) {
    if !ctx.quiet && !s.is_empty() {
        let _ = write!(io::stderr().lock(), "{s}");
    }
}

/// A warning on stderr (a closed stderr is ignored).
pub fn warn(message: impl fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "warning: {message}");
}

/// The developer's trace of what a command opened (`MEMORIX_TRACE_OPENS`), on stderr.
pub fn trace(trace: impl fmt::Display) {
    let _ = writeln!(io::stderr().lock(), "{trace}");
}

/// A diagnostic that is no failure (a warning with its code and help), on stderr.
pub fn diagnostic(diagnostic: impl miette::Diagnostic + Send + Sync + 'static) {
    let _ = writeln!(io::stderr().lock(), "{:?}", miette::Report::new(diagnostic));
}

/// An error as miette renders it, on stderr.
pub fn error(err: Error, json: bool) {
    if json {
        // Under --json a program reads stderr too: one JSON object, miette's own encoding
        // (message, code, help, causes, labels with their spans and file).
        let mut out = String::new();
        if miette::JSONReportHandler::new().render_report(&mut out, &err).is_ok() {
            let _ = writeln!(io::stderr().lock(), "{out}");
            return;
        }
    }
    let _ = writeln!(io::stderr().lock(), "{:?}", miette::Report::new(err));
}

/// "1 file", "2 files": counts in sentences read as English.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// `rules@g3 (sha256:0123456789ab)`
pub fn generation(g: &GenSummary) -> String {
    format!("{}@g{} ({})", g.kind, g.seq, g.id.short())
}

/// Progress as a terminal shows it: bars on stderr when it is a terminal (and not `-q`);
/// notices always, on stderr, since they explain a wait.
pub struct Terminal {
    pub bars: bool,
}

struct Bar(ProgressBar);

impl Task for Bar {
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

impl Progress for Terminal {
    fn start(&self, what: &'static str, len: u64) -> Box<dyn Task + '_> {
        if !self.bars {
            return Box::new(Silent);
        }
        let bar = ProgressBar::new(len);
        bar.set_style(
            ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta})")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_message(what);
        Box::new(Bar(bar))
    }

    fn notice(&self, message: &str) {
        let _ = writeln!(io::stderr().lock(), "{message}");
    }
}
