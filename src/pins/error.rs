//! Every pin-file problem, with `file:line` in the message and a labelled span where known.

use std::io;

use miette::{Diagnostic, NamedSource, SourceSpan};

use crate::diagnostics::Quoted;

/// Pin errors carry their file's text for the report: boxed, so a `Result` stays small.
pub type Result<T, E = Box<PinError>> = std::result::Result<T, E>;

/// A pin-file problem. Variants with a location start their message with `file:line:`.
#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum PinError {
    #[error("could not read pin file {path}: {source}")]
    #[diagnostic(code(memorix::pins::read), help("{help}"))]
    Read { path: String, source: io::Error, help: &'static str },

    #[error("{path}: memorix does not know this kind of pin file")]
    #[diagnostic(code(memorix::pins::unknown_format), help("[pins] files may list: {known}"))]
    UnknownFormat { path: String, known: &'static str },

    #[error("{path} is {} MiB; memorix reads pin files of at most {} MiB", size >> 20, max >> 20)]
    #[diagnostic(
        code(memorix::pins::too_large),
        help(
            "a lockfile that large is not one a package manager wrote; check the file, or remove it from [pins] files"
        )
    )]
    TooLarge { path: String, size: u64, max: u64 },

    #[error("{path} lists {count} packages; memorix reads pin files of at most {max} packages")]
    #[diagnostic(
        code(memorix::pins::too_many),
        help(
            "a lockfile that long is not one a package manager wrote; check the file, or remove it from [pins] files"
        )
    )]
    TooMany { path: String, count: usize, max: usize },

    #[error("{path}: the file is not valid {encoding}")]
    #[diagnostic(
        code(memorix::pins::encoding),
        help(
            "pin files are read as UTF-8, or as UTF-16/UTF-32 when a byte-order mark says so; save the file as UTF-8"
        )
    )]
    Encoding { path: String, encoding: &'static str },

    #[error("{at}: invalid {what}: {message}")]
    #[diagnostic(code(memorix::pins::syntax), help("{help}"))]
    Syntax {
        at: String,
        what: &'static str,
        message: String,
        help: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    #[error("{at}: {what} is newer than this memorix understands")]
    #[diagnostic(code(memorix::pins::unsupported_version), help("{help}"))]
    UnsupportedVersion {
        at: String,
        what: String,
        help: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("this format version")]
        span: Option<SourceSpan>,
    },

    #[error("{at}: included file {include} does not exist")]
    #[diagnostic(
        code(memorix::pins::missing_include),
        help(
            "the path is relative to the including file, {including}; fix the `-r`/`-c` line or create the file"
        )
    )]
    MissingInclude {
        at: String,
        include: String,
        including: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("included here")]
        span: Option<SourceSpan>,
    },

    #[error("{at}: included file {include} {why}")]
    #[diagnostic(
        code(memorix::pins::include_outside),
        help(
            "memorix reads only files inside the project: include a file of the project, by a path relative to {including} without `..` out of the project, and not through a link that leads out"
        )
    )]
    IncludeOutside {
        at: String,
        include: String,
        why: String,
        including: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("included here")]
        span: Option<SourceSpan>,
    },

    #[error("{at}: requirements files include each other: {chain}")]
    #[diagnostic(
        code(memorix::pins::include_cycle),
        help("remove one of the `-r`/`-c` lines of the chain so that no file includes itself")
    )]
    IncludeCycle {
        at: String,
        chain: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("closes the cycle")]
        span: Option<SourceSpan>,
    },

    #[error(
        "{at}: {library} is not pinned in {file} ({what}): compile the file (pip-compile / uv pip compile) or pin it with =="
    )]
    #[diagnostic(
        code(memorix::pins::unpinned),
        help("memorix serves the docs of one exact version, which only `name==version` names")
    )]
    OnlyRange {
        at: String,
        library: String,
        file: String,
        /// `only `>=0.23``, or what else the line gives instead of a version.
        what: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("not a pin")]
        span: Option<SourceSpan>,
    },

    #[error("{library} is not pinned in any pin file (searched: {searched})")]
    #[diagnostic(
        code(memorix::pins::not_pinned),
        help(
            "check the mount's `library` name, or add the file that pins it to [pins] files in memorix.toml"
        )
    )]
    NotPinned { library: String, searched: String },

    #[error("{at}: {library} is listed in {file} without a version ({what}): it is not a released version")]
    #[diagnostic(
        code(memorix::pins::unversioned),
        help(
            "a workspace member is the project's own code, whose version is dynamic; memorix serves the docs of released versions, so mount the member's docs from [sources] without @pin"
        )
    )]
    Unversioned {
        at: String,
        library: String,
        file: String,
        /// Where the member is, e.g. `editable+packages/app`.
        what: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("no version")]
        span: Option<SourceSpan>,
    },

    #[error("every pin of {library} has a marker that [pins] markers makes false:\n{listing}")]
    #[diagnostic(
        code(memorix::pins::excluded_by_markers),
        help("the target in [pins] markers does not install {library}; fix the target or drop the mount")
    )]
    ExcludedByMarkers {
        library: String,
        listing: String,
        #[related]
        sites: Vec<PinSite>,
    },

    #[error("the pin files disagree on {library}:\n{listing}")]
    #[diagnostic(
        code(memorix::pins::disagree),
        help("pin the same version in every file, or list only the file that counts in [pins] files")
    )]
    Disagree {
        library: String,
        listing: String,
        #[related]
        sites: Vec<PinSite>,
    },

    #[error("{file} pins several versions of {library}, {why}:\n{listing}")]
    #[diagnostic(code(memorix::pins::ambiguous), help("choose one in the mount, e.g. version = \"{first}\""))]
    Ambiguous {
        library: String,
        file: String,
        why: String,
        first: String,
        listing: String,
        #[related]
        sites: Vec<PinSite>,
    },

    #[error("the mount asks for {library} {version}, which is not pinned; the candidates are:\n{listing}")]
    #[diagnostic(
        code(memorix::pins::not_a_candidate),
        help("set the mount's version to one of the pinned versions ({choices}), or drop it")
    )]
    NotACandidate {
        library: String,
        version: String,
        choices: String,
        listing: String,
        #[related]
        sites: Vec<PinSite>,
    },

    #[error(
        "{library} is pinned to different versions under different markers, and no target is declared:\n{listing}"
    )]
    #[diagnostic(
        code(memorix::pins::markers_needed),
        help(
            "markers are never read from this machine; declare the target, e.g. add to memorix.toml:  [pins] markers = {{ {assignment} }}"
        )
    )]
    MarkersNeeded {
        library: String,
        listing: String,
        /// `sys_platform = "linux", platform_machine = "x86_64"`: every variable the markers read.
        assignment: String,
        #[related]
        sites: Vec<PinSite>,
    },

    #[error(
        "{at}: the marker `{marker}` of {library} needs `{variable}`, which [pins] markers does not declare"
    )]
    #[diagnostic(code(memorix::pins::undeclared_marker), help("{help}"))]
    UndeclaredMarker {
        at: String,
        library: String,
        marker: String,
        variable: String,
        help: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("this marker")]
        span: Option<SourceSpan>,
    },

    #[error("{at}: invalid marker `{marker}`: {message}")]
    #[diagnostic(
        code(memorix::pins::bad_marker),
        help(
            "write a PEP 508 marker, e.g. sys_platform == 'linux'; if the file is generated, regenerate it"
        )
    )]
    BadMarker {
        at: String,
        marker: String,
        message: String,
        #[source_code]
        src: Option<NamedSource<Quoted>>,
        #[label("here")]
        span: Option<SourceSpan>,
    },

    #[error("[pins] markers: {message}")]
    #[diagnostic(code(memorix::pins::bad_target), help("{help}"))]
    BadTarget { message: String, help: String },
}

