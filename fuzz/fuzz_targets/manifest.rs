//! `manifest::parse` on arbitrary text, in a project that has a few pin files and source
//! folders: a manifest that parses keeps every path inside the project and every locator
//! valid; one that does not gets an error that renders.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memorix::model::Locator;
use memorix_fuzz::render;

/// A project directory with what the seeds name: pin files and source folders.
fn project() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temp dir");
        for file in ["Cargo.lock", "requirements.txt", "uv.lock", "agent-rules/style.md", "docs/guide.md"] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().expect("inside the project")).expect("create a folder");
            std::fs::write(&path, "").expect("write a project file");
        }
        dir
    })
    .path()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = project();
    let m = match memorix::manifest::parse(text, "memorix.toml", dir) {
        Ok(m) => m,
        Err(e) => {
            render(&e);
            return;
        }
    };
    assert!(!m.memory.is_root(), "the memory directory is the project itself");
    assert!(m.memory_dir().starts_with(dir));
    for w in m.mounts.windows(2) {
        assert!(w[0].path < w[1].path, "mounts unsorted or doubled");
    }
    for mount in &m.mounts {
        assert!(!mount.path.is_root());
        assert!(!mount.select.is_empty());
        for loc in &mount.select {
            assert_eq!(Locator::parse(&loc.to_string()).as_ref().ok(), Some(loc));
        }
    }
    for s in &m.sources {
        assert!(s.dest.selector.is_none() && !s.folder.is_root());
        assert!(s.version.is_none() || (s.dest.subtree && !s.dest.path.is_root()));
        assert!(dir.join(s.folder.as_str()).exists());
    }
    for o in &m.overrides {
        assert!(m.mounts.iter().any(|mount| o.path.starts_with(&mount.path)));
        assert!(!o.winner.subtree && o.winner.selector.is_none());
    }
    for file in &m.pins.files {
        assert!(dir.join(file).is_file(), "{file}");
    }
    for a in &m.artifacts {
        assert!(!a.command.is_empty() && memorix::model::Name::new(&a.name).is_ok());
    }
});
