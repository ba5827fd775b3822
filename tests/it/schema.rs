//! The JSON Schemas in schema/ are generated from the Rust types and must be current.

use std::fs;
use std::path::Path;

use memorix::lock::Lockfile;
use memorix::manifest::raw::RawManifest;

#[test]
fn schemas_are_current() {
    let schemas = [
        ("schema/memorix.schema.json", schemars::schema_for!(RawManifest)),
        ("schema/memorix.lock.schema.json", schemars::schema_for!(Lockfile)),
    ];
    for (file, schema) in schemas {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        if std::env::var_os("MEMORIX_UPDATE_SCHEMA").is_some() {
            fs::write(&path, &text).unwrap();
        }
        let committed = fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "{file} is stale: run `MEMORIX_UPDATE_SCHEMA=1 cargo test --test it schema::`"
        );
    }
}
