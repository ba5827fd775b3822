//! `Generation::decode` on arbitrary bytes, checked against the id the content claims: a
//! decoded generation is canonical, numbered from 1 and hashes to that id; any other id fails.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memorix::model::{Id, canonical};
use memorix::store::records::Generation;

fuzz_target!(|data: &[u8]| {
    // The id the content would have if it is a generation, so decoding can get past the hash.
    let claimed = serde_json::from_slice::<Generation>(data).map_or_else(|_| Id::of_bytes(data), |g| g.id());
    let Ok(generation) = Generation::decode(data, &claimed) else { return };
    assert_eq!(canonical::encode(&generation), data);
    assert_eq!(generation.id(), claimed);
    assert!(generation.seq >= 1);
    assert!(Generation::decode(data, &Id::of_bytes(data)).is_err(), "decoded under another id");
});
