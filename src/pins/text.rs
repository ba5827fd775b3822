//! Reading a pin file's bytes as text the way pip does: a byte-order mark says the encoding
//! (UTF-8, UTF-16 or UTF-32, as Windows PowerShell 5's `pip freeze > requirements.txt` writes
//! UTF-16 LE), and the mark itself is no part of the first line.

use std::path::Path;

use super::error::{PinError, Result, read_error};

/// The text of the pin file `path`, shown as `name` in messages.
pub(crate) fn read(path: &Path, name: &str) -> Result<String> {
    let bytes = std::fs::read(path).map_err(read_error(name))?;
    decode(&bytes).map_err(|encoding| PinError::Encoding { path: name.to_string(), encoding }.into())
}

/// `bytes` as text; the error names the encoding the bytes claimed but broke.
pub(crate) fn decode(bytes: &[u8]) -> std::result::Result<String, &'static str> {
    // UTF-32 LE starts like UTF-16 LE, so the longer marks are tried first.
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE, 0, 0]) {
        return utf32(rest, u32::from_le_bytes).ok_or("UTF-32");
    }
    if let Some(rest) = bytes.strip_prefix(&[0, 0, 0xFE, 0xFF]) {
        return utf32(rest, u32::from_be_bytes).ok_or("UTF-32");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8(rest.to_vec()).map_err(|_| "UTF-8");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, u16::from_le_bytes).ok_or("UTF-16");
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, u16::from_be_bytes).ok_or("UTF-16");
    }
    String::from_utf8(bytes.to_vec()).map_err(|_| "UTF-8")
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
        assert_eq!(decode(b"\xEF\xBB\xBFsix==1.16.0\n"), Ok("six==1.16.0\n".to_string()));
        let le: Vec<u8> =
            [0xFF, 0xFE].into_iter().chain("a==1\r\n".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(decode(&le), Ok("a==1\r\n".to_string()));
        let be: Vec<u8> =
            [0xFE, 0xFF].into_iter().chain("a==1".encode_utf16().flat_map(u16::to_be_bytes)).collect();
        assert_eq!(decode(&be), Ok("a==1".to_string()));
        assert_eq!(decode(&[0xFF, 0xFE, 0x61]), Err("UTF-16"));
        assert_eq!(decode(&[0xC3]), Err("UTF-8"));
    }
}
