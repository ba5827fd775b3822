//! memorix.toml -> memorix.lock -> .memory/ from the CLI.

use crate::common;

use std::fs;
use std::path::Path;

use common::{TestEnv, listing};

/// A project whose memory lives in the repo: two [sources] and two mounts.
fn webapp(env: &TestEnv) {
    env.write("agent-rules/python/style.md", "# Python style\n\nUse ruff.\n");
    env.write("agent-rules/python/testing.md", "# Testing\n\nUse pytest.\n");
    env.write("agent-rules/drafts/wip.md", "# WIP\n");
    env.write("notes/decisions.md", "# Decisions\n\nKeep the API synchronous.\n");
    env.write(
        "memorix.toml",
        r#"# Our memory.
[project]
name = "webapp"
intent = "Python web service"

[sources]
"rules/webapp/" = "./agent-rules"
"docs/webapp/" = "./notes"

[mounts.python]
select = ["rules/webapp/python/"]
intent = "Python rules"

[mounts.project]
select = ["rules/webapp/", "docs/webapp/decisions.md"]
exclude = ["**/drafts/**"]
"#,
    );
}

fn tree_of(dir: &Path) -> Vec<String> {
    common::walk(dir).iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect()
}

#[test]
fn end_to_end_from_an_empty_store_and_identical_lock_on_another_history() {
    let env = TestEnv::new();
    webapp(&env);
    let out = env.run(&["build"]).ok();
    assert!(out.stdout.contains("Activated .memory/ at profile generation 1: 5 files"), "{}", out.stdout);
    let memory = env.project.join(".memory");
    assert_eq!(
        tree_of(&memory),
        [
            ".gitignore",
            ".ignore",
            "INDEX.md",
            "project",
            "project/INDEX.md",
            "project/decisions.md",
            "project/python",
            "project/python/style.md",
            "project/python/testing.md",
            "python",
            "python/INDEX.md",
            "python/style.md",
            "python/testing.md",
        ]
    );
    assert_eq!(fs::read_to_string(memory.join("python/style.md")).unwrap(), "# Python style\n\nUse ruff.\n");
    let mode = |p: &str| {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(memory.join(p)).unwrap().permissions().mode() & 0o777
    };
    // Files are read-only; directories stay writable so their owner can `rm -rf` them.
    assert_eq!((mode("python/style.md"), mode("python"), mode("INDEX.md")), (0o444, 0o755, 0o444));
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    insta::assert_snapshot!(lock);
    let index = fs::read_to_string(memory.join("INDEX.md")).unwrap();
    insta::assert_snapshot!(index);

    // A second store with a different history: unrelated ingests before and between builds.
    let other = TestEnv::new();
    other.write("unrelated/a.md", "a\n");
    other.write("unrelated/b.md", "b\n");
    other.run(&["ingest", "rules/other/", other.project.join("unrelated").to_str().unwrap()]).ok();
    other
        .run(&[
            "ingest",
            "rules/webapp/python/style.md",
            other.project.join("unrelated/a.md").to_str().unwrap(),
        ])
        .ok();
    other.run(&["ingest", "docs/x.md", other.project.join("unrelated/b.md").to_str().unwrap()]).ok();
    webapp(&other);
    other.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(other.project.join("memorix.lock")).unwrap(), lock, "byte-identical lock");
    other.run(&["ingest", "rules/more/", other.project.join("unrelated").to_str().unwrap()]).ok();
    other.run(&["lock", "--check"]).ok();
    other.run(&["lock"]).ok();
    assert_eq!(fs::read_to_string(other.project.join("memorix.lock")).unwrap(), lock);
    // Nothing to do the second time.
    let again = other.run(&["build"]).ok();
    assert!(
        again.stdout.starts_with("Nothing to do: .memory/ already shows environment"),
        "{}",
        again.stdout
    );
    other.run(&["verify"]).ok();
}

