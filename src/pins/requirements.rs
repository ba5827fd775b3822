//! pip requirements files: `name==version` pins, with `-r`/`-c` includes, `--hash` options,
//! markers, extras, comments and line continuations.
//!
//! These files are often hand-written, so a line memorix cannot read is skipped rather than
//! refused: only the library a mount asks for has to make sense
//! (book: design/versions.md#which-pin-a-mount-follows).

use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use pep440_rs::Operator;
use pep508_rs::{ExtraName, PackageName, VersionOrUrl};

use super::error::Result;
use super::error::{Loc, PinError};
use super::{Pin, PinFile, PinnedArtifact, text};
use crate::confine::Confined;

/// Parses the requirements file `text` (shown as `name`) and the files it includes.
pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let path = file.path.clone();
    let project = project_root(&path, name).and_then(|root| Confined::new(&root).ok());
    let mut walk = Walk { chain: Vec::new(), seen: Vec::new(), file, project };
    walk.text(&path, name, text)
}

/// The project a pin file listed as `name` (project-relative) lies in: `path` less the
/// components of `name`. `None` for a file parsed on its own, named by its full path.
fn project_root(path: &Path, name: &str) -> Option<PathBuf> {
    let rel = Path::new(name);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) || !path.ends_with(rel) {
        return None;
    }
    path.ancestors().nth(rel.components().count()).map(Path::to_path_buf)
}

/// Reading a requirements file and, depth first, the files it includes.
struct Walk<'f> {
    /// The project includes are confined to (a hostile `-r` may name any file).
    project: Option<Confined>,
    /// The include chain being read: (canonical path, display name).
    chain: Vec<(PathBuf, String)>,
    /// Every file read so far; a file included twice (not in a cycle) is read once.
    seen: Vec<PathBuf>,
    file: &'f mut PinFile,
}

impl Walk<'_> {
    fn text(&mut self, path: &Path, name: &str, text: &str) -> Result<()> {
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        self.seen.push(canonical.clone());
        self.chain.push((canonical, name.to_string()));
        for (line, content) in logical_lines(text) {
            match classify(&content) {
                Line::Include(target) => self.include(path, name, text, line, target)?,
                Line::Other => {}
                Line::Url(url) => self.url(path, line, url),
                Line::Requirement(spec) => self.requirement(path, line, spec, hashes(&content)),
            }
        }
        self.chain.pop();
        Ok(())
    }

    fn include(&mut self, from: &Path, from_name: &str, text: &str, line: usize, target: &str) -> Result<()> {
        // A remote include cannot be read without the network, which resolving never uses.
        if target.contains("://") {
            return Ok(());
        }
        let path = from.parent().unwrap_or(Path::new("")).join(target);
        let name = display_join(from_name, target);
        let loc = Loc { name: from_name, text: Some(text), line };
        if let Some(why) = self.outside(target, &name, &path) {
            let (src, span) = loc.source();
            let including = from_name.to_string();
            return Err(
                PinError::IncludeOutside { at: loc.at(), include: name, why, including, src, span }.into()
            );
        }
        if !path.is_file() {
            let (src, span) = loc.source();
            return Err(PinError::MissingInclude {
                at: loc.at(),
                include: name,
                including: from_name.to_string(),
                src,
                span,
            }
            .into());
        }
        let canonical = path.canonicalize().unwrap_or_else(|_| path.clone());
        if let Some(start) = self.chain.iter().position(|(p, _)| *p == canonical) {
            let mut names: Vec<&str> = self.chain[start..].iter().map(|(_, n)| n.as_str()).collect();
            names.push(&name);
            let (src, span) = loc.source();
            return Err(PinError::IncludeCycle { at: loc.at(), chain: names.join(" -> "), src, span }.into());
        }
        if self.seen.contains(&canonical) {
            return Ok(());
        }
        self.file.includes.push(name.clone());
        let included = text::read(&path, &name)?;
        self.text(&path, &name, &included)
    }

    /// Why an include leaves the project, if it does: an absolute path, `..` out of it (by
    /// `name`, the include folded against the project-relative name of its includer), or a
    /// link whose target lies outside.
    fn outside(&self, target: &str, name: &str, path: &Path) -> Option<String> {
        if Path::new(target).has_root() {
            return Some("is an absolute path".into());
        }
        let project = self.project.as_ref()?;
        if Path::new(name).components().next() == Some(Component::ParentDir) {
            return Some("climbs out of the project with `..`".into());
        }
        let real = path.canonicalize().ok()?;
        (!real.starts_with(project.real())).then(|| {
            format!("is, or passes through, a link leading out of the project (to {})", real.display())
        })
    }

    /// A URL or VCS line that names its package with `#egg=NAME` (`==VERSION` may follow):
    /// no registry release, but worth naming when that package is asked for.
    fn url(&mut self, path: &Path, line: usize, url: &str) {
        let Some((_, egg)) = url.split_once("#egg=") else { return };
        let egg = egg.split('&').next().unwrap_or(egg);
        let name = egg.split(['=', '[', '<', '>', '!', '~']).next().unwrap_or(egg);
        if PackageName::new(name.to_string()).is_ok() {
            self.file.unpinned.push(Pin::new(name, &format!("@ {url}"), path, line));
        }
    }

    fn requirement(&mut self, path: &Path, line: usize, spec: &str, artifacts: Vec<PinnedArtifact>) {
        record(self.file, spec, path, line, artifacts);
    }
}

