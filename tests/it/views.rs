//! Curated docs views and the indexes that fit (book: design/fetching.md#the-docs-view,
//! design/delivery.md#the-indexes), end to end on the corpus's real registry artifacts served
//! from 127.0.0.1: what each ecosystem's view keeps and drops, titles from headings and
//! metadata (never a generated-file banner), one index per mount, and a top index and an
//! AGENTS.md block that stay small on a project of 200 libraries.

use crate::common;

use std::fs;

use common::registry::Registry;
use common::{Run, TestEnv, corpus, files_under};

/// A project pinning by the corpus lockfiles (copied in under their names), with one
/// `libs/<lib>` mount per library and `[agents]`, and a local registry serving the corpus.
fn project(env: &TestEnv, pins: &[(&str, &str)], libs: &[&str]) -> Registry {
    let mut m = String::from("[pins]\nfiles = [");
    for (i, (src, name)) in pins.iter().enumerate() {
        fs::copy(corpus(src), env.project.join(name)).unwrap();
        m += &format!("{}\"{name}\"", if i > 0 { ", " } else { "" });
    }
    m += "]\n\n[agents]\nharnesses = [\"agents-md\"]\n";
    for lib in libs {
        m += &format!("\n[mounts.\"libs/{lib}\"]\nselect = [\"docs/{lib}/@pin\"]\n");
    }
    env.write("memorix.toml", &m);
    Registry::serve(&corpus("registry"))
}

fn run(env: &TestEnv, reg: &Registry, args: &[&str]) -> Run {
    let mut cmd = env.command();
    for (k, v) in reg.env() {
        cmd.env(k, v);
    }
    env.run_cmd(cmd.args(args))
}

