//! One test environment for CLI tests: a temp store and a temp project, and the real binary.
#![allow(dead_code)]

pub mod registry;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

use sha2::{Digest, Sha256};

pub struct TestEnv {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub store: PathBuf,
    pub project: PathBuf,
    /// Runs set `MEMORIX_NET_RETRIES=0` ([`TestEnv::without_retries`]).
    no_retries: std::sync::atomic::AtomicBool,
}

/// What one run of the binary did, with the temp root replaced by `[ROOT]`.
#[derive(Debug)]
pub struct Run {
    /// The exit code, or minus the signal that killed it.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
}

impl Run {
    /// Panics with the output unless the exit code is `code`.
    pub fn expect(self, code: i32) -> Run {
        assert_eq!(self.code, code, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    pub fn ok(self) -> Run {
        self.expect(0)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

/// A temporary directory for one test: in memory (`/dev/shm`) where that has room and `TMPDIR`
/// names no other place. The suite creates and fsyncs thousands of small Stores; on a disk the
/// syncs alone cost it about a fifth of its time, and no test depends on the disk.
pub fn tempdir() -> tempfile::TempDir {
    static BASE: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let base = BASE.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let roomy = rustix::fs::statvfs(shm).is_ok_and(|s| s.f_bavail.saturating_mul(s.f_frsize) >= 4 << 30);
        (std::env::var_os("TMPDIR").is_none() && roomy).then(|| shm.to_path_buf())
    });
    match base {
        Some(dir) => tempfile::tempdir_in(dir),
        None => tempfile::tempdir(),
    }
    .expect("temp dir")
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempdir();
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let store = root.join("store");
        let project = root.join("project");
        fs::create_dir_all(&project).expect("project dir");
        TestEnv { _tmp: tmp, root, store, project, no_retries: Default::default() }
    }

    /// The binary with a clean environment: this env's store, no colours, a fixed clock.
    pub fn command(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memorix"));
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root.join("home"))
            .env("MEMORIX_STORE", &self.store)
            .env("NO_COLOR", "1")
            .env("SOURCE_DATE_EPOCH", "1767225600")
            // No test reaches a real registry: a closed port refuses at once.
            .env("MEMORIX_CRATES_INDEX", "http://127.0.0.1:9/")
            .env("MEMORIX_PYPI_INDEX", "http://127.0.0.1:9/")
            .env("MEMORIX_NPM_REGISTRY", "http://127.0.0.1:9/");
        if self.no_retries.load(std::sync::atomic::Ordering::Relaxed) {
            cmd.env("MEMORIX_NET_RETRIES", "0");
        }
        cmd
    }

    /// From now on, runs try a failed request once: for a test whose registry or remote is out
    /// of reach on purpose, where retries would only wait for the same answer
    /// (`fetch::a_registry_that_fails_is_retried_as_many_times_as_asked` covers retrying).
    pub fn without_retries(&self) {
        self.no_retries.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let run = self.run_cmd(self.command().args(args));
        // A project named with -C may have a detached fill running too.
        if let Some(dir) = args.windows(2).find(|w| w[0] == "-C").map(|w| self.project.join(w[1])) {
            wait_for_project(&dir);
        }
        run
    }

    pub fn run_stdin(&self, args: &[&str], stdin: &[u8]) -> Run {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn memorix");
        match child.stdin.take().expect("stdin").write_all(stdin) {
            // A command may refuse before it reads its input; its exit says so.
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => panic!("write stdin: {e}"),
        }
        self.finish(child.wait_with_output().expect("wait"))
    }

