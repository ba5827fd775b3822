//! The typed trees of the Store (`rules`, `docs`, `chat`) and the two kinds of tree entry.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The typed trees of the Store. The declaration order is the trust order (rules first).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Kind {
    Rules,
    Docs,
    Chat,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Rules, Kind::Docs, Kind::Chat];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Rules => "rules",
            Kind::Docs => "docs",
            Kind::Chat => "chat",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Trust order for conflicts across kinds: rules > docs > chat.
    pub fn trust(self) -> u8 {
        match self {
            Kind::Rules => 3,
            Kind::Docs => 2,
            Kind::Chat => 1,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Kind, D::Error> {
        let s = String::deserialize(d)?;
        Kind::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown kind {s:?}")))
    }
}

/// What a tree entry names: a file's content or a directory.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    Blob,
    Tree,
}

impl EntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Blob => "blob",
            EntryKind::Tree => "tree",
        }
    }
}
