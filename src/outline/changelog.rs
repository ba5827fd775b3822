//! A library's changelog cut at its version headings (book: design/outlines.md#changelog):
//! the top-level `CHANGELOG`, `CHANGES`, `HISTORY` or `NEWS` file, in Markdown (headings read
//! with pulldown-cmark) or reStructuredText (a title over an underline of one punctuation
//! character). An entry is a heading that names a version, with the text up to the next
//! heading of its level or above.

use std::cmp::Ordering;

use serde::Serialize;

use super::Files;
use crate::model::version::{Scheme, compare, scheme_for};

/// One version's entry, its text as the library wrote it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub version: String,
    pub heading: String,
    pub body: String,
}

/// A heading: its level (1 is the top), text, where it starts and where its body starts.
struct Heading {
    level: usize,
    text: String,
    start: usize,
    body: usize,
}

/// What a changelog's name starts with.
pub const NAMES: &[&str] = &["changelog", "changes", "history", "news"];

/// The changelog among `files`, as (path, text): a top-level file named like one, Markdown
/// or reStructuredText, the shortest name first.
pub fn find<'a>(files: &Files<'a>) -> Option<(&'a str, &'a str)> {
    let mut found: Vec<&'a str> = files
        .keys()
        .copied()
        .filter(|p| !p.contains('/'))
        .filter(|p| {
            let lower = p.to_ascii_lowercase();
            let (stem, ext) = lower.split_once('.').unwrap_or((&lower, ""));
            NAMES.contains(&stem) && ["", "md", "markdown", "rst", "txt"].contains(&ext)
        })
        .collect();
    found.sort_by_key(|p| (p.len(), *p));
    let path = found.into_iter().next()?;
    Some((path, std::str::from_utf8(files[path]).ok()?))
}

/// The entries of a changelog, in its order.
pub fn entries(path: &str, text: &str) -> Vec<Entry> {
    let lower = path.to_ascii_lowercase();
    let headings =
        if lower.ends_with(".rst") || lower.ends_with(".txt") { rst(text) } else { markdown(text) };
    let versioned: Vec<(usize, String)> =
        headings.iter().enumerate().filter_map(|(i, h)| Some((i, version_in(&h.text)?))).collect();
    // The level most version headings are at: sub-headings that name one are not entries.
    let Some(level) = (1..=6).max_by_key(|l| {
        (versioned.iter().filter(|(i, _)| headings[*i].level == *l).count(), std::cmp::Reverse(*l))
    }) else {
        return Vec::new();
    };
    versioned
        .into_iter()
        .filter(|(i, _)| headings[*i].level == level)
        .map(|(i, version)| {
            let h = &headings[i];
            let end = headings[i + 1..].iter().find(|n| n.level <= level).map_or(text.len(), |n| n.start);
            Entry { version, heading: h.text.clone(), body: text[h.body..end.max(h.body)].trim().to_string() }
        })
        .collect()
}

/// The entries after `from` up to and including `to`, newest first; for a downgrade (`to`
/// below `from`), the entries after `to` up to `from`, oldest first: what is undone, in the
/// order it is undone.
pub fn between(entries: &[Entry], from: &str, to: &str) -> Vec<Entry> {
    let scheme = scheme_for([from, to]);
    let cmp = |a: &str, b: &str| compare(scheme_of(scheme, a, b), a, b);
    let down = cmp(to, from) == Some(Ordering::Less);
    let (lo, hi) = if down { (to, from) } else { (from, to) };
    let mut out: Vec<Entry> = entries
        .iter()
        .filter(|e| {
            cmp(&e.version, lo) == Some(Ordering::Greater) && cmp(&e.version, hi) != Some(Ordering::Greater)
        })
        .filter(|e| cmp(&e.version, hi).is_some())
        .cloned()
        .collect();
    out.sort_by(|a, b| cmp(&b.version, &a.version).unwrap_or(Ordering::Equal));
    out.dedup_by(|a, b| a.version == b.version);
    if down {
        out.reverse();
    }
    out
}

/// `scheme` when both parse under it, else the one they share.
fn scheme_of(scheme: Scheme, a: &str, b: &str) -> Scheme {
    crate::model::version::scheme_in(scheme, [a, b])
}

/// The version a heading names: among its first three words (`0.28.1 (6th December, 2024)`,
/// `Version 8.0.0`, `Mypy 1.20`, `[1.0.0]`, `Changes in 2.1`), the first with a dot in it, so
/// a year is not taken for one, nor a version a section's title mentions further on (`Drop
/// Support for Python 3.9`).
fn version_in(heading: &str) -> Option<String> {
    heading
        .split(|c: char| c.is_whitespace() || "[](),:;`*_".contains(c))
        .filter(|w| !w.is_empty())
        .take(3)
        .map(|w| w.strip_prefix(['v', 'V']).unwrap_or(w).trim_end_matches('.'))
        .find(|w| w.contains('.') && scheme_for([*w]) != Scheme::IngestOrder)
        .map(str::to_string)
}

