//! `pins::parse_file` on arbitrary requirements files that include each other: the input
//! is split at NUL bytes into `requirements.txt`, `base.txt`, `sub/dev.txt` and
//! `constraints.in`, so `-r`/`-c` lines (cycles, `..`, missing files) reach real files.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Where each NUL-separated part of the input is written, the first being the one parsed.
const FILES: [&str; 4] = ["requirements.txt", "base.txt", "sub/dev.txt", "constraints.in"];

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir(dir.path().join("sub")).expect("create sub/");
    for (file, part) in FILES.iter().zip(data.splitn(FILES.len(), |&b| b == 0)) {
        std::fs::write(dir.path().join(file), part).expect("write a requirements file");
    }
    memorix_fuzz::check_pin_file(dir.path(), FILES[0]);
});
