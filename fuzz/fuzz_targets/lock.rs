//! `Lockfile::parse` on arbitrary text: a lock that parses writes out and parses back to
//! itself byte for byte; a conflicted lock splits into two sides whose merge keeps only
//! what the sides agree on.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use memorix::lock::{Lockfile, conflict_sides, merge_sides};
use memorix_fuzz::render;

fn parse(text: &str) -> Option<Lockfile> {
    match Lockfile::parse(text, Path::new("memorix.lock")) {
        Ok(lock) => Some(lock),
        Err(e) => {
            render(&e);
            None
        }
    }
}

/// Serialise -> parse -> serialise is the identity on a parsed lock.
fn assert_round_trips(lock: &Lockfile) {
    let text = lock.to_text();
    let back = Lockfile::parse(&text, Path::new("memorix.lock"))
        .unwrap_or_else(|e| panic!("a written lock does not parse: {e}\n{text}"));
    assert_eq!(&back, lock);
    assert_eq!(back.to_text(), text);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(lock) = parse(text) {
        assert_round_trips(&lock);
        let (merged, conflicted) = merge_sides(Some(lock.clone()), Some(lock.clone()));
        assert_eq!(merged.as_ref(), Some(&lock), "a lock merged with itself changed");
        assert!(conflicted.is_empty());
    }
    let Some((ours, theirs, first)) = conflict_sides(text) else {
        assert!(!text.lines().any(|l| l.starts_with("<<<<<<< ")));
        return;
    };
    assert!((1..=text.lines().count()).contains(&first), "first conflict at line {first}");
    let (a, b) = (parse(&ours), parse(&theirs));
    let (merged, conflicted) = merge_sides(a.clone(), b.clone());
    match (&a, &b, &merged) {
        (None, None, None) => {}
        (Some(one), None, Some(m)) | (None, Some(one), Some(m)) => {
            assert_eq!(m, one);
            assert!(conflicted.is_empty());
        }
        (Some(a), Some(b), Some(m)) => {
            for (name, mount) in &m.mounts {
                assert!(a.mounts.get(name) == Some(mount) || b.mounts.get(name) == Some(mount));
            }
            for name in &conflicted {
                assert!(!m.mounts.contains_key(name));
                assert!(a.mounts[name] != b.mounts[name]);
            }
            for (name, mount) in &a.mounts {
                assert!(m.mounts.contains_key(name) || conflicted.contains(name), "{name} lost: {mount:?}");
            }
            assert_round_trips(m);
        }
        other => panic!("merge of {:?} sides gave {:?}", (other.0.is_some(), other.1.is_some()), merged),
    }
});