#[test]
fn two_projects_selecting_the_same_files_share_one_derivation() {
    let env = TestEnv::new();
    env.write("team/style.md", "# Style\n");
    env.write("team/review.md", "# Review\n");
    let team = env.project.join("team");
    env.run(&["ingest", "rules/team/", team.to_str().unwrap()]).ok();
    let a = env.project.join("a");
    common::write_file(&a.join("memorix.toml"), b"[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["-C", a.to_str().unwrap(), "build"]).ok();
    // Later, from a different generation: other content came and went around it.
    env.write("other/x.md", "x\n");
    env.run(&["ingest", "rules/other/", env.project.join("other").to_str().unwrap()]).ok();
    env.run(&["ingest", "rules/team/extra.md", env.project.join("other/x.md").to_str().unwrap()]).ok();
    env.run(&["rm", "rules/team/extra.md"]).ok();
    let b = env.project.join("b");
    common::write_file(&b.join("memorix.toml"), b"[mounts.shared]\nselect = [\"rules/team/@g4\"]\n");
    env.run(&["-C", b.to_str().unwrap(), "build"]).ok();
    let drv = |dir: &Path, mount: &str| {
        let lock: toml::Table =
            toml::from_str(&fs::read_to_string(dir.join("memorix.lock")).unwrap()).unwrap();
        lock["mounts"][mount]["derivation"].as_str().unwrap().to_string()
    };
    assert_eq!(drv(&a, "team"), drv(&b, "shared"));
    let stored: Vec<_> = common::walk(&env.store.join("derivations"))
        .into_iter()
        .filter(|p| p.ends_with("derivation.json"))
        .collect();
    assert_eq!(stored.len(), 1, "the store holds that derivation once: {stored:?}");
    // The pinned locator records its generation; the @latest one does not.
    let lock_b = fs::read_to_string(b.join("memorix.lock")).unwrap();
    assert!(lock_b.contains("generation = \"sha256:"), "{lock_b}");
    assert!(!fs::read_to_string(a.join("memorix.lock")).unwrap().contains("generation ="));
}

#[test]
fn lock_is_sticky_and_rewritten_only_when_its_text_changes() {
    let env = TestEnv::new();
    env.write("team/style.md", "# Style v1\n");
    let team = env.project.join("team");
    env.run(&["ingest", "rules/team/", team.to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\nintent = \"first\"\n");
    env.run(&["lock"]).ok();
    let lock_path = env.project.join("memorix.lock");
    let first = fs::read_to_string(&lock_path).unwrap();
    let mtime = fs::metadata(&lock_path).unwrap().modified().unwrap();
    assert_eq!(env.run(&["lock"]).ok().stdout, "memorix.lock is up to date\n");
    assert_eq!(fs::metadata(&lock_path).unwrap().modified().unwrap(), mtime, "not rewritten");

    // The Store moves on: the lock keeps its resolution (Cargo.lock semantics).
    env.write("team/style.md", "# Style v2\n");
    env.run(&["ingest", "rules/team/", team.to_str().unwrap()]).ok();
    env.run(&["lock"]).ok();
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), first);
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join(".memory/team/style.md")).unwrap(), "# Style v1\n");

    // Editing intent or comments changes nothing; editing select re-resolves that mount.
    env.write(
        "memorix.toml",
        "# a comment\n[mounts.team]\nselect = [\"rules/team/\"]\nintent = \"second\"\n",
    );
    env.run(&["lock"]).ok();
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), first);
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/@latest\"]\n");
    let out = env.run(&["lock"]).ok();
    assert_eq!(out.stdout, "Wrote memorix.lock (resolved team)\n");
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join(".memory/team/style.md")).unwrap(), "# Style v2\n");
}

