//! Remote stores: machine A builds and pushes, machine B (an empty store, the same project
//! files) builds `--locked` from the substituters. Against a real S3-compatible server (moto's,
//! started on a free loopback port) and against a `file://` remote.
#![allow(clippy::print_stdout, clippy::print_stderr)] // skips and measured figures are reported

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{Run, TestEnv, TwoMachines, build_push_and_share_lock, walk};
use sha2::{Digest, Sha256};

const BUCKET: &str = "memorix-test";

/// A moto S3 server on 127.0.0.1, stopped when dropped.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    /// Starts moto's server, or `None` with a notice when it cannot be started (a failure
    /// instead under `MEMORIX_REQUIRE_TOOLS=1`, as in CI).
    fn start() -> Option<Moto> {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let launchers: [&[&str]; 2] = [&["moto_server"], &["python3", "-m", "moto.server"]];
        let mut why = String::new();
        for launcher in launchers {
            let spawned = Command::new(launcher[0])
                .args(&launcher[1..])
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let mut child = match spawned {
                Ok(c) => c,
                Err(e) => {
                    why = format!("{}: {e}", launcher.join(" "));
                    continue;
                }
            };
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    let moto = Moto { child, port };
                    let status = moto.http("PUT", &format!("/{BUCKET}"), b"");
                    assert_eq!(status, 200, "creating the bucket");
                    return Some(moto);
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            why = format!("{} did not start listening on port {port}", launcher.join(" "));
        }
        if std::env::var_os("MEMORIX_REQUIRE_TOOLS").is_some_and(|v| v == "1") {
            panic!(
                "cannot start moto's S3 server ({why}) and MEMORIX_REQUIRE_TOOLS=1; pip install 'moto[server]'"
            );
        }
        eprintln!("notice: skipping, moto's S3 server cannot be started ({why}); pip install 'moto[server]'");
        None
    }

    /// One plain HTTP request; moto wants an Authorization header but does not check the
    /// signature. Returns the status code.
    fn http(&self, method: &str, path: &str, body: &[u8]) -> u16 {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        let auth = "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0";
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {auth}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.port,
            body.len()
        );
        s.write_all(head.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        response.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    /// A memorix command on `env` with S3 credentials and this server as the endpoint.
    fn run(&self, env: &TestEnv, args: &[&str]) -> Run {
        env.run_cmd(self.command(env).args(args))
    }

    fn command(&self, env: &TestEnv) -> Command {
        let mut cmd = env.command();
        cmd.env("AWS_ACCESS_KEY_ID", "testing")
            .env("AWS_SECRET_ACCESS_KEY", "testing")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port));
        cmd
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Machine A's store: library docs ingested there (not in the project), two generations of
/// `docs/notes/` so a `@g2` locator names an older generation.
fn fill_store_a(a: &TestEnv, docs: usize) {
    let dir = a.root.join("httpx-docs");
    for i in 0..docs {
        common::write_file(&dir.join(format!("page{i:05}.md")), format!("# Page {i}\n\nhttpx.\n").as_bytes());
    }
    a.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", "0.28.1"]).ok();
    let notes = a.root.join("notes.md");
    fs::write(&notes, "# Notes v1\n").unwrap();
    a.run(&["ingest", "docs/notes/notes.md", notes.to_str().unwrap()]).ok();
    fs::write(&notes, "# Notes v2\n").unwrap();
    a.run(&["ingest", "docs/notes/notes.md", notes.to_str().unwrap()]).ok();
}

/// The project files, the same on both machines.
fn write_project(env: &TestEnv, substituter: &str) {
    env.write(
        "memorix.toml",
        &format!(
            r#"[project]
name = "webapp"
intent = "A web service"

[store]
substituters = ["{substituter}"]

[sources]
"rules/webapp/" = "./agent-rules"

[mounts.project]
select = ["rules/webapp/"]

[mounts.httpx]
select = ["docs/httpx/@v0.28.1"]

[mounts.notes]
select = ["docs/notes/@g2"]
"#
        ),
    );
    env.write("agent-rules/style.md", "# Style\n\nShort functions.\n");
    env.write("agent-rules/web/errors.md", "# Errors\n\nProblem details.\n");
}

