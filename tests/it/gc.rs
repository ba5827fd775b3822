//! `memorix gc` removes only what nothing reaches; `memorix purge` erases content loudly.

use crate::common;

use std::fs;

use common::TestEnv;

fn contains_anywhere(dir: &std::path::Path, needle: &str) -> Vec<String> {
    common::walk(dir)
        .into_iter()
        .filter(|p| {
            fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
                && fs::read_to_string(p).is_ok_and(|t| t.contains(needle))
        })
        .map(|p| p.display().to_string())
        .collect()
}

#[test]
fn gc_removes_temp_files_and_unreachable_objects_only() {
    let env = TestEnv::new();
    env.write("r/a.md", "# A v1\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("r/a.md", "# A v2\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/@g1\"]\n");
    env.run(&["build"]).ok();
    // What a crashed writer leaves: a temp file, a blob and a tree nothing names.
    common::write_file(&env.store.join("tmp/.tmpCRASH"), b"half");
    let orphan = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(b"orphan\n"))
    };
    common::write_file(&env.store.join("blobs").join(&orphan[..2]).join(&orphan), b"orphan\n");
    // While a writer holds the lock (a detached fill, say), what is in tmp/ is its own.
    let held = fs::File::open(env.store.join("lock")).unwrap();
    held.lock().unwrap();
    let out = env.command().args(["gc", "--dry-run"]).output().unwrap();
    let last = String::from_utf8_lossy(&out.stdout).lines().last().map(str::to_owned);
    assert_eq!(last.as_deref(), Some("Would remove 0 temp files and 1 unreachable objects (7 bytes)"));
    drop(held);
    let before = env.store_listing();
    let dry = env.run(&["--json", "gc", "--dry-run"]).ok().json();
    assert_eq!(dry["temp_files"], 1);
    assert_eq!(dry["unreachable"], serde_json::json!([format!("blobs/{}/{orphan}", &orphan[..2])]));
    assert_eq!(env.store_listing(), before, "--dry-run changes nothing");
    let out = env.run(&["gc"]).ok().stdout;
    assert_eq!(out, "Removed 1 temp files and 1 unreachable objects (7 bytes)\n");
    env.run(&["verify"]).ok();
    // Every generation and the project's pinned derivation are intact.
    assert_eq!(env.run(&["cat", "rules/team/a.md@g1"]).ok().stdout, "# A v1\n");
    assert_eq!(env.run(&["cat", "rules/team/a.md"]).ok().stdout, "# A v2\n");
    env.run(&["lock", "--check"]).ok();
    assert_eq!(env.run(&["--json", "gc"]).ok().json()["unreachable"], serde_json::json!([]));
}

#[test]
fn purge_erases_a_secret_from_every_generation() {
    let env = TestEnv::new();
    env.write("r/notes.md", "# Notes\n");
    env.write("r/secret.md", "API_KEY=sk-live-0123456789\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("r/notes.md", "# Notes v2\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();
    assert!(!contains_anywhere(&env.store, "sk-live").is_empty());

    let out = env.run(&["purge", "rules/team/secret.md"]).expect(2).stdout;
    assert!(out.contains("Would erase 1 blob from every generation; run again with --yes"), "{out}");
    assert!(!contains_anywhere(&env.store, "sk-live").is_empty(), "nothing erased without --yes");
    let out = env.run(&["--json", "purge", "rules/team/secret.md", "--yes"]).ok().json();
    assert_eq!(out["erased"], true);
    assert!(out["links"].as_u64().unwrap() >= 2, "latest/ and the derivation tree held links: {out}");
    assert_eq!(
        contains_anywhere(&env.store, "sk-live"),
        Vec::<String>::new(),
        "the bytes are gone from the Store"
    );

    let err = env.run(&["cat", "rules/team/secret.md@g1"]).expect(2).stderr;
    assert!(err.contains("was purged from the Store on 2026-01-01T00:00:00Z: its content is gone"), "{err}");
    env.run(&["verify"]).ok();
    // A new environment that selects it is built without it, and says so (as a rebuild of one
    // delivered before the purge does); one that does not select it, works.
    let other = env.project.join("other");
    common::write_file(&other.join("memorix.toml"), b"[mounts.all]\nselect = [\"rules/team/\"]\n");
    let out = env.run(&["-C", other.to_str().unwrap(), "build"]).ok().stdout;
    assert!(out.contains("Left out 1 file whose content was purged from the Store: all/secret.md"), "{out}");
    assert_eq!(common::files_under(&other.join(".memory/all")), ["INDEX.md", "notes.md"]);
    common::write_file(&other.join("memorix.toml"), b"[mounts.all]\nselect = [\"rules/team/notes.md\"]\n");
    env.run(&["-C", other.to_str().unwrap(), "build"]).ok();
    env.run(&["rm", "rules/team/secret.md"]).ok();
    env.run(&["verify"]).ok();
}