#[test]
fn lock_check_reports_each_kind_of_staleness() {
    let env = TestEnv::new();
    webapp(&env);
    env.run(&["lock", "--check"]).expect(1);
    env.run(&["build"]).ok();
    env.run(&["lock", "--check"]).ok();
    let lock_path = env.project.join("memorix.lock");
    let good = fs::read_to_string(&lock_path).unwrap();

    // A mount's select changed.
    let manifest = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    env.write(
        "memorix.toml",
        &manifest.replace("\"rules/webapp/python/\"", "\"rules/webapp/python/style.md\""),
    );
    let out = env.run(&["lock", "--check"]).expect(1);
    insta::assert_snapshot!(out.stdout, @r"
    memorix.lock is stale:
      - mount `python`: its select, include, exclude or overrides changed since memorix.lock was written
    ");
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), good, "--check never writes");
    env.run(&["lock"]).ok();
    env.run(&["lock", "--check"]).ok();
    env.write("memorix.toml", &manifest);
    env.run(&["lock"]).ok();
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), good);

    // A file under a [sources] folder changed.
    env.write("notes/decisions.md", "# Decisions\n\nGo async.\n");
    let out = env.run(&["lock", "--check"]).expect(1);
    assert!(
        out.stdout.contains("source `docs/webapp/` (./notes) changed: memorix.lock has sha256:"),
        "{}",
        out.stdout
    );
    let before = listing(&env.project.join(".memory"));
    let refused = env.run(&["build", "--locked"]).expect(1);
    assert!(
        refused.stdout.starts_with("memorix.lock is stale; --locked refuses to change it:"),
        "{}",
        refused.stdout
    );
    assert_eq!(listing(&env.project.join(".memory")), before, ".memory/ untouched");
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), good);
    env.run(&["lock"]).ok();
    env.run(&["lock", "--check"]).ok();
    env.run(&["build", "--locked"]).ok();
    assert!(
        fs::read_to_string(env.project.join(".memory/project/decisions.md")).unwrap().contains("Go async")
    );

    // A hand-edited id.
    let current = fs::read_to_string(&lock_path).unwrap();
    let toml: toml::Table = toml::from_str(&current).unwrap();
    let drv = toml["mounts"]["python"]["derivation"].as_str().unwrap().to_string();
    // (The Store remembers which derivation each locked selection planned to, so a check walks
    // no trees; without that cache it walks them and gives the same answer.)
    let plans = env.store.join("index/plans");
    let remembered: Vec<String> =
        common::files_under(&plans).iter().map(|f| fs::read_to_string(plans.join(f)).unwrap()).collect();
    let env_id = toml["environment"]["id"].as_str().unwrap().to_string();
    assert!(remembered.contains(&format!("{drv}\n")), "{remembered:?}");
    assert!(remembered.contains(&format!("{env_id}\n")), "the environment's plan too: {remembered:?}");
    fs::remove_dir_all(&plans).unwrap();
    env.run(&["lock", "--check"]).ok();
    let forged = format!("sha256:{}", "ab".repeat(32));
    fs::write(&lock_path, current.replace(&drv, &forged)).unwrap();
    let out = env.run(&["lock", "--check"]).expect(1);
    assert!(out.stdout.contains(&format!("mount `python`: derivation does not recompute: memorix.lock has {forged}, its locked locators give {drv}")), "{}", out.stdout);
    env.run(&["build", "--locked"]).expect(1);
    env.run(&["lock"]).ok();
    env.run(&["lock", "--check"]).ok();
    assert_eq!(fs::read_to_string(&lock_path).unwrap(), current);
    // A forged environment id is not the one the Store remembers for these derivations.
    fs::write(&lock_path, current.replace(&env_id, &forged)).unwrap();
    let out = env.run(&["lock", "--check"]).expect(1);
    let why = format!("environment does not recompute: memorix.lock has {forged}, its mounts give {env_id}");
    assert!(out.stdout.contains(&why), "{}", out.stdout);
    fs::write(&lock_path, &current).unwrap();
}

#[test]
fn a_lock_with_merge_conflict_markers_is_reported_and_healed() {
    let env = TestEnv::new();
    env.write("a/x.md", "# A\n");
    env.write("b/y.md", "# B\n");
    env.run(&["ingest", "rules/a/", env.project.join("a").to_str().unwrap()]).ok();
    env.run(&["ingest", "rules/b/", env.project.join("b").to_str().unwrap()]).ok();
    // Two branches each added a mount.
    env.write("memorix.toml", "[mounts.a]\nselect = [\"rules/a/\"]\n");
    env.run(&["lock"]).ok();
    let ours = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    env.write("memorix.toml", "[mounts.b]\nselect = [\"rules/b/\"]\n");
    env.run(&["lock"]).ok();
    let theirs = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    env.write("memorix.toml", "[mounts.a]\nselect = [\"rules/a/\"]\n\n[mounts.b]\nselect = [\"rules/b/\"]\n");
    env.run(&["lock"]).ok();
    let clean = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    let conflicted = format!("<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> feature\n");
    fs::write(env.project.join("memorix.lock"), &conflicted).unwrap();

    let out = env.run(&["lock", "--check"]).expect(1);
    assert!(
        out.stdout.contains("memorix.lock has git merge-conflict markers (the first at line 1)"),
        "{}",
        out.stdout
    );
    let out = env.run(&["lock"]).ok();
    assert!(out.stdout.starts_with("Healed merge-conflict markers in memorix.lock"), "{}", out.stdout);
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), clean);
    env.run(&["lock", "--check"]).ok();
}