/// Every file under `dir` with its content.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    walk(dir)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| (p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap()))
        .collect()
}

fn copy_lock(a: &TestEnv, b: &TestEnv) {
    common::copy_project_files(a, b, &["memorix.lock"]);
}

/// Machine A's store filled with `docs` pages, the project on both machines naming A's
/// `file://` remote, A built and pushed there, and B's project holding A's lock.
fn pushed(docs: usize) -> TwoMachines {
    let machines = TwoMachines::new();
    let (a, b, url) = (&machines.a, &machines.b, &machines.url);
    fill_store_a(a, docs);
    write_project(a, url);
    write_project(b, url);
    build_push_and_share_lock(a, b);
    machines
}

fn count(run: &Run, field: &str) -> u64 {
    run.json()[field].as_u64().unwrap_or_else(|| panic!("no {field} in {}", run.stdout))
}

/// B's build got A's memory: byte-identical, the lock checks, the store verifies, and a
/// second build needs no network.
fn assert_b_matches_a(a: &TestEnv, b: &TestEnv, run_b: impl Fn(&[&str]) -> Run) {
    assert_eq!(files(&b.project.join(".memory")), files(&a.project.join(".memory")));
    run_b(&["lock", "--check"]).ok();
    run_b(&["verify"]).ok();
    let again = run_b(&["build", "--locked", "--offline"]).ok();
    assert!(again.stdout.contains("Nothing to do"), "{}", again.stdout);
}

#[test]
fn s3_push_then_build_locked_on_an_empty_store() {
    let Some(moto) = Moto::start() else { return };
    let url = format!("s3://{BUCKET}/ci");
    let TwoMachines { a, b, .. } = TwoMachines::new();
    fill_store_a(&a, 20);
    write_project(&a, &url);
    write_project(&b, &url);
    a.run(&["build"]).ok();
    let first = moto.run(&a, &["push", "--json"]).ok();
    let objects = count(&first, "objects");
    assert_eq!(count(&first, "uploaded"), objects, "a fresh bucket lacks everything");
    // 23 blobs (20 pages, notes v1, 2 rules), 4 trees (httpx/, notes/, webapp/, webapp/web/),
    // the @g2 generation, 3 derivations, 1 environment.
    assert_eq!(objects, 23 + 4 + 1 + 3 + 1, "{}", first.stdout);
    assert_eq!(first.json()["quests"]["uploaded"], 4);
    let second = moto.run(&a, &["push", "--json"]).ok();
    assert_eq!(count(&second, "uploaded"), 0, "a second push uploads nothing");
    assert_eq!(second.json()["quests"]["unchanged"], 4);

    copy_lock(&a, &b);
    // Offline, the empty store cannot build, and says what it lacks: not a stale lock.
    let offline = moto.run(&b, &["build", "--locked", "--offline"]).expect(2);
    assert!(offline.stderr.contains("memorix::ops::objects_missing"), "{}", offline.stderr);
    assert!(offline.stderr.contains("--offline forbids fetching"), "{}", offline.stderr);
    let built = moto.run(&b, &["build", "--locked", "--json"]).ok();
    let fetched = built.json()["substituted"]["fetched"].as_u64().unwrap();
    assert_eq!(fetched, objects, "B fetches exactly the closure it lacks");
    eprintln!("pushed {objects} objects, then 0; B fetched {fetched}");
    assert_eq!(built.json()["substituted"]["unavailable"], serde_json::json!([]));
    assert_b_matches_a(&a, &b, |args| moto.run(&b, args));
    // The fetched generation has no seq index entry in B (its seq is A's).
    assert!(fs::read_dir(b.store.join("generations/docs/index")).unwrap().next().is_none());
}

/// Replaces one object on the server with other bytes.
fn corrupt_on_moto(moto: &Moto, key: &str) {
    assert_eq!(moto.http("PUT", &format!("/{BUCKET}/ci/{key}"), b"# Not the page\n"), 200);
}

