//! Each rule of which pin a mount follows (book: design/versions.md#which-pin-a-mount-follows),
//! on small inline pin files.

use std::collections::BTreeMap;

use miette::Diagnostic;

use super::error::PinError as Error;
use super::*;

/// A temporary project directory holding pin files.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        Project { dir }
    }

    fn load(&self, files: &[&str], markers: &[(&str, &str)]) -> Result<Pins> {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let markers: BTreeMap<String, String> =
            markers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Pins::load(self.dir.path(), &files, &markers)
    }

    fn resolve(&self, files: &[&str], markers: &[(&str, &str)], lib: &str) -> Result<ResolvedPin> {
        self.load(files, markers)?.resolve(lib, None)
    }

    fn version(&self, files: &[&str], lib: &str) -> String {
        match self.resolve(files, &[], lib) {
            Ok(r) => r.version,
            Err(e) => panic!("{lib}: {e}"),
        }
    }

    fn parse(&self, name: &str) -> Result<PinFile> {
        parse_file(&self.dir.path().join(name))
    }
}

fn code(e: &Error) -> String {
    e.code().map(|c| c.to_string()).unwrap_or_default()
}

/// The error, which must have `code`.
fn expect_err<T: std::fmt::Debug>(r: Result<T>, want: &str) -> Error {
    match r {
        Ok(v) => panic!("expected {want}, got {v:?}"),
        Err(e) => {
            assert_eq!(code(&e), want, "{e}");
            *e
        }
    }
}

#[test]
fn names_normalise_per_ecosystem() {
    assert_eq!(normalize(Ecosystem::Python, "Foo__Bar.baz-Qux"), "foo-bar-baz-qux");
    assert_eq!(normalize(Ecosystem::Python, "zope.interface"), "zope-interface");
    assert_eq!(normalize(Ecosystem::Cargo, "Serde_JSON"), "serde-json");
    assert_eq!(normalize(Ecosystem::Npm, "@Scope/Some_Pkg"), "@Scope/Some_Pkg");
}

#[test]
fn docs_version_drops_only_a_local_label() {
    assert_eq!(docs_version(Ecosystem::Python, "2.0.1+cu117"), "2.0.1");
    assert_eq!(docs_version(Ecosystem::Python, "2.0.1"), "2.0.1");
    assert_eq!(docs_version(Ecosystem::Cargo, "1.0.6+spec-1.1.0"), "1.0.6");
    assert_eq!(docs_version(Ecosystem::Npm, "0.0.5-php.2"), "0.0.5-php.2");
}

#[test]
fn the_format_comes_from_the_file_name() {
    let p = Project::new(&[
        ("Cargo.lock", "version = 4\n"),
        ("uv.lock", "version = 1\n"),
        ("poetry.lock", ""),
        ("package-lock.json", "{}"),
        ("npm-shrinkwrap.json", "{}"),
        ("requirements-dev.txt", ""),
        ("requirements.in", ""),
        ("requirements.lock", ""),
        ("yarn.lock", ""),
        ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
        ("Pipfile.lock", "{}"),
        ("pylock.toml", "lock-version = '1.0'\n"),
        ("pylock.dev.toml", "lock-version = '1.0'\n"),
        ("pdm.lock", ""),
        ("pyproject.toml", "[project]\nname = 'app'\n"),
        ("environment.yml", "name: app\n"),
        ("go.mod", "module example.com/app\n"),
        ("composer.lock", "{}"),
        ("Gemfile.lock", ""),
        ("deps.lock", "this is no lockfile\n"),
    ]);
    for (name, eco) in [
        ("Cargo.lock", Ecosystem::Cargo),
        ("uv.lock", Ecosystem::Python),
        ("poetry.lock", Ecosystem::Python),
        ("package-lock.json", Ecosystem::Npm),
        ("npm-shrinkwrap.json", Ecosystem::Npm),
        ("requirements-dev.txt", Ecosystem::Python),
        ("requirements.in", Ecosystem::Python),
        ("requirements.lock", Ecosystem::Python),
        ("yarn.lock", Ecosystem::Npm),
        ("pnpm-lock.yaml", Ecosystem::Npm),
        ("Pipfile.lock", Ecosystem::Python),
        ("pylock.toml", Ecosystem::Python),
        ("pylock.dev.toml", Ecosystem::Python),
        ("pdm.lock", Ecosystem::Python),
        ("pyproject.toml", Ecosystem::Python),
        ("environment.yml", Ecosystem::Python),
        ("go.mod", Ecosystem::Go),
        ("composer.lock", Ecosystem::Composer),
        ("Gemfile.lock", Ecosystem::RubyGems),
    ] {
        assert_eq!(p.parse(name).expect(name).ecosystem, eco, "{name}");
    }
    let e = expect_err(p.parse("deps.lock"), "memorix::pins::unknown_format");
    assert!(e.to_string().contains("deps.lock"), "{e}");
    let help = e.help().expect("help").to_string();
    for format in ["pnpm-lock.yaml", "yarn.lock", "Pipfile.lock", "pylock.toml", "go.mod", "Gemfile.lock"] {
        assert!(help.contains(format), "{help}");
    }
}

