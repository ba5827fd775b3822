//! Pin resolution over the real lockfiles and requirements files of the shared corpus, read in
//! place. Expected versions were looked up in the files by hand.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use memorix::pins::{Ecosystem, PinnedArtifact, Pins, Reason, ResolvedPin, parse_file};
use miette::Diagnostic;

/// What resolving one library must give.
enum Expect {
    /// This version (the docs version is the same).
    Version(&'static str),
    /// This version, with this docs version (a local label dropped).
    Local(&'static str, &'static str),
    /// An error with this code whose message contains the text.
    Fails(&'static str, &'static str),
}
use Expect::{Fails, Local, Version};

/// One resolution: pin `files` (relative to `dir` under `lockfiles/`), the target `markers`,
/// then `library` with the mount's `version`.
struct Row {
    dir: &'static str,
    files: &'static [&'static str],
    markers: &'static [(&'static str, &'static str)],
    library: &'static str,
    version: Option<&'static str>,
    expect: Expect,
}

const fn row(dir: &'static str, file: &'static [&'static str], library: &'static str, expect: Expect) -> Row {
    Row { dir, files: file, markers: &[], library, version: None, expect }
}

const fn target(
    dir: &'static str,
    file: &'static [&'static str],
    markers: &'static [(&'static str, &'static str)],
    library: &'static str,
    expect: Expect,
) -> Row {
    Row { dir, files: file, markers, library, version: None, expect }
}

const fn chosen(
    dir: &'static str,
    file: &'static [&'static str],
    library: &'static str,
    version: &'static str,
    expect: Expect,
) -> Row {
    Row { dir, files: file, markers: &[], library, version: Some(version), expect }
}

const RUSTSEC: &str = "rustsec-cargo-lock/cargo-lock/tests/examples";
const DISAMBIGUATION: &str = "rustsec-cargo-lock/cargo-lock/tests/examples/source_disambiguation";
const UV_REQS: &str = "uv/crates/uv-requirements-txt/test-data/requirements-txt";
const TORCH: &str = "pytorch-serve/requirements";
const CARGO: &[&str] = &["Cargo.lock"];
const UV: &[&str] = &["uv.lock"];
const POETRY: &[&str] = &["poetry.lock"];
const NPM: &[&str] = &["package-lock.json"];
const PNPM: &[&str] = &["pnpm-lock.yaml"];
const YARN: &[&str] = &["yarn.lock"];
const PIPFILE: &[&str] = &["Pipfile.lock"];
const PYLOCK: &[&str] = &["pylock.toml"];
const PDM: &[&str] = &["pdm.lock"];
const PYPROJECT: &[&str] = &["pyproject.toml"];
const CONDA: &[&str] = &["environment.yml"];
const GOMOD: &[&str] = &["go.mod"];
const COMPOSER: &[&str] = &["composer.lock"];
const GEMFILE: &[&str] = &["Gemfile.lock"];
const SBOM: &str = "pnpm/pnpm/crates/cli/tests/fixtures/workspace-sbom-populated";

