//! Profiles: bindings, rollback, activate, delivery modes, reuse of unchanged files.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;

use common::{TestEnv, listing};

fn project(env: &TestEnv, delivery: Option<&str>) {
    for i in 0..5 {
        env.write(&format!("team/f{i}.md"), &format!("# File {i}\n\nv1\n"));
    }
    env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    let delivery = delivery.map(|d| format!("[project]\ndelivery = \"{d}\"\n\n")).unwrap_or_default();
    env.write("memorix.toml", &format!("{delivery}[mounts.team]\nselect = [\"rules/team/\"]\n"));
}

#[test]
fn update_rollback_and_activate_move_memory_between_environments() {
    let env = TestEnv::new();
    project(&env, None);
    env.run(&["build"]).ok();
    let memory = env.project.join(".memory");
    let e1 = listing(&memory);

    // A new version of one rules file; the sticky lock keeps E1 until `memorix update`.
    env.write("team/f2.md", "# File 2\n\nv2\n");
    env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    assert!(env.run(&["build"]).ok().stdout.starts_with("Nothing to do"));
    let out = env.run(&["--json", "update"]).ok().json();
    assert_eq!(out["activated"]["generation"], 2);
    assert_eq!(out["activated"]["files"], 5);
    assert_eq!(out["activated"]["reused"], 4, "only the changed file is copied");
    assert_eq!(fs::read_to_string(memory.join("team/f2.md")).unwrap(), "# File 2\n\nv2\n");
    let e2 = listing(&memory);

    let rolled = env.run(&["rollback"]).ok().stdout;
    assert!(rolled.starts_with("Activated profile generation 1 (environment "), "{rolled}");
    let mut back = listing(&memory);
    let mut first = e1.clone();
    // INDEX.md names the generation; directory inodes are new: compare files by content.
    back.retain(|_, v| !v.contains("dir"));
    first.retain(|_, v| !v.contains("dir"));
    assert_eq!(back, first, "byte-identical to E1");
    let profile = env.run(&["profile"]).ok().stdout;
    assert!(profile.lines().nth(1).unwrap().starts_with("*   1  sha256:"), "{profile}");

    env.run(&["activate", "2"]).ok();
    let mut again = listing(&memory);
    let mut second = e2.clone();
    again.retain(|_, v| !v.contains("dir"));
    second.retain(|_, v| !v.contains("dir"));
    assert_eq!(again, second);
    // By environment id: an existing binding becomes current again.
    let p: serde_json::Value = env.run(&["--json", "profile"]).ok().json();
    let e1_id = p["bindings"][0]["environment"].as_str().unwrap().to_string();
    env.run(&["activate", &e1_id[..20]]).ok();
    assert_eq!(env.run(&["--json", "profile"]).ok().json()["current"], 1);
}

#[test]
fn bad_profile_moves_exit_2_and_leave_memory_untouched() {
    let env = TestEnv::new();
    project(&env, None);
    env.run(&["build"]).ok();
    let memory = env.project.join(".memory");
    let before = listing(&memory);
    let err = env.run(&["rollback"]).expect(2).stderr;
    assert!(err.contains("profile generation 1 is the first; there is nothing to roll back to"), "{err}");
    let err = env.run(&["activate", "sha256:0123456789abcdef"]).expect(2).stderr;
    assert!(err.contains("no environment in the store has an id starting with 0123456789abcdef"), "{err}");
    let err = env.run(&["rollback", "--to", "7"]).expect(2).stderr;
    assert!(err.contains("the profile has no generation 7"), "{err}");
    fs::write(env.project.join(".memorix/profile.toml"), "current = \"x\"\n").unwrap();
    let err = env.run(&["rollback"]).expect(2).stderr;
    assert!(err.contains("corrupt profile"), "{err}");
    assert_eq!(listing(&memory), before);
}

