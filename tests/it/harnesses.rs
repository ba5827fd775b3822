//! Every harness memorix writes for (issue 41): Codex, Windsurf, Cline, Kiro, Zed and Junie
//! beside the first five, in a project with a path-scoped rule set, a docs mount and a
//! two-member workspace. Golden files pin each harness's native files byte for byte, their
//! front matter is parsed back by a YAML parser and held to the keys the harness documents,
//! and `memorix doctor` simulates each loader's limits.

use crate::common;

use std::collections::BTreeMap;
use std::fs;

use common::TestEnv;
use saphyr::{LoadableYamlNode, Yaml};

const EVERY: &str = r#"["agents-md", "claude", "cursor", "copilot", "gemini", "codex", "windsurf", "cline", "kiro", "zed", "junie"]"#;

/// Shared team rules, API rules for `src/api/**`, httpx docs at the pinned version, and two
/// workspace members with rules of their own.
fn project(harnesses: &str, members: &str) -> TestEnv {
    let env = TestEnv::new();
    env.write("rules/style.md", "# Style\n\nFour spaces.\n");
    env.write("api-rules/errors.md", "# Error responses\n\nProblem+JSON everywhere.\n");
    env.write("web-rules/components.md", "# Components\n\nOne component a file.\n");
    env.write("cli-rules/flags.md", "# Flags\n\nLong flags only.\n");
    env.write("vendor-docs/httpx/quickstart.md", "# QuickStart\n\nhttpx.get(url)\n");
    env.write("src/api/routes.py", "ROUTES = []\n");
    env.write("packages/web/src/app.tsx", "export {}\n");
    env.write("packages/cli/main.py", "print()\n");
    env.write("requirements.txt", "httpx==0.28.1\n");
    env.write("memorix.toml", &manifest(harnesses, members));
    env
}

fn manifest(harnesses: &str, members: &str) -> String {
    format!(
        r#"[pins]
files = ["requirements.txt"]

[sources]
"rules/app/" = "./rules"
"rules/api/" = "./api-rules"
"rules/web/" = "./web-rules"
"rules/cli/" = "./cli-rules"
"docs/httpx/@v0.28.1" = "./vendor-docs/httpx"

[mounts.rules]
select = ["rules/app/"]
intent = "How we write code here"

[mounts.api]
select = ["rules/api/"]
intent = "HTTP API conventions"
applies-to = ["src/api/**"]

[mounts."libs/httpx"]
select = ["docs/httpx/@pin"]
intent = "httpx docs for the pinned version"

[mounts.web]
select = ["rules/web/"]
intent = "Web package rules"
applies-to = ["packages/web/**"]

[mounts.cli]
select = ["rules/cli/"]
intent = "CLI package rules"
applies-to = ["packages/cli/**/*.py"]

[agents]
harnesses = {harnesses}
{members}
"#
    )
}

const MEMBERS: &str = r#"members = ["packages/*"]"#;

/// Every file outside the memory, the sources, the project's own files and memorix's state.
fn generated(env: &TestEnv) -> BTreeMap<String, String> {
    let skip =
        [".memory/", ".memorix/", "rules/", "api-rules/", "web-rules/", "cli-rules/", "vendor-docs/", "src/"];
    let own = [
        "memorix.toml",
        "memorix.lock",
        "requirements.txt",
        ".ignore",
        "packages/web/src/app.tsx",
        "packages/cli/main.py",
    ];
    common::walk(&env.project)
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&env.project).ok()?.to_string_lossy().into_owned();
            let keep =
                p.is_file() && !skip.iter().any(|s| rel.starts_with(s)) && !own.contains(&rel.as_str());
            keep.then(|| (rel, fs::read_to_string(&p).unwrap()))
        })
        .collect()
}

/// The YAML mapping a file starts with, parsed by a YAML parser.
fn front_matter(text: &str) -> Option<Yaml<'static>> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    let docs = Yaml::load_from_str(&rest[..=end]).expect("front matter is YAML");
    let doc = docs.into_iter().next().expect("one document");
    assert!(doc.is_mapping(), "front matter is a mapping: {text}");
    Some(doc)
}

