//! `pins::parse_file` on an arbitrary `pdm.lock`: parsing and resolving its libraries give
//! values or errors that render, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memorix_fuzz::check_pin_bytes("pdm.lock", data));