#[test]
fn a_missing_pin_file_is_an_error_naming_it() {
    let p = Project::new(&[]);
    let e = expect_err(p.load(&["requirements.txt"], &[]), "memorix::pins::read");
    assert!(e.to_string().contains("requirements.txt"), "{e}");
}

#[test]
fn requirements_lines_pin_with_extras_local_versions_markers_and_comments() {
    let p = Project::new(&[(
        "requirements.txt",
        "# a comment\n\
         Flask[async,dotenv]==3.0.3  # trailing comment\n\
         torch==2.0.1+cu117; sys_platform == 'linux'\n\
         attrs===23.1.0\n\
         six == 1.16.0\n",
    )]);
    let file = p.parse("requirements.txt").expect("parse");
    let got: Vec<(&str, &str, Option<&str>, usize)> = file
        .pins
        .iter()
        .map(|p| (p.name.as_str(), p.version.as_str(), p.markers.as_deref(), p.line))
        .collect();
    assert_eq!(
        got,
        [
            ("Flask", "3.0.3", None, 2),
            ("torch", "2.0.1+cu117", Some("sys_platform == 'linux'"), 3),
            ("attrs", "23.1.0", None, 4),
            ("six", "1.16.0", None, 5),
        ]
    );
    assert!(file.pins.iter().all(|p| p.direct && p.source.is_none()));

    let torch = p.resolve(&["requirements.txt"], &[], "torch").expect("torch");
    assert_eq!(
        torch,
        ResolvedPin {
            library: "torch".into(),
            package: "torch".into(),
            ecosystem: Ecosystem::Python,
            file: "requirements.txt".into(),
            version: "2.0.1+cu117".into(),
            docs_version: "2.0.1".into(),
            at: "requirements.txt:3".into(),
            reason: Reason::Only,
            markers: Some("sys_platform == 'linux'".into()),
            same_release: Vec::new(),
            artifacts: Vec::new(),
        }
    );
    assert_eq!(p.resolve(&["requirements.txt"], &[], "flask").expect("flask").library, "flask");
}

#[test]
fn continuations_and_hashes_are_read_as_one_requirement() {
    let p = Project::new(&[(
        "requirements.txt",
        "alembic==1.4.3 \\\n    --hash=sha256:4e02ed2a \\\n    --hash=sha256:5334f323 \\\n    # via -r main.in\n\
         werkzeug==2.2.3 ; python_version >= \"3.8\" --hash=sha256:2e1ccc94\n\
         urllib3==1.26.15 ; python_version >= \"3.8\" \\\n    --hash sha256:8a388717\n",
    )]);
    let file = p.parse("requirements.txt").expect("parse");
    let got: Vec<(&str, &str, Option<&str>, usize)> = file
        .pins
        .iter()
        .map(|p| (p.name.as_str(), p.version.as_str(), p.markers.as_deref(), p.line))
        .collect();
    assert_eq!(
        got,
        [
            ("alembic", "1.4.3", None, 1),
            ("werkzeug", "2.2.3", Some("python_version >= \"3.8\""), 5),
            ("urllib3", "1.26.15", Some("python_version >= \"3.8\""), 6),
        ]
    );
}

#[test]
fn odd_lines_never_fail_a_requirements_file() {
    let p = Project::new(&[(
        "requirements.txt",
        "--no-binary fred\n--only-binary wilma\n--extra-index-url https://download.pytorch.org/whl/cpu\n\
         -i https://pypi.org/simple\n--index-url https://pypi.org/simple\n--find-links ./wheels\n--pre\n\
         --trusted-host example.org\n-e ./editable[d,dev]\n-e git+https://github.com/a/b.git#egg=b\n\
         ./local/path\nhttps://example.org/pkg.zip#egg=pkg\nhttpx>=0.23\nnumpy\n\
         pandas @ git+https://github.com/pandas-dev/pandas.git#egg=pandas\nthis is not a requirement (\n\
         django==2.1.15\n",
    )]);
    let file = p.parse("requirements.txt").expect("lenient parse");
    assert_eq!(file.pins.len(), 1, "{:?}", file.pins);
    assert_eq!(p.version(&["requirements.txt"], "django"), "2.1.15");
    let unpinned: Vec<(&str, &str)> =
        file.unpinned.iter().map(|p| (p.name.as_str(), p.version.as_str())).collect();
    assert_eq!(
        unpinned,
        [
            ("b", "@ git+https://github.com/a/b.git#egg=b"),
            ("pkg", "@ https://example.org/pkg.zip#egg=pkg"),
            ("httpx", ">=0.23"),
            ("numpy", ""),
            ("pandas", "@ git+https://github.com/pandas-dev/pandas.git#egg=pandas"),
        ]
    );
}