#[test]
fn delivery_modes_copy_hardlink_and_symlink() {
    for (mode, check) in
        [("copy", "copy"), ("hardlink", "same inode as the blob"), ("symlink", "symlink into the store")]
    {
        let env = TestEnv::new();
        project(&env, Some(mode));
        env.run(&["build"]).ok();
        let file = env.project.join(".memory/team/f0.md");
        let id = env.run(&["--json", "ls", "rules/team/f0.md"]).ok().json()["entries"][0]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let hex = id.strip_prefix("sha256:").unwrap();
        let blob = env.store.join("blobs").join(&hex[..2]).join(hex);
        let meta = fs::symlink_metadata(&file).unwrap();
        match mode {
            "copy" => assert!(meta.is_file() && meta.ino() != fs::metadata(&blob).unwrap().ino(), "{check}"),
            "hardlink" => assert_eq!(meta.ino(), fs::metadata(&blob).unwrap().ino(), "{check}"),
            _ => assert_eq!(fs::read_link(&file).unwrap(), blob, "{check}"),
        }
        assert_eq!(fs::read_to_string(&file).unwrap(), "# File 0\n\nv1\n");
        assert_eq!(fs::metadata(&file).unwrap().mode() & 0o777, 0o444, "{mode}: read-only");
    }
}

#[test]
fn tampering_with_memory_is_detected_and_repaired() {
    for mode in ["auto", "copy", "hardlink", "symlink"] {
        let env = TestEnv::new();
        project(&env, Some(mode));
        env.run(&["build"]).ok();
        env.run(&["verify", "--project"]).ok();
        let file = env.project.join(".memory/team/f1.md");
        let dir = file.parent().unwrap().to_path_buf();
        fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        match mode {
            // An in-place edit through the hardlink reaches the blob: the store check names it.
            "hardlink" => {
                fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
                fs::write(&file, "tampered\n").unwrap();
                let report = env.run(&["verify"]).expect(1).stdout;
                assert!(report.contains(": content hashes to sha256:"), "{mode}: {report}");
                continue;
            }
            "symlink" => {
                fs::remove_file(&file).unwrap();
                std::os::unix::fs::symlink("/etc/hostname", &file).unwrap();
            }
            _ => {
                fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
                fs::write(&file, "tampered\n").unwrap();
            }
        }
        // A build with unchanged inputs stats the delivered directories, not the read-only
        // files: an edit in place, which changes no directory, is seen by `status`, which
        // makes the next build look and repair it.
        if mode == "copy" {
            let built = env.run(&["build"]).ok().stdout;
            assert!(built.starts_with("Nothing to do"), "{built}");
            let status = env.run(&["status"]).ok().stdout;
            assert!(status.contains("    edited: team/f1.md\n"), "{status}");
            let built = env.run(&["build"]).ok().stdout;
            assert!(built.starts_with("Restored 1 file edited in .memory/: team/f1.md\n"), "{built}");
            env.run(&["verify", "--project"]).ok();
            fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
            fs::write(&file, "tampered\n").unwrap();
        }
        fs::remove_file(dir.join("f2.md")).unwrap();
        let report = env.run(&["--json", "verify", "--project"]).expect(1).json();
        let objects: Vec<&str> =
            report["problems"].as_array().unwrap().iter().map(|p| p["object"].as_str().unwrap()).collect();
        assert_eq!(objects, [".memory/team/f1.md", ".memory/team/f2.md"], "{mode}");
        env.run(&["verify"]).ok(); // the store itself is unharmed
        let out = env.run(&["build"]).ok().stdout;
        assert!(out.contains("Activated .memory/"), "{mode}: a build repairs, it is not a no-op: {out}");
        env.run(&["verify", "--project"]).ok();
        assert_eq!(fs::read_to_string(&file).unwrap(), "# File 1\n\nv1\n");
    }
}