fn keys(doc: &Yaml) -> Vec<String> {
    doc.as_mapping().unwrap().keys().map(|k| k.as_str().unwrap().to_string()).collect()
}

fn strings(v: &Yaml) -> Vec<String> {
    match v.as_str() {
        Some(s) => vec![s.to_string()],
        None => v
            .as_sequence()
            .expect("a string or a list")
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect(),
    }
}

/// The keys each rule folder's harness documents, and the globs a file there is scoped to
/// (`None`: always loaded), read as that harness reads them.
fn scope_of(path: &str, doc: &Yaml) -> (&'static [&'static str], Option<Vec<String>>) {
    let get = |k: &str| doc.as_mapping_get(k);
    if path.starts_with(".claude/rules/") || path.starts_with(".clinerules/") {
        (&["paths", "description"], get("paths").map(strings))
    } else if path.starts_with(".cursor/rules/") {
        let always = get("alwaysApply").and_then(|v| v.as_bool()).expect("alwaysApply is a boolean");
        assert!(get("description").and_then(|v| v.as_str()).is_some(), "{path}: a description");
        (&["description", "globs", "alwaysApply"], (!always).then(|| strings(get("globs").unwrap())))
    } else if path.starts_with(".github/instructions/") {
        (&["applyTo", "description", "excludeAgent", "name"], get("applyTo").map(strings))
    } else if path.starts_with(".windsurf/rules/") {
        let trigger = get("trigger").and_then(|v| v.as_str()).expect("a trigger");
        assert!(["always_on", "glob", "model_decision", "manual"].contains(&trigger), "{path}: {trigger}");
        (&["trigger", "globs", "description"], (trigger == "glob").then(|| strings(get("globs").unwrap())))
    } else if path.starts_with(".kiro/steering/") {
        let inclusion = get("inclusion").and_then(|v| v.as_str()).expect("an inclusion");
        assert!(["always", "fileMatch", "manual", "auto"].contains(&inclusion), "{path}: {inclusion}");
        let globs = (inclusion == "fileMatch").then(|| strings(get("fileMatchPattern").unwrap()));
        (&["inclusion", "fileMatchPattern", "name", "description"], globs)
    } else if path.ends_with("SKILL.md") {
        (&["name", "description", "license", "compatibility", "metadata", "allowed-tools"], None)
    } else {
        panic!("{path}: front matter where its harness reads none")
    }
}