/// Builds `webapp`, then checks that `manifest` is refused with exit 2, its message naming
/// `memorix.toml:<line>` and the fix (`help:`), and that the lock and .memory/ are untouched.
fn bad_manifest(manifest: &str, line: usize) -> String {
    let env = TestEnv::new();
    webapp(&env);
    env.run(&["build"]).ok();
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    let memory = listing(&env.project.join(".memory"));
    env.write("memorix.toml", manifest);
    let out = env.run(&["build"]).expect(2);
    assert!(out.stderr.contains(&format!("memorix.toml:{line}:")), "want line {line}:\n{}", out.stderr);
    assert!(out.stderr.contains("\n  help: "), "every error says how to fix it:\n{}", out.stderr);
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), lock);
    assert_eq!(listing(&env.project.join(".memory")), memory);
    env.run(&["lock", "--check"]).expect(2);
    out.stderr
}

#[test]
fn bad_manifests_exit_2_with_file_and_line_and_touch_nothing() {
    insta::assert_snapshot!(bad_manifest("[project]\nname = \"x\n", 2), @r#"
    memorix::manifest::syntax

      x memorix.toml:2: invalid TOML: invalid basic string, expected `"`
       ,-[memorix.toml:2:10]
     1 | [project]
     2 | name = "x
       :          ^
       :          `-- here
       `----
      help: fix the TOML at the marked place: strings in double quotes, arrays closed with `]`, each [table] header on a line of its own (https://toml.io)
    "#);
    insta::assert_snapshot!(bad_manifest("[mounts.python]\nselct = [\"rules/\"]\n", 2), @r#"
    memorix::manifest::unknown_key

      x memorix.toml:2: unknown key `selct`
       ,-[memorix.toml:2:1]
     1 | [mounts.python]
     2 | selct = ["rules/"]
       : ^^|^^
       :   `-- unknown key
       `----
      help: did you mean `select`? known keys here: select, include, exclude, intent, match, library, version, applies-to
    "#);
    insta::assert_snapshot!(bad_manifest("[mounts.python]\nselect = [\"rules/ok/\", \"rules/a/../b/\"]\n", 2), @r#"
    memorix::locator::parent_dir

      x memorix.toml:2: invalid locator `rules/a/../b/`: `..` path component
       ,-[memorix.toml:2:33]
     1 | [mounts.python]
     2 | select = ["rules/ok/", "rules/a/../b/"]
       :                                 ^|
       :                                  `-- `..` path component
       `----
      help: locators cannot leave their tree; name the path from the kind down
    "#);
    let err = bad_manifest("[sources]\n\"rules/x/\" = \"./missing-folder\"\n", 2);
    assert!(err.contains("source folder \"./missing-folder\" does not exist"), "{err}");
    let err = bad_manifest("[mounts.\"../escape\"]\nselect = [\"rules/\"]\n", 1);
    assert!(err.contains("mount path \"../escape\" leaves the project (`..`)"), "{err}");
    let err = bad_manifest("[project]\nmemory = \"/etc/memory\"\n", 2);
    assert!(err.contains("`memory = \"/etc/memory\"` is absolute"), "{err}");
    let err = bad_manifest("[pins]\nfiles = [\"Cargo.lock\"]\n", 2);
    assert!(err.contains("pin file \"Cargo.lock\" does not exist"), "{err}");
    let err = bad_manifest("[store]\nremote = \"s3://bucket\"\n", 2);
    assert!(err.contains("unknown key `remote`") && err.contains("substituters"), "{err}");
    let err = bad_manifest("[store]\nsubstituters = [\"ftp://host/x\"]\n", 2);
    assert!(err.contains("substituter \"ftp://host/x\" is not a remote store URL"), "{err}");
    let err = bad_manifest("[artifacts.summary]\ncommand = []\n", 2);
    assert!(err.contains("artifact `summary` has an empty command"), "{err}");
    let err = bad_manifest("[mount.python]\nselect = []\n", 1);
    assert!(err.contains("did you mean `mounts`?"), "{err}");
}

#[test]
fn a_locator_that_resolves_to_nothing_is_exit_2() {
    let env = TestEnv::new();
    webapp(&env);
    let manifest = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    env.write("memorix.toml", &manifest.replace("docs/webapp/decisions.md", "docs/webapp/nope.md"));
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("`docs/webapp/nope.md` does not exist in docs@g1"), "{err}");
}

#[test]
fn graph_prints_dot_and_mermaid_and_reports_cycles() {
    let env = TestEnv::new();
    webapp(&env);
    insta::assert_snapshot!(env.run(&["graph", "--format", "mermaid"]).ok().stdout, @r#"
    flowchart LR
      n0["source docs/webapp/ (./notes)"]
      n1["source rules/webapp/ (./agent-rules)"]
      n2["environment (.memory)"]
      n3["mount project"]
      n4["locator rules/webapp/"]
      n5["locator docs/webapp/decisions.md"]
      n6["mount python"]
      n7["locator rules/webapp/python/"]
      n4 --> n3
      n1 --> n4
      n5 --> n3
      n0 --> n5
      n3 --> n2
      n7 --> n6
      n1 --> n7
      n6 --> n2
    "#);
    let dot = env.run(&["graph"]).ok().stdout;
    assert!(dot.starts_with("digraph memorix {") && dot.contains("n1 -> n4;"), "{dot}");

    // A source folder inside the memory directory feeds a build its own output.
    env.write(".memory/python/loop.md", "# loop\n");
    env.write(
        "memorix.toml",
        "[sources]\n\"rules/loop/\" = \".memory/python\"\n\n[mounts.python]\nselect = [\"rules/loop/\"]\n",
    );
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(
        err.contains("dependency cycle: source rules/loop/ (.memory/python) -> locator rules/loop/ -> mount python -> environment (.memory) -> source rules/loop/ (.memory/python)"),
        "{err}"
    );
}

#[test]
fn readers_never_see_a_mix_of_two_environments() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let env = TestEnv::new();
    let write_version = |v: &str| {
        for i in 0..20 {
            env.write(&format!("rules-src/f{i:02}.md"), &format!("{v}\n"));
        }
    };
    write_version("A");
    env.write(
        "memorix.toml",
        "[sources]\n\"rules/r/\" = \"./rules-src\"\n\n[mounts.r]\nselect = [\"rules/r/\"]\n",
    );
    env.run(&["build"]).ok();

    let memory = env.project.join(".memory");
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (memory, stop) = (memory.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut passes = 0;
            while !stop.load(Ordering::Relaxed) {
                // Open the directory once and read through that handle, as a reader must to see one tree (book: design/delivery.md#activation).
                let Ok(dir) = fs::File::open(&memory) else { continue };
                let fd = std::os::fd::AsRawFd::as_raw_fd(&dir);
                let base = format!("/proc/self/fd/{fd}/r");
                let Ok(entries) = fs::read_dir(&base) else { continue };
                let mut seen = std::collections::BTreeSet::new();
                let mut complete = true;
                // Each mount's index names the environment: the same one, or the test fails below.
                for e in
                    entries.flatten().filter(|e| e.file_name() != "INDEX.md").map(Ok::<_, std::io::Error>)
                {
                    match e.and_then(|e| fs::read_to_string(e.path())) {
                        Ok(text) => {
                            seen.insert(text);
                        }
                        // The tree was retired and removed after two more swaps; start over.
                        Err(_) => complete = false,
                    }
                }
                assert!(seen.len() <= 1, "a mix of environments: {seen:?}");
                passes += complete as usize;
            }
            passes
        })
    };
    for round in 0..12 {
        write_version(if round % 2 == 0 { "B" } else { "A" });
        env.run(&["build"]).ok();
    }
    stop.store(true, Ordering::Relaxed);
    let passes = reader.join().expect("the reader saw no mix");
    assert!(passes > 0, "the reader completed passes");
}

#[test]
fn verify_checks_derivations_and_environments() {
    let env = TestEnv::new();
    webapp(&env);
    env.run(&["build"]).ok();
    let ok = env.run(&["verify"]).ok().stdout;
    assert!(ok.ends_with("2 derivations, 1 environments\n"), "{ok}");
    let lock: toml::Table =
        toml::from_str(&fs::read_to_string(env.project.join("memorix.lock")).unwrap()).unwrap();
    let hex = |id: &toml::Value| id.as_str().unwrap().strip_prefix("sha256:").unwrap().to_string();
    let drv = hex(&lock["mounts"]["python"]["derivation"]);
    let env_id = hex(&lock["environment"]["id"]);
    let drv_dir = env.store.join("derivations").join(&drv[..2]).join(&drv);
    let env_dir = env.store.join("environments").join(&env_id[..2]).join(&env_id);
    // A build writes records only: no tree of hardlinks per id (one is made for hooks).
    assert_eq!(
        common::files_under(&drv_dir),
        ["artifacts/SUMMARY.md", "artifacts/search-v1.tar", "artifacts/titles.json", "derivation.json"]
    );
    assert_eq!(common::files_under(&env_dir), ["environment.json"]);

    // A derivation record whose entries no longer hash to its id.
    let record = drv_dir.join("derivation.json");
    let text = fs::read_to_string(&record).unwrap().replacen("style.md", "stile.md", 1);
    fs::set_permissions(&record, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    fs::write(&record, text).unwrap();
    // An environment record deleted.
    fs::remove_file(env_dir.join("environment.json")).unwrap();
    let report = env.run(&["--json", "verify"]).expect(1).json();
    let problems: Vec<(&str, &str)> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["object"].as_str().unwrap(), p["message"].as_str().unwrap()))
        .collect();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(problems[0].0, format!("derivation sha256:{drv}"));
    assert!(problems[0].1.contains("entries do not hash to its id"), "{problems:?}");
    assert_eq!(problems[1].0, format!("environment sha256:{env_id}"));
}

