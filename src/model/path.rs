//! Validated names and paths inside a typed tree: a path with `..`, an absolute path, an empty
//! or `.` component, NUL or a backslash cannot be built.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a path component is not allowed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NameProblem {
    Empty,
    Dot,
    DotDot,
    Slash,
    Backslash,
    Nul,
}

impl NameProblem {
    pub fn describe(self) -> &'static str {
        match self {
            NameProblem::Empty => "empty path component",
            NameProblem::Dot => "`.` path component",
            NameProblem::DotDot => "`..` path component",
            NameProblem::Slash => "`/` inside a name",
            NameProblem::Backslash => "backslash in path",
            NameProblem::Nul => "NUL byte in path",
        }
    }
}

/// One validated path component: a file or directory name inside a tree.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct Name(String);

impl Name {
    pub fn new(s: &str) -> Result<Name, NameProblem> {
        Name::check(s)?;
        Ok(Name(s.to_string()))
    }

    /// Checks a component; returns the first problem (and where, for the caller's span).
    pub fn check(s: &str) -> Result<(), NameProblem> {
        match s {
            "" => return Err(NameProblem::Empty),
            "." => return Err(NameProblem::Dot),
            ".." => return Err(NameProblem::DotDot),
            _ => {}
        }
        // Bytes, not chars: the three are ASCII, which no multi-byte UTF-8 sequence contains,
        // and every path of a 100k-file record passes here.
        match s.bytes().find(|b| matches!(b, b'/' | b'\\' | 0)) {
            Some(b'/') => Err(NameProblem::Slash),
            Some(b'\\') => Err(NameProblem::Backslash),
            Some(_) => Err(NameProblem::Nul),
            None => Ok(()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A validated relative path inside one typed tree; empty means the tree's root.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default)]
pub struct StorePath(String);

/// The proper ancestors of a `/`-separated relative path, shortest first: `a`, `a/b` for
/// `a/b/c` (for paths held as text, like an activation record's).
pub fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(|(i, _)| &path[..i])
}

impl StorePath {
    pub fn root() -> StorePath {
        StorePath(String::new())
    }

    /// Parses `a/b/c` (no leading or trailing slash); `""` is the root.
    pub fn new(s: &str) -> Result<StorePath, NameProblem> {
        if !s.is_empty() {
            for part in s.split('/') {
                Name::check(part)?;
            }
        }
        Ok(StorePath(s.to_string()))
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.0.split('/').filter(|s| !s.is_empty())
    }

    /// The proper ancestors, shortest first: `a`, `a/b` for `a/b/c`.
    pub fn ancestors(&self) -> impl Iterator<Item = &str> {
        ancestors(&self.0)
    }

    pub fn names(&self) -> Vec<Name> {
        self.components().map(|c| Name(c.to_string())).collect()
    }

    pub fn join(&self, name: &Name) -> StorePath {
        if self.0.is_empty() {
            StorePath(name.0.clone())
        } else {
            StorePath(format!("{}/{}", self.0, name.0))
        }
    }

    pub fn join_path(&self, other: &StorePath) -> StorePath {
        match (self.0.is_empty(), other.0.is_empty()) {
            (true, _) => other.clone(),
            (_, true) => self.clone(),
            _ => StorePath(format!("{}/{}", self.0, other.0)),
        }
    }

    /// The last component, or `None` for the root.
    pub fn file_name(&self) -> Option<&str> {
        if self.0.is_empty() { None } else { self.0.rsplit('/').next() }
    }

    /// The rest of `self` below `base` (the root when they are equal); `None` when `self` does
    /// not lie at or below `base`.
    pub fn strip_prefix(&self, base: &StorePath) -> Option<StorePath> {
        if !self.starts_with(base) {
            return None;
        }
        Some(StorePath(self.0[base.0.len()..].trim_start_matches('/').to_string()))
    }

    /// Whether `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &StorePath) -> bool {
        other.0.is_empty()
            || self.0 == other.0
            || (self.0.starts_with(&other.0) && self.0.as_bytes()[other.0.len()] == b'/')
    }
}

impl AsRef<str> for StorePath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for StorePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for StorePath {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for StorePath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StorePath, D::Error> {
        let s = String::deserialize(d)?;
        StorePath::new(&s).map_err(|p| serde::de::Error::custom(format!("path {s:?}: {}", p.describe())))
    }
}
