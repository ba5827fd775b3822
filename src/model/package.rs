//! Package ecosystems and package names as each spells them. A name comes from a third party
//! (a lockfile, a manifest, a registry's answer) and later shapes Store paths, mount paths and
//! registry URLs, so it is checked where it enters: a name of its ecosystem's grammar, never a
//! path, a query string or markup. A pin whose name fails is kept out of the pins, with the
//! reason.

use super::version::Scheme;

/// The package ecosystem of a pin file: names normalise and versions compare per ecosystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ecosystem {
    Cargo,
    Python,
    Npm,
    Go,
    Composer,
    RubyGems,
}

impl Ecosystem {
    /// The name messages and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Ecosystem::Cargo => "cargo",
            Ecosystem::Python => "python",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "go",
            Ecosystem::Composer => "composer",
            Ecosystem::RubyGems => "rubygems",
        }
    }

    /// How versions of this ecosystem order, for a mount's `match`.
    pub fn scheme(self) -> Scheme {
        match self {
            Ecosystem::Cargo | Ecosystem::Npm => Scheme::Semver,
            Ecosystem::Python => Scheme::Pep440,
            Ecosystem::Go => Scheme::Go,
            Ecosystem::Composer => Scheme::Composer,
            Ecosystem::RubyGems => Scheme::RubyGems,
        }
    }
}

/// The longest name any registry accepts (npm: 214).
const MAX_LEN: usize = 214;

/// Why a name is not one of its ecosystem's.
pub fn problem(eco: Ecosystem, name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("an empty name".into());
    }
    if name.len() > MAX_LEN {
        return Some(format!("a name of {} bytes (at most {MAX_LEN})", name.len()));
    }
    let why = match eco {
        Ecosystem::Cargo => cargo(name),
        Ecosystem::Python => python(name),
        Ecosystem::Npm => npm(name),
        Ecosystem::Go => segments(name, "/", |c| c.is_ascii_alphanumeric() || "._~-".contains(c)),
        Ecosystem::Composer => composer(name),
        Ecosystem::RubyGems => plain(name, |c| c.is_ascii_alphanumeric() || "._-".contains(c)),
    };
    why.map(|w| format!("{w} (`{}`)", shown(name)))
}

/// Whether `name` is a name in some ecosystem (a manifest's `library` key, before its pin
/// file says which ecosystem).
pub fn valid_in_any(name: &str) -> bool {
    use Ecosystem::*;
    [Cargo, Python, Npm, Go, Composer, RubyGems].into_iter().any(|eco| valid(eco, name))
}

/// Whether `name` is a name of `eco`.
pub fn valid(eco: Ecosystem, name: &str) -> bool {
    problem(eco, name).is_none()
}

/// Cargo: ASCII letters, digits, `-` and `_` (crates.io's rule; a path package follows it too).
fn cargo(name: &str) -> Option<&'static str> {
    plain(name, |c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// PEP 508: letters, digits, `.`, `-`, `_`, starting and ending with a letter or digit.
fn python(name: &str) -> Option<&'static str> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || ".-_".contains(c);
    if !name.chars().all(ok_char) {
        return Some("a character outside letters, digits, `.`, `-` and `_`");
    }
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    if !ends(name.chars().next()) || !ends(name.chars().last()) {
        return Some("a name that starts or ends with `.`, `-` or `_`");
    }
    None
}

/// npm: `name` or `@scope/name`, each part URL-safe (`a-z`, digits, `-._~`; capitals exist in
/// old packages), not starting with `.` or `_`.
fn npm(name: &str) -> Option<&'static str> {
    let part = |p: &str| {
        if p.is_empty() || p.starts_with(['.', '_']) {
            return Some("a part that is empty or starts with `.` or `_`");
        }
        let ok = |c: char| c.is_ascii_alphanumeric() || "-._~".contains(c);
        (!p.chars().all(ok)).then_some("a character outside letters, digits and `-._~`")
    };
    match name.strip_prefix('@') {
        Some(scoped) => match scoped.split_once('/') {
            Some((scope, rest)) => part(scope).or_else(|| part(rest)),
            None => Some("a scope without `/name`"),
        },
        None => part(name),
    }
}

