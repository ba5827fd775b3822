//! Agent harnesses and the conventions each follows to load project instructions
//! (book: design/harnesses.md#the-conventions-are-data), as data: one row per harness with the
//! date it was checked, so a convention change is a one-line edit. Generation
//! (`crate::harness`) and `memorix doctor` read only this table.

use std::fmt;

/// A harness memorix writes entry points for, as `[agents] harnesses` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub enum HarnessName {
    #[serde(rename = "agents-md")]
    AgentsMd,
    #[serde(rename = "claude")]
    Claude,
    #[serde(rename = "cursor")]
    Cursor,
    #[serde(rename = "copilot")]
    Copilot,
    #[serde(rename = "gemini")]
    Gemini,
    #[serde(rename = "codex")]
    Codex,
    #[serde(rename = "windsurf")]
    Windsurf,
    #[serde(rename = "cline")]
    Cline,
    #[serde(rename = "kiro")]
    Kiro,
    #[serde(rename = "zed")]
    Zed,
    #[serde(rename = "junie")]
    Junie,
}

impl HarnessName {
    pub const ALL: [HarnessName; 11] = [
        HarnessName::AgentsMd,
        HarnessName::Claude,
        HarnessName::Cursor,
        HarnessName::Copilot,
        HarnessName::Gemini,
        HarnessName::Codex,
        HarnessName::Windsurf,
        HarnessName::Cline,
        HarnessName::Kiro,
        HarnessName::Zed,
        HarnessName::Junie,
    ];

    /// `[agents] harnesses` when the table does not say.
    pub const DEFAULT: [HarnessName; 2] = [HarnessName::AgentsMd, HarnessName::Claude];

    pub fn parse(s: &str) -> Option<HarnessName> {
        HarnessName::ALL.into_iter().find(|h| h.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        self.conventions().name
    }

    pub fn conventions(self) -> &'static Conventions {
        &TABLE[self as usize]
    }
}

impl fmt::Display for HarnessName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The front matter key a path-scoped rule file names its globs with, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKey {
    /// Claude Code `.claude/rules/*.md`: `paths:` a YAML list of globs.
    PathsList,
    /// Cursor `.mdc`: `globs:` one comma-separated string, with `description` and `alwaysApply`.
    CursorGlobs,
    /// Copilot `.instructions.md`: `applyTo:` one comma-separated string.
    ApplyTo,
    /// Windsurf `.windsurf/rules/*.md`: `trigger: always_on | glob | model_decision | manual`,
    /// with `globs:` for `glob` (one comma-separated string).
    WindsurfTrigger,
    /// Kiro `.kiro/steering/*.md`: `inclusion: always | fileMatch | manual | auto`, with
    /// `fileMatchPattern:` (one glob, or a list) for `fileMatch`.
    KiroInclusion,
}

impl ScopeKey {
    /// The front matter keys the harness documents for its rule files: any other key is
    /// ignored by it (and a generated file never writes one).
    pub fn documented_keys(self) -> &'static [&'static str] {
        match self {
            ScopeKey::PathsList => &["paths", "description"],
            ScopeKey::CursorGlobs => &["description", "globs", "alwaysApply"],
            ScopeKey::ApplyTo => &["applyTo", "description", "excludeAgent", "name"],
            ScopeKey::WindsurfTrigger => &["trigger", "globs", "description"],
            ScopeKey::KiroInclusion => &["inclusion", "fileMatchPattern", "name", "description"],
        }
    }
}

/// Path-scoped rule files: `<dir>/<prefix><name><suffix>`.
#[derive(Debug, Clone, Copy)]
pub struct Scoped {
    pub dir: &'static str,
    /// Before memorix's name: Cline orders `.clinerules/` files by a numeric prefix, and
    /// memorix's pointers go after the team's own rules.
    pub order: &'static str,
    pub suffix: &'static str,
    pub key: ScopeKey,
}

