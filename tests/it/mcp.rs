//! `memorix mcp` driven over stdio from Rust: the tools answer with versions and provenance,
//! malformed input gets JSON-RPC errors and never stops the server, and searches and reads
//! reach the run ledger (book: mcp.md). `tests/mcp_client.py` drives it with the official
//! Python SDK in `.ci/run`.

use crate::common;

use std::fs;
use std::path::Path;

use common::TestEnv;

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// The httpx-service example, built: httpx 0.23.3 pinned, its docs and the team's rules.
fn example() -> TestEnv {
    let env = TestEnv::new();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/httpx-service"), &env.project);
    env.run(&["build"]).ok();
    env
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

/// Sends `lines` after the handshake; the responses by id (`null` for those without).
fn session(env: &TestEnv, lines: &[&str]) -> Vec<serde_json::Value> {
    let input = INIT.to_string() + &lines.join("\n") + "\n";
    let run = env.run_stdin(&["mcp"], input.as_bytes()).ok();
    common::no_panic(&run);
    let out: Vec<serde_json::Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(out.len(), lines.len() + 1, "one answer per request: {}", run.stdout);
    out
}

fn call(id: u32, tool: &str, args: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
    )
}

#[test]
fn the_tools_answer_with_versions_and_provenance() {
    let env = example();
    let out = session(
        &env,
        &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &call(2, "search", r#"{"query":"proxies","lib":"httpx","limit":2}"#),
            &call(3, "read", r#"{"path":"libs/httpx/proxies.md","from":1,"to":3}"#),
            &call(4, "libraries", "{}"),
            &call(5, "explain", r#"{"path":".memory/libs/httpx/proxies.md"}"#),
        ],
    );
    assert_eq!(out[0]["result"]["serverInfo"]["name"], "memorix");
    let tools: Vec<&str> =
        out[1]["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["explain", "libraries", "read", "search"]);

    let search = &out[2]["result"]["structuredContent"];
    let hit = &search["hits"][0];
    assert_eq!(
        (hit["path"].as_str(), hit["library"].as_str()),
        (Some("libs/httpx/proxies.md"), Some("httpx"))
    );
    assert_eq!(hit["version"], "0.23.3");
    assert!(hit["blob"].as_str().unwrap().starts_with("sha256:"), "{hit}");

    let read = &out[3]["result"]["structuredContent"];
    assert_eq!(
        read["text"],
        "# Proxies (httpx 0.23)\n\nPass `proxies=` to the client. It takes one proxy URL for all traffic, or a dictionary that\n"
    );
    assert_eq!(
        (read["from"].as_u64(), read["to"].as_u64(), read["version"].as_str()),
        (Some(1), Some(3), Some("0.23.3"))
    );
    assert_eq!(read["provenance"]["origin"], "docs/httpx/proxies.md");
    assert_eq!(read["provenance"]["locator"], "docs/httpx/@pin");

    let libs = &out[4]["result"]["structuredContent"]["libraries"];
    let httpx = libs.as_array().unwrap().iter().find(|l| l["mount"] == "libs/httpx").unwrap();
    assert_eq!((httpx["library"].as_str(), httpx["version"].as_str()), (Some("httpx"), Some("0.23.3")));
    assert_eq!(httpx["pinned_at"], "requirements.txt:3");
    assert_eq!(httpx["sources"][0]["pin"]["file"], "requirements.txt");

    assert_eq!(out[5]["result"]["structuredContent"]["version"], "0.23.3");

    // The ledger: what was searched and read, at which environment, with blobs and versions.
    let runs = env.run(&["runs", "--json"]).ok().json();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0]["access"]["tool"], "read");
    assert_eq!(runs[0]["access"]["answered"][0]["lines"], "1-3");
    assert_eq!(runs[1]["access"]["request"], "proxies");
    assert_eq!(runs[1]["access"]["answered"][0]["version"], "0.23.3");
    assert_eq!(runs[1]["environment"], search["environment"]);
}

#[test]
fn malformed_requests_get_protocol_errors_and_the_server_goes_on() {
    let env = example();
    let out = session(
        &env,
        &[
            "{not json",
            r#"{"jsonrpc":"2.0","id":7,"method":42}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"no/such"}"#,
            &call(9, "nope", "{}"),
            &call(10, "read", r#"{"line":"x"}"#),
            &call(11, "read", r#"{"path":"libs/httpx/nope.md"}"#),
            &call(12, "search", r#"{"query":"timeout"}"#),
        ],
    );
    let code = |v: &serde_json::Value| v["error"]["code"].as_i64();
    assert_eq!((code(&out[1]), out[1].get("id")), (Some(-32700), None));
    assert_eq!((code(&out[2]), out[2]["id"].as_u64()), (Some(-32600), Some(7)));
    assert_eq!((code(&out[3]), out[3]["id"].as_u64()), (Some(-32601), Some(8)));
    assert_eq!(code(&out[4]), Some(-32602), "an unknown tool");
    assert_eq!(out[5]["result"]["isError"], true, "arguments that fit no schema: {}", out[5]);
    let text = out[6]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("memorix::explain::not_a_file: "), "{text}");
    assert!(out[7]["result"]["structuredContent"]["hits"].as_array().is_some_and(|h| !h.is_empty()));
}

#[test]
fn outside_a_built_project_it_refuses_before_serving() {
    let env = TestEnv::new();
    let run = env.run_stdin(&["mcp"], INIT.as_bytes()).expect(2);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("memorix::"), "{}", run.stderr);
}

#[test]
fn init_agents_registers_the_server_beside_the_users_entries_and_removes_only_its_own() {
    let env = TestEnv::new();
    env.write("memorix.toml", "[agents]\nharnesses = [\"agents-md\", \"claude\"]\nmcp = true\n");
    let theirs = "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"gh-mcp\"\n    }\n  },\n  \"other\": 1\n}\n";
    env.write(".mcp.json", theirs);
    let out = env.run(&["init", "--agents"]).ok().stdout;
    assert!(out.contains("Updated .mcp.json\nUpdated .cursor/mcp.json\nUpdated .vscode/mcp.json\n"), "{out}");
    let claude: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(env.project.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(claude["mcpServers"]["github"]["command"], "gh-mcp", "the user's server stays");
    assert_eq!(claude["other"], 1);
    assert_eq!(claude["mcpServers"]["memorix"], serde_json::json!({"command": "memorix", "args": ["mcp"]}));
    let vscode = fs::read_to_string(env.project.join(".vscode/mcp.json")).unwrap();
    assert_eq!(
        vscode,
        "{\n  \"servers\": {\n    \"memorix\": {\n      \"args\": [\n        \"mcp\"\n      ],\n      \"command\": \"memorix\",\n      \"type\": \"stdio\"\n    }\n  }\n}\n"
    );
    // Idempotent.
    assert!(!env.run(&["init", "--agents"]).ok().stdout.contains("Updated .mcp.json"));

    env.run(&["init", "--remove-agents"]).ok();
    let back: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(env.project.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(back, serde_json::from_str::<serde_json::Value>(theirs).unwrap(), "only memorix's entry went");
    assert!(!env.project.join(".cursor/mcp.json").exists() && !env.project.join(".vscode/mcp.json").exists());

    // A file that is not a JSON object is refused, not overwritten.
    env.write("memorix.toml", "[agents]\nmcp = true\n");
    env.write(".cursor/mcp.json", "[1, 2]\n");
    let err = env.run(&["init", "--agents"]).expect(2).stderr;
    assert!(err.contains("memorix::init::mcp_config"), "{err}");
    assert_eq!(fs::read_to_string(env.project.join(".cursor/mcp.json")).unwrap(), "[1, 2]\n");
}

#[test]
fn registering_keeps_the_users_key_order_and_formatting() {
    let env = TestEnv::new();
    env.write("memorix.toml", "[agents]\nharnesses = [\"agents-md\"]\nmcp = true\n");
    let theirs = r#"{
    "zeta": {"keep": [1,2,   3]},
    "mcpServers": {
        "github": {
            "command": "gh-mcp"
        }
    },
    "alpha": true
}
"#;
    env.write(".mcp.json", theirs);
    env.run(&["init", "--agents"]).ok();
    let added = r#"{
    "zeta": {"keep": [1,2,   3]},
    "mcpServers": {
        "github": {
            "command": "gh-mcp"
        },
        "memorix": {
            "args": [
                "mcp"
            ],
            "command": "memorix"
        }
    },
    "alpha": true
}
"#;
    assert_eq!(fs::read_to_string(env.project.join(".mcp.json")).unwrap(), added);
    env.run(&["init", "--remove-agents"]).ok();
    assert_eq!(fs::read_to_string(env.project.join(".mcp.json")).unwrap(), theirs, "the same bytes again");
}
