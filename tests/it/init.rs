//! `memorix init` and what keeps generated files out of git and inside search tools' view:
//! `.ignore` for rg/fd, the generated directories' own ignore files, and the AGENTS.md block.

use crate::common;

use std::fs;
use std::process::Command;

use common::TestEnv;

/// A tool on PATH, or `None` with a notice (a failure when `MEMORIX_REQUIRE_TOOLS=1`, as in CI).
#[allow(clippy::print_stderr)] // a skipped test says why, as a notice
fn tool(names: &[&str]) -> Option<String> {
    for n in names {
        if Command::new(n).arg("--version").output().is_ok_and(|o| o.status.success()) {
            return Some(n.to_string());
        }
    }
    if std::env::var_os("MEMORIX_REQUIRE_TOOLS").is_some_and(|v| v == "1") {
        panic!("{names:?} not found and MEMORIX_REQUIRE_TOOLS=1");
    }
    eprintln!("notice: skipping, {names:?} not installed");
    None
}

fn git(env: &TestEnv, args: &[&str]) -> String {
    let out = Command::new("git").args(args).current_dir(&env.project).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `.memory/`, relative to the project, sorted.
fn memory_files(env: &TestEnv) -> Vec<String> {
    let root = env.project.join(".memory");
    let mut files: Vec<String> = common::walk(&root)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| p.strip_prefix(&env.project).unwrap().display().to_string())
        .collect();
    files.sort();
    files
}

/// The lines of a tool's output under `.memory/`, sorted.
fn listed(tool: &str, args: &[&str], env: &TestEnv) -> Vec<String> {
    let out = Command::new(tool).args(args).current_dir(&env.project).output().unwrap();
    assert!(out.status.success(), "{tool} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_start_matches("./").to_string())
        .filter(|l| l.starts_with(".memory/"))
        .collect();
    lines.sort();
    lines
}

#[test]
fn rg_and_fd_list_every_delivered_file_dot_files_included_while_git_ignores_them() {
    let (Some(rg), Some(fd)) = (tool(&["rg"]), tool(&["fd", "fdfind"])) else { return };
    let env = TestEnv::new();
    git(&env, &["init", "-q"]);
    env.run(&["init"]).ok();
    // Real rule files are dot-files: .cursorrules, .github/copilot-instructions.md, .cursor/rules/*.mdc.
    env.write("r/.cursorrules", "Use quetzalcoatl naming.\n");
    env.write("r/.github/copilot-instructions.md", "# Copilot\n\nquetzalcoatl\n");
    env.write("r/.cursor/rules/python.mdc", "---\ndescription: Python\n---\nquetzalcoatl\n");
    env.write("r/zebrafinch.md", "# Rule\n\nThe word quetzalcoatl appears only in memory.\n");
    env.run(&["ingest", "rules/team/", env.project.join("r").to_str().unwrap()]).ok();
    fs::remove_dir_all(env.project.join("r")).unwrap();
    env.write("memorix.toml", "[mounts.team]\nselect = [\"rules/team/\"]\n");
    env.run(&["build"]).ok();

    let delivered = memory_files(&env);
    assert!(delivered.contains(&".memory/team/.cursor/rules/python.mdc".to_string()), "{delivered:?}");
    assert_eq!(listed(&rg, &["--files"], &env), delivered, "rg --files");
    assert_eq!(listed(&fd, &["--type", "f"], &env), delivered, "fd");
    let hits = listed(&rg, &["-l", "quetzalcoatl"], &env);
    assert_eq!(hits.len(), 4, "rg finds the word in every rule: {hits:?}");
    // `.memorix/` is memorix's own state (it keeps the previous tree for the next activation),
    // which git, rg and fd skip by its `.gitignore`; grep reads no ignore file.
    let grep = Command::new("grep")
        .args(["-rl", "--exclude-dir=.memorix", "quetzalcoatl", "."])
        .current_dir(&env.project)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(grep.stdout).unwrap().lines().count(), 4, "grep -r");

    // Git sees only the project's own files; the ignore rules live inside the generated
    // directories, so a clone or a monorepo subdirectory needs nothing in .git/.
    let status = git(&env, &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(status, "?? .ignore\n?? memorix.lock\n?? memorix.toml\n");
    assert!(
        !env.project.join(".git/info/exclude").exists()
            || !fs::read_to_string(env.project.join(".git/info/exclude")).unwrap().contains("memorix")
    );
    // Idempotent: a second init changes nothing.
    let again = env.run(&["init"]).ok().stdout;
    assert_eq!(again, "memorix.toml exists; left as it is\n");
}

#[test]
fn the_owner_deletes_the_memory_with_rm_and_git_clean() {
    let env = TestEnv::new();
    git(&env, &["init", "-q"]);
    env.write("r/a/b.md", "# B\n");
    env.write("memorix.toml", "[sources]\n\"rules/p/\" = \"./r\"\n\n[mounts.p]\nselect = [\"rules/p/\"]\n");
    env.run(&["build"]).ok();
    let memory = env.project.join(".memory");
    // Files are read-only; directories are writable by their owner, so removing them needs no
    // root (tests may run as root, which ignores modes: the modes are checked too).
    for dir in common::walk(&memory).into_iter().filter(|p| p.is_dir()) {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o700, 0o700, "{} is {mode:o}", dir.display());
    }
    let rm = Command::new("rm").args(["-rf", ".memory"]).current_dir(&env.project).output().unwrap();
    assert!(rm.status.success() && !memory.exists(), "{}", String::from_utf8_lossy(&rm.stderr));
    env.run(&["build"]).ok();
    git(&env, &["clean", "-fdxq"]);
    assert!(!memory.exists() && !env.project.join(".memorix").exists());
}

