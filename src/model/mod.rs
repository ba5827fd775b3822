//! The plain value types every layer speaks: content ids, the canonical encoder that makes
//! them, kinds, validated names and Store paths, package ecosystems and their names, locators,
//! versions and match policies, remote URLs. Nothing here touches the file system or depends on another module of the crate.

pub mod canonical;
pub mod decision;
pub mod git;
pub mod harness;
pub mod id;
pub mod kind;
pub mod locator;
pub mod markdown;
pub mod moved;
pub mod package;
pub mod path;
pub mod remote_url;
pub mod version;

pub use git::GitRef;
pub use harness::HarnessName;
pub use id::{BadId, Id, IdPrefix};
pub use kind::{EntryKind, Kind};
pub use locator::{Locator, LocatorError, LocatorProblem, Selector};
pub use path::{Name, NameProblem, StorePath};
pub use remote_url::RemoteUrl;
pub use version::MatchPolicy;
