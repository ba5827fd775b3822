//! One function per user operation. Each takes the command's [`Context`] and typed inputs,
//! and returns a typed result that the CLI renders (or a test inspects).

pub mod background;
pub mod build;
pub mod cat;
pub mod changes;
pub mod context;
pub mod deps;
pub mod doctor;
pub mod edit;
pub mod error;
pub mod explain;
pub mod fetch;
pub mod gc;
pub mod git_sources;
pub mod graph;
pub mod handoff;
pub mod history;
pub mod ingest;
pub mod init;
pub mod lock;
pub mod log;
pub mod ls;
pub mod mcp;
pub mod mcp_config;
pub mod moved;
pub mod obtain;
pub mod pins;
pub mod profile;
pub mod project;
pub mod quest;
pub mod read;
pub mod remote;
pub mod rm;
pub mod search;
pub mod show;
pub mod skill;
pub mod status;
pub mod trace;
pub mod trust;
pub mod verify;
pub mod versions;

pub use context::{Context, Network};
pub use error::{Error, Result};
