//! Versions of ingested libraries: how they order, and which one a `match` policy accepts.
//!
//! Versions order by PEP 440 when every one of them parses so, else by semver, else by ingest
//! order (book: design/versions.md#ordering). For plain releases (`0.28.1`) the two agree.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

/// How closely an ingested version must match the wanted one (a mount's `match`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MatchPolicy {
    /// Only the same version: what `@pin` delivers unless a mount widens it
    /// (book: design/versions.md#match).
    #[default]
    Exact,
    /// The highest with the same major.minor.patch (a post-release, a rebuild).
    Patch,
    /// The highest with the same major.minor.
    Minor,
    /// The highest compatible by Cargo's caret rule (0.x.y: the same 0.x).
    Major,
}

impl MatchPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchPolicy::Exact => "exact",
            MatchPolicy::Patch => "patch",
            MatchPolicy::Minor => "minor",
            MatchPolicy::Major => "major",
        }
    }
}

/// How versions order. Ingested versions order by PEP 440 when every one parses so, else by
/// semver, else by ingest order; a pinned library's versions order by its ecosystem's rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    Pep440,
    Semver,
    /// Go modules: semver with a leading `v` (`v1.2.3`, `v0.0.0-20191109021931-daa7c04131f5`).
    Go,
    /// RubyGems: dot-separated segments, a letter starts a prerelease (`1.0.0.pre` < `1.0.0`),
    /// trailing zeros do not count (`1.0` == `1.0.0`).
    RubyGems,
    /// Composer: up to four numbers, an optional `v`, stabilities dev < alpha < beta < RC <
    /// stable < patch (`1.0.0-RC1` < `1.0.0` < `1.0.0-p1`).
    Composer,
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

/// `scheme` when every one of `versions` parses under it, else the scheme they all parse
/// under ([`scheme_for`]).
pub fn scheme_in<'a>(scheme: Scheme, versions: impl IntoIterator<Item = &'a str> + Clone) -> Scheme {
    if versions.clone().into_iter().all(|v| parses(scheme, v)) { scheme } else { scheme_for(versions) }
}

/// Whether `v` is a version under `scheme`.
pub fn parses(scheme: Scheme, v: &str) -> bool {
    match scheme {
        Scheme::Pep440 => pep(v).is_some(),
        Scheme::Semver => semver::Version::parse(v).is_ok(),
        Scheme::Go => go(v).is_some(),
        Scheme::RubyGems => gem(v).is_some(),
        Scheme::Composer => composer(v).is_some(),
        Scheme::IngestOrder => true,
    }
}

/// `a` against `b`; `None` under ingest order, or when either does not parse.
pub fn compare(scheme: Scheme, a: &str, b: &str) -> Option<Ordering> {
    match scheme {
        Scheme::Pep440 => Some(pep(a)?.cmp(&pep(b)?)),
        Scheme::Semver => Some(semver::Version::parse(a).ok()?.cmp(&semver::Version::parse(b).ok()?)),
        Scheme::Go => Some(go(a)?.cmp_precedence(&go(b)?)),
        Scheme::RubyGems => Some(gem_cmp(&gem(a)?, &gem(b)?)),
        Scheme::Composer => Some(composer(a)?.cmp(&composer(b)?)),
        Scheme::IngestOrder => None,
    }
}

fn pep(v: &str) -> Option<pep440_rs::Version> {
    v.parse::<pep440_rs::Version>().ok().map(pep440_rs::Version::without_local)
}

/// A Go module version: `v` then semver (Go writes the `v`; without it is accepted too).
fn go(v: &str) -> Option<semver::Version> {
    semver::Version::parse(v.strip_prefix('v').unwrap_or(v)).ok()
}

/// One segment of a RubyGems version; a string segment sorts below any number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Segment {
    Text(String),
    Number(u64),
}

