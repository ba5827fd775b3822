//! The integration tests, compiled into one binary: each file beside this one is a module
//! (`cargo test --test it build::` runs one of them), and `common` holds what they share.
//! One binary links the crate once, where a binary per file linked it once per file.

mod common;

mod architecture;
mod build;
mod changes;
mod conflicts;
mod consistency;
mod context;
/// Compiled in only with the crash points (`cargo test --features fault-injection --test it crash::`).
#[cfg(feature = "fault-injection")]
mod crash;
mod docs;
mod edit;
mod examples;
mod fetch;
mod gc;
mod git_sources;
mod harness;
mod harnesses;
mod hostile;
mod hostile_input;
mod init;
mod mcp;
mod outline;
mod pinned_docs;
mod pins;
mod pins_properties;
mod profile;
mod properties;
mod quests;
mod reliability;
mod remote;
mod schema;
mod search;
mod store;
mod surface;
mod team;
mod untrusted;
mod versions;
mod views;
