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

/// The system calls of one run of `args` in the project (`strace -f -c`), or `None` with a
/// notice when strace is not installed (a failure under `MEMORIX_REQUIRE_TOOLS=1`, as in CI).
#[allow(clippy::print_stderr)] // a skipped test says why, as a notice
fn syscalls(env: &TestEnv, args: &[&str]) -> Option<u64> {
    if !std::process::Command::new("strace").arg("-V").output().is_ok_and(|o| o.status.success()) {
        assert!(std::env::var_os("MEMORIX_REQUIRE_TOOLS").is_none_or(|v| v != "1"), "strace not found");
        eprintln!("notice: skipping, strace not installed");
        return None;
    }
    let out = env.root.join("strace.txt");
    let cmd = env.command();
    let program = cmd.get_program().to_owned();
    let mut traced = std::process::Command::new("strace");
    traced.args(["-f", "-c", "-o"]).arg(&out).arg(program).args(args);
    traced.current_dir(&env.project).env_clear().envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))));
    let run = env.run_cmd(&mut traced).ok();
    assert!(run.stdout.starts_with("Nothing to do"), "{}", run.stdout);
    let summary = std::fs::read_to_string(&out).unwrap();
    let total = summary.lines().find(|l| l.trim_end().ends_with(" total")).expect("a total line");
    // "100.00    0.000123           1       142         3 total": the calls are the fourth field.
    Some(total.split_whitespace().nth(3).unwrap().parse().unwrap())
}

/// A no-op build decides from the manifest, the lock, the pin files, the sources' stamps and
/// the activation's stamp: the same fixed number of system calls for an environment of 3
/// files and of 600 files in 200 directories (book: reliability.md#no-op-build).
#[test]
fn a_no_op_build_makes_the_same_system_calls_at_any_size() {
    let mut counts = Vec::new();
    for (files, dirs) in [(3, 1), (600, 200)] {
        let env = TestEnv::new();
        let list: Vec<(String, String)> =
            (0..files).map(|i| (format!("d{}/e{}/f{i}.md", i % dirs, i % 3), format!("# {i}\n"))).collect();
        let refs: Vec<(&str, &str)> = list.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
        env.ingest("rules/big/", &refs);
        env.write("memorix.toml", "[mounts.big]\nselect = [\"rules/big/\"]\n");
        env.run(&["build"]).ok();
        assert!(env.run(&["build"]).ok().stdout.starts_with("Nothing to do"));
        let Some(n) = syscalls(&env, &["build"]) else { return };
        counts.push(n);
    }
    assert!(counts.iter().all(|n| *n < 300), "{counts:?}");
    assert!(counts[1].abs_diff(counts[0]) <= 10, "grows with the environment: {counts:?}");
}