#[test]
fn agents_block_is_managed_without_touching_the_rest() {
    let env = TestEnv::new();
    let original = "# AGENTS.md\n\nRun `make test` before pushing.\n\n## Style\n\nNo tabs.\n";
    env.write("AGENTS.md", original);
    std::os::unix::fs::symlink("AGENTS.md", env.project.join("CLAUDE.md")).unwrap();
    let init = env.run(&["init", "--agents"]).ok();
    assert!(init.stdout.starts_with("Created memorix.toml for `project` with [agents]."), "{}", init.stdout);
    let manifest = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert!(manifest.contains("[agents]\nharnesses = [\"agents-md\", \"claude\"]\n"), "{manifest}");
    assert_eq!(
        fs::read_to_string(env.project.join("AGENTS.md")).unwrap(),
        original,
        "build writes it, not init"
    );
    env.run(&["build"]).ok();
    let once = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(once.starts_with(original), "text before the block is untouched");
    assert!(once.contains("<!-- memorix:begin -->") && once.contains("`.memory/INDEX.md`"));
    assert_eq!(once.matches("<!-- memorix:begin -->").count(), 1, "CLAUDE.md is a link: one block");
    env.run(&["init", "--agents"]).ok();
    assert_eq!(
        fs::read_to_string(env.project.join("memorix.toml")).unwrap(),
        manifest,
        "re-running is a no-op"
    );
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), once, "so is building again");

    // A user edits around the block; a build keeps their text byte for byte.
    let edited = format!("{once}\n## Added later\n\nMore.\n");
    fs::write(env.project.join("AGENTS.md"), &edited).unwrap();
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), edited);
    fs::write(env.project.join("AGENTS.md"), &once).unwrap();
    env.run(&["init", "--remove-agents"]).ok();
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), original, "restored exactly");
}

/// A commented line of the starter that is TOML once the `# ` is taken off: a `[header]` or a
/// `key = value`, not prose.
fn example_line(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# ")?;
    let is_key = rest.split_once(" = ").is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || "\"._/-".contains(c))
    });
    (rest.starts_with('[') || is_key).then_some(rest)
}

/// Every commented example of a fresh `init` sits under its own header: uncommented as written
/// (each one), the manifest builds, with what the examples name in place.
#[test]
fn every_example_line_of_a_fresh_init_uncomments_into_a_manifest_that_builds() {
    let env = TestEnv::new();
    env.run(&["init"]).ok();
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    let examples: Vec<&str> = text.lines().filter_map(example_line).collect();
    assert!(examples.contains(&"[agents]") && examples.len() >= 9, "{examples:?}");
    let uncommented: String = text.lines().map(|l| format!("{}\n", example_line(l).unwrap_or(l))).collect();
    // What the examples name: two lockfiles (one pins serde), a rules folder, serde's docs.
    let serde = "name = \"serde\"\nversion = \"1.0.219\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n";
    env.write("Cargo.lock", &format!("version = 4\n\n[[package]]\n{serde}"));
    env.write("uv.lock", "version = 1\nrequires-python = \">=3.12\"\n");
    env.write("agent-rules/style.md", "# Style\n");
    let docs = env.root.join("serde-docs");
    common::write_file(&docs.join("README.md"), b"# serde\n");
    env.run(&["ingest", "docs/serde/", docs.to_str().unwrap(), "--version", "1.0.219"]).ok();
    env.write("memorix.toml", &uncommented);
    env.run(&["build", "--offline"]).ok();
    assert_eq!(
        common::files_under(&env.project.join(".memory")),
        [
            ".gitignore",
            ".ignore",
            "INDEX.md",
            "libs/serde/INDEX.md",
            "libs/serde/README.md",
            "rules/INDEX.md",
            "rules/style.md"
        ]
    );
    assert!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap().contains("memorix:begin"));
}

/// `init --agents` on a project that has memorix.toml says once what it did to it; a new
/// project gets `[agents]` in place of the commented example, and plain `init` says how.
#[test]
fn init_says_once_what_it_did_to_memorix_toml() {
    let env = TestEnv::new();
    let first = env.run(&["init"]).ok().stdout;
    assert!(first.contains("`memorix init --agents` adds [agents]"), "{first}");
    let plain = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    let added = env.run(&["init", "--agents"]).ok().stdout;
    assert_eq!(
        added,
        "Added [agents] to memorix.toml: `memorix build` writes each harness's entry points\n\
         To commit: memorix.toml\n"
    );
    let with = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert!(!with.contains("# [agents]") && with.contains("\n[agents]\n"), "{with}");
    assert_eq!(env.run(&["init", "--agents"]).ok().stdout, "memorix.toml exists; left as it is\n");
    let removed = env.run(&["init", "--remove-agents"]).ok().stdout;
    assert!(removed.starts_with("Removed [agents] from memorix.toml"), "{removed}");
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), plain, "back as it was");

    let fresh = TestEnv::new();
    let out = fresh.run(&["init", "--agents", "--name", "demo"]).ok().stdout;
    assert!(out.starts_with("Created memorix.toml for `demo` with [agents]."), "{out}");
    assert!(!out.contains("Added [agents]") && !out.contains("--agents` adds"), "{out}");
}