/// How a harness finds its always-loaded instruction files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discovery {
    /// Every file of `loads` at the project root that exists.
    Each,
    /// Only the first file of `loads` that exists (Zed): the others are never read.
    FirstMatch,
    /// In each directory from the project root down to the working directory, the first of
    /// `loads` that exists and is not empty (Codex: `AGENTS.override.md`, then `AGENTS.md`),
    /// joined root first; `cap` counts the whole chain.
    PerDirectory,
}

/// Limits counted in characters (Windsurf): per rule file, and for everything always on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CharCaps {
    pub per_file: u64,
    pub total: u64,
}

/// What a harness's file search honours, for telling whether it can see `.memory/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// ripgrep's rules: `.ignore` (where memorix whitelists the memory directory) beats
    /// `.gitignore`; hidden directories are searched when whitelisted.
    Ripgrep,
    /// `.gitignore` only: the memory directory (git-ignored) is read by path, not searched.
    GitIgnore,
}

/// One harness's documented conventions.
#[derive(Debug)]
pub struct Conventions {
    pub name: &'static str,
    /// The products that follow these conventions.
    pub products: &'static str,
    /// When the conventions below were last checked against the harness's documentation.
    pub checked: &'static str,
    /// Project files it loads at session start, in order (from the project root).
    pub loads: &'static [&'static str],
    /// Whether `@path` lines in a loaded file pull that file in too.
    pub at_imports: bool,
    /// Bytes of project instructions it reads before it stops (silently).
    pub cap: Option<u64>,
    /// Where memorix writes its always-loaded managed block, if anywhere of its own.
    pub entry: Option<&'static str>,
    pub scoped: Option<Scoped>,
    /// Where it finds skills (`<dir>/memorix/SKILL.md`).
    pub skills: Option<&'static str>,
    pub search: Search,
    pub discovery: Discovery,
    pub char_caps: Option<CharCaps>,
    /// Where the harness's documentation says this (the book's table cites it).
    pub source: &'static str,
}

