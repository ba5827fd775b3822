//! The Store from the CLI: ingest, rm, ls, cat, log, show, verify.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;

use common::{TestEnv, corpus, make_writable, write_file};

/// A small fixed tree: the ids below are pinned, so any change to the encoding fails here.
fn fixed_tree(env: &TestEnv) -> std::path::PathBuf {
    env.write("fixed/python/style.md", "# Style\n\nUse black.\n");
    env.write("fixed/python/web/http.md", "# HTTP\n\nUse httpx.\n");
    env.write("fixed/README.md", "team rules\n");
    env.project.join("fixed")
}

const FIXED_ROOT: &str = "sha256:95c68d66097127e895b3b6c804516eda0450fb65a7c6e6de533fa69b86fdb9fd";
const FIXED_GENERATION: &str = "sha256:8472cd4e7bca79119415f879446d59cf7a27aa9eaa8bf4d3b421a6038b4d2f78";

#[test]
fn ids_are_stable_across_stores() {
    let mut seen = Vec::new();
    for _ in 0..2 {
        let env = TestEnv::new();
        let src = fixed_tree(&env);
        let out = env.run(&["--json", "ingest", "rules/team/", src.to_str().unwrap()]).ok().json();
        let g = &out["generation"];
        seen.push((g["root"].as_str().unwrap().to_string(), g["id"].as_str().unwrap().to_string()));
    }
    assert_eq!(seen[0], seen[1], "a fresh store gives the same ids");
    assert_eq!(seen[0].0, FIXED_ROOT, "root tree id");
    assert_eq!(seen[0].1, FIXED_GENERATION, "generation id");
}