/// Records `spec` (a requirement without options) at `line` of `path` in `file`, with the
/// `artifacts` its line lists, if it names a package.
pub(super) fn record(
    file: &mut PinFile,
    spec: &str,
    path: &Path,
    line: usize,
    artifacts: Vec<PinnedArtifact>,
) {
    match requirement(spec, path, line) {
        Some(Requirement::Pinned(pin)) => file.pins.push(Pin { artifacts, ..pin }),
        Some(Requirement::Unpinned(pin)) => file.unpinned.push(pin),
        None => {}
    }
}

/// A PEP 508 requirement read as a pin (`name==version`), or as a package named without one.
enum Requirement {
    Pinned(Pin),
    /// `version` holds the specifier (`>=0.23`), `@ URL`, or nothing for a bare name.
    Unpinned(Pin),
}

/// `spec` (a requirement without options) at `line` of `path`, when it names a package;
/// anything else (a bare path or URL, a typo) is `None`, since it cannot be a requested library.
fn requirement(spec: &str, path: &Path, line: usize) -> Option<Requirement> {
    let name: String =
        spec.chars().take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')).collect();
    if !identifiers_are_valid(spec, &name) {
        return None;
    }
    let req = pep508_rs::Requirement::<pep508_rs::VerbatimUrl>::from_str(spec).ok()?;
    let mut pin = Pin::new(&name, "", path, line);
    pin.markers = spec.split_once(';').map(|(_, m)| m.trim().to_string()).filter(|_| !req.marker.is_true());
    pin.direct = true;
    let specs = match &req.version_or_url {
        Some(VersionOrUrl::VersionSpecifier(specs)) => specs,
        Some(VersionOrUrl::Url(url)) => {
            return Some(Requirement::Unpinned(Pin { version: format!("@ {url}"), ..pin }));
        }
        None => return Some(Requirement::Unpinned(pin)),
    };
    match specs.iter().find(|s| matches!(s.operator(), Operator::Equal | Operator::ExactEqual)) {
        Some(exact) => {
            let version = written_version(spec, exact.version())
                .map_or_else(|| exact.version().to_string(), str::to_string);
            Some(Requirement::Pinned(Pin { version, ..pin }))
        }
        None => Some(Requirement::Unpinned(Pin { version: specs.to_string(), ..pin })),
    }
}

/// The `--hash=sha256:<hex>` options of a requirement line (pip accepts any one of them).
fn hashes(line: &str) -> Vec<PinnedArtifact> {
    let mut out = Vec::new();
    let mut words = line.split_whitespace();
    while let Some(word) = words.next() {
        let value = match word.strip_prefix("--hash") {
            Some("") => words.next(),
            Some(rest) => rest.strip_prefix('='),
            None => None,
        };
        if let Some(hash) = value.filter(|h| h.contains(':')) {
            out.push(PinnedArtifact::hashed(hash));
        }
    }
    out
}