/// The harnesses, in [`HarnessName`] order.
pub const TABLE: [Conventions; 11] = [
    Conventions {
        name: "agents-md",
        // developers.openai.com/codex/guides/agents-md: root-to-cwd AGENTS.md, joined, cut
        // silently past project_doc_max_bytes (32 KiB); skills in .agents/skills.
        products: "Codex CLI, and the agents that read AGENTS.md (Amp, Jules, opencode, Zed)",
        checked: "2026-12-04",
        loads: &["AGENTS.md"],
        at_imports: false,
        cap: Some(32 * 1024),
        entry: Some("AGENTS.md"),
        scoped: None,
        skills: Some(".agents/skills"),
        search: Search::Ripgrep,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://agents.md",
    },
    Conventions {
        name: "claude",
        // code.claude.com/docs/en/memory: CLAUDE.md with `@path` imports (4 hops); AGENTS.md
        // only without a CLAUDE.md; .claude/rules/*.md with a `paths:` list; .claude/skills.
        products: "Claude Code",
        checked: "2026-12-04",
        loads: &["CLAUDE.md", ".claude/CLAUDE.md"],
        at_imports: true,
        cap: None,
        entry: Some("CLAUDE.md"),
        scoped: Some(Scoped { dir: ".claude/rules", order: "", suffix: ".md", key: ScopeKey::PathsList }),
        skills: Some(".claude/skills"),
        search: Search::Ripgrep,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://code.claude.com/docs/en/memory",
    },
    Conventions {
        name: "cursor",
        // cursor.com/docs/context/rules: AGENTS.md, .cursor/rules/*.mdc (description, globs as
        // one comma-separated string, alwaysApply); search follows .gitignore/.cursorignore.
        products: "Cursor",
        checked: "2026-12-04",
        loads: &["AGENTS.md"],
        at_imports: false,
        cap: None,
        entry: None,
        scoped: Some(Scoped { dir: ".cursor/rules", order: "", suffix: ".mdc", key: ScopeKey::CursorGlobs }),
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://cursor.com/docs/context/rules",
    },
    Conventions {
        name: "copilot",
        // docs.github.com/copilot/customizing-copilot: .github/copilot-instructions.md, AGENTS.md
        // and CLAUDE.md; .github/instructions/*.instructions.md with `applyTo` (one string).
        products: "GitHub Copilot (VS Code, coding agent)",
        checked: "2026-12-04",
        loads: &[".github/copilot-instructions.md", "AGENTS.md", "CLAUDE.md"],
        at_imports: false,
        cap: None,
        entry: Some(".github/copilot-instructions.md"),
        scoped: Some(Scoped {
            dir: ".github/instructions",
            order: "",
            suffix: ".instructions.md",
            key: ScopeKey::ApplyTo,
        }),
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/add-repository-instructions",
    },
    Conventions {
        name: "gemini",
        // geminicli.com/docs/cli/gemini-md: GEMINI.md with `@file` imports (depth 5); file
        // discovery follows .gitignore and .geminiignore.
        products: "Gemini CLI",
        checked: "2026-12-04",
        loads: &["GEMINI.md"],
        at_imports: true,
        cap: None,
        entry: Some("GEMINI.md"),
        scoped: None,
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://geminicli.com/docs/cli/gemini-md",
    },
    Conventions {
        name: "codex",
        // developers.openai.com/codex/guides/agents-md: in each directory from the project
        // root down to the working directory, AGENTS.override.md, else AGENTS.md (at most one
        // per directory), joined root first, adding stops once the chain reaches
        // project_doc_max_bytes (32 KiB); skills in .agents/skills.
        products: "OpenAI Codex (CLI, IDE extension)",
        checked: "2026-12-07",
        loads: &["AGENTS.override.md", "AGENTS.md"],
        at_imports: false,
        cap: Some(32 * 1024),
        entry: Some("AGENTS.md"),
        scoped: None,
        skills: Some(".agents/skills"),
        search: Search::Ripgrep,
        discovery: Discovery::PerDirectory,
        char_caps: None,
        source: "https://developers.openai.com/codex/guides/agents-md",
    },
    Conventions {
        name: "windsurf",
        // docs.windsurf.com/windsurf/cascade/memories: .windsurf/rules/*.md with `trigger:`
        // always_on | glob | model_decision | manual and `globs:`; a root AGENTS.md is always
        // on. The limits: 6,000 characters a rule file, 12,000 in all.
        products: "Windsurf (Cascade)",
        checked: "2026-12-07",
        loads: &["AGENTS.md"],
        at_imports: false,
        cap: None,
        entry: None,
        scoped: Some(Scoped {
            dir: ".windsurf/rules",
            order: "",
            suffix: ".md",
            key: ScopeKey::WindsurfTrigger,
        }),
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: Some(CharCaps { per_file: 6_000, total: 12_000 }),
        source: "https://docs.windsurf.com/windsurf/cascade/memories",
    },
    Conventions {
        name: "cline",
        // docs.cline.bot/features/cline-rules/overview: every .md in .clinerules/ joined in
        // numeric-prefix order, AGENTS.md too (searched in subdirectories, so the nested ones
        // on the way to the working directory); conditional-rules: `paths:` a list of globs.
        products: "Cline",
        checked: "2026-12-07",
        loads: &["AGENTS.md"],
        at_imports: false,
        cap: None,
        entry: None,
        scoped: Some(Scoped { dir: ".clinerules", order: "90-", suffix: ".md", key: ScopeKey::PathsList }),
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::PerDirectory,
        char_caps: None,
        source: "https://docs.cline.bot/features/cline-rules/conditional-rules",
    },
    Conventions {
        name: "kiro",
        // kiro.dev/docs/steering: .kiro/steering/*.md with `inclusion:` always (the default) |
        // fileMatch (with `fileMatchPattern`) | manual.
        products: "Kiro",
        checked: "2026-12-07",
        loads: &[],
        at_imports: false,
        cap: None,
        entry: None,
        scoped: Some(Scoped {
            dir: ".kiro/steering",
            order: "",
            suffix: ".md",
            key: ScopeKey::KiroInclusion,
        }),
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://kiro.dev/docs/steering/",
    },
    Conventions {
        name: "zed",
        // zed.dev/docs/ai/rules: only the first of these at the worktree root is used.
        products: "Zed (Agent Panel)",
        checked: "2026-12-07",
        loads: &[
            ".rules",
            ".cursorrules",
            ".windsurfrules",
            ".clinerules",
            ".github/copilot-instructions.md",
            "AGENT.md",
            "AGENTS.md",
            "CLAUDE.md",
            "GEMINI.md",
        ],
        at_imports: false,
        cap: None,
        entry: None,
        scoped: None,
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::FirstMatch,
        char_caps: None,
        source: "https://zed.dev/docs/ai/rules",
    },
    Conventions {
        name: "junie",
        // jetbrains.com/help/junie/customize-guidelines.html: .junie/guidelines.md unless the
        // project settings name another file.
        products: "JetBrains Junie",
        checked: "2026-12-07",
        loads: &[".junie/guidelines.md"],
        at_imports: false,
        cap: None,
        entry: Some(".junie/guidelines.md"),
        scoped: None,
        skills: None,
        search: Search::GitIgnore,
        discovery: Discovery::Each,
        char_caps: None,
        source: "https://www.jetbrains.com/help/junie/customize-guidelines.html",
    },
];