    /// Runs memorix and fails the test when it is still running after `secs` seconds: a hang
    /// guard for hostile input (a FIFO opened for reading, a quadratic parse), never a timing.
    pub fn run_within(&self, secs: u64, args: &[&str]) -> Run {
        let mut child = self
            .command()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn memorix");
        // Drained while it runs, so a long output cannot stall it; both pipes closed means it
        // ended (no polling: a run is waited on no longer than it takes).
        let (closed, ended) = std::sync::mpsc::channel();
        let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
            let closed = closed.clone();
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                pipe.read_to_end(&mut bytes).expect("read output");
                let _ = closed.send(());
                bytes
            })
        };
        let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
        let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        for _ in 0..2 {
            if ended.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())).is_err() {
                child.kill().expect("kill");
                panic!("memorix {args:?} still running after {secs} s");
            }
        }
        let status = child.wait().expect("wait");
        let (stdout, stderr) = (stdout.join().expect("stdout"), stderr.join().expect("stderr"));
        self.finish(Output { status, stdout, stderr })
    }

    pub fn run_cmd(&self, cmd: &mut std::process::Command) -> Run {
        self.finish(cmd.output().expect("run memorix"))
    }

    fn finish(&self, out: Output) -> Run {
        wait_for_store(&self.store);
        wait_for_project(&self.project);
        let clean =
            |b: &[u8]| String::from_utf8_lossy(b).replace(self.root.to_str().expect("utf-8 root"), "[ROOT]");
        Run {
            // Killed by a signal: minus the signal number (SIGABRT is -6, SIGKILL -9).
            code: out
                .status
                .code()
                .unwrap_or_else(|| -std::os::unix::process::ExitStatusExt::signal(&out.status).unwrap_or(0)),
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
            raw_stdout: out.stdout,
        }
    }

    /// Writes `files` into a folder kept for `dest` outside the project (adding to what earlier
    /// calls wrote there) and ingests the folder at `dest`.
    pub fn ingest(&self, dest: &str, files: &[(&str, &str)]) {
        let dir = self.root.join("src").join(dest.replace('/', "_"));
        for (p, c) in files {
            write_file(&dir.join(p), c.as_bytes());
        }
        self.run(&["ingest", dest, dir.to_str().expect("utf-8 path")]).ok();
    }

    /// Writes a file under the project, creating parents.
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        write_file(&self.project.join(rel), content.as_bytes())
    }

    /// Every file and directory under the store, with mode and content hash, for comparing a
    /// store before and after a command.
    pub fn store_listing(&self) -> BTreeMap<String, String> {
        listing(&self.store)
    }

    /// The number of files under `store/<sub>`.
    pub fn count(&self, sub: &str) -> usize {
        walk(&self.store.join(sub)).into_iter().filter(|p| p.is_file()).count()
    }
}

/// Two machines and a remote between them, the setup of the push, pull and substituter tests:
/// A and B each have their own Store, project and HOME, and `remote` (a directory under A's
/// root, made by the first push) is the `file://` remote `url` that their manifests may name.
/// A test that takes it apart keeps `a` bound (`a: _a`) while it uses the remote: a field left
/// out of the pattern is dropped, and A's temp root with it.
pub struct TwoMachines {
    pub a: TestEnv,
    pub b: TestEnv,
    pub remote: PathBuf,
    pub url: String,
}

impl TwoMachines {
    pub fn new() -> TwoMachines {
        let (a, b) = (TestEnv::new(), TestEnv::new());
        let remote = a.root.join("remote");
        let url = format!("file://{}", remote.display());
        TwoMachines { a, b, remote, url }
    }
}

/// Copies `files` of `from`'s project (`memorix.toml`, `memorix.lock`) into `to`'s, as a
/// commit and a clone would.
pub fn copy_project_files(from: &TestEnv, to: &TestEnv, files: &[&str]) {
    for f in files {
        fs::copy(from.project.join(f), to.project.join(f)).expect("copy a project file");
    }
}

/// `a` builds and pushes to the remote its manifest names; `b`'s project gets `a`'s lock.
pub fn build_push_and_share_lock(a: &TestEnv, b: &TestEnv) {
    a.run(&["build"]).ok();
    a.run(&["push"]).ok();
    copy_project_files(a, b, &["memorix.lock"]);
}

pub const SECRET: &str = "TOP SECRET sentinel content";

/// A directory beside the project that nothing may read into the Store or write to: after a
/// hostile command its tree (names, modes, contents, inodes) must be as it was, and none of
/// its content may reach the Store.
pub struct Sentinel {
    pub dir: PathBuf,
    before: BTreeMap<String, String>,
}

impl Sentinel {
    pub fn new(env: &TestEnv) -> Sentinel {
        let dir = env.root.join("sentinel");
        write_file(&dir.join("secret.txt"), format!("{SECRET}\n").as_bytes());
        write_file(&dir.join("sub/id_rsa"), format!("{SECRET} key\n").as_bytes());
        let before = listing(&dir);
        Sentinel { dir, before }
    }