#[test]
fn an_update_plans_from_the_last_derivation_and_gives_what_a_fresh_store_gives() {
    let env = TestEnv::new();
    let src = env.project.join("r");
    let ingest =
        |store: &str| env.run(&["--store", store, "ingest", "rules/team/", src.to_str().unwrap()]).ok();
    let store = env.store.to_str().unwrap().to_string();
    env.write("r/style.md", "# Style\n\n## Formatting\n");
    env.write("r/plain.md", "no heading\n");
    env.write("r/sub/b.md", "# B\n");
    env.write("r/sub/deep/c.md", "# C\n\n### Detail\n");
    ingest(&store);
    env.write(
        "memorix.toml",
        "[mounts.team]\nselect = [\"rules/team/\"]\n\n[mounts.all]\nselect = [\"rules/\"]\n",
    );
    env.run(&["build"]).ok();
    // A heading edited, a file added in a new directory, one removed, a directory emptied.
    env.write("r/style.md", "# Style guide\n\n## Formatting\n");
    env.write("r/new/d.md", "# D\n");
    fs::remove_file(src.join("plain.md")).unwrap();
    fs::remove_dir_all(src.join("sub/deep")).unwrap();
    ingest(&store);
    env.run(&["update"]).ok();
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();

    // The same content in a fresh store, built from nothing.
    let fresh = env.root.join("fresh-store");
    ingest(fresh.to_str().unwrap());
    fs::rename(env.project.join("memorix.lock"), env.root.join("updated.lock")).unwrap();
    env.run(&["--store", fresh.to_str().unwrap(), "lock"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), lock);
    env.run(&["--store", fresh.to_str().unwrap(), "build"]).ok();
    let lock: toml::Table = toml::from_str(&lock).unwrap();
    let artifacts = |store: &std::path::Path, mount: &str| {
        let hex = lock["mounts"][mount]["derivation"].as_str().unwrap().strip_prefix("sha256:").unwrap();
        store.join("derivations").join(&hex[..2]).join(hex).join("artifacts")
    };
    for mount in ["team", "all"] {
        for name in ["SUMMARY.md", "titles.json"] {
            let updated = fs::read_to_string(artifacts(&env.store, mount).join(name)).unwrap();
            assert_eq!(
                updated,
                fs::read_to_string(artifacts(&fresh, mount).join(name)).unwrap(),
                "{mount} {name}"
            );
        }
    }
    let summary = fs::read_to_string(artifacts(&env.store, "team").join("SUMMARY.md")).unwrap();
    assert!(
        summary.ends_with(
            "3 files.\n\n- `new/d.md`: D\n- `style.md`: Style guide\n  - Formatting\n- `sub/b.md`: B\n"
        ),
        "{summary}"
    );
}