/// One pin shown as part of an error about several pins.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{at}: {what}")]
pub struct PinSite {
    /// `file:line`.
    pub at: String,
    /// `name version`, with its source and markers.
    pub what: String,
    #[source_code]
    pub src: Option<NamedSource<Quoted>>,
    #[label("pinned here")]
    pub span: Option<SourceSpan>,
}

/// Where something is in a pin file: its display name, text (when read) and 1-based line.
pub(crate) struct Loc<'a> {
    pub name: &'a str,
    pub text: Option<&'a str>,
    pub line: usize,
}

impl Loc<'_> {
    /// `file:line`, or just `file` when the line is unknown (0).
    pub fn at(&self) -> String {
        if self.line == 0 { self.name.to_string() } else { format!("{}:{}", self.name, self.line) }
    }

    /// The source and span for miette: the whole line.
    pub fn source(&self) -> (Option<NamedSource<Quoted>>, Option<SourceSpan>) {
        let Some(text) = self.text else { return (None, None) };
        let Some(line) = line_span(text, self.line) else { return (None, None) };
        let span = Quoted::cut(line.offset()..line.offset() + line.len());
        (Some(NamedSource::new(self.name, Quoted::new(text))), Some(span))
    }
}

/// The byte range of 1-based `line` in `text`, without its line break.
fn line_span(text: &str, line: usize) -> Option<SourceSpan> {
    if line == 0 {
        return None;
    }
    let mut start = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return Some((start, l.trim_end_matches(['\n', '\r']).len()).into());
        }
        start += l.len();
    }
    None
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1
}

