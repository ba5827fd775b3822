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
}

impl HarnessName {
    pub const ALL: [HarnessName; 5] = [
        HarnessName::AgentsMd,
        HarnessName::Claude,
        HarnessName::Cursor,
        HarnessName::Copilot,
        HarnessName::Gemini,
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
}

/// Path-scoped rule files: `<dir>/<prefix><name><suffix>`.
#[derive(Debug, Clone, Copy)]
pub struct Scoped {
    pub dir: &'static str,
    pub suffix: &'static str,
    pub key: ScopeKey,
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
}

/// The harnesses, in [`HarnessName`] order.
pub const TABLE: [Conventions; 5] = [
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
        scoped: Some(Scoped { dir: ".claude/rules", suffix: ".md", key: ScopeKey::PathsList }),
        skills: Some(".claude/skills"),
        search: Search::Ripgrep,
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
        scoped: Some(Scoped { dir: ".cursor/rules", suffix: ".mdc", key: ScopeKey::CursorGlobs }),
        skills: None,
        search: Search::GitIgnore,
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
            suffix: ".instructions.md",
            key: ScopeKey::ApplyTo,
        }),
        skills: None,
        search: Search::GitIgnore,
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
    },
];

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
}

impl AgentsSpec {
    /// A project without `[agents]`, as a binding records it.
    pub fn none() -> AgentsSpec {
        AgentsSpec { harnesses: Vec::new(), index_budget: 0, applies_to: Default::default() }
    }

    /// `None` for [`AgentsSpec::none`].
    pub fn active(self) -> Option<AgentsSpec> {
        (!self.harnesses.is_empty()).then_some(self)
    }

    pub fn has(&self, h: HarnessName) -> bool {
        self.harnesses.contains(&h)
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
        assert_eq!(HarnessName::parse("codex"), None);
    }
}