#[test]
fn artifacts_summary_built_in_and_hooks_once_per_derivation() {
    let env = TestEnv::new();
    env.write("r/style.md", "# Style\n\n## Formatting\n\n```\n# not a heading\n```\n\n### Line length\n");
    env.write("r/tests.md", "# Tests\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    // The hook counts its runs and prints a summary of the tree it is given.
    let counter = env.root.join("runs");
    env.write(
        "summarise.sh",
        &format!("echo run >> {}\necho \"$(ls | wc -l) files in $MEMORIX_DERIVATION\"\n", counter.display()),
    );
    let hook = format!(
        "[artifacts.digest]\ncommand = [\"sh\", \"{}\"]\n\n",
        env.project.join("summarise.sh").display()
    );
    env.write("memorix.toml", &format!("{hook}[mounts.team]\nselect = [\"rules/team/\"]\n"));
    env.run(&["trust"]).ok();
    env.run(&["build"]).ok();
    let lock: toml::Table =
        toml::from_str(&fs::read_to_string(env.project.join("memorix.lock")).unwrap()).unwrap();
    let drv = lock["mounts"]["team"]["derivation"].as_str().unwrap().to_string();
    let hex = drv.strip_prefix("sha256:").unwrap();
    let artifacts = env.store.join("derivations").join(&hex[..2]).join(hex).join("artifacts");
    let summary = fs::read_to_string(artifacts.join("SUMMARY.md")).unwrap();
    assert_eq!(
        summary,
        format!(
            "# Summary of derivation {drv}\n\n2 files.\n\n- `style.md`: Style\n  - Formatting\n    - Line length\n- `tests.md`: Tests\n"
        )
    );
    let index = fs::read_to_string(env.project.join(".memory/team/INDEX.md")).unwrap();
    assert!(index.contains(&format!("## digest\n\n2 files in {drv}\n")), "{index}");
    assert!(!env.project.join(".memory/team/SUMMARY.md").exists(), "artifacts are not delivered into mounts");
    // The hook ran in the derivation's files, made as a tree on demand; verify checks it.
    let tree = env.store.join("derivations").join(&hex[..2]).join(hex).join("tree");
    assert_eq!(common::files_under(&tree), ["style.md", "tests.md"]);
    let file = tree.join("style.md");
    fs::set_permissions(&tree, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    fs::remove_file(&file).unwrap();
    fs::write(&file, "tampered\n").unwrap();
    let report = env.run(&["--json", "verify"]).expect(1).json();
    assert_eq!(report["problems"][0]["object"], format!("derivations/{}/{hex}/tree/style.md", &hex[..2]));
    fs::remove_dir_all(&tree).unwrap();
    env.run(&["verify"]).ok();

    // Another project with the same selection reuses the derivation and its artifacts.
    let other = env.project.join("other");
    common::write_file(
        &other.join("memorix.toml"),
        format!("{hook}[mounts.shared]\nselect = [\"rules/team/\"]\n").as_bytes(),
    );
    env.run(&["-C", other.to_str().unwrap(), "build"]).ok();
    env.run(&["update"]).ok();
    assert_eq!(fs::read_to_string(&counter).unwrap(), "run\n", "the hook ran once for this derivation id");

    // A failing hook warns, delivers the memory anyway, and runs again next time.
    env.write(
        "memorix.toml",
        "[artifacts.broken]\ncommand = [\"false\"]\n\n[mounts.team]\nselect = [\"rules/team/\"]\n",
    );
    env.run(&["trust"]).ok();
    let out = env.run(&["build"]).ok();
    assert!(out.stderr.contains("warning: artifact `broken` for derivation"), "{}", out.stderr);
    assert!(env.run(&["build"]).ok().stderr.contains("warning: artifact `broken`"));
}

/// A Store file named with `@` (`logo@2x.md`, not a locator's selector) is built, explained
/// and verified like any other: its derivation records where it came from.
#[test]
fn a_file_named_with_an_at_sign_is_built_explained_and_verified() {
    let env = TestEnv::new();
    env.ingest("docs/site/", &[("img/logo@2x.md", "retina\n"), ("index.md", "home\n")]);
    env.write("memorix.toml", "[mounts.site]\nselect = [\"docs/site/\"]\n");
    env.run(&["build"]).ok();
    let placed = env.project.join(".memory/site/img/logo@2x.md");
    assert_eq!(fs::read_to_string(&placed).unwrap(), "retina\n");
    let e = env.run(&["--json", "explain", ".memory/site/img/logo@2x.md"]).ok().json();
    assert_eq!(e["origin"], "docs/site/img/logo@2x.md");
    let report = env.run(&["--json", "verify"]).ok().json();
    assert_eq!(report["problems"], serde_json::json!([]), "{report}");
}

/// `build --offline` with fifteen libraries the Store lacks names every one (with its pin line
/// and the command that fetches it) and writes nothing: no Store, no `.ignore`, no `.memorix/`,
/// and an existing Store unchanged, its `[sources]` not ingested.
#[test]
fn an_offline_build_lists_every_missing_library_and_writes_nothing() {
    let env = TestEnv::new();
    let names: Vec<String> = (1..=15).map(|i| format!("crate{i:02}")).collect();
    let mut lock = String::from("version = 4\n");
    let mut manifest =
        String::from("[pins]\nfiles = [\"Cargo.lock\"]\n\n[sources]\n\"rules/p/\" = \"./r\"\n");
    for n in &names {
        lock.push_str(&format!(
            "\n[[package]]\nname = \"{n}\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        ));
        manifest.push_str(&format!("\n[mounts.\"libs/{n}\"]\nselect = [\"docs/{n}/@pin\"]\n"));
    }
    env.write("Cargo.lock", &lock);
    env.write("r/a.md", "# A\n");
    env.write("memorix.toml", &manifest);
    let project = listing(&env.project);
    let out = env.run(&["build", "--offline"]).expect(2);
    assert!(
        out.stderr.contains("memorix::fetch::failed") && out.stderr.contains("15 libraries"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
    for n in &names {
        assert!(out.stderr.contains(&format!("memorix fetch {n}`")), "{n}: {}", out.stderr);
    }
    assert!(!env.store.exists(), "no Store is created");
    assert_eq!(listing(&env.project), project, "no .ignore, no .memorix/");

    // An existing Store is left as it was: the sources are not ingested either.
    env.ingest("rules/other/", &[("o.md", "# O\n")]);
    let store = env.store_listing();
    let one = manifest.split("\n[mounts.\"libs/crate02\"]").next().unwrap().to_string();
    env.write("memorix.toml", &one);
    let project = listing(&env.project);
    let out = env.run(&["build", "--offline"]).expect(2);
    assert!(
        out.stderr.contains("memorix::fetch::offline") && out.stderr.contains("crate01 1.0.0"),
        "{}",
        out.stderr
    );
    assert_eq!(env.store_listing(), store);
    assert_eq!(listing(&env.project), project);
}

/// Where a build wrote is never left unsaid: the run that creates the default Store names it
/// first (as a terminal shows it), and a project's first build into a default Store that was
/// already there (another project's, or the README's demo's) names it too; later builds do
/// not, nor does a build into a Store the user named (`--store`, `MEMORIX_STORE`).
#[test]
fn a_first_build_says_which_store_it_wrote_into() {
    let env = TestEnv::new();
    let build = |dir: &str| {
        let mut cmd = env.command();
        cmd.env_remove("MEMORIX_STORE")
            .env("XDG_DATA_HOME", env.root.join("data"))
            .args(["-C", dir, "build"]);
        env.run_cmd(&mut cmd).ok()
    };
    let project = |dir: &str| {
        env.write(&format!("{dir}/r/x.md"), "# X\n");
        let manifest =
            format!("[sources]\n\"rules/{dir}/\" = \"./r\"\n\n[mounts.m]\nselect = [\"rules/{dir}/\"]\n");
        env.write(&format!("{dir}/memorix.toml"), &manifest);
    };
    project("a");
    let first = build("a");
    assert!(
        first.stderr.starts_with("Created a Store at [ROOT]/data/memorix/store (--store DIR"),
        "{}",
        first.stderr
    );
    assert!(!first.stdout.contains("Stored this project's memory"), "{}", first.stdout);
    project("b");
    let second = build("b");
    assert!(
        second.stdout.starts_with(
            "Stored this project's memory in the Store at [ROOT]/data/memorix/store (--store DIR or MEMORIX_STORE choose another)\n"
        ),
        "{}",
        second.stdout
    );
    env.write("b/r/x.md", "# X\n\nmore\n");
    assert!(!build("b").stdout.contains("Store at"));
    env.ingest("rules/other/", &[("o.md", "# O\n")]);
    project("c");
    let chosen = env.run(&["-C", "c", "build"]).ok();
    assert!(!chosen.stdout.contains("Store at") && chosen.stderr.is_empty(), "{chosen:?}");
}
