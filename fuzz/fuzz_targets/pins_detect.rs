//! `pins::parse_file` on an arbitrary file whose name tells nothing (`deps.lock`): the format is
//! guessed from the content, and whatever it is read as must give values or errors that
//! render, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memorix_fuzz::check_pin_bytes("deps.lock", data));
