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
