//! `pins::parse_file` on arbitrary requirements files that include each other: the input
//! is split at NUL bytes into `requirements.txt`, `base.txt`, `sub/dev.txt` and
//! `constraints.in`, so `-r`/`-c` lines (cycles, `..`, missing files) reach real files.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// Where each NUL-separated part of the input is written, the first being the one parsed.
const FILES: [&str; 4] = ["requirements.txt", "base.txt", "sub/dev.txt", "constraints.in"];

fuzz_target!(|data: &[u8]| {
    let dir = memorix_fuzz::project();
    std::fs::create_dir_all(dir.join("sub")).expect("create sub/");
    let mut parts = data.splitn(FILES.len(), |&b| b == 0);
    for file in FILES {
        let path = dir.join(file);
        match parts.next() {
            Some(part) => std::fs::write(&path, part).expect("write a requirements file"),
            // Fewer parts: the rest are missing, as a `-r` of a file that does not exist.
            None => std::fs::remove_file(&path)
                .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
                .expect("remove a requirements file"),
        }
    }
    memorix_fuzz::check_pin_file(dir, FILES[0]);
});
