//! Package names from pin files, manifests and registry answers: a name its ecosystem's grammar
//! admits becomes a Store path (`docs/<name>/`), a mount and a registry URL segment that stay
//! what they say; any other name is refused, never a path. Both as a bare name and as the name
//! of a package in a package-lock.json and a Cargo.lock, parsed as the CLI parses them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memorix::model::{Locator, StorePath};
use memorix::pins::{self, Ecosystem, name};

const ECOSYSTEMS: [Ecosystem; 6] =
    [Ecosystem::Cargo, Ecosystem::Python, Ecosystem::Npm, Ecosystem::Go, Ecosystem::Composer, Ecosystem::RubyGems];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok(raw) = std::str::from_utf8(rest) else { return };
    let eco = ECOSYSTEMS[first as usize % ECOSYSTEMS.len()];
    check_name(eco, raw);
    // The same name inside the pin files that carry it: a pin that survives parsing has a
    // name of its ecosystem, whatever the file said.
    let dir = tempfile::tempdir().expect("temp dir");
    let quoted = serde_json::to_string(raw).expect("a string serializes");
    let npm = format!(
        r#"{{"lockfileVersion": 3, "packages": {{"": {{"dependencies": {{{quoted}: "1"}}}}, "node_modules/{}": {{"version": "1.0.0"}}}}}}"#,
        &quoted[1..quoted.len() - 1]
    );
    let cargo = format!("version = 4\n\n[[package]]\nname = {quoted}\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n");
    for (file, text) in [("package-lock.json", npm), ("Cargo.lock", cargo)] {
        std::fs::write(dir.path().join(file), text).expect("write");
        let Ok(parsed) = pins::parse_file(&dir.path().join(file)) else { continue };
        for pin in parsed.pins.iter().chain(&parsed.unpinned).chain(&parsed.unversioned) {
            assert!(name::valid(parsed.ecosystem, &pin.name), "{file} kept {:?}", pin.name);
            check_name(parsed.ecosystem, &pin.name);
        }
    }
});

/// A valid name makes a Store path, a locator and a URL segment that mean only that name.
fn check_name(eco: Ecosystem, raw: &str) {
    if !name::valid(eco, raw) {
        assert!(name::problem(eco, raw).is_some());
        return;
    }
    assert!(!raw.chars().any(char::is_control), "a control character in {raw:?}");
    let library = pins::library_name(eco, raw);
    let path = StorePath::new(&library).unwrap_or_else(|e| panic!("{library:?} is not a Store path: {e:?}"));
    assert!(path.as_str().split('/').all(|c| c != ".." && c != "." && !c.is_empty()), "{path:?}");
    let locator = Locator::parse(&format!("docs/{library}/@pin")).unwrap_or_else(|e| panic!("{library:?}: {e}"));
    assert_eq!(locator.path.as_str(), path.as_str());
    let segment = name::url_segment(raw);
    assert!(
        segment.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%@".contains(&b)),
        "{segment:?} is not one URL path segment"
    );
    assert!(segment != ".." && segment != ".", "{segment:?}");
}
