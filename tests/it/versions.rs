//! Version-tagged ingest, `memorix versions`, `@v` locators and the `match` policy.

use crate::common;

use std::fs;

use common::{TestEnv, corpus};

/// Ingests `lib` at `versions` (in this order) from the shared corpus.
fn ingest_versions(env: &TestEnv, lib: &str, versions: &[&str]) {
    for v in versions {
        let dir = corpus(&format!("docs-multiversion/{lib}/{v}"));
        env.run(&["ingest", &format!("docs/{lib}/"), dir.to_str().unwrap(), "--version", v]).ok();
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn each_version_is_a_generation_and_a_backfill_does_not_move_the_tip() {
    let env = TestEnv::new();
    ingest_versions(&env, "httpx", &["0.26.0", "0.28.1"]);
    let dir = corpus("docs-multiversion/httpx/0.23.3");
    let out = env.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", "0.23.3"]).ok();
    assert_eq!(
        out.stdout,
        "Recorded httpx 0.23.3 in docs@g3 (72c8cd0d121b) (an older version: latest/ keeps showing the highest)\n"
    );
    // The tip still shows 0.28.1: its docs/advanced/ split exists, 0.23's advanced.md does not.
    let latest = env.store.join("latest/docs/httpx/docs");
    assert!(latest.join("advanced/proxies.md").is_file() && !latest.join("advanced.md").exists());
    let old = env.run(&["cat", "docs/httpx/docs/advanced.md@v0.23.3"]).ok().stdout;
    assert!(old.contains("proxies="), "0.23 docs use the proxies= API");
    insta::assert_snapshot!(env.run(&["versions"]).ok().stdout, @"
    httpx docs/httpx/
      0.28.1       latest e99bd27e697b  docs@g2
      0.26.0              216e9c1b0738  docs@g1
      0.23.3              37b2ae6f584c  docs@g3
    ");
    let json = env.run(&["--json", "versions", "httpx"]).ok().json();
    assert_eq!(json[0]["versions"][0]["version"], "0.28.1");
    assert_eq!(json[0]["versions"][0]["latest"], true);
    assert_eq!(env.run(&["versions", "docs/httpx/"]).ok().stdout, env.run(&["versions"]).ok().stdout);

    // The same version and content again: nothing new. A new label on the same content: a
    // generation of its own.
    let before = env.run(&["--json", "log", "docs"]).ok().json().as_array().unwrap().len();
    env.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", "0.23.3"]).ok();
    assert_eq!(env.run(&["--json", "log", "docs"]).ok().json().as_array().unwrap().len(), before);
    env.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", "0.23.2"]).ok();
    assert_eq!(env.run(&["--json", "log", "docs"]).ok().json().as_array().unwrap().len(), before + 1);
    let log = env.run(&["log", "docs"]).ok().stdout;
    assert!(log.contains("    version httpx 0.23.2 at docs/httpx/"), "{log}");
    env.run(&["verify"]).ok();

    let err =
        env.run(&["ingest", "docs/httpx/x.md", dir.join("CHANGELOG.md").to_str().unwrap(), "--version", "1"]);
    assert!(err.expect(2).stderr.contains("--version tags a directory"));
}

/// A project with one mount selecting `locator` under `policy`; returns the build.
fn build_with(env: &TestEnv, locator: &str, policy: Option<&str>) -> common::Run {
    let policy = policy.map(|p| format!("match = \"{p}\"\n")).unwrap_or_default();
    env.write("memorix.toml", &format!("[mounts.pydantic]\nselect = [\"{locator}\"]\n{policy}"));
    env.run(&["build"])
}

fn locked_version(env: &TestEnv) -> String {
    let lock: toml::Table =
        toml::from_str(&fs::read_to_string(env.project.join("memorix.lock")).unwrap()).unwrap();
    lock["mounts"]["pydantic"]["locators"][0]["version"].as_str().unwrap().to_string()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn match_policy_exact_by_default_minor_and_major() {
    let env = TestEnv::new();
    ingest_versions(&env, "pydantic", &["1.10.26", "2.0", "2.11.10"]);
    build_with(&env, "docs/pydantic/@v2.0", Some("exact")).ok();
    assert_eq!(locked_version(&env), "2.0");
    let err = build_with(&env, "docs/pydantic/@v2.0.3", None).expect(2).stderr;
    assert!(err.contains("matches 2.0.3 (match = \"exact\")"), "exact is the default: {err}");
    build_with(&env, "docs/pydantic/@v2.0.3", Some("minor")).ok();
    assert_eq!(locked_version(&env), "2.0", "minor falls back within 2.0.x");
    build_with(&env, "docs/pydantic/@v2.5.0", Some("major")).ok();
    assert_eq!(locked_version(&env), "2.11.10");
    let memory = env.project.join(".memory/pydantic");
    let text = common::walk(&memory)
        .iter()
        .filter(|p| p.is_file())
        .map(|p| fs::read_to_string(p).unwrap_or_default())
        .collect::<String>();
    assert!(text.contains("model_validate"), "pydantic 2 docs");
    let err = build_with(&env, "docs/pydantic/@v2.5.0", Some("minor")).expect(2).stderr;
    assert!(
        err.contains("no version of `pydantic` in the store matches 2.5.0 (match = \"minor\"); the store has: 2.11.10, 2.0, 1.10.26"),
        "{err}"
    );
    let err = build_with(&env, "docs/pydantic/@v3.0.0", Some("major")).expect(2).stderr;
    assert!(err.contains("matches 3.0.0 (match = \"major\")"), "{err}");
    // The failed builds left the last good memory in place.
    assert_eq!(locked_version(&env), "2.11.10");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_mount_never_mixes_two_versions_of_one_library() {
    let env = TestEnv::new();
    ingest_versions(&env, "httpx", &["0.23.3", "0.28.1"]);
    env.write(
        "memorix.toml",
        "[mounts.httpx]\nselect = [\"docs/httpx/@v0.23.3\", \"docs/httpx/docs/@v0.28.1\"]\n",
    );
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("mount `httpx` would mix two versions of httpx"), "{err}");
}