    pub fn untouched(&self, env: &TestEnv, what: &str) {
        assert_eq!(listing(&self.dir), self.before, "{what}: the sentinel changed");
        let leaked = walk(&env.store)
            .into_iter()
            .filter(|p| p.is_file())
            .any(|p| fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(SECRET)));
        assert!(!leaked, "{what}: sentinel content reached the Store");
    }
}

/// Asserts no output of `run` shows a panic (a panic is a bug, never an answer).
pub fn no_panic(run: &Run) {
    for text in [&run.stdout, &run.stderr] {
        assert!(!text.contains("panicked") && !text.contains("RUST_BACKTRACE"), "a panic: {text}");
    }
    assert!(run.code != 101 && run.code >= 0, "exit {}: {}", run.code, run.stderr);
}

/// Runs git in `dir` with a fixed author and default branch; its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=A", "-c", "user.email=a@example.com", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8").trim().to_string()
}

pub fn write_file(path: &Path, content: &[u8]) -> PathBuf {
    fs::create_dir_all(path.parent().expect("parent")).expect("create parents");
    fs::write(path, content).expect("write file");
    path.to_path_buf()
}

pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.expect("dir entry").path();
            if fs::symlink_metadata(&p).expect("stat").is_dir() {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Waits until no process holds the store's writer lock: a command may leave work to a
/// detached process holding it (filling `latest/`'s spare), which must not overlap what the
/// test does next.
pub fn wait_for_store(store: &Path) {
    wait_for_lock(&store.join("lock"), &store.join("spare/filling"));
}

/// Waits until no process holds the project's lock (a first build leaves filling the kept
/// memory tree to a detached process holding it).
pub fn wait_for_project(project: &Path) {
    wait_for_lock(&project.join(".memorix/lock"), &project.join(".memorix/tmp/filling"));
}

fn wait_for_lock(lock: &Path, marker: &Path) {
    if let Ok(lock) = fs::File::open(lock) {
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive).expect("lock");
    }
    // The fill releases the lock, then removes its marker (a killed one leaves it behind).
    for _ in 0..2000 {
        if !marker.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Force-removes a read-only tree (a delivered `.memory/`).
pub fn remove_tree(dir: &Path) {
    for p in walk(dir).into_iter().chain([dir.to_path_buf()]) {
        if fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
            let _ = fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755));
        }
    }
    let _ = fs::remove_dir_all(dir);
}

/// The paths of the files (not directories) below `dir`, relative and sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|p| !fs::symlink_metadata(p).expect("stat").is_dir())
        .map(|p| p.strip_prefix(dir).expect("below").display().to_string())
        .collect()
}

pub fn listing(dir: &Path) -> BTreeMap<String, String> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let m = fs::symlink_metadata(&p).expect("stat");
            let what = if m.is_file() {
                format!(
                    "{:o} {}",
                    m.permissions().mode() & 0o7777,
                    hex::encode(Sha256::digest(fs::read(&p).expect("read")))
                )
            } else {
                format!("{:o} dir ino={}", m.permissions().mode() & 0o7777, m.ino())
            };
            (p.strip_prefix(dir).expect("below").display().to_string(), what)
        })
        .collect()
}

/// The shared test corpus (`MEMORIX_CORPUS`, default `../shared/corpus`). Tests that read it
/// carry `#[cfg_attr(memorix_no_corpus, ignore = "...")]`: where the corpus was absent at build
/// time they show as ignored (build.rs), unless `MEMORIX_REQUIRE_CORPUS=1`, which runs them to
/// fail here.
pub fn corpus(rel: &str) -> PathBuf {
    let base = std::env::var_os("MEMORIX_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let path = base.join(rel);
    assert!(
        path.exists(),
        "corpus file {} is missing (set MEMORIX_CORPUS; without MEMORIX_REQUIRE_CORPUS=1, a build without the corpus ignores these tests)",
        path.display()
    );
    path
}

/// Makes a read-only store file writable, for tests that damage the store on purpose.
/// The `key` list (`problems` or `garbage`) of a `verify --json` report, as `object: message`.
pub fn verify_list(report: &serde_json::Value, key: &str) -> Vec<String> {
    report[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}: {}", p["object"].as_str().unwrap(), p["message"].as_str().unwrap()))
        .collect()
}

pub fn make_writable(path: &Path) {
    let mut p = fs::metadata(path).expect("stat").permissions();
    p.set_mode(0o644);
    fs::set_permissions(path, p).expect("chmod");
}