#[test]
fn a_library_with_only_a_range_is_an_error_saying_to_compile() {
    let p = Project::new(&[("requirements.txt", "flask==3.0.3\nhttpx>=0.23\nnumpy\n")]);
    let e = expect_err(p.resolve(&["requirements.txt"], &[], "httpx"), "memorix::pins::unpinned");
    assert_eq!(
        e.to_string(),
        "requirements.txt:2: httpx is not pinned in requirements.txt (only `>=0.23`): compile the file (pip-compile / uv pip compile) or pin it with =="
    );
    let e = expect_err(p.resolve(&["requirements.txt"], &[], "numpy"), "memorix::pins::unpinned");
    assert!(e.to_string().starts_with("requirements.txt:3: numpy is not pinned"), "{e}");
    assert!(e.to_string().contains("named without a version"), "{e}");
}

#[test]
fn a_range_in_one_file_does_not_hide_a_pin_in_another() {
    let p = Project::new(&[("requirements.in", "httpx>=0.23\n"), ("requirements.txt", "httpx==0.28.1\n")]);
    assert_eq!(p.version(&["requirements.in", "requirements.txt"], "httpx"), "0.28.1");
}

#[test]
fn includes_are_relative_to_the_including_file() {
    let p = Project::new(&[
        ("requirements/dev.txt", "-r base.txt\n--constraint ../constraints.txt\npytest==8.1.1\n"),
        ("requirements/base.txt", "\n-c sub/pins.txt\nflask==3.0.3\n"),
        ("requirements/sub/pins.txt", "click==8.1.7\n"),
        ("constraints.txt", "django==2.1.15\n"),
    ]);
    let file = p.parse("requirements/dev.txt").expect("parse");
    let got: Vec<(&str, String, usize)> = file
        .pins
        .iter()
        .map(|pin| {
            let rel = pin.file.strip_prefix(p.dir.path()).expect("inside").display().to_string();
            (pin.name.as_str(), rel, pin.line)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("click", "requirements/sub/pins.txt".to_string(), 1),
            ("flask", "requirements/base.txt".to_string(), 3),
            ("django", "requirements/../constraints.txt".to_string(), 1),
            ("pytest", "requirements/dev.txt".to_string(), 3),
        ]
    );
    let click = p.resolve(&["requirements/dev.txt"], &[], "click").expect("click");
    assert_eq!((click.file.as_str(), click.version.as_str()), ("requirements/dev.txt", "8.1.7"));
}

#[test]
fn a_file_included_twice_without_a_cycle_is_fine() {
    let p = Project::new(&[
        ("all.txt", "-r a.txt\n-r b.txt\n"),
        ("a.txt", "-r common.txt\n"),
        ("b.txt", "-r common.txt\n"),
        ("common.txt", "six==1.16.0\n"),
    ]);
    assert_eq!(p.version(&["all.txt"], "six"), "1.16.0");
}

#[test]
fn an_include_cycle_is_an_error_naming_the_chain() {
    let p = Project::new(&[("a.txt", "six==1.16.0\n-r b.txt\n"), ("b.txt", "\n\n-r a.txt\n")]);
    let e = expect_err(p.load(&["a.txt"], &[]), "memorix::pins::include_cycle");
    assert_eq!(e.to_string(), "b.txt:3: requirements files include each other: a.txt -> b.txt -> a.txt");
}

#[test]
fn a_missing_include_is_an_error_naming_the_including_line() {
    let p = Project::new(&[("req/dev.txt", "pytest==8.1.1\n\n-r nothere.txt\n")]);
    let e = expect_err(p.load(&["req/dev.txt"], &[]), "memorix::pins::missing_include");
    assert_eq!(e.to_string(), "req/dev.txt:3: included file req/nothere.txt does not exist");
    let labels: Vec<_> = e.labels().expect("a label").collect();
    assert_eq!(labels.len(), 1);
}

#[test]
fn not_pinned_anywhere_names_the_library_and_the_files_searched() {
    let p = Project::new(&[("a.txt", "six==1.16.0\n"), ("b.txt", "flask==3.0.3\n")]);
    let e = expect_err(p.resolve(&["a.txt", "b.txt"], &[], "httpx"), "memorix::pins::not_pinned");
    assert_eq!(e.to_string(), "httpx is not pinned in any pin file (searched: a.txt, b.txt)");
}

#[test]
fn files_that_disagree_are_an_error_listing_each_pin() {
    let p = Project::new(&[("a.txt", "six==1.16.0\n"), ("b.txt", "\nSix==1.15.0\n")]);
    let e = expect_err(p.resolve(&["a.txt", "b.txt"], &[], "six"), "memorix::pins::disagree");
    let msg = e.to_string();
    assert!(msg.contains("a.txt:1: six 1.16.0"), "{msg}");
    assert!(msg.contains("b.txt:2: Six 1.15.0"), "{msg}");
    assert_eq!(e.related().expect("sites").count(), 2);
}

#[test]
fn files_that_agree_on_the_docs_version_are_fine() {
    let p = Project::new(&[
        ("linux.txt", "torch==2.4.0+cpu; sys_platform == 'linux'\n"),
        ("darwin.txt", "torch==2.4.0; sys_platform == 'darwin'\n"),
    ]);
    let r = p.resolve(&["linux.txt", "darwin.txt"], &[], "torch").expect("agree");
    assert_eq!(
        (r.file.as_str(), r.version.as_str(), r.docs_version.as_str()),
        ("linux.txt", "2.4.0+cpu", "2.4.0")
    );
}

