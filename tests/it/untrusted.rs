//! An untrusted clone cannot make memorix read or write outside the project, and no path a
//! user owns is replaced. Each test plants what a hostile repository (or a careless user)
//! could, runs memorix, and checks a sentinel directory outside the project: its tree (names,
//! modes, contents, inodes) must not change, and nothing of it may reach the Store or output.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{SECRET, Sentinel, TestEnv, listing, remove_tree};

/// A project with one rule and a mount of it, built once.
fn built(env: &TestEnv) {
    env.write("agent-rules/style.md", "# Style\n");
    env.write(
        "memorix.toml",
        "[sources]\n\"rules/p/\" = \"./agent-rules\"\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n",
    );
    env.run(&["build"]).ok();
}

fn mkfifo(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(path);
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

#[test]
fn a_memory_directory_naming_user_content_is_refused_before_anything_is_touched() {
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    built(&env);
    env.write("src/main.rs", "fn main() {}\n");
    let src = listing(&env.project.join("src"));
    env.write("memorix.toml", "[project]\nmemory = \"src\"\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n");
    for _ in 0..2 {
        let err = env.run(&["build"]).expect(2).stderr;
        assert!(err.contains("memorix::deliver::not_ours") && err.contains("src exists"), "{err}");
    }
    assert_eq!(listing(&env.project.join("src")), src, "the user's source tree is intact");

    for (memory, overlaps) in [
        (".git", "`.git`"),
        (".git/memory", "`.git`"),
        ("memorix.toml", "`memorix.toml`"),
        ("memorix.lock", "`memorix.lock`"),
        (".memorix", "`.memorix`"),
        ("agent-rules/memory", "the source folder \"./agent-rules\""),
    ] {
        env.write(
            "memorix.toml",
            &format!(
                "[project]\nmemory = \"{memory}\"\n\n[sources]\n\"rules/p/\" = \"./agent-rules\"\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n"
            ),
        );
        let err = env.run(&["build"]).expect(2).stderr;
        assert!(err.contains("memorix::manifest::bad_memory") && err.contains(overlaps), "{memory}: {err}");
    }
    assert!(env.project.join("memorix.lock").is_file());

    // What memorix made it replaces: an old delivery with no record (state deleted) is not
    // taken for ours, an empty directory is.
    env.write("memorix.toml", "[mounts.rules]\nselect = [\"rules/p/\"]\n");
    env.run(&["build"]).ok();
    fs::remove_dir_all(env.project.join(".memorix")).unwrap();
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("memorix::deliver::not_ours"), "{err}");
    remove_tree(&env.project.join(".memory"));
    fs::create_dir(env.project.join(".memory")).unwrap();
    env.run(&["build"]).ok();
    assert!(env.project.join(".memory/rules/style.md").is_file());
    guard.untouched(&env, "memory");
}

#[test]
fn state_paths_linked_out_of_the_project_are_refused() {
    for planted in
        [".memorix", ".memorix/tmp", ".memorix/lock", ".memorix/profile.toml", ".memorix/activation.json"]
    {
        let env = TestEnv::new();
        let guard = Sentinel::new(&env);
        built(&env);
        let path = env.project.join(planted);
        if path.is_dir() {
            fs::remove_dir_all(&path).unwrap();
        } else {
            let _ = fs::remove_file(&path);
        }
        // A directory link for directories, a dangling link (which would create the file) for files.
        let target = if planted.ends_with("tmp") || planted == ".memorix" {
            guard.dir.clone()
        } else {
            guard.dir.join("created-by-memorix")
        };
        symlink(&target, &path).unwrap();
        env.write("agent-rules/more.md", "# More\n");
        let err = env.run(&["build"]).expect(2).stderr;
        assert!(err.contains("memorix::confine::outside") && err.contains(planted), "{planted}: {err}");
        for cmd in [&["rollback"][..], &["update"], &["lock"]] {
            env.run(cmd).expect(2);
        }
        guard.untouched(&env, planted);
    }
}

#[test]
fn run_records_and_the_memory_parent_linked_out_are_refused() {
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    built(&env);
    symlink(guard.dir.join("secret.txt"), env.project.join(".memorix/runs.jsonl")).unwrap();
    let err = env.run(&["run", "--", "true"]).expect(2).stderr;
    assert!(err.contains("memorix::confine::outside") && err.contains("runs.jsonl"), "{err}");
    fs::remove_file(env.project.join(".memorix/runs.jsonl")).unwrap();

    // The memory directory's parent linked out: build, rollback and activate all refuse.
    env.write(
        "memorix.toml",
        "[project]\nmemory = \"agent/memory\"\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n",
    );
    env.run(&["build"]).ok();
    env.write("agent-rules/more.md", "# More\n");
    env.run(&["update"]).ok();
    remove_tree(&env.project.join("agent"));
    symlink(&guard.dir, env.project.join("agent")).unwrap();
    for cmd in [&["build"][..], &["rollback"], &["activate", "1"]] {
        let err = env.run(cmd).expect(2).stderr;
        assert!(err.contains("memorix::confine::outside"), "{cmd:?}: {err}");
    }
    guard.untouched(&env, "memory parent");
}

