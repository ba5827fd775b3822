//! `go.mod` (Go ecosystem): `require` lines and blocks are pins, direct unless marked
//! `// indirect`; `replace` directives swap a module for another module's version (that
//! version's docs serve) or for a local folder (no release). `go.sum` beside the file, when
//! present, gives each module version's `h1:` hash.

use std::collections::HashMap;
use std::path::Path;

use super::error::{Result, syntax};
use super::{Pin, PinFile, PinnedArtifact, text};

const HELP: &str = "fix the line, or run `go mod tidy` to write go.mod again";

/// A `replace` directive: `old [version] => new [version]`.
struct Replace<'t> {
    version: Option<&'t str>,
    new: &'t str,
    new_version: Option<&'t str>,
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let mut requires: Vec<(usize, &str, &str, bool)> = Vec::new();
    let mut replaces: HashMap<&str, Vec<Replace>> = HashMap::new();
    let mut block: Option<&str> = None;
    let mut offset = 0;
    for (i, raw) in text.lines().enumerate() {
        let start = offset;
        offset += raw.len() + 1;
        let (code, comment) = raw.split_once("//").unwrap_or((raw, ""));
        let words: Vec<&str> = code.split_whitespace().collect();
        let (verb, args) = match (block, words.as_slice()) {
            (_, []) => continue,
            (Some(_), [")"]) => {
                block = None;
                continue;
            }
            (Some(verb), args) => (verb, args),
            (None, [verb, "("]) => {
                block = Some(verb);
                continue;
            }
            (None, [verb, args @ ..]) => (*verb, args),
        };
        let bad = |what: &str| syntax(name, text, Some(start..start + raw.len()), "go.mod", what, HELP);
        match (verb, args) {
            ("require", [module, version]) => {
                let indirect = comment.trim() == "indirect" || comment.trim().starts_with("indirect;");
                requires.push((i + 1, unquote(module), version, !indirect));
            }
            ("require", _) => return Err(bad("a require line is `module version`").into()),
            ("replace", [old, rest @ ..]) => {
                let (version, rest) = match rest {
                    [v, "=>", rest @ ..] => (Some(*v), rest),
                    ["=>", rest @ ..] => (None, rest),
                    _ => return Err(bad("a replace line is `module [version] => new [version]`").into()),
                };
                let (new, new_version) = match rest {
                    [new] => (unquote(new), None),
                    [new, v] => (unquote(new), Some(*v)),
                    _ => return Err(bad("a replace line is `module [version] => new [version]`").into()),
                };
                replaces.entry(unquote(old)).or_default().push(Replace { version, new, new_version });
            }
            _ => {}
        }
    }
    // go.sum confirms what go.mod requires: the hash of each module version's zip.
    let sum_path = file.path.with_file_name("go.sum");
    let sum_text = if sum_path.is_file() {
        let sum_name = Path::new(name).with_file_name("go.sum").display().to_string();
        let read = text::read(&sum_path, &sum_name)?;
        file.includes.push(sum_name);
        Some(read)
    } else {
        None
    };
    let sums = sum_text.as_deref().map(sum_lines).unwrap_or_default();
    for (line, module, version, direct) in requires {
        let replace = replaces.get(module).and_then(|r| {
            r.iter().find(|r| r.version == Some(version)).or_else(|| r.iter().find(|r| r.version.is_none()))
        });
        let mut pin = Pin::new(module, version, &file.path, line);
        pin.direct = direct;
        let (fetched, fetched_version) = match replace {
            // A folder on disk is the project's own code, not a release.
            Some(Replace { new, new_version: None, .. }) => {
                pin.source = Some(format!("replaced by {new}"));
                file.unversioned.push(Pin { version: String::new(), ..pin });
                continue;
            }
            Some(Replace { new, new_version: Some(v), .. }) => {
                pin.version = v.to_string();
                pin.source = Some(format!("replaced by {new} {v}"));
                (*new, *v)
            }
            None => (module, version),
        };
        pin.artifacts = sums
            .get(&(fetched, fetched_version))
            .map(|h| vec![PinnedArtifact::hashed(h)])
            .unwrap_or_default();
        file.pins.push(pin);
    }
    Ok(())
}

/// `"example.com/m"` -> `example.com/m` (go.mod may quote a module path).
fn unquote(word: &str) -> &str {
    word.trim_matches('"')
}

/// go.sum's `module version h1:hash` lines (not the `version/go.mod` ones).
fn sum_lines(text: &str) -> HashMap<(&str, &str), &str> {
    text.lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (module, version, hash) = (words.next()?, words.next()?, words.next()?);
            (!version.ends_with("/go.mod")).then_some(((module, version), hash))
        })
        .collect()
}
