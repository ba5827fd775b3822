//! Derivation and environment records read back from a store: the input is stored as the
//! record of the id its own content claims, and a record that reads back hashes to that id
//! (its paths and ids are typed, so valid by construction).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memorix::model::canonical;
use memorix::progress::Silent;
use memorix::store::Store;
use memorix_fuzz::render;

fn store() -> &'static Store {
    static STORE: OnceLock<(tempfile::TempDir, Store)> = OnceLock::new();
    &STORE
        .get_or_init(|| {
            let dir = tempfile::tempdir().expect("a temp dir");
            let store = Store::open_or_create(&dir.path().join("store"), &Silent).expect("a fresh store");
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
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    if let Some(entries) = value.get("entries") {
        // The id covers the (path, blob) entries alone (book: design/objects.md#derivation).
        let id = canonical::object_id(
            "derivation",
            &canonical::encode(&serde_json::json!({ "entries": entries })),
        );
        put(&store.derivation_dir(&id), "derivation.json", data);
        match store.read_derivation(&id) {
            // Typed on read: what reads back has valid paths and ids, and hashes to its name.
            Ok(record) => assert_eq!(record.id(), id),
            Err(e) => {
                render(&e);
            }
        }
    }
    if value.get("mounts").is_some() {
        let id = canonical::object_id("environment", &canonical::encode(&value));
        put(&store.environment_dir(&id), "environment.json", data);
        match store.read_environment(&id) {
            Ok(record) => assert_eq!(canonical::encode(&record), data),
            Err(e) => {
                render(&e);
            }
        }
    }
});
