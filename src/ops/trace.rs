//! How often a command read memorix.toml and memorix.lock, parsed a lock and opened the Store:
//! counted where each happens, printed at the end with `MEMORIX_TRACE_OPENS`.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::store::Store;

/// A developer aid: with `MEMORIX_TRACE_OPENS` set, a command ends by printing on stderr how
/// often it read memorix.toml and memorix.lock, parsed a lock and opened the Store, so a test
/// (tests/it/context.rs) can hold a build to one of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub manifest_reads: usize,
    pub lock_reads: usize,
    pub lock_parses: usize,
    pub store_opens: usize,
}

pub const TRACE_ENV: &str = "MEMORIX_TRACE_OPENS";

pub(super) static MANIFEST_READS: AtomicUsize = AtomicUsize::new(0);
pub(super) static LOCK_READS: AtomicUsize = AtomicUsize::new(0);
pub(super) static LOCK_PARSES: AtomicUsize = AtomicUsize::new(0);

impl Trace {
    pub(super) fn count(counter: &AtomicUsize) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether `MEMORIX_TRACE_OPENS` asks for the trace.
    pub fn wanted() -> bool {
        std::env::var_os(TRACE_ENV).is_some_and(|v| !v.is_empty())
    }

    /// The counts so far.
    pub fn now() -> Trace {
        Trace {
            manifest_reads: MANIFEST_READS.load(Ordering::Relaxed),
            lock_reads: LOCK_READS.load(Ordering::Relaxed),
            lock_parses: LOCK_PARSES.load(Ordering::Relaxed),
            store_opens: Store::opened(),
        }
    }
}

impl std::fmt::Display for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "memorix trace: memorix.toml read {}, memorix.lock read {} parsed {}, Store opened {}",
            self.manifest_reads, self.lock_reads, self.lock_parses, self.store_opens
        )
    }
}
