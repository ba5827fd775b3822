//! `memorix search`: ranked answers from the pinned version only, code-aware tokens, the
//! budget, and an index that is the same artifact in every Store (book: search.md).

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use common::{TestEnv, corpus};

fn pinned_httpx(env: &TestEnv, version: &str) {
    env.write("requirements.txt", &format!("httpx=={version}\n"));
}

fn httpx_project(env: &TestEnv) {
    for v in ["0.23.3", "0.28.1"] {
        let dir = corpus(&format!("docs-multiversion/httpx/{v}"));
        env.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", v]).ok();
    }
    pinned_httpx(env, "0.23.3");
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"requirements.txt\"]\n\n[mounts.\"libs/httpx\"]\nselect = [\"docs/httpx/@pin\"]\n",
    );
    env.run(&["build"]).ok();
}

/// (path, version) of each hit of `memorix search QUERY --json`.
fn hits(env: &TestEnv, args: &[&str]) -> Vec<(String, String)> {
    let mut all = vec!["search", "--json"];
    all.extend_from_slice(args);
    let run = env.run(&all);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    let out = run.json();
    out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["path"].as_str().unwrap().to_string(), h["version"].as_str().unwrap_or("").to_string()))
        .collect()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn answers_come_from_the_pinned_version_only_and_follow_the_pin() {
    let env = TestEnv::new();
    httpx_project(&env);
    let old = hits(&env, &["proxies"]);
    assert_eq!(old.len(), 10, "{old:?}");
    assert_eq!(old[0].0, "libs/httpx/docs/advanced.md", "the 0.23 page on proxies ranks first: {old:?}");
    assert!(old.iter().all(|(p, v)| v == "0.23.3" && !p.contains("docs/advanced/")), "{old:?}");

    pinned_httpx(&env, "0.28.1");
    env.run(&["update"]).ok();
    let new = hits(&env, &["proxies"]);
    assert_eq!(new[0].0, "libs/httpx/docs/advanced/proxies.md", "the 0.28 page ranks first: {new:?}");
    assert!(new.iter().all(|(p, v)| v == "0.28.1" && p != "libs/httpx/docs/advanced.md"), "{new:?}");

    let text = env.run(&["search", "proxies", "--limit", "1"]).ok().stdout;
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("libs/httpx/docs/advanced/proxies.md:") && first.ends_with("  httpx@0.28.1"),
        "{text}"
    );
}

#[test]
fn identifiers_match_whole_and_by_their_words() {
    let env = TestEnv::new();
    env.ingest("rules/team/", &[("http.md", "# HTTP\n\nAlways go through `HttpClient`.\n")]);
    env.ingest("docs/urls/", &[("api.md", "# API\n\nintro\n\n## Parsing\n\nCall parse_url(text) first.\n")]);
    env.write(
        "memorix.toml",
        "[mounts.team]\nselect = [\"rules/team/\"]\n\n[mounts.urls]\nselect = [\"docs/urls/\"]\n",
    );
    env.run(&["build"]).ok();
    assert_eq!(hits(&env, &["url"]), [("urls/api.md".to_string(), String::new())]);
    assert_eq!(hits(&env, &["parseUrl"])[0].0, "urls/api.md");
    assert_eq!(hits(&env, &["http client"])[0].0, "team/http.md");
    assert_eq!(hits(&env, &["HttpClient", "--kind", "docs"]), []);
    assert_eq!(hits(&env, &["parse", "--lib", "team"]), []);
    let out = env.run(&["search", "parse_url"]).ok().stdout;
    assert_eq!(out, "urls/api.md:7  urls\n    Call parse_url(text) first.\n");

    // Nothing found: exit 1, as grep; an unknown library is an error.
    assert_eq!(env.run(&["search", "nowhere"]).expect(1).stdout, "");
    let err = env.run(&["search", "x", "--lib", "nope"]).expect(2).stderr;
    assert!(err.contains("memorix::search::no_library"), "{err}");
}

#[test]
fn the_budget_keeps_the_best_answers_and_counts_the_rest() {
    let env = TestEnv::new();
    let files: Vec<(String, String)> =
        (0..5).map(|i| (format!("f{i}.md"), format!("# F{i}\n\nretry {}\n", "retry ".repeat(i)))).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    env.ingest("rules/r/", &files);
    env.write("memorix.toml", "[mounts.r]\nselect = [\"rules/r/\"]\n");
    env.run(&["build"]).ok();
    let all = env.run(&["search", "retry"]).ok();
    assert_eq!(all.stdout.lines().filter(|l| !l.starts_with(' ')).count(), 5, "{}", all.stdout);
    let cut = env.run(&["search", "retry", "--budget", "60"]).ok();
    assert!(cut.stdout.len() <= 60, "{}", cut.stdout);
    assert!(cut.stdout.starts_with("r/f4.md:3\n"), "the best answer stays: {}", cut.stdout);
    assert!(cut.stderr.contains("4 more answers left out by --budget"), "{}", cut.stderr);
}

/// Every `search-v1.tar` artifact of a Store, by derivation directory, with its hash.
fn indexes(store: &Path) -> BTreeMap<String, String> {
    common::walk(&store.join("derivations"))
        .into_iter()
        .filter(|p| p.ends_with("artifacts/search-v1.tar"))
        .map(|p| {
            let rel = p.strip_prefix(store).unwrap().display().to_string();
            (rel, common::listing(p.parent().unwrap())["search-v1.tar"].clone())
        })
        .collect()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn the_index_is_the_same_artifact_in_two_stores() {
    let common::TwoMachines { a, b, .. } = common::TwoMachines::new();
    httpx_project(&a);
    httpx_project(&b);
    let (ia, ib) = (indexes(&a.store), indexes(&b.store));
    assert_eq!(ia.len(), 1, "{ia:?}");
    assert_eq!(ia, ib, "same derivation, same index bytes");
    // A rebuild reuses it.
    let file = a.store.join(ia.keys().next().unwrap());
    let before = fs::metadata(&file).unwrap().modified().unwrap();
    a.run(&["build"]).ok();
    assert_eq!(fs::metadata(&file).unwrap().modified().unwrap(), before);
}
