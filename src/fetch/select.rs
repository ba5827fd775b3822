//! The docs view of an artifact (book: design/fetching.md#the-docs-view): what teaches an agent
//! to use the library — README, `docs/`/`doc/` prose, examples, the changelog, the API surface
//! of its ecosystem and the package manifest — never tests, fixtures, vendored third-party
//! trees, images, lock or CI files. Past [`CAP`] bytes the least teaching files are left out,
//! and [`NOTICE`] in the view says which. `[fetch.LIB] include` adds files (past the cap
//! too), `exclude` removes them.

use std::sync::LazyLock;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use super::Registry;

/// What one library keeps beyond (include) or out of (exclude) the default view.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub include: Option<GlobSet>,
    pub exclude: Option<GlobSet>,
}

/// The most bytes of one library's default view: a few large libraries (a vendored type
/// database, a generated API) would otherwise be most of an environment.
pub const CAP: usize = 8 << 20;

/// The file in a capped view that names what the cap left out.
pub const NOTICE: &str = "MEMORIX-OMITTED.md";

/// What the view keeps a file as, in the order the cap keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Readme,
    Manifest,
    Docs,
    Examples,
    Changelog,
    Api,
}

/// Never kept, in any ecosystem (matched case-insensitively; `**/` matches at the top too).
const DROP: &[&str] = &[
    // Tests, fixtures, benches. `test/` and `testing/` only at the top: inside a package they
    // are often its public test helpers (`numpy.testing`, `django.test`).
    "{test,testing}/**",
    "**/{tests,__tests__,__snapshots__,testdata,test_data,fixtures,fixture,bench,benches,benchmarks,fuzz}/**",
    "**/{test_*.py,*_test.py,conftest.py,*.test.*,*.spec.*,tests.rs}",
    // Vendored third-party trees, caches, hidden files and folders.
    "**/{vendor,vendored,_vendor,third_party,third-party,thirdparty,3rdparty,node_modules,__pycache__}/**",
    "**/{vendored-*,*-vendored,*_vendored,typeshed*}/**",
    "**/.*",
    "**/.*/**",
    "**/*.egg-info/**",
    // CI and build configuration.
    "**/ci/**",
    "**/{appveyor.yml,azure-pipelines.yml,tox.ini,noxfile.py,Makefile,justfile,setup.cfg,setup.py,MANIFEST.in}",
    "**/{build.rs,Cargo.toml.orig,rustfmt.toml,clippy.toml,deny.toml,codecov.yml,mkdocs.yml}",
    "{conf.py,{doc,docs,documentation}/**/conf.py}",
    "**/{tsconfig*.json,*.config.js,*.config.cjs,*.config.mjs,*.config.ts,gulpfile.js,Gruntfile.js,karma.conf.*}",
    "**/{Dockerfile,docker-compose*.yml}",
    // Lock files.
    "**/{Cargo.lock,uv.lock,poetry.lock,pdm.lock,Pipfile.lock,package-lock.json,npm-shrinkwrap.json}",
    "**/{yarn.lock,pnpm-lock.yaml,composer.lock,Gemfile.lock,requirements*.txt,constraints*.txt}",
    // Images, media, fonts, bundles and source maps.
    "**/*.{png,jpg,jpeg,gif,svg,ico,webp,bmp,tif,tiff,avif,mp3,mp4,webm,mov,wav,woff,woff2,ttf,otf,eot,pdf}",
    "**/*.{min.js,min.css,map}",
    // Legal and community files, and a docs site's theme and build folders.
    "{LICENSE*,LICENCE*,COPYING*,NOTICE*,AUTHORS*,CONTRIBUTORS*,CODE_OF_CONDUCT*,CONTRIBUTING*,SECURITY*}",
    "{doc,docs}/_*/**",
];

/// Kept as what they are wherever they are (not dropped above).
const README: &[&str] = &["**/README", "**/README.{md,rst,txt,markdown,adoc}"];
const CHANGELOG: &[&str] = &[
    "**/{CHANGELOG,CHANGES,HISTORY,NEWS,RELEASES,RELEASE-NOTES,RELEASE_NOTES,UPGRADING,MIGRATION*}",
    "**/{CHANGELOG,CHANGES,HISTORY,NEWS,RELEASES,RELEASE-NOTES,RELEASE_NOTES,UPGRADING,MIGRATION*}.{md,rst,txt,markdown}",
];
const MANIFEST: &[&str] = &["{Cargo.toml,package.json,pyproject.toml,PKG-INFO}", "*.dist-info/METADATA"];
const DOCS: &[&str] = &[
    "{doc,docs,documentation}/**/*.{md,markdown,mdx,rst,txt,adoc,py,pyi,rs,ts,tsx,toml}",
    "*.{md,rst,txt,adoc}",
    "**/*.{md,rst,markdown,mdx,adoc}",
];
const EXAMPLES: &[&str] = &["**/{example,examples}/**"];
const RUST_API: &[&str] = &["src/**/*.rs"];
/// A package's modules, but not the scripts that build or check it.
const PYTHON_API: &[&str] = &["**/*.{py,pyi}"];
const PYTHON_NOT_API: &[&str] =
    &["{scripts,tools,tasks,build_tools}/**", "*.dist-info/**", "{tasks,fabfile,hatch_build,build}.py"];
