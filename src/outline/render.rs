//! `API.md` and `CHANGES.md` as Markdown. Names, signatures and doc lines come from the
//! library: each is one line, a signature a code span, a doc line escaped, so none can shape
//! the file around it; changelog entries are quoted.

use std::fmt::Write;

use super::changelog::Entry;
use super::{Difference, Item, Outline};
use crate::model::markdown::{self, code};

/// The most bytes of items `API.md` lists; a notice says how many more there are.
pub const OUTLINE_CAP: usize = 48 * 1024;
/// The most bytes of changelog text `CHANGES.md` quotes.
pub const CHANGELOG_CAP: usize = 48 * 1024;

/// `API.md` of a library version (`title`: `httpx 0.28.1`), items grouped by module.
pub fn render(title: &str, outline: &Outline) -> String {
    let modules = outline.items.iter().map(|i| &i.module).collect::<std::collections::BTreeSet<_>>().len();
    let mut s = format!("# API outline: {}\n\n", inline(title));
    let _ = writeln!(
        s,
        "{} public items in {modules} module(s), read from the {} sources of this version with a parser: \
         module, kind, signature, and the first line of the item's doc comment (the library's text).",
        outline.items.len(),
        outline.language.as_str(),
    );
    let mut module = None;
    for (n, item) in outline.items.iter().enumerate() {
        if s.len() > OUTLINE_CAP {
            let _ = write!(
                s,
                "\n*{} more items are not listed here: this outline is capped at {} KiB. \
                 The sources beside it have the rest.*\n",
                outline.items.len() - n,
                OUTLINE_CAP / 1024
            );
            break;
        }
        if module != Some(&item.module) {
            let _ = write!(s, "\n## {}\n\n", code(&item.module));
            module = Some(&item.module);
        }
        let _ = writeln!(s, "- {}", line(item));
    }
    s
}

/// One item: `` kind `name`: `signature` — doc ``.
fn line(item: &Item) -> String {
    let mut s = format!("{} {}: {}", inline(&item.kind), code(&item.name), code(&item.signature));
    if !item.doc.is_empty() {
        let _ = write!(s, " — {}", inline(&item.doc));
    }
    s
}

/// `CHANGES.md` for a pin that moved from `from` to `to` (`library 1.0 → 2.0`): the changelog
/// entries between them (`changelog`: its path and entries), then the API difference.
pub fn render_changes(
    library: &str,
    (from, to): (&str, &str),
    downgrade: bool,
    changelog: Option<(&str, &[Entry])>,
    diff: Option<&Difference>,
) -> String {
    let mut s = format!("# Changes: {} {} → {}\n\n", inline(library), inline(from), inline(to));
    let _ = writeln!(
        s,
        "{} moved from {} to {}{}. Code written for {} may not hold for {}: read what changed below.",
        inline(library),
        inline(from),
        inline(to),
        if downgrade { " (a downgrade: the entries below are what it undoes, oldest first)" } else { "" },
        inline(from),
        inline(to),
    );
    changelog_section(&mut s, changelog, downgrade);
    s.push_str("\n## API difference\n");
    match diff {
        None => s.push_str("\nNo outline: memorix reads Rust crates, Python packages and npm packages.\n"),
        Some(d) if d.is_empty() => s.push_str("\nThe public items and their signatures are the same.\n"),
        Some(d) => {
            section(&mut s, "Removed", d.removed.iter().map(line).collect());
            section(
                &mut s,
                "Changed",
                d.changed
                    .iter()
                    .map(|c| {
                        format!(
                            "{}: {} → {}",
                            code(&format!("{}::{}", c.before.module, c.before.name)),
                            code(&c.before.signature),
                            code(&c.after.signature)
                        )
                    })
                    .collect(),
            );
            section(&mut s, "Added", d.added.iter().map(line).collect());
        }
    }
    s
}

fn changelog_section(s: &mut String, changelog: Option<(&str, &[Entry])>, downgrade: bool) {
    let _ = write!(s, "\n## Changelog\n\n");
    let Some((path, entries)) = changelog else {
        s.push_str("The library has no changelog memorix reads (CHANGELOG, CHANGES, HISTORY or NEWS).\n");
        return;
    };
    if entries.is_empty() {
        let _ = writeln!(s, "{} has no entry between these versions.", code(path));
        return;
    }
    let order = if downgrade { "oldest first" } else { "newest first" };
    let _ = writeln!(s, "From {}, {order}, quoted as the library wrote them.", code(path));
    let start = s.len();
    for (n, e) in entries.iter().enumerate() {
        if s.len() - start > super::render::CHANGELOG_CAP {
            let _ =
                writeln!(s, "\n*{} more entries are not quoted: this section is capped.*", entries.len() - n);
            break;
        }
        let _ = write!(s, "\n### {}\n\n", inline(&e.heading));
        for l in e.body.lines() {
            let l: String = l.chars().filter(|c| !c.is_control() || *c == '\t').collect();
            let _ = writeln!(s, ">{}{}", if l.is_empty() { "" } else { " " }, l.trim_end());
        }
    }
}

fn section(s: &mut String, title: &str, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let _ = write!(s, "\n### {title}\n\n");
    for l in lines {
        let _ = writeln!(s, "- {l}");
    }
}

/// Text as inline Markdown on one line: control characters spaces, markup and `<`, `>` escaped
/// (a leading `-` or `#` needs no escape where it is written: never at a line's start).
fn inline(text: &str) -> String {
    markdown::escape_markup(&markdown::one_line(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::Language;

    #[test]
    fn third_party_text_cannot_shape_the_outline() {
        let item = Item {
            module: "pkg".into(),
            name: "f".into(),
            kind: "function".into(),
            signature: "def f(a=`x`)\n# heading".into(),
            doc: "<!-- memorix:end --> [link](http://x) *bold*".into(),
        };
        let text = render("pkg 1.0", &Outline { language: Language::Python, items: vec![item] });
        let line = text.lines().find(|l| l.starts_with("- function")).unwrap();
        assert_eq!(
            line,
            "- function `f`: ``def f(a=`x`) # heading`` — &lt;!-- memorix:end --&gt; \\[link\\](http://x) \\*bold\\*"
        );
        assert_eq!(text.lines().filter(|l| l.starts_with('#')).count(), 2, "{text}");
    }
}
