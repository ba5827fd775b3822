//! Adversarial stores, locks and manifests: each is refused with a clear error, and nothing
//! outside the store or the project is created, changed or read (a sentinel directory beside
//! them is checked).

use crate::common;

use std::fs;
use std::path::Path;

use common::{TestEnv, listing};
use sha2::{Digest, Sha256};

fn sentinel(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.root.join("sentinel");
    common::write_file(&dir.join("secret.txt"), b"TOP SECRET sentinel content\n");
    dir
}

fn hex_of(bytes: &[u8], header: &str) -> String {
    let mut h = Sha256::new();
    h.update(header.as_bytes());
    h.update(bytes);
    hex::encode(h.finalize())
}

/// Writes a tree object with exactly `json` as its bytes (however hostile) and a generation of
/// `rules` on top of the tip whose root it is; moves the ref there.
fn plant_root(env: &TestEnv, json: &str) -> String {
    let tree = hex_of(json.as_bytes(), "memorix-tree-v1\n");
    let path = env.store.join("trees").join(&tree[..2]).join(format!("{tree}.json"));
    fs::write(&path, json).unwrap();
    let tip = fs::read_to_string(env.store.join("refs/rules/latest")).unwrap().trim().to_string();
    let hashed = format!(r#"{{"kind":"rules","parent":"{tip}","root":"sha256:{tree}","seq":2,"tags":[]}}"#);
    let generation = hex_of(hashed.as_bytes(), "memorix-generation-v1\n");
    let full = format!(
        r#"{{"kind":"rules","meta":{{"message":null,"time":"2026-01-01T00:00:00Z"}},"parent":"{tip}","root":"sha256:{tree}","seq":2,"tags":[]}}"#
    );
    fs::write(env.store.join("generations/rules").join(format!("{generation}.json")), full).unwrap();
    fs::write(env.store.join("refs/rules/latest"), format!("sha256:{generation}\n")).unwrap();
    tree
}

fn base(env: &TestEnv) {
    env.write("r/a.md", "# A\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("memorix.toml", "[mounts.all]\nselect = [\"rules/\"]\n");
}

#[test]
fn tree_objects_naming_escapes_are_refused() {
    let hostile = ["..", "/abs", "a/b", "a\u{0}b", ".", ""];
    for name in hostile {
        let env = TestEnv::new();
        let guard = sentinel(&env);
        let before = listing(&guard);
        base(&env);
        let blob = env.run(&["--json", "ls", "rules/team/a.md"]).ok().json()["entries"][0]["id"]
            .as_str()
            .unwrap()[7..]
            .to_string();
        let json = format!(r#"{{"entries":[[{},"blob","{blob}"]]}}"#, serde_json::to_string(name).unwrap());
        let tree = plant_root(&env, &json);
        let err = env.run(&["ls", "-r", "rules/"]).expect(2).stderr;
        assert!(
            err.contains(&format!("corrupt tree [ROOT]/store/trees/{}/{tree}.json", &tree[..2])),
            "{name:?}: {err}"
        );
        env.run(&["cat", "rules/x"]).expect(2);
        env.run(&["build"]).expect(2);
        let report = env.run(&["verify"]).expect(1).stdout;
        assert!(report.contains(&format!("tree sha256:{tree}: entry ")), "{name:?}: {report}");
        assert_eq!(listing(&guard), before, "{name:?}: the sentinel is untouched");
        assert!(!env.project.join(".memory").exists());
        assert!(!env.root.join("abs").exists() && !env.store.join("a").exists());
    }
}

#[test]
fn symlinks_planted_in_the_store_are_never_followed() {
    let env = TestEnv::new();
    let guard = sentinel(&env);
    let before = listing(&guard);
    base(&env);
    let blob =
        env.run(&["--json", "ls", "rules/team/a.md"]).ok().json()["entries"][0]["id"].as_str().unwrap()[7..]
            .to_string();
    let blob_path = env.store.join("blobs").join(&blob[..2]).join(&blob);
    fs::remove_file(&blob_path).unwrap();
    std::os::unix::fs::symlink(guard.join("secret.txt"), &blob_path).unwrap();
    let out = env.run(&["cat", "rules/team/a.md"]).expect(2);
    assert!(out.stderr.contains("is a symlink, not a stored object"), "{}", out.stderr);
    assert!(!out.stdout.contains("TOP SECRET"));
    // `show` of the blob goes through the same guarded reader (it once opened the path).
    for args in [&["show", &blob[..12]][..], &["--json", "show", &blob[..12]][..]] {
        let out = env.run(args).expect(2);
        assert!(out.stderr.contains("is a symlink, not a stored object"), "{}", out.stderr);
        assert!(!out.stdout.contains("TOP SECRET") && !out.stderr.contains("TOP SECRET"));
    }
    let out = env.run(&["build"]).expect(2);
    assert!(!out.stdout.contains("TOP SECRET") && !out.stderr.contains("TOP SECRET"));
    assert!(
        fs::read_dir(env.project.join(".memory")).is_err()
            || !common::walk(&env.project.join(".memory"))
                .iter()
                .any(|p| fs::read_to_string(p).unwrap_or_default().contains("TOP SECRET"))
    );
    let report = env.run(&["verify"]).expect(1).stdout;
    assert!(report.contains(&format!("blob sha256:{blob}: is not a regular file")), "{report}");
    assert_eq!(listing(&guard), before);

    // A latest/ entry replaced by a symlink is reported, never read through.
    let env = TestEnv::new();
    base(&env);
    let file = env.store.join("latest/rules/team/a.md");
    fs::set_permissions(file.parent().unwrap(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(guard.join("secret.txt"), &file).unwrap();
    let report = env.run(&["verify"]).expect(1).stdout;
    assert!(report.contains("latest/rules/team/a.md: is not a regular file"), "{report}");
    assert_eq!(listing(&guard), before);

    // Store files that are not objects (VERSION, refs) are not read through a symlink either:
    // their content would otherwise be quoted in the error.
    for file in ["VERSION", "refs/rules/latest"] {
        let env = TestEnv::new();
        base(&env);
        let path = env.store.join(file);
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(guard.join("secret.txt"), &path).unwrap();
        let out = env.run(&["log", "rules"]).expect(2);
        assert!(!out.stdout.contains("TOP SECRET") && !out.stderr.contains("TOP SECRET"), "{file}: {out:?}");
    }
    assert_eq!(listing(&guard), before);
}

#[test]
fn hostile_locks_and_manifests_are_refused() {
    let env = TestEnv::new();
    let guard = sentinel(&env);
    let before = listing(&guard);
    base(&env);
    env.run(&["build"]).ok();
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    fs::write(
        env.project.join("memorix.lock"),
        lock.replace("version = 1\n", "version = 1\nmemory = \"../../etc\"\n"),
    )
    .unwrap();
    // Not a valid lock is a lock that does not hold: --locked refuses, as for a stale one.
    let out = env.run(&["build", "--locked"]).expect(1).stdout;
    assert!(out.contains("memorix.lock is not a valid lock: unknown field `memory`"), "{out}");
    fs::write(env.project.join("memorix.lock"), &lock).unwrap();

    for (manifest, message) in [
        ("[mounts.\"../../sentinel\"]\nselect = [\"rules/\"]\n", "leaves the project"),
        ("[project]\nmemory = \"../sentinel\"\n\n[mounts.a]\nselect = [\"rules/\"]\n", "leaves the project"),
        (
            "[sources]\n\"rules/x/\" = \"../sentinel\"\n\n[mounts.a]\nselect = [\"rules/\"]\n",
            "leaves the project",
        ),
        ("[mounts.\"/etc\"]\nselect = [\"rules/\"]\n", "is absolute"),
    ] {
        env.write("memorix.toml", manifest);
        let err = env.run(&["build"]).expect(2).stderr;
        assert!(err.contains(message), "{manifest}: {err}");
    }
    // A memory directory whose parent is a symlink out of the project.
    std::os::unix::fs::symlink(&guard, env.project.join("agent")).unwrap();
    env.write("memorix.toml", "[project]\nmemory = \"agent/memory\"\n\n[mounts.a]\nselect = [\"rules/\"]\n");
    let err = env.run(&["build"]).expect(2).stderr;
    assert!(err.contains("leads outside the project"), "{err}");
    assert_eq!(listing(&guard), before, "nothing was written through the link");
    assert!(!Path::new(&guard.join("memory")).exists());
}

/// A tarball (`.crate`) whose one entry claims 600 MiB of zeros, in a registry of its own.
fn bomb_registry(env: &TestEnv) -> (common::registry::Registry, String) {
    let root = env.root.join("registry");
    let mut header = tar::Header::new_gnu();
    header.set_path("bomb-1.0.0/zeros.md").unwrap();
    header.set_size(600 << 20);
    header.set_mode(0o644);
    header.set_cksum();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, header.as_bytes()).unwrap();
    std::io::Write::write_all(&mut gz, &vec![0u8; 4 << 20]).unwrap();
    let crate_file = gz.finish().unwrap();
    let cksum = hex::encode(Sha256::digest(&crate_file));
    common::write_file(&root.join("crates/dl/bomb/bomb-1.0.0.crate"), &crate_file);
    let line = format!("{{\"name\":\"bomb\",\"vers\":\"1.0.0\",\"cksum\":\"{cksum}\"}}\n");
    common::write_file(&root.join("crates/index/bo/mb/bomb"), line.as_bytes());
    (common::registry::Registry::serve(&root), cksum)
}

/// Hostile input stays cheap: a decompression bomb stops at its header, lockfiles and
/// memorix.lock nested a million deep fail at once, and a syntax error on a very long line
/// quotes a few hundred bytes of it (each under the hang guard, none read outside).
#[test]
fn bombs_deep_nesting_and_long_lines_fail_fast_and_small() {
    let env = TestEnv::new();
    let guard = common::Sentinel::new(&env);
    let (registry, cksum) = bomb_registry(&env);
    let cargo_lock = format!(
        "version = 4\n\n[[package]]\nname = \"bomb\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{cksum}\"\n"
    );
    env.write("Cargo.lock", &cargo_lock);
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"Cargo.lock\"]\n\n[mounts.bomb]\nselect = [\"docs/bomb/@pin\"]\n",
    );
    let mut cmd = env.command();
    cmd.args(["build"]).envs(registry.env());
    let run = env.run_cmd(&mut cmd);
    common::no_panic(&run);
    assert!(run.code == 2 && run.stderr.contains("bomb-1.0.0.crate unpacks to more than"), "{}", run.stderr);

    let deep = 1_000_000;
    let nested = |open: &str, close: &str| format!("{}{}", open.repeat(deep), close.repeat(deep));
    let cases = [
        ("Cargo.lock", format!("version = 4\nx = {}\n", nested("[", "]")), "nests deeper than 64 levels"),
        ("Cargo.lock", format!("version = 4\n{}a = 1\n", "a.".repeat(deep)), "nests deeper than 64 levels"),
        ("uv.lock", format!("version = 1\nx = {}\n", nested("{a=", "}")), "nests deeper than 64 levels"),
        ("Pipfile.lock", format!("{{\"default\": {}}}\n", nested("[", "]")), "recursion limit"),
        (
            "package-lock.json",
            format!("{{\"lockfileVersion\": 3, \"packages\": {}}}\n", nested("[", "]")),
            "recursion limit",
        ),
        ("pnpm-lock.yaml", format!("lockfileVersion: '9.0'\nx: {}\n", nested("[", "]")), "recursion limit"),
        (
            "Cargo.lock",
            format!("version = 4\n[[package]]\nname = \"{}\n", "a".repeat(8 << 20)),
            "invalid Cargo.lock",
        ),
    ];
    for (file, text, why) in cases {
        env.write(file, &text);
        env.write(
            "memorix.toml",
            &format!("[pins]\nfiles = [\"{file}\"]\n\n[mounts.d]\nselect = [\"docs/httpx/@pin\"]\n"),
        );
        let run = env.run_within(30, &["build"]);
        common::no_panic(&run);
        assert!(
            run.code == 2 && run.stderr.contains("memorix::pins::syntax") && run.stderr.contains(why),
            "{file}: {}",
            &run.stderr[..run.stderr.len().min(2000)]
        );
        assert!(run.stderr.len() < 4096, "{file}: a {} byte report", run.stderr.len());
        fs::remove_file(env.project.join(file)).unwrap();
    }
    env.write("memorix.toml", &format!("[project]\nname = {}\n", nested("[", "]")));
    let run = env.run_within(30, &["build"]);
    common::no_panic(&run);
    assert!(
        run.stderr.contains("memorix::manifest::syntax") && run.stderr.len() < 4096,
        "{}",
        &run.stderr[..run.stderr.len().min(2000)]
    );
    env.write("memorix.toml", "[mounts.d]\nselect = [\"rules/x/\"]\n");
    env.write("memorix.lock", &format!("version = 1\nx = {}\n", nested("[", "]")));
    let run = env.run_within(30, &["lock", "--check"]);
    common::no_panic(&run);
    let why = "memorix.lock:2: memorix.lock is not a valid lock: nests deeper than 64 levels";
    assert!(run.code == 1 && run.stdout.contains(why), "{}", &run.stdout[..run.stdout.len().min(2000)]);
    guard.untouched(&env, "bounds");
}

/// A registry that answers as an attacker would, on 127.0.0.1: a crate's index file sent a
/// byte a second (`drip`), an endless index of `{}` lines without a length (`huge`), thousands
/// of versions but not the pinned one (`many`), a redirect to a `file://` URL (`redir`).
fn hostile_registry() -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut conn = conn;
                let mut line = String::new();
                let mut reader = BufReader::new(conn.try_clone().unwrap());
                reader.read_line(&mut line).unwrap();
                while reader.read_line(&mut String::new()).is_ok_and(|n| n > 2) {}
                let path = line.split(' ').nth(1).unwrap_or("/").to_string();
                let head = |extra: &str| format!("HTTP/1.1 200 OK\r\nConnection: close\r\n{extra}\r\n");
                let _ = match path.rsplit('/').next().unwrap() {
                    "config.json" => {
                        let body = format!("{{\"dl\": \"http://127.0.0.1:{port}/dl\"}}");
                        conn.write_all(format!("{}{body}", head(&format!("Content-Length: {}\r\n", body.len()))).as_bytes())
                    }
                    "drip" => conn.write_all(head("Content-Length: 1000\r\n").as_bytes()).and_then(|()| {
                        (0..100).try_for_each(|_| {
                            std::thread::sleep(std::time::Duration::from_secs(1));
                            conn.write_all(b" ")
                        })
                    }),
                    // 100 MiB of index lines, each 1 MiB: past the 64 MiB cap however it is cut.
                    "huge" => conn.write_all(head("").as_bytes()).and_then(|()| {
                        let line = [b"{\"x\":\"".as_slice(), &[b'a'; (1 << 20) - 9], b"\"}\n"].concat();
                        (0..100).try_for_each(|_| conn.write_all(&line))
                    }),
                    "many" => {
                        let body: String = (0..20_000).map(|i| format!("{{\"vers\":\"0.0.{i}\"}}\n")).collect();
                        conn.write_all(format!("{}{body}", head("")).as_bytes())
                    }
                    _ => conn.write_all(
                        b"HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    ),
                };
            });
        }
    });
    port
}

