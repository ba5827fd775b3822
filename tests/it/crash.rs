//! Crash safety: every named crash point (the `fault-injection` feature) leaves the previous
//! generation, lock, profile and `.memory/` intact, and the next ordinary command recovers.

use crate::common;

use std::fs;

use common::TestEnv;

const V1: &str = "# A\n\nv1\n";
const V2: &str = "# A\n\nv2\n";

/// Two rules and a manifest mounting them, not built yet.
fn unbuilt() -> TestEnv {
    let env = TestEnv::new();
    env.write("r/a.md", V1);
    env.write("r/b.md", "# B\n");
    env.write(
        "memorix.toml",
        "[sources]\n\"rules/team/\" = \"./r\"\n\n[mounts.team]\nselect = [\"rules/team/\"]\n",
    );
    env
}

fn project() -> TestEnv {
    let env = unbuilt();
    env.run(&["build"]).ok();
    env
}

/// `.memory/` holds exactly the files of the environment its INDEX.md names.
fn memory_is_one_environment(env: &TestEnv) -> Result<(), String> {
    let memory = env.project.join(".memory");
    let index = fs::read_to_string(memory.join("INDEX.md")).map_err(|e| format!("INDEX.md: {e}"))?;
    let id = index
        .lines()
        .find_map(|l| l.strip_prefix("- environment: `"))
        .and_then(|l| l.strip_suffix('`'))
        .ok_or("no environment in INDEX.md")?;
    let replay = env.root.join(format!("replay-{}", &id[7..19]));
    let _ = fs::remove_dir_all(&replay);
    let out = env.run(&["checkout", id, replay.to_str().unwrap()]);
    if out.code != 0 {
        return Err(format!("checkout {id}: {}", out.stderr));
    }
    let files = |dir: &std::path::Path| {
        let mut l = common::listing(dir);
        l.retain(|k, v| !v.contains(" dir ") && k != "INDEX.md");
        l.into_iter().map(|(k, v)| (k, v.split(' ').nth(1).unwrap_or("").to_string())).collect::<Vec<_>>()
    };
    if files(&memory) != files(&replay) {
        return Err(format!("a mix: {:?} vs {:?}", files(&memory), files(&replay)));
    }
    Ok(())
}

/// `verify` right after the crash finds no damage (exit 0): what the crash left is garbage
/// (`memorix gc`) or a checkout one generation behind (the next writer refreshes it).
fn store_is_recoverable(env: &TestEnv) -> Result<(), String> {
    let out = env.run(&["--json", "verify"]);
    let report = out.json();
    let bad = common::verify_list(&report, "problems");
    if bad.is_empty() && out.code == 0 { Ok(()) } else { Err(format!("verify (exit {}): {bad:?}", out.code)) }
}

fn check(env: &TestEnv, args: &[&str], after: &str) -> Result<(), String> {
    let g1 = env.run(&["cat", "rules/team/a.md@g1"]);
    if g1.stdout != V1 {
        return Err(format!("generation 1 lost: {:?} {}", g1.stdout, g1.stderr));
    }
    memory_is_one_environment(env)?;
    store_is_recoverable(env)?;
    // The next ordinary command recovers.
    let again = env.run(args);
    if again.code != 0 {
        return Err(format!("`memorix {}` after the crash: {}", args.join(" "), again.stderr));
    }
    let build = env.run(&["build"]);
    if build.code != 0 {
        return Err(format!("build after the crash: {}", build.stderr));
    }
    for v in [&["verify"][..], &["verify", "--project"][..]] {
        let out = env.run(v);
        if out.code != 0 {
            return Err(format!("{v:?} after recovery: {}", out.stdout));
        }
    }
    if fs::read_to_string(env.project.join(".memory/team/a.md")).unwrap_or_default() != after {
        return Err("the recovered memory is not the expected content".into());
    }
    memory_is_one_environment(env)
}