const NPM_API: &[&str] = &["**/*.d.{ts,mts,cts}"];

struct Sets {
    drop: GlobSet,
    readme: GlobSet,
    changelog: GlobSet,
    manifest: GlobSet,
    docs: GlobSet,
    examples: GlobSet,
    rust: GlobSet,
    python: GlobSet,
    python_not: GlobSet,
    npm: GlobSet,
}

fn set(globs: &[&str]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(
            GlobBuilder::new(g).literal_separator(true).case_insensitive(true).build().expect("a valid glob"),
        );
    }
    b.build().expect("valid globs")
}

static SETS: LazyLock<Sets> = LazyLock::new(|| Sets {
    drop: set(DROP),
    readme: set(README),
    changelog: set(CHANGELOG),
    manifest: set(MANIFEST),
    docs: set(DOCS),
    examples: set(EXAMPLES),
    rust: set(RUST_API),
    python: set(PYTHON_API),
    python_not: set(PYTHON_NOT_API),
    npm: set(NPM_API),
});

/// The docs view of `files` (relative, top directory stripped), sorted as given, with
/// [`NOTICE`] added when the cap left files out.
pub fn keep(registry: Registry, files: &[(String, Vec<u8>)], filter: &Filter) -> Vec<(String, Vec<u8>)> {
    keep_within(registry, files, filter, CAP)
}

fn keep_within(
    registry: Registry,
    files: &[(String, Vec<u8>)],
    filter: &Filter,
    cap: usize,
) -> Vec<(String, Vec<u8>)> {
    let entries = npm_entries(registry, files);
    let mut forced = Vec::new();
    let mut ranked = Vec::new();
    for (i, (path, bytes)) in files.iter().enumerate() {
        if path == NOTICE || filter.exclude.as_ref().is_some_and(|g| g.is_match(path)) || binary(bytes) {
            continue;
        }
        if filter.include.as_ref().is_some_and(|g| g.is_match(path)) {
            forced.push(i);
        } else if let Some(role) = role(registry, path, &entries) {
            ranked.push((role, i));
        }
    }
    // The most teaching files first; within a role public before private (`_x`) and shallow
    // before deep, so a package's own modules come before what it bundles.
    ranked.sort_by_key(|(role, i)| {
        let path = files[*i].0.as_str();
        let private = path.split('/').any(|p| p.starts_with('_') && !p.starts_with("__init__."));
        (*role, private, path.matches('/').count(), path)
    });
    let mut used = 0;
    let mut left_out = Vec::new();
    for (_, i) in ranked {
        let size = files[i].1.len();
        if used + size <= cap {
            used += size;
            forced.push(i);
        } else {
            left_out.push(i);
        }
    }
    forced.sort_unstable();
    let mut out: Vec<(String, Vec<u8>)> = forced.into_iter().map(|i| files[i].clone()).collect();
    if !left_out.is_empty() {
        let left: Vec<(&str, usize)> =
            left_out.iter().map(|i| (files[*i].0.as_str(), files[*i].1.len())).collect();
        out.push((NOTICE.to_string(), notice(cap, &left).into_bytes()));
    }
    out
}

/// What the default view keeps `path` as, if anything.
fn role(registry: Registry, path: &str, npm_entries: &[String]) -> Option<Role> {
    let s = &*SETS;
    if s.drop.is_match(path) {
        return None;
    }
    let api = match registry {
        Registry::CratesIo => s.rust.is_match(path),
        Registry::Pypi => s.python.is_match(path) && !s.python_not.is_match(path),
        Registry::Npm => s.npm.is_match(path) || npm_entries.iter().any(|e| e == path),
    };
    [
        (Role::Readme, s.readme.is_match(path)),
        (Role::Manifest, s.manifest.is_match(path)),
        (Role::Changelog, s.changelog.is_match(path)),
        (Role::Examples, s.examples.is_match(path)),
        (Role::Docs, s.docs.is_match(path)),
        (Role::Api, api),
    ]
    .into_iter()
    .find_map(|(r, hit)| hit.then_some(r))
}

