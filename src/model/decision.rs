//! Conflict decisions: at one path, which candidate won over which and by what rule
//! (book: design/resolve.md#conflicts). Derivations and environments record them; the
//! environment id covers them.

use serde::{Deserialize, Serialize};

/// Which rule settled a conflict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// An `[overrides]` entry named the winner.
    Override,
    /// Two generations of one Store path: the newer one.
    NewerGeneration,
    /// One path family: the candidate with more path components.
    DeeperPath,
    /// Across kinds: rules > docs > chat.
    KindTrust,
    /// Nested mounts: the deeper mount.
    DeeperMount,
}

impl Decision {
    pub fn rule_name(&self) -> &'static str {
        match self.rule {
            Rule::Override => "override",
            Rule::NewerGeneration => "newer-generation",
            Rule::DeeperPath => "deeper-path",
            Rule::KindTrust => "kind-trust",
            Rule::DeeperMount => "deeper-mount",
        }
    }
}

impl Rule {
    pub fn describe(self) -> &'static str {
        match self {
            Rule::Override => "an [overrides] entry names it",
            Rule::NewerGeneration => "it is from the newer generation of the same Store path",
            Rule::DeeperPath => "it is deeper in the same path family",
            Rule::KindTrust => "its kind is trusted more (rules > docs > chat)",
            Rule::DeeperMount => "its mount is nested deeper",
        }
    }
}

/// One recorded decision: at `path`, `winner` beat `loser` by `rule`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    // Fields in the order of their names, so the canonical encoding writes them straight.
    pub loser: String,
    pub path: String,
    pub rule: Rule,
    pub winner: String,
}
