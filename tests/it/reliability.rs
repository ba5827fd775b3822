//! Real `kill -9` during long ingests, a full disk, and many writers with readers.
#![allow(clippy::print_stdout, clippy::print_stderr)] // skips and measured figures are reported

use crate::common;

use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::TestEnv;

fn fill(env: &TestEnv, round: usize, files: usize) {
    for i in 0..files {
        let body = format!("# File {i}\n\nround {round}\n{}\n", "lorem ipsum ".repeat(150));
        common::write_file(&env.root.join(format!("big/d{}/f{i}.md", i % 40)), body.as_bytes());
    }
}

/// What `verify` calls damage (garbage of the interrupted write is not).
fn damage(env: &TestEnv) -> Vec<String> {
    let report = env.run(&["--json", "verify"]).json();
    common::verify_list(&report, "problems")
}

#[test]
fn kill_9_at_random_moments_during_a_long_ingest_loses_nothing() {
    let env = TestEnv::new();
    fill(&env, 0, 2000);
    let big = env.root.join("big");
    env.run(&["ingest", "rules/big/", big.to_str().unwrap()]).ok();
    let first = env.run(&["cat", "rules/big/d3/f3.md@g1"]).ok().stdout;
    // How long an ingest that changes every file takes on this machine, so the kills land
    // inside one however fast or loaded the machine is.
    fill(&env, 1000, 2000);
    let started = std::time::Instant::now();
    env.run(&["ingest", "rules/big/", big.to_str().unwrap()]).ok();
    let mut span = started.elapsed().as_secs_f64();
    // A deterministic sequence of delays spread over an ingest's duration; when an ingest
    // finishes before its kill, later delays shrink.
    let mut seed: u64 = 0x9e3779b97f4a7c15;
    let (mut killed, mut recovered) = (0, 0);
    for round in 1..=20 {
        if killed == 6 {
            break;
        }
        fill(&env, round, 2000);
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let fraction = 0.05 + ((seed >> 33) % 1000) as f64 / 1000.0 * 0.85;
        let mut child = env
            .command()
            .args(["ingest", "rules/big/", big.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_secs_f64(span * fraction));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        } else {
            span *= 0.7;
        }
        child.wait().unwrap();
        assert_eq!(damage(&env), Vec::<String>::new(), "round {round}");
        assert_eq!(env.run(&["cat", "rules/big/d3/f3.md@g1"]).ok().stdout, first, "round {round}: g1 intact");
        env.run(&["ingest", "rules/big/", big.to_str().unwrap()]).ok();
        env.run(&["verify"]).ok();
        let now = env.run(&["cat", "rules/big/d3/f3.md"]).ok().stdout;
        assert!(now.contains(&format!("round {round}\n")), "round {round}");
        recovered += 1;
    }
    println!("kill -9: {killed} ingests killed mid-way in {recovered} rounds, {recovered} recovered, 0 lost");
    assert!(killed >= 5, "most rounds were killed mid-ingest ({killed} of {recovered})");
}

/// A small tmpfs the test mounts (root only); `None` with a notice where mounting is refused.
struct SmallFs(std::path::PathBuf);

