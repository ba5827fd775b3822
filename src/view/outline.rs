//! The outline of a delivered file, for the indexes (book: design/delivery.md#titles): the
//! headings of Markdown (read by CommonMark) and reStructuredText (read by its underlines),
//! and the one-line description a package manifest gives of its library. Code and
//! configuration files have no title: a comment there (Cargo's generated-file banner, a row
//! of dashes in `conf.py`) is not a heading.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The headings (up to level 3) of the file at `path` holding `text`, as (level, text); a
/// package manifest's one heading is its description.
pub fn headings(path: &str, text: &str) -> Vec<(usize, String)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    if let Some(d) = description(name, text) {
        return vec![(1, d)];
    }
    let lower = name.to_ascii_lowercase();
    match lower.rsplit_once('.').map(|(_, ext)| ext) {
        Some("md" | "markdown" | "mdx") => markdown(text),
        Some("rst" | "txt") => rst(text),
        None if lower.starts_with("readme") => markdown(text),
        _ => Vec::new(),
    }
}

/// The description a package manifest named `name` gives: `description` of Cargo.toml's
/// `[package]`, pyproject.toml's `[project]` and package.json, `Summary` of PKG-INFO and a
/// wheel's METADATA (email headers). Whitespace runs are one space; empty and `UNKNOWN` (what
/// old setuptools wrote) are none.
pub fn description(name: &str, text: &str) -> Option<String> {
    let toml_str = |table: &str| -> Option<String> {
        let doc: toml::Table = toml::from_str(text).ok()?;
        Some(doc.get(table)?.get("description")?.as_str()?.to_string())
    };
    let found = match name {
        "Cargo.toml" => toml_str("package")?,
        "pyproject.toml" => toml_str("project")?,
        "package.json" => {
            let json: serde_json::Value = serde_json::from_str(text).ok()?;
            json.get("description")?.as_str()?.to_string()
        }
        "PKG-INFO" | "METADATA" => {
            use mailparse::MailHeaderMap;
            let (headers, _) = mailparse::parse_headers(text.as_bytes()).ok()?;
            headers.get_first_value("Summary")?
        }
        _ => return None,
    };
    let line = found.split_whitespace().collect::<Vec<_>>().join(" ");
    (!line.is_empty() && line != "UNKNOWN").then_some(line)
}

/// ATX and setext headings, front matter skipped; a heading's text without its markup.
fn markdown(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for event in Parser::new_ext(text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => current = Some((depth(level), String::new())),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, s)) = current.as_mut() {
                    s.push_str(&t);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, s)) = current.as_mut() {
                    s.push(' ');
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, s)) = current.take()
                    && level <= 3
                    && !s.trim().is_empty()
                {
                    out.push((level, s.split_whitespace().collect::<Vec<_>>().join(" ")));
                }
            }
            _ => {}
        }
    }
    out
}

fn depth(level: HeadingLevel) -> usize {
    level as usize
}

/// reStructuredText section titles: a line underlined (and maybe overlined) by a rule of one
/// punctuation character at least as long; levels in the order the styles first appear.
fn rst(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let mut styles: Vec<(char, bool)> = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        let over = rule(lines[i]);
        let (title, under, overlined, step) = match over {
            Some(_) if i + 2 < lines.len() && rule(lines[i + 2]) == over && rule(lines[i + 1]).is_none() => {
                (lines[i + 1].trim(), lines[i + 2], true, 3)
            }
            None if !lines[i].starts_with(char::is_whitespace) && !lines[i].starts_with("..") => {
                (lines[i], lines[i + 1], false, 2)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let fits = overlined || under.chars().count() >= title.chars().count();
        match rule(under) {
            Some(c) if fits && !title.is_empty() => {
                let style = (c, overlined);
                let level = match styles.iter().position(|s| *s == style) {
                    Some(p) => p + 1,
                    None => {
                        styles.push(style);
                        styles.len()
                    }
                };
                if level <= 3 {
                    out.push((level, title.to_string()));
                }
                i += step;
            }
            _ => i += 1,
        }
    }
    out
}

/// The character of a line made of one punctuation character repeated (at least twice).
fn rule(line: &str) -> Option<char> {
    let mut chars = line.chars();
    let c = chars.next()?;
    let punct = "=-`:'\"~^_*+#<>.".contains(c);
    (punct && line.len() >= 2 && chars.all(|d| d == c)).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_and_comment_rules_are_no_titles() {
        let cargo = "# THIS FILE IS AUTOMATICALLY GENERATED BY CARGO\n#\n[package]\nname = \"http\"\n\
                     description = \"\"\"\nA set of types for representing HTTP requests\nand responses.\n\"\"\"\n";
        assert_eq!(
            headings("Cargo.toml", cargo),
            [(1, "A set of types for representing HTTP requests and responses.".into())]
        );
        let conf = "# -------------------------------------\n# Configuration\nproject = 'x'\n";
        assert_eq!(headings("docs/conf.py", conf), []);
        assert_eq!(headings("Cargo.toml", "# GENERATED\n[package]\nname = \"x\"\n"), []);
    }

    #[test]
    fn markdown_rst_and_metadata_titles() {
        assert_eq!(
            headings("a.md", "---\ntitle: x\n---\n\nSetext\n======\n\n## `Code` *em*\n"),
            [(1, "Setext".into()), (2, "Code em".into())]
        );
        let rst = "=====\nTitle\n=====\n\nIntro\n\nSection\n-------\n\n.. note::\n\n----\n";
        assert_eq!(headings("docs/index.rst", rst), [(1, "Title".into()), (2, "Section".into())]);
        let pkg = "Metadata-Version: 2.1\nName: httpx\nSummary: The next generation\n  HTTP client.\n\nBody";
        assert_eq!(headings("PKG-INFO", pkg), [(1, "The next generation HTTP client.".into())]);
        assert_eq!(
            description("package.json", r#"{"description": "semver\nparser"}"#),
            Some("semver parser".into())
        );
        assert_eq!(description("PKG-INFO", "Name: x\nSummary: UNKNOWN\n\n"), None);
    }
}
