//! The commented starter manifest `memorix init` writes, built with toml_edit.

use toml_edit::{Array, DocumentMut, Item, Table, value};

/// Commented mounts: the starter selects nothing, so a new project never receives the whole
/// Store (every other project's rules) before its owner says what it wants.
const MOUNT_EXAMPLES: &str = "\n\
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

/// A starter manifest for a project called `name` whose root holds the pin files `pins`.
pub fn starter(name: &str, pins: &[String]) -> String {
    let mut doc = DocumentMut::new();
    doc.decor_mut().set_prefix(
        "# memorix.toml: the memory this project's agents read.\n\
         # `memorix build` resolves it into memorix.lock and delivers it into .memory/.\n\
         # Commit this file and memorix.lock.\n\n",
    );

    let mut project = Table::new();
    project.insert("name", value(name));
    project.insert("intent", value(format!("What {name} is, in a sentence agents can search for")));
    project.insert("memory", value(".memory"));
    project
        .key_mut("memory")
        .expect("just inserted")
        .leaf_decor_mut()
        .set_prefix("# Where the memory is delivered, relative to this file.\n");
    doc.insert("project", Item::Table(project));

    let mut pin_table = Table::new();
    let about = "\n# Lockfiles that say which library versions this project uses; `@pin` locators\n\
                 # follow them (`memorix pins` shows what each resolves to).\n";
    if pins.is_empty() {
        pin_table.decor_mut().set_prefix(format!("{about}# files = [\"Cargo.lock\", \"uv.lock\"]\n"));
    } else {
        pin_table.insert("files", value(Array::from_iter(pins)));
        pin_table.decor_mut().set_prefix(about);
    }
    doc.insert("pins", Item::Table(pin_table));

    let mut sources = Table::new();
    sources.decor_mut().set_prefix(
        "\n# Project folders ingested into the Store at build time (Store place = folder):\n\
         # \"rules/myproject/\" = \"./agent-rules\"\n",
    );
    doc.insert("sources", Item::Table(sources));
    let mut text = doc.to_string();
    text.push_str(MOUNT_EXAMPLES);
    text
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
            let text = super::starter("demo", &pins);
            let m = super::super::parse(&text, "memorix.toml", dir.path()).unwrap();
            assert_eq!(m.name.as_deref(), Some("demo"));
            assert!(m.mounts.is_empty(), "no mount until the owner writes one");
            assert_eq!(m.pins.files, pins);
            assert!(text.contains("# Project folders ingested") && text.contains("# [mounts.rules]"));
        }
    }
}