#[test]
fn init_never_writes_through_links_or_a_git_file() {
    for planted in [".ignore", "AGENTS.md", "CLAUDE.md", ".memorix/.gitignore"] {
        let env = TestEnv::new();
        let guard = Sentinel::new(&env);
        fs::create_dir_all(env.project.join(planted).parent().unwrap()).unwrap();
        symlink(guard.dir.join("secret.txt"), env.project.join(planted)).unwrap();
        let err = env.run(&["init", "--agents"]).expect(2).stderr;
        assert!(err.contains("memorix::confine::outside") && err.contains(planted), "{planted}: {err}");
        assert!(!env.project.join("memorix.toml").exists(), "{planted}: nothing written first");
        guard.untouched(&env, planted);
    }
    // A link that stays inside the project is followed, as before: CLAUDE.md -> AGENTS.md.
    let env = TestEnv::new();
    env.write("AGENTS.md", "# Agents\n");
    symlink("AGENTS.md", env.project.join("CLAUDE.md")).unwrap();
    env.run(&["init", "--agents"]).ok();
    env.run(&["build"]).ok();
    assert!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap().contains("memorix:begin"));

    // A `.git` file (worktree, submodule, or a planted one) is never followed: init writes
    // nothing under .git at all (the generated directories ignore themselves).
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    fs::write(env.project.join(".git"), format!("gitdir: {}\n", guard.dir.join("gitdir").display())).unwrap();
    env.run(&["init"]).ok();
    assert!(!guard.dir.join("gitdir").exists());
    guard.untouched(&env, ".git file");
}

#[test]
fn sources_and_pin_files_linked_out_are_never_read() {
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    built(&env);
    symlink(&guard.dir, env.project.join("r")).unwrap();
    env.write("memorix.toml", "[sources]\n\"rules/r/\" = \"./r\"\n\n[mounts.r]\nselect = [\"rules/r/\"]\n");
    let out = env.run(&["build"]).expect(2);
    assert!(out.stderr.contains("memorix::confine::outside") && out.stderr.contains("./r"), "{}", out.stderr);
    assert!(!out.stderr.contains(SECRET) && !out.stdout.contains(SECRET));

    symlink(guard.dir.join("secret.txt"), env.project.join("requirements.txt")).unwrap();
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"requirements.txt\"]\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n",
    );
    let out = env.run(&["build"]).expect(2);
    assert!(out.stderr.contains("memorix::confine::outside"), "{}", out.stderr);
    assert!(!out.stderr.contains(SECRET));
    guard.untouched(&env, "sources");
}

/// `-r`/`-c` includes of a requirements file stay in the project: an absolute path, `..` out
/// of it and a link leading out are refused, naming the line, and nothing of what they name
/// is read.
#[test]
fn requirements_includes_outside_the_project_are_refused_naming_the_line() {
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    built(&env);
    let secret = guard.dir.join("secret.txt");
    symlink(&secret, env.project.join("inc.txt")).unwrap();
    symlink(&guard.dir, env.project.join("linked")).unwrap();
    env.write("reqs/nested.txt", "-c ../../sentinel/secret.txt\n");
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"requirements.txt\"]\n\n[mounts.docs]\nselect = [\"docs/httpx/@pin\"]\n",
    );
    let cases = [
        (
            "-r ../sentinel/secret.txt".to_string(),
            "requirements.txt:2: included file ../sentinel/secret.txt climbs out of the project",
        ),
        (format!("-r {}", secret.display()), "is an absolute path"),
        ("-r /etc/passwd".to_string(), "included file /etc/passwd is an absolute path"),
        (
            "-r inc.txt".to_string(),
            "requirements.txt:2: included file inc.txt is, or passes through, a link leading out",
        ),
        (
            "--constraint linked/secret.txt".to_string(),
            "included file linked/secret.txt is, or passes through, a link",
        ),
        (
            "-r reqs/nested.txt".to_string(),
            "reqs/nested.txt:1: included file ../sentinel/secret.txt climbs out",
        ),
    ];
    for (line, why) in cases {
        env.write("requirements.txt", &format!("httpx==0.28.1\n{line}\n"));
        let out = env.run(&["build"]);
        common::no_panic(&out);
        assert_eq!(out.code, 2, "{line}: {}", out.stderr);
        assert!(
            out.stderr.contains("memorix::pins::include_outside") && out.stderr.contains(why),
            "{line}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains(SECRET) && !out.stdout.contains(SECRET), "{line}");
    }
    guard.untouched(&env, "requirements includes");
}

