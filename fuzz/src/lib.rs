//! What every fuzz target checks besides "no panic": an error must render the way the CLI
//! prints it (a span that miette cannot show would panic for the user too), and a pin file
//! that parses must also resolve cleanly, with and without a declared marker target.

use std::collections::BTreeMap;
use std::path::Path;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme};

/// Renders `err` as `memorix` prints it on stderr (graphical, no colour, no wrapping).
pub fn render(err: &dyn Diagnostic) -> String {
    let mut out = String::new();
    GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .with_wrap_lines(false)
        .render_report(&mut out, err)
        .expect("rendering into a String cannot fail");
    assert!(!err.to_string().is_empty(), "an error without a message");
    out
}

/// The 1-based number of lines of `text`, as a pin's `line` counts them.
fn line_count(text: &str) -> usize {
    text.lines().count().max(1)
}

/// The target a project may declare in `[pins] markers`.
fn declared_target() -> BTreeMap<String, String> {
    [("sys_platform", "linux"), ("python_version", "3.11"), ("platform_machine", "x86_64")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Parses the pin file `file` inside `dir` (the project) and resolves the first few libraries
/// it names; every outcome must be a value or a renderable error.
pub fn check_pin_file(dir: &Path, file: &str) {
    let path = dir.join(file);
    let parsed = match memorix::pins::parse_file(&path) {
        Ok(parsed) => parsed,
        Err(e) => {
            render(&*e);
            return;
        }
    };
    assert_eq!(parsed.path, path);
    let every = || parsed.pins.iter().chain(&parsed.unpinned).chain(&parsed.unversioned);
    for pin in every() {
        // A file with a UTF-16 or UTF-32 byte-order mark is decoded, which this read refuses.
        let Ok(text) = std::fs::read_to_string(&pin.file) else { continue };
        assert!(pin.line <= line_count(&text), "{pin:?} is past the end of its file");
    }
    let mut names: Vec<&str> = every().map(|p| p.name.as_str()).collect();
    names.dedup();
    for markers in [BTreeMap::new(), declared_target()] {
        let pins = match memorix::pins::Pins::load(dir, &[file.to_string()], &markers) {
            Ok(pins) => pins,
            Err(e) => {
                render(&*e);
                continue;
            }
        };
        for name in names.iter().take(8) {
            match pins.resolve(name, None) {
                Ok(r) => {
                    assert_eq!(r.file, file);
                    assert!(r.version.starts_with(&r.docs_version), "{r:?}");
                }
                Err(e) => {
                    render(&*e);
                }
            }
        }
    }
}

/// A project directory kept for the whole run: a fresh one per input would cost more than
/// most inputs take to parse.
pub fn project() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temp dir")).path()
}

/// Writes `data` to `file` in the project and checks it as a pin file.
pub fn check_pin_bytes(file: &str, data: &[u8]) {
    std::fs::write(project().join(file), data).expect("write the pin file");
    check_pin_file(project(), file);
}