/// Markdown headings (ATX and setext), by pulldown-cmark.
fn markdown(text: &str) -> Vec<Heading> {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out = Vec::new();
    let mut open: Option<(usize, usize, String)> = None;
    for (event, range) in Parser::new(text).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                open = Some((level as usize, range.start, String::new()))
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, s)) = open.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, start, text)) = open.take() {
                    out.push(Heading { level, text, start, body: range.end });
                }
            }
            _ => {}
        }
    }
    out
}

/// reStructuredText section titles: a line of text over a line of one punctuation character
/// at least as long (an overline of the same kind counts too); levels in the order the
/// styles first appear, as Docutils assigns them.
fn rst(text: &str) -> Vec<Heading> {
    let mut offsets = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        offsets.push((at, line.trim_end()));
        at += line.len();
    }
    let rule = |l: &str| {
        let c = l.chars().next()?;
        (l.len() >= 3 && c.is_ascii_punctuation() && l.chars().all(|x| x == c)).then_some(c)
    };
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut out = Vec::new();
    for i in 1..offsets.len() {
        let (start, title) = offsets[i - 1];
        let (under, line) = offsets[i];
        let Some(c) = rule(line) else { continue };
        let over = i >= 2 && rule(offsets[i - 2].1) == Some(c);
        // A title is as long as it shows (`—` is one character); only an overlined one may be
        // inset.
        if title.trim().is_empty()
            || (title.starts_with(' ') && !over)
            || rule(title).is_some()
            || line.chars().count() < title.trim().chars().count()
        {
            continue;
        }
        let style = (c, over);
        let level = match styles.iter().position(|s| *s == style) {
            Some(p) => p + 1,
            None => {
                styles.push(style);
                styles.len()
            }
        };
        let start = if over { offsets[i - 2].0 } else { start };
        out.push(Heading { level, text: title.trim().to_string(), start, body: under + line.len() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MD: &str = "# Changelog\n\n## 2.0.0 (2024)\n\n### Removed\n\n* `proxies`\n\n## 1.1.0\n\n* More.\n\n```\n## 0.9.0 in a fence\n```\n\n## [1.0.0] - 2023\n\n* First.\n";
    const RST: &str = "Changes\n=======\n\nVersion 2.0.0\n-------------\n\n-   Breaking.\n\nVersion 1.0\n-----------\n\n-   First.\n";

    fn versions(entries: &[Entry]) -> Vec<&str> {
        entries.iter().map(|e| e.version.as_str()).collect()
    }

    #[test]
    fn markdown_and_rst_are_cut_at_version_headings_of_one_level() {
        let md = entries("CHANGELOG.md", MD);
        assert_eq!(versions(&md), ["2.0.0", "1.1.0", "1.0.0"]);
        assert_eq!(md[0].body, "### Removed\n\n* `proxies`");
        assert!(md[1].body.contains("## 0.9.0 in a fence"), "a fenced line is no heading");
        let rst = entries("CHANGES.rst", RST);
        assert_eq!(versions(&rst), ["2.0.0", "1.0"]);
        assert_eq!(rst[0].heading, "Version 2.0.0");
        assert_eq!(rst[0].body, "-   Breaking.");
        // coverage's titles hold an em dash; build's are inset between over- and underlines.
        let coverage = "Version 7.10.6 — 2025-08-29\n---------------------------\n\n- Fix.\n\nVersion 7.10.5 — 2025-08-23\n---------------------------\n\n- Older.\n";
        assert_eq!(versions(&entries("CHANGES.rst", coverage)), ["7.10.6", "7.10.5"]);
        let build = "####################\n 1.5.0 (2026-04-30)\n####################\n\n**********\n Features\n**********\n\n- New.\n\n####################\n 1.4.4 (2026-04-22)\n####################\n\n- Fix.\n";
        let cut = entries("CHANGELOG.rst", build);
        assert_eq!(versions(&cut), ["1.5.0", "1.4.4"]);
        assert_eq!(cut[0].body, "**********\n Features\n**********\n\n- New.");
    }

    /// mypy's minor releases are `##` headings; its `###` sections mention versions too.
    #[test]
    fn a_section_title_mentioning_a_version_is_no_entry() {
        let mypy = "# Mypy Release Notes\n\n## Next Release\n\n## Mypy 1.20\n\n### Planned Changes to Defaults and Flags in Mypy 2.0\n\nA.\n\n### Drop Support for Python 3.9\n\nB.\n\n### Mypy 1.20.1\n\nC.\n\n## Mypy 1.19\n\n### Python 3.9 Support Ending Soon\n\nD.\n\n### Mypy 1.19.1\n\nE.\n\n## Mypy 1.18\n\nF.\n";
        let cut = entries("CHANGELOG.md", mypy);
        assert_eq!(versions(&cut), ["1.20", "1.19", "1.18"]);
        assert_eq!(versions(&between(&cut, "1.20.2", "1.19.1")), ["1.20"]);
    }

    #[test]
    fn between_takes_the_upgrade_newest_first_and_a_downgrade_reversed() {
        let md = entries("CHANGELOG.md", MD);
        assert_eq!(versions(&between(&md, "1.0.0", "2.0.0")), ["2.0.0", "1.1.0"]);
        assert_eq!(versions(&between(&md, "2.0.0", "1.0.0")), ["1.1.0", "2.0.0"]);
        assert!(between(&md, "2.0.0", "2.0.0").is_empty());
    }
}
