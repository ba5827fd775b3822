//! The conflict rules (book: design/resolve.md#conflicts), each shown by `memorix explain`.

use crate::common;

use common::TestEnv;

fn ingest(env: &TestEnv, dest: &str, files: &[(&str, &str)]) {
    let dir = env.root.join("src").join(dest.replace('/', "_"));
    let _ = std::fs::remove_dir_all(&dir);
    for (p, c) in files {
        common::write_file(&dir.join(p), c.as_bytes());
    }
    env.run(&["ingest", dest, dir.to_str().unwrap()]).ok();
}

fn explain(env: &TestEnv, path: &str) -> serde_json::Value {
    env.run(&["--json", "explain", path]).ok().json()
}

fn memory(env: &TestEnv, path: &str) -> String {
    std::fs::read_to_string(env.project.join(".memory").join(path)).unwrap()
}

#[test]
fn ambiguous_conflict_names_both_candidates_and_the_override_that_settles_it() {
    let env = TestEnv::new();
    ingest(&env, "rules/a/", &[("style.md", "a\n")]);
    ingest(&env, "rules/b/", &[("style.md", "b\n")]);
    env.write("memorix.toml", "[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n");
    let err = env.run(&["build"]).expect(2).stderr;
    insta::assert_snapshot!(err, @r#"
    memorix::view::ambiguous

      x two files claim `style/style.md`: rules/a/style.md and rules/b/style.md, and no rule decides between them
      help: settle it in memorix.toml:

                [overrides]
                "style/style.md" = "rules/a/style.md"
    "#);
    assert!(!env.project.join("memorix.lock").exists() && !env.project.join(".memory").exists());

    // Rule 1: the override decides.
    env.write(
        "memorix.toml",
        "[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n\n[overrides]\n\"style/style.md\" = \"rules/b/style.md\"\n",
    );
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "style/style.md"), "b\n");
    let e = explain(&env, ".memory/style/style.md");
    assert_eq!(e["origin"], "rules/b/style.md");
    assert_eq!(e["decisions"][0]["rule"], "override");
    assert_eq!(e["decisions"][0]["loser"], "rules/a/style.md");
    let text = env.run(&["explain", "style/style.md"]).ok().stdout;
    assert!(
        text.contains("won     over rules/a/style.md (override: an [overrides] entry names it)"),
        "{text}"
    );

    // An override must name a candidate.
    env.write(
        "memorix.toml",
        "[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n\n[overrides]\n\"style/style.md\" = \"rules/c/style.md\"\n",
    );
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(
        err.contains(
            "the override for `style/style.md` names rules/c/style.md, which is not a candidate there"
        ),
        "{err}"
    );
    assert!(
        err.contains("the candidates at `style/style.md` are: rules/a/style.md, rules/b/style.md"),
        "{err}"
    );
}

#[test]
fn two_generations_of_one_store_path_the_newer_wins() {
    let env = TestEnv::new();
    ingest(&env, "rules/t/", &[("style.md", "old\n")]);
    ingest(&env, "rules/t/", &[("style.md", "new\n")]);
    ingest(&env, "rules/t/", &[("style.md", "newest\n")]);
    env.write("memorix.toml", "[mounts.t]\nselect = [\"rules/t/@g1\", \"rules/t/\"]\n\n[mounts.pinned]\nselect = [\"rules/t/@g2\", \"rules/t/@g1\"]\n");
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "t/style.md"), "newest\n");
    assert_eq!(memory(&env, "pinned/style.md"), "new\n");
    let e = explain(&env, "t/style.md");
    assert_eq!(e["decisions"][0]["rule"], "newer-generation");
    assert_eq!(e["locator"], "rules/t/");
    assert_eq!(explain(&env, "pinned/style.md")["locator"], "rules/t/@g2");
}