impl SmallFs {
    fn mount(at: &std::path::Path, size: &str) -> Option<SmallFs> {
        fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            Some(SmallFs(at.to_path_buf()))
        } else {
            eprintln!("notice: skipping, cannot mount a tmpfs here (needs root)");
            None
        }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_and_loses_nothing() {
    let env = TestEnv::new();
    let Some(disk) = SmallFs::mount(&env.root.join("small"), "3m") else { return };
    let store = disk.0.join("store");
    let run = |args: &[&str]| env.run_cmd(env.command().arg("--store").arg(&store).args(args));
    env.write("r/a.md", "# A\n");
    let out = run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // 4 MiB of incompressible bytes into a 3 MiB file system.
    let mut x: u64 = 1;
    let noise: Vec<u8> = (0..4 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    common::write_file(&env.root.join("huge.bin"), &noise);
    let out = run(&["ingest", "docs/huge.bin", env.root.join("huge.bin").to_str().unwrap()]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("No space left on device") && out.stderr.contains("the disk is full"),
        "{}",
        out.stderr
    );
    assert_eq!(run(&["verify"]).code, 0);
    assert_eq!(run(&["cat", "rules/team/a.md"]).stdout, "# A\n");
    assert_eq!(run(&["ls", "docs/"]).code, 2, "no docs generation was recorded");
    // Space freed, the next ingest works (the stale temp file is cleared).
    let out = run(&["ingest", "rules/team/b.md", env.project.join("r/a.md").to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(run(&["verify"]).code, 0);
}

#[test]
fn a_build_that_fills_the_disk_leaves_no_partial_stage() {
    let env = TestEnv::new();
    let project = env.root.join("small");
    let Some(_disk) = SmallFs::mount(&project, "3m") else { return };
    let run = |args: &[&str]| env.run_cmd(env.command().current_dir(&project).args(args));
    common::write_file(&project.join("memorix.toml"), b"[mounts.docs]\nselect = [\"docs/\"]\n");
    let small = env.write("a.md", "# A\n");
    env.run(&["ingest", "docs/a.md", small.to_str().unwrap()]).ok();
    assert_eq!(run(&["build"]).code, 0);
    let before = common::listing(&project.join(".memory"));
    // 4 MiB into the store (on the big disk), then an update that must copy it. Binary, so
    // the search index (built before the copy) skips it: only the copy is under test.
    let big = env.write("big.bin", &"\0".repeat(4_200_000));
    env.run(&["ingest", "docs/big.bin", big.to_str().unwrap()]).ok();
    let out = run(&["update"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("No space left on device"), "{}", out.stderr);
    assert!(!project.join(".memorix/tmp/stage").exists(), "the partial stage was removed");
    assert_eq!(common::listing(&project.join(".memory")), before, "the memory is as it was");
}

#[test]
fn many_writers_builders_and_readers_at_once() {
    let env = TestEnv::new();
    env.write("seed/a.md", "# seed\n");
    env.run(&["ingest", "rules/seed/", env.project.join("seed").to_str().unwrap()]).ok();
    for p in 0..2 {
        common::write_file(
            &env.project.join(format!("p{p}/memorix.toml")),
            b"[mounts.all]\nselect = [\"rules/\"]\n",
        );
    }
    let mut children = Vec::new();
    for i in 0..8 {
        let f = env.write(&format!("w/{i}.md"), &format!("# writer {i}\n"));
        children.push(
            env.command()
                .args(["ingest", &format!("rules/w/{i}.md"), f.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
    }
    for p in 0..2 {
        for _ in 0..2 {
            children.push(
                env.command()
                    .args(["-C", &format!("p{p}"), "update"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
    }
    // Readers meanwhile: each must succeed.
    for _ in 0..20 {
        env.run(&["ls", "-r", "rules/"]).ok();
        env.run(&["cat", "rules/seed/a.md"]).ok();
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let log = env.run(&["--json", "log", "rules"]).ok().json();
    assert_eq!(log.as_array().unwrap().len(), 9, "every ingest is its own generation");
    env.run(&["verify"]).ok();
    for p in 0..2 {
        env.run(&["-C", &format!("p{p}"), "update"]).ok();
        env.run(&["-C", &format!("p{p}"), "verify", "--project"]).ok();
    }

    // Readers never wait for the writer lock: hold it and read.
    let lock = fs::OpenOptions::new().write(true).open(env.store.join("lock")).unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let reader = env.command().args(["ls", "-r", "rules/"]).stdout(Stdio::null()).spawn().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = reader;
        tx.send(reader.wait().unwrap().success()).unwrap();
    });
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(30)),
        Ok(true),
        "a reader finished while a writer held the lock"
    );
    drop(lock);
}

/// One writing command of the kill loop, and how long it takes here when left alone.
struct Killable {
    args: Vec<String>,
    span: f64,
}

/// A generation id a completed `ingest --json` reported.
fn reported_generation(stdout: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(stdout).ok()?;
    Some(v["generation"]["id"].as_str()?.to_string())
}

/// The local writers: every kill leaves a Store `verify` finds whole and a project the next
/// build brings back.
#[test]
fn kill_9_across_the_local_writing_commands_loses_nothing() {
    kill_loop(&["ingest", "build", "update", "rollback", "gc"], 50);
}

/// Pushes and pulls killed between the writers that give them work; with the test above, every
/// writing command is killed over a hundred times, in two tests the suite runs side by side.
#[test]
fn kill_9_across_pushes_and_pulls_loses_nothing() {
    kill_loop(&["push", "pull", "ingest", "build"], 50);
}

/// Runs the commands named in `which` (of the seven writing commands below), each killed with
/// `kill -9` at a random moment inside its run, until `goal` kills landed: `verify` right after
/// each, `verify --project` after the next build, and no generation an ingest reported lost.
fn kill_loop(which: &[&str], goal: usize) {
    let env = TestEnv::new();
    let remote = env.root.join("remote");
    let big = env.root.join("big");
    let r = env.project.join("r");
    fill(&env, 0, 60);
    for i in 0..40 {
        common::write_file(
            &r.join(format!("d{}/f{i}.md", i % 10)),
            format!("# F{i}\n\nround 0\n").as_bytes(),
        );
    }
    env.write(
        "memorix.toml",
        &format!(
            "[store]\nsubstituters = [\"file://{}\"]\n\n[sources]\n\"rules/proj/\" = \"./r\"\n\n[mounts.proj]\nselect = [\"rules/proj/\"]\n\n[mounts.big]\nselect = [\"rules/big/\"]\n",
            remote.display()
        ),
    );
    env.run(&["ingest", "rules/big/", big.to_str().unwrap()]).ok();
    env.run(&["build"]).ok();
    env.run(&["push", "--all"]).ok();
    let arg = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut commands: Vec<Killable> = [
        arg(&["--json", "ingest", "rules/big/", big.to_str().unwrap()]),
        arg(&["build"]),
        arg(&["update"]),
        arg(&["rollback"]),
        arg(&["gc"]),
        arg(&["push", "--all"]),
        arg(&["pull"]),
    ]
    .into_iter()
    .filter(|args| which.contains(&command_name(args)))
    .map(|args| Killable { args, span: 0.0 })
    .collect();
    // Each command's duration here, so the kills land inside runs however fast the machine is.
    for (round, c) in commands.iter_mut().enumerate() {
        fill(&env, 1000 + round, 10);
        let started = std::time::Instant::now();
        let _ = env.run(&c.args.iter().map(String::as_str).collect::<Vec<_>>());
        c.span = started.elapsed().as_secs_f64().max(0.02);
        env.run(&["build"]).ok();
    }
    let mut reported: Vec<String> = Vec::new();
    let mut seed: u64 = 0x2545f4914f6cdd1d;
    let (mut killed, mut rounds) = (std::collections::BTreeMap::<String, usize>::new(), 0);
    while killed.values().sum::<usize>() < goal && rounds < 4 * goal {
        rounds += 1;
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let count = commands.len();
        let c = &mut commands[(seed >> 33) as usize % count];
        let fraction = 0.05 + ((seed >> 13) % 1000) as f64 / 1000.0 * 0.9;
        // Work for the ingests and builds to do.
        fill(&env, rounds, 10);
        common::write_file(
            &r.join(format!("d{}/f{}.md", rounds % 10, rounds % 200)),
            format!("# F\n\nround {rounds}\n").as_bytes(),
        );
        let mut child =
            env.command().args(&c.args).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_secs_f64(c.span * fraction));
        let was_killed = child.try_wait().unwrap().is_none();
        if was_killed {
            child.kill().unwrap();
            *killed.entry(command_name(&c.args).to_string()).or_default() += 1;
        } else {
            c.span *= 0.8;
        }
        let out = child.wait_with_output().unwrap();
        if !was_killed && out.status.success() {
            reported.extend(reported_generation(&String::from_utf8_lossy(&out.stdout)));
        }
        let what = format!("round {rounds} ({})", c.args.join(" "));
        assert_eq!(damage(&env), Vec::<String>::new(), "{what}: verify right after");
        for id in &reported {
            assert!(
                env.store.join(format!("generations/rules/{}.json", &id[7..])).is_file(),
                "{what}: {id} lost"
            );
        }
        env.run(&["build"]).ok();
        // The generation this completed build's [sources] ingest left at the tip.
        reported.push(fs::read_to_string(env.store.join("refs/rules/latest")).unwrap().trim().to_string());
        let project = env.run(&["verify", "--project"]);
        assert_eq!(project.code, 0, "{what}: verify --project after the next build\n{}", project.stdout);
    }
    let total: usize = killed.values().sum();
    println!(
        "kill -9 loop: {total} commands killed mid-way in {rounds} rounds ({killed:?}); verify clean after each, \
         verify --project clean after the next build, {} reported generations all present",
        reported.len()
    );
    assert!(total >= goal, "only {total} kills landed in {rounds} rounds");
}

/// The subcommand of a command line: its first argument that is no flag.
fn command_name(args: &[String]) -> &str {
    args.iter().find(|a| !a.starts_with('-')).expect("a subcommand")
}

/// `MEMORIX_OFFLINE=` (set, but empty, as a shell leaves it) is unset, not a usage error; a
/// value that is no yes or no says which variable and what it takes.
#[test]
fn an_empty_memorix_offline_is_unset_and_a_bad_one_is_named() {
    let env = TestEnv::new();
    let guard = common::Sentinel::new(&env);
    env.ingest("rules/team/", &[("style.md", "# Style\n")]);
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    for value in ["", "0", "1", " true "] {
        let run = env.run_cmd(env.command().env("MEMORIX_OFFLINE", value).arg("build"));
        common::no_panic(&run);
        assert_eq!(run.code, 0, "MEMORIX_OFFLINE={value:?}: {}", run.stderr);
    }
    let run = env.run_cmd(env.command().env("MEMORIX_OFFLINE", "maybe").arg("build"));
    common::no_panic(&run);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("MEMORIX_OFFLINE") && run.stderr.contains("empty is unset"),
        "{}",
        run.stderr
    );
    guard.untouched(&env, "MEMORIX_OFFLINE");
}

/// Two projects built, ingested into and updated while `gc` runs, each command followed by a
/// `verify --project` that must pass: damage only, never a false alarm from an object or file
/// seen in passing. Returns how many rounds ran.
fn concurrency_loop(seconds: u64) -> usize {
    let env = TestEnv::new();
    let guard = common::Sentinel::new(&env);
    for p in 0..2 {
        env.write(&format!("p{p}/src/a.md"), &format!("# project {p}\n"));
        env.write(
            &format!("p{p}/memorix.toml"),
            &format!("[sources]\n\"rules/p{p}/\" = \"./src\"\n\n[mounts.own]\nselect = [\"rules/p{p}/\"]\n\n[mounts.all]\nselect = [\"rules/\"]\n"),
        );
        env.run(&["-C", &format!("p{p}"), "build"]).ok();
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    let rounds = std::sync::atomic::AtomicUsize::new(0);
    let false_alarms = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for p in 0..2 {
            let (env, rounds, false_alarms) = (&env, &rounds, &false_alarms);
            s.spawn(move || {
                let dir = format!("p{p}");
                let mut i = 0;
                while std::time::Instant::now() < deadline {
                    i += 1;
                    env.write(&format!("{dir}/src/f{}.md", i % 7), &format!("# round {i}\n"));
                    let file = env.write(&format!("in{p}/n{}.md", i % 5), &format!("# note {i}\n"));
                    let place = format!("rules/notes{p}/n{}.md", i % 5);
                    let commands: [Vec<&str>; 3] = [
                        vec!["-C", &dir, "build"],
                        vec!["ingest", &place, file.to_str().unwrap()],
                        vec!["-C", &dir, "update"],
                    ];
                    for args in &commands {
                        let run = env.run_cmd(env.command().args(args));
                        common::no_panic(&run);
                        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
                        let verified = env.run_cmd(env.command().args(["-C", &dir, "verify", "--project"]));
                        if verified.code != 0 {
                            false_alarms
                                .lock()
                                .unwrap()
                                .push(format!("after {args:?}: {}{}", verified.stdout, verified.stderr));
                        }
                    }
                    rounds.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
        }
        s.spawn(|| {
            while std::time::Instant::now() < deadline {
                let run = env.run_cmd(env.command().args(["gc"]));
                assert_eq!(run.code, 0, "gc: {}", run.stderr);
                let verified = env.run_cmd(env.command().args(["verify"]));
                if verified.code != 0 {
                    false_alarms
                        .lock()
                        .unwrap()
                        .push(format!("after gc: {}{}", verified.stdout, verified.stderr));
                }
            }
        });
    });
    let alarms = false_alarms.into_inner().unwrap();
    assert!(alarms.is_empty(), "{} false alarms, the first: {}", alarms.len(), alarms[0]);
    env.run(&["verify"]).ok();
    for p in 0..2 {
        env.run(&["-C", &format!("p{p}"), "verify", "--project"]).ok();
    }
    guard.untouched(&env, "concurrency loop");
    rounds.into_inner()
}

#[test]
fn verify_beside_concurrent_builds_ingests_updates_and_gc_reports_only_damage() {
    assert!(concurrency_loop(6) > 0);
}

/// The long run: `cargo test --test it -- --ignored reliability::verify_beside_concurrent_writers`.
#[test]
#[ignore = "runs for a minute (MEMORIX_CONCURRENCY_SECS, default 60)"]
fn verify_beside_concurrent_writers_for_a_minute() {
    let secs = std::env::var("MEMORIX_CONCURRENCY_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(60);
    let rounds = concurrency_loop(secs);
    println!("{rounds} rounds of build, ingest and update in two projects beside gc: 0 false alarms");
}
