//! `memorix init`: git excludes, `.ignore` for rg/fd, and the managed AGENTS.md block.

mod common;

use std::fs;
use std::process::Command;

use common::TestEnv;

/// A tool on PATH, or `None` with a notice (a failure when `MEMORIX_REQUIRE_TOOLS=1`, as in CI).
#[allow(clippy::print_stderr)] // a skipped test says why, as a notice
fn tool(names: &[&str]) -> Option<String> {
    for n in names {
        if Command::new(n).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Some(n.to_string());
        }
    }
    if std::env::var_os("MEMORIX_REQUIRE_TOOLS").is_some_and(|v| v == "1") {
        panic!("{names:?} not found and MEMORIX_REQUIRE_TOOLS=1");
    }
    eprintln!("notice: skipping, {names:?} not installed");
    None
}

fn git(env: &TestEnv, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(&env.project).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn rg_and_fd_find_the_memory_while_git_ignores_it() {
    let (Some(rg), Some(fd)) = (tool(&["rg"]), tool(&["fd", "fdfind"])) else { return };
    let env = TestEnv::new();
    git(&env, &["init", "-q"]);
    env.run(&["init"]).ok();
    env.write("r/zebrafinch.md", "# Rule\n\nThe word quetzalcoatl appears only in memory.\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    fs::remove_dir_all(env.project.join("r")).unwrap();
    env.run(&["build"]).ok();
    assert!(env.project.join(".memory/rules/team/zebrafinch.md").is_file());

    let rg_out = Command::new(&rg).arg("quetzalcoatl").current_dir(&env.project).output().unwrap();
    let found = String::from_utf8_lossy(&rg_out.stdout);
    assert!(found.contains(".memory/rules/team/zebrafinch.md"), "rg: {found}");
    let fd_out = Command::new(&fd).arg("zebrafinch").current_dir(&env.project).output().unwrap();
    assert!(String::from_utf8_lossy(&fd_out.stdout).contains(".memory/rules/team/zebrafinch.md"), "fd");
    let status = git(&env, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains(".memory") && !status.contains(".memorix"), "{status}");
    assert!(status.contains(".ignore") && status.contains("memorix.toml"), "{status}");
    let exclude = fs::read_to_string(env.project.join(".git/info/exclude")).unwrap();
    assert!(
        exclude.ends_with("# memorix: generated memory and project state\n/.memory/\n/.memorix/\n"),
        "{exclude}"
    );
    // Idempotent: a second init changes nothing.
    let again = env.run(&["init"]).ok().stdout;
    assert_eq!(again, "memorix.toml exists; left as it is\n");
    assert_eq!(fs::read_to_string(env.project.join(".git/info/exclude")).unwrap(), exclude);
}

#[test]
fn agents_block_is_managed_without_touching_the_rest() {
    let env = TestEnv::new();
    let original = "# AGENTS.md\n\nRun `make test` before pushing.\n\n## Style\n\nNo tabs.\n";
    env.write("AGENTS.md", original);
    std::os::unix::fs::symlink("AGENTS.md", env.project.join("CLAUDE.md")).unwrap();
    env.run(&["init", "--agents"]).ok();
    let once = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(once.starts_with(original), "text before the block is untouched");
    assert!(once.contains("<!-- memorix:begin -->") && once.contains("`.memory/INDEX.md`"));
    assert_eq!(once.matches("<!-- memorix:begin -->").count(), 1, "CLAUDE.md is a link: one block");
    env.run(&["init", "--agents"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), once, "re-running is a no-op");

    // A user edits around the block; a refresh keeps their text byte for byte.
    let edited = format!("{once}\n## Added later\n\nMore.\n");
    fs::write(env.project.join("AGENTS.md"), &edited).unwrap();
    env.run(&["init"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), edited);
    fs::write(env.project.join("AGENTS.md"), &once).unwrap();
    env.run(&["init", "--remove-agents"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), original, "restored exactly");
}