const PER_PLATFORM: &str = "numpy==1.24.3; sys_platform != 'win32'\nnumpy==1.26.4; sys_platform == 'win32'\n";

#[test]
fn a_library_pinned_per_marker_needs_a_declared_target() {
    let p = Project::new(&[("req.txt", PER_PLATFORM)]);
    let e = expect_err(p.resolve(&["req.txt"], &[], "numpy"), "memorix::pins::markers_needed");
    let msg = e.to_string();
    assert!(msg.contains("req.txt:1: numpy 1.24.3; sys_platform != 'win32'"), "{msg}");
    assert!(msg.contains("req.txt:2: numpy 1.26.4; sys_platform == 'win32'"), "{msg}");
    let help = e.help().expect("help").to_string();
    assert!(help.contains("add to memorix.toml:  [pins] markers = { sys_platform = \"win32\" }"), "{help}");
}

#[test]
fn the_declared_target_picks_among_marked_pins() {
    let p = Project::new(&[("req.txt", PER_PLATFORM)]);
    assert_eq!(
        p.resolve(&["req.txt"], &[("sys_platform", "linux")], "numpy").expect("linux").version,
        "1.24.3"
    );
    assert_eq!(
        p.resolve(&["req.txt"], &[("sys_platform", "win32")], "numpy").expect("win32").version,
        "1.26.4"
    );
}

#[test]
fn one_pin_resolves_whatever_its_marker_when_no_target_is_declared() {
    let p = Project::new(&[("req.txt", "pywin32==306; sys_platform == 'win32'\n")]);
    assert_eq!(p.version(&["req.txt"], "pywin32"), "306");
}

#[test]
fn a_target_that_excludes_every_pin_is_an_error() {
    let p = Project::new(&[("req.txt", "pywin32==306; sys_platform == 'win32'\n")]);
    let e = expect_err(
        p.resolve(&["req.txt"], &[("sys_platform", "linux")], "pywin32"),
        "memorix::pins::excluded_by_markers",
    );
    assert!(e.to_string().contains("req.txt:1: pywin32 306"), "{e}");
}

#[test]
fn a_marker_on_an_undeclared_variable_is_an_error_naming_it() {
    let p = Project::new(&[("req.txt", "six==1.16.0\ndotenv==1.0.0 ; python_version >= \"3.8\"\n")]);
    let e = expect_err(
        p.resolve(&["req.txt"], &[("sys_platform", "linux")], "dotenv"),
        "memorix::pins::undeclared_marker",
    );
    assert!(e.to_string().starts_with("req.txt:2: "), "{e}");
    assert!(e.to_string().contains("needs `python_version`"), "{e}");
    // Unrelated pins are not evaluated.
    assert_eq!(p.resolve(&["req.txt"], &[("sys_platform", "linux")], "six").expect("six").version, "1.16.0");
}

#[test]
fn python_version_settles_full_version_markers_at_minor_boundaries() {
    let p = Project::new(&[(
        "req.txt",
        "sphinx==8.1.3 ; python_full_version < '3.11'\nsphinx==8.2.3 ; python_full_version >= '3.11'\n\
         tomli==2.0.1 ; python_full_version < '3.11.4'\n",
    )]);
    assert_eq!(
        p.resolve(&["req.txt"], &[("python_version", "3.10")], "sphinx").expect("3.10").version,
        "8.1.3"
    );
    assert_eq!(
        p.resolve(&["req.txt"], &[("python_version", "3.12")], "sphinx").expect("3.12").version,
        "8.2.3"
    );
    let e = expect_err(
        p.resolve(&["req.txt"], &[("python_version", "3.11")], "tomli"),
        "memorix::pins::undeclared_marker",
    );
    assert!(e.to_string().contains("needs `python_full_version`"), "{e}");
    let full = [("python_full_version", "3.11.2")];
    assert_eq!(p.resolve(&["req.txt"], &full, "tomli").expect("3.11.2").version, "2.0.1");
    assert_eq!(p.resolve(&["req.txt"], &full, "sphinx").expect("full").version, "8.2.3");
}

#[test]
fn a_bad_target_is_an_error() {
    let p = Project::new(&[("req.txt", "six==1.16.0\n")]);
    let e = expect_err(p.load(&["req.txt"], &[("sys_platfrom", "linux")]), "memorix::pins::bad_target");
    assert!(e.help().expect("help").to_string().contains("did you mean `sys_platform`?"));
    expect_err(p.load(&["req.txt"], &[("python_version", "three")]), "memorix::pins::bad_target");
}

#[test]
fn an_invalid_marker_on_the_requested_pin_is_an_error_with_its_line() {
    let p = Project::new(&[(
        "poetry.lock",
        "[[package]]\nname = \"six\"\nversion = \"1.16.0\"\nmarkers = \"sys_platform ==\"\n",
    )]);
    let e = expect_err(
        p.resolve(&["poetry.lock"], &[("sys_platform", "linux")], "six"),
        "memorix::pins::bad_marker",
    );
    assert!(e.to_string().starts_with("poetry.lock:2: invalid marker"), "{e}");
}