/// Whether the name and the extras of `spec` (whose name is `name`) are PEP 508 identifiers.
/// pep508_rs 0.9.2 panics, instead of failing, on a name or an extra that ends in `-`, `_` or
/// `.` when more text follows (`foo.'x`, `foo[cli-]`), so a line is checked before it is
/// parsed; such a line is no requirement, so skipping it is what pip-style leniency does.
fn identifiers_are_valid(spec: &str, name: &str) -> bool {
    if PackageName::new(name.to_string()).is_err() {
        return false;
    }
    let Some(extras) = spec[name.len()..].trim_start().strip_prefix('[') else { return true };
    let extras = extras.split(']').next().unwrap_or_default();
    extras.split(',').map(str::trim).filter(|e| !e.is_empty()).all(|e| ExtraName::new(e.to_string()).is_ok())
}

/// The pinned version as the line writes it (`1.0RC1`; the parsed form is `1.0rc1`): the
/// text after an `==` or `===` that parses to `parsed`.
fn written_version<'a>(spec: &'a str, parsed: &pep440_rs::Version) -> Option<&'a str> {
    let mut rest = spec.split(';').next()?;
    while let Some(at) = rest.find("==") {
        let after = rest[at + 2..].trim_start_matches('=').trim_start();
        let end = after.find(|c: char| c.is_whitespace() || matches!(c, ',' | ')')).unwrap_or(after.len());
        let text = &after[..end];
        if text.parse::<pep440_rs::Version>().is_ok_and(|v| v == *parsed) {
            return Some(text);
        }
        rest = &after[end..];
    }
    None
}

/// What one logical line of a requirements file is.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    /// `-r FILE` / `--requirement FILE` / `-c FILE` / `--constraint FILE`.
    Include(&'a str),
    /// A requirement, with any per-requirement options (`--hash`) cut off.
    Requirement(&'a str),
    /// A URL or VCS line without a name before it (`git+https://...#egg=name`), or an
    /// editable one (`-e git+https://...`).
    Url(&'a str),
    /// Blank, or an option that does not pin anything (`-e`, `--index-url`, `--pre`, ...).
    Other,
}

fn classify(line: &str) -> Line<'_> {
    let line = line.trim();
    if line.is_empty() {
        return Line::Other;
    }
    if let Some(url) = ["-e", "--editable"]
        .iter()
        .find_map(|o| line.strip_prefix(o))
        .filter(|r| r.starts_with([' ', '\t', '=']))
    {
        let url = url.trim_start_matches(['=', ' ', '\t']);
        return if url.contains("://") { Line::Url(url) } else { Line::Other };
    }
    if line.starts_with('-') {
        for (long, short) in [("--requirement", "-r"), ("--constraint", "-c")] {
            let value = match line.strip_prefix(long) {
                Some(rest) if rest.is_empty() || rest.starts_with(['=', ' ', '\t']) => Some(rest),
                Some(_) => None,
                None => line.strip_prefix(short).filter(|r| !r.starts_with('-')),
            };
            if let Some(value) = value {
                let value = value.trim_start_matches(['=', ' ', '\t']).trim().trim_matches(['"', '\'']);
                return if value.is_empty() { Line::Other } else { Line::Include(value) };
            }
        }
        return Line::Other;
    }
    // pip reads a line as arguments up to the first option (`--hash=...`, `--global-option`).
    let end = line
        .char_indices()
        .find(|&(i, c)| c == '-' && i > 0 && line[..i].ends_with([' ', '\t']))
        .map_or(line.len(), |(i, _)| i);
    let spec = line[..end].trim_end();
    let scheme = spec.split_once("://").map(|(s, _)| s);
    if scheme.is_some_and(|s| s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))) {
        Line::Url(spec)
    } else {
        Line::Requirement(spec)
    }
}

/// The file's logical lines with their first physical line number: continuations
/// (trailing `\`) joined, comments (`#` at the start or after whitespace) removed. A
/// comment line ends a continuation, as in pip (`pkg==1 \` then `# via ...`).
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let comment = raw.trim_start().starts_with('#');
        match raw.strip_suffix('\\') {
            Some(head) if !comment => pending.get_or_insert_with(|| (i + 1, String::new())).1.push_str(head),
            _ => match pending.take() {
                Some((start, mut joined)) => {
                    if !comment {
                        joined.push_str(raw);
                    }
                    out.push((start, joined));
                }
                None => out.push((i + 1, raw.to_string())),
            },
        }
    }
    out.extend(pending);
    for (_, line) in &mut out {
        let cut = line
            .char_indices()
            .find(|&(i, c)| c == '#' && (i == 0 || line[..i].ends_with(char::is_whitespace)))
            .map(|(i, _)| i);
        if let Some(i) = cut {
            line.truncate(i);
        }
    }
    out
}

