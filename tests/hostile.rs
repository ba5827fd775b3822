//! Adversarial stores, locks and manifests: each is refused with a clear error, and nothing
//! outside the store or the project is created, changed or read (a sentinel directory beside
//! them is checked).

mod common;

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
