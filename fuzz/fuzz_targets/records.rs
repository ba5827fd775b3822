//! Derivation and environment records read back from a store: the input is stored as the
//! record of the id its own content claims, and a record that reads back has only valid
//! paths and ids.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memorix::model::{Id, StorePath, canonical};
use memorix::store::Store;
use memorix::view::derivation::DerivationRecord;
use memorix::view::environment::EnvironmentRecord;
use memorix_fuzz::render;

fn store() -> &'static Store {
    static STORE: OnceLock<(tempfile::TempDir, Store)> = OnceLock::new();
    &STORE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temp dir");
            let store = Store::open_or_create(&dir.path().join("store")).expect("a fresh store");
            (dir, store)
        })
        .1
}

/// Stores `data` at `dir/name`, replacing what a previous input left there.
fn put(dir: &Path, name: &str, data: &[u8]) {
    std::fs::create_dir_all(dir).expect("create the object directory");
    std::fs::write(dir.join(name), data).expect("write the record");
}

fuzz_target!(|data: &[u8]| {
    let store = store();
    if let Ok(claimed) = serde_json::from_slice::<DerivationRecord>(data) {
        // The id covers the (path, blob) entries alone (DESIGN.md §2).
        let entries = serde_json::json!({ "entries": claimed.entries });
        let id = canonical::object_id("derivation", &canonical::encode(&entries));
        put(&store.derivation_dir(&id), "derivation.json", data);
        match store.read_derivation(&id) {
            Ok(record) => {
                for (path, hex) in &record.entries {
                    assert!(StorePath::new(path).is_ok() && Id::from_hex(hex).is_some(), "{path:?} {hex:?}");
                }
            }
            Err(e) => {
                render(&e);
            }
        }
    }
    if let Ok(claimed) = serde_json::from_slice::<EnvironmentRecord>(data) {
        let id = claimed.id();
        put(&store.environment_dir(&id), "environment.json", data);
        match store.read_environment(&id) {
            Ok(record) => {
                assert_eq!(canonical::encode(&record), data);
                assert!(record.mounts.iter().all(|(m, _)| StorePath::new(m).is_ok()));
            }
            Err(e) => {
                render(&e);
            }
        }
    }
});
