//! `memorix add` / `memorix remove` edit memorix.toml keeping comments and order.

use crate::common;

use std::fs;

use common::TestEnv;

const MANIFEST: &str = r#"# Our project's memory. Keep this comment.
[project]
name = "svc"   # trailing comment stays

# Rules first.
[mounts.python]
select = ["rules/python/"]   # the team's Python rules
intent = "Python rules"

[overrides]
"python/style.md" = "rules/python/style.md"
"#;

fn setup() -> TestEnv {
    let env = TestEnv::new();
    env.write("r/python/style.md", "# Style\n");
    env.write("r/web/http.md", "# HTTP\n");
    env.write("r/web/style.md", "# Web style\n");
    env.run(&["ingest", "rules/", env.project.join("r").to_str().unwrap()]).ok();
    env.write("memorix.toml", MANIFEST);
    env
}

#[test]
fn add_appends_a_mount_and_keeps_comments_and_order() {
    let env = setup();
    let out = env.run(&["add", "libs/web", "rules/web/", "--intent", "HTTP guidance"]).ok();
    assert_eq!(
        out.stdout,
        "Added new mount `libs/web` in memorix.toml; wrote memorix.lock. Run `memorix build` to deliver it.\n"
    );
    insta::assert_snapshot!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), @r#"
    # Our project's memory. Keep this comment.
    [project]
    name = "svc"   # trailing comment stays

    # Rules first.
    [mounts.python]
    select = ["rules/python/"]   # the team's Python rules
    intent = "Python rules"

    [mounts."libs/web"]
    select = ["rules/web/"]
    intent = "HTTP guidance"

    [overrides]
    "python/style.md" = "rules/python/style.md"
    "#);
    // Adding to an existing mount appends to its select, once.
    env.run(&["add", "python", "rules/web/http.md"]).ok();
    env.run(&["add", "python", "rules/web/http.md"]).ok();
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert!(
        text.contains("select = [\"rules/python/\", \"rules/web/http.md\"]   # the team's Python rules"),
        "{text}"
    );
    env.run(&["lock", "--check"]).ok();
    env.run(&["build"]).ok();
    assert!(env.project.join(".memory/libs/web/http.md").is_file());
}

#[test]
fn add_from_a_quest_reuses_its_selection() {
    let env = setup();
    env.write("other/memorix.toml", "[mounts.web]\nselect = [\"rules/web/\"]\nexclude = [\"style.md\"]\nintent = \"Web service guidance\"\n");
    env.run(&["-C", env.project.join("other").to_str().unwrap(), "build"]).ok();
    let hit = env.run(&["--json", "quest", "search", "web service"]).ok().json();
    let quest = hit.as_array().unwrap().iter().find(|h| h["kind"] == "derivation").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    env.run(&["add", "web", "--quest", &quest[7..19]]).ok();
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    // The new mount goes after the existing ones, before [overrides].
    let block = "[mounts.web]\nselect = [\"rules/web/\"]\nexclude = [\"style.md\"]\nintent = \"Web service guidance\"\n\n[overrides]";
    assert!(text.contains(block), "{text}");
    env.run(&["build"]).ok();
    let lock = fs::read_to_string(env.project.join("memorix.lock")).unwrap();
    let other = fs::read_to_string(env.project.join("other/memorix.lock")).unwrap();
    let drv = |t: &str| t.lines().skip_while(|l| *l != "[mounts.web]").nth(2).unwrap().to_string();
    assert_eq!(drv(&lock), drv(&other), "the same derivation as the quest's");
}

#[test]
fn remove_takes_the_mount_and_its_overrides_and_a_failed_lock_restores_the_manifest() {
    let env = setup();
    env.run(&["add", "web", "rules/web/"]).ok();
    env.run(&["remove", "python"]).ok();
    let text = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    assert!(!text.contains("[mounts.python]") && !text.contains("python/style.md"), "{text}");
    assert!(text.starts_with("# Our project's memory. Keep this comment.\n[project]\nname = \"svc\"   # trailing comment stays\n"), "{text}");
    let err = env.run(&["remove", "pyton"]).expect(2).stderr;
    assert!(err.contains("memorix.toml has no mount `pyton`"), "{err}");

    let before = fs::read_to_string(env.project.join("memorix.toml")).unwrap();
    let err = env.run(&["add", "broken", "rules/does-not-exist/"]).expect(2).stderr;
    assert!(err.contains("does not exist in rules@g1"), "{err}");
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), before, "restored");
    env.run(&["add", "bad", "rules/../x"]).expect(2);
    assert_eq!(fs::read_to_string(env.project.join("memorix.toml")).unwrap(), before);
}
