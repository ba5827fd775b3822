//! Fetchers end to end (book: design/fetching.md#registry-docs, book: design/fetching.md#a-mount-per-dependency): a project whose `@pin` mounts name libraries
//! the Store lacks gets their docs from a local registry serving the corpus's real artifacts,
//! verified by the hash its real lockfile records.

use crate::common;

use std::fs;
use std::path::Path;

use common::registry::Registry;
use common::{Run, TestEnv, corpus};

/// A project with `lockfile` (a corpus lockfile, copied into the temp project as `name`) and
/// one `libs/<lib>` mount per library, and a local registry serving the corpus.
fn project(env: &TestEnv, lockfile: &str, name: &str, libs: &[&str]) -> Registry {
    let src = corpus(lockfile);
    let root = corpus("registry");
    fs::copy(&src, env.project.join(name)).unwrap();
    env.write("memorix.toml", &manifest(name, libs, ""));
    Registry::serve(&root)
}

fn manifest(pin_file: &str, libs: &[&str], extra: &str) -> String {
    let mut m = format!("[pins]\nfiles = [\"{pin_file}\"]\n{extra}");
    for lib in libs {
        m.push_str(&format!("\n[mounts.\"libs/{lib}\"]\nselect = [\"docs/{lib}/@pin\"]\n"));
    }
    m
}

fn run(env: &TestEnv, reg: &Registry, args: &[&str]) -> Run {
    let mut cmd = env.command();
    for (k, v) in reg.env() {
        cmd.env(k, v);
    }
    env.run_cmd(cmd.args(args))
}

fn lock_text(env: &TestEnv) -> String {
    fs::read_to_string(env.project.join("memorix.lock")).unwrap()
}