/// `Gem::Version#canonical_segments`: the release numbers and the prerelease segments, each
/// without trailing zeros. `-` reads as `.pre.`, as RubyGems reads it.
fn gem(v: &str) -> Option<(Vec<Segment>, Vec<Segment>)> {
    let v = v.trim();
    let valid = v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && !v.contains("..")
        && !v.ends_with(['.', '-']);
    if !valid {
        return None;
    }
    let mut segments = Vec::new();
    for part in v.replace('-', ".pre.").split('.') {
        let mut rest = part;
        while !rest.is_empty() {
            let digits = rest.starts_with(|c: char| c.is_ascii_digit());
            let end = rest.find(|c: char| c.is_ascii_digit() != digits).unwrap_or(rest.len());
            let (run, tail) = rest.split_at(end);
            segments.push(if digits {
                Segment::Number(run.parse().ok()?)
            } else {
                Segment::Text(run.to_string())
            });
            rest = tail;
        }
    }
    let split = segments.iter().position(|s| matches!(s, Segment::Text(_))).unwrap_or(segments.len());
    let mut pre = segments.split_off(split);
    for part in [&mut segments, &mut pre] {
        while part.last() == Some(&Segment::Number(0)) {
            part.pop();
        }
    }
    Some((segments, pre))
}

