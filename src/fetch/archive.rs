//! Reading a release artifact (`.crate`/`.tgz`/`.tar.gz` or a wheel/`.zip`) into memory,
//! entry by entry, under caps. Entries that could land outside the Store or are not plain
//! files (links, devices, absolute or `..` paths, names that are not UTF-8) and files over the
//! per-file cap are skipped and counted; a total over the cap stops with an error (a
//! decompression bomb). A tarball is read through whatever it holds, skipped entries too, so
//! there every byte inflated counts: the size an entry claims, and the stream as a whole,
//! which stops at the cap. The archive's top directory (`httpx-0.26.0/`, `package/`) is
//! stripped.

use std::io::Read;

use super::error::{Error, Result};

/// The largest file kept; larger ones are skipped (docs never are this big).
pub const MAX_FILE: u64 = 8 << 20;
/// The most an artifact may unpack to.
pub const MAX_TOTAL: u64 = 512 << 20;
/// The most entries an artifact may have.
pub const MAX_ENTRIES: usize = 100_000;

/// The caps one unpacking works under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub file: u64,
    pub total: u64,
    pub entries: usize,
}

pub const LIMITS: Limits = Limits { file: MAX_FILE, total: MAX_TOTAL, entries: MAX_ENTRIES };

/// The plain files of an artifact, by relative path, and how many entries were skipped.
#[derive(Debug, Default)]
pub struct Unpacked {
    pub files: Vec<(String, Vec<u8>)>,
    pub skipped: usize,
}

/// Unpacks `bytes`, an artifact named `file`, choosing the format by its name.
pub fn unpack(file: &str, bytes: &[u8], limits: Limits) -> Result<Unpacked> {
    let lower = file.to_ascii_lowercase();
    let mut out = if lower.ends_with(".whl") || lower.ends_with(".zip") {
        unzip(file, bytes, limits)?
    } else if [".crate", ".tgz", ".tar.gz"].iter().any(|s| lower.ends_with(s)) {
        untar(file, flate2::read::GzDecoder::new(bytes), limits)?
    } else {
        return Err(Error::UnknownArchive { file: file.to_string() }.into());
    };
    strip_top(&mut out.files);
    out.files.sort_by(|a, b| a.0.cmp(&b.0));
    out.files.dedup_by(|a, b| a.0 == b.0);
    Ok(out)
}

/// A path kept as it is, or `None` when it is absolute, climbs with `..`, is empty, or holds
/// a control character (a line break or ESC in a name would reach indexes and terminals).
fn clean(path: &str) -> Option<String> {
    if path.starts_with('/') || path.contains('\\') || path.chars().any(char::is_control) {
        return None;
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty() && *p != ".").collect();
    if parts.is_empty() || parts.iter().any(|p| *p == ".." || p.contains('\0')) {
        return None;
    }
    Some(parts.join("/"))
}

/// One unpacking in progress: what it kept, and the bytes so far.
struct Sink<'a> {
    file: &'a str,
    limits: Limits,
    out: Unpacked,
    total: u64,
}

impl Sink<'_> {
    /// Counts `bytes` more unpacked; past the cap, a bomb.
    fn count(&mut self, bytes: u64) -> Result<()> {
        self.total = self.total.saturating_add(bytes);
        if self.total > self.limits.total || self.out.files.len() >= self.limits.entries {
            return Err(self.too_large());
        }
        Ok(())
    }

    fn too_large(&self) -> Box<Error> {
        Box::new(Error::TooLarge {
            file: self.file.to_string(),
            cap: self.limits.total,
            entries: self.limits.entries,
        })
    }

    /// Adds one entry's content, read through the caps. The total counts what a file claims
    /// as well as what it holds, so a bomb stops before it is read.
    fn take(&mut self, path: String, size: u64, r: impl Read) -> Result<()> {
        let (limits, file) = (self.limits, self.file);
        self.count(size.min(limits.file + 1))?;
        if size > limits.file {
            self.out.skipped += 1;
            return Ok(());
        }
        let mut buf = Vec::with_capacity(size as usize);
        r.take(limits.file + 1).read_to_end(&mut buf).map_err(|e| Error::bad_archive(file, e))?;
        if buf.len() as u64 > limits.file {
            self.out.skipped += 1;
            return Ok(());
        }
        self.out.files.push((path, buf));
        Ok(())
    }
}

/// The most a tarball's stream may inflate to: the unpacked cap, and the headers and padding
/// of as many entries as it may have.
fn stream_cap(limits: Limits) -> u64 {
    limits.total.saturating_add(limits.entries as u64 * 1024)
}

fn untar(file: &str, r: impl Read, limits: Limits) -> Result<Unpacked> {
    let mut archive = tar::Archive::new(r.take(stream_cap(limits)));
    let mut sink = Sink { file, limits, out: Unpacked::default(), total: 0 };
    let entries = archive.entries().map_err(|e| Error::bad_archive(file, e))?;
    let read = untar_entries(&mut sink, entries);
    // A stream cut at its cap reads as a truncated archive: it is a bomb.
    if read.is_err() && archive.into_inner().limit() == 0 {
        return Err(sink.too_large());
    }
    read.map(|()| sink.out)
}