#[test]
fn tree_objects_are_canonical_json() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    let out = env.run(&["--json", "ingest", "rules/team/", src.to_str().unwrap()]).ok().json();
    let root = out["generation"]["root"].as_str().unwrap().strip_prefix("sha256:").unwrap().to_string();
    let text =
        fs::read_to_string(env.store.join("trees").join(&root[..2]).join(format!("{root}.json"))).unwrap();
    let team =
        env.run(&["--json", "ls", "rules/"]).ok().json()["entries"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        text,
        format!(r#"{{"entries":[["team","tree","{}"]]}}"#, team.strip_prefix("sha256:").unwrap())
    );
    // Blob ids agree with sha256sum.
    let ls = env.run(&["--json", "ls", "rules/team/README.md"]).ok().json();
    assert_eq!(
        ls["entries"][0]["id"],
        "sha256:49149fb906abe72457ed1aef625f03efadc564308249b243ac621061a5e5b2da"
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn corpus_history_stays_addressable_after_later_ingests_and_rm() {
    let rules = corpus("rules/pydantic-ai");
    let env = TestEnv::new();
    let out = env.run(&["ingest", "rules/pydantic-ai/", rules.to_str().unwrap()]).ok();
    assert!(out.stdout.starts_with("Ingested rules/pydantic-ai/ into rules@g1"), "{}", out.stdout);
    let original = fs::read(rules.join("AGENTS.md")).unwrap();

    let mut versions: Vec<_> =
        fs::read_dir(rules.join("history")).unwrap().map(|e| e.unwrap().path()).collect();
    versions.sort();
    assert!(versions.len() >= 10, "the corpus holds many versions of AGENTS.md");
    let mut expected_seq = 1;
    for v in &versions {
        let file = v.join("AGENTS.md");
        let out =
            env.run(&["--json", "ingest", "rules/pydantic-ai/AGENTS.md", file.to_str().unwrap()]).ok().json();
        if !out["generation"].is_null() {
            expected_seq += 1;
            assert_eq!(out["generation"]["seq"], expected_seq);
        }
    }
    env.run(&["rm", "rules/pydantic-ai/AGENTS.md"]).ok();

    let g1 = env.run(&["cat", "rules/pydantic-ai/AGENTS.md@g1"]).ok();
    assert_eq!(g1.raw_stdout, original, "@g1 is the first version byte for byte");
    let g2 = env.run(&["cat", "rules/pydantic-ai/AGENTS.md@g2"]).ok();
    assert_eq!(g2.raw_stdout, fs::read(versions[0].join("AGENTS.md")).unwrap());
    let gone = env.run(&["cat", "rules/pydantic-ai/AGENTS.md"]).expect(2);
    assert!(gone.stderr.contains("does not exist in rules@g"), "{}", gone.stderr);
    // Everything else from the folder is still at the tip.
    let tests_md = env.run(&["cat", "rules/pydantic-ai/tests/AGENTS.md"]).ok();
    assert_eq!(tests_md.raw_stdout, fs::read(rules.join("tests/AGENTS.md")).unwrap());
    env.run(&["verify"]).ok();
}

#[test]
fn one_changed_file_writes_depth_plus_one_trees_and_one_blob() {
    let env = TestEnv::new();
    env.write("src/a/b/c/deep.md", "v1\n");
    env.write("src/a/b/sibling.md", "s\n");
    env.write("src/a/other/x.md", "x\n");
    env.write("src/top.md", "t\n");
    let src = env.project.join("src");
    env.run(&["ingest", "rules/", src.to_str().unwrap()]).ok();
    env.write("docs-src/api.md", "api\n");
    env.run(&["ingest", "docs/api/", env.project.join("docs-src").to_str().unwrap()]).ok();
    env.write("chat.jsonl", "{}\n");
    env.run(&["ingest", "chat/run1.jsonl", env.project.join("chat.jsonl").to_str().unwrap()]).ok();
    let refs_before = (
        fs::read(env.store.join("refs/docs/latest")).unwrap(),
        fs::read(env.store.join("refs/chat/latest")).unwrap(),
    );
    let (trees, blobs) = (env.count("trees"), env.count("blobs"));

    env.write("src/a/b/c/deep.md", "v2\n");
    let out = env.run(&["--json", "ingest", "rules/", src.to_str().unwrap()]).ok().json();
    // deep.md sits at depth 3 (a/b/c): c, b, a and the root are rewritten.
    assert_eq!(env.count("trees") - trees, 4);
    assert_eq!(env.count("blobs") - blobs, 1);
    assert_eq!(out["written"]["trees"], 4);
    assert_eq!(out["written"]["blobs"], 1);
    assert_eq!(out["changes"].as_array().unwrap().len(), 1);
    assert_eq!(out["changes"][0]["path"], "a/b/c/deep.md");
    let refs_after = (
        fs::read(env.store.join("refs/docs/latest")).unwrap(),
        fs::read(env.store.join("refs/chat/latest")).unwrap(),
    );
    assert_eq!(refs_before, refs_after, "other kinds' refs did not move");

    // Sibling subtrees keep their ids.
    let before = env.run(&["--json", "ls", "rules/a/@g1"]).ok().json();
    let after = env.run(&["--json", "ls", "rules/a/"]).ok().json();
    assert_eq!(before["entries"][1]["path"], "other/");
    assert_eq!(before["entries"][1]["id"], after["entries"][1]["id"]);
    assert_ne!(before["entries"][0]["id"], after["entries"][0]["id"]);
}

#[test]
fn re_ingests_taking_unchanged_directories_from_the_stat_cache_give_a_fresh_stores_trees() {
    let env = TestEnv::new();
    let src = env.project.join("src");
    for (path, text) in [
        ("a/b/c/f1.md", "1"),
        ("a/b/g.md", "g"),
        ("a/x/h.md", "h"),
        ("top.md", "t"),
        ("d/e/i.md", "i"),
        ("d/e/j.md", "j"),
        ("d/k.md", "k"),
    ] {
        env.write(&format!("src/{path}"), text);
    }
    // Files changed in the last two seconds are never cached: let these age.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let root = |store: &std::path::Path| {
        let out = env.run(&[
            "--store",
            store.to_str().unwrap(),
            "--json",
            "ingest",
            "docs/t/",
            src.to_str().unwrap(),
        ]);
        out.ok().json()["tip"]["root"].as_str().unwrap().to_string()
    };
    root(&env.store);
    type Step<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let steps: [Step; 7] = [
        ("a file edited deep down", Box::new(|| drop(env.write("src/a/b/c/f1.md", "1, edited")))),
        ("a file added", Box::new(|| drop(env.write("src/a/b/c/new.md", "new")))),
        ("a file removed", Box::new(|| fs::remove_file(src.join("d/e/j.md")).unwrap())),
        ("a directory removed", Box::new(|| fs::remove_dir_all(src.join("a/x")).unwrap())),
        ("a file moved", Box::new(|| fs::rename(src.join("top.md"), src.join("d/e/top.md")).unwrap())),
        (
            "a file where a directory was",
            Box::new(|| {
                fs::remove_dir_all(src.join("d/e")).unwrap();
                env.write("src/d/e", "now a file");
            }),
        ),
        ("nothing", Box::new(|| {})),
    ];
    for (i, (what, change)) in steps.iter().enumerate() {
        change();
        let cached = root(&env.store);
        let fresh = root(&env.root.join(format!("fresh{i}")));
        assert_eq!(cached, fresh, "after {what}");
    }
}

#[test]
fn identical_content_creates_no_generation() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    let before = env.store_listing();
    let out = env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    insta::assert_snapshot!(out.stdout, @"Unchanged: rules/team/ already holds this content (rules@g1 (8472cd4e7bca))");
    let after = env.store_listing();
    let changed: Vec<_> =
        after.iter().filter(|(k, v)| before.get(*k) != Some(v)).map(|(k, _)| k.as_str()).collect();
    assert!(changed.iter().all(|k| k.starts_with("spare/") || *k == "lock"), "{changed:?}");
}