#[test]
fn every_harness_writes_its_native_files_scoped_and_pointing_into_the_memory() {
    let env = project(EVERY, MEMBERS);
    env.write(".clinerules/01-team.md", "# Team\n\nBe kind.\n");
    let out = env.run(&["build"]).ok();
    assert!(out.stdout.contains("Wrote agent harness files: "), "{}", out.stdout);
    let files = generated(&env);
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            ".agents/skills/memorix/.gitignore",
            ".agents/skills/memorix/SKILL.md",
            ".claude/rules/memorix-api.md",
            ".claude/rules/memorix-cli.md",
            ".claude/rules/memorix-web.md",
            ".claude/skills/memorix/.gitignore",
            ".claude/skills/memorix/SKILL.md",
            ".clinerules/01-team.md",
            ".clinerules/90-memorix-api.md",
            ".clinerules/90-memorix-cli.md",
            ".clinerules/90-memorix-web.md",
            ".cursor/rules/memorix-api.mdc",
            ".cursor/rules/memorix-cli.mdc",
            ".cursor/rules/memorix-web.mdc",
            ".github/copilot-instructions.md",
            ".github/instructions/memorix-api.instructions.md",
            ".github/instructions/memorix-cli.instructions.md",
            ".github/instructions/memorix-web.instructions.md",
            ".junie/guidelines.md",
            ".kiro/steering/memorix-api.md",
            ".kiro/steering/memorix-cli.md",
            ".kiro/steering/memorix-web.md",
            ".kiro/steering/memorix.md",
            ".windsurf/rules/memorix-api.md",
            ".windsurf/rules/memorix-cli.md",
            ".windsurf/rules/memorix-web.md",
            "AGENTS.md",
            "CLAUDE.md",
            "GEMINI.md",
            "packages/cli/AGENTS.md",
            "packages/web/AGENTS.md",
        ]
    );
    let applies: BTreeMap<&str, Vec<String>> = [
        ("api", vec!["src/api/**".to_string()]),
        ("cli", vec!["packages/cli/**/*.py".to_string()]),
        ("web", vec!["packages/web/**".to_string()]),
    ]
    .into();
    for (name, text) in &files {
        assert_eq!(
            files.get(".clinerules/01-team.md").unwrap(),
            "# Team\n\nBe kind.\n",
            "the user's rule stays"
        );
        if name == ".clinerules/01-team.md" || name.ends_with(".gitignore") {
            continue;
        }
        // Pointers, never copies: no text of a delivered file reaches what a harness loads.
        assert!(
            !text.contains("Problem+JSON") && !text.contains("Four spaces"),
            "{name} copies the docs: {text}"
        );
        if let Some(doc) = front_matter(text) {
            let (documented, globs) = scope_of(name, &doc);
            for k in keys(&doc) {
                assert!(documented.contains(&k.as_str()), "{name}: `{k}` is not a key its harness documents");
            }
            // A scoped pointer is scoped to exactly its mount's applies-to.
            if let Some(mount) = name.rsplit('/').next().unwrap().split("memorix-").nth(1) {
                let mount = mount.split('.').next().unwrap();
                assert_eq!(globs.as_ref(), Some(&applies[mount]), "{name}");
                assert!(text.contains(&format!(".memory/{mount}/")), "{name} names its mount's files");
            } else if !name.ends_with("SKILL.md") {
                assert_eq!(globs, None, "{name} loads always");
            }
        }
        // Windsurf reads at most 6,000 characters of a rule file.
        if name.starts_with(".windsurf/") {
            assert!(text.chars().count() <= 6000, "{name}");
        }
        if !name.ends_with("SKILL.md") {
            insta::assert_snapshot!(name.replace('/', "__"), text);
        }
    }
    // Each member's own index lists its mounts alone; the root one the shared ones.
    let web = &files["packages/web/AGENTS.md"];
    assert!(web.contains(".memory/web/components.md") && !web.contains(".memory/cli/"), "{web}");
    let root = &files["AGENTS.md"];
    assert!(root.contains(".memory/rules/style.md") && root.contains("`packages/web/AGENTS.md`"), "{root}");
    assert!(!root.contains(".memory/web/components.md"), "the root lists what is shared: {root}");
    // A second build writes nothing; doctor finds the generated files clean for every harness.
    assert!(env.run(&["build"]).ok().stdout.starts_with("Nothing to do"));
    let out = env.run(&["doctor", "--check"]).ok();
    insta::assert_snapshot!("doctor_every_harness", out.stdout);
    let out = env.run(&["doctor", "--check", "--cwd", "packages/web", "--harness", "codex"]).ok();
    insta::assert_snapshot!("doctor_codex_in_a_member", out.stdout);
}

