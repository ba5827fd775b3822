//! The commented starter manifest `memorix init` writes, built with toml_edit.

use toml_edit::{Array, DocumentMut, Item, Table, value};

/// A starter manifest for a project called `name`.
pub fn starter(name: &str) -> String {
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

    let mut sources = Table::new();
    sources.decor_mut().set_prefix(
        "\n# Project folders ingested into the Store at build time (Store place = folder):\n\
         # \"rules/myproject/\" = \"./agent-rules\"\n",
    );
    doc.insert("sources", Item::Table(sources));

    let mut mounts = Table::new();
    mounts.set_implicit(true);
    doc.insert("mounts", Item::Table(mounts));
    let mut example = Table::new();
    let mut select = Array::new();
    select.push("rules/");
    example.insert("select", value(select));
    example.insert("exclude", value(Array::from_iter(["**/drafts/**"])));
    example.insert("intent", value("All rules in the Store"));
    example.decor_mut().set_prefix(
        "\n# Each mount is a directory inside .memory/ filled from Store locators\n\
         # (kind/path[/][@latest|@gN|@<hash>]); `memorix ls rules/` shows what the Store has.\n",
    );
    doc["mounts"].as_table_mut().expect("a table").insert("rules", Item::Table(example));
    doc.to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn starter_parses() {
        let text = super::starter("demo");
        let m = super::super::parse(&text, "memorix.toml", std::path::Path::new("/nonexistent")).unwrap();
        assert_eq!(m.name.as_deref(), Some("demo"));
        assert_eq!(m.mounts.len(), 1);
        assert!(text.contains("# Project folders ingested"));
    }
}
