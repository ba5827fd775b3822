//! The commented starter manifest `memorix init` writes. Every commented example sits under
//! its section header, so uncommenting a line as written gives a valid manifest.

use toml_edit::{Array, Value};

use crate::model::HarnessName;

/// Commented mounts: the starter selects nothing, so a new project never receives the whole
/// Store (every other project's rules) before its owner says what it wants.
const MOUNT_EXAMPLES: &str = "\
# Each mount is a directory inside .memory/ filled from Store locators
# (kind/path[/][@latest|@gN|@<hash>|@pin]); `memorix ls` shows what the Store has.
# Uncomment and adapt, then run `memorix build`:
#
# [mounts.rules]
# select = [\"rules/myproject/\"]
# intent = \"How this project is built, tested and reviewed\"
#
# [mounts.\"libs/serde\"]
# select = [\"docs/serde/@pin\"]          # the docs for the version [pins] files pin
# intent = \"serde docs for the version we use\"
";

/// What `[agents]` is for, above the table (commented out, or written by `init --agents`).
pub const AGENTS_ABOUT: &str = "\
# The agent harnesses `memorix build` writes entry points for (AGENTS.md, CLAUDE.md, ...),
# so each agent loads the memory; `memorix doctor` shows what each one loads.
";

/// The default `[agents]` table, as `init --agents` writes it.
pub fn agents_table() -> String {
    let names = Array::from_iter(HarnessName::DEFAULT.iter().map(|h| h.as_str()));
    format!("[agents]\nharnesses = {names}\n")
}

/// The `[agents]` example a starter without one ends with; `init --agents` replaces it.
pub fn agents_example() -> String {
    let commented: String = agents_table().lines().map(|l| format!("# {l}\n")).collect();
    format!("{AGENTS_ABOUT}# (uncomment, or run `memorix init --agents`)\n{commented}")
}

/// A starter manifest for a project called `name` whose root holds the pin files `pins`,
/// with the default `[agents]` table when `agents`, else a commented one.
pub fn starter(name: &str, pins: &[String], agents: bool) -> String {
    let name_value = Value::from(name);
    let intent = Value::from(format!("What {name} is, in a sentence agents can search for"));
    let files = if pins.is_empty() {
        "# files = [\"Cargo.lock\", \"uv.lock\"]\n".to_string()
    } else {
        format!("files = {}\n", Array::from_iter(pins))
    };
    let agents = if agents { format!("{AGENTS_ABOUT}{}", agents_table()) } else { agents_example() };
    format!(
        "# memorix.toml: the memory this project's agents read.\n\
         # `memorix build` resolves it into memorix.lock and delivers it into .memory/.\n\
         # Commit this file and memorix.lock.\n\
         \n\
         [project]\n\
         name = {name_value}\n\
         intent = {intent}\n\
         # Where the memory is delivered, relative to this file.\n\
         memory = \".memory\"\n\
         \n\
         # Lockfiles that say which library versions this project uses; `@pin` locators\n\
         # follow them (`memorix pins` shows what each resolves to).\n\
         [pins]\n\
         {files}\
         \n\
         # Project folders ingested into the Store at build time (Store place = folder):\n\
         [sources]\n\
         # \"rules/myproject/\" = \"./agent-rules\"\n\
         \n\
         {MOUNT_EXAMPLES}\
         \n\
         {agents}"
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn starter_parses_and_selects_nothing() {
        let dir = tempfile::tempdir().unwrap();
        for pins in [vec![], vec!["Cargo.lock".to_string(), "requirements.txt".to_string()]] {
            for p in &pins {
                std::fs::write(dir.path().join(p), "").unwrap();
            }
            for agents in [false, true] {
                let text = super::starter("de\"mo", &pins, agents);
                let m = super::super::parse(&text, "memorix.toml", dir.path()).unwrap();
                assert_eq!(m.name.as_deref(), Some("de\"mo"));
                assert!(m.mounts.is_empty(), "no mount until the owner writes one");
                assert_eq!(m.pins.files, pins);
                assert_eq!(m.agents.is_some(), agents);
                assert!(text.contains("# Project folders ingested") && text.contains("# [mounts.rules]"));
            }
        }
    }
}