#[test]
fn every_crash_point_leaves_a_recoverable_state() {
    let ingest = ["ingest", "rules/team/", "r"];
    let build = ["build"];
    let rollback = ["rollback", "--to", "1"];
    let mut cases: Vec<(&str, &[&str], &str)> = Vec::new();
    for p in memorix::fault::POINTS {
        match *p {
            // Reached only by a fetch: `a_crash_inside_a_fetch_leaves_no_partial_version`.
            "fetch.staged" | "fetch.recorded" => {}
            // Reached only by a write of many trees: `a_crash_while_packing_trees_loses_nothing`.
            "pack.staged" => {}
            // Reached only by an ingest of many new files and its detached fill:
            // `a_crash_while_packing_or_unpacking_blobs_loses_nothing`.
            "incoming.synced" | "incoming.unpacking" | "incoming.unpacked" => {}
            // Reached only by the detached fill after a first build: `a_crash_while_cloning_the_memory_loses_nothing`.
            "memory.cloned" | "memory.kept" => {}
            "lock.write" | "build.derivations" | "build.environment" | "build.synced" => {
                cases.push((p, &build, V2))
            }
            "activate.staged" | "activate.exchanged" | "activate.recorded" | "profile.saved" => {
                cases.push((p, &build, V2));
                cases.push((p, &rollback, V1));
            }
            _ => {
                cases.push((p, &ingest, V2));
                cases.push((p, &build, V2));
            }
        }
    }
    let (mut injected, mut recovered, mut lost) = (0, 0, Vec::new());
    for (point, args, after) in &cases {
        let env = project();
        if args[0] == "rollback" {
            env.write("r/a.md", V2);
            env.run(&["build"]).ok();
        }
        env.write("r/a.md", V2);
        let crashed = env.run_cmd(env.command().args(*args).env("MEMORIX_CRASH_AT", point));
        if crashed.code != -6 {
            lost.push(format!("{point} ({}): not reached (exit {})", args[0], crashed.code));
            continue;
        }
        injected += 1;
        // A rollback that crashed is retried; recovery then rebuilds the lock's environment.
        let after = if args[0] == "rollback" { V2 } else { after };
        match check(&env, args, after) {
            Ok(()) => recovered += 1,
            Err(e) => lost.push(format!("{point} ({}): {e}", args[0])),
        }
    }
    println!("crash points: {injected} injected, {recovered} recovered, {} lost", lost.len());
    assert!(lost.is_empty(), "{lost:#?}");
    assert_eq!(injected, cases.len());
}

/// The fill a first build leaves to a detached process, killed half way: the memory and the
/// next update are unharmed, and the half-made clone is never used.
#[test]
fn a_crash_while_cloning_the_memory_loses_nothing() {
    for (point, left) in [("memory.cloned", "tmp/stage"), ("memory.kept", "tmp/previous")] {
        let env = unbuilt();
        env.run_cmd(env.command().arg("build").env("MEMORIX_CRASH_AT", point)).ok();
        let state = env.project.join(".memorix");
        assert!(state.join(left).exists(), "{point}: the fill stopped there");
        assert!(!state.join("tmp/previous.json").exists(), "{point}");
        env.run(&["verify", "--project"]).ok();
        env.write("r/a.md", V2);
        env.run(&["ingest", "rules/team/", "r"]).ok();
        env.run(&["update"]).ok();
        env.run(&["verify", "--project"]).ok();
        assert_eq!(fs::read_to_string(env.project.join(".memory/team/a.md")).unwrap(), V2, "{point}");
        memory_is_one_environment(&env).unwrap();
        assert!(!state.join("tmp/stage").exists(), "{point}: the stage was cleared");
    }
}

/// A project pinning matchit 0.9.2 whose docs come from the local registry (the corpus's
/// real `.crate`), with the lockfile line written here.
fn fetching_project() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        "Cargo.lock",
        "version = 4\n\n[[package]]\nname = \"matchit\"\nversion = \"0.9.2\"\n\
         source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
         checksum = \"8863b587001c1b9a8a4e36008cebc6b3612cb1226fe2de94858e06092687b608\"\n",
    );
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"Cargo.lock\"]\n\n[mounts.\"libs/matchit\"]\nselect = [\"docs/matchit/@pin\"]\n",
    );
    env
}

