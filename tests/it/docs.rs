//! Runs every ```console block in README.md and book/src/*.md, so the docs cannot drift.
//!
//! Each file runs in a fresh sandbox (its own store and project directory; the README's also
//! holds a copy of examples/). A block is a sequence of `$ command` lines, each followed by
//! its expected output as a terminal shows it (stdout and stderr in the order written: both
//! go to one pipe). `? N` after the output expects exit code N
//! (default 0). In expected output, a line `...` matches any number of lines and `[..]`
//! matches any text within a line. `cargo run --release --` runs this build's memorix;
//! `cargo test` is what runs this test, so it is not run again, and `cargo install` is
//! skipped (this build's memorix is on PATH). `MEMORIX_BLESS_DOCS=1`
//! rewrites the expected outputs with what the commands print (then review the diff).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Step {
    command: String,
    expected: Vec<String>,
    code: i32,
    line: usize,
    /// Lines of the file (0-based, end exclusive) holding the expected output and `? N`.
    span: (usize, usize),
}

fn blocks(text: &str) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut current: Option<Vec<Step>> = None;
    for (n, line) in text.lines().enumerate() {
        match (&mut current, line.trim_end()) {
            (None, "```console") => current = Some(Vec::new()),
            (Some(_), "```") => out.push(current.take().expect("in a block")),
            (Some(steps), l) => {
                if let Some(cmd) = l.strip_prefix("$ ") {
                    let step = Step {
                        command: cmd.to_string(),
                        expected: Vec::new(),
                        code: 0,
                        line: n + 1,
                        span: (n + 1, n + 1),
                    };
                    steps.push(step);
                } else if let (Some(code), Some(step)) = (l.strip_prefix("? "), steps.last_mut()) {
                    step.code = code.trim().parse().expect("`? N` takes an exit code");
                    step.span.1 = n + 1;
                } else if let Some(step) = steps.last_mut() {
                    step.expected.push(l.to_string());
                    step.span.1 = n + 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// `expected` (with `...` and `[..]`) against `actual`.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|i| matches(rest, &actual[i..])),
        Some((e, rest)) => {
            actual.split_first().is_some_and(|(a, more)| line_matches(e, a) && matches(rest, more))
        }
    }
}

fn line_matches(expected: &str, actual: &str) -> bool {
    let parts: Vec<&str> = expected.split("[..]").collect();
    if parts.len() == 1 {
        return expected == actual;
    }
    let mut rest = actual;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            let Some(at) = rest.find(p) else { return false };
            rest = &rest[at + p.len()..];
        }
    }
    true
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() == ".memory" || e.file_name() == ".memorix" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// How much of a page runs. A build without the shared corpus (which ignores the tests that
/// read it, see build.rs) runs the blocks before the marker; the test that runs the rest is
/// then ignored, so `cargo test` shows that they did not run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    BeforeRegistry,
    All,
}

const PART: Part = if cfg!(memorix_no_corpus) { Part::BeforeRegistry } else { Part::All };

