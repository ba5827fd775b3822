//! Named crash points, compiled in only with the `fault-injection` feature (tests): with
//! `MEMORIX_CRASH_AT=NAME` set, the process aborts the moment it reaches point NAME, as a
//! power cut would stop it there.

/// Every crash point, in the order an operation reaches them.
pub const POINTS: &[&str] = &[
    "fetch.staged",
    "fetch.recorded",
    "incoming.synced",
    "ingest.blobs",
    "pack.staged",
    "ingest.trees",
    "publish.staged",
    "latest.spare-dirty",
    "latest.applied",
    "publish.synced",
    "publish.ref",
    "latest.swapped",
    "publish.latest",
    "quests.mark",
    "lock.write",
    "build.derivations",
    "build.environment",
    "build.synced",
    "activate.staged",
    "activate.exchanged",
    "activate.recorded",
    "profile.saved",
    "memory.cloned",
    "memory.kept",
    "incoming.unpacking",
    "incoming.unpacked",
];

/// Aborts here when `MEMORIX_CRASH_AT` names this point (and the feature is on).
#[inline]
pub fn point(name: &'static str) {
    #[cfg(feature = "fault-injection")]
    if std::env::var("MEMORIX_CRASH_AT").is_ok_and(|v| v == name) {
        std::process::abort();
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = name;
}