const CARGO_TWO_SYN: &str = r#"version = 4

[[package]]
name = "app"
version = "0.1.0"
dependencies = [
 "proc-macro2",
 "syn 2.0.87",
]

[[package]]
name = "proc-macro2"
version = "1.0.86"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "serde_derive"
version = "1.0.200"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "syn 1.0.109",
]

[[package]]
name = "syn"
version = "1.0.109"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "syn"
version = "2.0.87"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "toml"
version = "0.8.14"
source = "registry+https://github.com/rust-lang/crates.io-index"

[[package]]
name = "toml"
version = "1.0.6+spec-1.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;

#[test]
fn cargo_uses_the_version_the_workspace_depends_on_directly() {
    let p = Project::new(&[("Cargo.lock", CARGO_TWO_SYN)]);
    let file = p.parse("Cargo.lock").expect("parse");
    let syn: Vec<(&str, bool, usize)> = file
        .pins
        .iter()
        .filter(|p| p.name == "syn")
        .map(|p| (p.version.as_str(), p.direct, p.line))
        .collect();
    assert_eq!(syn, [("1.0.109", false, 25), ("2.0.87", true, 30)]);
    assert_eq!(file.pins[1].source.as_deref(), Some("registry+https://github.com/rust-lang/crates.io-index"));
    let r = p.resolve(&["Cargo.lock"], &[], "syn").expect("syn");
    assert_eq!((r.ecosystem, r.version.as_str()), (Ecosystem::Cargo, "2.0.87"));
    assert_eq!(p.version(&["Cargo.lock"], "proc_macro2"), "1.0.86");
}

#[test]
fn several_versions_none_direct_is_an_error_that_the_mount_version_settles() {
    let p = Project::new(&[("Cargo.lock", CARGO_TWO_SYN)]);
    let e = expect_err(p.resolve(&["Cargo.lock"], &[], "toml"), "memorix::pins::ambiguous");
    let msg = e.to_string();
    assert!(msg.contains("Cargo.lock:35: toml 0.8.14"), "{msg}");
    assert!(msg.contains("Cargo.lock:40: toml 1.0.6+spec-1.1.0"), "{msg}");
    assert!(e.help().expect("help").to_string().contains("version = \"0.8.14\""));

    let pins = p.load(&["Cargo.lock"], &[]).expect("load");
    assert_eq!(pins.resolve("toml", Some("0.8.14")).expect("exact").version, "0.8.14");
    // The docs version chooses too, and the pin keeps its build metadata.
    let r = pins.resolve("toml", Some("1.0.6")).expect("docs version");
    assert_eq!((r.version.as_str(), r.docs_version.as_str()), ("1.0.6+spec-1.1.0", "1.0.6"));
    // It also overrides the direct rule.
    assert_eq!(pins.resolve("syn", Some("1.0.109")).expect("explicit").version, "1.0.109");

    let e = expect_err(pins.resolve("toml", Some("0.9.0")), "memorix::pins::not_a_candidate");
    assert!(e.to_string().contains("Cargo.lock:35: toml 0.8.14"), "{e}");
    assert!(e.help().expect("help").to_string().contains("\"0.8.14\", \"1.0.6+spec-1.1.0\""));
    expect_err(pins.resolve("proc-macro2", Some("9.9.9")), "memorix::pins::not_a_candidate");
}

#[test]
fn cargo_one_version_from_two_sources_is_one_version() {
    let lock = r#"version = 3

[[package]]
name = "bytes"
version = "1.2.1"
source = "registry+https://github.com/rustsec/rustsec"

[[package]]
name = "bytes"
version = "1.2.1"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;
    let p = Project::new(&[("Cargo.lock", lock)]);
    assert_eq!(p.version(&["Cargo.lock"], "bytes"), "1.2.1");
}

#[test]
fn a_truncated_cargo_lock_is_an_error_with_its_line() {
    let p = Project::new(&[("Cargo.lock", "version = 3\n\n[[package]]\nname = \"syn\"\nversion = \"2.0")]);
    let e = expect_err(p.parse("Cargo.lock"), "memorix::pins::syntax");
    assert!(e.to_string().contains("Cargo.lock:5: invalid Cargo.lock"), "{e}");
}

#[test]
fn a_cargo_lock_from_the_future_is_refused() {
    let p = Project::new(&[("Cargo.lock", "\nversion = 9\n")]);
    let e = expect_err(p.parse("Cargo.lock"), "memorix::pins::unsupported_version");
    assert!(e.to_string().contains("Cargo.lock:2: Cargo.lock format version 9"), "{e}");
}

#[test]
fn a_cargo_lock_dependency_on_a_package_it_lacks_is_an_error() {
    // Valid TOML, but the dependency names a package the file does not have.
    let lock =
        "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"missing\"]\n";
    let p = Project::new(&[("Cargo.lock", lock)]);
    let e = expect_err(p.parse("Cargo.lock"), "memorix::pins::syntax");
    assert!(e.to_string().contains("missing"), "{e}");
}