fn read(env: &TestEnv, rel: &str) -> String {
    fs::read_to_string(env.project.join(".memory").join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn each_ecosystem_keeps_what_teaches_and_drops_tests_fixtures_images_and_locks() {
    let env = TestEnv::new();
    let pins = [
        ("lockfiles/axum/Cargo.lock", "Cargo.lock"),
        ("lockfiles/flask/HEAD/uv.lock", "uv.lock"),
        ("lockfiles/vscode-copilot-chat/package-lock.json", "package-lock.json"),
    ];
    let reg = project(&env, &pins, &["http", "click", "semver"]);
    run(&env, &reg, &["build"]).ok();
    let files = |lib: &str| files_under(&env.project.join(".memory/libs").join(lib));
    let http = files("http");
    for kept in ["README.md", "CHANGELOG.md", "Cargo.toml", "src/lib.rs", "src/header/map.rs", "INDEX.md"] {
        assert!(http.contains(&kept.to_string()), "http keeps {kept}: {http:?}");
    }
    let dropped =
        ["Cargo.lock", "Cargo.toml.orig", "LICENSE-MIT", "src/uri/tests.rs", ".cargo_vcs_info.json"];
    for gone in dropped.iter().chain(&["tests/header_map.rs", ".github/workflows/ci.yml"]) {
        assert!(!http.contains(&gone.to_string()), "http drops {gone}: {http:?}");
    }
    let click = files("click");
    for kept in ["README.md", "CHANGES.rst", "PKG-INFO", "pyproject.toml", "docs/index.rst", "docs/api.md"] {
        assert!(click.contains(&kept.to_string()), "click keeps {kept}: {click:?}");
    }
    for module in ["__init__", "core", "decorators", "testing", "types", "_compat"] {
        assert!(click.contains(&format!("src/click/{module}.py")), "click keeps its module {module}");
    }
    assert!(click.iter().all(|f| !f.starts_with("tests/")), "{click:?}");
    for gone in
        ["uv.lock", "docs/conf.py", "docs/_static/click-logo.svg", "LICENSE.txt", "src/click/py.typed"]
    {
        assert!(!click.contains(&gone.to_string()), "click drops {gone}: {click:?}");
    }
    let semver = files("semver");
    assert_eq!(
        semver,
        ["API.md", "INDEX.md", "README.md", "index.js", "package.json"],
        "npm: README, manifest, entry (and the mount's index and API outline memorix adds)"
    );
    // Every docs page of the artifact is delivered.
    let artifact = corpus("registry/pypi/files/click-8.3.2.tar.gz");
    let listing = std::process::Command::new("tar").arg("tzf").arg(&artifact).output().unwrap();
    let pages: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("click-8.3.2/"))
        .filter(|p| p.starts_with("docs/") && (p.ends_with(".md") || p.ends_with(".rst")))
        .map(str::to_string)
        .collect();
    assert!(pages.len() > 30 && pages.iter().all(|p| click.contains(p)), "every docs page of click is kept");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn the_indexes_name_version_pin_file_description_and_titles_never_from_banners() {
    let env = TestEnv::new();
    let pins = [("lockfiles/axum/Cargo.lock", "Cargo.lock"), ("lockfiles/flask/HEAD/uv.lock", "uv.lock")];
    let reg = project(&env, &pins, &["http", "click"]);
    run(&env, &reg, &["build"]).ok();
    let top = read(&env, "INDEX.md");
    assert!(
        top.contains("Docs at the exact version the pin file pins (`Cargo.lock` where a line names none).\n"),
        "{top}"
    );
    assert!(
        top.contains("- http 1.5.0 in `libs/http/`: A set of types for representing HTTP requests and responses.\n  - start at `README.md`, `src/lib.rs`\n"),
        "{top}"
    );
    assert!(
        top.contains("- click 8.3.2 (uv.lock) in `libs/click/`: Composable command line interface toolkit\n  - start at `README.md`, `docs/index.rst`, `src/click/__init__.py`\n"),
        "{top}"
    );
    assert!(!top.contains("src/header/map.rs"), "file listings are in each mount's index: {top}");
    let http = read(&env, "libs/http/INDEX.md");
    assert!(http.starts_with("# Index of `libs/http/`\n"), "{http}");
    assert!(
        http.contains("- `Cargo.toml`: A set of types for representing HTTP requests and responses.\n"),
        "{http}"
    );
    assert!(http.contains("- `src/header/map.rs`\n"), "code has no title: {http}");
    let click = read(&env, "libs/click/INDEX.md");
    assert!(click.contains("- `PKG-INFO`: Composable command line interface toolkit\n"), "{click}");
    assert!(click.contains("- `docs/index.rst`: Welcome to Click\n"), "an RST title: {click}");
    for text in [&top, &http, &click] {
        assert!(!text.contains("AUTOMATICALLY GENERATED"), "no banner is a title: {text}");
        assert!(!text.contains(": \\---"), "no comment rule is a title: {text}");
    }
    let agents = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(agents.contains("- click 8.3.2\n- http 1.5.0\n"), "{agents}");
    run(&env, &reg, &["verify"]).ok();
    run(&env, &reg, &["status"]).ok();
}

/// `(name, version)` of the first `n` packages of a Cargo.lock whose name it pins once.
fn cargo_packages(lock: &str, n: usize) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |k: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{k} = \""))?.strip_suffix('"').map(str::to_string))
        };
        all.push((field("name").unwrap(), field("version").unwrap()));
    }
    let once = |name: &str| all.iter().filter(|(n, _)| n == name).count() == 1;
    // A version with build metadata is stored without it: left out, to keep the test plain.
    all.iter().filter(|(name, v)| once(name) && !v.contains('+')).take(n).cloned().collect()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn two_hundred_libraries_fit_the_top_index_and_the_block_names_every_one() {
    let env = TestEnv::new();
    let lock = fs::read_to_string(corpus("lockfiles/axum/Cargo.lock")).unwrap();
    let libs = cargo_packages(&lock, 200);
    assert_eq!(libs.len(), 200);
    env.write("Cargo.lock", &lock);
    let mut m = String::from("[pins]\nfiles = [\"Cargo.lock\"]\n\n[agents]\nharnesses = [\"agents-md\"]\n");
    // Two writers at once, as two terminals would: the Store gives each its own generation.
    std::thread::scope(|s| {
        for half in libs.chunks(libs.len().div_ceil(2)) {
            let env = &env;
            s.spawn(move || {
                for (name, version) in half {
                    let description = format!(
                        "The {name} crate: a long enough description of what it does, for the index."
                    );
                    let dir = env.root.join("src").join(name);
                    common::write_file(&dir.join("README.md"), format!("# {name}\n\nUse it.\n").as_bytes());
                    let manifest = format!("[package]\nname = \"{name}\"\ndescription = \"{description}\"\n");
                    common::write_file(&dir.join("Cargo.toml"), manifest.as_bytes());
                    common::write_file(&dir.join("src/lib.rs"), b"//! API\n");
                    let dest = format!("docs/{name}/");
                    env.run(&["ingest", &dest, dir.to_str().unwrap(), "--version", version]).ok();
                }
            });
        }
    });
    for (name, _) in &libs {
        m += &format!("\n[mounts.\"libs/{name}\"]\nselect = [\"docs/{name}/@pin\"]\n");
    }
    env.write("memorix.toml", &m);
    env.run(&["build", "--offline"]).ok();
    let top = read(&env, "INDEX.md");
    assert!(top.len() < 16 << 10, "the top index is {} bytes", top.len());
    let block = fs::read_to_string(env.project.join("AGENTS.md")).unwrap();
    assert!(block.len() <= 8 << 10, "the block is {} bytes", block.len());
    for (name, version) in &libs {
        // Names as inline Markdown: `encoding_rs` is `encoding\_rs`.
        let shown = name.replace('_', "\\_");
        assert!(block.contains(&format!("- {shown} {version}\n")), "the block names {name} {version}");
        assert!(top.contains(&format!("- {shown} {version}: ")), "the top index names {name}");
        assert!(read(&env, &format!("libs/{name}/INDEX.md")).contains("- `src/lib.rs`\n"));
    }
    assert!(top.contains(": The tokio crate: a long enough"), "descriptions are kept where they fit: {top}");
}

