//! memorix: a declarative manifest + lockfile build tool for AI-agent project memory.
//!
//! The Store holds content-addressed, versioned typed trees (`rules`, `docs`, `chat`);
//! everything a user can do is a function in [`ops`], which the CLI in [`cli`] parses and
//! renders.

pub mod cli;
pub mod confine;
pub mod deliver;
pub mod diagnostics;
pub mod fault;
pub mod fetch;
pub mod harness;
pub mod lock;
pub mod manifest;
pub mod model;
pub mod ops;
pub mod outline;
pub mod pins;
pub mod profile;
pub mod progress;
pub mod remote;
pub mod resolve;
pub mod search;
pub mod store;
pub mod view;