#[test]
fn dropped_harnesses_and_members_take_their_files_and_leave_the_users() {
    let env = project(EVERY, MEMBERS);
    env.write(".junie/guidelines.md", "# Guidelines\n\nUse Gradle.\n");
    env.write(".kiro/steering/team.md", "---\ninclusion: always\n---\n# Team\n");
    env.write("packages/web/AGENTS.md", "# Web\n\nnpm test.\n");
    env.run(&["build"]).ok();
    let guidelines = fs::read_to_string(env.project.join(".junie/guidelines.md")).unwrap();
    assert!(guidelines.starts_with("# Guidelines\n\nUse Gradle.\n\n<!-- memorix:begin -->"), "{guidelines}");
    // Down to AGENTS.md alone, without members.
    env.write("memorix.toml", &manifest(r#"["agents-md"]"#, ""));
    let out = env.run(&["build"]).ok();
    assert!(out.stdout.contains("Removed agent harness files: "), "{}", out.stdout);
    let files = generated(&env);
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            ".agents/skills/memorix/.gitignore",
            ".agents/skills/memorix/SKILL.md",
            ".junie/guidelines.md",
            ".kiro/steering/team.md",
            "AGENTS.md",
            "packages/web/AGENTS.md",
        ]
    );
    assert_eq!(files[".junie/guidelines.md"], "# Guidelines\n\nUse Gradle.\n");
    assert_eq!(files[".kiro/steering/team.md"], "---\ninclusion: always\n---\n# Team\n");
    assert_eq!(files["packages/web/AGENTS.md"], "# Web\n\nnpm test.\n");
    // Everything back, then `init --remove-agents`: only the user's files stay.
    env.write("memorix.toml", &manifest(EVERY, MEMBERS));
    env.run(&["build"]).ok();
    env.run(&["init", "--remove-agents"]).ok();
    env.run(&["build"]).ok();
    let names: Vec<String> = generated(&env).into_keys().collect();
    assert_eq!(names, [".junie/guidelines.md", ".kiro/steering/team.md", "packages/web/AGENTS.md"]);
}

/// The problems `doctor --json` reports for `harness`, as `code: message`.
fn problems(json: &serde_json::Value, harness: &str) -> Vec<String> {
    let h = json["harnesses"].as_array().unwrap().iter().find(|h| h["harness"] == harness).unwrap();
    h["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{}: {}", p["code"].as_str().unwrap(), p["message"].as_str().unwrap()))
        .collect()
}