fn blob_key(content: &str) -> (String, String) {
    let hex = hex::encode(Sha256::digest(content.as_bytes()));
    (format!("blobs/{}/{hex}", &hex[..2]), hex)
}

#[test]
fn s3_a_damaged_object_is_rejected_and_never_stored() {
    let Some(moto) = Moto::start() else { return };
    let url = format!("s3://{BUCKET}/ci");
    let TwoMachines { a, b, .. } = TwoMachines::new();
    fill_store_a(&a, 3);
    write_project(&a, &url);
    write_project(&b, &url);
    a.run(&["build"]).ok();
    moto.run(&a, &["push"]).ok();
    let (key, hex) = blob_key("# Page 1\n\nhttpx.\n");
    corrupt_on_moto(&moto, &key);
    copy_lock(&a, &b);

    // MEMORIX_S3_ENDPOINT wins over AWS_ENDPOINT_URL (here a closed port).
    let endpoint = format!("http://127.0.0.1:{}", moto.port);
    let mut cmd = moto.command(&b);
    cmd.env("AWS_ENDPOINT_URL", "http://127.0.0.1:9").env("MEMORIX_S3_ENDPOINT", &endpoint);
    let built = b.run_cmd(cmd.args(["build", "--locked"])).expect(1);
    assert!(built.stderr.contains("memorix::remote::corrupt"), "{}", built.stderr);
    assert!(built.stderr.contains(&format!("damaged blob sha256:{hex}")), "{}", built.stderr);
    assert!(!b.store.join(&key).exists(), "the damaged blob entered the store");
    assert!(!b.project.join(".memory").exists(), "nothing was activated");
    b.run(&["verify"]).ok();
    let pulled = moto.run(&b, &["pull"]).expect(1);
    assert!(pulled.stderr.contains(&hex), "{}", pulled.stderr);
    b.run(&["verify"]).ok();
}

/// Waits until `dir` holds `n` files, while `child` runs.
fn wait_for_files(dir: &Path, n: usize, child: &mut Child) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if walk(dir).iter().filter(|p| p.is_file()).count() >= n {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

#[test]
fn s3_server_killed_mid_pull_leaves_only_whole_objects_and_the_next_pull_completes() {
    let Some(moto) = Moto::start() else { return };
    let url = format!("s3://{BUCKET}/ci");
    let TwoMachines { a, b, .. } = TwoMachines::new();
    fill_store_a(&a, 300);
    write_project(&a, &url);
    write_project(&b, &url);
    a.run(&["build"]).ok();
    let total = count(&moto.run(&a, &["push", "--json"]).ok(), "objects");
    copy_lock(&a, &b);

    let mut pull =
        moto.command(&b).arg("pull").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let blobs: PathBuf = b.store.join("blobs");
    assert!(wait_for_files(&blobs, 100, &mut pull), "the pull ended before it fetched 100 blobs");
    moto.kill();
    let out = pull.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("memorix::remote::unreachable"), "{stderr}");
    let fetched = walk(&blobs).iter().filter(|p| p.is_file()).count();
    assert!(fetched < 300, "the pull finished before the server was killed ({fetched} blobs)");
    // Blobs and generations are stored as they arrive; trees and records only once complete.
    let kept = fetched + walk(&b.store.join("generations")).iter().filter(|p| p.is_file()).count();
    assert!(walk(&b.store.join("tmp")).is_empty(), "a temp file was left behind");
    assert_eq!(walk(&b.store.join("trees")).iter().filter(|p| p.is_file()).count(), 0);
    b.run(&["verify"]).ok();

    // moto keeps nothing across a restart: A pushes again, then B's pull completes.
    let Some(moto) = Moto::start() else { panic!("moto started once, but not twice") };
    moto.run(&a, &["push"]).ok();
    let pulled = moto.run(&b, &["pull", "--json"]).ok();
    assert_eq!(
        count(&pulled, "fetched"),
        total - kept as u64,
        "the second pull fetches only what is missing"
    );
    eprintln!(
        "killed after {kept} of {total} objects; the second pull fetched {}",
        count(&pulled, "fetched")
    );
    b.run(&["build", "--locked", "--offline"]).ok();
    assert_b_matches_a(&a, &b, |args| b.run(args));
}

