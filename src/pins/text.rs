//! Reading a pin file's bytes as text the way pip does: a byte-order mark says the encoding
//! (UTF-8, UTF-16 or UTF-32, as Windows PowerShell 5's `pip freeze > requirements.txt` writes
//! UTF-16 LE), and the mark itself is no part of the first line.

use std::io::Read;
use std::path::Path;

use crate::confine::MAX_FILE;

use super::error::{PinError, Result, read_error};

/// Where each line of a text starts, so the line of any byte offset is a binary search: a
/// parser asks once per package, and scanning from the start each time is quadratic.
pub(crate) struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        Lines(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i).collect())
    }

    /// The 1-based line of byte `offset` (the number of `\n` before it, plus one).
    pub(crate) fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|&b| b < offset) + 1
    }
}

/// The text of the pin file `path`, shown as `name` in messages.
pub(crate) fn read(path: &Path, name: &str) -> Result<String> {
    let bytes = read_bytes(path, name)?;
    decode(bytes).map_err(|encoding| PinError::Encoding { path: name.to_string(), encoding }.into())
}

/// The bytes of `path`, refused by size before they are read when past [`MAX_FILE`]: no tool
/// writes a pin file that large, and parsing stays bounded whatever a repository commits.
fn read_bytes(path: &Path, name: &str) -> Result<Vec<u8>> {
    let file = std::fs::File::open(path).map_err(read_error(name))?;
    let size = file.metadata().map_err(read_error(name))?.len();
    let too_large = |size| PinError::TooLarge { path: name.to_string(), size, max: MAX_FILE };
    if size > MAX_FILE {
        return Err(too_large(size).into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(read_error(name))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(too_large(bytes.len() as u64).into());
    }
    Ok(bytes)
}

/// `bytes` as text; the error names the encoding the bytes claimed but broke.
pub(crate) fn decode(mut bytes: Vec<u8>) -> std::result::Result<String, &'static str> {
    // UTF-32 LE starts like UTF-16 LE, so the longer marks are tried first.
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE, 0, 0]) {
        return utf32(rest, u32::from_le_bytes).ok_or("UTF-32");
    }
    if let Some(rest) = bytes.strip_prefix(&[0, 0, 0xFE, 0xFF]) {
        return utf32(rest, u32::from_be_bytes).ok_or("UTF-32");
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
        return String::from_utf8(bytes).map_err(|_| "UTF-8");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, u16::from_le_bytes).ok_or("UTF-16");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, u16::from_be_bytes).ok_or("UTF-16");
    }
    // Without a mark the bytes become the text in place: a large file is not copied.
    String::from_utf8(bytes).map_err(|_| "UTF-8")
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Option<String> {
    if !bytes.len().is_multiple_of(2) {
        return None;
    }
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    char::decode_utf16(units).collect::<std::result::Result<String, _>>().ok()
}

fn utf32(bytes: &[u8], unit: fn([u8; 4]) -> u32) -> Option<String> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    bytes.chunks_exact(4).map(|c| char::from_u32(unit([c[0], c[1], c[2], c[3]]))).collect()
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn byte_order_marks_choose_the_encoding_and_are_dropped() {
        assert_eq!(decode(b"\xEF\xBB\xBFsix==1.16.0\n".to_vec()), Ok("six==1.16.0\n".to_string()));
        let le: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("a==1\r\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(decode(le), Ok("a==1\r\n".to_string()));
        let be: Vec<u8> =
            [0xFE, 0xFF].into_iter().chain("a==1".encode_utf16().flat_map(u16::to_be_bytes)).collect();
        assert_eq!(decode(be), Ok("a==1".to_string()));
        assert_eq!(decode(vec![0xFF, 0xFE, 0x61]), Err("UTF-16"));
        assert_eq!(decode(vec![0xC3]), Err("UTF-8"));
    }
}