#[test]
fn verify_finds_flipped_blob_deleted_tree_and_stale_latest_file() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    insta::assert_snapshot!(env.run(&["verify"]).ok().stdout, @"ok: checked 3 blobs, 4 trees, 1 generations, 1 refs, 3 files in latest/, 0 derivations, 0 environments");

    // A flipped byte in a blob.
    let id = env.run(&["--json", "ls", "rules/team/README.md"]).ok().json()["entries"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let hex = id.strip_prefix("sha256:").unwrap();
    let blob = env.store.join("blobs").join(&hex[..2]).join(hex);
    make_writable(&blob);
    let mut bytes = fs::read(&blob).unwrap();
    bytes[0] ^= 0x01;
    fs::write(&blob, &bytes).unwrap();
    let out = env.run(&["verify"]).expect(1);
    assert!(out.stdout.contains(&format!("blob {id}: content hashes to sha256:")), "{}", out.stdout);
    bytes[0] ^= 0x01;
    fs::write(&blob, &bytes).unwrap();
    env.run(&["verify"]).ok();

    // A deleted tree object.
    let web = env.run(&["--json", "ls", "rules/team/python/"]).ok().json()["entries"][1]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let hex = web.strip_prefix("sha256:").unwrap().to_string();
    let tree_file = env.store.join("trees").join(&hex[..2]).join(format!("{hex}.json"));
    let saved = fs::read(&tree_file).unwrap();
    fs::remove_file(&tree_file).unwrap();
    let out = env.run(&["verify"]).expect(1);
    assert!(out.stdout.contains(&format!("names missing tree {web}")), "{}", out.stdout);
    fs::write(&tree_file, saved).unwrap();
    env.run(&["verify"]).ok();

    // A latest/ file that no longer matches (replaced, as an editor would).
    let file = env.store.join("latest/rules/team/python/style.md");
    let dir = file.parent().unwrap();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
    fs::remove_file(&file).unwrap();
    fs::write(&file, "# Style\n\nUse ruff.\n").unwrap();
    let out = env.run(&["--json", "verify"]).expect(1).json();
    assert_eq!(out["problems"][0]["object"], "latest/rules/team/python/style.md");
    assert!(out["problems"][0]["message"].as_str().unwrap().starts_with("does not match rules@g1"));
    // The store's own blob was not touched.
    env.run(&["cat", "rules/team/python/style.md"]).ok().stdout.contains("black").then_some(()).unwrap();
}

/// Runs a command that must fail with exit 2 and must leave the store exactly as it was.
fn refused(env: &TestEnv, args: &[&str]) -> String {
    let before = env.store_listing();
    let out = env.run(args).expect(2);
    assert_eq!(env.store_listing(), before, "store changed by {args:?}");
    out.stderr
}