const UV_LOCK: &str = r#"version = 1
revision = 3
requires-python = ">=3.10"
resolution-markers = [
    "python_full_version >= '3.11'",
    "python_full_version < '3.11'",
]

[manifest]
members = ["helper"]

[[package]]
name = "app"
version = "0.1.0"
source = { editable = "." }
dependencies = [
    { name = "click" },
]

[package.dev-dependencies]
docs = [
    { name = "sphinx", version = "8.1.3", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.11'" },
    { name = "sphinx", version = "8.2.3", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.11'" },
]

[[package]]
name = "click"
version = "8.1.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "helper"
version = "0.2.0"
source = { editable = "packages/helper" }
dependencies = [
    { name = "idna", version = "3.7", source = { registry = "https://pypi.org/simple" } },
]

[[package]]
name = "idna"
version = "3.7"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "idna"
version = "3.10"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "sphinx"
version = "8.1.3"
source = { registry = "https://pypi.org/simple" }
resolution-markers = [
    "python_full_version < '3.11'",
]

[[package]]
name = "sphinx"
version = "8.2.3"
source = { registry = "https://pypi.org/simple" }
resolution-markers = [
    "python_full_version >= '3.12'",
    "python_full_version == '3.11.*'",
]
"#;

#[test]
fn uv_lock_roots_are_the_editable_project_and_workspace_members() {
    let p = Project::new(&[("uv.lock", UV_LOCK)]);
    let file = p.parse("uv.lock").expect("parse");
    let click = file.pins.iter().find(|p| p.name == "click").expect("click");
    assert_eq!((click.line, click.direct), (27, true));
    assert_eq!(click.source.as_deref(), Some("registry+https://pypi.org/simple"));
    // The member `helper` depends on idna 3.7 directly; 3.10 is someone else's.
    assert_eq!(p.version(&["uv.lock"], "idna"), "3.7");
    assert_eq!(p.version(&["uv.lock"], "Click"), "8.1.7");
}

#[test]
fn uv_lock_forks_carry_their_resolution_markers() {
    let p = Project::new(&[("uv.lock", UV_LOCK)]);
    let file = p.parse("uv.lock").expect("parse");
    let sphinx: Vec<Option<&str>> =
        file.pins.iter().filter(|p| p.name == "sphinx").map(|p| p.markers.as_deref()).collect();
    assert_eq!(
        sphinx,
        [
            Some("python_full_version < '3.11'"),
            Some("(python_full_version >= '3.12') or (python_full_version == '3.11.*')")
        ]
    );
    let e = expect_err(p.resolve(&["uv.lock"], &[], "sphinx"), "memorix::pins::markers_needed");
    assert!(e.help().expect("help").to_string().contains("[pins] markers = { python_version = \"3.11\" }"));
    assert_eq!(
        p.resolve(&["uv.lock"], &[("python_version", "3.12")], "sphinx").expect("3.12").version,
        "8.2.3"
    );
    assert_eq!(
        p.resolve(&["uv.lock"], &[("python_version", "3.10")], "sphinx").expect("3.10").version,
        "8.1.3"
    );
}

#[test]
fn a_uv_script_lock_roots_at_its_requirements() {
    let lock = r#"version = 1
requires-python = ">=3.8"

[manifest]
requirements = [{ name = "anyio" }]

[[package]]
name = "anyio"
version = "4.5.2"
source = { registry = "https://pypi.org/simple" }
dependencies = [{ name = "idna" }]

[[package]]
name = "idna"
version = "3.10"
source = { registry = "https://pypi.org/simple" }
"#;
    let p = Project::new(&[("mirror.py.lock", lock)]);
    let file = p.parse("mirror.py.lock").expect("parse");
    let direct: Vec<(&str, bool)> = file.pins.iter().map(|p| (p.name.as_str(), p.direct)).collect();
    assert_eq!(direct, [("anyio", true), ("idna", false)]);
}

#[test]
fn a_broken_uv_lock_is_an_error_with_its_line() {
    let p = Project::new(&[("uv.lock", "version = 1\n\n[[package]]\nname = \"click\"\nversion = 8\n")]);
    let e = expect_err(p.load(&["uv.lock"], &[]), "memorix::pins::syntax");
    assert!(e.to_string().starts_with("uv.lock:5: invalid uv.lock"), "{e}");
    let p = Project::new(&[("uv.lock", "\nversion = 2\n")]);
    let e = expect_err(p.load(&["uv.lock"], &[]), "memorix::pins::unsupported_version");
    assert!(e.to_string().starts_with("uv.lock:2: uv.lock version 2"), "{e}");
}

#[test]
fn poetry_markers_of_every_lock_version_are_read() {
    let lock = r#"[[package]]
category = "dev"
marker = "python_version < \"3.5\""
name = "pytest"
version = "4.6.11"

[[package]]
name = "pytest"
version = "5.4.3"
markers = "python_version >= \"3.5\""

[[package]]
name = "colorama"
version = "0.4.6"
markers = { main = "sys_platform == \"win32\"", dev = "platform_system == \"Windows\"" }

[[package]]
name = "quix"
version = "1.2.3"

[package.source]
type = "git"
url = "https://github.com/a/quix.git"

[metadata]
lock-version = "2.1"
"#;
    let p = Project::new(&[("poetry.lock", lock)]);
    let file = p.parse("poetry.lock").expect("parse");
    let got: Vec<(&str, Option<&str>, usize, bool)> =
        file.pins.iter().map(|p| (p.version.as_str(), p.markers.as_deref(), p.line, p.direct)).collect();
    assert_eq!(
        got,
        [
            ("4.6.11", Some("python_version < \"3.5\""), 4, false),
            ("5.4.3", Some("python_version >= \"3.5\""), 8, false),
            ("0.4.6", Some("(platform_system == \"Windows\") or (sys_platform == \"win32\")"), 13, false),
            ("1.2.3", None, 18, false),
        ]
    );
    assert_eq!(file.pins[3].source.as_deref(), Some("git+https://github.com/a/quix.git"));
    assert_eq!(
        p.resolve(&["poetry.lock"], &[("python_version", "3.4")], "pytest").expect("3.4").version,
        "4.6.11"
    );
}

#[test]
fn poetry_versions_without_markers_need_the_mount_version() {
    let lock = "[[package]]\nname = \"keyring\"\nversion = \"18.0.1\"\n\n[[package]]\nname = \"keyring\"\nversion = \"20.0.1\"\n";
    let p = Project::new(&[("poetry.lock", lock)]);
    let e = expect_err(p.resolve(&["poetry.lock"], &[], "keyring"), "memorix::pins::ambiguous");
    assert!(e.to_string().contains("poetry.lock does not record which one"), "{e}");
    assert_eq!(
        p.load(&["poetry.lock"], &[]).expect("load").resolve("keyring", Some("20.0.1")).expect("v").version,
        "20.0.1"
    );
}

#[test]
fn a_broken_poetry_lock_is_an_error_with_its_line() {
    let p = Project::new(&[("poetry.lock", "[[package]]\nname = \"six\"\nThis lock file is broken!\n")]);
    let e = expect_err(p.load(&["poetry.lock"], &[]), "memorix::pins::syntax");
    assert!(e.to_string().starts_with("poetry.lock:3: invalid poetry.lock"), "{e}");
    let p = Project::new(&[("poetry.lock", "[metadata]\nlock-version = \"3.0\"\n")]);
    let e = expect_err(p.load(&["poetry.lock"], &[]), "memorix::pins::unsupported_version");
    assert!(e.to_string().starts_with("poetry.lock:2: poetry.lock lock-version 3.0"), "{e}");
}

#[test]
fn npm_v1_uses_the_top_level_dependency() {
    let lock = r#"{
  "name": "app",
  "lockfileVersion": 1,
  "dependencies": {
    "dep": {
      "version": "101.0.0"
    },
    "pkg": {
      "version": "100.0.0",
      "dependencies": {
        "dep": {
          "version": "100.0.0"
        }
      }
    },
    "local": {
      "version": "file:packages/local"
    }
  }
}"#;
    let p = Project::new(&[("package-lock.json", lock)]);
    let file = p.parse("package-lock.json").expect("parse");
    let got: Vec<(&str, &str, usize, bool)> =
        file.pins.iter().map(|p| (p.name.as_str(), p.version.as_str(), p.line, p.direct)).collect();
    assert_eq!(
        got,
        [("dep", "101.0.0", 5, true), ("pkg", "100.0.0", 8, true), ("dep", "100.0.0", 11, false)]
    );
    assert_eq!(p.version(&["package-lock.json"], "dep"), "101.0.0");
}

#[test]
fn npm_v3_direct_is_what_the_project_declares_at_the_top_of_node_modules_and_skips_links() {
    let lock = r#"{
  "lockfileVersion": 3,
  "packages": {
    "": { "name": "app", "dependencies": { "semver": "^7" } },
    "node_modules/semver": { "version": "7.7.4" },
    "node_modules/@scope/tool": { "version": "1.0.0" },
    "node_modules/@scope/tool/node_modules/semver": { "version": "5.7.2" },
    "node_modules/bar": { "resolved": "packages/bar", "link": true },
    "packages/bar": { "version": "0.0.0" }
  }
}"#;
    let p = Project::new(&[("package-lock.json", lock)]);
    let file = p.parse("package-lock.json").expect("parse");
    let got: Vec<(&str, &str, usize, bool)> =
        file.pins.iter().map(|p| (p.name.as_str(), p.version.as_str(), p.line, p.direct)).collect();
    assert_eq!(
        got,
        [("semver", "7.7.4", 5, true), ("@scope/tool", "1.0.0", 6, false), ("semver", "5.7.2", 7, false)]
    );
    assert_eq!(p.version(&["package-lock.json"], "semver"), "7.7.4");
    expect_err(p.resolve(&["package-lock.json"], &[], "bar"), "memorix::pins::not_pinned");
}

