//! `go.mod` (Go ecosystem): `require` lines and blocks are pins, direct unless marked
//! `// indirect`; `replace` directives swap a module for another module's version (that
//! version's docs serve) or for a local folder (no release). `go.sum` beside the file, when
//! present, gives each module version's `h1:` hash.

use std::collections::HashMap;
use std::path::Path;

use super::error::{Result, syntax};
use super::{Pin, PinFile, PinnedArtifact, text};

const HELP: &str = "fix the line, or run `go mod tidy` to write go.mod again";

/// A `require`: the module, its version, and whether the main module imports it itself.
struct Require<'t> {
    line: usize,
    module: &'t str,
    version: &'t str,
    direct: bool,
}

/// A `replace` directive: `old [version] => new [version]`.
struct Replace<'t> {
    version: Option<&'t str>,
    new: &'t str,
    new_version: Option<&'t str>,
}

pub(super) fn parse(text: &str, name: &str, file: &mut PinFile) -> Result<()> {
    let (requires, replaces) = directives(text, name)?;
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
    for r in requires {
        let replaced = replaces.get(r.module).and_then(|all| {
            all.iter()
                .find(|p| p.version == Some(r.version))
                .or_else(|| all.iter().find(|p| p.version.is_none()))
        });
        let mut pin = Pin::new(r.module, r.version, &file.path, r.line);
        pin.direct = r.direct;
        let fetched = match replaced {
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
            None => (r.module, r.version),
        };
        pin.artifacts = sums.get(&fetched).map(|h| vec![PinnedArtifact::hashed(h)]).unwrap_or_default();
        file.pins.push(pin);
    }
    Ok(())
}

type Directives<'t> = (Vec<Require<'t>>, HashMap<&'t str, Vec<Replace<'t>>>);

/// The `require` and `replace` directives of `text`, on their own lines or in blocks.
fn directives<'t>(text: &'t str, name: &str) -> Result<Directives<'t>> {
    let mut requires = Vec::new();
    let mut replaces: HashMap<&str, Vec<Replace>> = HashMap::new();
    let mut block: Option<&str> = None;
    let mut start = 0;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let span = start..start + raw.trim_end().len();
        start += raw.len();
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
        let bad = |what: &str| syntax(name, text, Some(span.clone()), "go.mod", what, HELP);
        match (verb, args) {
            ("require", [module, version]) => {
                let indirect = comment.trim() == "indirect" || comment.trim().starts_with("indirect;");
                requires.push(Require { line: i + 1, module: unquote(module), version, direct: !indirect });
            }
            ("require", _) => return Err(bad("a require line is `module version`").into()),
            ("replace", [old, rest @ ..]) => {
                let replace = replace(rest)
                    .ok_or_else(|| bad("a replace line is `module [version] => new [version]`"))?;
                replaces.entry(unquote(old)).or_default().push(replace);
            }
            _ => {}
        }
    }
    Ok((requires, replaces))
}

/// `[version] => new [version]`, the words of a replace line after the old module.
fn replace<'t>(rest: &[&'t str]) -> Option<Replace<'t>> {
    let (version, rest) = match rest {
        [v, "=>", rest @ ..] => (Some(*v), rest),
        ["=>", rest @ ..] => (None, rest),
        _ => return None,
    };
    match rest {
        [new] => Some(Replace { version, new: unquote(new), new_version: None }),
        [new, v] => Some(Replace { version, new: unquote(new), new_version: Some(*v) }),
        _ => None,
    }
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
