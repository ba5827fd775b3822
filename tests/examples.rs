//! The bundled examples build on a fresh machine (an empty store) into their committed lock.

mod common;

use std::fs;
use std::path::Path;

use common::TestEnv;

fn copy_dir(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".memory" || name == ".memorix" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&dst).unwrap();
            copy_dir(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn webapp_builds_from_an_empty_store_into_its_committed_lock() {
    let env = TestEnv::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/webapp");
    copy_dir(&example, &env.project);
    let committed = fs::read_to_string(example.join("memorix.lock")).unwrap();
    env.run(&["lock", "--check"]).ok();
    env.run(&["build", "--locked"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), committed);
    let index = fs::read_to_string(env.project.join(".memory/INDEX.md")).unwrap();
    assert!(index.contains("- `rules/python/style.md`: Python style"), "{index}");
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), committed);
}

#[test]
fn init_writes_a_commented_starter_manifest_once() {
    let env = TestEnv::new();
    let out = env.run(&["init", "--name", "demo"]).ok();
    assert_eq!(
        out.stdout,
        "Created memorix.toml for `demo`. Declare mounts in it, then run `memorix build`.\nUpdated .ignore\n"
    );
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    insta::assert_snapshot!(text);
    assert!(env.project.join(".memorix").is_dir());
    let again = env.run(&["init"]).ok();
    assert!(again.stdout.starts_with("memorix.toml exists; left as it is"), "{}", again.stdout);
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), text);
    // The starter is a valid manifest: it selects rules/, so it builds once the Store has some.
    env.write("r/a.md", "# A\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.run(&["build"]).ok();
    assert!(env.project.join(".memory/rules/team/a.md").is_file());
}