/// A `.crate` of `files` (paths under `evil-1.0.0/`) for crate `evil` 1.0.0, in a registry of
/// its own; returns the registry and the artifact's checksum.
fn evil_registry(env: &TestEnv, files: &[(String, Vec<u8>)]) -> (Registry, String) {
    use sha2::{Digest, Sha256};
    let root = env.root.join("registry");
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
    for (path, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_path(format!("evil-1.0.0/{path}")).unwrap();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append(&header, bytes.as_slice()).unwrap();
    }
    let crate_file = tar.into_inner().unwrap().finish().unwrap();
    let cksum = hex::encode(Sha256::digest(&crate_file));
    common::write_file(&root.join("crates/dl/evil/evil-1.0.0.crate"), &crate_file);
    let line = format!("{{\"name\":\"evil\",\"vers\":\"1.0.0\",\"cksum\":\"{cksum}\"}}\n");
    common::write_file(&root.join("crates/index/ev/il/evil"), line.as_bytes());
    (Registry::serve(&root), cksum)
}

/// File names are third-party text: those the view's cap leaves out stand in the notice as
/// literal text (an indented code block), so no emphasis, link, code span or HTML comment in
/// a name reaches an agent as markup (book: design/fetching.md#the-docs-view).
#[test]
fn the_notice_of_what_the_cap_left_out_holds_hostile_names_as_literal_text() {
    let env = TestEnv::new();
    let hostile = [
        "src/b*bold* _em_ # x.rs",
        "src/c[x](https:evil.example) ![i](javascript:alert(1)).rs",
        "src/d`code` <!-- hidden.rs",
        "src/e<img src=x onerror=alert(1)>.rs",
        "src/f --> </code> [ref]: https:evil.rs",
    ];
    let mut files = vec![
        ("Cargo.toml".to_string(), b"[package]\nname = \"evil\"\nversion = \"1.0.0\"\n".to_vec()),
        // Fills the 8 MiB cap but for 4 KiB, which none of the hostile files fits in.
        ("src/a.rs".to_string(), vec![b'a'; (8 << 20) - 4096]),
    ];
    files.extend(hostile.iter().map(|p| (p.to_string(), vec![b'x'; 5000])));
    let (registry, cksum) = evil_registry(&env, &files);
    env.write(
        "Cargo.lock",
        &format!(
            "version = 4\n\n[[package]]\nname = \"evil\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{cksum}\"\n"
        ),
    );
    env.write(
        "memorix.toml",
        "[pins]\nfiles = [\"Cargo.lock\"]\n\n[mounts.\"libs/evil\"]\nselect = [\"docs/evil/@pin\"]\n",
    );
    run(&env, &registry, &["build"]).ok();

    let notice = read(&env, "libs/evil/MEMORIX-OMITTED.md");
    let listed: String = hostile.iter().map(|p| format!("    {p}  5000\n")).collect();
    assert_eq!(
        notice,
        format!(
            "# Left out of the docs view\n\nmemorix keeps at most 8 MiB of a library's docs view: the README, manifest, \
             docs, examples and changelog first, then the API sources. These 5 files (25000 bytes) were left out, \
             with their sizes in bytes:\n\n{listed}\nTo keep some of them, name them in memorix.toml: \
             `[fetch.LIB] include = [\"GLOB\"]`.\n"
        )
    );
    // Read as Markdown, the names are one code block's text and nothing else.
    use pulldown_cmark::{Event, Parser, Tag};
    let mut block = String::new();
    let mut in_block = false;
    for event in Parser::new(&notice) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_block = true,
            Event::End(_) if in_block => in_block = false,
            Event::Text(t) if in_block => block += &t,
            Event::Start(
                tag @ (Tag::Link { .. } | Tag::Image { .. } | Tag::Emphasis | Tag::Strong | Tag::HtmlBlock),
            ) => {
                panic!("the notice has markup: {tag:?}")
            }
            Event::Html(h) | Event::InlineHtml(h) => panic!("the notice has HTML: {h}"),
            _ => {}
        }
    }
    let names: String = hostile.iter().map(|p| format!("{p}  5000\n")).collect();
    assert_eq!(block, names, "every name, literally, in the code block");
}