fn untar_entries<R: Read>(sink: &mut Sink, entries: tar::Entries<R>) -> Result<()> {
    let file = sink.file;
    for entry in entries {
        let entry = entry.map_err(|e| Error::bad_archive(file, e))?;
        let kind = entry.header().entry_type();
        let size = entry.size();
        if kind.is_dir() || kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            // Still read through (inflated) to reach the next header.
            sink.count(size)?;
            continue;
        }
        let path = entry.path_bytes();
        let path = std::str::from_utf8(&path).ok().and_then(clean);
        let (true, Some(path)) = (kind.is_file(), path) else {
            sink.count(size)?;
            sink.out.skipped += 1;
            continue;
        };
        // A file past the per-file cap is skipped, but inflated all the same.
        sink.count(size.saturating_sub(sink.limits.file + 1))?;
        sink.take(path, size, entry)?;
    }
    Ok(())
}

fn unzip(file: &str, bytes: &[u8], limits: Limits) -> Result<Unpacked> {
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| Error::bad_archive(file, e))?;
    let mut sink = Sink { file, limits, out: Unpacked::default(), total: 0 };
    for i in 0..zip.len() {
        let entry = zip.by_index(i).map_err(|e| Error::bad_archive(file, e))?;
        if entry.is_dir() {
            continue;
        }
        let path = std::str::from_utf8(entry.name_raw()).ok().and_then(clean);
        let (false, Some(path)) = (entry.is_symlink(), path) else {
            sink.out.skipped += 1;
            continue;
        };
        let size = entry.size();
        sink.take(path, size, entry)?;
    }
    Ok(sink.out)
}

/// Strips the one top directory every entry shares (`name-1.0/`), as the docs view says
/// (book: design/fetching.md#the-docs-view).
fn strip_top(files: &mut [(String, Vec<u8>)]) {
    let Some(first) = files.first().and_then(|(p, _)| p.split_once('/')).map(|(t, _)| format!("{t}/")) else {
        return;
    };
    if files.iter().all(|(p, _)| p.starts_with(&first)) {
        for (p, _) in files.iter_mut() {
            *p = p[first.len()..].to_string();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tgz(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
        let mut b = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast()));
        for (path, data, kind) in entries {
            let mut h = tar::Header::new_gnu();
            h.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
            h.set_size(data.len() as u64);
            h.set_entry_type(*kind);
            h.set_mode(0o644);
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap().finish().unwrap()
    }

    #[test]
    fn hostile_entries_are_skipped_and_the_top_directory_stripped() {
        let bytes = tgz(&[
            ("pkg-1.0/README.md", b"hi", tar::EntryType::Regular),
            ("pkg-1.0/../evil.md", b"x", tar::EntryType::Regular),
            ("/etc/passwd", b"x", tar::EntryType::Regular),
            ("pkg-1.0/link", b"", tar::EntryType::Symlink),
            ("pkg-1.0/a\nb.md", b"x", tar::EntryType::Regular),
            ("pkg-1.0/\x1b[2J.md", b"x", tar::EntryType::Regular),
            ("pkg-1.0/src/lib.rs", b"fn f() {}", tar::EntryType::Regular),
        ]);
        let out = unpack("pkg-1.0.crate", &bytes, LIMITS).unwrap();
        let paths: Vec<&str> = out.files.iter().map(|(p, _)| p.as_str()).collect();
        // `/etc/passwd` is skipped, so every kept entry shares `pkg-1.0/`.
        assert_eq!(paths, ["README.md", "src/lib.rs"]);
        assert_eq!(out.skipped, 5);
    }

    #[test]
    fn a_skipped_entry_counts_all_it_would_inflate_and_the_stream_stops_at_the_cap() {
        let limits = Limits { file: 1000, total: 10_000, entries: 100 };
        // One entry claiming far more than the cap: refused at its header.
        let huge = tgz(&[("p/big", &vec![0u8; 20_000], tar::EntryType::Regular)]);
        let err = unpack("p.tgz", &huge, limits).unwrap_err();
        assert!(matches!(*err, Error::TooLarge { .. }), "{err}");
        // Entries skipped as links or directories count what they hold too.
        let links: Vec<(String, Vec<u8>)> = (0..5).map(|i| (format!("p/l{i}"), vec![0u8; 3000])).collect();
        let entries: Vec<(&str, &[u8], tar::EntryType)> =
            links.iter().map(|(n, b)| (n.as_str(), b.as_slice(), tar::EntryType::Symlink)).collect();
        let err = unpack("p.tgz", &tgz(&entries), limits).unwrap_err();
        assert!(matches!(*err, Error::TooLarge { .. }), "{err}");
    }

    #[test]
    fn a_bomb_stops_at_the_total_cap() {
        let limits = Limits { file: 1000, total: 10_000, entries: 100 };
        let big = vec![0u8; 999];
        let names: Vec<String> = (0..20).map(|i| format!("p/f{i}")).collect();
        let entries: Vec<(&str, &[u8], tar::EntryType)> =
            names.iter().map(|n| (n.as_str(), big.as_slice(), tar::EntryType::Regular)).collect();
        let err = unpack("p.tgz", &tgz(&entries), limits).unwrap_err();
        assert!(matches!(*err, Error::TooLarge { .. }), "{err}");
    }
}
