//! What a git source follows: a branch, a tag, an exact commit, or the default branch.

use std::fmt;

/// What a git source follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitRef {
    /// The repository's default branch (its HEAD).
    DefaultBranch,
    Branch(String),
    Tag(String),
    /// A full commit id: nothing to follow.
    Rev(String),
}

impl fmt::Display for GitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitRef::DefaultBranch => write!(f, "default branch"),
            GitRef::Branch(b) => write!(f, "branch {b}"),
            GitRef::Tag(t) => write!(f, "tag {t}"),
            GitRef::Rev(r) => write!(f, "rev {r}"),
        }
    }
}

/// Why `url` may not be handed to git, if it may not: an option (`--upload-pack=...`), a
/// transport that runs a command or opens a descriptor (`ext::`, `fd::`), a control character.
pub fn url_problem(url: &str) -> Option<&'static str> {
    let lower = url.to_ascii_lowercase();
    if url.is_empty() {
        Some("is empty")
    } else if url.starts_with('-') {
        Some("starts with `-`, which git would read as an option")
    } else if lower.starts_with("ext::") || lower.starts_with("fd::") {
        Some("names git's `ext::` or `fd::` transport, which runs a command or opens a descriptor")
    } else if url.chars().any(char::is_control) {
        Some("holds a control character")
    } else {
        None
    }
}

/// Why a branch or tag name may not be handed to git, if it may not.
pub fn ref_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name.starts_with('-') {
        Some("starts with `-`, which git would read as an option")
    } else if name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        Some("holds a space or a control character")
    } else {
        None
    }
}

/// Whether `commit` is a full commit id: 40 lowercase hex digits.
pub fn is_full_commit(commit: &str) -> bool {
    commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_command_transports_are_refused() {
        for bad in ["", "-uhttps://x", "--upload-pack=touch x", "ext::sh -c id", "FD::3", "https://a\nb"] {
            assert!(url_problem(bad).is_some(), "{bad:?}");
        }
        for good in ["https://github.com/acme/rules", "file:///tmp/r", "git@github.com:acme/r.git"] {
            assert_eq!(url_problem(good), None, "{good}");
        }
        for bad in ["", "-x", "--output=/tmp/x", "a b", "a\nb"] {
            assert!(ref_problem(bad).is_some(), "{bad:?}");
        }
        assert!(
            is_full_commit(&"a".repeat(40)) && !is_full_commit("main") && !is_full_commit(&"é".repeat(20))
        );
    }
}
