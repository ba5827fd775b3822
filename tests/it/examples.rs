//! The bundled examples build on a fresh machine (an empty store) into their committed lock.

use crate::common;

use std::fs;
use std::path::Path;

use common::TestEnv;

fn copy_dir(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == ".memory" || name == ".memorix" {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&dst).unwrap();
            copy_dir(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Copies `examples/<name>` into a fresh project, checks the committed lock on an empty store,
/// builds exactly it, and returns the environment for more checks.
fn build_example(name: &str) -> TestEnv {
    let env = TestEnv::new();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name);
    copy_dir(&example, &env.project);
    let committed = fs::read_to_string(example.join("memorix.lock")).unwrap();
    env.run(&["lock", "--check"]).ok();
    env.run(&["build", "--locked"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), committed, "{name}");
    env.run(&["build"]).ok();
    assert_eq!(fs::read_to_string(env.project.join("memorix.lock")).unwrap(), committed, "{name}: sticky");
    env.run(&["verify"]).ok();
    env
}

fn memory_files(env: &TestEnv) -> Vec<String> {
    let root = env.project.join(".memory");
    common::walk(&root)
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
        .collect()
}

fn read(env: &TestEnv, path: &str) -> String {
    fs::read_to_string(env.project.join(".memory").join(path)).unwrap()
}

#[test]
fn webapp_team_rules_with_sources_and_an_override() {
    let env = build_example("webapp");
    assert_eq!(
        memory_files(&env),
        [
            ".gitignore",
            ".ignore",
            "INDEX.md",
            "decisions/INDEX.md",
            "decisions/decisions.md",
            "python/INDEX.md",
            "python/reviews.md",
            "python/style.md",
            "python/testing.md",
            "rules/INDEX.md",
            "rules/README.md",
            "rules/python/style.md",
            "rules/python/testing.md",
        ]
    );
    assert!(
        read(&env, "python/style.md").contains("ruff"),
        "the override picks the project's style over the team's"
    );
    let e = env.run(&["--json", "explain", ".memory/python/style.md"]).ok().json();
    assert_eq!(e["decisions"][0]["rule"], "override");
    assert_eq!(e["decisions"][0]["loser"], "rules/team/python/style.md");
    assert!(read(&env, "INDEX.md").contains("- `rules/python/style.md`: Python style"));
    // Its committed agent harness files are exactly what the build writes, and every harness
    // loads them without a problem.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/webapp");
    for f in [
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".github/instructions/memorix-python.instructions.md",
        ".claude/rules/memorix-python.md",
        ".cursor/rules/memorix-python.mdc",
    ] {
        let committed = fs::read_to_string(example.join(f)).unwrap();
        assert_eq!(fs::read_to_string(env.project.join(f)).unwrap(), committed, "{f}");
    }
    env.run(&["status", "--check"]).ok();
    let doctor = env.run(&["doctor", "--check"]).ok();
    assert!(doctor.stdout.ends_with("No problems found\n"), "{}", doctor.stdout);
}

#[test]
fn httpx_service_follows_its_requirements_pin() {
    let env = build_example("httpx-service");
    assert_eq!(
        memory_files(&env),
        [
            ".gitignore",
            ".ignore",
            "INDEX.md",
            "libs/httpx/INDEX.md",
            "libs/httpx/proxies.md",
            "libs/httpx/timeouts.md",
            "rules/INDEX.md",
            "rules/http-clients.md"
        ]
    );
    assert!(read(&env, "libs/httpx/proxies.md").contains("proxies=\"http://localhost:8030\""));
    let req = fs::read_to_string(env.project.join("requirements.txt")).unwrap();
    env.write("requirements.txt", &req.replace("httpx==0.23.3", "httpx==0.28.1"));
    env.run(&["lock", "--check"]).expect(1);
    env.run(&["update", "libs/httpx"]).ok();
    let proxies = read(&env, "libs/httpx/proxies.md");
    assert!(
        proxies.contains("proxy=\"http://localhost:8030\"") && !proxies.contains("proxies=\""),
        "{proxies}"
    );
}

#[test]
fn axum_service_follows_its_cargo_lock() {
    let env = build_example("axum-service");
    assert_eq!(
        memory_files(&env),
        [".gitignore", ".ignore", "INDEX.md", "libs/axum/INDEX.md", "libs/axum/routing.md"]
    );
    assert!(read(&env, "libs/axum/routing.md").contains("/users/:id"));
    let lock = fs::read_to_string(env.project.join("Cargo.lock")).unwrap();
    env.write("Cargo.lock", &lock.replace("version = \"0.6.20\"", "version = \"0.8.1\""));
    env.run(&["update"]).ok();
    assert!(
        read(&env, "libs/axum/routing.md").contains("/users/{id}"),
        "0.8.1 matches the 0.8.4 docs (minor)"
    );
}

#[test]
fn init_writes_a_commented_starter_manifest_once() {
    let env = TestEnv::new();
    // Another project's rules are in the shared Store; this project's pin files are in its root.
    env.write("r/other-team.md", "# Another team's rules\n");
    env.run(&["ingest", "rules/other/", env.project.join("r").to_str().unwrap()]).ok();
    fs::remove_dir_all(env.project.join("r")).unwrap();
    env.write("requirements.txt", "httpx==0.28.1\n");
    env.write("requirements-dev.txt", "pytest==8.3.4\n");
    env.write("CMakeLists.txt", "project(x)\n");
    let agents = "# Agents\n\nRun the tests.\n";
    env.write("AGENTS.md", agents);

    let out = env.run(&["init", "--name", "demo"]).ok();
    assert_eq!(
        out.stdout,
        "Created memorix.toml for `demo`. Declare mounts in it, then run `memorix build`.\n\
         Pins versions from requirements-dev.txt, requirements.txt\nUpdated .ignore\n\
         No agent harness is set up: `memorix init --agents` adds [agents], from which `memorix build` writes AGENTS.md and CLAUDE.md\n\
         To commit: memorix.toml, .ignore\nGenerated, ignored by git: .memorix/\n"
    );
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    insta::assert_snapshot!(text);
    assert_eq!(fs::read_to_string(env.project.join("AGENTS.md")).unwrap(), agents, "only --agents edits it");
    assert_eq!(
        fs::read_to_string(env.project.join(".memorix/.gitignore")).unwrap().lines().last(),
        Some("*")
    );
    let again = env.run(&["init"]).ok();
    assert!(again.stdout.starts_with("memorix.toml exists; left as it is"), "{}", again.stdout);
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), text);
    // The starter is a valid manifest that selects nothing: the other team's rules stay out.
    env.run(&["build"]).ok();
    assert_eq!(memory_files(&env), [".gitignore", ".ignore", "INDEX.md"]);
}