/// `Gem::Version#<=>` on canonical segments: missing segments count as 0.
fn gem_cmp(a: &(Vec<Segment>, Vec<Segment>), b: &(Vec<Segment>, Vec<Segment>)) -> Ordering {
    let all = |v: &(Vec<Segment>, Vec<Segment>)| v.0.iter().chain(&v.1).cloned().collect::<Vec<_>>();
    let (a, b) = (all(a), all(b));
    (0..a.len().max(b.len()))
        .map(|i| {
            let zero = Segment::Number(0);
            a.get(i).unwrap_or(&zero).cmp(b.get(i).unwrap_or(&zero))
        })
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// A Composer version's order key: four release numbers, the stability's rank (dev 0, alpha
/// 1, beta 2, RC 3, stable 4, patch 5) and number, and a `-dev` suffix below the rest.
fn composer(v: &str) -> Option<([u64; 4], u8, u64, bool)> {
    let v = v.trim().strip_prefix(['v', 'V']).unwrap_or(v.trim());
    let (v, dev) = match v.strip_suffix("-dev") {
        Some(rest) => (rest, true),
        None => (v, false),
    };
    let release_end = v.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(v.len());
    let (release, suffix) = v.split_at(release_end);
    let numbers: Vec<&str> = release.trim_end_matches('.').split('.').collect();
    if numbers.is_empty() || numbers.len() > 4 {
        return None;
    }
    let mut key = [0u64; 4];
    for (slot, n) in key.iter_mut().zip(&numbers) {
        *slot = n.parse().ok()?;
    }
    let suffix = suffix.trim_start_matches(['-', '.', '_']).to_ascii_lowercase();
    let word_end = suffix.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(suffix.len());
    let (word, number) = suffix.split_at(word_end);
    let rank = match word {
        // `1.0.0-dev` is the development line before 1.0.0, below its alphas.
        "" if dev => 0,
        "" => 4,
        "dev" => 0,
        "alpha" | "a" => 1,
        "beta" | "b" => 2,
        "rc" => 3,
        "patch" | "pl" | "p" => 5,
        _ => return None,
    };
    let number = match number.trim_start_matches(['.', '-']) {
        "" => 0,
        // A stable release has no number after it (`1.2.3-4` is no Composer version).
        _ if word.is_empty() => return None,
        n => n.parse().ok()?,
    };
    Some((key, rank, number, !dev))
}

/// The release numbers (major, minor, patch, ...), local labels ignored.
fn release(scheme: Scheme, v: &str) -> Option<Vec<u64>> {
    match scheme {
        Scheme::Pep440 => Some(pep(v)?.release().to_vec()),
        Scheme::Semver => semver::Version::parse(v).ok().map(|s| vec![s.major, s.minor, s.patch]),
        Scheme::Go => go(v).map(|s| vec![s.major, s.minor, s.patch]),
        Scheme::RubyGems => {
            Some(gem(v)?.0.iter().map(|s| if let Segment::Number(n) = s { *n } else { 0 }).collect())
        }
        Scheme::Composer => Some(composer(v)?.0.to_vec()),
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
        MatchPolicy::Patch => (0..3).all(|i| part(&w, i) == part(&c, i)),
        MatchPolicy::Minor => part(&w, 0) == part(&c, 0) && part(&w, 1) == part(&c, 1),
        MatchPolicy::Major if part(&w, 0) == 0 => part(&c, 0) == 0 && part(&w, 1) == part(&c, 1),
        MatchPolicy::Major => part(&w, 0) == part(&c, 0),
    }
}

/// The version to use for `wanted` among `candidates` (in ingest order): the same version if
/// there, else the highest acceptable one. Versions compare by `scheme` (a pinned library's
/// ecosystem's) when they all parse under it, else by the scheme they all parse under.
pub fn pick<'a>(
    scheme: Option<Scheme>,
    policy: MatchPolicy,
    wanted: &str,
    candidates: &[&'a str],
) -> Option<&'a str> {
    let all = candidates.iter().copied().chain([wanted]);
    let scheme = match scheme {
        Some(s) => scheme_in(s, all),
        None => scheme_for(all),
    };
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
        assert_eq!(pick(None, MatchPolicy::Minor, "0.28.1", &HTTPX), Some("0.28.1"));
        assert_eq!(pick(None, MatchPolicy::Minor, "0.23.1", &HTTPX), Some("0.23.3"));
        assert_eq!(pick(None, MatchPolicy::Exact, "0.23.1", &HTTPX), None);
        // Caret rule: 0.x is its own major.
        assert_eq!(pick(None, MatchPolicy::Major, "0.27.0", &HTTPX), None);
        assert_eq!(pick(None, MatchPolicy::Major, "2.5.0", &["1.10.26", "2.0", "2.11.10"]), Some("2.11.10"));
        assert_eq!(pick(None, MatchPolicy::Minor, "2.0.3", &["1.10.26", "2.0", "2.11.10"]), Some("2.0"));
        // PEP 440 equality: 2.0 is 2.0.0; local labels are ignored.
        assert_eq!(pick(None, MatchPolicy::Exact, "2.0.0+cu117", &["2.0"]), Some("2.0"));
    }

    #[test]
    fn ecosystem_orders_where_they_differ_from_semver() {
        let less = |scheme, a, b| assert_eq!(compare(scheme, a, b), Some(Ordering::Less), "{a} < {b}");
        // Go: `v`, pseudo-versions before the release they precede, +incompatible ignored.
        less(Scheme::Go, "v0.0.0-20191109021931-daa7c04131f5", "v0.0.1");
        less(Scheme::Go, "v1.9.9", "v1.10.0");
        assert_eq!(compare(Scheme::Go, "v2.0.0+incompatible", "v2.0.0"), Some(Ordering::Equal));
        // RubyGems: four segments, letters are prereleases, trailing zeros do not count.
        less(Scheme::RubyGems, "8.0.1", "8.0.1.1");
        less(Scheme::RubyGems, "1.0.0.pre", "1.0.0");
        less(Scheme::RubyGems, "1.0.0.beta2", "1.0.0.rc1");
        less(Scheme::RubyGems, "2.0.0-x", "2.0.0");
        assert_eq!(compare(Scheme::RubyGems, "1.0", "1.0.0"), Some(Ordering::Equal));
        assert!(!parses(Scheme::RubyGems, "1..2") && !parses(Scheme::RubyGems, "x1"));
        // Composer: `v`, four numbers, stabilities dev < alpha < beta < RC < stable < patch.
        less(Scheme::Composer, "v1.2.3-RC1", "1.2.3");
        less(Scheme::Composer, "1.2.3-alpha2", "1.2.3-RC1");
        less(Scheme::Composer, "1.2.3", "1.2.3-p1");
        less(Scheme::Composer, "1.2.3", "1.2.3.1");
        less(Scheme::Composer, "1.2.3-dev", "1.2.3-alpha1");
        assert!(!parses(Scheme::Composer, "dev-main") && !parses(Scheme::Composer, "1.2.3-4"));
        // The ecosystem's order picks; versions that do not parse under it fall back.
        let gems = ["8.0.1", "8.0.1.1", "8.1.0"];
        assert_eq!(pick(Some(Scheme::RubyGems), MatchPolicy::Minor, "8.0.0", &gems), Some("8.0.1.1"));
        assert_eq!(
            pick(Some(Scheme::Go), MatchPolicy::Minor, "v1.2.0", &["v1.2.3", "v1.2.10"]),
            Some("v1.2.10")
        );
        assert_eq!(pick(Some(Scheme::Go), MatchPolicy::Minor, "1.2.0", &["1.2.3", "main"]), None);
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