/// An error for a syntax or structure problem at byte range `span` of a lockfile.
pub(crate) fn syntax(
    name: &str,
    text: &str,
    span: Option<std::ops::Range<usize>>,
    what: &'static str,
    message: &str,
    help: &str,
) -> PinError {
    let line = span.as_ref().map_or(0, |s| line_of(text, s.start));
    let at = Loc { name, text: Some(text), line }.at();
    let src = Some(NamedSource::new(name, Quoted::new(text)));
    let span = span.map(Quoted::cut);
    PinError::Syntax { at, what, message: cap_message(message), help: help.to_string(), src, span }
}

/// A parser's message cut to 300 characters (some quote the input).
fn cap_message(message: &str) -> String {
    let line = message.trim_end();
    match line.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// `text` (a TOML lockfile named `name`, of kind `what`) deserialized, or a syntax error at
/// the span the parser names.
pub(crate) fn from_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    name: &str,
    what: &'static str,
    help: &str,
) -> Result<T> {
    if let Some(at) = crate::confine::toml_too_deep(text) {
        let message = format!("nests deeper than {} levels", crate::confine::MAX_NESTING);
        return Err(syntax(name, text, Some(at..at + 1), what, &message, help).into());
    }
    toml::from_str(text).map_err(|e| syntax(name, text, e.span(), what, e.message(), help).into())
}

/// [`syntax`] at 1-based `line` (a YAML parser's position) rather than a byte range.
pub(crate) fn syntax_at_line(
    name: &str,
    text: &str,
    line: usize,
    what: &'static str,
    message: &str,
    help: &str,
) -> PinError {
    let start = line_start(text, line);
    syntax(name, text, Some(start..start), what, message, help)
}

/// The error for a lockfile whose format version (at byte range `span`) is newer than memorix reads.
pub(crate) fn unsupported(
    name: &str,
    text: &str,
    span: std::ops::Range<usize>,
    what: String,
    help: String,
) -> PinError {
    let loc = Loc { name, text: Some(text), line: line_of(text, span.start) };
    let (src, _) = loc.source();
    let span = Some((span.start, span.end.saturating_sub(span.start)).into());
    PinError::UnsupportedVersion { at: loc.at(), what, help, src, span }
}

/// An error when `version` (a `"major.minor"` format version such as poetry's `lock-version`)
/// is newer than `newest_major`, the newest major this reader knows; `what` names the field.
pub(crate) fn check_major(
    name: &str,
    text: &str,
    version: Option<&toml::Spanned<String>>,
    newest_major: u64,
    what: &str,
) -> Result<()> {
    let Some(v) = version else { return Ok(()) };
    let major = v.get_ref().split('.').next().and_then(|m| m.parse::<u64>().ok());
    if major.is_some_and(|m| m <= newest_major) {
        return Ok(());
    }
    let help = format!("this memorix reads {what} {newest_major}.x; upgrade memorix");
    Err(unsupported(name, text, v.span(), format!("{what} {}", v.get_ref()), help).into())
}

/// The byte offset where 1-based `line` of `text` starts.
pub(crate) fn line_start(text: &str, line: usize) -> usize {
    let start: usize = text.split_inclusive('\n').take(line.saturating_sub(1)).map(str::len).sum();
    start.min(text.len())
}

/// Help for an I/O failure reading a pin file.
fn read_help(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::NotFound => {
            "check the path in [pins] files in memorix.toml (it is relative to the project)"
        }
        io::ErrorKind::PermissionDenied => "check the permissions of the file",
        _ => "check the file and retry",
    }
}

/// An error reading the pin file `path`, shown as `name`.
pub(crate) fn read_error(name: &str) -> impl FnOnce(io::Error) -> PinError + '_ {
    move |source| PinError::Read { path: name.to_string(), help: read_help(&source), source }
}