#[test]
fn doctor_reports_each_loaders_limit_with_the_harness_the_file_and_the_number() {
    let env = project(EVERY, MEMBERS);
    env.run(&["build"]).ok();
    // Codex: the chain from the root down to packages/web past 32 KiB.
    let root = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    let line = "Write small functions with clear names, and test every branch they have.\n";
    let mut big = line.repeat((32_700 - root.len()) / line.len() + 1);
    big.truncate(32_700 - root.len() - 1);
    fs::write(env.project.join("AGENTS.md"), format!("{big}\n{root}")).unwrap();
    let json = env.run(&["doctor", "--json", "--harness", "codex", "--cwd", "packages/web"]).ok().json();
    let codex = problems(&json, "codex");
    assert_eq!(codex.len(), 1, "{codex:?}");
    assert!(codex[0].starts_with("cap_exceeded: AGENTS.md + packages/web/AGENTS.md: "), "{codex:?}");
    assert!(
        codex[0].contains("stops at 32 KiB (32768 bytes): packages/web/AGENTS.md is cut after 68 of its"),
        "{codex:?}"
    );
    // AGENTS.override.md hides the AGENTS.md next to it.
    env.write("packages/web/AGENTS.override.md", "# Override\n\nShip it.\n");
    let json = env.run(&["doctor", "--json", "--harness", "codex", "--cwd", "packages/web"]).ok().json();
    let codex = problems(&json, "codex");
    assert!(
        codex.iter().any(|p| p.starts_with("never_reached: packages/web/AGENTS.md (")
            && p.contains("packages/web/AGENTS.override.md comes first")),
        "{codex:?}"
    );
    fs::write(env.project.join("AGENTS.md"), &root).unwrap();
    // Windsurf: a rule file past 6,000 characters.
    env.write(".windsurf/rules/team.md", &format!("---\ntrigger: always_on\n---\n{}", "x".repeat(6100)));
    // Zed: a stray .cursorrules hides AGENTS.md, which holds the index.
    env.write(".cursorrules", "Be terse.\n");
    // A skill whose name the specification rejects.
    env.write(".agents/skills/Bad_Name/SKILL.md", "---\nname: Bad_Name\ndescription: x\n---\nbody\n");
    let out = env.run(&["doctor", "--check"]).expect(1);
    let json = env.run(&["doctor", "--json"]).ok().json();
    let windsurf = problems(&json, "windsurf");
    assert!(
        windsurf.contains(&"file_cap_exceeded: .windsurf/rules/team.md: 6127 characters, but Windsurf (Cascade) reads at most 6000 characters of a rule file: the last 127 are cut".to_string()),
        "{windsurf:?}"
    );
    let zed = problems(&json, "zed");
    assert!(
        zed.iter().any(
            |p| p.starts_with("never_reached: AGENTS.md (") && p.contains("and .cursorrules comes first")
        ),
        "{zed:?}"
    );
    let codex = problems(&json, "codex");
    assert!(
        codex.contains(&"skill_rejected: .agents/skills/Bad_Name/SKILL.md: name \"Bad_Name\" is not lowercase letters, digits and single hyphens (none first or last); OpenAI Codex (CLI, IDE extension) will not load the skill".to_string()),
        "{codex:?}"
    );
    let long = "a".repeat(65);
    env.write(
        &format!(".agents/skills/{long}/SKILL.md"),
        &format!("---\nname: {long}\ndescription: x\n---\n"),
    );
    let json = env.run(&["doctor", "--json", "--harness", "agents-md"]).ok().json();
    let agents = problems(&json, "agents-md");
    assert!(
        agents.iter().any(|p| p.contains("name is 65 characters; the specification allows 1 to 64")),
        "{agents:?}"
    );
    insta::assert_snapshot!("doctor_limits", out.stdout);
    // Gemini CLI reads the names .gemini/settings.json gives instead of GEMINI.md.
    env.write(".gemini/settings.json", r#"{"context": {"fileName": ["AGENTS.md", "../../etc/passwd"]}}"#);
    let json = env.run(&["doctor", "--json", "--harness", "gemini"]).ok().json();
    let loads: Vec<&str> = json["harnesses"][0]["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(loads, ["AGENTS.md"], "{json}");
}

#[test]
fn members_must_be_folder_globs_inside_the_project() {
    let env = project(EVERY, r#"members = ["../elsewhere/*"]"#);
    let out = env.run(&["build"]).expect(2);
    assert!(out.stderr.contains("memorix::manifest::bad_member"), "{}", out.stderr);
    let env = project(EVERY, MEMBERS);
    env.run(&["build"]).ok();
    let out = env.run(&["doctor", "--cwd", "../x"]).expect(2);
    assert!(out.stderr.contains("memorix::doctor::bad_cwd"), "{}", out.stderr);
}

/// Windsurf reads 6,000 characters of AGENTS.md, the user's own text included: the block gets
/// what the user's text leaves, and follows it when the user's text grows or shrinks.
#[test]
fn the_block_in_agents_md_shares_windsurfs_cap_with_the_users_text() {
    let env = project(r#"["agents-md", "windsurf"]"#, "");
    for i in 0..300 {
        env.write(&format!("rules/guide-{i:03}.md"), &format!("# Guide {i}\n\nText.\n"));
    }
    let line = "Run the unit tests before you push, and keep each commit to one change.\n";
    let own = line.repeat(3300 / line.len());
    env.write("AGENTS.md", &own);
    env.run(&["build"]).ok();
    let chars = |env: &TestEnv| fs::read_to_string(env.project.join("AGENTS.md")).unwrap().chars().count();
    let text = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(text.starts_with(&own), "the user's text stays first and whole");
    assert!(text.contains("more files: each mount's `INDEX.md`"), "{text}");
    assert!((5_500..=6_000).contains(&chars(&env)), "{} characters", chars(&env));
    let clean = |env: &TestEnv| {
        problems(&env.run(&["doctor", "--json", "--harness", "windsurf"]).ok().json(), "windsurf")
    };
    assert_eq!(clean(&env), Vec::<String>::new());
    // The user's text grows: the next build gives the block less room, and no more.
    let grown = format!("{own}{}", line.repeat(20));
    env.write("AGENTS.md", &grown);
    env.run(&["build"]).ok();
    let text = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(text.starts_with(&grown) && text.contains("## Project memory"), "{text}");
    assert!((5_500..=6_000).contains(&chars(&env)), "{} characters", chars(&env));
    assert_eq!(clean(&env), Vec::<String>::new());
}