/// An `[artifacts]` hook of a cloned memorix.toml runs only after `memorix trust` on this
/// machine, and again only after trusting an edit of it; an output already in the Store
/// (keyed by derivation and command, made for another project) serves without a run.
#[test]
fn artifact_hooks_run_only_in_a_project_the_user_trusted() {
    let env = TestEnv::new();
    let guard = Sentinel::new(&env);
    let manifest = |marker: &str| {
        let hook = format!("touch {}/{marker}; echo hook output", env.root.display());
        format!(
            "[artifacts.digest]\ncommand = [\"sh\", \"-c\", \"{hook}\"]\n\n[sources]\n\"rules/p/\" = \"./agent-rules\"\n\n[mounts.rules]\nselect = [\"rules/p/\"]\n"
        )
    };
    env.write("agent-rules/style.md", "# Style\n");
    env.write("memorix.toml", &manifest("pwned-1"));
    let index = || fs::read_to_string(env.project.join(".memory/rules/INDEX.md")).unwrap();
    for _ in 0..2 {
        let run = env.run(&["build"]).ok();
        common::no_panic(&run);
        assert!(
            run.stderr.contains("memorix::trust::untrusted") && run.stderr.contains("`digest`"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("run `memorix trust`"), "{}", run.stderr);
        assert!(!env.root.join("pwned-1").exists(), "an untrusted hook ran");
        assert!(!index().contains("hook output"));
    }
    let out = env.run(&["trust"]).ok().stdout;
    assert!(
        out.contains("Trusted the [artifacts] hooks of [ROOT]/project")
            && out.contains("digest = [\"sh\", \"-c\""),
        "{out}"
    );
    let run = env.run(&["build"]).ok();
    assert!(!run.stderr.contains("untrusted"), "{}", run.stderr);
    assert!(env.root.join("pwned-1").exists() && index().contains("hook output"), "a trusted hook runs");

    // An edited hook is not the one trusted.
    env.write("memorix.toml", &manifest("pwned-2"));
    let run = env.run(&["build"]).ok();
    assert!(
        run.stderr.contains("memorix::trust::untrusted") && !env.root.join("pwned-2").exists(),
        "{}",
        run.stderr
    );

    // Another project with the first hook and content: its output is in the Store already.
    let other = env.root.join("other");
    common::write_file(&other.join("agent-rules/style.md"), b"# Style\n");
    common::write_file(&other.join("memorix.toml"), manifest("pwned-1").as_bytes());
    fs::remove_file(env.root.join("pwned-1")).unwrap();
    let run = env.run(&["-C", "../other", "build"]).ok();
    assert!(!run.stderr.contains("untrusted") && !env.root.join("pwned-1").exists(), "{}", run.stderr);
    assert!(fs::read_to_string(other.join(".memory/rules/INDEX.md")).unwrap().contains("hook output"));

    assert!(env.run(&["trust", "--revoke"]).ok().stdout.starts_with("Revoked the trust of [ROOT]/project"));
    assert!(env.run(&["trust", "--revoke"]).ok().stdout.contains("was not trusted"));
    guard.untouched(&env, "artifact hooks");
}

#[test]
fn special_files_in_state_paths_are_refused_without_blocking() {
    for planted in
        [".memory/INDEX.md", ".memorix/build-stamp", ".memorix/profile.toml", ".memorix/activation.json"]
    {
        let env = TestEnv::new();
        built(&env);
        let path = env.project.join(planted);
        if planted.starts_with(".memory") {
            fs::set_permissions(path.parent().unwrap(), std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        mkfifo(&path);
        let out = env.run_within(20, &["build"]);
        assert_eq!(out.code, 2, "{planted}: {}", out.stderr);
        assert!(out.stderr.contains("memorix::confine::special_file"), "{planted}: {}", out.stderr);
        assert_eq!(env.run_within(20, &["status"]).code, 2, "{planted}");
    }
}

#[test]
fn interrupted_work_is_cleaned_by_the_next_command() {
    let env = TestEnv::new();
    built(&env);
    // What a killed activation or rollback leaves: a staged tree and a half-written state file.
    for leftover in [".memorix/tmp/stage/a/b.md", ".memorix/tmp/parked/c.md"] {
        env.write(leftover, "partial\n");
    }
    env.write(".memorix/.profile.toml.99999999.0", "half");
    env.run(&["build"]).ok();
    assert!(!env.project.join(".memorix/tmp/stage").exists());
    assert!(!env.project.join(".memorix/tmp/parked").exists());
    assert!(!env.project.join(".memorix/.profile.toml.99999999.0").exists());

    // A checkout is placed whole: the remains of a killed one are replaced, nothing partial
    // stays at the destination.
    let env_id = env.run(&["--json", "profile"]).ok().json()["bindings"][0]["environment"]
        .as_str()
        .unwrap()
        .to_string();
    env.write("out/.partial-marker", "");
    fs::remove_dir_all(env.project.join("out")).unwrap();
    env.write(".out.memorix-checkout/stale.md", "stale\n");
    env.run(&["checkout", &env_id, "out"]).ok();
    assert!(env.project.join("out/rules/style.md").is_file());
    assert!(!env.project.join(".out.memorix-checkout").exists());
}

#[test]
fn a_store_directory_that_is_not_a_store_is_never_cleaned() {
    let env = TestEnv::new();
    let dir = env.root.join("not-a-store");
    common::write_file(&dir.join("tmp/thesis.tex"), b"years of work\n");
    let before = listing(&dir);
    env.write("a.md", "# A\n");
    for args in [&["ingest", "rules/a.md", "a.md"][..], &["gc"], &["verify"]] {
        let mut full = vec!["--store", dir.to_str().unwrap()];
        full.extend_from_slice(args);
        let err = env.run(&full).expect(2).stderr;
        assert!(err.contains("memorix::store::not_a_store"), "{args:?}: {err}");
    }
    assert_eq!(listing(&dir), before, "its tmp/ is someone's data");

    // An interrupted creation (the lock and empty layout directories) is completed.
    let half = env.root.join("half");
    fs::create_dir_all(half.join("blobs/00")).unwrap();
    fs::create_dir_all(half.join("tmp")).unwrap();
    fs::write(half.join("lock"), "").unwrap();
    env.run(&["--store", half.to_str().unwrap(), "ingest", "rules/a.md", "a.md"]).ok();
}

#[test]
fn oversized_project_files_are_refused_before_they_are_read() {
    let env = TestEnv::new();
    built(&env);
    // Sparse files: their size is what is checked, nothing of them is read.
    let lock = fs::OpenOptions::new().write(true).open(env.project.join("memorix.lock")).unwrap();
    lock.set_len(65 << 20).unwrap();
    let err = env.run_within(20, &["lock", "--check"]).stderr;
    assert!(err.contains("memorix::confine::too_large") && err.contains("memorix.lock is 65 MiB"), "{err}");
    let manifest = fs::OpenOptions::new().write(true).open(env.project.join("memorix.toml")).unwrap();
    manifest.set_len(65 << 20).unwrap();
    let out = env.run_within(20, &["build"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("memorix::confine::too_large") && out.stderr.contains("memorix.toml"),
        "{}",
        out.stderr
    );
}

/// A Cargo.lock of `n` registry packages, each depending on the next, under one workspace
/// member: the dependency chain a hostile repository commits to make a walk quadratic.
fn cargo_lock_chain(n: usize) -> String {
    let mut lock = String::from(
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"p0\"]\n",
    );
    for i in 0..n {
        let registry = "registry+https://github.com/rust-lang/crates.io-index";
        lock += &format!("\n[[package]]\nname = \"p{i}\"\nversion = \"1.0.{i}\"\nsource = \"{registry}\"\n");
        if i + 1 < n {
            lock += &format!("dependencies = [\n \"p{}\",\n]\n", i + 1);
        }
    }
    lock
}

fn pinned_mount(env: &TestEnv, pin_file: &str, library: &str) {
    let mount = format!("[mounts.docs]\nselect = [\"docs/{library}/@pin\"]\n");
    env.write("memorix.toml", &format!("[pins]\nfiles = [\"{pin_file}\"]\n\n{mount}"));
}

#[test]
fn a_long_cargo_lock_chain_reads_in_linear_time() {
    let env = TestEnv::new();
    let n = 99_999;
    env.write("Cargo.lock", &cargo_lock_chain(n));
    pinned_mount(&env, "Cargo.lock", "p99998");
    // After the member's 6 lines, package i takes 8 (blank, header, name, version, source and
    // a 3-line dependency list); its name is the third.
    let line = 6 + 8 * (n - 1) + 3;
    let out = env.run_within(120, &["pins"]).ok();
    assert_eq!(
        out.stdout,
        format!(
            "docs (docs/p99998/@pin)\n  p99998 1.0.99998 (cargo) at Cargo.lock:{line}\n  why: the only version pinned\n"
        )
    );
    pinned_mount(&env, "Cargo.lock", "p0");
    let out = env.run_within(120, &["--json", "pins"]).ok();
    assert_eq!(out.json()[0]["reason"], "only");
}

#[test]
fn a_pin_file_past_the_package_cap_is_refused() {
    let env = TestEnv::new();
    env.write("Cargo.lock", &cargo_lock_chain(200_000));
    pinned_mount(&env, "Cargo.lock", "p5");
    let out = env.run_within(120, &["pins"]).expect(2);
    assert!(out.stderr.contains("memorix::pins::too_many"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("Cargo.lock lists 200001 packages; memorix reads pin files of at most 100000 packages"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_100_mb_requirements_line_is_refused_by_size_before_it_is_read() {
    let env = TestEnv::new();
    let path = env.write("requirements.txt", "httpx==0.23.3 ");
    // Sparse: the rest of the line is zeros nobody writes or reads.
    fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(100_000_000).unwrap();
    pinned_mount(&env, "requirements.txt", "httpx");
    let out = env.run_within(20, &["build"]).expect(2);
    assert!(out.stderr.contains("memorix::pins::too_large"), "{}", out.stderr);
    assert!(
        out.stderr.contains("requirements.txt is 95 MiB; memorix reads pin files of at most 64 MiB"),
        "{}",
        out.stderr
    );
}

mod symlink_placements {
    use super::*;
    use proptest::prelude::*;

    /// Project paths a hostile repository could plant a link at.
    const PLACES: &[&str] = &[
        ".memorix",
        ".memorix/tmp",
        ".memorix/lock",
        ".memorix/profile.toml",
        ".memorix/activation.json",
        ".memorix/build-stamp",
        ".memorix/runs.jsonl",
        ".memory",
        ".memory/rules",
        "memorix.lock",
        ".ignore",
        "AGENTS.md",
        "CLAUDE.md",
        ".git",
        "agent-rules",
        "agent-rules/style.md",
    ];

    /// Where a planted link points: out of the project (a directory, a file, nothing) or in.
    const TARGETS: &[&str] =
        &["@out", "@out/secret.txt", "@out/new", "@out/sub", "agent-rules", "AGENTS.md", "nowhere"];

    const COMMANDS: &[&[&str]] = &[
        &["init", "--agents"],
        &["build"],
        &["lock"],
        &["rollback"],
        &["run", "--", "true"],
        &["gc"],
        &["update"],
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Whatever links a repository holds, no command writes outside the project: the
        /// sentinel's tree (names, modes, contents, inodes) is unchanged and nothing appears
        /// beside it.
        #[test]
        fn no_placement_of_symlinks_leads_to_a_write_outside(
            links in prop::collection::vec((0..PLACES.len(), 0..TARGETS.len()), 1..5),
            commands in prop::collection::vec(0..COMMANDS.len(), 1..5),
        ) {
            let env = TestEnv::new();
            let guard = Sentinel::new(&env);
            built(&env);
            let outside_before: Vec<_> = fs::read_dir(&env.root).unwrap().flatten().map(|e| e.file_name()).collect();
            for (place, target) in &links {
                let path = env.project.join(PLACES[*place]);
                // Planting below a link planted before would write through it (the test's own
                // doing, not memorix's): such a placement is skipped.
                let through_link = Path::new(PLACES[*place])
                    .ancestors()
                    .skip(1)
                    .any(|a| fs::symlink_metadata(env.project.join(a)).is_ok_and(|m| m.file_type().is_symlink()));
                if through_link {
                    continue;
                }
                if fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                    remove_tree(&path);
                } else {
                    let _ = fs::remove_file(&path);
                }
                fs::create_dir_all(path.parent().unwrap()).unwrap();
                let target = TARGETS[*target].replace("@out", guard.dir.to_str().unwrap());
                symlink(target, &path).unwrap();
            }
            for c in &commands {
                let out = env.run_within(20, COMMANDS[*c]);
                prop_assert!(out.code == 0 || out.code == 1 || out.code == 2, "{:?}: {}", COMMANDS[*c], out.stderr);
                prop_assert!(!out.stdout.contains(SECRET) && !out.stderr.contains(SECRET));
            }
            guard.untouched(&env, &format!("{links:?} {commands:?}"));
            let outside_after: Vec<_> = fs::read_dir(&env.root).unwrap().flatten().map(|e| e.file_name()).collect();
            prop_assert_eq!(outside_before, outside_after, "something was created beside the project");
        }
    }
}
