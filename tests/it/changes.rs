//! What changed between versions (book: design/outlines.md#changes): when an
//! update moves a pin, the library's mount gets a `CHANGES.md` (the changelog entries between
//! the two versions, then the API difference), the agents' index names the move, `explain`
//! names both artifacts, and `memorix changes` says the same on demand; on real version pairs
//! from the corpus registry.

use crate::common;

use std::fs;

use common::TestEnv;

use crate::outline::{project, repin, run};

/// Builds `lib` at `from`, then moves the pin to `to` and updates; returns `CHANGES.md`.
fn moved(env: &TestEnv, lib: &str, from: &str, to: &str) -> String {
    let reg = project(env, lib, from);
    let agents = "[agents]\nharnesses = [\"agents-md\"]\n";
    let manifest = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    env.write("memorix.toml", &format!("{agents}{manifest}"));
    run(env, &reg, &["build"]).ok();
    assert!(!env.project.join(format!(".memory/libs/{lib}/CHANGES.md")).exists(), "nothing moved yet");
    repin(env, lib, to);
    let out = run(env, &reg, &["update"]).ok();
    assert!(
        out.stdout.contains(&format!("{lib} {from} -> {to}")) || out.stdout.contains(to),
        "{}",
        out.stdout
    );
    let path = env.project.join(format!(".memory/libs/{lib}/CHANGES.md"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}\n{}", path.display(), out.stdout))
}

/// The versions of the changelog entries `memorix changes` lists.
fn entry_versions(json: &serde_json::Value) -> Vec<String> {
    json["entries"].as_array().unwrap().iter().map(|e| e["version"].as_str().unwrap().to_string()).collect()
}

fn names(json: &serde_json::Value, list: &str) -> Vec<String> {
    let items = json["api"][list].as_array().unwrap();
    items
        .iter()
        .map(|i| {
            let i = if list == "changed" { &i["before"] } else { i };
            format!("{}.{}", i["module"].as_str().unwrap(), i["name"].as_str().unwrap())
        })
        .collect()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_httpx_update_says_proxies_is_gone_and_agents_are_told() {
    let env = TestEnv::new();
    let text = moved(&env, "httpx", "0.23.3", "0.28.1");
    assert!(text.starts_with("# Changes: httpx 0.23.3 → 0.28.1\n"), "{text}");
    assert!(text.contains("\n### 0.28.0 (28th November, 2024)\n"), "{text}");
    assert!(text.contains("> * The deprecated `proxies` argument has now been removed."), "{text}");
    // Not the entries of the version it moved from, nor older ones.
    assert!(!text.contains("### 0.23.3") && !text.contains("### 0.23.2"), "{text}");
    // The API difference: `Client.__init__` lost `proxies`.
    let api = &text[text.find("\n## API difference").unwrap()..];
    let changed =
        api.lines().find(|l| l.starts_with("- `httpx::Client.__init__`")).unwrap_or_else(|| panic!("{api}"));
    let (before, after) = changed.split_once(" → ").unwrap();
    assert!(
        before.contains("proxies: typing.Optional[ProxiesTypes] = None") && !after.contains("proxies"),
        "{changed}"
    );
    // The always-loaded index names the move and where to read it.
    let agents = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(agents.contains("- httpx 0.23.3 → 0.28.1: `.memory/libs/httpx/CHANGES.md`\n"), "{agents}");
    // On demand, the same.
    let json = env.run(&["changes", "httpx", "--json"]).ok().json();
    assert_eq!(json["from"]["version"], "0.23.3");
    assert_eq!(json["to"]["version"], "0.28.1");
    assert_eq!(json["changelog"], "CHANGELOG.md");
    let versions = entry_versions(&json);
    assert_eq!(versions.first().map(String::as_str), Some("0.28.1"), "{versions:?}");
    assert_eq!(versions.last().map(String::as_str), Some("0.24.0"), "{versions:?}");
    assert_eq!(env.run(&["changes", "httpx"]).ok().stdout, text);
    // `explain` names both artifacts.
    let explained = env.run(&["explain", ".memory/libs/httpx/CHANGES.md"]).ok().stdout;
    assert!(explained.contains("  old     httpx 0.23.3 (tree ") && explained.contains("pypi httpx-0.23.3.tar.gz sha256:9818458eb565bb54898ccb9b8b251a28785dd4a55afbc23d0eb410754fe7d0f9"), "{explained}");
    assert!(explained.contains("  new     httpx 0.28.1 (tree ") && explained.contains("pypi httpx-0.28.1.tar.gz sha256:75e98c5f16b0f35b567856f597f06ff2270a374470a5c2392242528e3e3e42fc"), "{explained}");
    let e = env.run(&["explain", "--json", ".memory/libs/httpx/CHANGES.md"]).ok().json();
    assert_eq!(
        e["compares"]["from"]["artifact"].as_str().unwrap().split(' ').nth(1),
        Some("httpx-0.23.3.tar.gz")
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_click_update_lists_its_8_0_breaking_changes_and_a_downgrade_the_same_reversed() {
    let env = TestEnv::new();
    let text = moved(&env, "click", "7.1.2", "8.1.7");
    assert!(text.contains("From `CHANGES.rst`, newest first"), "{text}");
    assert!(
        text.contains(
            "\n### Version 8.0.0\n\n> Released 2021-05-11\n>\n> -   Drop support for Python 2 and 3.5.\n"
        ),
        "{text}"
    );
    assert!(!text.contains("### Version 7.1.2"), "{text}");
    let up = env.run(&["changes", "click", "7.1.2", "8.1.7", "--json"]).ok().json();
    let down = env.run(&["changes", "click", "8.1.7", "7.1.2", "--json"]).ok().json();
    assert_eq!(down["downgrade"], true);
    let mut reversed = entry_versions(&up);
    reversed.reverse();
    assert_eq!(entry_versions(&down), reversed);
    assert_eq!(reversed.first().map(String::as_str), Some("8.0.0"), "{reversed:?}");
    // What an upgrade adds, a downgrade removes.
    assert_eq!(names(&up, "added"), names(&down, "removed"));
    assert_eq!(names(&up, "removed"), names(&down, "added"));
    let text = env.run(&["changes", "click", "8.1.7", "7.1.2"]).ok().stdout;
    assert!(
        text.contains("(a downgrade: the entries below are what it undoes, oldest first)")
            || text.contains("oldest first"),
        "{text}"
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_http_1_0_update_lists_removed_and_changed_api_items() {
    let env = TestEnv::new();
    let text = moved(&env, "http", "0.2.12", "1.0.0");
    assert!(text.contains("\n### 1.0.0 (November 15, 2023)\n\n> - Implement `Clone` for `Request`, `Response`, and `Extensions`."), "{text}");
    let json = env.run(&["changes", "http", "--json"]).ok().json();
    let removed = names(&json, "removed");
    let changed = names(&json, "changed");
    assert!(!removed.is_empty() && !changed.is_empty(), "{json}");
    assert!(text.contains("\n### Removed\n") && text.contains("\n### Changed\n"), "{text}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_library_without_a_changelog_still_gets_the_api_difference() {
    let env = TestEnv::new();
    let text = moved(&env, "matchit", "0.7.3", "0.8.4");
    assert!(text.contains("The library has no changelog memorix reads"), "{text}");
    assert!(text.contains("\n### Added\n") && text.contains("`Router::remove`"), "{text}");
}

#[test]
fn changes_without_versions_says_how_to_name_them() {
    let env = TestEnv::new();
    env.ingest("docs/httpx/", &[("README.md", "# httpx\n")]);
    let out = env.run(&["changes", "httpx"]).expect(2);
    assert!(out.stderr.contains("memorix::changes::versions"), "{}", out.stderr);
    let out = env.run(&["changes", "httpx", "0.1", "0.2"]).expect(2);
    assert!(out.stderr.contains("memorix::changes::no_version"), "{}", out.stderr);
}

/// `memorix changes LIB FROM TO` fetches a version the Store lacks from the registry the
/// project pins the library from, verified like any fetch; offline, it says so and how to get it.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn changes_fetches_a_version_the_store_lacks() {
    let env = TestEnv::new();
    let reg = project(&env, "click", "8.1.7");
    run(&env, &reg, &["build"]).ok();
    let out = run(&env, &reg, &["changes", "click", "7.1.2", "--offline"]).expect(2);
    assert!(out.stderr.contains("memorix::changes::offline"), "{}", out.stderr);
    assert!(
        out.stderr.contains("click 7.1.2 is not in the Store, and fetching it from pypi is off (--offline)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("without --offline"), "{}", out.stderr);
    let out = run(&env, &reg, &["changes", "click", "7.1.2"]).ok();
    assert!(out.stderr.contains("Fetched click 7.1.2 from pypi (click-7.1.2.tar.gz"), "{}", out.stderr);
    assert!(out.stdout.starts_with("# Changes: click 7.1.2 → 8.1.7\n"), "{}", out.stdout);
    assert!(out.stdout.contains("\n### Version 8.0.0\n"), "{}", out.stdout);
    // Now held: the next time fetches nothing, and says the same.
    let again = run(&env, &reg, &["changes", "click", "7.1.2", "--offline"]).ok();
    assert_eq!(again.stdout, out.stdout);
    assert!(again.stderr.is_empty(), "{}", again.stderr);
    // A version the registry does not have is its error.
    let out = run(&env, &reg, &["changes", "click", "0.0.1", "8.1.7"]).expect(2);
    assert!(out.stderr.contains("memorix::fetch::"), "{}", out.stderr);
}

/// `CHANGES.md` is delivered by the profile binding its update made: `gc` keeps it while a
/// binding delivers it (a later update replacing the record of the last one), and a rollback
/// to that binding places it again, with the agents' index naming it.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn gc_keeps_and_rollback_restores_the_changes_a_binding_delivers() {
    let env = TestEnv::new();
    let up = moved(&env, "httpx", "0.23.3", "0.28.1");
    let reg = project(&env, "httpx", "0.28.1");
    repin(&env, "httpx", "0.26.0");
    run(&env, &reg, &["update"]).ok();
    let changes = env.project.join(".memory/libs/httpx/CHANGES.md");
    let down = fs::read_to_string(&changes).unwrap();
    assert!(down.starts_with("# Changes: httpx 0.28.1 → 0.26.0\n"), "{down}");
    env.run(&["gc"]).ok();
    // Generation 2, the update to 0.28.1.
    env.run(&["rollback"]).ok();
    assert_eq!(fs::read_to_string(&changes).unwrap(), up);
    let agents = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(agents.contains("- httpx 0.23.3 → 0.28.1: `.memory/libs/httpx/CHANGES.md`\n"), "{agents}");
    // Generation 1 moved nothing.
    env.run(&["rollback"]).ok();
    assert!(!changes.exists());
    let agents = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(!agents.contains("Versions moved"), "{agents}");
    env.run(&["rollback", "--to", "3"]).ok();
    assert_eq!(fs::read_to_string(&changes).unwrap(), down);
    // The last update's CHANGES.md outlives gc too: a fresh `.memory/` gets it back.
    env.run(&["gc"]).ok();
    fs::remove_dir_all(env.project.join(".memory")).unwrap();
    run(&env, &reg, &["build"]).ok();
    assert_eq!(fs::read_to_string(&changes).unwrap(), down);
}
