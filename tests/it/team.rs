//! Day two on a team: a teammate's clone builds from the substituter, `status`, `lock --check`
//! and `build --locked` give one verdict, and `status` reports what `.memory/` shows.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Run, TestEnv, TwoMachines, copy_project_files, git};

/// Every file under `dir` with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = common::walk(dir)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| (p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// Ingests small docs for httpx at each version, and one generation of team notes.
fn fill_store(env: &TestEnv) {
    for v in ["0.27.0", "0.28.1"] {
        let dir = env.root.join(format!("httpx-{v}"));
        common::write_file(&dir.join("clients.md"), format!("# Clients\n\nhttpx {v}.\n").as_bytes());
        common::write_file(&dir.join(".cursorrules"), format!("httpx {v} rules\n").as_bytes());
        env.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", v]).ok();
    }
    notes(env, "# Notes\n\nv1\n");
}

fn notes(env: &TestEnv, text: &str) {
    let dir = env.root.join("notes");
    common::write_file(&dir.join("notes.md"), text.as_bytes());
    env.run(&["ingest", "docs/notes/", dir.to_str().unwrap()]).ok();
}

const MANIFEST: &str = r#"[project]
name = "api"

[pins]
files = ["requirements.txt"]

[sources]
"rules/api/" = "./agent-rules"

[mounts.rules]
select = ["rules/api/"]

[mounts.httpx]
select = ["docs/httpx/@pin"]
match = "minor"

[mounts.notes]
select = ["docs/notes/"]
"#;

/// The project's own files (what the team commits) in `dir`, with `substituter` if any.
fn write_project(dir: &Path, substituter: Option<&str>) {
    let store = substituter.map(|s| format!("[store]\nsubstituters = [\"{s}\"]\n\n")).unwrap_or_default();
    common::write_file(&dir.join("memorix.toml"), format!("{store}{MANIFEST}").as_bytes());
    common::write_file(&dir.join("requirements.txt"), b"httpx==0.28.1\n");
    common::write_file(&dir.join("agent-rules/style.md"), b"# Style\n\nShort functions.\n");
    common::write_file(&dir.join("agent-rules/.cursorrules"), b"Use the team style.\n");
}

fn memorix_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Run {
    env.run_cmd(env.command().current_dir(dir).args(args))
}

/// Developer A builds in `repo/sub` and pushes; B clones with git and runs plain `build`.
fn team(sub: &str) {
    let TwoMachines { a, b, url, .. } = TwoMachines::new();
    let repo = a.project.join("repo");
    git(&a.project, &["init", "-q", "repo"]);
    let proj_a = repo.join(sub);
    fill_store(&a);
    write_project(&proj_a, Some(&url));
    memorix_in(&a, &proj_a, &["build"]).ok();
    memorix_in(&a, &proj_a, &["push", &url]).ok();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "memory"]);
    assert_eq!(git(&repo, &["status", "--porcelain", "--untracked-files=all"]), "");
    let committed = git(&repo, &["ls-files"]);
    assert!(!committed.contains(".memory") && !committed.contains(".memorix"), "{committed}");

    git(&b.project, &["clone", "-q", repo.to_str().unwrap(), "clone"]);
    let proj_b = b.project.join("clone").join(sub);
    // A fresh clone with an empty Store: status fetches what the lock names, and all is fresh.
    let status = memorix_in(&b, &proj_b, &["status", "--check"]).ok();
    assert!(!status.stdout.contains("stale") && !status.stdout.contains("error"), "{}", status.stdout);
    let built = memorix_in(&b, &proj_b, &["build"]).ok();
    assert!(!built.stdout.contains("Wrote memorix.lock"), "the lock holds: {}", built.stdout);
    assert_eq!(files(&proj_b.join(".memory")), files(&proj_a.join(".memory")));
    assert_eq!(git(&b.project.join("clone"), &["status", "--porcelain", "--untracked-files=all"]), "");
    memorix_in(&b, &proj_b, &["lock", "--check"]).ok();
    memorix_in(&b, &proj_b, &["verify", "--project"]).ok();
}

