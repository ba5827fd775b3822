//! The manifest as written: serde types, also the source of `schema/memorix.schema.json`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `memorix.toml`: which memory a project wants and where it goes.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "memorix.toml")]
pub struct RawManifest {
    #[serde(default)]
    pub project: RawProject,
    /// Where library versions come from: the project's lockfiles.
    pub pins: Option<RawPins>,
    /// Ingested into the Store at build time: Store place = a project folder, or a git
    /// repository pinned by memorix.lock to a commit.
    #[serde(default)]
    pub sources: BTreeMap<String, RawSource>,
    /// Mounts inside the memory directory: mount path = selection.
    #[serde(default)]
    pub mounts: BTreeMap<String, RawMount>,
    /// Environment path = the Store path of the candidate that wins a conflict there.
    #[serde(default)]
    pub overrides: BTreeMap<String, String>,
    /// Commands run once per derivation id, their output cached with it and shown in
    /// `.memory/INDEX.md`: name = { command = ["prog", "arg", ...] }.
    #[serde(default)]
    pub artifacts: BTreeMap<String, RawArtifact>,
    /// Store settings: where missing objects come from.
    pub store: Option<RawStore>,
    /// Per library: what of a fetched registry artifact is kept, beyond the default docs view.
    #[serde(default)]
    pub fetch: BTreeMap<String, RawFetch>,
    /// The agent harnesses whose entry points `memorix build` writes (none without this table).
    pub agents: Option<RawAgents>,
}

/// `[agents]`: which harnesses load the memory natively, and how much is always loaded.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawAgents {
    /// Of "agents-md", "claude", "cursor", "copilot", "gemini", "codex", "windsurf", "cline",
    /// "kiro", "zed", "junie" (default ["agents-md", "claude"]).
    pub harnesses: Option<Vec<String>>,
    /// Workspace member folders, as globs ("packages/*"): each gets a nested AGENTS.md block
    /// listing the path-scoped mounts whose `applies-to` lies in it.
    pub members: Option<Vec<String>>,
    /// The most the always-loaded index may take, e.g. "8KiB" (the default) or 8192 (bytes).
    #[serde(rename = "index-budget")]
    pub index_budget: Option<RawSize>,
    /// Register `memorix mcp` in the project MCP configuration of Claude Code (.mcp.json),
    /// Cursor (.cursor/mcp.json) and VS Code (.vscode/mcp.json) at `memorix init --agents`
    /// (default false).
    pub mcp: Option<bool>,
}

/// A size: bytes, or a string with a unit (B, KB, KiB, MB, MiB).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawSize {
    Bytes(u64),
    Text(String),
}

/// `[fetch.LIB]`: globs over the artifact's paths (its top directory stripped).
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawFetch {
    /// Also keep files matching these, e.g. `["tests/README.md"]`.
    #[serde(default)]
    pub include: Vec<String>,
    /// Leave out files matching these, even when the default view keeps them.
    #[serde(default)]
    pub exclude: Vec<String>,
}

/// A `[sources]` value.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum RawSource {
    /// A folder (or file) inside the project, e.g. "./agent-rules".
    Folder(String),
    /// A git repository: { git = URL, branch | tag | rev, path }.
    Git(RawGitSource),
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawGitSource {
    /// The repository URL (anything `git clone` takes).
    pub git: String,
    /// Follow this branch (default: the repository's default branch).
    pub branch: Option<String>,
    /// Follow this tag.
    pub tag: Option<String>,
    /// Exactly this commit (40 hex digits).
    pub rev: Option<String>,
    /// Take only this subdirectory of the repository.
    pub path: Option<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawStore {
    /// Remote stores that `memorix build --locked` fetches missing objects from, tried in
    /// order: "s3://BUCKET/PREFIX", "file:///DIR", "https://HOST/PATH" (read-only).
    #[serde(default)]
    pub substituters: Vec<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawProject {
    pub name: Option<String>,
    /// What the project is; grep-able text for the quest of its environment.
    pub intent: Option<String>,
    /// Where the profile activates, relative to the project (default `.memory`).
    pub memory: Option<String>,
    /// How files are placed in the memory directory (default `auto`).
    pub delivery: Option<DeliveryMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryMode {
    /// Reflink where the file system can, else copy.
    #[default]
    Auto,
    Copy,
    Reflink,
    Hardlink,
    Symlink,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawArtifact {
    /// The program and its arguments; runs in the derivation's tree with MEMORIX_DERIVATION,
    /// MEMORIX_TREE and MEMORIX_SUMMARY set, and its standard output is the artifact.
    pub command: Vec<String>,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawPins {
    /// Cargo.lock, requirements*.txt, uv.lock, poetry.lock, package-lock.json.
    #[serde(default)]
    pub files: Vec<String>,
    /// The target environment markers are evaluated against, e.g. sys_platform = "linux".
    #[serde(default)]
    pub markers: BTreeMap<String, String>,
    /// Fetch the docs of pinned libraries the Store lacks from their registry (default true).
    pub fetch: Option<bool>,
}

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RawMount {
    /// Locators, in order: `kind/path[/][@selector]`.
    pub select: Vec<String>,
    /// Globs over mount-relative paths; when given, only matching files are kept.
    #[serde(default)]
    pub include: Vec<String>,
    /// Globs over mount-relative paths to drop.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Why this mount exists; grep-able text for its quest.
    pub intent: Option<String>,
    /// How closely an ingested version must match the pinned one: exact (default), or the
    /// highest held with the same major.minor.patch (patch), major.minor (minor), or by
    /// Cargo's caret rule (major).
    #[serde(rename = "match")]
    pub match_policy: Option<crate::model::version::MatchPolicy>,
    /// The library a `@pin` locator asks for, when it is not the last path component.
    pub library: Option<String>,
    /// Chooses among several versions of the library pinned in one lockfile.
    pub version: Option<String>,
    /// Globs over project files this memory is for (e.g. "src/api/**"): delivered to the agent
    /// harnesses as path-scoped rules, loaded when the agent works on a matching file.
    #[serde(default, rename = "applies-to")]
    pub applies_to: Vec<String>,
}