/// The registries a page's commands reach: a local one serving the corpus's real artifacts
/// (the fetching chapter fetches from it), else a closed port, so no block reaches the network.
fn registries(part: Part) -> (Option<common::registry::Registry>, Vec<(&'static str, String)>) {
    if part == Part::All {
        let reg = common::registry::Registry::serve(&common::corpus("registry"));
        let env = reg.env();
        return (Some(reg), env);
    }
    let closed = "http://127.0.0.1:9/".to_string();
    let vars = ["MEMORIX_CRATES_INDEX", "MEMORIX_PYPI_INDEX", "MEMORIX_NPM_REGISTRY"];
    (None, vars.into_iter().map(|v| (v, closed.clone())).collect())
}

/// Where a page starts fetching from the registries it says so; the blocks from that line on
/// need the corpus.
const NEEDS_REGISTRY: &str = "<!-- docs test: serves the corpus registry -->";

fn run_file(doc: &Path, with_examples: bool, part: Part) -> usize {
    let text = fs::read_to_string(doc).unwrap();
    let (_registry, registry_env) = registries(part);
    let runnable = match text.lines().position(|l| l.trim() == NEEDS_REGISTRY) {
        Some(at) if part == Part::BeforeRegistry => at + 1,
        _ => usize::MAX,
    };
    let sandbox = common::tempdir();
    let root = sandbox.path().canonicalize().unwrap();
    let project = root.join("project");
    fs::create_dir_all(&project).unwrap();
    if with_examples {
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples"), &project.join("examples"));
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_memorix"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    // The README runs as a newcomer would, with the default Store (under XDG_DATA_HOME); the
    // book names its Store with MEMORIX_STORE, as its first page says.
    let (store_var, store_dir) = match doc.file_name().is_some_and(|n| n == "README.md") {
        true => ("XDG_DATA_HOME", root.join("data")),
        false => ("MEMORIX_STORE", root.join("store")),
    };
    let mut ran = 0;
    let bless = std::env::var_os("MEMORIX_BLESS_DOCS").is_some();
    let mut blessed: Vec<((usize, usize), Vec<String>)> = Vec::new();
    for block in blocks(&text) {
        for step in block.into_iter().take_while(|s| s.line <= runnable) {
            // `cargo test` is this test; `cargo install` would put this build's memorix on PATH,
            // which the sandbox's PATH already does.
            if step.command.starts_with("cargo test") || step.command.starts_with("cargo install") {
                continue;
            }
            let command = step.command.replace("cargo run --release --", "memorix");
            // One pipe for both streams, as a terminal interleaves them.
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("exec 2>&1\n{command}"))
                .current_dir(&project)
                .env_clear()
                .env("PATH", &path)
                .env("HOME", root.join("home"))
                .env(store_var, &store_dir)
                .env("NO_COLOR", "1")
                .env("SOURCE_DATE_EPOCH", "1767225600")
                .envs(registry_env.iter().map(|(k, v)| (k, v)))
                .output()
                .unwrap();
            let combined = String::from_utf8_lossy(&out.stdout).replace(root.to_str().unwrap(), "[ROOT]");
            // Trailing whitespace and trailing blank lines do not count (editors strip them).
            let mut actual: Vec<&str> = combined.lines().map(str::trim_end).collect();
            while actual.last() == Some(&"") {
                actual.pop();
            }
            let mut expected = step.expected.clone();
            while expected.last().is_some_and(|l| l.is_empty()) {
                expected.pop();
            }
            let place = format!("{}:{}", doc.display(), step.line);
            if bless {
                let mut lines: Vec<String> = actual.iter().map(|l| l.to_string()).collect();
                if let Some(code) = out.status.code().filter(|c| *c != 0) {
                    lines.push(format!("? {code}"));
                }
                blessed.push((step.span, lines));
                ran += 1;
                continue;
            }
            assert_eq!(
                out.status.code(),
                Some(step.code),
                "{place}: `{}` exit code\n{combined}",
                step.command
            );
            assert!(
                matches(&expected, &actual),
                "{place}: `{}`\n--- expected\n{}\n--- actual\n{combined}",
                step.command,
                step.expected.join("\n")
            );
            ran += 1;
        }
    }
    if bless {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        for ((start, end), new) in blessed.into_iter().rev() {
            lines.splice(start..end, new);
        }
        fs::write(doc, lines.join("\n") + "\n").unwrap();
    }
    ran
}

#[test]
fn readme_console_blocks_run() {
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    assert!(run_file(&readme, true, PART) >= 1);
}

/// A newcomer copies the README top to bottom: its first block is the two set-up commands (the
/// demo, every test), `memorix` is installed before it is run, and the demo's first line (as
/// a terminal shows it) says where it put the Store.
#[test]
fn readme_installs_memorix_before_running_it_and_names_the_store() {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let first: Vec<String> = blocks(&text)[0].iter().map(|s| s.command.clone()).collect();
    assert_eq!(first.len(), 2, "{first:?}");
    assert!(first[1] == "cargo test --locked", "{first:?}");
    let steps: Vec<Step> = blocks(&text).into_iter().flatten().collect();
    let install = steps.iter().position(|s| s.command == "cargo install --locked --path .");
    let first_bare = steps.iter().position(|s| s.command.starts_with("memorix "));
    assert!(install.is_some() && install < first_bare, "install at {install:?}, memorix at {first_bare:?}");
    let demo = &steps[0];
    assert!(demo.command.starts_with("cargo run --release -- "), "{}", demo.command);
    assert!(demo.expected[0].starts_with("Created a Store at "), "{:?}", demo.expected);
}

#[test]
fn book_console_blocks_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src");
    let mut pages: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let ran: usize = pages.iter().map(|p| run_file(p, true, PART)).sum();
    assert!(ran >= 30, "the book shows the CLI ({ran} commands run)");
}