const ROWS: &[Row] = &[
    // Cargo.lock v1 (ripgrep 0.10.0: `name version (source)` dependencies, [metadata] checksums).
    row("ripgrep/0.10.0", CARGO, "regex", Version("1.0.5")),
    row("ripgrep/0.10.0", CARGO, "clap", Version("2.32.0")),
    row("ripgrep/0.10.0", CARGO, "memchr", Version("2.0.2")),
    // Two rand, neither a direct dependency of ripgrep: the candidates are listed.
    row("ripgrep/0.10.0", CARGO, "rand", Fails("memorix::pins::ambiguous", "Cargo.lock:413: rand 0.4.3")),
    row("ripgrep/0.10.0", CARGO, "rand", Fails("memorix::pins::ambiguous", "Cargo.lock:423: rand 0.5.5")),
    chosen("ripgrep/0.10.0", CARGO, "rand", "0.5.5", Version("0.5.5")),
    chosen("ripgrep/0.10.0", CARGO, "rand", "0.6.0", Fails("memorix::pins::not_a_candidate", "rand 0.6.0")),
    row("ripgrep/12.1.1", CARGO, "bstr", Version("0.2.13")),
    row("ripgrep/12.1.1", CARGO, "grep-cli", Version("0.1.5")),
    row(RUSTSEC, &["Cargo.lock.v1"], "hex", Version("0.4.0")),
    row(RUSTSEC, &["Cargo.lock.v1"], "syn", Fails("memorix::pins::ambiguous", "syn 0.15.44")),
    // Cargo.lock v2.
    row("ripgrep/ed9d37959f", CARGO, "regex", Version("1.5.4")),
    row(
        "ripgrep/ed9d37959f",
        CARGO,
        "cfg-if",
        Fails("memorix::pins::ambiguous", "Cargo.lock:68: cfg-if 1.0.0"),
    ),
    row(RUSTSEC, &["Cargo.lock.v2"], "serde", Version("1.0.136")),
    row(RUSTSEC, &["Cargo.lock.v2"], "toml", Version("0.5.9")),
    // Cargo.lock v3.
    row("ripgrep/13.0.0", CARGO, "regex", Version("1.5.4")),
    row("ripgrep/13.0.0", CARGO, "memchr", Version("2.4.0")),
    row(RUSTSEC, &["Cargo.lock.v3"], "toml", Version("0.5.9")),
    row("axum", CARGO, "tokio", Version("1.49.0")),
    row("axum", CARGO, "hyper", Version("1.8.1")),
    // Cargo.lock v4.
    row("ripgrep/15.1.0", CARGO, "regex", Version("1.12.2")),
    row("ripgrep/15.1.0", CARGO, "serde_json", Version("1.0.145")),
    row("ripgrep/15.1.0", CARGO, "serde-json", Version("1.0.145")),
    row(RUSTSEC, &["Cargo.lock.v4"], "toml", Version("0.8.14")),
    row(RUSTSEC, &["Cargo.lock.same-git"], "tracy-client", Version("0.15.0")),
    // Workspaces: syn 2 and syn 3 (clap), rand 0.8 and 0.9 (uv); the members use one directly.
    row("clap", CARGO, "syn", Version("3.0.2")),
    row("clap", CARGO, "clap", Version("4.6.6")),
    chosen("clap", CARGO, "syn", "2.0.119", Version("2.0.119")),
    row("uv", CARGO, "rand", Version("0.9.4")),
    row("uv", CARGO, "syn", Version("3.0.3")),
    row("uv", CARGO, "tokio", Version("1.53.1")),
    // Source disambiguation: the root's own choice, and one version from two sources.
    row(DISAMBIGUATION, &["Cargo.lock.two_versions_same_registry"], "bytes", Version("0.6.0")),
    row(DISAMBIGUATION, &["Cargo.lock.two_versions_different_registries"], "bytes", Version("0.6.0")),
    row(DISAMBIGUATION, &["Cargo.lock.two_versions_different_source_types"], "bytes", Version("0.6.0")),
    row(DISAMBIGUATION, &["Cargo.lock.single_version_different_registries"], "bytes", Version("1.2.1")),
    row(DISAMBIGUATION, &["Cargo.lock.single_version_different_source_types"], "bytes", Version("1.2.1")),
    // requirements chained with -r (pip-compile-multi), read through dev.txt.
    row("flask/2.2.5/requirements", &["dev.txt"], "click", Version("8.1.3")),
    row("flask/2.2.5/requirements", &["dev.txt"], "sphinx", Version("4.5.0")),
    row("flask/2.2.5/requirements", &["dev.txt"], "pytest", Version("7.3.1")),
    row("flask/2.2.5/requirements", &["dev.txt"], "python_dotenv", Version("1.0.0")),
    target(
        "flask/2.2.5/requirements",
        &["dev.txt"],
        &[("python_version", "3.11")],
        "python-dotenv",
        Version("1.0.0"),
    ),
    target(
        "flask/2.2.5/requirements",
        &["dev.txt"],
        &[("sys_platform", "linux")],
        "python-dotenv",
        Fails("memorix::pins::undeclared_marker", "tests.txt:20: the marker"),
    ),
    row("flask/2.2.5/requirements", &["dev.in"], "tox", Fails("memorix::pins::unpinned", "dev.in:6: tox")),
    row("flask/2.2.5/requirements", &["docs.in"], "sphinx", Fails("memorix::pins::unpinned", "(only `<5`)")),
    row("flask/2.2.5/requirements", &["dev.in", "dev.txt"], "tox", Version("4.5.0")),
    row("flask/3.0.3/requirements", &["dev.txt"], "pytest", Version("8.1.1")),
    row("flask/3.0.3/requirements", &["dev.txt"], "sphinx", Version("7.2.6")),
    row("flask/3.0.3/requirements", &["dev.txt", "tests.txt", "typing.txt"], "pytest", Version("8.1.1")),
    row(
        "flask",
        &["2.2.5/requirements/dev.txt", "3.0.3/requirements/dev.txt"],
        "pytest",
        Fails("memorix::pins::disagree", "3.0.3/requirements/dev.txt:123: pytest 8.1.1"),
    ),
    // pip-compile --generate-hashes: `--hash` continuation lines ending in a `# via` comment.
    row("warehouse/requirements", &["main.txt"], "alembic", Version("1.4.3")),
    row("warehouse/requirements", &["main.txt"], "amqp", Version("2.6.1")),
    row("warehouse/requirements", &["main.txt"], "pyramid", Version("1.10.5")),
    row("warehouse/requirements", &["tests.txt"], "pytest", Version("6.1.2")),
    row("warehouse/requirements", &["deploy.txt"], "gunicorn", Version("20.0.4")),
    row("warehouse/requirements", &["dev.txt"], "hupper", Fails("memorix::pins::unpinned", "(only `>=1.9`)")),
    // Local versions, per-platform markers, -r includes, --extra-index-url / --index-url.
    row(TORCH, &["torch_cu117_linux.txt"], "torch", Local("2.0.1+cu117", "2.0.1")),
    row(TORCH, &["torch_cu117_linux.txt"], "torchtext", Version("0.15.2")),
    row(TORCH, &["torch_cu121_linux.txt"], "torch", Local("2.4.0+cu121", "2.4.0")),
    row(TORCH, &["torch_rocm62.txt"], "torchaudio", Local("2.5.1+rocm6.2", "2.5.1")),
    row(TORCH, &["torch_cu117_linux.txt"], "wheel", Version("0.42.0")),
    row(
        TORCH,
        &["torch_cu117_linux.txt"],
        "numpy",
        Fails("memorix::pins::markers_needed", "torch_common.txt:5: numpy 1.26.4; sys_platform == 'win32'"),
    ),
    target(TORCH, &["torch_cu117_linux.txt"], &[("sys_platform", "linux")], "numpy", Version("1.24.3")),
    target(TORCH, &["torch_windows.txt"], &[("sys_platform", "win32")], "numpy", Version("1.26.4")),
    row(TORCH, &["torch_linux.txt", "torch_darwin.txt"], "torch", Local("2.4.0+cpu", "2.4.0")),
    row(
        TORCH,
        &["torch_cu117_linux.txt", "torch_darwin.txt"],
        "torch",
        Fails("memorix::pins::disagree", "torch_darwin.txt:4: torch 2.4.0"),
    ),
    target(
        TORCH,
        &["torch_cu117_linux.txt", "torch_darwin.txt"],
        &[("sys_platform", "darwin")],
        "torch",
        Version("2.4.0"),
    ),
    row(TORCH, &["developer.txt"], "psutil", Version("5.9.8")),
    row(TORCH, &["developer.txt"], "intel-extension-for-pytorch", Version("2.3.0")),
    row(
        TORCH,
        &["developer.txt"],
        "transformers",
        Fails("memorix::pins::unpinned", "developer.txt:11: transformers"),
    ),
    row(TORCH, &["trt_llm.txt"], "transformers", Fails("memorix::pins::unpinned", "(only `>=4.44.2`)")),
    row(TORCH, &["neuronx.txt"], "neuronx-cc", Fails("memorix::pins::unpinned", "named without a version")),
    // Options that pin nothing.
    row(
        "pip/tests/data/reqfiles",
        &["supported_options2.txt"],
        "fred",
        Fails("memorix::pins::not_pinned", "fred"),
    ),
    // uv's requirements parser test data: -c, --requirement, hashes after markers, URLs.
    row(UV_REQS, &["constraints-a.txt"], "django", Version("2.1.15")),
    row(
        UV_REQS,
        &["constraints-a.txt"],
        "django-debug-toolbar",
        Fails("memorix::pins::unpinned", "(only `<2.2`)"),
    ),
    row(UV_REQS, &["include-a.txt"], "numpy", Version("1.24.2")),
    row(UV_REQS, &["include-a.txt"], "tomli", Fails("memorix::pins::unpinned", "include-b.txt:1: tomli")),
    row(UV_REQS, &["poetry-with-hashes.txt"], "werkzeug", Version("2.2.3")),
    row(UV_REQS, &["poetry-with-hashes.txt"], "requests-oauthlib", Version("1.3.1")),
    target(UV_REQS, &["poetry-with-hashes.txt"], &[("python_version", "3.11")], "psycopg2", Version("2.9.5")),
    row(UV_REQS, &["basic.txt"], "pandas", Version("2.0.0")),
    row(UV_REQS, &["small.txt"], "tomli-w", Version("1.0.0")),
    row(
        UV_REQS,
        &["whitespace.txt"],
        "pandas",
        Fails("memorix::pins::unpinned", "whitespace.txt:19: pandas"),
    ),
    row(UV_REQS, &["editable.txt"], "editable", Fails("memorix::pins::not_pinned", "editable")),
    row(UV_REQS, &["bare-url.txt"], "black", Fails("memorix::pins::not_pinned", "black")),
    row("uv/test/requirements/compiled", &["all-kinds.txt"], "django", Version("5.0.1")),
    row(
        "uv/test/requirements/compiled",
        &["all-kinds.txt"],
        "flask",
        Fails("memorix::pins::unpinned", "(only `@ https://files.pythonhosted.org/"),
    ),
    // uv.lock revision 3 (uv, flask HEAD), revision 2 (click), no revision (built-by-uv).
    row("uv", UV, "ruff", Version("0.16.2")),
    row("uv", UV, "mkdocs", Version("1.6.1")),
    row(
        "uv",
        UV,
        "fastjsonschema",
        Fails("memorix::pins::markers_needed", "uv.lock:427: fastjsonschema 2.22.1"),
    ),
    target("uv", UV, &[("python_version", "3.12")], "fastjsonschema", Version("2.22.1")),
    target("uv", UV, &[("python_version", "3.8")], "fastjsonschema", Version("2.21.2")),
    row("flask/HEAD", UV, "werkzeug", Version("3.1.8")),
    row("flask/HEAD", UV, "Jinja2", Version("3.1.6")),
    row("flask/HEAD", UV, "sphinx", Fails("memorix::pins::markers_needed", "uv.lock:1219: sphinx 8.1.3")),
    target("flask/HEAD", UV, &[("python_version", "3.10")], "sphinx", Version("8.1.3")),
    target("flask/HEAD", UV, &[("python_full_version", "3.13.1")], "sphinx", Version("8.2.3")),
    chosen("flask/HEAD", UV, "sphinx", "8.2.3", Version("8.2.3")),
    row("click/bba0561d", UV, "pytest", Version("8.3.5")),
    target("click/bba0561d", UV, &[("python_version", "3.12")], "sphinx", Version("8.2.3")),
    row("uv/test/packages/built-by-uv", UV, "anyio", Version("4.6.2.post1")),
    row("uv/test/packages/built-by-uv", UV, "pytest", Version("8.3.3")),
    row("uv/scripts/benchmark", UV, "blinker", Version("1.8.2")),
    // A PEP 723 script's lock.
    row("uv/scripts", &["create-python-mirror.py.lock"], "httpx", Version("0.28.1")),
    target(
        "uv/scripts",
        &["create-python-mirror.py.lock"],
        &[("python_version", "3.9")],
        "anyio",
        Version("4.12.1"),
    ),
    // poetry.lock: no lock-version (1.0.10), 1.1, 2.0 (1.8.5), 2.1 (HEAD), and fixtures.
    row("poetry/1.0.10", POETRY, "cleo", Version("0.7.6")),
    row("poetry/1.0.10", POETRY, "tomlkit", Version("0.5.11")),
    row(
        "poetry/1.0.10",
        POETRY,
        "pytest",
        Fails("memorix::pins::ambiguous", "poetry.lock:1218: pytest 5.4.3"),
    ),
    chosen("poetry/1.0.10", POETRY, "pytest", "5.4.3", Version("5.4.3")),
    target(
        "poetry/1.0.10",
        POETRY,
        &[("python_version", "3.8"), ("sys_platform", "win32")],
        "atomicwrites",
        Version("1.4.0"),
    ),
    target(
        "poetry/1.0.10",
        POETRY,
        &[("python_version", "3.8"), ("sys_platform", "linux")],
        "atomicwrites",
        Fails("memorix::pins::excluded_by_markers", "poetry.lock:24: atomicwrites 1.4.0"),
    ),
    row("poetry/1.1.15", POETRY, "cleo", Version("0.8.1")),
    row(
        "poetry/1.1.15",
        POETRY,
        "keyring",
        Fails("memorix::pins::ambiguous", "poetry.lock:479: keyring 22.3.0"),
    ),
    row("poetry/1.8.5", POETRY, "build", Version("1.0.3")),
    row("poetry/1.8.5", POETRY, "CacheControl", Version("0.14.0")),
    row("poetry/1.8.5", POETRY, "pytest", Version("8.0.1")),
    row("poetry/HEAD", POETRY, "anyio", Version("4.13.0")),
    row("poetry/HEAD", POETRY, "pytest", Version("9.0.3")),
    target("poetry/HEAD", POETRY, &[("python_version", "3.11")], "backports.tarfile", Version("1.2.0")),
    target(
        "poetry/HEAD",
        POETRY,
        &[("python_version", "3.13")],
        "backports-tarfile",
        Fails("memorix::pins::excluded_by_markers", "poetry.lock:24: backports-tarfile 1.2.0"),
    ),
    row("poetry/tests/fixtures/old_lock", POETRY, "sampleproject", Version("1.3.1")),
    row("poetry/tests/fixtures/up_to_date_lock", POETRY, "docker", Version("4.3.1")),
    row("poetry/tests/fixtures/outdated_lock", POETRY, "certifi", Version("2020.6.20")),
    row("poetry/tests/fixtures/with_path_dependency", POETRY, "bazz", Version("1")),
    row("poetry/tests/fixtures/deleted_directory_dependency", POETRY, "missing", Version("1.2.3")),
    row(
        "poetry/tests/fixtures/invalid_lock",
        POETRY,
        "anything",
        Fails("memorix::pins::syntax", "poetry.lock:1: invalid poetry.lock"),
    ),
    row(
        "poetry/tests/fixtures/incompatible_lock",
        POETRY,
        "anything",
        Fails("memorix::pins::unsupported_version", "poetry.lock:2: poetry.lock lock-version 999.0"),
    ),
    // package-lock.json v1 (and npm-shrinkwrap.json): the top-level dependency, not the nested one.
    row(
        "pnpm/pnpm11/__fixtures__/has-package-lock-json",
        NPM,
        "@pnpm.e2e/dep-of-pkg-with-1-dep",
        Version("101.0.0"),
    ),
    row(
        "pnpm/pnpm11/__fixtures__/has-package-lock-json",
        NPM,
        "@pnpm.e2e/pkg-with-1-dep",
        Version("100.0.0"),
    ),
    chosen(
        "pnpm/pnpm11/__fixtures__/has-package-lock-json",
        NPM,
        "@pnpm.e2e/dep-of-pkg-with-1-dep",
        "100.0.0",
        Version("100.0.0"),
    ),
    row(
        "pnpm/pnpm11/__fixtures__/has-npm-shrinkwrap-json",
        &["npm-shrinkwrap.json"],
        "@pnpm.e2e/dep-of-pkg-with-1-dep",
        Version("101.0.0"),
    ),
    // v2 with workspaces (links are not pins), v3.
    row(
        "pnpm/pnpm11/__fixtures__/workspace-has-shared-package-lock-json",
        NPM,
        "is-negative",
        Version("1.0.1"),
    ),
    row(
        "pnpm/pnpm11/__fixtures__/workspace-has-shared-package-lock-json",
        NPM,
        "is-positive",
        Version("1.0.0"),
    ),
    row(
        "pnpm/pnpm11/__fixtures__/workspace-has-shared-package-lock-json",
        NPM,
        "bar",
        Fails("memorix::pins::not_pinned", "bar"),
    ),
    row(
        "pnpm/pnpm11/__fixtures__/has-package-lock-v3-json",
        NPM,
        "@pnpm.e2e/dep-of-pkg-with-1-dep",
        Version("101.0.0"),
    ),
    row("vscode-copilot-chat", NPM, "lodash", Version("4.17.23")),
    row("vscode-copilot-chat", NPM, "lru-cache", Version("11.1.0")),
    row("vscode-copilot-chat", NPM, "semver", Version("7.7.4")),
    row("vscode-copilot-chat", NPM, "@azure/core-rest-pipeline", Version("1.16.3")),
    row("vscode-copilot-chat", NPM, "express", Version("5.2.1")),
    chosen("vscode-copilot-chat", NPM, "lodash", "4.17.21", Version("4.17.21")),
    row("vscode-copilot-chat/chat-lib", NPM, "semver", Version("7.7.2")),
    row("vscode-copilot-chat/chat-lib", NPM, "typescript", Version("5.8.3")),
    // Two files that agree.
    row(
        "vscode-copilot-chat",
        &["package-lock.json", "chat-lib/package-lock.json"],
        "typescript",
        Version("5.8.3"),
    ),
    // pnpm-lock.yaml 9: pnpm's own workspace (two YAML documents, hundreds of importers, peer
    // suffixes and patch hashes in importer versions).
    row("pnpm", PNPM, "typescript", Version("6.0.3")),
    row("pnpm", PNPM, "jest", Version("30.4.2")),
    row("pnpm", PNPM, "graceful-fs", Version("4.2.11")),
    row("pnpm", PNPM, "chalk", Version("6.0.0")),
    row("pnpm", PNPM, "lru-cache", Version("11.5.2")),
    // The first document pins pnpm itself; a workspace package depends on another pnpm.
    row("pnpm", PNPM, "pnpm", Fails("memorix::pins::ambiguous", "pnpm-lock.yaml:59: pnpm 12.0.0-rc.8")),
    chosen("pnpm", PNPM, "pnpm", "11.22.0", Version("11.22.0")),
    chosen("pnpm", PNPM, "chalk", "4.1.2", Version("4.1.2")),
    // Workspace packages link to each other (`link:`); a published copy is a pin.
    row("pnpm", PNPM, "@pnpm/logger", Version("1100.0.0")),
    row(SBOM, PNPM, "is-positive", Version("3.1.0")),
    row(SBOM, PNPM, "is-odd", Version("3.0.1")),
    row(SBOM, PNPM, "is-number", Version("6.0.0")),
    row("pnpm/pnpm11/__fixtures__/fixture", PNPM, "write-json-file", Version("2.3.0")),
    row("pnpm/pnpm11/__fixtures__/fixtureWithLinks/general", PNPM, "minimatch", Version("3.1.2")),
    // pnpm-lock.yaml 5 (`/name/version` keys; importers, or dependencies at the top).
    row(
        "pnpm/pnpm11/installing/deps-installer/test/fixtures/lockfile-v5",
        PNPM,
        "@pnpm.e2e/dep-of-pkg-with-1-dep",
        Version("100.1.0"),
    ),
    row("pnpm/pnpm11/deps/inspection/list", PNPM, "is-positive", Version("1.0.0")),
    row("pnpm/pnpm11/deps/inspection/list/example", PNPM, "write-pkg", Version("3.1.0")),
    // yarn.lock classic and berry.
    row("pnpm/pnpm11/__fixtures__/has-yarn-lock", YARN, "@pnpm.e2e/pkg-with-1-dep", Version("100.0.0")),
    row("pnpm/pnpm11/__fixtures__/has-yarn2-lock", YARN, "minimatch", Version("3.0.4")),
    row("pnpm/pnpm11/__fixtures__/has-yarn2-lock", YARN, "is-negative", Version("1.0.0")),
    row(
        "pnpm/pnpm11/__fixtures__/has-yarn2-lock",
        YARN,
        "has-yarn2-lock",
        Fails("memorix::pins::not_pinned", "has-yarn2-lock"),
    ),
];

