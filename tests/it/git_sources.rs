//! Git `[sources]` (book: design/fetching.md#git-sources) against local repositories made in the test: locked to a
//! commit, sticky, moved by `memorix update`, reproduced exactly by `build --locked`.

use crate::common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use common::{TestEnv, TwoMachines, copy_project_files, git};

/// A repository of team rules with one commit; its path.
fn team_repo(env: &TestEnv) -> PathBuf {
    let repo = env.root.join("agent-rules");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    common::write_file(&repo.join("python/style.md"), b"# Style\n\nv1\n");
    common::write_file(&repo.join("README.md"), b"# Team rules\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "v1"]);
    repo
}

fn commit(repo: &Path, text: &str) -> String {
    fs::write(repo.join("python/style.md"), text).unwrap();
    git(repo, &["commit", "-qam", "change"]);
    git(repo, &["rev-parse", "HEAD"])
}

fn manifest(repo: &Path, follows: &str) -> String {
    format!(
        "[sources]\n\"rules/team/\" = {{ git = \"file://{}\", {follows}, path = \"python\" }}\n\n[mounts.team]\nselect = [\"rules/team/\"]\n",
        repo.display()
    )
}

fn style(env: &TestEnv) -> String {
    fs::read_to_string(env.project.join(".memory/team/style.md")).unwrap()
}

fn locked_commit(env: &TestEnv) -> String {
    let lock: toml::Table =
        toml::from_str(&fs::read_to_string(env.project.join("memorix.lock")).unwrap()).unwrap();
    lock["sources"]["rules/team/"]["commit"].as_str().unwrap().to_string()
}

#[test]
fn a_branch_is_locked_to_its_commit_kept_until_update_moves_it() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    env.write("memorix.toml", &manifest(&repo, "branch = \"main\""));
    let out = env.run(&["build"]).ok().stdout;
    assert!(
        out.starts_with(&format!("Locked rules/team/ (file://[ROOT]/agent-rules) at {}\n", &first[..12])),
        "{out}"
    );
    assert_eq!(style(&env), "# Style\n\nv1\n");
    assert_eq!(locked_commit(&env), first);
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    assert!(lock.contains("follows = \"branch main\"\n") && lock.contains("path = \"python\"\n"), "{lock}");

    // The branch moves on: the lock is sticky, and nothing is stale.
    let second = commit(&repo, "# Style\n\nv2\n");
    env.run(&["build"]).ok();
    env.run(&["lock"]).ok();
    env.run(&["status", "--check"]).ok();
    env.run(&["lock", "--check"]).ok();
    assert_eq!((locked_commit(&env), style(&env)), (first.clone(), "# Style\n\nv1\n".to_string()));

    let out = env.run(&["update", "--source", "rules/team/"]).ok().stdout;
    assert!(
        out.starts_with(&format!(
            "Moved rules/team/ (file://[ROOT]/agent-rules): {} -> {}\n",
            &first[..12],
            &second[..12]
        )),
        "{out}"
    );
    assert_eq!((locked_commit(&env), style(&env)), (second.clone(), "# Style\n\nv2\n".to_string()));

    // Plain `memorix update` moves it too.
    let third = commit(&repo, "# Style\n\nv3\n");
    env.run(&["update"]).ok();
    assert_eq!((locked_commit(&env), style(&env)), (third, "# Style\n\nv3\n".to_string()));

    let err = env.run(&["update", "--source", "rules/other/"]).expect(2).stderr;
    assert!(
        err.contains("memorix.toml has no git source `rules/other/`") && err.contains("rules/team/"),
        "{err}"
    );
}

#[test]
fn build_locked_on_an_empty_store_takes_exactly_the_locked_commit() {
    let TwoMachines { a, b, .. } = TwoMachines::new();
    let repo = team_repo(&a);
    a.write("memorix.toml", &manifest(&repo, "branch = \"main\""));
    a.run(&["build"]).ok();
    commit(&repo, "# Style\n\nv2\n");
    // B: the same project files, its own Store and git cache (its own HOME).
    copy_project_files(&a, &b, &["memorix.toml", "memorix.lock"]);
    b.run(&["build", "--locked"]).ok();
    assert_eq!(style(&b), "# Style\n\nv1\n", "the locked commit, not the branch tip");
    let files = |env: &TestEnv| -> Vec<(PathBuf, Vec<u8>)> {
        let root = env.project.join(".memory");
        let mut out: Vec<_> = common::walk(&root)
            .into_iter()
            .filter(|p| p.is_file())
            .map(|p| (p.strip_prefix(&root).unwrap().to_path_buf(), fs::read(&p).unwrap()))
            .collect();
        out.sort();
        out
    };
    assert_eq!(files(&b), files(&a), "byte for byte");
    let again = b.run(&["build", "--locked", "--offline"]).ok().stdout;
    assert!(again.starts_with("Nothing to do"), "{again}");
}

#[test]
fn a_force_pushed_branch_that_lost_the_locked_commit_is_named() {
    let TwoMachines { a, b, .. } = TwoMachines::new();
    let repo = team_repo(&a);
    let kept = git(&repo, &["rev-parse", "HEAD"]);
    let lost = commit(&repo, "# Style\n\nv2\n");
    a.write("memorix.toml", &manifest(&repo, "branch = \"main\""));
    a.run(&["build"]).ok();
    assert_eq!(locked_commit(&a), lost);
    // History rewritten: the locked commit is gone from the repository.
    git(&repo, &["reset", "-q", "--hard", &kept]);
    git(&repo, &["reflog", "expire", "--expire=now", "--all"]);
    git(&repo, &["gc", "-q", "--prune=now"]);
    copy_project_files(&a, &b, &["memorix.toml", "memorix.lock"]);
    let err = b.run(&["build", "--locked"]).expect(2).stderr;
    assert!(err.contains("memorix::fetch::git_commit_gone"), "{err}");
    assert!(err.contains(&format!("commit {lost} is no longer in file://{}", repo.display())), "{err}");
    assert!(err.contains("`memorix update --source rules/team/`"), "{err}");
    assert!(!b.project.join(".memory").exists());
    // Moving it on is the way out.
    b.run(&["update", "--source", "rules/team/"]).ok();
    assert_eq!((locked_commit(&b), style(&b)), (kept, "# Style\n\nv1\n".to_string()));
}