/// Killed anywhere inside a fetch (before its record, between record and ingest, or inside
/// the ingest of the fetched docs), the Store holds no partial version: `verify` is clean, and
/// the next build fetches again and locks the docs with where they came from.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_crash_inside_a_fetch_leaves_no_partial_version() {
    let root = common::corpus("registry");
    let registry = common::registry::Registry::serve(&root);
    let points =
        ["fetch.staged", "fetch.recorded", "ingest.blobs", "ingest.trees", "publish.staged", "publish.ref"];
    let (mut injected, mut lost) = (0, Vec::new());
    for point in points {
        let env = fetching_project();
        let mut cmd = env.command();
        cmd.args(["build"]).env("MEMORIX_CRASH_AT", point).envs(registry.env());
        let crashed = env.run_cmd(&mut cmd);
        if crashed.code != -6 {
            lost.push(format!("{point}: not reached (exit {}): {}", crashed.code, crashed.stderr));
            continue;
        }
        injected += 1;
        if let Err(e) = store_is_recoverable(&env) {
            lost.push(format!("{point}: {e}"));
            continue;
        }
        let rebuilt = env.run_cmd(env.command().arg("build").envs(registry.env()));
        let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap_or_default();
        if rebuilt.code != 0 {
            lost.push(format!("{point}: build after the crash: {}", rebuilt.stderr));
        } else if !lock.contains("artifact = \"matchit-0.9.2.crate\"") {
            lost.push(format!("{point}: the lock does not say where the docs came from:\n{lock}"));
        } else if !env.project.join(".memory/libs/matchit/README.md").is_file() {
            lost.push(format!("{point}: no docs delivered"));
        }
    }
    println!("fetch crash points: {injected} injected, {} lost", lost.len());
    assert!(lost.is_empty(), "{lost:#?}");
}

/// Killed while the trees of a big ingest are being packed (the pack staged, or in place with
/// no generation naming it yet), the Store is clean for `verify`, `gc` collects the unnamed
/// pack, and the ingest run again lands whole in one pack.
#[test]
fn a_crash_while_packing_trees_loses_nothing() {
    for point in ["pack.staged", "ingest.trees"] {
        let env = project();
        for d in 0..80 {
            env.write(&format!("r/d{d:02}/n.md"), &format!("# {d}\n"));
        }
        let crashed =
            env.run_cmd(env.command().args(["ingest", "rules/team/", "r"]).env("MEMORIX_CRASH_AT", point));
        assert_eq!(crashed.code, -6, "{point} not reached: {}", crashed.stderr);
        store_is_recoverable(&env).unwrap_or_else(|e| panic!("{point}: {e}"));
        let packs = |env: &TestEnv| fs::read_dir(env.store.join("packs")).map(|d| d.count()).unwrap_or(0);
        assert_eq!(packs(&env), usize::from(point == "ingest.trees"), "{point}");
        // A pack no generation names is garbage.
        assert_eq!(env.run(&["gc"]).code, 0);
        assert_eq!(packs(&env), 0, "{point}: the unnamed pack is collected");
        let again = env.run(&["ingest", "rules/team/", "r"]);
        assert_eq!(again.code, 0, "{point}: {}", again.stderr);
        assert_eq!(env.run(&["cat", "rules/team/d79/n.md"]).stdout, "# 79\n");
        assert_eq!(env.run(&["gc"]).code, 0);
        assert_eq!(packs(&env), 1, "{point}: one pack after gc");
        let verify = env.run(&["--json", "verify"]).json();
        assert_eq!(verify["problems"], serde_json::json!([]), "{point}");
        assert_eq!(verify["checked"]["trees"], 2 + 82, "{point}: the packed trees are checked");
    }
}