#[test]
fn one_path_family_the_deeper_file_wins() {
    let env = TestEnv::new();
    ingest(&env, "rules/python/", &[("style.md", "general\n"), ("web/style.md", "web\n")]);
    env.write("memorix.toml", "[mounts.py]\nselect = [\"rules/python/web/\", \"rules/python/\"]\n");
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "py/style.md"), "web\n");
    assert_eq!(memory(&env, "py/web/style.md"), "web\n");
    let e = explain(&env, "py/style.md");
    assert_eq!(e["origin"], "rules/python/web/style.md");
    assert_eq!(e["decisions"][0]["rule"], "deeper-path");
    assert_eq!(e["decisions"][0]["loser"], "rules/python/style.md");
}

#[test]
fn across_kinds_rules_beat_docs_beat_chat() {
    let env = TestEnv::new();
    ingest(&env, "rules/api/", &[("guide.md", "rules\n"), ("faq.md", "rules faq\n")]);
    ingest(&env, "docs/api/", &[("guide.md", "docs\n"), ("notes.md", "docs notes\n")]);
    ingest(&env, "chat/api/", &[("notes.md", "chat\n"), ("faq.md", "chat faq\n")]);
    env.write("memorix.toml", "[mounts.api]\nselect = [\"chat/api/\", \"docs/api/\", \"rules/api/\"]\n");
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "api/guide.md"), "rules\n");
    assert_eq!(memory(&env, "api/notes.md"), "docs notes\n");
    assert_eq!(memory(&env, "api/faq.md"), "rules faq\n");
    for (path, loser) in [("api/guide.md", "docs/api/guide.md"), ("api/notes.md", "chat/api/notes.md")] {
        let e = explain(&env, path);
        assert_eq!(e["decisions"][0]["rule"], "kind-trust");
        assert_eq!(e["decisions"][0]["loser"], loser);
    }
}

#[test]
fn nested_mounts_the_deeper_mount_wins_and_the_environment_records_it() {
    let env = TestEnv::new();
    ingest(
        &env,
        "rules/python/",
        &[("style.md", "py\n"), ("web/http.md", "from python\n"), ("web/other.md", "o\n")],
    );
    ingest(&env, "rules/web/", &[("http.md", "from web\n")]);
    env.write("memorix.toml", "[mounts.python]\nselect = [\"rules/python/\"]\n\n[mounts.\"python/web\"]\nselect = [\"rules/web/\"]\n");
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "python/web/http.md"), "from web\n");
    assert_eq!(memory(&env, "python/web/other.md"), "o\n");
    let e = explain(&env, "python/web/http.md");
    assert_eq!(e["mount"], "python/web");
    assert_eq!(e["decisions"][0]["rule"], "deeper-mount");
    assert_eq!(e["decisions"][0]["loser"], "python");
    // The decision is part of the environment object.
    let env_id = e["environment"].as_str().unwrap().to_string();
    let shown = env.run(&["--json", "show", &env_id]).ok().json();
    assert_eq!(shown["type"], "environment");
    assert_eq!(shown["decisions"][0]["path"], "python/web/http.md");
    assert_eq!(shown["decisions"][0]["winner"], "python/web");
    env.run(&["verify"]).ok();
}

/// The override an ambiguous conflict suggests settles it, also for a file whose name holds
/// `@`: an override's value is a Store file path, not a locator with a selector.
#[test]
fn the_suggested_override_settles_a_conflict_on_a_name_with_an_at_sign() {
    let env = TestEnv::new();
    ingest(&env, "rules/a/", &[("logo@2x.md", "a\n")]);
    ingest(&env, "rules/b/", &[("logo@2x.md", "b\n")]);
    env.write("memorix.toml", "[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n");
    let err = env.run(&["build"]).expect(2).stderr;
    let suggested = err.lines().find(|l| l.contains(" = ")).expect("an override is suggested").trim();
    assert_eq!(suggested, "\"style/logo@2x.md\" = \"rules/a/logo@2x.md\"");
    env.write(
        "memorix.toml",
        &format!("[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n\n[overrides]\n{suggested}\n"),
    );
    env.run(&["build"]).ok();
    assert_eq!(memory(&env, "style/logo@2x.md"), "a\n");
    assert_eq!(explain(&env, ".memory/style/logo@2x.md")["origin"], "rules/a/logo@2x.md");
}
