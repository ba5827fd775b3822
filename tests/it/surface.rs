//! The CLI's surface a newcomer meets on day two: what `run`, `cat`, `log`, `explain` and
//! `--json` say when asked something slightly off, and `--dry-run` before a change.

use crate::common;

use std::fs;

use common::TestEnv;

fn built(env: &TestEnv) {
    env.ingest("rules/team/", &[("style.md", "# Style\n"), ("python/testing.md", "# Testing\n")]);
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();
}

#[test]
fn run_of_a_missing_command_exits_127_with_one_message() {
    let env = TestEnv::new();
    built(&env);
    let out = env.run(&["run", "--", "no-such-command-zz"]).expect(127);
    insta::assert_snapshot!(out.stderr, @r"
    memorix::run::not_found

      x `no-such-command-zz`: command not found
      help: check the spelling, or that it is on PATH (`command -v no-such-command-zz`)
    ");
    assert_eq!(out.stdout, "");
}

#[test]
fn cat_of_a_directory_names_a_file_locator_that_works() {
    let env = TestEnv::new();
    built(&env);
    for arg in ["rules/team", "rules/team/"] {
        let err = env.run(&["cat", arg]).expect(2).stderr;
        assert!(
            err.contains(
                "help: `memorix ls rules/team/` lists it; e.g. `memorix cat rules/team/python/testing.md`"
            ),
            "{err}"
        );
    }
    assert_eq!(env.run(&["cat", "rules/team/python/testing.md"]).ok().stdout, "# Testing\n");
}

#[test]
fn under_json_errors_are_one_object_on_stderr_and_text_commands_refuse_it() {
    let env = TestEnv::new();
    built(&env);
    let out = env.run(&["--json", "ls", "rules/team/nope.md"]).expect(2);
    let err: serde_json::Value = serde_json::from_str(out.stderr.trim()).unwrap();
    assert_eq!(err["code"], "memorix::store::not_found", "{err}");
    assert_eq!(out.stderr.trim().lines().count(), 1);
    for cmd in [&["cat", "rules/team/style.md"][..], &["graph"]] {
        let out = env.run(&[&["--json"][..], cmd].concat()).expect(2);
        let err: serde_json::Value = serde_json::from_str(out.stderr.trim()).unwrap();
        assert_eq!(err["code"], "memorix::cli::no_json", "{cmd:?}: {err}");
        assert!(err["help"].as_str().unwrap().starts_with("drop --json"), "{err}");
    }
    let generation = "1";
    let dir = env.root.join("checked-out");
    let out = env.run(&["--json", "checkout", generation, dir.to_str().unwrap()]).ok().json();
    assert_eq!(out["files"], 2);
    assert_eq!(fs::read_to_string(dir.join("team/style.md")).unwrap(), "# Style\n");
}

#[test]
fn log_n_shows_the_newest_generations() {
    let env = TestEnv::new();
    for i in 1..=3 {
        env.ingest("rules/team/", &[(&format!("r{i}.md"), "x\n")]);
    }
    let out = env.run(&["log", "-n", "2"]).ok().stdout;
    let heads: Vec<&str> = out.lines().filter(|l| !l.starts_with(' ')).map(|l| &l[..8]).collect();
    assert_eq!(heads, ["rules@g3", "rules@g2"]);
    assert_eq!(env.run(&["--json", "log", "--max-count", "1"]).ok().json().as_array().unwrap().len(), 1);
}

#[test]
fn a_resolve_error_names_the_mount_and_its_manifest_line() {
    let env = TestEnv::new();
    built(&env);
    env.write(
        "memorix.toml",
        "[mounts.team]\nselect = [\"rules/team/\"]\n\n[mounts.docs]\nselect = [\n  \"rules/team/style.md\",\n  \"rules/gone/\",\n]\n",
    );
    let err = env.run(&["build"]).expect(2).stderr;
    insta::assert_snapshot!(err, @r"
    memorix::store::not_found

      x memorix.toml:7, mount `docs`: `rules/gone/` does not exist in rules@g1
      help: `memorix ls rules/` lists what is there
    ");
}

#[test]
fn explain_takes_paths_from_a_subdirectory_and_shows_a_reused_derivations_decisions() {
    let env = TestEnv::new();
    env.ingest("rules/a/", &[("style.md", "a\n")]);
    env.ingest("rules/b/", &[("style.md", "b\n")]);
    let manifest = "[mounts.s]\nselect = [\"rules/a/\", \"rules/b/\"]\n\n[overrides]\n\"s/style.md\" = \"rules/b/style.md\"\n";
    env.write("memorix.toml", manifest);
    env.run(&["build"]).ok();
    // A second project selecting the same: its build reuses the first one's derivation.
    let other = env.project.join("other");
    common::write_file(&other.join("memorix.toml"), manifest.as_bytes());
    let second = env.run(&["-C", other.to_str().unwrap(), "build"]).ok().stdout;
    assert!(second.contains("0 new derivations"), "{second}");
    let sub = other.join(".memory/s");
    let text = env.run_cmd(env.command().current_dir(&sub).args(["explain", "style.md"])).ok().stdout;
    assert!(text.starts_with("s/style.md\n  from    rules/b/style.md"), "{text}");
    assert!(
        text.contains("won     over rules/a/style.md (override: an [overrides] entry names it)"),
        "{text}"
    );
}

#[test]
fn dry_runs_say_what_build_and_lock_would_change_and_write_nothing() {
    let env = TestEnv::new();
    built(&env);
    assert_eq!(
        env.run(&["build", "--dry-run"]).ok().stdout,
        "Nothing to do: memorix.lock holds and .memory/ shows it\n"
    );
    env.ingest("rules/extra/", &[("x.md", "x\n")]);
    env.write(
        "memorix.toml",
        "[mounts.team]\nselect = [\"rules/team/\"]\n\n[mounts.extra]\nselect = [\"rules/extra/\"]\n",
    );
    let lock = fs::read(env.project.join("memorix.lock")).unwrap();
    let memory = common::listing(&env.project.join(".memory"));
    insta::assert_snapshot!(env.run(&["build", "--dry-run"]).ok().stdout, @r"
    Would write memorix.lock
      resolve extra afresh: 1 file added, 0 modified, 0 removed
    Would activate the new environment in .memory/
    ");
    assert_eq!(
        env.run(&["lock", "--dry-run"]).ok().stdout,
        "Would write memorix.lock\n  resolve extra afresh: 1 file added, 0 modified, 0 removed\n"
    );
    assert_eq!(fs::read(env.project.join("memorix.lock")).unwrap(), lock, "nothing written");
    assert_eq!(common::listing(&env.project.join(".memory")), memory);
}

#[test]
fn lock_heals_a_corrupt_lock_that_other_commands_report() {
    let env = TestEnv::new();
    built(&env);
    let path = env.project.join("memorix.lock");
    let good = fs::read_to_string(&path).unwrap();
    fs::write(&path, format!("{good}garbage [[[\n")).unwrap();
    let check = env.run(&["lock", "--check"]).expect(1).stdout;
    assert!(check.contains("memorix.lock is not a valid lock"), "{check}");
    env.run(&["build", "--locked"]).expect(1);
    let out = env.run(&["lock"]).ok().stdout;
    assert!(out.starts_with("Replaced an invalid lock ("), "{out}");
    assert!(out.ends_with("): every mount resolved afresh\nWrote memorix.lock (resolved team)\n"), "{out}");
    assert_eq!(fs::read_to_string(&path).unwrap(), good);
    env.run(&["lock", "--check"]).ok();
}