/// Pin files written for these tests (`tests/fixtures/pins/`), for formats the corpus lacks and
/// the edge cases real lockfiles hold; shaped like what the tools write.
const FIXTURE_ROWS: &[Row] = &[
    // pnpm 9 workspace: two importers pin two `next`; one alias (`string-width-cjs`).
    row("pnpm9-workspace", PNPM, "typescript", Version("5.6.3")),
    row("pnpm9-workspace", PNPM, "zod", Version("3.24.1")),
    row("pnpm9-workspace", PNPM, "vitest", Version("2.1.8")),
    // The alias is what the code imports: a pin of its own (fetched as string-width).
    row("pnpm9-workspace", PNPM, "string-width-cjs", Version("4.2.3")),
    row(
        "pnpm9-workspace",
        PNPM,
        "string-width",
        Fails("memorix::pins::ambiguous", "none of which the project depends on directly"),
    ),
    row("pnpm9-workspace", PNPM, "next", Fails("memorix::pins::ambiguous", "pnpm-lock.yaml:58: next 15.1.6")),
    row(
        "pnpm9-workspace",
        PNPM,
        "react",
        Fails("memorix::pins::ambiguous", "several of which the project depends on directly"),
    ),
    chosen("pnpm9-workspace", PNPM, "next", "14.2.23", Version("14.2.23")),
    row("pnpm9-workspace", PNPM, "@acme/ui", Fails("memorix::pins::not_pinned", "@acme/ui")),
    // pnpm 6: `/name@version(peer)` keys, a single project's dependencies at the top.
    row("pnpm6", PNPM, "vue", Version("3.4.21")),
    row("pnpm6", PNPM, "@vue/shared", Version("3.4.21")),
    row("pnpm6", PNPM, "vite", Version("5.1.6")),
    // yarn berry: a `patch:` entry is the release it patches; the workspace is the root.
    row("yarn-berry", YARN, "resolve", Version("1.22.8")),
    row("yarn-berry", YARN, "typescript", Version("5.7.2")),
    row("yarn-berry", YARN, "lodash", Version("4.17.21")),
    row("yarn-berry", YARN, "function-bind", Version("1.1.2")),
    row("yarn-berry", YARN, "acme-site", Fails("memorix::pins::not_pinned", "acme-site")),
    // yarn classic: no roots recorded, so two versions need the mount's choice.
    row("yarn-classic", YARN, "lodash", Version("4.17.21")),
    row("yarn-classic", YARN, "@babel/code-frame", Version("7.23.5")),
    row(
        "yarn-classic",
        YARN,
        "chalk",
        Fails("memorix::pins::ambiguous", "yarn.lock does not record which one"),
    ),
    chosen("yarn-classic", YARN, "chalk", "4.1.2", Version("4.1.2")),
    // Pipfile.lock: default and develop disagree on httpx.
    row("pipfile", PIPFILE, "certifi", Version("2024.8.30")),
    row("pipfile", PIPFILE, "pytest", Version("8.3.3")),
    row(
        "pipfile",
        PIPFILE,
        "httpx",
        Fails("memorix::pins::ambiguous", "Pipfile.lock:43: httpx 0.28.1 (develop)"),
    ),
    chosen("pipfile", PIPFILE, "httpx", "0.27.2", Version("0.27.2")),
    row(
        "pipfile",
        PIPFILE,
        "acme-tools",
        Fails("memorix::pins::unpinned", "(only `@ https://github.com/acme/tools.git`)"),
    ),
    // pylock.toml (PEP 751): markers choose among versions.
    row("pylock", PYLOCK, "anyio", Version("4.8.0")),
    row("pylock", PYLOCK, "numpy", Fails("memorix::pins::markers_needed", "numpy 2.2.2")),
    target("pylock", PYLOCK, &[("python_version", "3.12")], "numpy", Version("2.2.2")),
    target("pylock", PYLOCK, &[("python_version", "3.10")], "numpy", Version("2.1.3")),
    row(
        "pylock",
        PYLOCK,
        "acme-app",
        Fails(
            "memorix::pins::unversioned",
            "pylock.toml:28: acme-app is listed in pylock.toml without a version",
        ),
    ),
    // pdm.lock.
    row("pdm", PDM, "click", Version("8.1.8")),
    row("pdm", PDM, "pytest", Version("8.3.4")),
    target(
        "pdm",
        PDM,
        &[("platform_system", "Linux")],
        "colorama",
        Fails("memorix::pins::excluded_by_markers", "pdm.lock:28: colorama 0.4.6"),
    ),
    // rye: requirements syntax under other names, and recognised by content.
    row("rye", &["requirements.lock"], "httpx", Version("0.28.1")),
    row("rye", &["requirements.lock"], "certifi", Version("2024.12.14")),
    row("rye", &["requirements-dev.lock"], "ruff", Version("0.9.2")),
    row("rye", &["dev-deps.lock"], "pytest", Version("8.3.4")),
    row("rye", &["requirements.lock", "requirements-dev.lock"], "httpx", Version("0.28.1")),
    // pyproject.toml: exact pins in dependencies, extras and groups; a range is no pin.
    row("pyproject", PYPROJECT, "httpx", Version("0.28.1")),
    row("pyproject", PYPROJECT, "pydantic", Version("2.10.4")),
    row("pyproject", PYPROJECT, "mkdocs-material", Version("9.5.49")),
    row("pyproject", PYPROJECT, "ruff", Version("0.9.2")),
    row("pyproject", PYPROJECT, "pytest", Version("8.3.4")),
    row(
        "pyproject",
        PYPROJECT,
        "rich",
        Fails(
            "memorix::pins::unpinned",
            "pyproject.toml:7: rich is not pinned in pyproject.toml (only `>=13.9`)",
        ),
    ),
    // conda environment files: `name=version`, a channel prefix and build, and `pip:`.
    row("conda", CONDA, "numpy", Version("1.26.4")),
    row("conda", CONDA, "pandas", Version("2.2.2")),
    row("conda", CONDA, "python", Version("3.11")),
    row("conda", CONDA, "httpx", Version("0.28.1")),
    row("conda", CONDA, "scipy", Fails("memorix::pins::unpinned", "(only `>=1.11`)")),
    row("conda", CONDA, "matplotlib", Fails("memorix::pins::unpinned", "named without a version")),
    row("conda", CONDA, "rich", Fails("memorix::pins::unpinned", "environment.yml:14: rich")),
    // go.mod: a replace with a version moves the pin; one with a folder is no release.
    row("go", GOMOD, "github.com/gin-gonic/gin", Version("v1.10.0")),
    row("go", GOMOD, "golang.org/x/text", Version("v0.15.0")),
    row("go", GOMOD, "github.com/pkg/errors", Version("v0.9.2-acme.1")),
    row(
        "go",
        GOMOD,
        "github.com/acme/shared",
        Fails(
            "memorix::pins::unversioned",
            "go.mod:11: github.com/acme/shared is listed in go.mod without a version (replaced by ../shared)",
        ),
    ),
    row(
        "go",
        GOMOD,
        "github.com/acme/other",
        Fails("memorix::pins::not_pinned", "searched: go.mod [with go.sum]"),
    ),
    // composer.lock: `v7.2.1` is release 7.2.1.
    row("composer", COMPOSER, "symfony/console", Version("7.2.1")),
    row("composer", COMPOSER, "Guzzlehttp/Guzzle", Version("7.9.2")),
    row("composer", COMPOSER, "phpunit/phpunit", Version("11.5.2")),
    // Gemfile.lock: GIT, PATH and GEM sources; platform variants are one release.
    row("bundler", GEMFILE, "rails", Version("8.0.1.1")),
    row("bundler", GEMFILE, "activesupport", Version("8.0.1.1")),
    row("bundler", GEMFILE, "nokogiri", Version("1.18.1")),
    row("bundler", GEMFILE, "faraday", Version("2.12.2")),
    row("bundler", GEMFILE, "acme-billing", Version("0.3.0")),
    // npm workspaces: members are roots; copies under a member's node_modules count.
    row("npm-workspaces", NPM, "preact", Version("10.25.4")),
    row("npm-workspaces", NPM, "typescript", Version("5.7.2")),
    row(
        "npm-workspaces",
        NPM,
        "next",
        Fails("memorix::pins::ambiguous", "package-lock.json:47: next 13.5.8"),
    ),
    chosen("npm-workspaces", NPM, "next", "15.1.6", Version("15.1.6")),
    // uv.lock: one release from several indexes and with local labels is one version.
    row("uv-torch", UV, "torch", Local("2.6.0", "2.6.0")),
    target(
        "uv-torch",
        UV,
        &[("sys_platform", "win32"), ("platform_machine", "AMD64")],
        "torch",
        Local("2.6.0+cpu", "2.6.0"),
    ),
    row("uv-torch", UV, "serve-core", Version("0.4.0")),
    row(
        "uv-torch",
        UV,
        "serve-api",
        Fails(
            "memorix::pins::unversioned",
            "uv.lock:15: serve-api is listed in uv.lock without a version (editable+packages/api)",
        ),
    ),
];

