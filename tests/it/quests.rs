//! Quests, freshness, `memorix status`, `memorix update` (book: design/quests.md, the paper's Figure 7).

use crate::common;

use std::fs;

use common::{TestEnv, listing};

fn lock_text(env: &TestEnv) -> String {
    fs::read_to_string(env.project.join("memorix.lock")).unwrap()
}

fn files_of(dir: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    listing(dir).into_iter().filter(|(_, v)| !v.contains(" dir ")).collect()
}

#[test]
fn figure_7_stale_update_rollback_activate() {
    let env = TestEnv::new();
    env.write("cpp/cpp.md", "# C++\n\nv1\n");
    env.write("cpp/style.md", "# Style\n");
    env.run(&["ingest", "rules/lang/", env.project.join("cpp").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[project]\nintent = \"C++ service\"\n\n[mounts.cpp]\nselect = [\"rules/lang/\"]\nintent = \"C++ rules\"\n");
    env.run(&["build"]).ok();
    let memory = env.project.join(".memory");
    let e1 = files_of(&memory);
    assert_eq!(env.run(&["status"]).ok().stdout, "cpp: fresh\n");

    // [1] a new version of cpp.md marks the dependent quest stale.
    env.write("cpp/cpp.md", "# C++\n\nv2\n");
    let out = env
        .run(&["--json", "ingest", "rules/lang/cpp.md", env.project.join("cpp/cpp.md").to_str().unwrap()])
        .ok()
        .json();
    assert_eq!(out["quests"]["marked_stale"], 2, "the derivation quest and the environment quest");
    let hits = env.run(&["--json", "quest", "search", "C++ rules"]).ok().json();
    assert_eq!(hits[0]["kind"], "derivation");
    assert_eq!(hits[0]["projects"][0]["stale"], true);
    let reason = hits[0]["projects"][0]["stale_reasons"][0].as_str().unwrap().to_string();
    assert!(reason.starts_with("rules/lang/cpp.md: "), "{reason}");
    // The quest is stale (the Store moved on), but the lock still holds: an update is
    // available, which `status --check` reports (exit 1) while `lock --check` holds.
    let st = env.run(&["status", "--check"]).expect(1).stdout;
    assert_eq!(
        st,
        "cpp: update available (the Store moved on; `memorix update cpp` takes it)\n    M cpp.md\n"
    );
    env.run(&["lock", "--check"]).ok();
    assert_eq!(env.run(&["update", "--dry-run"]).ok().stdout, st);

    // [2] accepting the new version appends to the quest's history.
    env.run(&["update"]).ok();
    assert_eq!(fs::read_to_string(memory.join("cpp/cpp.md")).unwrap(), "# C++\n\nv2\n");
    env.run(&["status", "--check"]).ok();
    let quests = env.run(&["--json", "quest", "list"]).ok().json();
    let env_quest = quests.as_array().unwrap().iter().find(|q| q["kind"] == "environment").unwrap();
    let history: Vec<&str> =
        env_quest["history"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    let profile = env.run(&["--json", "profile"]).ok().json();
    let (e1_id, e2_id) = (
        profile["bindings"][0]["environment"].as_str().unwrap(),
        profile["bindings"][1]["environment"].as_str().unwrap(),
    );
    assert_eq!(history, [e1_id, e2_id]);
    assert_eq!(env_quest["projects"][0]["stale"], false);
    assert_eq!(env_quest["projects"][0]["resolves"], 2);

    // [4] rollback returns to E1 byte for byte; [3] activate 2 returns to E2.
    env.run(&["rollback"]).ok();
    assert_eq!(files_of(&memory), e1);
    env.run(&["activate", "2"]).ok();
    assert_eq!(fs::read_to_string(memory.join("cpp/cpp.md")).unwrap(), "# C++\n\nv2\n");
    env.run(&["verify"]).ok();
}

#[test]
fn one_ingest_among_a_thousand_quests_touches_only_the_affected_ones() {
    let env = TestEnv::new();
    let mut manifest = String::new();
    for i in 0..1000 {
        env.write(&format!("src/p{i:04}/rule.md"), &format!("# rule {i}\n"));
        manifest.push_str(&format!("[mounts.p{i:04}]\nselect = [\"rules/p{i:04}/\"]\n"));
    }
    env.run(&["ingest", "rules/", env.project.join("src").to_str().unwrap()]).ok();
    env.write("memorix.toml", &manifest);
    env.run(&["build"]).ok();
    assert_eq!(env.count("quests"), 1001, "one per mount and one for the environment");

    env.write("src/p0042/rule.md", "# rule 42, revised\n");
    let path = env.project.join("src/p0042/rule.md");
    let out = env.run(&["--json", "ingest", "rules/p0042/rule.md", path.to_str().unwrap()]).ok().json();
    assert_eq!(out["quests"]["read"], 2, "{}", out["quests"]);
    assert_eq!(out["quests"]["written"], 2);
    assert_eq!(out["quests"]["marked_stale"], 2);
    let stale: Vec<String> = env
        .run(&["--json", "quest", "list"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["projects"][0]["stale"] == true)
        .map(|q| {
            q["selection"][0]["mount"].as_str().unwrap_or("").to_string()
                + q["selection"][0]["select"][0].as_str().unwrap()
        })
        .collect();
    assert_eq!(stale.len(), 2, "{stale:?}");
    assert!(stale.iter().any(|s| s == "rules/p0042/"), "{stale:?}");
}

#[test]
fn partial_update_moves_one_mount_and_keeps_the_others_byte_for_byte() {
    let env = TestEnv::new();
    for m in ["python", "go", "rust"] {
        env.write(&format!("src/{m}/style.md"), &format!("# {m} v1\n"));
    }
    env.run(&["ingest", "rules/", env.project.join("src").to_str().unwrap()]).ok();
    env.write(
        "memorix.toml",
        "[mounts.python]\nselect = [\"rules/python/\"]\n\n[mounts.go]\nselect = [\"rules/go/\"]\n\n[mounts.rust]\nselect = [\"rules/rust/\"]\n",
    );
    env.run(&["build"]).ok();
    let before = lock_text(&env);
    for m in ["python", "go", "rust"] {
        env.write(&format!("src/{m}/style.md"), &format!("# {m} v2\n"));
    }
    env.run(&["ingest", "rules/", env.project.join("src").to_str().unwrap()]).ok();
    let st = env.run(&["status"]).ok().stdout;
    let update = |m: &str| {
        format!("{m}: update available (the Store moved on; `memorix update {m}` takes it)\n    M style.md\n")
    };
    assert_eq!(st, [update("go"), update("python"), update("rust")].concat());

    env.run(&["update", "python"]).ok();
    let after = lock_text(&env);
    let section = |text: &str, mount: &str| -> String {
        let start = text.find(&format!("[mounts.{mount}]")).unwrap();
        let rest = &text[start + 1..];
        let end = rest.find("\n[mounts.").map(|i| start + 1 + i).unwrap_or(text.len());
        text[start..end].to_string()
    };
    assert_eq!(section(&after, "go"), section(&before, "go"));
    assert_eq!(section(&after, "rust"), section(&before, "rust"));
    assert_ne!(section(&after, "python"), section(&before, "python"));
    let env_line = |t: &str| t.lines().find(|l| l.starts_with("id = ")).unwrap().to_string();
    assert_ne!(env_line(&after), env_line(&before), "the environment id moved");
    assert_eq!(fs::read_to_string(env.project.join(".memory/python/style.md")).unwrap(), "# python v2\n");
    assert_eq!(fs::read_to_string(env.project.join(".memory/go/style.md")).unwrap(), "# go v1\n");
    let st = env.run(&["status"]).ok().stdout;
    assert_eq!(st, [update("go"), "python: fresh\n".to_string(), update("rust")].concat());
}

#[test]
fn run_records_the_environment_and_checkout_replays_it() {
    let env = TestEnv::new();
    env.write("team/a.md", "# A v1\n");
    env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();
    let out = env.run(&["run", "--", "sh", "-c", "echo $MEMORIX_ENVIRONMENT; exit 3"]).expect(3);
    let e1 = out.stdout.trim().to_string();
    assert!(e1.starts_with("sha256:") && e1.len() == 71, "{e1}");
    let runs = env.run(&["--json", "runs"]).ok().json();
    assert_eq!(runs[0]["environment"], e1.as_str());
    assert_eq!(runs[0]["exit_code"], 3);
    assert_eq!(runs[0]["command"][0], "sh");
    let quests = env.run(&["--json", "quest", "list"]).ok().json();
    assert!(
        quests.as_array().unwrap().iter().all(|q| q["projects"][0]["reads"] == 1),
        "a read counted on each quest"
    );
    let read_then = files_of(&env.project.join(".memory"));

    // Later updates do not stop a replay of what that run read.
    env.write("team/a.md", "# A v2\n");
    env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    env.run(&["update"]).ok();
    let replay = env.root.join("replay");
    env.run(&["checkout", &e1, replay.to_str().unwrap()]).ok();
    let mut got = files_of(&replay);
    let mut want = read_then;
    // INDEX.md of a checkout carries no profile generation.
    got.remove("INDEX.md");
    want.remove("INDEX.md");
    assert_eq!(got, want);
    let d = env.run(&["diff", "1", "2"]).ok().stdout;
    assert!(d.ends_with("  M team/a.md\n"), "{d}");
    assert!(env.run(&["checkout", "1", replay.to_str().unwrap()]).expect(2).stderr.contains("is not empty"));
}

#[test]
fn ingest_while_update_runs_keeps_store_and_profile_consistent() {
    let env = TestEnv::new();
    env.write("team/a.md", "# A 0\n");
    env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();
    for round in 1..6 {
        let src = env.root.join(format!("other{round}"));
        common::write_file(&src.join("x.md"), format!("# other {round}\n").as_bytes());
        env.write("team/a.md", &format!("# A {round}\n"));
        let ingest = env
            .command()
            .args(["ingest", "rules/team/", env.project.join("team").to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let other = env
            .command()
            .args(["ingest", "rules/other/", src.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let update = env.run(&["update"]);
        assert_eq!(update.code, 0, "{}", update.stderr);
        for mut c in [ingest, other] {
            assert!(c.wait().unwrap().success());
        }
    }
    env.run(&["update"]).ok();
    env.run(&["verify"]).ok();
    assert_eq!(fs::read_to_string(env.project.join(".memory/team/a.md")).unwrap(), "# A 5\n");
    let profile = env.run(&["--json", "profile"]).ok().json();
    assert!(profile["bindings"].as_array().unwrap().len() >= 2);
    env.run(&["status", "--check"]).ok();
}

#[test]
fn pinned_locators_never_go_stale() {
    let env = TestEnv::new();
    env.write("t/a.md", "# A v1\n");
    env.run(&["ingest", "rules/t/", env.project.join("t").to_str().unwrap()]).ok();
    env.run(&["ingest", "docs/lib/", env.project.join("t").to_str().unwrap(), "--version", "1.0.0"]).ok();
    env.write(
        "memorix.toml",
        "[mounts.gen]\nselect = [\"rules/t/@g1\"]\n\n[mounts.ver]\nselect = [\"docs/lib/@v1.0.0\"]\n\n[mounts.tip]\nselect = [\"rules/t/\"]\n",
    );
    env.run(&["build"]).ok();
    env.write("t/a.md", "# A v2\n");
    let out = env.run(&["--json", "ingest", "rules/t/", env.project.join("t").to_str().unwrap()]).ok().json();
    assert_eq!(out["quests"]["marked_stale"], 2, "the tip mount's quest and the environment's");
    let out = env
        .run(&[
            "--json",
            "ingest",
            "docs/lib/",
            env.project.join("t").to_str().unwrap(),
            "--version",
            "1.1.0",
        ])
        .ok()
        .json();
    assert_eq!(out["quests"]["marked_stale"], 0, "@v1.0.0 is pinned: a new version does not make it stale");
    assert_eq!(
        env.run(&["status"]).ok().stdout,
        "gen: fresh\ntip: update available (the Store moved on; `memorix update tip` takes it)\n    M a.md\nver: fresh\n"
    );
}