#[test]
fn bad_json_is_an_error_with_its_line() {
    let p = Project::new(&[(
        "package-lock.json",
        "{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"x\": \n}\n",
    )]);
    let e = expect_err(p.load(&["package-lock.json"], &[]), "memorix::pins::syntax");
    assert_eq!(e.to_string(), "package-lock.json:5: invalid package-lock.json: expected value");
    let p = Project::new(&[("npm-shrinkwrap.json", "{\n  \"lockfileVersion\": 4\n}\n")]);
    let e = expect_err(p.load(&["npm-shrinkwrap.json"], &[]), "memorix::pins::unsupported_version");
    assert!(e.to_string().starts_with("npm-shrinkwrap.json:2: "), "{e}");
}

#[test]
fn syntax_errors_show_the_file_and_span() {
    let p = Project::new(&[("Cargo.lock", "version = 3\n[[package]\n")]);
    let e = expect_err(p.load(&["Cargo.lock"], &[]), "memorix::pins::syntax");
    assert!(e.to_string().starts_with("Cargo.lock:2: "), "{e}");
    let src = e.source_code().expect("source");
    let label = e.labels().expect("labels").next().expect("a label");
    let span = src.read_span(label.inner(), 0, 0).expect("span");
    assert_eq!(span.line(), 1, "0-based line of the label");
    assert_eq!(span.name(), Some("Cargo.lock"));
}

