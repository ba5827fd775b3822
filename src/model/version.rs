//! Versions of ingested libraries: how they order, and which one a `match` policy accepts.
//!
//! Versions order by PEP 440 when every one of them parses so, else by semver, else by
//! ingest order (DESIGN.md §9). For plain releases (`0.28.1`) the two agree.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// How closely an ingested version must match the wanted one (a mount's `match`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchPolicy {
    /// Only the same version.
    Exact,
    /// The highest with the same major.minor.
    #[default]
    Minor,
    /// The highest compatible by Cargo's caret rule (0.x.y: the same 0.x).
    Major,
}

impl MatchPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchPolicy::Exact => "exact",
            MatchPolicy::Minor => "minor",
            MatchPolicy::Major => "major",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Pep440,
    Semver,
    /// Versions that parse neither way: only equal strings match; the later ingest is higher.
    IngestOrder,
}

/// The scheme that every one of `versions` parses under.
pub fn scheme_for<'a>(versions: impl IntoIterator<Item = &'a str> + Clone) -> Scheme {
    if versions.clone().into_iter().all(|v| v.parse::<pep440_rs::Version>().is_ok()) {
        Scheme::Pep440
    } else if versions.into_iter().all(|v| semver::Version::parse(v).is_ok()) {
        Scheme::Semver
    } else {
        Scheme::IngestOrder
    }
}

/// `a` against `b`; `None` under ingest order.
pub fn compare(scheme: Scheme, a: &str, b: &str) -> Option<Ordering> {
    match scheme {
        Scheme::Pep440 => Some(pep(a)?.cmp(&pep(b)?)),
        Scheme::Semver => Some(semver::Version::parse(a).ok()?.cmp(&semver::Version::parse(b).ok()?)),
        Scheme::IngestOrder => None,
    }
}

fn pep(v: &str) -> Option<pep440_rs::Version> {
    v.parse::<pep440_rs::Version>().ok().map(pep440_rs::Version::without_local)
}

/// The release numbers (major, minor, patch, ...), local labels ignored.
fn release(scheme: Scheme, v: &str) -> Option<Vec<u64>> {
    match scheme {
        Scheme::Pep440 => Some(pep(v)?.release().to_vec()),
        Scheme::Semver => semver::Version::parse(v).ok().map(|s| vec![s.major, s.minor, s.patch]),
        Scheme::IngestOrder => None,
    }
}

fn same(scheme: Scheme, a: &str, b: &str) -> bool {
    compare(scheme, a, b).map_or(a == b, Ordering::is_eq)
}

/// Whether `candidate` is acceptable where `wanted` is asked for.
pub fn acceptable(scheme: Scheme, policy: MatchPolicy, wanted: &str, candidate: &str) -> bool {
    if same(scheme, wanted, candidate) {
        return true;
    }
    let (Some(w), Some(c)) = (release(scheme, wanted), release(scheme, candidate)) else { return false };
    let part = |r: &[u64], i: usize| r.get(i).copied().unwrap_or(0);
    match policy {
        MatchPolicy::Exact => false,
        MatchPolicy::Minor => part(&w, 0) == part(&c, 0) && part(&w, 1) == part(&c, 1),
        MatchPolicy::Major if part(&w, 0) == 0 => part(&c, 0) == 0 && part(&w, 1) == part(&c, 1),
        MatchPolicy::Major => part(&w, 0) == part(&c, 0),
    }
}

/// The version to use for `wanted` among `candidates` (in ingest order): the same version if
/// there, else the highest acceptable one.
pub fn pick<'a>(policy: MatchPolicy, wanted: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let scheme = scheme_for(candidates.iter().copied().chain([wanted]));
    if let Some(hit) = candidates.iter().rev().find(|c| same(scheme, wanted, c)) {
        return Some(hit);
    }
    highest(scheme, candidates.iter().copied().filter(|c| acceptable(scheme, policy, wanted, c)))
}

/// The highest of `versions` (given in ingest order).
pub fn highest<'a>(scheme: Scheme, versions: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    versions.into_iter().fold(None, |best, v| match best {
        None => Some(v),
        Some(b) => match compare(scheme, v, b) {
            Some(Ordering::Less) => Some(b),
            // Ingest order: the later one is higher.
            _ => Some(v),
        },
    })
}

/// Sorts versions (given in ingest order) highest first.
pub fn sort_descending(versions: &mut [String]) {
    let scheme = scheme_for(versions.iter().map(String::as_str));
    if scheme == Scheme::IngestOrder {
        versions.reverse();
    } else {
        versions.sort_by(|a, b| compare(scheme, b, a).unwrap_or(Ordering::Equal));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTTPX: [&str; 4] = ["0.23.3", "0.26.0", "0.28.1", "0.23.0"];

    #[test]
    fn exact_hit_then_minor_then_major() {
        assert_eq!(pick(MatchPolicy::Minor, "0.28.1", &HTTPX), Some("0.28.1"));
        assert_eq!(pick(MatchPolicy::Minor, "0.23.1", &HTTPX), Some("0.23.3"));
        assert_eq!(pick(MatchPolicy::Exact, "0.23.1", &HTTPX), None);
        // Caret rule: 0.x is its own major.
        assert_eq!(pick(MatchPolicy::Major, "0.27.0", &HTTPX), None);
        assert_eq!(pick(MatchPolicy::Major, "2.5.0", &["1.10.26", "2.0", "2.11.10"]), Some("2.11.10"));
        assert_eq!(pick(MatchPolicy::Minor, "2.0.3", &["1.10.26", "2.0", "2.11.10"]), Some("2.0"));
        // PEP 440 equality: 2.0 is 2.0.0; local labels are ignored.
        assert_eq!(pick(MatchPolicy::Exact, "2.0.0+cu117", &["2.0"]), Some("2.0"));
    }

    #[test]
    fn ordering_schemes() {
        let mut v: Vec<String> = HTTPX.iter().map(|s| s.to_string()).collect();
        sort_descending(&mut v);
        assert_eq!(v, ["0.28.1", "0.26.0", "0.23.3", "0.23.0"]);
        assert_eq!(scheme_for(["1.0.0-x.7.z.92", "1.0.0"]), Scheme::Semver);
        let mut odd = vec!["main".to_string(), "next".to_string()];
        sort_descending(&mut odd);
        assert_eq!(odd, ["next", "main"], "ingest order: the later is higher");
        assert_eq!(highest(Scheme::Pep440, ["1.10.0", "1.9.0"]), Some("1.10.0"));
    }
}
