//! `Tree::decode` on arbitrary bytes: only the canonical form decodes, so a decoded tree
//! encodes back to exactly the input, and its names are valid and strictly sorted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memorix::model::{Name, canonical};
use memorix::store::objects::Tree;

fuzz_target!(|data: &[u8]| {
    let Ok(tree) = Tree::decode(data) else { return };
    assert_eq!(tree.encode(), data, "decode accepted a non-canonical encoding");
    assert_eq!(tree.id(), canonical::object_id("tree", data));
    let entries = tree.entries();
    for e in entries {
        assert!(Name::check(e.name.as_str()).is_ok(), "{:?}", e.name);
        assert_eq!(tree.get(e.name.as_str()), Some(e));
    }
    assert!(entries.windows(2).all(|w| w[0].name.as_str().as_bytes() < w[1].name.as_str().as_bytes()));
    assert_eq!(Tree::new(entries.to_vec()), Ok(tree.clone()));
    let mut doubled = entries.to_vec();
    if let Some(first) = entries.first() {
        doubled.push(first.clone());
        assert!(Tree::new(doubled).is_err(), "a duplicate name is refused");
    }
});