#[test]
fn content_tells_the_format_of_a_file_under_another_name() {
    let p = Project::new(&[
        (
            "locks/web.yaml",
            "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      zod:\n        specifier: ^3\n        version: 3.24.1\npackages:\n  zod@3.24.1:\n    resolution: {integrity: sha512-x}\n",
        ),
        (
            "locks/ruby.lock",
            "GEM\n  remote: https://rubygems.org/\n  specs:\n    rack (3.0.8)\n\nDEPENDENCIES\n  rack\n",
        ),
        ("locks/py.lock", "# pinned by hand\nsix==1.16.0\n"),
        ("locks/go.deps", "module example.com/a\n\nrequire example.com/b v1.2.3\n"),
        ("locks/php.json", "{\n    \"content-hash\": \"0\",\n    \"packages\": []\n}\n"),
    ]);
    for (file, eco, name, version) in [
        ("locks/web.yaml", Ecosystem::Npm, "zod", "3.24.1"),
        ("locks/ruby.lock", Ecosystem::RubyGems, "rack", "3.0.8"),
        ("locks/py.lock", Ecosystem::Python, "six", "1.16.0"),
        ("locks/go.deps", Ecosystem::Go, "example.com/b", "v1.2.3"),
    ] {
        let parsed = p.parse(file).expect(file);
        assert_eq!(parsed.ecosystem, eco, "{file}");
        assert_eq!(p.version(&[file], name), version, "{file}");
    }
    assert_eq!(p.parse("locks/php.json").expect("composer").ecosystem, Ecosystem::Composer);
}

#[test]
fn a_bad_go_mod_line_is_an_error_with_its_line_whatever_the_line_ends() {
    let p = Project::new(&[("go.mod", "module example.com/a\r\n\r\nrequire (\r\n\texample.com/b\r\n)\r\n")]);
    let e = expect_err(p.load(&["go.mod"], &[]), "memorix::pins::syntax");
    assert!(e.to_string().starts_with("go.mod:4: invalid go.mod: a require line is `module version`"), "{e}");
    let label = e.labels().expect("labels").next().expect("a label");
    assert_eq!((label.offset(), label.len()), (35, 14));
}

#[test]
fn lockfile_versions_newer_than_memorix_reads_are_refused() {
    let p = Project::new(&[
        ("pnpm-lock.yaml", "\nlockfileVersion: '10.0'\n"),
        ("pylock.toml", "lock-version = \"2.0\"\n"),
        ("pdm.lock", "[metadata]\nlock_version = \"5.0\"\n"),
    ]);
    for (file, message) in [
        ("pnpm-lock.yaml", "pnpm-lock.yaml:2: pnpm-lock.yaml lockfileVersion 10"),
        ("pylock.toml", "pylock.toml:1: pylock.toml lock-version 2.0"),
        ("pdm.lock", "pdm.lock:2: pdm.lock lock_version 5.0"),
    ] {
        let e = expect_err(p.load(&[file], &[]), "memorix::pins::unsupported_version");
        assert!(e.to_string().starts_with(message), "{e}");
    }
}

#[test]
fn a_toml_lockfile_past_the_cap_is_refused_before_it_is_parsed() {
    // Past the cap, the rest of the file is never read as TOML: its syntax error goes unseen.
    let over =
        |header: &str| format!("{}not = toml = at all\n", format!("{header}\n").repeat(MAX_PACKAGES + 1));
    let p = Project::new(&[("pylock.toml", &over("[[packages]]")), ("Cargo.lock", &over("  [[package]]"))]);
    for file in ["pylock.toml", "Cargo.lock"] {
        let e = expect_err(p.load(&[file], &[]), "memorix::pins::too_many");
        assert!(e.to_string().contains(&format!("{file} lists 100001 packages")), "{e}");
    }
}
