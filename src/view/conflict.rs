//! Deciding which file wins when two candidates claim one path
//! (book: design/resolve.md#conflicts).

use super::error::{Error, Result};
use crate::model::decision::{Decision, Rule};
use crate::model::{Id, Kind, StorePath};

/// A Store file competing for one path.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub kind: Kind,
    /// Path inside the kind's tree.
    pub store_path: StorePath,
    pub blob: Id,
    /// The generation seq of a pinned locator (`@gN`, hash); `None` for the tip (`@latest`).
    pub pinned_seq: Option<u64>,
}

impl Candidate {
    /// `rules/python/style.md`
    pub fn place(&self) -> String {
        format!("{}/{}", self.kind, self.store_path)
    }

    fn dir(&self) -> StorePath {
        match self.store_path.as_str().rfind('/') {
            Some(i) => StorePath::new(&self.store_path.as_str()[..i]).expect("a prefix of a valid path"),
            None => StorePath::root(),
        }
    }
}

enum Outcome {
    First(Rule),
    Second,
    Ambiguous,
}

fn compare(a: &Candidate, b: &Candidate) -> Outcome {
    if a.kind != b.kind {
        return if a.kind.trust() > b.kind.trust() {
            Outcome::First(Rule::KindTrust)
        } else {
            Outcome::Second
        };
    }
    if a.store_path == b.store_path {
        return match (a.pinned_seq, b.pinned_seq) {
            (None, Some(_)) => Outcome::First(Rule::NewerGeneration),
            (Some(_), None) => Outcome::Second,
            (Some(x), Some(y)) if x > y => Outcome::First(Rule::NewerGeneration),
            (Some(x), Some(y)) if x < y => Outcome::Second,
            _ => Outcome::Ambiguous,
        };
    }
    let (da, db) = (a.dir(), b.dir());
    if da != db && db.starts_with(&da) {
        Outcome::Second
    } else if da != db && da.starts_with(&db) {
        Outcome::First(Rule::DeeperPath)
    } else {
        Outcome::Ambiguous
    }
}

/// Picks the winner among `candidates` for `path` (an environment path); `forced` is the Store
/// place an `[overrides]` entry names. Returns the winner's index and one decision per loser
/// whose content differs.
pub fn decide(path: &str, candidates: &[Candidate], forced: Option<&str>) -> Result<(usize, Vec<Decision>)> {
    let winner = match forced {
        Some(place) => {
            candidates.iter().position(|c| c.place() == place).ok_or_else(|| Error::OverrideNotCandidate {
                path: path.to_string(),
                named: place.to_string(),
                candidates: candidates.iter().map(Candidate::place).collect(),
            })?
        }
        None => pick(path, candidates)?,
    };
    let w = &candidates[winner];
    let decisions = candidates
        .iter()
        .enumerate()
        .filter(|(i, c)| *i != winner && c.blob != w.blob)
        .map(|(_, c)| {
            let rule = match (forced, compare(w, c)) {
                (Some(_), _) => Rule::Override,
                (None, Outcome::First(r)) => r,
                (None, _) => unreachable!("the picked winner beats every other candidate"),
            };
            Decision { path: path.to_string(), rule, winner: w.place(), loser: c.place() }
        })
        .collect();
    Ok((winner, decisions))
}

fn pick(path: &str, candidates: &[Candidate]) -> Result<usize> {
    let beats_all = |i: usize| {
        candidates.iter().enumerate().all(|(j, c)| {
            j == i || c.blob == candidates[i].blob || matches!(compare(&candidates[i], c), Outcome::First(_))
        })
    };
    if let Some(i) = (0..candidates.len()).find(|&i| beats_all(i)) {
        return Ok(i);
    }
    // No candidate beats every other: name a pair no rule can order.
    let (a, b) = (0..candidates.len())
        .flat_map(|i| (i + 1..candidates.len()).map(move |j| (i, j)))
        .find(|&(i, j)| {
            candidates[i].blob != candidates[j].blob
                && matches!(compare(&candidates[i], &candidates[j]), Outcome::Ambiguous)
        })
        .unwrap_or((0, 1));
    Err(Error::AmbiguousConflict {
        path: path.to_string(),
        first: candidates[a].place(),
        second: candidates[b].place(),
    })
}