#[test]
fn an_update_brings_the_kept_previous_tree_up_to_date_and_swaps_it_in() {
    let env = TestEnv::new();
    project(&env, None);
    env.run(&["build"]).ok();
    let memory = env.project.join(".memory");
    let kept = env.project.join(".memorix/tmp/previous");
    let ino = |p: &std::path::Path| fs::metadata(p).unwrap().ino();
    let first_root = ino(&memory);
    let ingest = |file: &str, text: &str| {
        env.write(file, text);
        env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    };

    // Once the first build has answered, a detached process keeps a hardlink clone of the
    // memory: the first update brings it up to date and swaps it in, like any later one.
    let clone_root = ino(&kept);
    assert_ne!(clone_root, first_root);
    assert_eq!(ino(&kept.join("team/f2.md")), ino(&memory.join("team/f2.md")));
    assert_eq!(common::files_under(&kept), common::files_under(&memory));
    ingest("team/f1.md", "# File 1\n\nv2\n");
    let out = env.run(&["--json", "update"]).ok().json();
    assert_eq!(out["activated"]["reused"], 4, "only f1 changed: {out}");
    assert_eq!(ino(&memory), clone_root, "the clone became the memory");
    assert_eq!(ino(&kept), first_root);
    assert_eq!(fs::read_to_string(memory.join("team/f1.md")).unwrap(), "# File 1\n\nv2\n");
    // The next one takes the kept tree, changes only what differs, and swaps it in.
    ingest("team/f1.md", "# File 1\n\nv3\n");
    env.run(&["update"]).ok();
    assert_eq!(ino(&memory), first_root, "the kept tree became the memory again");
    assert_eq!(fs::read_to_string(memory.join("team/f1.md")).unwrap(), "# File 1\n\nv3\n");
    env.run(&["verify", "--project"]).ok();

    // A file of the kept tree changed in place behind memorix's back is shared with the memory
    // directory: like a no-op build, an update stats directories, not read-only files, so
    // `status` is what sees it, and then the update places it again, never reusing it.
    let stale = kept.join("team/f3.md");
    fs::set_permissions(&stale, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    fs::write(&stale, "tampered\n").unwrap();
    let status = env.run(&["status"]).ok().stdout;
    assert!(status.ends_with("    edited: team/f3.md\n"), "{status}");
    ingest("team/f2.md", "# File 2\n\nv2\n");
    let out = env.run(&["--json", "update"]).ok().json();
    assert_eq!(out["activated"]["reused"], 3, "f2 changed and f3 was edited: {out}");
    assert_eq!(out["activated"]["repaired"]["drift"]["edited"], serde_json::json!(["team/f3.md"]));
    assert_eq!(fs::read_to_string(memory.join("team/f3.md")).unwrap(), "# File 3\n\nv1\n");
    env.run(&["verify", "--project"]).ok();

    // A file added to the kept tree makes it unusable: the next tree is staged afresh.
    fs::write(kept.join("team/extra.md"), "foreign\n").unwrap();
    ingest("team/f4.md", "# File 4\n\nv2\n");
    env.run(&["update"]).ok();
    assert!(!memory.join("team/extra.md").exists());
    assert_eq!(
        common::files_under(&memory.join("team")),
        ["INDEX.md", "f0.md", "f1.md", "f2.md", "f3.md", "f4.md"]
    );
    env.run(&["verify", "--project"]).ok();
}

#[test]
fn the_kept_tree_is_filled_only_from_an_intact_memory_and_under_the_handed_lock() {
    let env = TestEnv::new();
    project(&env, None);
    env.run(&["build"]).ok();
    let state = env.project.join(".memorix");
    let (kept, memory) = (state.join("tmp/previous"), env.project.join(".memory"));
    let forget = || {
        common::remove_tree(&kept);
        fs::remove_file(state.join("tmp/previous.json")).unwrap();
    };
    // The detached fill, run as a first build runs it: the held project lock as its input.
    let fill = || {
        let lock = fs::OpenOptions::new().write(true).open(state.join("lock")).unwrap();
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
        env.run_cmd(env.command().arg("__fill-memory").stdin(lock))
    };
    forget();
    fill().ok();
    assert_eq!(common::files_under(&kept), common::files_under(&memory));

    // Any other input than the held lock is refused, and nothing is made.
    forget();
    let err = env.run_cmd(env.command().arg("__fill-memory").stdin(std::process::Stdio::null()));
    assert_ne!(err.code, 0);
    assert!(!kept.exists());

    // A memory directory changed since it was placed is not cloned.
    let file = memory.join("team/f1.md");
    fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    fs::write(&file, "edited\n").unwrap();
    fill().ok();
    assert!(!kept.exists() && !state.join("tmp/previous.json").exists());
    // Once found, the next build repairs the memory (staging its tree afresh).
    env.run(&["verify", "--project"]).expect(1);
    env.run(&["build"]).ok();
    env.run(&["verify", "--project"]).ok();
}

/// Each directory and file of `.memory/` as the activation record holds it must be what a
/// fresh stat finds: (mtime ns, inode) of directories, (size, mtime ns, inode) of files.
fn assert_record_is_true(env: &TestEnv) {
    let memory = env.project.join(".memory");
    let record: serde_json::Value =
        serde_json::from_slice(&fs::read(env.project.join(".memorix/activation.json")).unwrap()).unwrap();
    let mtime = |m: &fs::Metadata| m.mtime() * 1_000_000_000 + m.mtime_nsec();
    let dirs = record["dirs"].as_object().unwrap();
    for (d, held) in dirs {
        let m = fs::metadata(memory.join(d)).unwrap();
        assert_eq!(held, &serde_json::json!([mtime(&m), m.ino()]), "directory {d:?}");
    }
    let mut on_disk: Vec<String> = common::walk(&memory)
        .into_iter()
        .filter(|p| p.is_dir())
        .map(|p| p.strip_prefix(&memory).unwrap().display().to_string())
        .collect();
    on_disk.push(String::new());
    on_disk.sort();
    assert_eq!(dirs.keys().cloned().collect::<Vec<_>>(), on_disk, "every directory is recorded");
    // Each file is recorded `[blob, size, mtime ns, inode(, written)]`.
    let files = record["files"].as_object().unwrap();
    for (f, placed) in files {
        let m = fs::symlink_metadata(memory.join(f)).unwrap();
        let seen = serde_json::json!([m.size(), mtime(&m), m.ino()]);
        assert_eq!(serde_json::json!([placed[1], placed[2], placed[3]]), seen, "file {f:?}");
    }
    let mut on_disk: Vec<String> = common::walk(&memory)
        .into_iter()
        .filter(|p| !p.is_dir())
        .map(|p| p.strip_prefix(&memory).unwrap().display().to_string())
        .collect();
    on_disk.sort();
    assert_eq!(files.keys().cloned().collect::<Vec<_>>(), on_disk, "every file is recorded");
}

/// A project mounting `team/` with `files` (each holding its name), built, its kept tree
/// filled; returns what ingests `team/` again.
fn built_with_kept_tree<'e>(env: &'e TestEnv, files: &[&str]) -> impl Fn() + 'e {
    for f in files {
        env.write(&format!("team/{f}"), &format!("{f} v1\n"));
    }
    let ingest = move || {
        env.run(&["ingest", "rules/team/", env.project.join("team").to_str().unwrap()]).ok();
    };
    ingest();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();
    common::wait_for_project(&env.project);
    ingest
}