/// `target` relative to the file named `from` (`requirements/dev.txt` + `docs.txt` ->
/// `requirements/docs.txt`), with `.` and `..` folded so that messages name files plainly.
fn display_join(from: &str, target: &str) -> String {
    let joined = Path::new(from).parent().unwrap_or(Path::new("")).join(target);
    let mut parts: Vec<Component> = Vec::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(parts.last(), Some(Component::Normal(_))) => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.iter().collect::<PathBuf>().display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_lines_join_and_a_comment_line_ends_them() {
        let text = "alembic==1.4.3 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb \\\n    # via -r main.in\namqp==2.6.1\n";
        let lines = logical_lines(text);
        assert_eq!(lines[0].0, 1);
        assert!(lines[0].1.starts_with("alembic==1.4.3"), "{lines:?}");
        assert!(lines[0].1.contains("--hash=sha256:bb"));
        assert_eq!(lines[1], (5, "amqp==2.6.1".to_string()));
    }

    #[test]
    fn comments_are_cut_but_not_a_hash_inside_a_url() {
        let lines = logical_lines("# full\nsix==1.16.0  # trailing\nfoo @ https://x.org/f.zip#egg=foo\n");
        assert_eq!(lines[0].1, "");
        assert_eq!(lines[1].1.trim(), "six==1.16.0");
        assert_eq!(lines[2].1, "foo @ https://x.org/f.zip#egg=foo");
    }

    #[test]
    fn include_and_option_lines_are_told_apart() {
        assert_eq!(classify("-r base.txt"), Line::Include("base.txt"));
        assert_eq!(classify("-rbase.txt"), Line::Include("base.txt"));
        assert_eq!(classify("--requirement=base.txt"), Line::Include("base.txt"));
        assert_eq!(classify("--requirement base.txt"), Line::Include("base.txt"));
        assert_eq!(classify("-c constraints.txt"), Line::Include("constraints.txt"));
        assert_eq!(classify("--constraint constraints.txt"), Line::Include("constraints.txt"));
        for option in [
            "-e ./editable[d,dev]",
            "--editable ./x",
            "--no-binary fred",
            "--only-binary wilma",
            "-i https://pypi.org/simple",
            "--index-url https://pypi.org/simple",
            "--extra-index-url https://download.pytorch.org/whl/cpu",
            "--find-links ./wheels",
            "--pre --extra-index-url https://pypi.nvidia.com",
            "--trusted-host example.org",
            "--requirements-are-not-an-option",
        ] {
            assert_eq!(classify(option), Line::Other, "{option}");
        }
    }

    #[test]
    fn hash_options_are_cut_from_a_requirement() {
        assert_eq!(
            classify("werkzeug==2.2.3 ; python_version >= \"3.8\" --hash=sha256:2e1c"),
            Line::Requirement("werkzeug==2.2.3 ; python_version >= \"3.8\"")
        );
        assert_eq!(
            classify("urllib3==1.26.15     --hash sha256:8a38"),
            Line::Requirement("urllib3==1.26.15")
        );
        assert_eq!(classify("python-dateutil==2.8.2"), Line::Requirement("python-dateutil==2.8.2"));
    }

    #[test]
    fn the_pinned_version_is_kept_as_written() {
        let v = |s: &str| s.parse::<pep440_rs::Version>().expect("version");
        assert_eq!(written_version("Django==1.0RC1", &v("1.0rc1")), Some("1.0RC1"));
        assert_eq!(
            written_version("torch==2.0.1+cu117; sys_platform == 'linux'", &v("2.0.1+cu117")),
            Some("2.0.1+cu117")
        );
        assert_eq!(written_version("attrs === 23.1.0", &v("23.1.0")), Some("23.1.0"));
        assert_eq!(written_version("x>=1,==1.2", &v("1.2")), Some("1.2"));
    }

    #[test]
    fn include_names_are_folded_relative_to_the_including_file() {
        assert_eq!(display_join("requirements/dev.txt", "docs.txt"), "requirements/docs.txt");
        assert_eq!(display_join("requirements/dev.txt", "../base.txt"), "base.txt");
        assert_eq!(display_join("dev.txt", "./sub/a.txt"), "sub/a.txt");
    }
}