/// Without the corpus, the README's and the book's blocks from the marker on did not run in the
/// tests above; this one runs every block of those pages, and is ignored there.
#[cfg(memorix_no_corpus)]
#[test]
#[ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)"]
fn console_blocks_that_fetch_from_the_corpus_registry_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for page in ["README.md", "book/src/fetching.md", "book/src/changes.md"] {
        assert!(fs::read_to_string(root.join(page)).unwrap().contains(NEEDS_REGISTRY), "{page}");
        assert!(run_file(&root.join(page), true, Part::All) >= 1, "{page}");
    }
}

#[test]
fn the_matcher_is_strict() {
    let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&e(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(!matches(&e(&["a", "d"]), &["a", "b", "d"]));
    assert!(line_matches("id [..] at [..]", "id sha256:12 at 2026"));
    assert!(!line_matches("id [..] at", "id x in"));
}

/// The error codes in `text`: `memorix::` and the `::`-joined names after it.
fn codes_in(text: &str) -> BTreeSet<String> {
    text.match_indices("memorix::")
        .map(|(at, _)| {
            let rest = &text[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || "_:".contains(c)))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches(':').to_string()
        })
        .filter(|c| c.len() > "memorix::".len())
        .collect()
}

/// The text from `open` (just past an opening bracket) to its closing bracket, string
/// literals skipped.
fn bracketed(text: &str, open: usize, (left, right): (char, char)) -> &str {
    let (mut depth, mut in_string, mut escaped) = (1, false, false);
    for (i, c) in text[open..].char_indices() {
        match (in_string, c) {
            (true, _) if escaped => escaped = false,
            (true, '\\') => escaped = true,
            (true, '"') => in_string = false,
            (true, _) => {}
            (false, '"') => in_string = true,
            (false, c) if c == left => depth += 1,
            (false, c) if c == right => {
                depth -= 1;
                if depth == 0 {
                    return &text[open..open + i];
                }
            }
            _ => {}
        }
    }
    &text[open..]
}

/// Every error code `src/` defines, and whether it has a `help`: a code in a
/// `#[diagnostic(...)]` attribute when the attribute has `help(...)`; a code chosen at run
/// time (a `"memorix::..."` string) when every `Diagnostic::help` of its file always answers.
/// Test modules (`#[cfg(test)]` on, `tests.rs`) define none.
fn source_codes() -> BTreeMap<String, bool> {
    let mut codes: BTreeMap<String, bool> = BTreeMap::new();
    let files = common::walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    for file in files.iter().filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("tests.rs"))
    {
        let whole = fs::read_to_string(file).unwrap();
        let text = whole.split("#[cfg(test)]").next().unwrap();
        for (at, _) in text.match_indices("#[diagnostic(") {
            let attr = bracketed(text, at + "#[diagnostic(".len(), ('(', ')'));
            for code in codes_in(attr) {
                *codes.entry(code).or_default() |= attr.contains("help(");
            }
        }
        let answers = text.match_indices("fn help<'a>").count() > 0
            && text.match_indices("fn help<'a>").all(|(at, _)| {
                let body = bracketed(text, at + text[at..].find('{').unwrap() + 1, ('{', '}'));
                body.trim_start().starts_with("Some(")
            });
        for (at, _) in text.match_indices("\"memorix::") {
            let literal = bracketed(text, at + 1, ('"', '"'));
            for code in codes_in(literal) {
                *codes.entry(code).or_default() |= answers;
            }
        }
    }
    codes
}