#[test]
fn an_update_records_each_directory_it_took_over_or_changed_as_it_is() {
    let env = TestEnv::new();
    let ingest = built_with_kept_tree(&env, &["a/x.md", "a/b/y.md", "c/z.md", "d/e/w.md", "top.md"]);
    assert_record_is_true(&env);
    let memory = env.project.join(".memory");
    let kept = env.project.join(".memorix/tmp/previous");
    let ino = |p: &std::path::Path| fs::metadata(p).unwrap().ino();

    // One file deep in `a/`: `c/` and `d/e/` are the kept tree's, untouched.
    env.write("team/a/b/y.md", "a/b/y.md v2\n");
    ingest();
    let clone = ino(&kept);
    let out = env.run(&["--json", "update"]).ok().json();
    assert_eq!(ino(&memory), clone, "the kept tree was brought up to date: {out}");
    assert_record_is_true(&env);

    // A file removed (its directories go with it) and one added in new directories.
    fs::remove_file(env.project.join("team/d/e/w.md")).unwrap();
    env.write("team/f/g/new.md", "new\n");
    ingest();
    let clone = ino(&kept);
    env.run(&["update"]).ok();
    assert_eq!(ino(&memory), clone);
    assert!(!memory.join("team/d").exists());
    assert_eq!(fs::read_to_string(memory.join("team/f/g/new.md")).unwrap(), "new\n");
    assert_record_is_true(&env);

    // A file removed from a directory that keeps another: the directory stays, its stat moved.
    fs::remove_file(env.project.join("team/a/x.md")).unwrap();
    ingest();
    env.run(&["update"]).ok();
    assert!(!memory.join("team/a/x.md").exists());
    assert!(memory.join("team/a/b/y.md").exists());
    assert_record_is_true(&env);
    assert!(env.run(&["build"]).ok().stdout.starts_with("Nothing to do"));
    env.run(&["verify", "--project"]).ok();
}