/// The harnesses that read the project's `AGENTS.md` at session start, so that one managed
/// block there serves them all.
pub const READ_AGENTS_MD: [HarnessName; 5] =
    [HarnessName::AgentsMd, HarnessName::Codex, HarnessName::Windsurf, HarnessName::Cline, HarnessName::Zed];

/// What generates a project's harness files, recorded with each profile binding so that a
/// rollback writes the files of its time: the harnesses, the index budget, and the
/// path-scoped mounts with their globs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSpec {
    pub harnesses: Vec<HarnessName>,
    #[serde(rename = "index-budget")]
    pub index_budget: u64,
    /// Mount path -> its `applies-to` globs, for the path-scoped mounts.
    #[serde(default, rename = "applies-to", skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub applies_to: std::collections::BTreeMap<String, Vec<String>>,
    /// `[agents] members`: globs naming the workspace members' folders (`packages/*`); a
    /// path-scoped mount whose globs all lie in one member is that member's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
}

impl AgentsSpec {
    /// A project without `[agents]`, as a binding records it.
    pub fn none() -> AgentsSpec {
        AgentsSpec {
            harnesses: Vec::new(),
            index_budget: 0,
            applies_to: Default::default(),
            members: Vec::new(),
        }
    }

    /// `None` for [`AgentsSpec::none`].
    pub fn active(self) -> Option<AgentsSpec> {
        (!self.harnesses.is_empty()).then_some(self)
    }

    pub fn has(&self, h: HarnessName) -> bool {
        self.harnesses.contains(&h)
    }

    /// Whether memorix writes the index block into `AGENTS.md`: a harness that reads it is on.
    pub fn writes_agents_md(&self) -> bool {
        READ_AGENTS_MD.iter().any(|h| self.has(*h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_name_order_and_names_parse_back() {
        for h in HarnessName::ALL {
            assert_eq!(HarnessName::parse(h.as_str()), Some(h));
            assert_eq!(serde_json::to_string(&h).unwrap(), format!("\"{}\"", h.as_str()));
        }
        assert_eq!(HarnessName::parse("codex"), Some(HarnessName::Codex));
        assert_eq!(HarnessName::parse("aider"), None);
    }
}