/// The troubleshooting page lists every error code memorix defines and no other, and every
/// code has a `help:` (what to do), as the page promises.
#[test]
fn the_troubleshooting_page_lists_every_error_code_and_each_has_help() {
    let codes = source_codes();
    assert!(codes.len() > 150, "{} codes found in src/", codes.len());
    let page = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("book/src/troubleshooting.md"))
        .unwrap();
    let listed = codes_in(&page);
    let defined: BTreeSet<String> = codes.keys().cloned().collect();
    let unlisted: Vec<&String> = defined.difference(&listed).collect();
    assert!(unlisted.is_empty(), "codes troubleshooting.md does not list: {unlisted:?}");
    let unknown: Vec<&String> = listed.difference(&defined).collect();
    assert!(unknown.is_empty(), "codes troubleshooting.md lists that src/ does not define: {unknown:?}");
    let without: Vec<&String> = codes.iter().filter(|(_, help)| !**help).map(|(c, _)| c).collect();
    assert!(without.is_empty(), "codes without a help: {without:?}");
}

/// The reason a corpus test shows in `cargo test` when the corpus is absent; the README names it.
const CORPUS_REASON: &str = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)";

/// The functions of a test file that reach the corpus: those that call `corpus(`, and those
/// that call one of them.
fn reaching_corpus(text: &str) -> Vec<(String, &str, &str)> {
    let fns: Vec<(String, &str, &str)> = text
        .match_indices("\nfn ")
        .map(|(at, _)| {
            let name: String =
                text[at + 4..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let attrs = text[..at].rsplit("\n\n").next().unwrap_or_default();
            let body = &text[at + 4..];
            let body = &body[..body.find("\n}\n").unwrap_or(body.len())];
            (name, attrs, body)
        })
        .collect();
    let mut reach: Vec<String> = vec!["corpus".into()];
    loop {
        let more: Vec<String> = fns
            .iter()
            .filter(|(n, _, b)| !reach.contains(n) && reach.iter().any(|r| b.contains(&format!("{r}("))))
            .map(|(n, _, _)| n.clone())
            .collect();
        if more.is_empty() {
            break;
        }
        reach.extend(more);
    }
    fns.into_iter().filter(|(n, _, _)| reach.contains(n)).collect()
}

/// Without the shared corpus, every test that reads it shows as ignored with a reason (build.rs
/// sets `memorix_no_corpus`), never as passed: each such test carries the gate, the build
/// agrees with where the corpus is (or was told to require it), and the README names it.
#[test]
fn tests_that_read_the_corpus_are_visibly_ignored_without_it() {
    let gate = format!("#[cfg_attr(memorix_no_corpus, ignore = \"{CORPUS_REASON}\")]");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut gated = 0;
    for file in common::walk(&dir).iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        let text = fs::read_to_string(file).unwrap();
        // The docs pages run what they can without it (`PART`); a test stands for the rest.
        let tests = reaching_corpus(&text)
            .into_iter()
            .filter(|(_, a, b)| a.contains("#[test]") && !b.contains("PART)"));
        for (name, attrs, _) in tests {
            let ignored =
                attrs.contains(&gate) || attrs.contains(&format!("#[ignore = \"{CORPUS_REASON}\"]"));
            assert!(ignored, "{}: {name} reads the corpus without `{gate}`", file.display());
            gated += 1;
        }
    }
    assert!(gated >= 40, "{gated} corpus tests");
    let corpus = std::env::var_os("MEMORIX_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let required = std::env::var_os("MEMORIX_REQUIRE_CORPUS").is_some_and(|v| v == "1");
    assert_eq!(
        cfg!(memorix_no_corpus),
        !corpus.is_dir() && !required,
        "this build's corpus gate is stale ({} appeared or went since): `touch build.rs` and test again",
        corpus.display()
    );
    let readme = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(readme.contains("`ignored, needs the shared corpus`"), "the README names the skip");
}