#[test]
fn tags_and_revs_are_followed_and_a_bad_source_is_refused_with_its_line() {
    let env = TestEnv::new();
    let repo = team_repo(&env);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["tag", "-a", "v1", "-m", "v1"]);
    commit(&repo, "# Style\n\nv2\n");
    env.write("memorix.toml", &manifest(&repo, "tag = \"v1\""));
    env.run(&["build"]).ok();
    assert_eq!((locked_commit(&env), style(&env)), (first.clone(), "# Style\n\nv1\n".to_string()));
    env.write("memorix.toml", &manifest(&repo, &format!("rev = \"{first}\"")));
    // Another origin in memorix.toml is a lock that no longer holds.
    assert!(env.run(&["lock", "--check"]).expect(1).stdout.contains("memorix.toml follows rev"));
    env.run(&["build"]).ok();
    env.run(&["lock", "--check"]).ok();

    env.write("memorix.toml", &manifest(&repo, "rev = \"abc123\""));
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("memorix::manifest::bad_git_source"), "{err}");
    assert!(err.contains("memorix.toml:2: rev \"abc123\" is not a full commit id"), "{err}");
    env.write("memorix.toml", &manifest(&repo, "branch = \"nope\""));
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("file://[ROOT]/agent-rules has no branch nope"), "{err}");
}

/// Whether a command the hostile configuration names ran: it touches `pwned…` (git appends the
/// rest of the URL, or its own arguments, to the command).
fn pwned(env: &TestEnv) -> bool {
    fs::read_dir(&env.root).unwrap().any(|e| e.unwrap().file_name().to_string_lossy().starts_with("pwned"))
}

/// A cloned project cannot make memorix run a command through git: its `.git/config` (an
/// `ext::` URL rewrite with the transport allowed, `core.sshCommand`) never applies, nor a
/// `GIT_DIR` pointing at it, and a URL, branch or locked commit that git could read as an
/// option or a command transport is refused where it is written.
#[test]
fn a_cloned_projects_git_configuration_and_hostile_git_fields_run_nothing() {
    let env = TestEnv::new();
    let guard = common::Sentinel::new(&env);
    let marker = env.root.join("pwned");
    let repo = team_repo(&env);
    git(&env.project, &["init", "-q"]);
    let config = format!(
        "[protocol \"ext\"]\n\tallow = always\n[url \"ext::sh -c touch% {m}\"]\n\tinsteadOf = https://example.invalid/\n[core]\n\tsshCommand = touch {m}\n\tfsmonitor = touch {m}\n",
        m = marker.display()
    );
    fs::OpenOptions::new()
        .append(true)
        .open(env.project.join(".git/config"))
        .unwrap()
        .write_all(config.as_bytes())
        .unwrap();
    let source = |value: &str| {
        format!("[sources]\n\"rules/team/\" = {{ {value} }}\n\n[mounts.team]\nselect = [\"rules/team/\"]\n")
    };
    for url in ["https://example.invalid/rules", "ssh://127.0.0.1:9/rules"] {
        env.write("memorix.toml", &source(&format!("git = \"{url}\"")));
        let run = env.run_within(60, &["build"]);
        common::no_panic(&run);
        assert_eq!(run.code, 2, "{url}: {}", run.stderr);
        let hooked = env.run_cmd(env.command().env("GIT_DIR", env.project.join(".git")).arg("build"));
        common::no_panic(&hooked);
        assert!(!pwned(&env), "{url}: the project's git configuration ran a command");
    }
    let refused = [
        ("git = \"ext::sh -c touch% /tmp/x\"", "`ext::` or `fd::` transport"),
        ("git = \"--upload-pack=touch /tmp/x\"", "starts with `-`"),
        (
            "git = \"https://example.invalid/r\", branch = \"--output=/tmp/x\"",
            "branch \"--output=/tmp/x\" starts",
        ),
        ("git = \"https://example.invalid/r\", tag = \"-x\"", "tag \"-x\" starts"),
    ];
    for (value, why) in refused {
        env.write("memorix.toml", &source(value));
        let run = env.run(&["build"]);
        common::no_panic(&run);
        assert!(
            run.stderr.contains("memorix::manifest::bad_git_source") && run.stderr.contains(why),
            "{value}: {}",
            run.stderr
        );
    }

    // A locked commit is 40 hex digits: a branch name, or text that is not ASCII, is refused.
    env.write("memorix.toml", &manifest(&repo, "branch = \"main\""));
    env.run(&["build"]).ok();
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    let locked = locked_commit(&env);
    for commit in ["main", "--upload-pack=touch /tmp/x", &"é".repeat(20), &"ü".repeat(40)] {
        fs::write(env.project.join("memorix.lock"), lock.replace(&locked, commit)).unwrap();
        common::remove_tree(&env.store);
        for args in [&["build", "--locked"][..], &["build"], &["lock", "--check"]] {
            let run = env.run(args);
            common::no_panic(&run);
            assert!(
                run.stderr.contains("memorix::lock::bad_git_source"),
                "{commit} {args:?}: {}",
                run.stderr
            );
        }
    }
    assert!(!pwned(&env));
    guard.untouched(&env, "hostile git configuration");
}