#[test]
fn bad_inputs_exit_2_and_leave_the_store_untouched() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    let src = src.to_str().unwrap();
    env.run(&["ingest", "rules/team/", src]).ok();

    insta::assert_snapshot!(refused(&env, &["ingest", "rules/team/../etc/", src]), @r"
    memorix::locator::parent_dir

      x invalid locator `rules/team/../etc/`: `..` path component
       ,----
     1 | rules/team/../etc/
       :            ^|
       :             `-- `..` path component
       `----
      help: locators cannot leave their tree; name the path from the kind down
    ");
    insta::assert_snapshot!(refused(&env, &["ingest", "/rules/team/", src]), @r"
    memorix::locator::absolute

      x invalid locator `/rules/team/`: absolute path
       ,----
     1 | /rules/team/
       : |
       : `-- absolute path
       `----
      help: locators start with a kind: rules/, docs/ or chat/ (not a file system path)
    ");
    insta::assert_snapshot!(refused(&env, &["ingest", "rules/team/", "does-not-exist"]), @r"
    memorix::store::missing_source

      x source does-not-exist does not exist
      help: check the path; `-` reads standard input
    ");

    env.write("leaky/ok.md", "fine\n");
    std::os::unix::fs::symlink("/etc/hostname", env.project.join("leaky/escape.md")).unwrap();
    let err = refused(&env, &["ingest", "rules/leaky/", env.project.join("leaky").to_str().unwrap()]);
    assert!(
        err.contains("symlink [ROOT]/project/leaky/escape.md points outside the source (/etc/hostname)"),
        "{err}"
    );
    assert!(err.contains("memorix::store::escaping_symlink"), "{err}");

    let version = env.store.join("VERSION");
    fs::write(&version, "banana\n").unwrap();
    let err = refused(&env, &["ingest", "rules/team/", src]);
    assert!(err.contains("memorix::store::bad_version"), "{err}");
    assert!(err.contains(r#"the store's VERSION file [ROOT]/store/VERSION is corrupt: "banana\n""#), "{err}");
    refused(&env, &["ls", "rules/"]);
    refused(&env, &["verify"]);
    fs::write(&version, "7\n").unwrap();
    let err = refused(&env, &["ingest", "rules/team/", src]);
    assert!(
        err.contains(
            "store format 7 at [ROOT]/store/VERSION is newer than this memorix understands (format 2)"
        ),
        "{err}"
    );
    fs::write(&version, "2\n").unwrap();
    env.run(&["verify"]).ok();
}

/// A Store of format 1 (before incoming packs) is read as it is; its first writer raises
/// VERSION to 2, so an older memorix refuses it instead of missing packed blobs.
#[test]
fn an_older_format_store_is_read_and_upgraded_by_its_first_writer() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    let version = env.store.join("VERSION");
    assert_eq!(fs::read_to_string(&version).unwrap(), "2\n", "a new Store is format 2");
    fs::write(&version, "1\n").unwrap();

    let listed = env.run(&["ls", "rules/team/"]).ok().stdout;
    assert!(listed.contains("README.md"), "{listed}");
    assert_eq!(fs::read_to_string(&version).unwrap(), "1\n", "a reader leaves the format as it is");

    env.write("fixed/more.md", "more\n");
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    assert_eq!(fs::read_to_string(&version).unwrap(), "2\n", "the first writer upgrades the Store");
    env.run(&["verify"]).ok();
    let listed = env.run(&["ls", "rules/team/"]).ok().stdout;
    assert!(listed.contains("README.md") && listed.contains("more.md"), "{listed}");
}

#[test]
fn ingest_honours_ignore_files_skips_git_and_follows_inner_symlinks() {
    let env = TestEnv::new();
    env.write("src/.cursorrules", "cursor\n");
    env.write("src/.github/copilot-instructions.md", "copilot\n");
    env.write("src/.gitignore", "*.log\n");
    env.write("src/.ignore", "scratch/\n");
    env.write("src/.memorixignore", "secret.md\n");
    env.write("src/keep.md", "keep\n");
    env.write("src/build.log", "noise\n");
    env.write("src/scratch/tmp.md", "tmp\n");
    env.write("src/secret.md", "secret\n");
    env.write("src/.git/HEAD", "ref: refs/heads/main\n");
    env.write("src/docs/real.md", "real\n");
    std::os::unix::fs::symlink("docs/real.md", env.project.join("src/alias.md")).unwrap();
    std::os::unix::fs::symlink("docs", env.project.join("src/docs-link")).unwrap();
    env.run(&["ingest", "rules/r/", env.project.join("src").to_str().unwrap()]).ok();
    insta::assert_snapshot!(env.run(&["ls", "-r", "rules/r/"]).ok().stdout, @"
    .cursorrules
    .github/copilot-instructions.md
    .gitignore
    .ignore
    .memorixignore
    alias.md
    docs/real.md
    docs-link/real.md
    keep.md
    ");
    assert_eq!(env.run(&["cat", "rules/r/alias.md"]).ok().stdout, "real\n");
}

#[test]
fn special_files_and_missing_targets_are_refused_with_the_path() {
    let env = TestEnv::new();
    env.write("src/ok.md", "ok\n");
    let fifo = env.project.join("src/pipe");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let err = env.run(&["ingest", "rules/x/", env.project.join("src").to_str().unwrap()]).expect(2).stderr;
    assert!(err.contains("[ROOT]/project/src/pipe is a FIFO, not a regular file or directory"), "{err}");
    assert!(!env.store.exists(), "a refused first ingest creates no store");
    fs::remove_file(&fifo).unwrap();
    std::os::unix::fs::symlink("nowhere.md", env.project.join("src/dangling.md")).unwrap();
    let err = env.run(&["ingest", "rules/x/", env.project.join("src").to_str().unwrap()]).expect(2).stderr;
    assert!(err.contains("dangling.md points to nothing (nowhere.md)"), "{err}");
}

#[test]
fn directory_replaces_merge_adds_files_land_by_name_and_stdin() {
    let env = TestEnv::new();
    env.write("v1/a.md", "a1\n");
    env.write("v1/b.md", "b1\n");
    env.write("v2/a.md", "a2\n");
    let (v1, v2) = (env.project.join("v1"), env.project.join("v2"));
    env.run(&["ingest", "rules/d/", v1.to_str().unwrap()]).ok();
    env.run(&["ingest", "rules/d/", v2.to_str().unwrap()]).ok();
    assert_eq!(
        env.run(&["ls", "rules/d/"]).ok().stdout,
        "a.md\n",
        "b.md is gone: the directory replaced the subtree"
    );
    env.run(&["ingest", "--merge", "rules/d/", v1.to_str().unwrap()]).ok();
    assert_eq!(env.run(&["ls", "rules/d/"]).ok().stdout, "a.md\nb.md\n");

    // A file into a DEST ending in / lands at DEST/<name>; several SRCs merge, the later wins.
    let note = env.write("note.md", "note\n");
    env.run(&["ingest", "rules/d/", note.to_str().unwrap()]).ok();
    assert_eq!(
        env.run(&["ls", "rules/d/"]).ok().stdout,
        "a.md\nb.md\nnote.md\n",
        "a file SRC does not replace siblings"
    );
    env.run(&["ingest", "rules/e/", v1.to_str().unwrap(), v2.to_str().unwrap()]).ok();
    assert_eq!(env.run(&["cat", "rules/e/a.md"]).ok().stdout, "a2\n");
    assert_eq!(env.run(&["cat", "rules/e/b.md"]).ok().stdout, "b1\n");

    let out = env.run_stdin(&["ingest", "chat/runs/1.jsonl", "-"], b"{\"turn\":1}\n").ok();
    assert!(out.stdout.starts_with("Ingested chat/runs/1.jsonl into chat@g1"), "{}", out.stdout);
    assert_eq!(env.run(&["cat", "chat/runs/1.jsonl"]).ok().stdout, "{\"turn\":1}\n");
    let err = env.run_stdin(&["ingest", "chat/runs/", "-"], b"x").expect(2).stderr;
    assert!(err.contains("standard input has no file name"), "{err}");
    env.run(&["verify"]).ok();
}

#[test]
fn log_show_ls_and_cat_read_the_history() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    env.run(&["ingest", "rules/team/", src.to_str().unwrap(), "-m", "first"]).ok();
    env.write("fixed/python/style.md", "# Style\n\nUse ruff.\n");
    env.run(&["ingest", "rules/team/", src.to_str().unwrap(), "-m", "ruff"]).ok();
    env.run(&["rm", "rules/team/README.md"]).ok();

    insta::assert_snapshot!(env.run(&["log"]).ok().stdout, @"
    rules@g3 sha256:7f9ff59d3ded3afa66560aacdecc977551396651ccc2897bbe4ddc72e37af61f 2026-01-01T00:00:00Z
        D rules/team/README.md
    rules@g2 sha256:da5de0a8fd8bfac4512ea6a9e99c8719a5524c6801acbc681ecf4e25f79ef373 2026-01-01T00:00:00Z  ruff
        M rules/team/python/style.md
    rules@g1 sha256:8472cd4e7bca79119415f879446d59cf7a27aa9eaa8bf4d3b421a6038b4d2f78 2026-01-01T00:00:00Z  first
        A rules/team/README.md
        A rules/team/python/style.md
        A rules/team/python/web/http.md
    ");
    let by_path = env.run(&["log", "rules/team/python/style.md"]).ok().stdout;
    assert_eq!(by_path.lines().filter(|l| l.starts_with("rules@")).count(), 2, "{by_path}");
    // `-n` stops where the count is reached, with a path filter too.
    let newest = env.run(&["log", "-n", "1", "rules/team/python/style.md"]).ok().stdout;
    assert!(
        newest.starts_with("rules@g2 ") && newest.lines().filter(|l| l.starts_with("rules@")).count() == 1
    );
    let two = env.run(&["log", "-n", "2"]).ok().stdout;
    let all = env.run(&["log"]).ok().stdout;
    assert!(all.starts_with(&two) && two.contains("rules@g2 ") && !two.contains("rules@g1 "), "{two}");

    let g2 =
        env.run(&["--json", "log", "rules"]).ok().json()[1]["generation"]["id"].as_str().unwrap().to_string();
    let shown = env.run(&["show", &g2[7..20]]).ok().stdout;
    assert!(shown.contains("seq:     2") && shown.contains("message: ruff"), "{shown}");
    let tree = env.run(&["--json", "show", &g2]).ok().json()["root"].as_str().unwrap().to_string();
    let listing = env.run(&["show", &tree]).ok().stdout;
    assert!(
        listing.starts_with(&format!("tree {tree}\ntree sha256:")) && listing.ends_with(" team/\n"),
        "{listing}"
    );
    assert_eq!(
        env.run(&["cat", &format!("rules/team/python/style.md@{}", &g2[7..19])]).ok().stdout,
        "# Style\n\nUse ruff.\n"
    );
    assert_eq!(env.run(&["cat", "rules/team/python/style.md@g1"]).ok().stdout, "# Style\n\nUse black.\n");

    let err = env.run(&["show", "0123"]).expect(2).stderr;
    assert!(err.contains("is not an id or id prefix"), "{err}");
    let err = env.run(&["show", "ffffffffff"]).expect(2).stderr;
    assert!(err.contains("no object in the store has an id starting with ffffffffff"), "{err}");
    let err = env.run(&["cat", "rules/team/python/"]).expect(2).stderr;
    assert!(err.contains("`rules/team/python/` is a directory"), "{err}");
    let err = env.run(&["cat", "rules/team/python/style.md@g9"]).expect(2).stderr;
    assert!(err.contains("`rules` has no generation g9"), "{err}");
    let err = env.run(&["ls", "docs/"]).expect(2).stderr;
    assert!(err.contains("`docs` has no generations in this store yet"), "{err}");

    // `log -n 1` reads the newest generation and its parent, no further back: with the oldest
    // record gone it still answers, while a full `log` names what is missing.
    let g1 =
        env.run(&["--json", "log", "rules"]).ok().json()[2]["generation"]["id"].as_str().unwrap().to_string();
    let record = env.store.join("generations/rules").join(format!("{}.json", &g1[7..]));
    fs::rename(&record, env.root.join("aside.json")).unwrap();
    let newest = env.run(&["log", "-n", "1"]).ok().stdout;
    assert!(all.starts_with(&newest) && newest.starts_with("rules@g3 "), "{newest}");
    let err = env.run(&["log"]).expect(2).stderr;
    assert!(err.contains(&g1[7..19]), "{err}");
    fs::rename(env.root.join("aside.json"), &record).unwrap();
}

#[test]
fn concurrent_writers_each_get_their_own_generation() {
    let env = TestEnv::new();
    for i in 0..6 {
        env.write(&format!("f{i}.md"), &format!("{i}\n"));
    }
    let children: Vec<_> = (0..6)
        .map(|i| {
            env.command()
                .args([
                    "ingest",
                    &format!("rules/c/f{i}.md"),
                    env.project.join(format!("f{i}.md")).to_str().unwrap(),
                ])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let log = env.run(&["--json", "log", "rules"]).ok().json();
    assert_eq!(log.as_array().unwrap().len(), 6, "no lost update");
    assert_eq!(env.run(&["ls", "rules/c/"]).ok().stdout.lines().count(), 6);
    env.run(&["verify"]).ok();
}

#[test]
fn a_large_file_streams_into_one_blob() {
    let env = TestEnv::new();
    let big = env.root.join("big.bin");
    let chunk: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
    {
        use std::io::Write;
        let mut f = fs::File::create(&big).unwrap();
        for _ in 0..9 {
            f.write_all(&chunk).unwrap();
        }
    }
    let out = env.run(&["--json", "ingest", "docs/big.bin", big.to_str().unwrap()]).ok().json();
    assert_eq!(out["written"]["blob_bytes"], 9 << 20);
    let expected = {
        use sha2::Digest;
        format!("sha256:{}", hex::encode(sha2::Sha256::digest(fs::read(&big).unwrap())))
    };
    assert_eq!(env.run(&["--json", "ls", "docs/big.bin"]).ok().json()["entries"][0]["id"], expected.as_str());
    let blob_mode = fs::metadata(env.store.join("latest/docs/big.bin")).unwrap().permissions().mode() & 0o777;
    assert_eq!(blob_mode, 0o444);
    write_file(&env.root.join("unused"), b"");
}

#[test]
fn latest_is_refreshed_in_place_for_changed_paths_only() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    env.write("src/a/x.md", "1\n");
    env.write("src/b/deep/y.md", "y\n");
    let src = env.project.join("src");
    let ino = |p: &str| fs::metadata(env.store.join("latest/rules").join(p)).unwrap().ino();
    env.run(&["ingest", "rules/", src.to_str().unwrap()]).ok();
    let (g1_root, g1_b) = (ino(""), ino("b/deep"));
    for v in ["2\n", "3\n"] {
        env.write("src/a/x.md", v);
        env.run(&["ingest", "rules/", src.to_str().unwrap()]).ok();
    }
    // The two checkouts take turns: at g3 the live one is the directory that showed g1, updated
    // in place. Its untouched subtree is the same directory, not a rebuilt copy.
    assert_eq!(ino(""), g1_root);
    assert_eq!(ino("b/deep"), g1_b);
    assert_eq!(fs::read_to_string(env.store.join("latest/rules/a/x.md")).unwrap(), "3\n");
    let mode =
        |p: &str| fs::metadata(env.store.join("latest/rules").join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode("a"), mode("a/x.md")), (0o555, 0o444), "read-only checkout");
    env.run(&["verify"]).ok();
}

/// Files of a listing with their content hash, directories by name only (modes and inodes
/// differ between a source and its checkout).
fn shape(dir: &std::path::Path) -> Vec<(String, String)> {
    common::listing(dir)
        .into_iter()
        .map(|(p, what)| {
            (
                p,
                what.split_once(' ')
                    .map_or(String::new(), |(_, w)| w.split(" ino=").next().unwrap().to_string()),
            )
        })
        .collect()
}

#[test]
fn latest_follows_every_shape_of_change_and_objects_leave_no_temp_files() {
    let env = TestEnv::new();
    let src = env.project.join("src");
    let steps: [&dyn Fn(); 4] = [
        &|| {
            for i in 0..40 {
                env.write(&format!("src/d{}/e{}/f{i}.md", i % 3, i % 5), &format!("{i}\n"));
            }
            env.write("src/top.md", "top\n");
        },
        // New deep directories under existing read-only ones, a modified file, a removed subtree.
        &|| {
            env.write("src/d0/e0/new/deeper/g.md", "g\n");
            env.write("src/d1/e1/f1.md", "changed\n");
            fs::remove_dir_all(src.join("d2")).unwrap();
        },
        // A file becomes a directory and a directory becomes a file.
        &|| {
            fs::remove_file(src.join("top.md")).unwrap();
            env.write("src/top.md/inner.md", "inner\n");
            fs::remove_dir_all(src.join("d1/e1")).unwrap();
            env.write("src/d1/e1", "now a file\n");
        },
        // Back to the first shape's spare buffer, which holds step 2's tree.
        &|| {
            env.write("src/d0/e0/f0.md", "again\n");
        },
    ];
    for (i, step) in steps.iter().enumerate() {
        step();
        env.run(&["ingest", "rules/", src.to_str().unwrap()]).ok();
        let latest = env.store.join("latest/rules");
        assert_eq!(shape(&latest), shape(&src), "step {i}: latest/ shows the source");
        for (path, what) in common::listing(&latest) {
            let want = if what.contains(" dir ") { "555" } else { "444" };
            assert!(what.starts_with(want), "step {i}: {path} is {what}");
        }
        assert_eq!(fs::read_dir(env.store.join("tmp")).unwrap().count(), 0, "step {i}: tmp/ is empty");
        for sub in ["blobs", "trees"] {
            for p in common::walk(&env.store.join(sub)).into_iter().filter(|p| p.is_file()) {
                let name = p.file_name().unwrap().to_str().unwrap();
                let hex = name.strip_suffix(".json").unwrap_or(name);
                assert!(
                    hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                    "stray {}",
                    p.display()
                );
                assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o444);
            }
        }
    }
    env.run(&["verify"]).ok();
}

#[test]
fn global_flags_directory_and_default_store_location() {
    let env = TestEnv::new();
    env.write("sub/rules/a.md", "a\n");
    // -C runs as if started in DIR, so a relative SRC is found there.
    let xdg = env.root.join("xdg");
    let out = env.run_cmd(env.command().env_remove("MEMORIX_STORE").env("XDG_DATA_HOME", &xdg).args([
        "-C",
        "sub",
        "ingest",
        "rules/a.md",
        "rules/a.md",
    ]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(xdg.join("memorix/store/VERSION").is_file(), "the XDG default store was created");
    let other = env.root.join("other-store");
    env.run(&["--store", other.to_str().unwrap(), "ingest", "rules/b.md", "sub/rules/a.md"]).ok();
    assert!(other.join("refs/rules/latest").is_file());
    assert!(!env.store.exists(), "--store wins over MEMORIX_STORE");
    let bash = env.run(&["completions", "bash"]).ok().stdout;
    assert!(bash.contains("memorix") && bash.contains("ingest"));
}

#[test]
fn completions_load_in_bash_and_man_pages_render() {
    let env = TestEnv::new();
    let script = env.run(&["completions", "bash"]).ok().raw_stdout;
    let file = write_file(&env.root.join("memorix.bash"), &script);
    let check = std::process::Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(check.status.success(), "bash -n: {}", String::from_utf8_lossy(&check.stderr));
    let man = env.root.join("man");
    env.run(&["manpages", man.to_str().unwrap()]).ok();
    let page = fs::read_to_string(man.join("memorix-build.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH memorix-build 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(fs::read_to_string(man.join("memorix.1")).unwrap().contains("memorix"));
}

#[test]
fn the_first_ingest_leaves_the_spare_checkout_filled_after_it_answered() {
    let env = TestEnv::new();
    let src = fixed_tree(&env);
    // The command answers; a detached process holding the store lock fills the spare (the
    // test harness waits for the lock after each command).
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    let latest = common::listing(&env.store.join("latest/rules"));
    let files = |dir: &str| common::files_under(&env.store.join(dir));
    assert_eq!(files("spare/rules"), files("latest/rules"), "the spare holds the tip too: {latest:?}");
    assert!(!env.store.join("spare/filling").exists());
    let state: serde_json::Value =
        serde_json::from_slice(&fs::read(env.store.join("spare/rules.json")).unwrap()).unwrap();
    let trees: Vec<&serde_json::Value> = state["checkouts"].as_object().unwrap().values().collect();
    assert_eq!(trees.len(), 2);
    assert_eq!(trees[0], trees[1], "both checkouts hold the tip: {state}");

    // The next ingest applies only its change to the spare and swaps it in.
    env.write("fixed/python/style.md", "# Style\n\nUse ruff.\n");
    env.run(&["ingest", "rules/team/", src.to_str().unwrap()]).ok();
    let style = env.store.join("latest/rules/team/python/style.md");
    assert_eq!(fs::read_to_string(style).unwrap(), "# Style\n\nUse ruff.\n");
    env.run(&["verify"]).ok();
}

/// A big ingest packs its trees into one file: nothing else changes for a reader (`ls`, `show`
/// by an id prefix, `verify`), and a damaged pack is reported, naming the pack and the tree.
#[test]
fn packs_are_merged_by_gc_and_by_the_write_that_passes_the_limit() {
    let env = TestEnv::new();
    let packs = || fs::read_dir(env.store.join("packs")).unwrap().count();
    // Each ingest stores 70 new directories' trees: one pack each.
    let big = |n: usize| {
        for d in 0..70 {
            env.write(&format!("big{n}/d{d:02}/x.md"), &format!("# {n} {d}\n"));
        }
        env.run(&["ingest", &format!("docs/b{n}/"), env.project.join(format!("big{n}")).to_str().unwrap()])
            .ok();
    };
    big(0);
    big(1);
    assert_eq!(packs(), 2);
    let trees = env.run(&["--json", "verify"]).ok().json()["checked"]["trees"].clone();
    env.run(&["gc"]).ok();
    assert_eq!(packs(), 1, "gc leaves one pack");
    assert_eq!(env.run(&["--json", "verify"]).ok().json()["checked"]["trees"], trees);
    assert_eq!(env.run(&["cat", "docs/b0/d69/x.md@g1"]).ok().stdout, "# 0 69\n");

    // Writes add packs up to the limit; the one past it merges them all.
    for n in 2..=16 {
        big(n);
    }
    assert_eq!(packs(), 16);
    big(17);
    assert_eq!(packs(), 1, "the 17th pack merged them");
    env.run(&["verify"]).ok();
    assert_eq!(env.run(&["cat", "docs/b1/d00/x.md"]).ok().stdout, "# 1 0\n");
    assert_eq!(env.run(&["cat", "docs/b17/d42/x.md"]).ok().stdout, "# 17 42\n");
}

#[test]
fn trees_of_a_big_ingest_are_one_pack_that_verify_checks() {
    let env = TestEnv::new();
    for d in 0..70 {
        env.write(&format!("big/d{d:02}/x.md"), &format!("# {d}\n"));
    }
    env.run(&["ingest", "docs/big/", env.project.join("big").to_str().unwrap()]).ok();
    let packs: Vec<_> = fs::read_dir(env.store.join("packs")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(packs.len(), 1);
    let loose: Vec<String> = common::listing(&env.store.join("trees"))
        .into_iter()
        .filter(|(_, v)| !v.contains(" dir "))
        .map(|(k, _)| k)
        .collect();
    assert_eq!(loose, Vec::<String>::new(), "no loose tree files");
    let tree = env.run(&["--json", "ls", "docs/big/"]).ok().json()["entries"][69]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = env.run(&["show", &tree[..19]]).ok().stdout;
    assert!(shown.contains("x.md"), "{shown}");
    let verified = env.run(&["--json", "verify"]).ok().json();
    assert_eq!(verified["checked"]["trees"], 72);

    // One flipped byte inside the first packed object.
    let pack = &packs[0];
    make_writable(pack);
    let mut bytes = fs::read(pack).unwrap();
    bytes[20] ^= 0x01;
    fs::write(pack, &bytes).unwrap();
    let out = env.run(&["--json", "verify"]).expect(1).json();
    let problems = common::verify_list(&out, "problems");
    let name = pack.file_name().unwrap().to_str().unwrap();
    assert!(problems.contains(&format!("packs/{name}: content does not match its name")), "{problems:?}");
    assert!(problems.iter().any(|p| p.starts_with("tree sha256:")), "{problems:?}");
}

/// A destination takes no selector, so text after `@` that is none is part of the name: one
/// file named `logo@2x.md` is ingested, read back and removed by its place.
#[test]
fn a_file_place_with_an_at_sign_is_ingested_and_removed() {
    let env = TestEnv::new();
    let file = common::write_file(&env.root.join("logo.md"), b"retina\n");
    env.run(&["ingest", "docs/img/logo@2x.md", file.to_str().unwrap()]).ok();
    assert_eq!(env.run(&["cat", "docs/img/logo@2x.md@latest"]).ok().stdout, "retina\n");
    let err = env.run(&["ingest", "docs/img/a@g1", file.to_str().unwrap()]).expect(2).stderr;
    assert!(err.contains("a destination takes no `@selector`"), "{err}");
    env.run(&["rm", "docs/img/logo@2x.md"]).ok();
    // Its directory went with its only file.
    let err = env.run(&["ls", "docs/img/"]).expect(2).stderr;
    assert!(err.contains("docs/img"), "{err}");
}