/// A pack left by a crashed ingest whose trees a later ingest partly reuses: `gc` removes the
/// trees nothing reaches by writing the others into a new pack before the old one goes.
#[test]
fn gc_repacks_a_pack_that_is_partly_reachable() {
    let env = project();
    for d in 0..80 {
        env.write(&format!("r/d{d:02}/n.md"), &format!("# {d}\n"));
    }
    let crashed = env
        .run_cmd(env.command().args(["ingest", "rules/team/", "r"]).env("MEMORIX_CRASH_AT", "ingest.trees"));
    assert_eq!(crashed.code, -6);
    env.write("r/d79/n.md", "# 79, again\n");
    env.run(&["ingest", "rules/team/", "r"]).ok();
    let packs = |env: &TestEnv| -> Vec<String> {
        fs::read_dir(env.store.join("packs"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    };
    let before = packs(&env);
    let gc = env.run(&["--json", "gc"]).ok().json();
    let dead: Vec<&str> = gc["unreachable"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    let (packed, loose): (Vec<&str>, Vec<&str>) =
        dead.iter().partition(|p| p.starts_with(&format!("packs/{}: tree ", before[0])));
    assert_eq!(packed.len(), 3, "the old d79, team and root trees: {dead:?}");
    assert_eq!(loose.len(), 1, "the old d79 blob: {dead:?}");
    let after = packs(&env);
    assert_eq!(after.len(), 1);
    assert_ne!(after, before, "a new pack holds the kept trees");
    let verify = env.run(&["--json", "verify"]).json();
    assert_eq!(verify["problems"], serde_json::json!([]));
    assert_eq!(verify["checked"]["trees"], 2 + 3 + 79);
    assert_eq!(env.run(&["cat", "rules/team/d00/n.md"]).stdout, "# 0\n");
    assert_eq!(env.run(&["--json", "gc"]).ok().json()["unreachable"], serde_json::json!([]));
}

/// A project whose source has `n` new files (some sharing content), enough for an ingest to
/// pack their blobs into `incoming/`.
fn many_files(n: usize) -> TestEnv {
    let env = project();
    for i in 0..n {
        env.write(&format!("r/d{}/f{i:03}.md", i % 7), &format!("# {}\n", i % (n - 5)));
    }
    env
}

fn count_files(dir: &std::path::Path) -> usize {
    common::walk(dir).iter().filter(|p| p.is_file()).count()
}

/// Killed while an ingest packs its blobs (the packs fsynced, not yet in `incoming/`), or while
/// the detached fill unpacks them (before it writes any loose file, or once all are durable
/// and before the packs go): the Store is clean for `verify`, the ingested files read back
/// (from the packs or their own files), and the next command finishes the fill's work.
#[test]
fn a_crash_while_packing_or_unpacking_blobs_loses_nothing() {
    for point in ["incoming.synced", "incoming.unpacking", "incoming.unpacked"] {
        let env = many_files(100);
        let run =
            env.run_cmd(env.command().args(["ingest", "rules/team/", "r"]).env("MEMORIX_CRASH_AT", point));
        let in_ingest = point == "incoming.synced";
        assert_eq!(run.code, if in_ingest { -6 } else { 0 }, "{point}: {}", run.stderr);
        common::wait_for_store(&env.store);
        store_is_recoverable(&env).unwrap_or_else(|e| panic!("{point}: {e}"));
        let packs = count_files(&env.store.join("incoming"));
        assert_eq!(packs > 0, !in_ingest, "{point}: {packs} incoming packs");
        if !in_ingest {
            assert_eq!(env.run(&["cat", "rules/team/d3/f010.md"]).ok().stdout, "# 10\n", "{point}");
        }
        env.run(&["ingest", "rules/team/", "r"]).ok();
        assert_eq!(count_files(&env.store.join("incoming")), 0, "{point}: the next writer unpacked");
        assert_eq!(env.run(&["cat", "rules/team/d3/f010.md"]).ok().stdout, "# 10\n", "{point}");
        assert!(env.store.join("latest/rules/team/d3/f010.md").is_file(), "{point}: latest/ is whole");
        env.run(&["build"]).ok();
        env.run(&["verify"]).ok();
        env.run(&["verify", "--project"]).ok();
        assert_eq!(fs::read_to_string(env.project.join(".memory/team/d0/f000.md")).unwrap(), "# 0\n");
    }
}

/// An ingest of many new files writes their blobs into a few packs, not a file each, and
/// leaves `latest/` showing the previous tip until its detached fill (stopped here before it
/// unpacks anything) has run; meanwhile readers find the packed blobs and `verify` rehashes
/// them, finding a damaged one.
#[test]
fn an_ingest_packs_small_blobs_and_verify_rehashes_them() {
    let env = many_files(100);
    let loose_before = count_files(&env.store.join("blobs"));
    let mut run = env.command();
    env.run_cmd(run.args(["ingest", "rules/team/", "r"]).env("MEMORIX_CRASH_AT", "incoming.unpacking")).ok();
    common::wait_for_store(&env.store);
    // 95 distinct contents: no new loose file, one pack per hashing thread at most.
    assert_eq!(count_files(&env.store.join("blobs")), loose_before, "no loose file per blob");
    let packs: Vec<_> =
        common::walk(&env.store.join("incoming")).into_iter().filter(|p| p.is_file()).collect();
    assert!((1..=std::thread::available_parallelism().unwrap().get()).contains(&packs.len()), "{packs:?}");
    assert!(!env.store.join("latest/rules/team/d3").exists(), "latest/ still shows the previous tip");
    assert_eq!(env.run(&["cat", "rules/team/d3/f010.md"]).ok().stdout, "# 10\n");
    let report = env.run(&["--json", "verify"]).ok().json();
    assert_eq!(report["checked"]["blobs"], loose_before + 95, "{report}");
    // One packed blob damaged in place.
    let (pack, at) = packs
        .iter()
        .find_map(|p| {
            let bytes = fs::read(p).unwrap();
            bytes.windows(5).position(|w| w == b"# 42\n").map(|at| (p.clone(), at))
        })
        .expect("the blob is in a pack");
    let mut bytes = fs::read(&pack).unwrap();
    bytes[at + 2] = b'X';
    common::make_writable(&pack);
    fs::write(&pack, &bytes).unwrap();
    let report = env.run(&["--json", "verify"]).expect(1).json();
    let bad = common::verify_list(&report, "problems");
    let id = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"# 42\n"));
    assert!(
        bad.iter().any(|p| p.starts_with(&format!("blob sha256:{id}")) && p.contains("content hashes to")),
        "{bad:?}"
    );
}

/// Killed after its packs are durable in `incoming/` but before its ref moved, an ingest
/// leaves packed blobs nothing reaches: `gc --dry-run` (which takes no lock, so unpacks
/// nothing) lists them as gc then removes them, by their loose paths, and gc leaves neither
/// packs nor those blobs.
#[test]
fn gc_dry_run_lists_unreachable_blobs_still_in_incoming_packs() {
    let env = many_files(100);
    let loose_before = count_files(&env.store.join("blobs"));
    let mut run = env.command();
    let run = env.run_cmd(run.args(["ingest", "rules/team/", "r"]).env("MEMORIX_CRASH_AT", "publish.synced"));
    assert_eq!(run.code, -6, "{}", run.stderr);
    assert!(count_files(&env.store.join("incoming")) > 0, "the packs are in incoming/");
    let dry = env.run(&["--json", "gc", "--dry-run"]).ok().json();
    let listed = |out: &serde_json::Value| -> Vec<String> {
        let all = out["unreachable"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string());
        all.filter(|p| p.starts_with("blobs/")).collect()
    };
    let id = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"# 42\n"));
    assert_eq!(listed(&dry).len(), 95, "{dry}");
    assert!(listed(&dry).contains(&format!("blobs/{}/{id}", &id[..2])), "{dry}");
    assert!(count_files(&env.store.join("incoming")) > 0, "a dry run unpacks nothing");
    let gc = env.run(&["--json", "gc"]).ok().json();
    assert_eq!(listed(&gc), listed(&dry), "gc removes what its dry run listed");
    assert_eq!(gc["bytes"], dry["bytes"]);
    assert_eq!(count_files(&env.store.join("incoming")), 0);
    assert_eq!(count_files(&env.store.join("blobs")), loose_before);
    env.run(&["verify"]).ok();
}
