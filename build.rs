//! Tells the tests whether the shared corpus of real files is here. Without it, the tests
//! that read it are compiled as ignored with a reason (`cfg(memorix_no_corpus)`), so
//! `cargo test` shows them as `ignored` and counts them, rather than passing tests that did
//! not run; with `MEMORIX_REQUIRE_CORPUS=1` (CI) they stay in and fail for want of it.
//!
//! Also links debug builds of the binary as a fixed-address executable on Linux (below).

use std::path::PathBuf;

fn main() {
    link_debug_binary_without_pie();
    println!("cargo::rustc-check-cfg=cfg(memorix_no_corpus)");
    println!("cargo::rerun-if-env-changed=MEMORIX_CORPUS");
    println!("cargo::rerun-if-env-changed=MEMORIX_REQUIRE_CORPUS");
    println!("cargo::rerun-if-changed=build.rs");
    let corpus = std::env::var_os("MEMORIX_CORPUS").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("../shared/corpus")
    });
    if corpus.is_dir() {
        // Removed later, it is missed at run time (a failure that names it), never skipped.
        println!("cargo::rerun-if-changed={}", corpus.display());
        return;
    }
    let required = std::env::var_os("MEMORIX_REQUIRE_CORPUS").is_some_and(|v| v == "1");
    if !required {
        println!("cargo::rustc-cfg=memorix_no_corpus");
    }
}

/// An unoptimised binary holds about 220,000 addresses the loader must fix up when it is
/// position-independent: half of a short command's CPU time, and the tests start it thousands
/// of times. Linked at a fixed address, the linker fixes them once. Release builds keep PIE
/// (and so address randomisation).
fn link_debug_binary_without_pie() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("PROFILE") == "debug"
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
    {
        println!("cargo::rustc-link-arg-bins=-no-pie");
    }
}