#[test]
fn a_file_slipped_into_the_kept_tree_where_an_update_changes_nothing_is_found_by_the_next_build() {
    let env = TestEnv::new();
    let ingest = built_with_kept_tree(&env, &["a/x.md", "b/y.md"]);
    let memory = env.project.join(".memory");
    let kept = env.project.join(".memorix/tmp/previous");
    let ino = |p: &std::path::Path| fs::metadata(p).unwrap().ino();

    // Before Linux 6.13's fine-grained timestamps a directory's mtime moved with the clock
    // tick: a file added in the tick that made the directory left it as recorded, so the
    // tampering waits a tick out.
    let next_tick = || std::thread::sleep(std::time::Duration::from_millis(25));

    // An update checks the kept tree only where it changes it (`a/`): a file slipped into `b/`
    // comes along into the memory directory, whose changed `b/` the next build sees.
    next_tick();
    fs::write(kept.join("team/b/slipped.md"), "foreign\n").unwrap();
    env.write("team/a/x.md", "a/x.md v2\n");
    ingest();
    let clone = ino(&kept);
    env.run(&["update"]).ok();
    assert_eq!(ino(&memory), clone, "the kept tree was adopted");
    assert!(memory.join("team/b/slipped.md").exists(), "and the slipped file came along");
    assert_eq!(fs::read_to_string(memory.join("team/a/x.md")).unwrap(), "a/x.md v2\n");
    let status = env.run(&["status"]).ok().stdout;
    assert!(status.contains("    not delivered: team/b/slipped.md\n"), "{status}");
    let out = env.run(&["--json", "build"]).ok().json();
    assert_eq!(
        out["activated"]["repaired"]["drift"]["foreign"],
        serde_json::json!(["team/b/slipped.md"]),
        "{out}"
    );
    assert!(!memory.join("team/b/slipped.md").exists());
    assert_record_is_true(&env);
    env.run(&["verify", "--project"]).ok();

    // Slipped into a directory the update changes, it makes the kept tree unusable: the next
    // tree is staged afresh, without it.
    common::wait_for_project(&env.project);
    next_tick();
    fs::write(kept.join("team/a/slipped.md"), "foreign\n").unwrap();
    env.write("team/a/x.md", "a/x.md v3\n");
    ingest();
    env.run(&["update"]).ok();
    // Staged afresh (the new tree's root may reuse the removed one's inode number).
    assert_eq!(common::files_under(&memory.join("team/a")), ["x.md"]);
    assert_record_is_true(&env);
    env.run(&["verify", "--project"]).ok();
}