/// Loads each row's files from `base` and checks what resolving gives.
fn check(base: &Path, rows: &[Row]) {
    let mut failures = Vec::new();
    for r in rows {
        let dir = base.join(r.dir);
        let files: Vec<String> = r.files.iter().map(|f| f.to_string()).collect();
        let markers: BTreeMap<String, String> =
            r.markers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let got = Pins::load(&dir, &files, &markers).and_then(|p| p.resolve(r.library, r.version));
        let what = format!("{}/{:?} {:?} {} {:?}", r.dir, r.files, r.markers, r.library, r.version);
        match (&r.expect, got) {
            (Version(v), Ok(p)) if p.version == *v && p.docs_version == *v => {}
            (Local(v, d), Ok(p)) if p.version == *v && p.docs_version == *d => {}
            (Fails(code, text), Err(e))
                if e.code().is_some_and(|c| c.to_string() == *code) && e.to_string().contains(text) => {}
            (_, Ok(p)) => failures.push(format!("{what}: got {p:?}")),
            (_, Err(e)) => failures
                .push(format!("{what}: got {} {e}", e.code().map(|c| c.to_string()).unwrap_or_default())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn corpus_pins_resolve_as_the_files_say() {
    let base = common::corpus("lockfiles");
    check(&base, ROWS);
}

#[test]
fn fixture_pins_resolve_as_the_files_say() {
    check(&fixtures(), FIXTURE_ROWS);
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pins")
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn every_corpus_lockfile_parses() {
    let base = common::corpus("lockfiles");
    // Counts from `grep -c '^\[\[package\]\]'` (TOML), `name==` lines (requirements),
    // node_modules entries with a version (JSON), `packages:` keys (pnpm) and entries other
    // than the workspace (yarn).
    let cases: &[(&str, Ecosystem, usize)] = &[
        ("ripgrep/0.10.0/Cargo.lock", Ecosystem::Cargo, 86),
        ("ripgrep/12.1.1/Cargo.lock", Ecosystem::Cargo, 65),
        ("ripgrep/ed9d37959f/Cargo.lock", Ecosystem::Cargo, 66),
        ("ripgrep/13.0.0/Cargo.lock", Ecosystem::Cargo, 66),
        ("ripgrep/15.1.0/Cargo.lock", Ecosystem::Cargo, 61),
        ("clap/Cargo.lock", Ecosystem::Cargo, 472),
        ("axum/Cargo.lock", Ecosystem::Cargo, 238),
        ("uv/Cargo.lock", Ecosystem::Cargo, 753),
        ("uv/crates/uv-trampoline/Cargo.lock", Ecosystem::Cargo, 23),
        ("rustsec-cargo-lock/cargo-lock/tests/examples/Cargo.lock", Ecosystem::Cargo, 25),
        ("rustsec-cargo-lock/cargo-lock/tests/examples/Cargo.lock.git-ref", Ecosystem::Cargo, 5),
        ("rustsec-cargo-lock/cargo-lock/tests/examples/Cargo.lock.unused-patch", Ecosystem::Cargo, 2),
        ("uv/uv.lock", Ecosystem::Python, 89),
        ("flask/HEAD/uv.lock", Ecosystem::Python, 83),
        ("click/bba0561d/uv.lock", Ecosystem::Python, 70),
        ("poetry/1.0.10/poetry.lock", Ecosystem::Python, 128),
        ("poetry/1.1.15/poetry.lock", Ecosystem::Python, 91),
        ("poetry/1.8.5/poetry.lock", Ecosystem::Python, 69),
        ("poetry/HEAD/poetry.lock", Ecosystem::Python, 78),
        ("vscode-copilot-chat/package-lock.json", Ecosystem::Npm, 1677),
        ("warehouse/requirements/main.txt", Ecosystem::Python, 122),
        ("warehouse/requirements/lint.txt", Ecosystem::Python, 27),
        ("warehouse/requirements/docs.txt", Ecosystem::Python, 27),
        ("uv/test/requirements/compiled/jupyter.txt", Ecosystem::Python, 93),
        ("uv/crates/uv-requirements-txt/test-data/requirements-txt/semicolon.txt", Ecosystem::Python, 0),
        ("uv/crates/uv-requirements-txt/test-data/requirements-txt/hash.txt", Ecosystem::Python, 0),
        ("uv/crates/uv-requirements-txt/test-data/requirements-txt/empty.txt", Ecosystem::Python, 0),
        ("uv/crates/uv-requirements-txt/test-data/requirements-txt/for-poetry.txt", Ecosystem::Python, 2),
        ("pnpm/pnpm11/__fixtures__/circular/pnpm-lock.yaml", Ecosystem::Npm, 4),
        ("pnpm/pnpm11/__fixtures__/fixture/pnpm-lock.yaml", Ecosystem::Npm, 12),
        ("pnpm/pnpm11/__fixtures__/has-yarn-lock/yarn.lock", Ecosystem::Npm, 2),
        ("pnpm/pnpm11/__fixtures__/has-yarn2-lock/yarn.lock", Ecosystem::Npm, 13),
    ];
    for (rel, eco, count) in cases {
        let file = parse_file(&base.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!((file.ecosystem, file.pins.len()), (*eco, *count), "{rel}");
        assert!(file.pins.iter().all(|p| p.line > 0), "{rel}: a pin without a line");
    }
}

/// Resolves `library` from `files` in `dir` (no target, no mount version).
fn resolved(dir: &Path, files: &[&str], library: &str) -> ResolvedPin {
    let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    let pins = Pins::load(dir, &files, &BTreeMap::new()).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    pins.resolve(library, None).unwrap_or_else(|e| panic!("{library}: {e}"))
}

/// The hashes recorded for `library`, in file order.
fn hashes(dir: &Path, files: &[&str], library: &str) -> Vec<String> {
    resolved(dir, files, library).artifacts.into_iter().filter_map(|a| a.hash).collect()
}

#[test]
#[cfg_attr(memorix_no_corpus, ignore = "needs the shared corpus (../shared/corpus or MEMORIX_CORPUS)")]
fn artifact_hashes_are_the_ones_the_corpus_lockfiles_record() {
    let base = common::corpus("lockfiles");
    // Cargo.lock v4 `checksum`, and v1's `[metadata]` checksums: the .crate's sha256.
    let regex = resolved(&base.join("ripgrep/15.1.0"), CARGO, "regex");
    assert_eq!(
        regex.artifacts,
        [PinnedArtifact {
            file: Some("regex-1.12.2.crate".into()),
            url: None,
            hash: Some("sha256:843bc0191f75f3e22651ae5f1e72939ab2f72a4bc30fa80a066bd66edefc24d4".into()),
        }]
    );
    assert_eq!(
        hashes(&base.join("ripgrep/0.10.0"), CARGO, "regex"),
        ["sha256:2069749032ea3ec200ca51e4a31df41759190a88edca0d2d86ee8bedf7073341"]
    );
    // uv.lock sdist and wheels, with their URLs.
    let werkzeug = resolved(&base.join("flask/HEAD"), UV, "werkzeug");
    assert_eq!(werkzeug.artifacts.len(), 2);
    assert_eq!(werkzeug.artifacts[0].file.as_deref(), Some("werkzeug-3.1.8.tar.gz"));
    assert_eq!(
        werkzeug.artifacts[0].hash.as_deref(),
        Some("sha256:9bad61a4268dac112f1c5cd4630a56ede601b6ed420300677a869083d70a4c44")
    );
    assert_eq!(werkzeug.artifacts[1].file.as_deref(), Some("werkzeug-3.1.8-py3-none-any.whl"));
    assert!(
        werkzeug.artifacts[1]
            .url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://files.pythonhosted.org/"))
    );
    // poetry.lock 2.x `files`, and 1.x `[metadata.files]`.
    let anyio = resolved(&base.join("poetry/HEAD"), POETRY, "anyio");
    assert_eq!(anyio.artifacts[0].file.as_deref(), Some("anyio-4.13.0-py3-none-any.whl"));
    assert_eq!(
        anyio.artifacts[0].hash.as_deref(),
        Some("sha256:08b310f9e24a9594186fd75b4f73f4a4152069e3853f1ed8bfbf58369f4ad708")
    );
    assert_eq!(
        hashes(&base.join("poetry/1.0.10"), POETRY, "appdirs"),
        [
            "sha256:a841dacd6b99318a741b166adb07e19ee71a274450e68237b4650ca1055ab128",
            "sha256:7d5d0167b2b1ba821647616af46a749d1c653740dd0d2415100fe26e27afdf41"
        ]
    );
    // package-lock.json `integrity` (SRI) and `resolved`.
    let lodash = resolved(&base.join("vscode-copilot-chat"), NPM, "lodash");
    assert_eq!(
        lodash.artifacts,
        [PinnedArtifact {
            file: Some("lodash-4.17.23.tgz".into()),
            url: Some("https://registry.npmjs.org/lodash/-/lodash-4.17.23.tgz".into()),
            hash: Some(
                "sha512-LgVTMpQtIopCi79SJeDiP0TfWi5CNEc/L/aRdTh3yIvmZXTnheWpKjSZhnvMl8iXbC1tFg9gdHHDMLoV7CnG+w==".into()
            ),
        }]
    );
    // requirements `--hash` options, any of which pip accepts.
    assert_eq!(
        hashes(&base.join("warehouse/requirements"), &["main.txt"], "alembic"),
        [
            "sha256:4e02ed2aa796bd179965041afa092c55b51fb077de19d61835673cc80672c01c",
            "sha256:5334f32314fb2a56d86b4c4dd1ae34b08c03cae4cb888bc699942104d66bc245"
        ]
    );
    // pnpm `resolution.integrity`; yarn classic `integrity`; berry's checksum is of yarn's zip.
    assert_eq!(
        hashes(&base.join("pnpm/pnpm11/__fixtures__/fixture"), PNPM, "is-positive"),
        ["sha512-8ND1j3y9/HP94TOvGzr69/FgbkX2ruOldhLEsTWwcJVfo4oRjwemJmJxt7RJkKYH8tz7vYBP9JcKQY8CLuJ90Q=="]
    );
    let yarn =
        resolved(&base.join("pnpm/pnpm11/__fixtures__/has-yarn-lock"), YARN, "@pnpm.e2e/pkg-with-1-dep");
    assert_eq!(
        yarn.artifacts[0].hash.as_deref(),
        Some(
            "sha512-tZBohBD7WeOtm0hBUQl0FlPvuTwyrdSn2V45P4jd2arjwKxM5YULEAtD1J42bKuEOJls4vS4/1v3lgS8qTfA2Q=="
        )
    );
    assert!(
        yarn.artifacts[0].url.as_deref().is_some_and(
            |u| u.ends_with("pkg-with-1-dep-100.0.0.tgz#2845d276feb3153c4abc107728ddbe0f7ce75a45")
        )
    );
    assert_eq!(
        resolved(&base.join("pnpm/pnpm11/__fixtures__/has-yarn2-lock"), YARN, "minimatch").artifacts,
        []
    );
}

#[test]
fn artifact_hashes_of_the_fixture_formats() {
    let f = fixtures();
    assert_eq!(
        hashes(&f.join("pipfile"), PIPFILE, "certifi"),
        [
            "sha256:922820b53db7a7257ffbda3f597266d435245903d80737e34f8a45ff3e3230d8",
            "sha256:bec941d2aa8195e248a60b31ff9f0558284cf01a52591ceda73ea9afffd69fd9"
        ]
    );
    let anyio = resolved(&f.join("pylock"), PYLOCK, "anyio");
    let files: Vec<_> = anyio.artifacts.iter().map(|a| a.file.as_deref().unwrap_or_default()).collect();
    assert_eq!(files, ["anyio-4.8.0.tar.gz", "anyio-4.8.0-py3-none-any.whl"]);
    assert_eq!(
        anyio.artifacts[0].hash.as_deref(),
        Some("sha256:1d9fe889df5212298c0c0723fa20479d1b94883a2df44bd3897aa91083316f7a")
    );
    assert_eq!(
        hashes(&f.join("pdm"), PDM, "click"),
        [
            "sha256:63c132bbbed01578a06712a2d1f497bb62d9c1c0d329b7903a866228027263b2",
            "sha256:ed53c9d8990d83c2a27deae68e4ee337473f6330c040a31d4225c9574d16096a"
        ]
    );
    assert_eq!(
        hashes(&f.join("go"), GOMOD, "github.com/gin-gonic/gin"),
        ["h1:nTuyha1TYqgedzytsKYqna+DfLos46nTv2ygFy86HFU="]
    );
    // The replacement's hash: it is what is downloaded.
    assert_eq!(
        hashes(&f.join("go"), GOMOD, "github.com/pkg/errors"),
        ["h1:qd3dX0Jp9mH0bXyqPrW0YbW2w8kmZ0cZ6Jp3c1m4Fh8="]
    );
    assert_eq!(
        hashes(&f.join("composer"), COMPOSER, "symfony/console"),
        ["sha1:9a1c0e4b7d3f6a2c5e8b1d4f7a0c3e6b9d2f5a8c"]
    );
    assert_eq!(
        hashes(&f.join("bundler"), GEMFILE, "faraday"),
        ["sha256:157339c25c7b8bcb739f5cf1207cb0cefe8fa1c65027266bcbc34c90c84b9ad6"]
    );
    let pnpm = resolved(&f.join("pnpm9-workspace"), PNPM, "zod");
    assert_eq!((pnpm.ecosystem, pnpm.artifacts.len()), (Ecosystem::Npm, 1));
}

#[test]
fn uv_local_labels_across_indexes_are_one_release() {
    let dir = fixtures().join("uv-torch");
    let torch = resolved(&dir, UV, "torch");
    assert_eq!((torch.version.as_str(), torch.docs_version.as_str()), ("2.6.0", "2.6.0"));
    assert_eq!(torch.same_release, ["2.6.0+cpu", "2.6.0+cu124"]);
    assert_eq!(torch.at, "uv.lock:31");
    assert_eq!(torch.reason, Reason::Only);
}

#[test]
fn a_markers_error_names_each_marker_once_and_a_target_that_settles_it() {
    let dir = fixtures().join("uv-torch");
    let pins = Pins::load(&dir, &["uv.lock".to_string()], &BTreeMap::new()).expect("load");
    let e = pins.resolve("numpy", None).expect_err("two numpy under different markers");
    assert_eq!(e.code().map(|c| c.to_string()).as_deref(), Some("memorix::pins::markers_needed"));
    let message = e.to_string();
    let related: Vec<String> = e.related().expect("sites").map(|r| r.to_string()).collect();
    let everything = format!("{message}\n{}", related.join("\n"));
    for marker in ["sys_platform == 'darwin'", "sys_platform == 'win32'"] {
        assert_eq!(everything.matches(marker).count(), 1, "{everything}");
    }
    assert!(everything.len() < 1000, "{} bytes: {everything}", everything.len());
    // The suggested target declares every variable the markers read, and it settles numpy.
    let help = e.help().expect("help").to_string();
    let declared =
        help.split_once("[pins] markers = { ").and_then(|(_, r)| r.split_once(" }")).expect(&help).0;
    let markers: BTreeMap<String, String> = declared
        .split(", ")
        .map(|kv| {
            kv.split_once(" = ").map(|(k, v)| (k.to_string(), v.trim_matches('"').to_string())).expect(kv)
        })
        .collect();
    assert!(markers.contains_key("platform_machine") && markers.contains_key("sys_platform"), "{help}");
    let settled = Pins::load(&dir, &["uv.lock".to_string()], &markers).expect("load").resolve("numpy", None);
    assert!(settled.is_ok(), "{help}: {settled:?}");
    assert_eq!(settled.expect("settled").reason, Reason::Target);
}

#[test]
fn a_bom_or_utf16_requirements_file_reads_as_pip_reads_it() {
    let dir = common::tempdir();
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.path().join(name), bytes).expect("write");
    write("bom.txt", b"\xEF\xBB\xBFdjango==4.2.17\nsix==1.16.0\n");
    // `pip freeze > requirements.txt` in Windows PowerShell 5: UTF-16 LE, a BOM, CRLF.
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("django==4.2.17\r\nsix==1.16.0\r\n".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    write("freeze.txt", &utf16);
    for file in ["bom.txt", "freeze.txt"] {
        let django = resolved(dir.path(), &[file], "django");
        assert_eq!((django.version.as_str(), django.at.as_str()), ("4.2.17", &*format!("{file}:1")));
        assert_eq!(resolved(dir.path(), &[file], "six").version, "1.16.0");
    }
    write("broken.txt", &[0xFF, 0xFE, 0x64]);
    let e = Pins::load(dir.path(), &["broken.txt".to_string()], &BTreeMap::new()).expect_err("odd UTF-16");
    assert_eq!(e.code().map(|c| c.to_string()).as_deref(), Some("memorix::pins::encoding"));
    assert_eq!(e.to_string(), "broken.txt: the file is not valid UTF-16");
}

#[test]
fn not_pinned_names_the_included_files_and_a_vcs_line_naming_the_library() {
    let dir = fixtures().join("requirements-messages");
    let pins = Pins::load(&dir, &["requirements.txt".to_string()], &BTreeMap::new()).expect("load");
    let e = pins.resolve("flask", None).expect_err("flask is nowhere");
    assert_eq!(
        e.to_string(),
        "flask is not pinned in any pin file (searched: requirements.txt [with requirements/base.txt, requirements/constraints.txt])"
    );
    let e = pins.resolve("unicode_slugify", None).expect_err("only a VCS line");
    assert_eq!(e.code().map(|c| c.to_string()).as_deref(), Some("memorix::pins::unpinned"));
    assert!(e.to_string().starts_with("requirements/base.txt:3: unicode_slugify is not pinned"), "{e}");
    assert!(e.to_string().contains("#egg=unicode-slugify==0.1.5"), "{e}");
    assert_eq!(pins.resolve("gunicorn", None).expect("gunicorn").version, "23.0.0");
}

#[test]
fn the_pins_command_shows_each_requested_library_its_line_and_why() {
    let env = common::TestEnv::new();
    let lock = std::fs::read_to_string(fixtures().join("uv-torch/uv.lock")).expect("fixture");
    env.write("uv.lock", &lock);
    let manifest = |markers: &str| {
        format!(
            "[pins]\nfiles = [\"uv.lock\"]\n{markers}\n[mounts.\"libs/torch\"]\nselect = [\"docs/torch/@pin\"]\n\n\
             [mounts.\"libs/core\"]\nselect = [\"docs/core/@pin\"]\nlibrary = \"serve-core\"\n"
        )
    };
    env.write("memorix.toml", &manifest(""));
    let out = env.run(&["pins", "-v"]).ok();
    let expected = "libs/core (docs/core/@pin)\n  serve-core 0.4.0 (python) at uv.lock:26\n  why: the only version pinned\n\
                    libs/torch (docs/torch/@pin)\n  torch 2.6.0 (python) at uv.lock:31\n  why: the only version pinned\n  \
                    same release: 2.6.0+cpu, 2.6.0+cu124\n  marker: sys_platform == 'darwin'\n  \
                    artifact: torch-2.6.0-cp311-none-macosx_11_0_arm64.whl sha256:2bb8987f3bb1ef2675897034402373ddfc8f5ef0e156e2d8cfc47cacafdda4a9\n";
    assert_eq!(out.stdout, expected);

    env.write(
        "memorix.toml",
        &manifest("markers = { sys_platform = \"win32\", platform_machine = \"AMD64\" }"),
    );
    let json = env.run(&["pins", "--json"]).ok().json();
    let torch = &json[1];
    assert_eq!(torch["mount"], "libs/torch");
    assert_eq!(
        (torch["version"].as_str(), torch["docs_version"].as_str()),
        (Some("2.6.0+cpu"), Some("2.6.0"))
    );
    assert_eq!((torch["reason"].as_str(), torch["at"].as_str()), (Some("target"), Some("uv.lock:53")));
    assert_eq!(torch["ecosystem"], "python");
    assert_eq!(
        torch["artifacts"][0]["hash"],
        "sha256:24c9d3d13b9ea769dd7bd5c11cfa1fc463fd7391397156565484565ca685d908"
    );
    let text = env.run(&["pins"]).ok().stdout;
    assert!(text.contains("  docs: 2.6.0 (the label is stripped)\n"), "{text}");
    assert!(text.contains("  why: the marker matches [pins] markers\n"), "{text}");

    env.write(
        "memorix.toml",
        &manifest("")
            .replace("docs/core/@pin", "docs/nothere/@pin")
            .replace("library = \"serve-core\"\n", ""),
    );
    let err = env.run(&["pins"]).expect(2).stderr;
    assert!(err.contains("nothere is not pinned in any pin file (searched: uv.lock)"), "{err}");
}
