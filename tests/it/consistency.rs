//! What interrupted writes leave is told apart from damage, `@gN` names only committed
//! generations, and `gc` keeps what a project's lock needs even when no generation reaches it.

use crate::common;

use std::fs;

use common::{TestEnv, TwoMachines, build_push_and_share_lock};
use sha2::{Digest, Sha256};

fn hex_of(bytes: &[u8], header: &str) -> String {
    let mut h = Sha256::new();
    h.update(header.as_bytes());
    h.update(bytes);
    hex::encode(h.finalize())
}

fn ingest(env: &TestEnv, dir: &str) {
    env.run(&["ingest", "rules/team/", env.project.join(dir).to_str().unwrap()]).ok();
}

fn problems(env: &TestEnv) -> (i32, Vec<String>, usize) {
    let out = env.run(&["--json", "verify"]);
    let report = out.json();
    let list = |key: &str| common::verify_list(&report, key);
    (out.code, list("problems"), list("garbage").len())
}

/// A tree file as a crash leaves it: stored, reached by nothing, one of its children missing.
fn plant_orphan_tree(env: &TestEnv) -> String {
    let missing = hex_of(b"never written", "memorix-tree-v1\n");
    let json = format!(r#"{{"entries":[["lost","tree","{missing}"]]}}"#);
    let tree = hex_of(json.as_bytes(), "memorix-tree-v1\n");
    common::write_file(
        &env.store.join("trees").join(&tree[..2]).join(format!("{tree}.json")),
        json.as_bytes(),
    );
    tree
}

#[test]
fn verify_tells_the_garbage_of_interrupted_writes_from_damage() {
    let env = TestEnv::new();
    env.write("r/a.md", "# A\n");
    ingest(&env, "r");
    let orphan = plant_orphan_tree(&env);
    let (code, found, garbage) = problems(&env);
    assert_eq!((code, found), (0, vec![]), "an unreachable tree with a missing child is garbage");
    assert!(garbage >= 2, "the orphan tree and its missing entry are counted");
    let text = env.run(&["verify"]).ok().stdout;
    assert!(
        text.contains("leftovers of interrupted writes (garbage, not damage): `memorix gc` removes them"),
        "{text}"
    );
    // The next successful ingest does not turn it into damage; gc removes it.
    env.write("r/b.md", "# B\n");
    ingest(&env, "r");
    assert_eq!(problems(&env).0, 0);
    env.run(&["gc"]).ok();
    assert_eq!(problems(&env), (0, vec![], 0));
    assert!(!env.store.join("trees").join(&orphan[..2]).join(format!("{orphan}.json")).exists());

    // The same missing child in a tree the history reaches is damage.
    let root = fs::read_to_string(env.store.join("latest/rules/team/a.md")).unwrap();
    assert_eq!(root, "# A\n");
    let blob = hex::encode(Sha256::digest(b"# B\n"));
    fs::remove_file(env.store.join("blobs").join(&blob[..2]).join(&blob)).unwrap();
    let (code, found, _) = problems(&env);
    assert_eq!(code, 1);
    assert!(found.iter().any(|p| p.contains(&format!("names missing blob sha256:{blob}"))), "{found:#?}");
}

#[test]
fn generation_numbers_name_only_committed_generations() {
    let env = TestEnv::new();
    env.write("r/a.md", "# A\n");
    ingest(&env, "r");
    let g1 = fs::read_to_string(env.store.join("refs/rules/latest")).unwrap().trim().to_string();
    // What an ingest that failed (or was killed) after staging g2 leaves: its objects and, from
    // memorix before this fix, an index entry; the ref never moved.
    let json = r#"{"entries":[]}"#;
    let hashed = format!(
        r#"{{"kind":"rules","parent":"{g1}","root":"sha256:{}","seq":2,"tags":[]}}"#,
        hex_of(json.as_bytes(), "memorix-tree-v1\n")
    );
    let aborted = hex_of(hashed.as_bytes(), "memorix-generation-v1\n");
    let full = format!(
        r#"{{"kind":"rules","meta":{{"message":"aborted","time":"2026-01-01T00:00:00Z"}},"parent":"{g1}","root":"sha256:{}","seq":2,"tags":[]}}"#,
        hex_of(json.as_bytes(), "memorix-tree-v1\n")
    );
    fs::write(env.store.join("generations/rules").join(format!("{aborted}.json")), full).unwrap();
    fs::write(env.store.join("generations/rules/index/2"), format!("sha256:{aborted}\n")).unwrap();

    let err = env.run(&["ls", "rules/@g2"]).expect(2).stderr;
    assert!(err.contains("`rules` has no generation g2"), "{err}");
    assert_eq!(env.run(&["--json", "log", "rules"]).ok().json().as_array().unwrap().len(), 1);
    let (code, found, garbage) = problems(&env);
    assert_eq!((code, found), (0, vec![]));
    assert_eq!(garbage, 2, "the uncommitted generation and its index entry");

    // The next ingest commits the real g2, and `@g2` names it.
    env.write("r/b.md", "# B\n");
    ingest(&env, "r");
    let listed = env.run(&["ls", "rules/team/@g2"]).ok().stdout;
    assert!(listed.contains("b.md"), "{listed}");
    let g2 = fs::read_to_string(env.store.join("generations/rules/index/2")).unwrap();
    assert_ne!(g2.trim(), format!("sha256:{aborted}"));
    assert_eq!(problems(&env).0, 0);

    // A crash between the ref's move and the index entry: `@gN` still names the tip, and the
    // next writer writes the entry.
    fs::remove_file(env.store.join("generations/rules/index/2")).unwrap();
    assert!(env.run(&["ls", "rules/team/@g2"]).ok().stdout.contains("b.md"));
    assert!(env.run(&["cat", "rules/team/a.md@g1"]).ok().stdout.contains("# A"));
    env.write("r/c.md", "# C\n");
    ingest(&env, "r");
    assert_eq!(fs::read_to_string(env.store.join("generations/rules/index/2")).unwrap(), g2);
}

#[test]
fn gc_keeps_what_a_pulled_lock_needs() {
    let TwoMachines { a, b, url, .. } = TwoMachines::new();
    a.write("r/a.md", "# A\n");
    a.write("r/sub/b.md", "# B\n");
    a.run(&["ingest", "rules/team/", a.project.join("r").to_str().unwrap()]).ok();
    let manifest =
        format!("[store]\nsubstituters = [\"{url}\"]\n\n[mounts.team]\nselect = [\"rules/team/sub/\"]\n");
    a.write("memorix.toml", &manifest);
    build_push_and_share_lock(&a, &b);

    b.write("memorix.toml", &manifest);
    b.run(&["pull"]).ok();
    let dry = b.run(&["--json", "gc", "--dry-run"]).ok().json();
    assert_eq!(dry["roots"], serde_json::json!(["[ROOT]/project"]), "{dry}");
    assert_eq!(dry["unreachable"], serde_json::json!([]), "{dry}");
    b.run(&["gc"]).ok();
    b.run(&["build", "--locked", "--offline"]).ok();
    assert_eq!(fs::read_to_string(b.project.join(".memory/team/b.md")).unwrap(), "# B\n");
    assert_eq!(b.run(&["verify"]).code, 0);

    // A project that is gone is forgotten, and what only it needed goes.
    fs::remove_file(b.project.join("memorix.toml")).unwrap();
    let gone = b.run(&["--json", "gc"]).ok().json();
    assert_eq!(gone["gone"], serde_json::json!(["[ROOT]/project"]), "{gone}");
    assert!(!gone["unreachable"].as_array().unwrap().is_empty());
}