/// The `fetched = {...}` line of `lib`'s locator in memorix.lock.
fn fetched_line(env: &TestEnv, lib: &str) -> String {
    let lock = lock_text(env);
    let at =
        lock.find(&format!("locator = \"docs/{lib}/@pin\"")).unwrap_or_else(|| panic!("{lib} in\n{lock}"));
    let rest = &lock[at..];
    let end = rest[1..].find("[[").map_or(rest.len(), |e| e + 1);
    rest[..end].lines().skip_while(|l| !l.contains("fetched")).take(4).collect::<Vec<_>>().join("\n")
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn cargo_lock_pins_fetch_crates_verified_by_checksum() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit", "http"]);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(
        out.stdout.contains("Fetched matchit 0.9.2 from crates-io (matchit-0.9.2.crate"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("verified by Cargo.lock"), "{}", out.stdout);
    let memory = env.project.join(".memory/libs");
    assert!(memory.join("matchit/README.md").is_file());
    assert!(memory.join("matchit/src/lib.rs").is_file());
    assert!(memory.join("http/Cargo.toml").is_file());
    assert!(!memory.join("http/tests").exists() && !memory.join("http/benches").exists());
    let line = fetched_line(&env, "matchit");
    assert!(line.contains("registry = \"crates-io\""), "{line}");
    assert!(line.contains("artifact = \"matchit-0.9.2.crate\""), "{line}");
    assert!(
        line.contains("hash = \"sha256:8863b587001c1b9a8a4e36008cebc6b3612cb1226fe2de94858e06092687b608\""),
        "{line}"
    );
    // The fetched docs are an ordinary version: `versions` lists it.
    let versions = env.run(&["versions", "docs/matchit/"]).ok();
    assert!(versions.stdout.contains("0.9.2"), "{}", versions.stdout);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn fetched_docs_are_the_generation_a_hand_ingest_makes() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    run(&env, &reg, &["build"]).ok();
    let fetched = env.run(&["ls", "--json", "docs/matchit/"]).ok().stdout;
    // Ingest by hand what was delivered (the docs view, without the mount's index and the API
    // outline memorix derived beside it) into a second Store: same tree.
    let other = TestEnv::new();
    let delivered = env.project.join(".memory/libs/matchit");
    let dir = other.root.join("matchit");
    for rel in common::files_under(&delivered).into_iter().filter(|f| f != "INDEX.md" && f != "API.md") {
        common::write_file(&dir.join(&rel), &fs::read(delivered.join(&rel)).unwrap());
    }
    other.run(&["ingest", "docs/matchit/", dir.to_str().unwrap(), "--version", "0.9.2"]).ok();
    let by_hand = other.run(&["ls", "--json", "docs/matchit/"]).ok().stdout;
    let tree = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap()["id"].clone();
    assert_eq!(tree(&fetched), tree(&by_hand));
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn uv_lock_fetches_the_click_sdist_with_its_docs_tree() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/flask/HEAD/uv.lock", "uv.lock", &["click"]);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("Fetched click 8.3.2 from pypi (click-8.3.2.tar.gz"), "{}", out.stdout);
    let click = env.project.join(".memory/libs/click");
    assert!(click.join("docs").is_dir(), "{:?}", common::walk(&click));
    assert!(click.join("PKG-INFO").is_file());
    assert!(!click.join("tests").exists());
    let line = fetched_line(&env, "click");
    assert!(line.contains("registry = \"pypi\"") && line.contains("click-8.3.2.tar.gz"), "{line}");
    assert!(
        line.contains("sha256:14162b8b3b3550a7d479eafa77dfd3c38d9dc8951f6f69c78913a8f9a7540fd5"),
        "{line}"
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn requirements_hash_lines_verify_click_7() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/warehouse/requirements/main.txt", "requirements.txt", &["click"]);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("Fetched click 7.1.2 from pypi (click-7.1.2.tar.gz"), "{}", out.stdout);
    assert!(out.stdout.contains("verified by requirements.txt"), "{}", out.stdout);
    assert!(
        fetched_line(&env, "click")
            .contains("sha256:d2b5255c7c6349bc1bd1e59e08cd12acbbd63ce649f2588755783aa94dfb6b1a")
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn poetry_lock_files_verify_requests() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/poetry/1.8.5/poetry.lock", "poetry.lock", &["requests"]);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(
        out.stdout.contains("Fetched requests 2.31.0 from pypi (requests-2.31.0.tar.gz"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("verified by poetry.lock"), "{}", out.stdout);
    assert!(env.project.join(".memory/libs/requests/README.md").is_file());
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn package_lock_integrity_verifies_ms() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/vscode-copilot-chat/package-lock.json", "package-lock.json", &["ms"]);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("Fetched ms 2.1.3 from npm (ms-2.1.3.tgz"), "{}", out.stdout);
    let ms = env.project.join(".memory/libs/ms");
    assert!(ms.join("package.json").is_file() && ms.join("readme.md").is_file(), "{:?}", common::walk(&ms));
    assert!(ms.join("index.js").is_file(), "the entry file package.json names is kept");
    let line = fetched_line(&env, "ms");
    assert!(line.contains("registry = \"npm\"") && line.contains("hash = \"sha512-"), "{line}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_pin_without_hash_records_the_registry_sha256_and_enforces_it() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/flask/HEAD/uv.lock", "uv.lock", &[]);
    env.write("requirements.txt", "httpx==0.26.0\n");
    env.write("memorix.toml", &manifest("requirements.txt", &["httpx"], ""));
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("verified by pypi (trusted on first use)"), "{}", out.stdout);
    let line = fetched_line(&env, "httpx");
    assert!(
        line.contains("sha256:451b55c30d5185ea6b23c2c793abf9bb237d2a7dfb901ced6ff69ad37ec1dfaf"),
        "{line}"
    );
    // A fresh Store, and a registry that now serves other bytes: the lock's hash refuses them.
    let fresh = TestEnv::new();
    copy_project(&env.project, &fresh.project);
    reg.tamper("httpx-0.26.0.tar.gz");
    let out = run(&fresh, &reg, &["build", "--locked"]).expect(1);
    assert!(out.stderr.contains("memorix::fetch::hash_mismatch"), "{}", out.stderr);
    assert!(out.stderr.contains("memorix.lock"), "{}", out.stderr);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_tampered_artifact_is_refused_and_the_store_is_unchanged() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let note = env.write("notes/a.md", "# a\n");
    env.run(&["ingest", "rules/a.md", note.to_str().unwrap()]).ok();
    let before = env.store_listing();
    reg.tamper("matchit-0.9.2.crate");
    let out = run(&env, &reg, &["build"]).expect(1);
    assert!(out.stderr.contains("memorix::fetch::hash_mismatch"), "{}", out.stderr);
    assert!(
        out.stderr.contains("sha256:8863b587001c1b9a8a4e36008cebc6b3612cb1226fe2de94858e06092687b608"),
        "names the expected hash: {}",
        out.stderr
    );
    assert!(out.stderr.contains("help:") && out.stderr.contains("Cargo.lock:"), "{}", out.stderr);
    let after = env.store_listing();
    let new: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    assert!(new.is_empty(), "the Store gained {new:?}");
    assert!(!env.project.join("memorix.lock").exists());
}

/// Copies a project's own files (not `.memory/`, not `.memorix/`): a fresh clone.
fn copy_project(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if entry.file_type().unwrap().is_file() {
            fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn build_locked_in_a_fresh_clone_reproduces_memory_from_the_registries_alone() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit", "http"]);
    run(&env, &reg, &["build"]).ok();
    let fresh = TestEnv::new();
    copy_project(&env.project, &fresh.project);
    let lock_before = lock_text(&fresh);
    let out = run(&fresh, &reg, &["build", "--locked"]).ok();
    assert!(out.stdout.contains("Fetched http 1.5.0"), "{}", out.stdout);
    let files = |dir: &Path| {
        let mut l = common::listing(dir);
        l.retain(|_, v| !v.contains(" dir "));
        l
    };
    assert_eq!(files(&env.project.join(".memory")), files(&fresh.project.join(".memory")));
    assert_eq!(lock_text(&fresh), lock_before);
    // Everything present: the next builds make no request at all.
    let served = reg.requests();
    run(&fresh, &reg, &["build", "--locked"]).ok();
    run(&fresh, &reg, &["build"]).ok();
    // Past the build stamp, through the Store: still nothing to fetch, even with the
    // registries on a closed port (`env.run`'s default).
    fs::remove_file(fresh.project.join(".memorix/build-stamp")).unwrap();
    run(&fresh, &reg, &["build"]).ok();
    fs::remove_file(fresh.project.join(".memorix/build-stamp")).unwrap();
    fresh.run(&["build", "--locked"]).ok();
    assert_eq!(reg.requests(), served, "a build with everything present asked the registry");
}

/// `status --check` and `lock --check` in a fresh clone obtain what the lock names as
/// `build --locked` does: from the registries, then they judge (one verdict, book: design/lock.md#judging-a-lock).
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn checks_in_a_fresh_clone_fetch_before_judging() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    run(&env, &reg, &["build"]).ok();
    for check in ["status", "lock"] {
        let fresh = TestEnv::new();
        copy_project(&env.project, &fresh.project);
        // Offline, the Store cannot have the docs: the error says why, never "stale".
        let out = run(&fresh, &reg, &[check, "--check", "--offline"]).expect(2);
        assert!(out.stderr.contains("matchit 0.9.2") && !out.stdout.contains("stale"), "{out:?}");
        let before = reg.requests();
        let out = run(&fresh, &reg, &[check, "--check"]).ok();
        assert!(!out.stdout.contains("stale"), "{check}: {}", out.stdout);
        assert!(reg.requests() > before, "{check} fetched");
        run(&fresh, &reg, &["build", "--locked", "--offline"]).ok();
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn offline_names_the_version_the_registry_and_the_command() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let out = run(&env, &reg, &["build", "--offline"]).expect(2);
    assert!(out.stderr.contains("matchit 0.9.2"), "{}", out.stderr);
    assert!(out.stderr.contains("crates-io") && out.stderr.contains("without --offline"), "{}", out.stderr);
    assert_eq!(reg.requests(), 0);
    env.write("memorix.toml", &manifest("Cargo.lock", &["matchit"], "fetch = false\n"));
    let out = run(&env, &reg, &["build"]).expect(2);
    assert!(out.stderr.contains("[pins] fetch = false"), "{}", out.stderr);
    assert_eq!(reg.requests(), 0);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_unreachable_registry_is_exit_2_with_the_url() {
    let env = TestEnv::new();
    env.without_retries();
    let _reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let out = env.run(&["build"]).expect(2);
    assert!(
        out.stderr.contains("cannot reach crates-io at http://127.0.0.1:9/config.json"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--offline"), "{}", out.stderr);
}

/// A registry under load (503) is asked again, with backoff: twice unless `MEMORIX_NET_RETRIES`
/// says otherwise. A 503 still there after the retries is a registry out of reach, never a
/// version it lacks.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_registry_that_fails_is_retried_as_many_times_as_asked() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let with_retries = |n: &str| {
        let mut cmd = env.command();
        cmd.envs(reg.env()).env("MEMORIX_NET_RETRIES", n).arg("build");
        env.run_cmd(&mut cmd)
    };
    reg.fail_next(1);
    let out = with_retries("0").expect(2);
    assert!(
        out.stderr.contains("Fetching it did not help: cannot reach crates-io at http://127.0.0.1:")
            && out.stderr.contains("config.json: it answered HTTP 503 (check the network"),
        "{}",
        out.stderr
    );
    assert_eq!(reg.requests(), 1, "no retry");
    assert!(!env.project.join(".memory").exists());

    reg.fail_next(2);
    let out = with_retries("1").expect(2);
    assert!(out.stderr.contains("it answered HTTP 503 (2 tries)"), "{}", out.stderr);
    assert_eq!(reg.requests(), 3, "one retry");

    // The default two retries get past two 503s.
    reg.fail_next(2);
    let before = reg.requests();
    run(&env, &reg, &["build"]).ok();
    assert!(env.project.join(".memory/libs/matchit/README.md").is_file());
    let after = reg.requests();
    let clean = TestEnv::new();
    let clean_reg = project(&clean, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    run(&clean, &clean_reg, &["build"]).ok();
    assert_eq!(
        after - before,
        clean_reg.requests() + 2,
        "the build asked twice more than one without failures"
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn fetch_include_and_exclude_adjust_the_docs_view() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let extra = "\n[fetch.matchit]\ninclude = [\"LICENSE*\"]\nexclude = [\"src/**\"]\n";
    env.write("memorix.toml", &format!("{}{extra}", manifest("Cargo.lock", &["matchit"], "")));
    run(&env, &reg, &["build"]).ok();
    let dir = env.project.join(".memory/libs/matchit");
    assert!(!dir.join("src").exists());
    assert!(
        fs::read_dir(&dir).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("LICENSE"))
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn memorix_fetch_warms_the_store_without_building() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit", "http"]);
    let out = run(&env, &reg, &["--json", "fetch", "matchit"]).ok();
    let json = out.json();
    assert_eq!(json.as_array().unwrap().len(), 1, "{json}");
    assert_eq!(json[0]["artifact"], "matchit-0.9.2.crate");
    assert_eq!(json[0]["registry"], "crates-io");
    assert!(!env.project.join(".memory").exists());
    let again = run(&env, &reg, &["fetch", "matchit"]).ok();
    assert!(again.stdout.contains("Nothing to fetch"), "{}", again.stdout);
}

/// Opt-in (`MEMORIX_LIVE_REGISTRIES=1`): the same pins from the real crates.io, PyPI and npm.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
#[allow(clippy::print_stderr)]
fn live_registries_serve_the_pinned_hashes() {
    if std::env::var_os("MEMORIX_LIVE_REGISTRIES").is_none_or(|v| v != "1") {
        eprintln!("notice: skipping the live registry test (set MEMORIX_LIVE_REGISTRIES=1)");
        return;
    }
    let cases = [
        ("lockfiles/axum/Cargo.lock", "Cargo.lock", "matchit"),
        ("lockfiles/flask/HEAD/uv.lock", "uv.lock", "click"),
        ("lockfiles/warehouse/requirements/main.txt", "requirements.txt", "click"),
        ("lockfiles/poetry/1.8.5/poetry.lock", "poetry.lock", "requests"),
        ("lockfiles/vscode-copilot-chat/package-lock.json", "package-lock.json", "ms"),
    ];
    for (lockfile, name, lib) in cases {
        let env = TestEnv::new();
        let src = corpus(lockfile);
        fs::copy(&src, env.project.join(name)).unwrap();
        env.write("memorix.toml", &manifest(name, &[lib], ""));
        let mut cmd = env.command();
        for var in ["MEMORIX_CRATES_INDEX", "MEMORIX_PYPI_INDEX", "MEMORIX_NPM_REGISTRY"] {
            cmd.env_remove(var);
        }
        for var in [
            "HTTPS_PROXY",
            "HTTP_PROXY",
            "https_proxy",
            "http_proxy",
            "NO_PROXY",
            "no_proxy",
            "SSL_CERT_FILE",
        ] {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        let out = env.run_cmd(cmd.args(["build"])).ok();
        eprintln!(
            "live {lockfile}: {}",
            out.stdout.lines().find(|l| l.starts_with("Fetched")).unwrap_or("?")
        );
        eprintln!("  {}", fetched_line(&env, lib).replace('\n', " "));
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn explain_names_the_artifact() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    run(&env, &reg, &["build"]).ok();
    let out = env.run(&["explain", ".memory/libs/matchit/README.md"]).ok();
    assert!(
        out.stdout.contains("  fetched matchit-0.9.2.crate from crates-io (sha256:8863b587"),
        "{}",
        out.stdout
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn update_follows_a_moved_pin_to_a_newly_fetched_version() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    // Pin matchit 0.8.4 first (its real checksum), then move to the lockfile's 0.9.2.
    let real = fs::read_to_string(env.project.join("Cargo.lock")).unwrap();
    let old = real
        .replace("name = \"matchit\"\nversion = \"0.9.2\"", "name = \"matchit\"\nversion = \"0.8.4\"")
        .replace(
            "8863b587001c1b9a8a4e36008cebc6b3612cb1226fe2de94858e06092687b608",
            "47e1ffaa40ddd1f3ed91f717a33c8c0ee23fff369e3aa8772b9605cc1d22f4c3",
        );
    env.write("Cargo.lock", &old);
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("Fetched matchit 0.8.4"), "{}", out.stdout);
    env.write("Cargo.lock", &real);
    let out = run(&env, &reg, &["update"]).ok();
    assert!(out.stdout.contains("Fetched matchit 0.9.2"), "{}", out.stdout);
    assert!(fetched_line(&env, "matchit").contains("matchit-0.9.2.crate"));
    let versions = env.run(&["versions", "docs/matchit/"]).ok().stdout;
    assert!(versions.contains("0.8.4") && versions.contains("0.9.2"), "{versions}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_clone_whose_docs_view_differs_from_the_lock_is_refused_by_tree_id() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    run(&env, &reg, &["build"]).ok();
    let fresh = TestEnv::new();
    copy_project(&env.project, &fresh.project);
    let extra = "\n[fetch.matchit]\nexclude = [\"examples/**\"]\n";
    fresh.write("memorix.toml", &format!("{}{extra}", manifest("Cargo.lock", &["matchit"], "")));
    let out = run(&fresh, &reg, &["build", "--locked"]).expect(1);
    assert!(out.stderr.contains("memorix::fetch::tree_mismatch"), "{}", out.stderr);
    assert!(!fresh.project.join(".memory").exists());
    // What the help says heals it: `memorix lock` records the tree this view keeps (the
    // artifact still verified by its hash), and the locked build then reproduces it.
    let before = lock_text(&fresh);
    run(&fresh, &reg, &["lock"]).ok();
    assert_ne!(lock_text(&fresh), before, "the lock records the new tree");
    run(&fresh, &reg, &["build", "--locked"]).ok();
    assert!(fresh.project.join(".memory/libs/matchit/README.md").is_file());
    assert!(!fresh.project.join(".memory/libs/matchit/examples").exists());
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_version_the_registry_does_not_know_keeps_the_resolve_error_with_its_answer() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["matchit"]);
    let real = fs::read_to_string(env.project.join("Cargo.lock")).unwrap();
    env.write(
        "Cargo.lock",
        &real.replace("name = \"matchit\"\nversion = \"0.9.2\"", "name = \"matchit\"\nversion = \"0.9.99\""),
    );
    let out = run(&env, &reg, &["build"]).expect(2);
    assert!(out.stderr.contains("memorix::store::no_versions"), "{}", out.stderr);
    assert!(out.stderr.contains("crates-io has no matchit 0.9.99"), "{}", out.stderr);
    assert!(out.stderr.contains("0.9.2"), "the versions the registry knows: {}", out.stderr);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_pep_503_html_index_serves_as_well() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/flask/HEAD/uv.lock", "uv.lock", &["click"]);
    let mut cmd = env.command();
    for (k, v) in reg.env() {
        cmd.env(k, v);
    }
    cmd.env("MEMORIX_PYPI_INDEX", format!("http://127.0.0.1:{}/pypi-html/simple/", reg.port));
    let out = env.run_cmd(cmd.args(["build"])).ok();
    assert!(out.stdout.contains("Fetched click 8.3.2 from pypi (click-8.3.2.tar.gz"), "{}", out.stdout);
    assert!(
        fetched_line(&env, "click")
            .contains("sha256:14162b8b3b3550a7d479eafa77dfd3c38d9dc8951f6f69c78913a8f9a7540fd5")
    );
}

/// A bare project holding the router-cli example's own pin files (no corpus file is copied),
/// and a local registry serving the corpus.
fn router_project(env: &TestEnv) -> Registry {
    let root = corpus("registry");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/router-cli");
    for f in ["Cargo.lock", "requirements.txt"] {
        fs::copy(example.join(f), env.project.join(f)).unwrap();
    }
    env.write("memorix.toml", "# Ours.\n[project]\nname = \"router\"\n");
    Registry::serve(&root)
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn add_deps_mounts_each_direct_dependency_and_fetches_its_docs() {
    let env = TestEnv::new();
    let reg = router_project(&env);
    let out = run(&env, &reg, &["add", "--deps", "--pins", "Cargo.lock"]).ok();
    let expected = "\
Fetched http 1.5.0 from crates-io (http-1.5.0.crate, 23 files) into docs/http/, verified by Cargo.lock (sha256:918d3568bebf352712bc2ef3d46a8bcf1a75b373be6539de198e9105cbbf9ce0)
Fetched matchit 0.9.2 from crates-io (matchit-0.9.2.crate, 9 files) into docs/matchit/, verified by Cargo.lock (sha256:8863b587001c1b9a8a4e36008cebc6b3612cb1226fe2de94858e06092687b608)
Listed Cargo.lock in [pins] files
Added 2 mounts to memorix.toml:
  libs/http     http 1.5.0 (Cargo.lock)
  libs/matchit  matchit 0.9.2 (Cargo.lock)
Wrote memorix.lock. Run `memorix build` to deliver them.
";
    assert_eq!(out.stdout, expected);
    let manifest = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert_eq!(
        manifest,
        "# Ours.\n[project]\nname = \"router\"\n\n[pins]\nfiles = [\"Cargo.lock\"]\n\n\
         [mounts.\"libs/http\"]\nselect = [\"docs/http/@pin\"]\nintent = \"http docs at the version Cargo.lock pins\"\n\n\
         [mounts.\"libs/matchit\"]\nselect = [\"docs/matchit/@pin\"]\nintent = \"matchit docs at the version Cargo.lock pins\"\n"
    );
    run(&env, &reg, &["build"]).ok();
    assert!(env.project.join(".memory/libs/matchit/README.md").is_file());
    assert!(!env.project.join(".memory/libs/bytes").exists(), "bytes is not a direct dependency");
    // Again: nothing new, nothing fetched, memorix.toml as it was.
    let requests = reg.requests();
    let again = run(&env, &reg, &["add", "--deps"]).ok();
    assert!(again.stdout.starts_with("Added no mount: every direct dependency has one"), "{}", again.stdout);
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), manifest);
    assert_eq!(reg.requests(), requests);
    // `all` adds what the direct dependencies pull in; the other pin file adds click.
    let all = run(&env, &reg, &["add", "--deps", "all"]).ok();
    assert!(all.stdout.contains("Added 2 mounts to memorix.toml:\n  libs/bytes  bytes 1.11.1 (Cargo.lock)\n  libs/itoa   itoa 1.0.17 (Cargo.lock)\nKept 2 a mount already selects:\n"), "{}", all.stdout);
    assert!(!all.stdout.contains("router-cli"), "the project's own package is no dependency: {}", all.stdout);
    let py = run(&env, &reg, &["add", "--deps", "--pins", "./requirements.txt", "--json"]).ok();
    let json: serde_json::Value = serde_json::from_str(&py.stdout).unwrap();
    assert_eq!(json["listed"], "requirements.txt");
    assert_eq!(json["added"][0]["mount"], "libs/click");
    assert_eq!(json["added"][0]["version"], "8.3.2");
    assert_eq!(json["fetched"][0]["verified_by"], "requirements.txt");
    run(&env, &reg, &["build"]).ok();
    let libs: Vec<String> = fs::read_dir(env.project.join(".memory/libs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(libs, ["bytes", "click", "http", "itoa", "matchit"]);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn add_deps_lists_what_it_cannot_add_and_leaves_memorix_toml_as_it_was() {
    let env = TestEnv::new();
    let reg = router_project(&env);
    let before = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    let none = run(&env, &reg, &["add", "--deps"]).expect(2);
    assert!(none.stderr.contains("memorix::add::no_pin_files"), "{}", none.stderr);
    assert!(none.stderr.contains("memorix add --deps --pins Cargo.lock"), "{}", none.stderr);
    // poetry.lock alone (no pyproject.toml beside it) does not say what the project depends on.
    let poetry = corpus("lockfiles/poetry/1.8.5/poetry.lock");
    fs::copy(poetry, env.project.join("poetry.lock")).unwrap();
    let direct = run(&env, &reg, &["add", "--deps", "--pins", "poetry.lock"]).expect(2);
    assert!(
        direct.stdout.contains("Skipped poetry.lock: neither it nor a manifest beside it says"),
        "{}",
        direct.stdout
    );
    assert!(direct.stdout.contains("`--deps all`"), "{}", direct.stdout);
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), before);
    // A registry that cannot be reached: every dependency is listed with the reason, in one
    // run; nothing is added, so memorix.toml is as it was.
    env.without_retries();
    let closed = env.run(&["add", "--deps", "--pins", "Cargo.lock"]).expect(2);
    assert!(
        closed.stdout.contains("Added no mount\nCould not add 2:\n  http 1.5.0 (Cargo.lock:"),
        "{}",
        closed.stdout
    );
    assert_eq!(
        closed.stdout.matches("cannot reach crates-io at http://127.0.0.1:9/config.json").count(),
        2,
        "{}",
        closed.stdout
    );
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), before);
    assert!(!env.project.join("memorix.lock").exists());
    let offline =
        run(&env, &reg, &["add", "--deps", "--pins", "Cargo.lock", "--offline", "--json"]).expect(2);
    let json = offline.json();
    assert_eq!(json["failed"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(json["failed"][0]["code"], "memorix::fetch::offline", "{json}");
    assert_eq!(json["failed"][1]["library"], "matchit", "{json}");
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), before);
    assert_eq!(reg.requests(), 0);
    // A MOUNT with --deps is a usage error.
    env.run(&["add", "libs/x", "--deps"]).expect(2);
}

/// A project of `tests/fixtures/projects/<name>` (its pin files and the manifests beside them)
/// with a memorix.toml of only `[project]`, and a local registry serving the corpus.
fn fixture_project(env: &TestEnv, name: &str) -> Registry {
    let root = corpus("registry");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/projects").join(name);
    for file in common::walk(&from).into_iter().filter(|p| p.is_file()) {
        common::write_file(&env.project.join(file.strip_prefix(&from).unwrap()), &fs::read(&file).unwrap());
    }
    env.write("memorix.toml", "[project]\nname = \"app\"\n");
    Registry::serve(&root)
}

/// The mounts memorix.toml declares, as `path: select` lines, and every other key they set.
fn mounts(env: &TestEnv) -> String {
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let mut out = String::new();
    for (path, m) in doc.get("mounts").and_then(|m| m.as_table()).into_iter().flatten() {
        let m = m.as_table().unwrap();
        let keys: Vec<String> =
            m.iter().filter(|(k, _)| *k != "intent").map(|(k, v)| format!("{k} = {v}")).collect();
        out.push_str(&format!("{path}: {}\n", keys.join("; ")));
    }
    out
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn one_bad_dependency_never_sinks_the_batch_and_what_was_fetched_stays() {
    let env = TestEnv::new();
    let reg = fixture_project(&env, "cargo-batch");
    let out = run(&env, &reg, &["add", "--deps", "--pins", "Cargo.lock"]).expect(2);
    assert!(out.stdout.contains("Added 3 mounts to memorix.toml:\n  libs/form_urlencoded  form_urlencoded 1.2.2 (Cargo.lock)\n  libs/http             http 1.5.0 (Cargo.lock)\n  libs/matchit          matchit 0.9.2 (Cargo.lock)\n"), "{}", out.stdout);
    assert!(
        out.stdout.contains("Could not add 1:\n  nosuch-crate 1.0.0 (Cargo.lock:34): crates-io has no nosuch-crate 1.0.0 (asked http://127.0.0.1:"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "/crates/index/no/su/nosuch-crate: HTTP 404)\n      help: check the pin at Cargo.lock:34"
        ),
        "{}",
        out.stdout
    );
    // The crate named with `_` is fetched under its own name: the index path and the download
    // keep the `_`, the mount is the name the code imports.
    assert_eq!(
        mounts(&env),
        "libs/form_urlencoded: select = [\"docs/form_urlencoded/@pin\"]\nlibs/http: select = [\"docs/http/@pin\"]\nlibs/matchit: select = [\"docs/matchit/@pin\"]\n"
    );
    assert!(fetched_line(&env, "form_urlencoded").contains("artifact = \"form_urlencoded-1.2.2.crate\""));
    // A second run fetches only what failed, and fails the same way.
    let requests = reg.requests();
    run(&env, &reg, &["add", "--deps"]).expect(2);
    assert_eq!(
        reg.requests() - requests,
        2,
        "only config.json and the missing crate's index are asked again"
    );
    run(&env, &reg, &["build"]).ok();
    assert!(env.project.join(".memory/libs/form_urlencoded/src/lib.rs").is_file());
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_npm_alias_is_fetched_as_the_real_package_and_mounted_under_the_alias() {
    for (fixture, pin_file) in [("npm-alias", "package-lock.json"), ("yarn-classic", "yarn.lock")] {
        let env = TestEnv::new();
        let reg = fixture_project(&env, fixture);
        let out = run(&env, &reg, &["add", "--deps", "--pins", pin_file]).ok();
        assert!(
            out.stdout.contains(&format!(
                "  libs/strip-ansi-cjs  strip-ansi-cjs (npm:strip-ansi) 6.0.1 ({pin_file})\n"
            )),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout.contains("Fetched strip-ansi-cjs 6.0.1 from npm (strip-ansi-6.0.1.tgz"),
            "{}",
            out.stdout
        );
        run(&env, &reg, &["build"]).ok();
        let pkg = fs::read_to_string(env.project.join(".memory/libs/strip-ansi-cjs/package.json")).unwrap();
        assert!(pkg.contains("\"name\": \"strip-ansi\""), "{pkg}");
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn direct_dependencies_come_from_the_manifest_beside_the_lockfile() {
    // yarn.lock v1 pins two ms; package.json's `^2.1.3` says which is the project's.
    let cases = [
        ("yarn-classic", "yarn.lock", "libs/debug", "libs/ms: select = [\"docs/ms/@pin\"]\n"),
        ("poetry", "poetry.lock", "libs/click", "libs/requests: select = [\"docs/requests/@pin\"]\n"),
        (
            "pipfile",
            "Pipfile.lock",
            "libs/anyio",
            "libs/click: select = [\"docs/click/@pin\"]\nlibs/httpx: select = [\"docs/httpx/@pin\"]\n",
        ),
    ];
    for (fixture, pin_file, not_direct, expected) in cases {
        let env = TestEnv::new();
        let reg = fixture_project(&env, fixture);
        let out = run(&env, &reg, &["add", "--deps", "--pins", pin_file, "--json"]);
        let json = out.json();
        let mounts_now = mounts(&env);
        assert!(mounts_now.contains(expected), "{fixture}: {mounts_now}\n{json}");
        assert!(!mounts_now.contains(&format!("{not_direct}:")), "{fixture}: {not_direct} is not direct");
        run(&env, &reg, &["build"]).ok();
        assert_eq!(out.code, 0, "{json}");
        if fixture == "yarn-classic" {
            let lock = lock_text(&env);
            assert!(lock.contains("[mounts.\"libs/ms\".locators.pin]\nlibrary = \"ms\"\nfile = \"yarn.lock\"\nversion = \"2.1.3\""), "{lock}");
        }
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn workspace_members_at_different_versions_get_a_scoped_mount_each() {
    let env = TestEnv::new();
    let reg = fixture_project(&env, "pnpm-two-versions");
    env.write(
        "memorix.toml",
        "[project]\nname = \"app\"\n\n[agents]\nharnesses = [\"agents-md\", \"claude\"]\n",
    );
    let out = run(&env, &reg, &["add", "--deps", "--pins", "pnpm-lock.yaml"]).ok();
    assert!(out.stdout.contains("  libs/ms@2.0.0  ms 2.0.0 (pnpm-lock.yaml) for packages/a/**\n  libs/ms@2.1.3  ms 2.1.3 (pnpm-lock.yaml) for packages/b/**\n  libs/semver    semver 7.7.4 (pnpm-lock.yaml)\n"), "{}", out.stdout);
    assert_eq!(
        mounts(&env),
        "libs/ms@2.0.0: applies-to = [\"packages/a/**\"]; select = [\"docs/ms/@pin\"]; version = \"2.0.0\"\n\
         libs/ms@2.1.3: applies-to = [\"packages/b/**\"]; select = [\"docs/ms/@pin\"]; version = \"2.1.3\"\n\
         libs/semver: select = [\"docs/semver/@pin\"]\n"
    );
    run(&env, &reg, &["build"]).ok();
    let version = |mount: &str| {
        let pkg = fs::read_to_string(env.project.join(".memory").join(mount).join("package.json")).unwrap();
        serde_json::from_str::<serde_json::Value>(&pkg).unwrap()["version"].as_str().unwrap().to_string()
    };
    assert_eq!((version("libs/ms@2.0.0"), version("libs/ms@2.1.3")), ("2.0.0".into(), "2.1.3".into()));
    let rule = fs::read_to_string(env.project.join(".claude/rules/memorix-libs-ms@2.1.3.md")).unwrap();
    assert!(rule.contains("packages/b/**"), "{rule}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_marker_split_gets_a_target_written_into_memorix_toml() {
    let env = TestEnv::new();
    let reg = fixture_project(&env, "uv-markers");
    let out = run(&env, &reg, &["add", "--deps", "--pins", "uv.lock"]).ok();
    assert!(out.stdout.contains("Declared the target [pins] markers = { implementation_name = \"cpython\", os_name = \"posix\", platform_machine = \"x86_64\", platform_python_implementation = \"CPython\", platform_system = \"Linux\", python_version = \"3.12\", sys_platform = \"linux\" }"), "{}", out.stdout);
    assert!(
        out.stdout.contains("  libs/click  click 8.3.2 (uv.lock)\n"),
        "the target's version: {}",
        out.stdout
    );
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert!(text.contains("markers = { implementation_name = \"cpython\""), "{text}");
    let lock = lock_text(&env);
    assert!(
        lock.contains("file = \"uv.lock\"\nversion = \"8.3.2\""),
        "python 3.12 from .python-version: {lock}"
    );
    // Every machine resolves the same: a fresh clone with an empty Store builds the same id.
    run(&env, &reg, &["build"]).ok();
    let clone = TestEnv::new();
    let files = ["memorix.toml", "memorix.lock", "uv.lock", ".python-version", "pyproject.toml"];
    common::copy_project_files(&env, &clone, &files);
    run(&clone, &reg, &["build", "--locked"]).ok();
    assert_eq!(lock_text(&clone), lock);
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn two_origins_of_one_version_are_two_variants_and_each_project_gets_its_own() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/warehouse/requirements/main.txt", "requirements.txt", &[]);
    env.write("requirements.txt", "httpx==0.28.1\n");
    env.write("memorix.toml", &manifest("requirements.txt", &["httpx"], ""));
    run(&env, &reg, &["build"]).ok();
    let registry_lock = lock_text(&env);
    assert!(registry_lock.contains("artifact = \"httpx-0.28.1.tar.gz\""), "{registry_lock}");
    // A second project on the same machine documents the same version itself.
    let b = env.root.join("b");
    common::write_file(&b.join("requirements.txt"), b"httpx==0.28.1\n");
    common::write_file(&b.join("vendor/README.md"), b"# Our httpx notes\n\nAlways pass timeout=.\n");
    let b_manifest = "[pins]\nfiles = [\"requirements.txt\"]\n\n[sources]\n\"docs/httpx/@v0.28.1\" = \"./vendor\"\n\n[mounts.\"libs/httpx\"]\nselect = [\"docs/httpx/@pin\"]\n";
    common::write_file(&b.join("memorix.toml"), b_manifest.as_bytes());
    run(&env, &reg, &["-C", "../b", "build"]).ok();
    assert_eq!(
        common::files_under(&b.join(".memory/libs/httpx")),
        ["INDEX.md", "README.md"],
        "B gets its own docs"
    );
    let b_lock = fs::read_to_string(b.join("memorix.lock")).unwrap();
    assert!(!b_lock.contains("fetched"), "{b_lock}");
    // Both variants are in the Store; the first project keeps the registry's, even resolved afresh.
    let versions = run(&env, &reg, &["versions", "httpx"]).ok().stdout;
    assert_eq!(versions.lines().filter(|l| l.starts_with("  0.28.1 ")).count(), 2, "{versions}");
    assert!(versions.contains("from pypi httpx-0.28.1.tar.gz"), "{versions}");
    run(&env, &reg, &["update"]).ok();
    assert_eq!(lock_text(&env), registry_lock);
    assert!(env.project.join(".memory/libs/httpx/CHANGELOG.md").is_file());
    run(&env, &reg, &["-C", "../b", "update"]).ok();
    assert_eq!(fs::read_to_string(b.join("memorix.lock")).unwrap(), b_lock);
    run(&env, &reg, &["-C", "../b", "lock", "--check"]).ok();
    run(&env, &reg, &["verify"]).ok();
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_nearby_version_in_the_store_never_serves_a_pin_and_a_fresh_clone_reproduces_the_lock() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["http"]);
    // The Store holds http 1.5.1, which a `minor` match would take for the pinned 1.5.0.
    env.write("near/README.md", "# http 1.5.1\n");
    env.run(&["ingest", "docs/http/", env.project.join("near").to_str().unwrap(), "--version", "1.5.1"]).ok();
    let out = run(&env, &reg, &["build"]).ok();
    assert!(out.stdout.contains("Fetched http 1.5.0 from crates-io"), "{}", out.stdout);
    let lock = lock_text(&env);
    assert!(lock.contains("version = \"1.5.0\"\n") && !lock.contains("1.5.1"), "{lock}");
    let pins = run(&env, &reg, &["pins"]).ok().stdout;
    assert!(pins.contains("http 1.5.0"), "{pins}");
    // A teammate's empty Store builds the same environment from the lock alone.
    let clone = TestEnv::new();
    copy_project(&env.project, &clone.project);
    run(&clone, &reg, &["build", "--locked"]).ok();
    assert_eq!(lock_text(&clone), lock);
    assert_eq!(
        fs::read(clone.project.join(".memory/libs/http/README.md")).unwrap(),
        fs::read(env.project.join(".memory/libs/http/README.md")).unwrap()
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_unreachable_registry_after_a_pin_bump_is_an_error_never_the_old_docs() {
    let env = TestEnv::new();
    let reg = project(&env, "lockfiles/axum/Cargo.lock", "Cargo.lock", &["http"]);
    let real = fs::read_to_string(env.project.join("Cargo.lock")).unwrap();
    let old =
        real.replace("name = \"http\"\nversion = \"1.5.0\"", "name = \"http\"\nversion = \"1.0.0\"").replace(
            "918d3568bebf352712bc2ef3d46a8bcf1a75b373be6539de198e9105cbbf9ce0",
            "b32afd38673a8016f7c9ae69e5af41a58f81b1d31689040f2f1959594ce194ea",
        );
    env.write("Cargo.lock", &old);
    run(&env, &reg, &["build"]).ok();
    let lock = lock_text(&env);
    let readme = fs::read(env.project.join(".memory/libs/http/README.md")).unwrap();
    // Dependabot moves the pin; the registry is out of reach.
    env.write("Cargo.lock", &real);
    drop(reg);
    env.without_retries();
    let out = env.run(&["update"]).expect(2);
    assert!(out.stderr.contains("cannot reach crates-io"), "{}", out.stderr);
    assert!(out.stderr.contains("1.5.0"), "{}", out.stderr);
    assert_eq!(lock_text(&env), lock, "the lock is untouched");
    assert_eq!(fs::read(env.project.join(".memory/libs/http/README.md")).unwrap(), readme);
    let status = env.run(&["status", "--check"]).expect(1).stdout;
    assert!(status.contains("Cargo.lock now pins http 1.5.0 (memorix.lock has 1.0.0"), "{status}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_package_past_the_size_cap_is_skipped_with_a_notice_and_never_downloaded() {
    let env = TestEnv::new();
    let reg = fixture_project(&env, "cargo-batch");
    reg.oversize("http-1.5.0.crate");
    let out = run(&env, &reg, &["add", "--deps", "--pins", "Cargo.lock", "--json"]);
    let json = out.json();
    let skipped = json["skipped"].as_array().unwrap();
    let http = skipped.iter().find(|d| d["library"] == "http").unwrap_or_else(|| panic!("{json}"));
    assert_eq!(http["code"], "memorix::fetch::artifact_too_large", "{json}");
    assert!(http["reason"].as_str().unwrap().contains("1073741824 bytes"), "{json}");
    let added: Vec<&str> =
        json["added"].as_array().unwrap().iter().map(|d| d["library"].as_str().unwrap()).collect();
    assert_eq!(added, ["form_urlencoded", "matchit"]);
    assert_eq!(out.code, 2, "nosuch-crate still failed: {json}");
    assert_eq!(json["failed"].as_array().unwrap().len(), 1, "{json}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_library_name_from_a_pin_file_or_a_manifest_is_never_a_path() {
    let env = TestEnv::new();
    let reg = fixture_project(&env, "npm-alias");
    let sentinel = common::Sentinel::new(&env);
    let hostile = "ms?/../../../../sentinel";
    let lock = fs::read_to_string(env.project.join("package-lock.json")).unwrap();
    let lock =
        lock.replace("\"ms\": \"^2.1.3\"", &format!("\"ms\": \"^2.1.3\", \"{hostile}\": \"^2\"")).replace(
            "\"node_modules/ms\": {",
            &format!(
                "\"node_modules/{hostile}\": {{ \"version\": \"2.1.3\" }},\n    \"node_modules/ms\": {{"
            ),
        );
    env.write("package-lock.json", &lock);
    env.write("uv.lock", "version = 1\n\n[[package]]\nname = \"../../sentinel\"\nversion = \"1.0.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n");
    // Named by a mount: refused where the manifest is read.
    env.write("memorix.toml", &format!("[pins]\nfiles = [\"package-lock.json\"]\n\n[mounts.x]\nselect = [\"docs/x/@pin\"]\nlibrary = \"{hostile}\"\n"));
    let out = run(&env, &reg, &["build"]).expect(2);
    common::no_panic(&out);
    assert!(out.stderr.contains("memorix::manifest::bad_library"), "{}", out.stderr);
    // From the pin files alone: listed as not a name, never fetched, never a Store path.
    env.write("memorix.toml", "[project]\nname = \"app\"\n");
    for pins in ["package-lock.json", "uv.lock"] {
        let out = run(&env, &reg, &["add", "--deps", "all", "--pins", pins, "--json"]);
        common::no_panic(&out);
        let json = out.json();
        let failed = json["failed"].as_array().unwrap();
        assert!(
            failed.iter().any(|f| f["reason"].as_str().unwrap().starts_with("not a package name")),
            "{json}"
        );
    }
    let mounts_now = mounts(&env);
    assert!(!mounts_now.contains("sentinel"), "{mounts_now}");
    assert!(common::walk(&env.store).iter().all(|p| !p.to_string_lossy().contains("sentinel")));
    sentinel.untouched(&env, "hostile names");
}
