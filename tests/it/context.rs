//! One context per command: a command reads memorix.toml once, reads and parses memorix.lock
//! once, and opens the Store once. The binary counts them itself: with `MEMORIX_TRACE_OPENS`
//! set (a developer aid) it ends by printing the counts on stderr.

use crate::common;

use std::path::Path;

use common::TestEnv;

/// A project whose memory lives in the repo: two [sources] and two mounts.
fn project(env: &TestEnv) {
    env.write("agent-rules/python/style.md", "# Python style\n\nUse ruff.\n");
    env.write("notes/decisions.md", "# Decisions\n\nKeep the API synchronous.\n");
    env.write(
        "memorix.toml",
        r#"[sources]
"rules/webapp/" = "./agent-rules"
"docs/webapp/" = "./notes"

[mounts.python]
select = ["rules/webapp/python/"]

[mounts.project]
select = ["rules/webapp/", "docs/webapp/decisions.md"]
"#,
    );
}

/// What one command read, as its trace line says.
#[derive(Debug, PartialEq, Eq)]
struct Opened {
    manifest_reads: usize,
    lock_reads: usize,
    lock_parses: usize,
    store_opens: usize,
}

const ONCE: Opened = Opened { manifest_reads: 1, lock_reads: 1, lock_parses: 1, store_opens: 1 };

/// Runs `args` (against `store`, else the env's Store) with the trace on; exit 0 expected.
fn traced(env: &TestEnv, args: &[&str], store: Option<&Path>) -> Opened {
    let mut cmd = env.command();
    cmd.args(args).env("MEMORIX_TRACE_OPENS", "1");
    if let Some(store) = store {
        cmd.env("MEMORIX_STORE", store);
    }
    let run = env.run_cmd(&mut cmd).ok();
    let line = run.stderr.lines().find_map(|l| l.strip_prefix("memorix trace: "));
    let line = line.unwrap_or_else(|| panic!("no trace line in stderr:\n{}", run.stderr));
    // "memorix.toml read 1, memorix.lock read 1 parsed 1, Store opened 1"
    let n: Vec<usize> = line.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    assert_eq!(n.len(), 4, "{line}");
    Opened { manifest_reads: n[0], lock_reads: n[1], lock_parses: n[2], store_opens: n[3] }
}

#[test]
fn a_build_after_a_manifest_edit_reads_and_parses_the_lock_once() {
    let env = TestEnv::new();
    project(&env);
    env.run(&["build"]).ok();
    let manifest = std::fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    env.write("memorix.toml", &manifest.replace(", \"docs/webapp/decisions.md\"", ""));
    let before = std::fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    assert_eq!(traced(&env, &["build"], None), ONCE);
    let after = std::fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    assert_ne!(before, after, "the edit changed the lock");
    // Nothing changed since: the Store is not even opened.
    assert_eq!(traced(&env, &["build"], None), Opened { store_opens: 0, ..ONCE });
}

#[test]
fn a_locked_build_on_an_empty_store_reads_and_parses_the_lock_once() {
    let env = TestEnv::new();
    project(&env);
    env.run(&["lock"]).ok();
    let empty = env.root.join("empty-store");
    assert_eq!(traced(&env, &["build", "--locked"], Some(&empty)), ONCE);
    assert!(empty.join("VERSION").is_file(), "the build created the Store");
    assert!(env.project.join(".memory/python/style.md").is_file());
}

#[test]
fn checking_the_lock_opens_the_store_once() {
    let env = TestEnv::new();
    project(&env);
    env.run(&["build"]).ok();
    assert_eq!(traced(&env, &["lock", "--check"], None), ONCE);
    assert_eq!(traced(&env, &["status"], None), ONCE);
    assert_eq!(traced(&env, &["lock"], None), ONCE);
}

#[test]
fn without_the_variable_nothing_is_traced() {
    let env = TestEnv::new();
    project(&env);
    let run = env.run(&["build"]).ok();
    assert!(!run.stderr.contains("memorix trace:"), "{}", run.stderr);
}