/// Every network read has a deadline for the whole answer, an index is streamed under a
/// size cap, messages quote a registry's answer only in part, and a redirect off http(s) is
/// said to be refused.
#[test]
fn a_hostile_registry_costs_neither_time_nor_memory_and_is_named() {
    let env = TestEnv::new();
    let guard = common::Sentinel::new(&env);
    let port = hostile_registry();
    let cases = [
        ("drip", "1", "no whole answer within 1 s (MEMORIX_FETCH_TIMEOUT)"),
        ("huge", "60", "the answer is larger than 67108864 bytes"),
        ("many", "60", "0.0.19999 (and 19980 earlier)"),
        ("redir", "60", "a redirect to file:///etc/passwd was refused"),
    ];
    for (name, timeout, why) in cases {
        let lock = format!(
            "version = 4\n\n[[package]]\nname = \"{name}\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"
        );
        env.write("Cargo.lock", &lock);
        env.write(
            "memorix.toml",
            &format!("[pins]\nfiles = [\"Cargo.lock\"]\n\n[mounts.d]\nselect = [\"docs/{name}/@pin\"]\n"),
        );
        let mut cmd = env.command();
        cmd.arg("build")
            .env("MEMORIX_FETCH_TIMEOUT", timeout)
            .env("MEMORIX_CRATES_INDEX", format!("http://127.0.0.1:{port}/index/"));
        let started = std::time::Instant::now();
        let run = env.run_cmd(&mut cmd);
        common::no_panic(&run);
        assert!(started.elapsed() < std::time::Duration::from_secs(90), "{name}: a hang guard, not a timing");
        assert!(
            run.code == 2 && run.stderr.contains(why),
            "{name}: {}",
            &run.stderr[..run.stderr.len().min(3000)]
        );
        assert!(run.stderr.len() < 4096, "{name}: a {} byte message", run.stderr.len());
    }
    guard.untouched(&env, "hostile registry");
}
