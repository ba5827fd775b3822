//! API outlines (book: design/outlines.md#outline): a fetched library's mount gets an
//! `API.md` of its public items, parsed from the corpus's real artifacts at two versions each
//! (crates, sdists, npm tarballs), the same on two machines.

use crate::common;

use std::fs;

use common::registry::Registry;
use common::{Run, TestEnv, corpus};

/// A pin file for one library at one version: its name and text.
pub fn pin(lib: &str, version: &str) -> (&'static str, String) {
    match lib {
        "matchit" | "http" => {
            let sum = crate_sum(lib, version);
            let text = format!(
                "version = 4\n\n[[package]]\nname = \"{lib}\"\nversion = \"{version}\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"{sum}\"\n"
            );
            ("Cargo.lock", text)
        }
        "ms" | "strip-ansi" => {
            let text = format!(
                "{{\"name\": \"p\", \"lockfileVersion\": 3, \"requires\": true, \"packages\": {{\"\": {{\"name\": \"p\", \"dependencies\": {{\"{lib}\": \"{version}\"}}}}, \"node_modules/{lib}\": {{\"version\": \"{version}\", \"resolved\": \"https://registry.npmjs.org/{lib}/-/{lib}-{version}.tgz\"}}}}}}\n"
            );
            ("package-lock.json", text)
        }
        _ => ("requirements.txt", format!("{lib}=={version}\n")),
    }
}

/// The sha256 of a corpus crate, as ORIGINS.tsv records it.
fn crate_sum(lib: &str, version: &str) -> String {
    let origins = fs::read_to_string(corpus("registry/ORIGINS.tsv")).unwrap();
    let file = format!("crates/dl/{lib}/{lib}-{version}.crate\t");
    let line =
        origins.lines().find(|l| l.starts_with(&file)).unwrap_or_else(|| panic!("{file} in ORIGINS.tsv"));
    line.split('\t').nth(3).unwrap().to_string()
}

/// A project pinning `lib` at `version` with a `libs/<lib>` mount, and a local registry.
pub fn project(env: &TestEnv, lib: &str, version: &str) -> Registry {
    let (file, text) = pin(lib, version);
    env.write(file, &text);
    env.write(
        "memorix.toml",
        &format!("[pins]\nfiles = [\"{file}\"]\n\n[mounts.\"libs/{lib}\"]\nselect = [\"docs/{lib}/@pin\"]\n"),
    );
    Registry::serve(&corpus("registry"))
}

/// Moves the pin to `version`.
pub fn repin(env: &TestEnv, lib: &str, version: &str) {
    let (file, text) = pin(lib, version);
    env.write(file, &text);
}

pub fn run(env: &TestEnv, reg: &Registry, args: &[&str]) -> Run {
    let mut cmd = env.command();
    for (k, v) in reg.env() {
        cmd.env(k, v);
    }
    env.run_cmd(cmd.args(args))
}