#[test]
fn a_teammates_clone_builds_the_same_memory_and_git_stays_clean() {
    team(".");
}

#[test]
fn a_teammates_clone_of_a_monorepo_subdirectory_project_builds_the_same_memory() {
    team("services/api");
}

#[test]
fn without_a_substituter_missing_objects_are_named_never_a_stale_lock() {
    let TwoMachines { a, b, .. } = TwoMachines::new();
    fill_store(&a);
    write_project(&a.project, None);
    a.run(&["build"]).ok();
    write_project(&b.project, None);
    copy_project_files(&a, &b, &["memorix.lock"]);
    for args in [&["build", "--locked"][..], &["lock", "--check"], &["status", "--check"], &["build"]] {
        let out = b.run(args).expect(2);
        assert!(out.stderr.contains("memorix::ops::objects_missing"), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("help: no substituter is configured"), "{args:?}: {}", out.stderr);
        assert!(!out.stdout.contains("stale") && !out.stderr.contains("is stale"), "{args:?}: {out:?}");
    }
    assert_eq!(
        fs::read(b.project.join("memorix.lock")).unwrap(),
        fs::read(a.project.join("memorix.lock")).unwrap()
    );
    assert!(!b.project.join(".memory").exists());
}

/// The exit codes of `status --check`, `lock --check` and `build --locked`, in that order.
fn verdicts(env: &TestEnv, dir: &Path) -> [i32; 3] {
    [&["status", "--check"][..], &["lock", "--check"], &["build", "--locked"]]
        .map(|args| memorix_in(env, dir, args).code)
}

fn edit(path: PathBuf, from: &str, to: &str) {
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{}: {from}", path.display());
    fs::write(&path, text.replace(from, to)).unwrap();
}

#[test]
fn status_lock_check_and_build_locked_agree_on_every_change() {
    let env = TestEnv::new();
    let cache = env.root.join("cache");
    let url = format!("file://{}", cache.display());
    fill_store(&env);
    write_project(&env.project, Some(&url));
    env.run(&["build"]).ok();
    env.run(&["push", &url]).ok();
    let p = |rel: &str| env.project.join(rel);
    let mut rows: Vec<(&str, [i32; 3])> = Vec::new();
    let mut row = |name, change: &dyn Fn(), undo: &dyn Fn()| {
        change();
        rows.push((name, verdicts(&env, &env.project)));
        undo();
        env.run(&["build"]).ok();
        assert_eq!(verdicts(&env, &env.project), [0, 0, 0], "after undoing {name}");
    };
    row("unchanged", &|| {}, &|| {});
    row("manifest edit", &|| edit(p("memorix.toml"), "\"rules/api/\"]", "\"rules/api/style.md\"]"), &|| {
        edit(p("memorix.toml"), "\"rules/api/style.md\"]", "\"rules/api/\"]")
    });
    row("pin patch bump within match", &|| edit(p("requirements.txt"), "0.28.1", "0.28.2"), &|| {
        edit(p("requirements.txt"), "0.28.2", "0.28.1")
    });
    row("pin moved to other docs", &|| edit(p("requirements.txt"), "0.28.1", "0.27.0"), &|| {
        edit(p("requirements.txt"), "0.27.0", "0.28.1")
    });
    row("source edited", &|| edit(p("agent-rules/style.md"), "Short", "Long"), &|| {
        edit(p("agent-rules/style.md"), "Long", "Short")
    });
    row("Store moved on", &|| notes(&env, "# Notes\n\nv2\n"), &|| {
        env.run(&["update"]).ok();
        env.run(&["push", &url]).ok();
    });

    // A clone whose Store lacks the lock's objects: the substituter has them, or nothing does.
    for (name, substituter) in
        [("objects missing, substituter", Some(url.as_str())), ("objects missing, none", None)]
    {
        let b = TestEnv::new();
        write_project(&b.project, substituter);
        copy_project_files(&env, &b, &["memorix.lock"]);
        rows.push((name, verdicts(&b, &b.project)));
    }
    let table: String =
        rows.iter().map(|(name, [s, l, b])| format!("{name:<30} {s:>13} {l:>12} {b:>14}\n")).collect();
    insta::assert_snapshot!(format!("{:<30} status --check lock --check build --locked\n{table}", "change"), @r"
    change                         status --check lock --check build --locked
    unchanged                                  0            0              0
    manifest edit                              1            1              1
    pin patch bump within match                1            1              1
    pin moved to other docs                    1            1              1
    source edited                              1            1              1
    Store moved on                             1            0              0
    objects missing, substituter               0            0              0
    objects missing, none                      2            2              2
    ");

    // Dependabot's commonest change, as each command words it.
    edit(p("requirements.txt"), "0.28.1", "0.28.2");
    let status = env.run(&["status"]).ok().stdout;
    assert!(
        status.contains("httpx: stale: requirements.txt now pins httpx 0.28.2 (memorix.lock has 0.28.1"),
        "{status}"
    );
    let check = env.run(&["lock", "--check"]).expect(1).stdout;
    assert!(check.contains("requirements.txt now pins httpx 0.28.2"), "{check}");
}

/// Runs memorix with stdout and stderr on one pipe that closes after the first line.
fn first_line_then_close(env: &TestEnv, args: &[&str]) -> (i32, String) {
    use std::io::BufRead;
    let (read, write) = std::io::pipe().unwrap();
    let mut child =
        env.command().args(args).stdout(write.try_clone().unwrap()).stderr(write).spawn().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(read).read_line(&mut line).unwrap();
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), line)
}

