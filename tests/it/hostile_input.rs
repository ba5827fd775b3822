//! Hostile inputs that made memorix panic, fed back byte for byte: each must now give a value
//! or a clean error, never a panic (book: design/reliability.md#exit-codes). Each test says what found it (most were the
//! fuzz targets in `fuzz/`).

use crate::common;

use std::collections::BTreeMap;

use memorix::pins::{Pins, parse_file};

/// Writes `files` into a fresh project and resolves `library` from the first one.
fn resolve_in(files: &[(&str, &[u8])], library: &str) -> Result<String, String> {
    let dir = common::tempdir();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).expect("write");
    }
    let first = files[0].0;
    parse_file(&dir.path().join(first)).map_err(|e| e.to_string())?;
    let pins = Pins::load(dir.path(), &[first.to_string()], &BTreeMap::new()).map_err(|e| e.to_string())?;
    pins.resolve(library, None).map(|r| r.version).map_err(|e| e.to_string())
}

/// fuzz target pins_requirements: pep508_rs 0.9.2 panics on a name that ends in `.` when more
/// text follows; the line is not a requirement, so it is skipped like any unreadable line.
#[test]
fn requirements_name_ending_in_punctuation_is_skipped() {
    let crash: &[u8] = b"gunicor.'4=20.0.4\n";
    let err = resolve_in(&[("requirements.txt", crash)], "gunicor").unwrap_err();
    assert!(err.contains("not pinned"), "{err}");
    // The same flaw in an extra's name, and a good line after a bad one still counts.
    let extra: &[u8] = b"httpx[cli-]==0.28.1\nhttpx_-==1\nhttpx==0.28.1\n";
    assert_eq!(resolve_in(&[("requirements.txt", extra)], "httpx"), Ok("0.28.1".to_string()));
}

/// fuzz target manifest (its invariant that the memory directory is never the project): `memory
/// = "."` parsed as the project root, which `build` refused only later with a misleading "leads
/// outside the project"; activation swaps the memory directory out whole.
#[test]
fn memory_that_is_the_project_itself_is_refused() {
    let dir = common::tempdir();
    for memory in ["", ".", "./", "./.", "//"] {
        let text = format!("[project]\nmemory = {memory:?}\n");
        let err = memorix::manifest::parse(&text, "memorix.toml", dir.path()).expect_err(memory).to_string();
        assert!(err.contains("memorix.toml:2:") && err.contains("`memory = "), "{memory:?}: {err}");
    }
}

/// Reading `from_lock`: a hand-edited lock that locks a subtree locator (`rules/`) as a file
/// made `lock --check` panic taking the file name of the tree's root. It is bad input (exit 2)
/// naming the mount, and `memorix lock` heals it.
#[test]
fn a_lock_that_locks_a_subtree_as_a_file_is_refused() {
    let env = common::TestEnv::new();
    env.write("src/a.md", "# a\n");
    env.run(&["ingest", "rules/x/", "src"]).ok();
    env.write("memorix.toml", "[mounts.x]\nselect = [\"rules/\"]\n");
    env.run(&["lock"]).ok();
    let lock = env.project.join("memorix.lock");
    let good = std::fs::read_to_string(&lock).expect("the lock");
    std::fs::write(&lock, good.replace("type = \"tree\"", "type = \"blob\"")).expect("edit the lock");
    let out = env.run(&["lock", "--check"]).expect(2);
    assert!(out.stderr.contains("mount `x` locks the subtree rules/ as a file"), "{}", out.stderr);
    env.run(&["build", "--locked"]).expect(2);
    env.run(&["lock"]).ok();
    assert_eq!(std::fs::read_to_string(&lock).expect("the lock"), good);
}

/// fuzz target pins_conda (its invariant that a pin's line is inside its file): YAML breaks
/// lines at a lone `\r` as well, so an environment file full of them had pins "past the end"
/// by memorix's count (lines end at `\n`), and errors pointed at lines that are not there.
#[test]
fn a_yaml_pin_file_with_lone_carriage_returns_gives_lines_inside_it() {
    let crash: &[u8] = b"name: x\ndependencies:\n  - numpy=1.26.4\n \r\r\r\r\r\r\r\r  - python=3.11\n";
    let dir = common::tempdir();
    std::fs::write(dir.path().join("environment.yml"), crash).expect("write");
    let file = parse_file(&dir.path().join("environment.yml")).expect("parses");
    let lines: Vec<(&str, usize)> = file.pins.iter().map(|p| (p.name.as_str(), p.line)).collect();
    assert_eq!(lines, [("numpy", 3), ("python", 4)]);
}