fn api(env: &TestEnv, lib: &str) -> String {
    let path = env.project.join(format!(".memory/libs/{lib}/API.md"));
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Builds `lib` at each of `versions` in turn; returns each version's `API.md`.
fn outlines(env: &TestEnv, lib: &str, versions: [&str; 2]) -> [String; 2] {
    let reg = project(env, lib, versions[0]);
    run(env, &reg, &["build"]).ok();
    let first = api(env, lib);
    repin(env, lib, versions[1]);
    run(env, &reg, &["update"]).ok();
    [first, api(env, lib)]
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_crate_outline_lists_its_public_items_with_signatures() {
    let env = TestEnv::new();
    let [old, new] = outlines(&env, "matchit", ["0.7.3", "0.8.4"]);
    for text in [&old, &new] {
        assert!(text.starts_with("# API outline: matchit 0."), "{text}");
        assert!(text.contains("\n## `matchit`\n"), "{text}");
        assert!(
            text.contains("- method `Router::insert`: `pub fn insert(&mut self, route: impl Into<String>, value: T) -> Result<(), InsertError>` — Insert a route"),
            "{text}"
        );
        // The tree's nodes are the crate's own (a private module, not re-exported).
        assert!(!text.contains("`Node`") && !text.contains("::tree"), "{text}");
    }
    assert!(!old.contains("Router::remove") && new.contains("Router::remove"), "0.8 added remove");
    let env = TestEnv::new();
    let [old, new] = outlines(&env, "http", ["0.2.12", "1.0.0"]);
    for text in [&old, &new] {
        assert!(text.contains("- method `Request::builder`: `pub fn builder() -> Builder` — Creates a new builder-style object to manufacture a \\`Request\\`"), "{text}");
        // Re-exported at the root: listed there, not under `http::request`.
        assert!(
            text.contains("\n## `http::request`\n")
                && !text
                    .contains("`Request::new`: `pub fn new(body: T) -> Request<T>` —\n## `http::request`")
        );
        assert!(!text.contains("#[cfg(test)]") && !text.contains("fn test_"), "no test item");
    }
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn a_python_outline_lists_exports_by_all_or_leading_underscore() {
    let env = TestEnv::new();
    let [old, new] = outlines(&env, "click", ["7.1.2", "8.1.7"]);
    for text in [&old, &new] {
        assert!(text.contains("\n## `click`\n"), "{text}");
        assert!(text.contains("- function `command`: `def command("), "{text}");
        assert!(text.contains("- function `option`: `def option("), "{text}");
        assert!(text.contains(" — Attaches an option to the command."), "{text}");
        // Private modules and names are not API: `click._compat`, `_unicodefun`.
        assert!(!text.contains("## `click._"), "{text}");
        assert!(!text.contains("`_"), "no private name: {text}");
    }
    assert!(old.contains("`def option(*param_decls, **attrs)`"), "{old}");
    assert!(new.contains("`def option(*param_decls: str, cls: t.Optional[t.Type[Option]] = None, **attrs: t.Any) -> t.Callable[[FC], FC]`"), "{new}");
    let env = TestEnv::new();
    let [old, new] = outlines(&env, "httpx", ["0.23.3", "0.28.1"]);
    assert!(
        old.contains("- method `Client.__init__`: `def __init__(self, *, auth:")
            && old.contains("proxies: typing.Optional[ProxiesTypes] = None"),
        "{old}"
    );
    assert!(new.contains("- method `Client.__init__`") && !new.contains("proxies:"), "{new}");
    // `__all__` lists the package's names; its private modules are not listed.
    assert!(!new.contains("## `httpx._"), "{new}");
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_npm_outline_lists_the_default_export_of_its_entry_file() {
    let env = TestEnv::new();
    let [old, new] = outlines(&env, "ms", ["2.0.0", "2.1.3"]);
    for text in [&old, &new] {
        assert!(text.contains("\n## `ms`\n\n- function `default`: `function(val, options)` — Parse or format the given \\`val\\`.\n"), "{text}");
        // Helpers of the file that are not exported.
        assert!(!text.contains("fmtShort") && !text.contains("`parse`"), "{text}");
    }
}

/// An npm package with `.d.ts` declarations is outlined from them (strip-ansi, the corpus's one
/// such tarball, has one version there): `export =` of a declared function is its default.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn an_npm_outline_reads_its_declarations() {
    let env = TestEnv::new();
    let reg = project(&env, "strip-ansi", "6.0.1");
    run(&env, &reg, &["build"]).ok();
    let text = api(&env, "strip-ansi");
    assert!(
        text.contains(
            "\n## `strip-ansi`\n\n- function `default`: `function stripAnsi(string: string): string` — Strip "
        ),
        "{text}"
    );
}

/// The outline is a derived artifact of the derivation: the same id, and the same bytes,
/// built in two Stores.
#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn outlines_are_the_same_in_two_stores() {
    let artifacts = |env: &TestEnv| -> Vec<(String, String)> {
        env.store_listing()
            .into_iter()
            .filter(|(p, _)| p.ends_with("/artifacts/api-v2.md") || p.ends_with("/artifacts/api-v2.json"))
            .collect()
    };
    let (a, b) = (TestEnv::new(), TestEnv::new());
    for env in [&a, &b] {
        let reg = project(env, "click", "8.1.7");
        run(env, &reg, &["build"]).ok();
    }
    let found = artifacts(&a);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(found, artifacts(&b));
    assert_eq!(api(&a, "click"), api(&b, "click"));
}

/// The `API.md` of a library made of `files`, ingested as `docs/demo/` version 1.0.0.
fn outline_of(files: &[(&str, &str)]) -> String {
    let env = TestEnv::new();
    let dir = env.root.join("demo-1.0.0");
    for (path, text) in files {
        common::write_file(&dir.join(path), text.as_bytes());
    }
    env.run(&["ingest", "docs/demo/", dir.to_str().unwrap(), "--version", "1.0.0"]).ok();
    env.write("memorix.toml", "[mounts.\"libs/demo\"]\nselect = [\"docs/demo/@v1.0.0\"]\n");
    env.run(&["build"]).ok();
    api(&env, "demo")
}

/// The members of exported interfaces and object type aliases are listed, each with its
/// signature and doc line; an interface that is not exported is not.
#[test]
fn a_typescript_outline_lists_the_members_of_exported_interfaces_and_type_literals() {
    let dts = "/** Options of a request. */\nexport interface Options {\n  /** How long to wait, in ms. */\n  timeout?: number;\n  retry(count: number): boolean;\n  (url: string): Promise<void>;\n}\nexport type Hooks = {\n  /** Before each request. */\n  before: (req: Request) => void;\n};\nexport type Id = string | number;\ninterface Hidden {\n  secret: string;\n}\n";
    let text = outline_of(&[
        ("package.json", "{\"name\": \"demo\", \"types\": \"index.d.ts\"}"),
        ("index.d.ts", dts),
    ]);
    for line in [
        "- interface `Options`: `interface Options` — Options of a request.\n",
        "- property `Options.timeout`: `timeout?: number` — How long to wait, in ms.\n",
        "- method `Options.retry`: `retry(count: number): boolean`\n",
        "- call `Options.()`: `(url: string): Promise<void>`\n",
        "- type `Hooks`: `type Hooks = { … }`\n",
        "- property `Hooks.before`: `before: (req: Request) => void` — Before each request.\n",
        "- type `Id`: `type Id = string | number`\n",
    ] {
        assert!(text.contains(line), "{line}in\n{text}");
    }
    assert!(!text.contains("Hidden") && !text.contains("secret"), "{text}");
}

/// A name bound only under `if TYPE_CHECKING:` is typing-only: listed where `__all__` lists
/// it (a package whose `__getattr__` imports it lazily), left out where no `__all__` does;
/// the `else:` branch is what runs.
#[test]
fn a_python_outline_counts_type_checking_names_only_where_all_lists_them() {
    let init = "from typing import TYPE_CHECKING\n\n__all__ = [\"Client\"]\n\nif TYPE_CHECKING:\n    from ._client import Client\n    from ._client import Internal\n\ndef __getattr__(name):\n    ...\n";
    let client = "class Client:\n    \"\"\"The client.\"\"\"\n\n    def get(self, url: str) -> bytes:\n        ...\n\nclass Internal:\n    pass\n";
    let types = "import typing\n\nif typing.TYPE_CHECKING:\n    from ._client import Client\n\n    class OnlyForTypes:\n        pass\nelse:\n    class Runtime:\n        pass\n\ndef public_fn(x: int) -> int:\n    ...\n";
    let text =
        outline_of(&[("demo/__init__.py", init), ("demo/_client.py", client), ("demo/types.py", types)]);
    for line in [
        "\n## `demo`\n\n- class `Client`: `class Client` — The client.\n- method `Client.get`: `def get(self, url: str) -> bytes`\n",
        "\n## `demo.types`\n\n- class `Runtime`: `class Runtime`\n- function `public_fn`: `def public_fn(x: int) -> int`\n",
    ] {
        assert!(text.contains(line), "{line}in\n{text}");
    }
    assert!(!text.contains("Internal") && !text.contains("OnlyForTypes"), "{text}");
}

/// Another crate's item a public module re-exports is listed as a re-export with its path;
/// a private module's item re-exported is listed where it is reached.
#[test]
fn a_crate_outline_lists_other_crates_reexports_with_their_path() {
    let lib = "mod inner;\n\n/// The bytes type, from the bytes crate.\npub use bytes::Bytes;\npub use serde::{Serialize as Ser, de::*};\npub use inner::Thing;\nuse std::fmt::Debug;\n";
    let text = outline_of(&[
        ("Cargo.toml", "[package]\nname = \"demo-crate\"\nversion = \"1.0.0\"\n"),
        ("src/lib.rs", lib),
        ("src/inner.rs", "/// A thing.\npub struct Thing;\n"),
    ]);
    for line in [
        "- re-export `Bytes`: `pub use bytes::Bytes` — The bytes type, from the bytes crate.\n",
        "- re-export `Ser`: `pub use serde::Serialize as Ser`\n",
        "- re-export `serde::de::*`: `pub use serde::de::*`\n",
        "- struct `Thing`: `pub struct Thing` — A thing.\n",
    ] {
        assert!(text.contains(line), "{line}in\n{text}");
    }
    assert!(!text.contains("Debug") && !text.contains("inner"), "{text}");
}

/// A Python sdist with a Rust extension (its `Cargo.toml` at the top, as cryptography 45 and
/// pydantic-core ship) is outlined as the Python package it installs.
#[test]
fn a_python_sdist_with_a_rust_extension_is_outlined_as_python() {
    let text = outline_of(&[
        ("PKG-INFO", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0.0\n"),
        ("Cargo.toml", "[package]\nname = \"demo-rust\"\nversion = \"1.0.0\"\n"),
        ("src/lib.rs", "pub fn internal() {}\n"),
        ("demo/__init__.py", "def load(path: str) -> bytes:\n    \"\"\"Loads it.\"\"\"\n"),
    ]);
    assert!(text.contains("read from the Python sources"), "{text}");
    assert!(text.contains("- function `load`: `def load(path: str) -> bytes` — Loads it.\n"), "{text}");
    assert!(!text.contains("internal"), "{text}");
}

/// A namespace package (PEP 420: a directory without `__init__`, as google-genai's
/// `google/`) holds packages that are outlined; a project's `tests/` is no namespace.
#[test]
fn a_python_outline_reads_packages_below_a_namespace_directory() {
    let text = outline_of(&[
        ("PKG-INFO", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0.0\n"),
        ("google/genai/__init__.py", "from .client import Client\n\n__all__ = [\"Client\"]\n"),
        ("google/genai/client.py", "class Client:\n    def models(self) -> list:\n        ...\n"),
        ("tests/unit/__init__.py", ""),
        ("tests/unit/test_client.py", "def test_it():\n    ...\n"),
    ]);
    assert!(text.contains("\n## `google.genai`\n\n- class `Client`: `class Client`\n- method `Client.models`: `def models(self) -> list`\n"), "{text}");
    assert!(!text.contains("test_it") && !text.contains("tests."), "{text}");
}

/// A stub-only package (`requests-stubs/`) outlines the package it types; a CommonJS
/// `exports = module.exports = f` (body-parser's) exports `f` as the default.
#[test]
fn stub_packages_and_chained_commonjs_exports_are_outlined() {
    let text = outline_of(&[
        ("PKG-INFO", "Metadata-Version: 2.1\nName: types-demo\nVersion: 1.0.0\n"),
        ("demo-stubs/__init__.pyi", "from .api import get as get\n"),
        ("demo-stubs/api.pyi", "def get(url: str) -> Response: ...\n"),
    ]);
    assert!(text.contains("\n## `demo`\n\n- function `get`: `def get(url: str) -> Response`\n"), "{text}");
    let js = "/**\n * Create a middleware.\n */\nexports = module.exports = bodyParser;\n\nfunction bodyParser(options) {\n  return null;\n}\n";
    let text = outline_of(&[("package.json", "{\"name\": \"demo\"}"), ("index.js", js)]);
    assert!(
        text.contains(
            "\n## `demo`\n\n- function `default`: `function bodyParser(options)` — Create a middleware.\n"
        ),
        "{text}"
    );
}