#[test]
fn one_conflicting_ingest_is_that_mounts_error_and_status_still_reports() {
    let env = TestEnv::new();
    env.ingest("rules/a/", &[("style.md", "a\n")]);
    env.ingest("rules/b/", &[("other.md", "b\n")]);
    env.write(
        "memorix.toml",
        "[mounts.keep]\nselect = [\"rules/a/\"]\n\n[mounts.style]\nselect = [\"rules/a/\", \"rules/b/\"]\n",
    );
    env.run(&["build"]).ok();
    // Someone ingests a second style.md into the shared Store.
    env.ingest("rules/b/", &[("style.md", "b\n")]);
    let out = env.run(&["status"]).ok().stdout;
    assert!(out.starts_with("keep: fresh\nstyle: error: two files claim `style/style.md`"), "{out}");
    env.run(&["status", "--check"]).ok();
    let json = env.run(&["--json", "status"]).ok().json();
    let states: Vec<(&str, &str)> = json["mounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["mount"].as_str().unwrap(), m["state"].as_str().unwrap()))
        .collect();
    assert_eq!(states, [("keep", "fresh"), ("style", "error")]);
    assert_eq!(env.run(&["update", "--dry-run"]).ok().stdout, out);
    // The failing update and the report both survive a reader that stops after one line.
    let (code, line) = first_line_then_close(&env, &["update"]);
    assert_eq!((code, line.as_str()), (2, "memorix::view::ambiguous\n"));
    assert_eq!(first_line_then_close(&env, &["status"]), (0, "keep: fresh\n".to_string()));
}

#[test]
fn status_reports_what_memory_shows_and_build_says_what_it_repaired() {
    let env = TestEnv::new();
    env.ingest("rules/a/", &[("style.md", "a\n")]);
    env.write("memorix.toml", "[mounts.a]\nselect = [\"rules/a/\"]\n");
    env.run(&["build"]).ok();
    env.ingest("rules/a/", &[("new.md", "new\n")]);
    env.run(&["update"]).ok();
    let status = || env.run(&["status"]).ok().stdout;
    assert_eq!(status(), "a: fresh\n");

    env.run(&["rollback"]).ok();
    insta::assert_snapshot!(status(), @r"
    a: fresh
    .memory/: environment 71b9e6298a72 (generation 1), needs `memorix build`:
        the profile was rolled back; the lock's environment is not active
    ");
    let built = env.run(&["build"]).ok().stdout;
    assert!(
        built.starts_with(
            "The profile was rolled back to generation 1; activating the lock's environment as generation 3\n"
        ),
        "{built}"
    );
    assert_eq!(status(), "a: fresh\n");

    let file = env.project.join(".memory/a/style.md");
    common::make_writable(&file);
    fs::write(&file, "my edit\n").unwrap();
    fs::remove_file(env.project.join(".memory/a/new.md")).unwrap();
    insta::assert_snapshot!(status(), @r"
    a: fresh
    .memory/: environment 94ec6abfb635 (generation 3), needs `memorix build`:
        edited: a/style.md
        missing: a/new.md
    ");
    env.run(&["verify", "--project"]).expect(1);
    let built = env.run(&["build"]).ok().stdout;
    assert!(
        built.starts_with(
            "Restored 1 file edited in .memory/: a/style.md\nRestored 1 file missing from .memory/\n"
        ),
        "{built}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "a\n");
    // An edit in place (after a chmod) changes no directory: a build with unchanged inputs
    // does not stat read-only files, but `status` sees it and the next build repairs it.
    common::make_writable(&file);
    fs::write(&file, "b\n").unwrap();
    assert!(env.run(&["build"]).ok().stdout.starts_with("Nothing to do"));
    assert!(status().ends_with("    edited: a/style.md\n"), "{}", status());
    let built = env.run(&["build"]).ok().stdout;
    assert!(built.starts_with("Restored 1 file edited in .memory/: a/style.md\n"), "{built}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "a\n");

    fs::remove_dir_all(env.project.join(".memory")).unwrap();
    // Its 2 files, the mount's index and the 3 generated files at the top.
    assert!(status().ends_with("    deleted: all 6 of its files are missing\n"), "{}", status());
    env.run(&["build"]).ok();
    assert_eq!(status(), "a: fresh\n");

    // Ctrl-C between writing the lock and activating it.
    env.write("memorix.toml", "[mounts.a]\nselect = [\"rules/a/style.md\"]\n");
    env.run(&["lock"]).ok();
    assert!(
        status().contains("memorix.lock changed since the last build; the lock's environment is not active")
    );
    env.run(&["build"]).ok();
    assert_eq!(status(), "a: fresh\n");
}

#[test]
fn purge_reaches_every_delivery_and_the_next_build_removes_it() {
    let env = TestEnv::new();
    env.ingest("rules/a/", &[("style.md", "a\n"), ("secret.md", "API_KEY=sk-live-42\n")]);
    env.write("memorix.toml", "[mounts.a]\nselect = [\"rules/a/\"]\n");
    env.run(&["build"]).ok();
    env.run(&["purge", "rules/a/secret.md", "--yes"]).ok();
    assert!(env.run(&["status"]).ok().stdout.ends_with("needs `memorix build`:\n    purged: a/secret.md\n"));
    let verify = env.run(&["verify", "--project"]).expect(1).stdout;
    assert!(verify.contains(".memory/a/secret.md: holds content purged from the Store"), "{verify}");
    let built = env.run(&["build"]).ok().stdout;
    assert!(
        built.contains("Left out 1 file whose content was purged from the Store: a/secret.md"),
        "{built}"
    );
    assert!(!env.project.join(".memory/a/secret.md").exists());
    assert!(
        common::walk(&env.project.join(".memory"))
            .iter()
            .all(|p| !p.is_file() || !fs::read_to_string(p).unwrap().contains("sk-live"))
    );
    env.run(&["verify", "--project"]).ok();
    assert_eq!(env.run(&["status"]).ok().stdout, "a: fresh\n");
}