#[test]
fn file_remote_push_pull_quests_and_refs() {
    let TwoMachines { a, b, remote, url } = TwoMachines::new();
    fill_store_a(&a, 5);
    write_project(&a, &url);
    write_project(&b, &url);
    a.run(&["build"]).ok();
    let first = a.run(&["push", "--json"]).ok();
    assert_eq!(count(&first, "uploaded"), count(&first, "objects"));
    assert_eq!(count(&a.run(&["push", "--json"]).ok(), "uploaded"), 0);
    // The remote is browsable: the store's own layout.
    assert!(remote.join("environments").is_dir() && remote.join("quests").is_dir());
    for (rel, _) in files(&remote).iter().filter(|(r, _)| r.starts_with("blobs/")) {
        assert_eq!(fs::read(remote.join(rel)).unwrap(), fs::read(a.store.join(rel)).unwrap());
    }

    copy_lock(&a, &b);
    let built = b.run(&["build", "--locked", "--json"]).ok();
    assert_eq!(built.json()["substituted"]["fetched"], first.json()["objects"]);
    assert_b_matches_a(&a, &b, |args| b.run(args));

    // B's quests gain A's project use and history; pushing B's back merges, never clobbers.
    let quest = |env: &TestEnv| -> serde_json::Value {
        let list = env.run(&["quest", "list", "--json"]).ok().json();
        list.as_array().unwrap().iter().find(|q| q["kind"] == "environment").unwrap().clone()
    };
    let merged = b.run(&["push", "--json"]).ok();
    assert_eq!(count(&merged, "uploaded"), 0);
    assert_eq!(merged.json()["quests"]["merged"], 4);
    let pulled = a.run(&["pull", "--json"]).ok();
    assert_eq!(count(&pulled, "fetched"), 0);
    assert_eq!(count(&pulled, "quests"), 4);
    let projects: Vec<String> = quest(&a)["projects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["dir"].as_str().unwrap().to_string())
        .collect();
    // A's own paths read `[ROOT]` in its output.
    assert_eq!(projects, ["[ROOT]/project".to_string(), b.project.display().to_string()]);

    // --all pushes the refs; a ref that moved on both sides is reported and left alone.
    let all = a.run(&["push", "--all", "--json"]).ok();
    let outcomes = |run: &Run| -> Vec<(String, String)> {
        run.json()["refs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["kind"].as_str().unwrap().to_string(), r["outcome"].as_str().unwrap().to_string()))
            .collect()
    };
    assert_eq!(outcomes(&all), [("rules".into(), "created".into()), ("docs".into(), "created".into())]);
    let ref_docs = fs::read_to_string(remote.join("refs/docs/latest")).unwrap();
    assert_eq!(ref_docs, fs::read_to_string(a.store.join("refs/docs/latest")).unwrap());
    let notes = a.root.join("notes.md");
    fs::write(&notes, "# Notes v3\n").unwrap();
    a.run(&["ingest", "docs/notes/notes.md", notes.to_str().unwrap()]).ok();
    let forward = a.run(&["push", "--all", "--json"]).ok();
    assert_eq!(outcomes(&forward)[1], ("docs".into(), "fast-forward".into()));
    assert_eq!(outcomes(&forward)[0], ("rules".into(), "up-to-date".into()));
    let other = b.root.join("other.md");
    fs::write(&other, "# Elsewhere\n").unwrap();
    b.run(&["ingest", "docs/other.md", other.to_str().unwrap()]).ok();
    let diverged = b.run(&["push", "--all", "--json"]).expect(1);
    assert!(outcomes(&diverged).contains(&("docs".into(), "diverged".into())), "{}", diverged.stdout);
    assert_eq!(
        fs::read_to_string(remote.join("refs/docs/latest")).unwrap(),
        fs::read_to_string(a.store.join("refs/docs/latest")).unwrap()
    );
    a.run(&["verify"]).ok();
    b.run(&["verify"]).ok();
}

/// A static file server (Python's http.server) over a directory, stopped when dropped.
struct StaticServer(Child);

impl Drop for StaticServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(dir: &Path) -> Option<(StaticServer, u16)> {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let args = ["-m", "http.server", &port.to_string(), "--bind", "127.0.0.1", "--directory"];
    let child =
        Command::new("python3").args(args).arg(dir).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let server = match child {
        Ok(c) => StaticServer(c),
        Err(e) if std::env::var_os("MEMORIX_REQUIRE_TOOLS").is_some_and(|v| v == "1") => {
            panic!("cannot start python3 -m http.server ({e}) and MEMORIX_REQUIRE_TOOLS=1")
        }
        Err(e) => {
            eprintln!("notice: skipping, python3 -m http.server cannot be started ({e})");
            return None;
        }
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "http.server did not start listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    Some((server, port))
}

#[test]
fn an_http_substituter_serves_a_pushed_layout_read_only() {
    let TwoMachines { a, b, remote, url } = TwoMachines::new();
    fill_store_a(&a, 3);
    write_project(&a, &url);
    a.run(&["build"]).ok();
    let pushed = a.run(&["push", "--json"]).ok();
    let Some((_server, port)) = serve(&remote) else { return };
    let url = format!("http://127.0.0.1:{port}");
    write_project(&b, &url);
    copy_lock(&a, &b);
    let built = b.run(&["build", "--locked", "--json"]).ok();
    assert_eq!(built.json()["substituted"]["fetched"], pushed.json()["objects"]);
    assert_b_matches_a(&a, &b, |args| b.run(args));
    let ro = b.run(&["push"]).expect(2);
    assert!(ro.stderr.contains("memorix::remote::read_only"), "{}", ro.stderr);
}

#[test]
fn file_remote_damage_is_rejected_with_exit_1() {
    let TwoMachines { a: _a, b, remote, .. } = pushed(2);
    let tree = files(&remote).into_keys().find(|k| k.starts_with("trees/")).unwrap();
    fs::write(remote.join(&tree), b"{\"entries\":[]}").unwrap();
    let built = b.run(&["build", "--locked"]).expect(1);
    assert!(
        built.stderr.contains("memorix::remote::corrupt") && built.stderr.contains("damaged tree"),
        "{}",
        built.stderr
    );
    assert!(!b.store.join(&tree).exists());
    b.run(&["verify"]).ok();
}

#[test]
fn remotes_are_added_listed_and_removed() {
    let env = TestEnv::new();
    env.run(&["remote", "add", "cache", "s3://team-memory/store/"]).ok();
    let dup = env.run(&["remote", "add", "cache", "file:///tmp/x"]).expect(2);
    assert!(dup.stderr.contains("memorix::remote::exists"), "{}", dup.stderr);
    let bad = env.run(&["remote", "add", "ftp", "ftp://host/x"]).expect(2);
    assert!(bad.stderr.contains("memorix::remote::bad_url"), "{}", bad.stderr);
    env.run(&["remote", "add", "mirror", "https://cache.example.com/memorix"]).ok();
    let listed = env.run(&["remote", "list"]).ok();
    let line = |name: &str, url: &str| format!("{name:<14} {url}  [remotes.toml]\n");
    assert_eq!(
        listed.stdout,
        line("cache", "s3://team-memory/store") + &line("mirror", "https://cache.example.com/memorix")
    );
    let config = env.root.join("home/.config/memorix/remotes.toml");
    assert!(fs::read_to_string(&config).unwrap().contains("url = \"s3://team-memory/store\""));
    // Two remotes: a push must name one; an HTTP remote is read-only.
    let which = env.run(&["push", "--all"]).expect(2);
    assert!(which.stderr.contains("memorix::remote::which"), "{}", which.stderr);
    let ro = env.run(&["push", "mirror", "--all"]).expect(2);
    assert!(ro.stderr.contains("memorix::remote::read_only"), "{}", ro.stderr);
    env.run(&["remote", "remove", "mirror"]).ok();
    let gone = env.run(&["remote", "remove", "mirror"]).expect(2);
    assert!(
        gone.stderr.contains("memorix::remote::unknown") && gone.stderr.contains("cache"),
        "{}",
        gone.stderr
    );
    let xdg = env.root.join("xdg");
    let out =
        env.run_cmd(env.command().env("XDG_CONFIG_HOME", &xdg).args(["remote", "add", "x", "file:///srv/m"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(xdg.join("memorix/remotes.toml").is_file());
}

/// A store filled by substitution is partial, but what it holds is checked in full.
#[test]
fn verify_checks_a_substituted_store_without_excusing_damage() {
    let TwoMachines { a: _a, b, .. } = pushed(2);
    b.run(&["build", "--locked"]).ok();
    b.run(&["verify"]).ok();
    let (key, hex) = blob_key("# Page 0\n\nhttpx.\n");
    fs::remove_file(b.store.join(&key)).unwrap();
    let out = b.run(&["verify"]).expect(1);
    assert!(out.stdout.contains(&format!("names missing blob sha256:{hex}")), "{}", out.stdout);
    let generation = walk(&b.store.join("generations/docs")).into_iter().find(|p| p.is_file()).unwrap();
    common::make_writable(&generation);
    fs::write(&generation, b"{}").unwrap();
    let out = b.run(&["verify"]).expect(1);
    assert!(out.stdout.contains("not a generation object"), "{}", out.stdout);
}

/// Runs a memorix command and samples its peak resident memory (VmHWM) until it exits.
fn run_measured(env: &TestEnv, args: &[&str]) -> (Run, u64) {
    let mut child = env
        .command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memorix");
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = fs::read_to_string(&status)
            && let Some(kib) = text.lines().find_map(|l| l.strip_prefix("VmHWM:"))
        {
            peak_kib = peak_kib.max(kib.trim().trim_end_matches("kB").trim().parse().unwrap_or(0));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        raw_stdout: out.stdout,
    };
    (run, peak_kib / 1024)
}

#[test]
fn objects_stream_so_a_huge_one_under_a_small_key_costs_no_memory() {
    let TwoMachines { a, b, remote, .. } = pushed(2);
    let keys = files(&remote).into_keys().collect::<Vec<_>>();
    // A blob key served 256 MiB (sparse on the remote): streamed to disk, rejected by its hash.
    let blob = keys.iter().find(|k| k.starts_with("blobs/")).unwrap();
    let big = fs::File::create(remote.join(blob)).unwrap();
    big.set_len(256 << 20).unwrap();
    let (run, peak) = run_measured(&b, &["pull"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("memorix::remote::corrupt") && run.stderr.contains("hashes to"),
        "{}",
        run.stderr
    );
    assert!(peak < 96, "pulling a 256 MiB object peaked at {peak} MiB");
    assert!(!b.store.join(blob).exists() && walk(&b.store.join("tmp")).is_empty());
    fs::copy(a.store.join(blob), remote.join(blob)).unwrap();

    // A record key served 1 GiB: refused once past the cap, long before the end.
    let tree = keys.iter().find(|k| k.starts_with("trees/")).unwrap();
    fs::File::create(remote.join(tree)).unwrap().set_len(1 << 30).unwrap();
    let (run, peak) = run_measured(&b, &["pull"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("larger than 64 MiB"), "{}", run.stderr);
    assert!(peak < 160, "refusing a 1 GiB record peaked at {peak} MiB");
    println!("peak memory pulling a 256 MiB blob: under 96 MiB; a 1 GiB record: {peak} MiB");
}

#[test]
fn concurrent_pushes_merge_every_quest_use_and_move_refs_once() {
    let remote = common::tempdir();
    let url = format!("file://{}", remote.path().display());
    let envs: Vec<TestEnv> = (0..6).map(|_| TestEnv::new()).collect();
    for env in &envs {
        fill_store_a(env, 2);
        write_project(env, &url);
        env.run(&["build"]).ok();
    }
    let children: Vec<Child> = envs
        .iter()
        .map(|env| {
            env.command()
                .args(["push", "--all"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.code() == Some(0) || out.status.code() == Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Every project's use of the environment's quest is on the remote: no push lost another's.
    let env_quest = envs[0].run(&["quest", "list", "--json"]).ok().json();
    let id = env_quest.as_array().unwrap().iter().find(|q| q["kind"] == "environment").unwrap()["id"]
        .as_str()
        .unwrap()[7..]
        .to_string();
    let text = fs::read_to_string(remote.path().join(format!("quests/{id}.toml"))).unwrap();
    for env in &envs {
        assert!(
            text.contains(&format!("dir = \"{}\"", env.project.display())),
            "{} missing:\n{text}",
            env.project.display()
        );
    }
    assert!(
        fs::read_dir(remote.path().join("quests"))
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().ends_with(".lease"))
    );
}

#[test]
fn an_unreachable_substituter_is_skipped_for_the_next() {
    let TwoMachines { a, b, remote, url } = TwoMachines::new();
    fill_store_a(&a, 2);
    write_project(&a, &url);
    build_push_and_share_lock(&a, &b);
    // A closed port first, then the remote that has everything.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    write_project(&b, &format!("http://127.0.0.1:{closed}"));
    b.without_retries();
    let manifest = fs::read_to_string(b.project.join("memorix.toml")).unwrap().replace(
        &format!("substituters = [\"http://127.0.0.1:{closed}\"]"),
        &format!("substituters = [\"http://127.0.0.1:{closed}\", \"file://{}\"]", remote.display()),
    );
    b.write("memorix.toml", &manifest);
    b.run(&["build", "--locked"]).ok();
    assert_eq!(files(&b.project.join(".memory")), files(&a.project.join(".memory")));
    // With only the closed one, the failure names it (a network failure, exit 2).
    let c = TestEnv::new();
    c.without_retries();
    write_project(&c, &format!("http://127.0.0.1:{closed}"));
    copy_lock(&a, &c);
    let err = c.run(&["build", "--locked"]).expect(2).stderr;
    assert!(err.contains("memorix::remote::unreachable") && err.contains(&closed.to_string()), "{err}");
}

#[test]
fn a_served_derivation_naming_one_path_twice_is_refused_clearly() {
    let TwoMachines { a, b, remote, url } = TwoMachines::new();
    fill_store_a(&a, 2);
    write_project(&a, &url);
    write_project(&b, &url);
    a.run(&["build"]).ok();
    a.run(&["push"]).ok();
    // A derivation whose id covers a duplicated entry, and a lock that names it.
    let blob = hex::encode(Sha256::digest(b"# Style\n\nShort functions.\n"));
    let entries = format!(r#"[["style.md","{blob}"],["style.md","{blob}"]]"#);
    let hashed = format!(r#"{{"entries":{entries}}}"#);
    let mut h = Sha256::new();
    h.update(b"memorix-derivation-v1\n");
    h.update(hashed.as_bytes());
    let id = hex::encode(h.finalize());
    let record = format!(
        r#"{{"decisions":[],"entries":{entries},"origins":[["style.md","rules/webapp/style.md",0],["style.md","rules/webapp/style.md",0]],"provenance":[]}}"#
    );
    common::write_file(
        &remote.join(format!("derivations/{}/{id}/derivation.json", &id[..2])),
        record.as_bytes(),
    );
    let lock = fs::read_to_string(a.project.join("memorix.lock")).unwrap();
    let project = lock.split("[mounts.project]").nth(1).unwrap();
    let old =
        project.lines().find_map(|l| l.strip_prefix("derivation = \"sha256:")).unwrap().trim_end_matches('"');
    b.write("memorix.lock", &lock.replace(old, &id));
    let built = b.run(&["build", "--locked"]).expect(1);
    assert!(built.stderr.contains("memorix::remote::corrupt"), "{}", built.stderr);
    assert!(built.stderr.contains("name \"style.md\" twice"), "{}", built.stderr);
    assert!(!b.store.join(format!("derivations/{}/{id}", &id[..2])).exists());
}

/// Trees an ingest packed travel like loose ones: pushed as the remote's `trees/` files, and
/// fetched from there into a store that has no pack.
#[test]
fn packed_trees_travel_through_a_file_remote() {
    let TwoMachines { a, b, remote, url } = TwoMachines::new();
    let dir = a.root.join("httpx-docs");
    for d in 0..80 {
        common::write_file(&dir.join(format!("s{d:02}/page.md")), format!("# Section {d}\n").as_bytes());
    }
    a.run(&["ingest", "docs/httpx/", dir.to_str().unwrap(), "--version", "0.28.1"]).ok();
    assert_eq!(fs::read_dir(a.store.join("packs")).unwrap().count(), 1, "82 new trees make one pack");
    let notes = a.root.join("notes.md");
    for v in ["v1", "v2"] {
        fs::write(&notes, format!("# Notes {v}\n")).unwrap();
        a.run(&["ingest", "docs/notes/notes.md", notes.to_str().unwrap()]).ok();
    }
    write_project(&a, &url);
    write_project(&b, &url);
    build_push_and_share_lock(&a, &b);
    let pushed = files(&remote).into_keys().filter(|k| k.starts_with("trees/")).count();
    assert!(pushed > 80, "the packed trees are on the remote: {pushed}");
    b.run(&["build", "--locked"]).ok();
    assert_b_matches_a(&a, &b, |args| b.run(args));
    assert_eq!(fs::read_to_string(b.project.join(".memory/httpx/s79/page.md")).unwrap(), "# Section 79\n");
    a.run(&["push", "--all"]).ok();
    let on_remote = files(&remote).into_keys().filter(|k| k.starts_with("trees/")).count();
    let stored = a.run(&["--json", "verify"]).ok().json()["checked"]["trees"].as_u64().unwrap();
    assert_eq!(on_remote as u64, stored, "push --all uploads every tree, packed or loose");
}

/// A `file://` remote whose objects are special files or sparse giants: a FIFO (which blocks a
/// reader for ever), a link to a device (which never ends) and a 4 GiB sparse file under an
/// 11-byte blob's key are each refused before they are read, naming the object.
#[test]
fn remote_reads_refuse_special_files_and_stop_at_the_size_cap() {
    let TwoMachines { a, b, remote, .. } = pushed(2);
    let guard = common::Sentinel::new(&b);
    let keys = files(&remote).into_keys().collect::<Vec<_>>();
    let blob = keys.iter().find(|k| k.starts_with("blobs/")).unwrap();
    let tree = keys.iter().find(|k| k.starts_with("trees/")).unwrap();
    let plant = |key: &str, how: &str| {
        let path = remote.join(key);
        fs::remove_file(&path).unwrap();
        match how {
            "fifo" => {
                rustix::fs::mknodat(rustix::fs::CWD, &path, rustix::fs::FileType::Fifo, 0o644.into(), 0)
                    .unwrap()
            }
            "device" => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
            _ => fs::File::create(&path).unwrap().set_len(4 << 30).unwrap(),
        }
    };
    for (key, how, why) in [
        (blob, "fifo", "is a FIFO, not a regular file"),
        (tree, "fifo", "is a FIFO, not a regular file"),
        (blob, "device", "is a device, not a regular file"),
        (blob, "sparse", "it is larger than 512 MiB"),
    ] {
        plant(key, how);
        let run = b.run_within(60, &["pull"]);
        common::no_panic(&run);
        assert!(
            run.code == 1 && run.stderr.contains("memorix::remote::corrupt") && run.stderr.contains(why),
            "{how} {key}: {}",
            run.stderr
        );
        assert!(!b.store.join(key).exists() && walk(&b.store.join("tmp")).is_empty(), "{how} {key}");
        fs::remove_file(remote.join(key)).unwrap();
        fs::copy(a.store.join(key), remote.join(key)).unwrap();
    }
    b.run(&["pull"]).ok();
    b.run(&["verify"]).ok();
    guard.untouched(&b, "remote special files");
}