/// The notice of what the cap left out. Third-party paths stand in an indented code block,
/// where Markdown reads them literally (they hold no line break: the unpacker skips names
/// with control characters).
fn notice(cap: usize, left: &[(&str, usize)]) -> String {
    use std::fmt::Write;
    const SHOWN: usize = 200;
    let bytes: usize = left.iter().map(|(_, n)| n).sum();
    let mut s = format!(
        "# Left out of the docs view\n\nmemorix keeps at most {} MiB of a library's docs view: the README, manifest, \
         docs, examples and changelog first, then the API sources. These {} files ({bytes} bytes) were left out, \
         with their sizes in bytes:\n\n",
        cap >> 20,
        left.len(),
    );
    for (path, size) in left.iter().take(SHOWN) {
        let _ = writeln!(s, "    {path}  {size}");
    }
    if left.len() > SHOWN {
        let _ = writeln!(s, "\nand {} more.", left.len() - SHOWN);
    }
    s + "\nTo keep some of them, name them in memorix.toml: `[fetch.LIB] include = [\"GLOB\"]`.\n"
}

/// Binary content: a NUL byte in the first 8 KiB, as git decides.
fn binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// The entry files an npm `package.json` names (`main`, `module`, `types`, `typings`,
/// `browser` and string values of `exports`), as archive paths.
fn npm_entries(registry: Registry, files: &[(String, Vec<u8>)]) -> Vec<String> {
    if registry != Registry::Npm {
        return Vec::new();
    }
    let manifest = files.iter().find(|(p, _)| p == "package.json");
    let json = manifest.and_then(|(_, m)| serde_json::from_slice::<serde_json::Value>(m).ok());
    let json = json.unwrap_or_default();
    let mut out = Vec::new();
    let mut add = |v: &serde_json::Value| {
        if let Some(s) = v.as_str() {
            let p = s.trim_start_matches("./").to_string();
            out.push(p.clone());
            if !p.ends_with(".js") && !p.ends_with(".json") {
                out.push(format!("{p}.js"));
                out.push(format!("{p}/index.js"));
            }
        }
    };
    for key in ["main", "module", "types", "typings", "browser"] {
        add(&json[key]);
    }
    let mut stack = vec![&json["exports"]];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => stack.extend(m.values()),
            serde_json::Value::Array(a) => stack.extend(a.iter()),
            other => add(other),
        }
    }
    if out.is_empty() {
        // npm's own default entry.
        out.push("index.js".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(registry: Registry, paths: &[&str]) -> Vec<String> {
        let files: Vec<(String, Vec<u8>)> = paths.iter().map(|p| (p.to_string(), b"text".to_vec())).collect();
        keep(registry, &files, &Filter::default()).into_iter().map(|(p, _)| p).collect()
    }

    #[test]
    fn the_default_view_keeps_docs_and_api_and_drops_tests() {
        let crate_files = [
            "README.md",
            "Cargo.toml",
            "Cargo.toml.orig",
            "Cargo.lock",
            "src/lib.rs",
            "src/uri/tests.rs",
            "tests/a.rs",
            "benches/b.rs",
            "build.rs",
            ".github/workflows/ci.yml",
        ];
        assert_eq!(kept(Registry::CratesIo, &crate_files), ["README.md", "Cargo.toml", "src/lib.rs"]);
        let sdist = [
            "PKG-INFO",
            "docs/api.rst",
            "docs/conf.py",
            "docs/_static/x.css",
            "src/click/core.py",
            "src/click/testing.py",
            "src/click/_vendor/six.py",
            "tests/test_core.py",
            "tests/fixtures/a.py",
            "setup.py",
            "docs/x.png",
            "uv.lock",
            "LICENSE.txt",
        ];
        assert_eq!(
            kept(Registry::Pypi, &sdist),
            ["PKG-INFO", "docs/api.rst", "src/click/core.py", "src/click/testing.py"]
        );
        let npm = ["package.json", "index.js", "lib/util.js", "index.d.ts", "license.md", "test/a.js"];
        assert_eq!(kept(Registry::Npm, &npm), ["package.json", "index.js", "index.d.ts"]);
    }

    #[test]
    fn the_cap_leaves_out_api_before_docs_and_says_so() {
        let files: Vec<(String, Vec<u8>)> =
            [("README.md", 10), ("docs/a.md", 10), ("src/big.rs", 30), ("src/lib.rs", 5)]
                .iter()
                .map(|(p, n)| (p.to_string(), vec![b'x'; *n]))
                .collect();
        let view = keep_within(Registry::CratesIo, &files, &Filter::default(), 30);
        let paths: Vec<&str> = view.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["README.md", "docs/a.md", "src/lib.rs", NOTICE]);
        let notice = String::from_utf8(view[3].1.clone()).unwrap();
        assert!(notice.contains("\n    src/big.rs  30\n"), "{notice}");
    }
}