/// Composer: `vendor/package`, lowercase letters, digits, `_`, `.` and `-`.
fn composer(name: &str) -> Option<&'static str> {
    match name.split_once('/') {
        Some((vendor, package)) if !package.contains('/') => {
            let ok = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
            plain(vendor, ok).or_else(|| plain(package, ok))
        }
        _ => Some("a name that is not `vendor/package`"),
    }
}

/// One segment of allowed characters that is not `.` or `..`.
fn plain(name: &str, ok: impl Fn(char) -> bool) -> Option<&'static str> {
    if name.is_empty() {
        return Some("an empty part");
    }
    if name == "." || name == ".." {
        return Some("a `.` or `..` name");
    }
    (!name.chars().all(ok)).then_some("a character the ecosystem does not allow in a name")
}

/// Several `plain` segments joined by `sep` (Go module paths).
fn segments(name: &str, sep: &str, ok: impl Fn(char) -> bool + Copy) -> Option<&'static str> {
    if name.split(sep).any(str::is_empty) {
        return Some("an empty path segment");
    }
    name.split(sep).find_map(|s| plain(s, ok))
}

/// A name as messages show it: control characters escaped, cut to 80 characters.
pub fn shown(name: &str) -> String {
    let escaped: String = name.chars().flat_map(char::escape_debug).collect();
    match escaped.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &escaped[..at]),
        None => escaped,
    }
}

/// A percent-encoded name for one URL path segment (npm's `@scope/name` -> `@scope%2fname`):
/// everything but letters, digits, `-._~` and a leading `@` is encoded.
pub fn url_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, b) in name.bytes().enumerate() {
        match b {
            b'@' if i == 0 => out.push('@'),
            b'/' => out.push_str("%2f"),
            b if b.is_ascii_alphanumeric() || b"-._~".contains(&b) => out.push(b as char),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_ecosystem_admits_its_names_and_no_path() {
        let good = [
            (Ecosystem::Cargo, "encoding_rs"),
            (Ecosystem::Cargo, "serde-json"),
            (Ecosystem::Python, "Flask_Login"),
            (Ecosystem::Python, "zope.interface"),
            (Ecosystem::Npm, "@babel/core"),
            (Ecosystem::Npm, "string-width-cjs"),
            (Ecosystem::Npm, "JSONStream"),
            (Ecosystem::Go, "github.com/spf13/cobra"),
            (Ecosystem::Composer, "symfony/console"),
            (Ecosystem::RubyGems, "rack-test"),
        ];
        for (eco, name) in good {
            assert_eq!(problem(eco, name), None, "{eco:?} {name}");
        }
        let bad = [
            (Ecosystem::Npm, "ms?/../../../../tmp/x"),
            (Ecosystem::Npm, "../x"),
            (Ecosystem::Npm, "@scope"),
            (Ecosystem::Npm, ".hidden"),
            (Ecosystem::Python, "../../etc"),
            (Ecosystem::Python, "-x"),
            (Ecosystem::Cargo, "a/b"),
            (Ecosystem::Cargo, "ü"),
            (Ecosystem::Cargo, ".."),
            (Ecosystem::Go, "github.com/../x"),
            (Ecosystem::Go, "/abs"),
            (Ecosystem::Composer, "a/b/c"),
            (Ecosystem::Composer, "lhng/"),
            (Ecosystem::RubyGems, "a\nb"),
        ];
        for (eco, name) in bad {
            assert!(problem(eco, name).is_some(), "{eco:?} {name:?}");
        }
        assert!(problem(Ecosystem::Npm, &"a".repeat(215)).is_some());
    }

    #[test]
    fn names_are_shown_escaped_and_encoded_for_urls() {
        assert_eq!(shown("a\nb\u{1b}[31m"), "a\\nb\\u{1b}[31m");
        assert_eq!(url_segment("@types/node"), "@types%2fnode");
        assert_eq!(url_segment("a@b c"), "a%40b%20c");
    }
}
