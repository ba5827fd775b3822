//! `pins::parse_file` on an arbitrary `go.mod` and the `go.sum` beside it: the input is split
//! at the first NUL byte into the two files (no NUL: no go.sum), so hashes and replaces meet.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let dir = memorix_fuzz::project();
    let mut parts = data.splitn(2, |&b| b == 0);
    std::fs::write(dir.join("go.mod"), parts.next().unwrap_or_default()).expect("write go.mod");
    let sum = dir.join("go.sum");
    match parts.next() {
        Some(part) => std::fs::write(&sum, part).expect("write go.sum"),
        None => std::fs::remove_file(&sum)
            .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
            .expect("remove go.sum"),
    }
    memorix_fuzz::check_pin_file(dir, "go.mod");
});
