//! Content ids: SHA-256 digests written `sha256:<64 hex>`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

/// A SHA-256 content id. Display form is `sha256:<64 hex>`; file names use the hex alone.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id([u8; 32]);

impl Id {
    pub const PREFIX: &'static str = "sha256:";

    pub fn from_bytes(bytes: [u8; 32]) -> Id {
        Id(bytes)
    }

    /// The id of raw bytes (a blob id; agrees with `sha256sum`).
    pub fn of_bytes(bytes: &[u8]) -> Id {
        Id(Sha256::digest(bytes).into())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The 64 lowercase hex digits, as used in file names and tree entries.
    pub fn hex(&self) -> String {
        self.text().hex().to_string()
    }

    /// `sha256:<64 hex>` on the stack: records hold ids by the hundred thousand, and encoding
    /// through a `String` per id showed in their profiles.
    pub fn text(&self) -> IdText {
        let mut buf = [0u8; 71];
        buf[..Id::PREFIX.len()].copy_from_slice(Id::PREFIX.as_bytes());
        hex::encode_to_slice(self.0, &mut buf[Id::PREFIX.len()..]).expect("64 digits fit");
        IdText(buf)
    }

    /// The first 12 hex digits, for human output.
    pub fn short(&self) -> String {
        self.hex()[..12].to_string()
    }

    /// Parses exactly 64 lowercase hex digits (no `sha256:`), the form inside store files.
    pub fn from_hex(s: &str) -> Option<Id> {
        // Records of large environments hold hundreds of thousands of ids: one pass through a
        // table, without a branch per digit (a bad digit sets a high bit, checked at the end).
        let s = s.as_bytes();
        if s.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        let mut bad = 0;
        for (byte, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
            let (hi, lo) = (NIBBLE[pair[0] as usize], NIBBLE[pair[1] as usize]);
            bad |= hi | lo;
            *byte = (hi << 4) | (lo & 0x0f);
        }
        (bad & 0xf0 == 0).then_some(Id(out))
    }
}

/// The value of each lowercase hex digit; 0xff for every other byte.
const NIBBLE: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut i = 0;
    while i < 16 {
        table[b"0123456789abcdef"[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// An id's display form, as ASCII bytes.
pub struct IdText([u8; 71]);

impl IdText {
    /// The 64 hex digits alone.
    pub fn hex(&self) -> &str {
        &self[Id::PREFIX.len()..]
    }
}

impl std::ops::Deref for IdText {
    type Target = str;
    fn deref(&self) -> &str {
        std::str::from_utf8(&self.0).expect("ASCII")
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Error for a string that is not `sha256:<64 lowercase hex>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an id (expected sha256:<64 lowercase hex digits>): {0:?}")]
pub struct BadId(pub String);

impl FromStr for Id {
    type Err = BadId;
    fn from_str(s: &str) -> Result<Id, BadId> {
        s.strip_prefix(Id::PREFIX).and_then(Id::from_hex).ok_or_else(|| BadId(s.to_string()))
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        /// Parses the string where the deserializer holds it, without an owned copy.
        struct IdVisitor;
        impl serde::de::Visitor<'_> for IdVisitor {
            type Value = Id;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an id, sha256:<64 lowercase hex digits>")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Id, E> {
                s.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(IdVisitor)
    }
}

/// A user-typed abbreviation of an id: at least 8 hex digits, `sha256:` optional.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IdPrefix(String);

impl IdPrefix {
    pub const MIN_LEN: usize = 8;

    /// Accepts `sha256:abcd1234…` or `abcd1234…`; uppercase hex is folded to lowercase.
    pub fn parse(s: &str) -> Option<IdPrefix> {
        let hex = s.strip_prefix(Id::PREFIX).unwrap_or(s);
        if hex.len() < Self::MIN_LEN || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(IdPrefix(hex.to_ascii_lowercase()))
    }

    pub fn as_hex(&self) -> &str {
        &self.0
    }

    pub fn matches(&self, id: &Id) -> bool {
        id.hex().starts_with(&self.0)
    }
}

impl fmt::Display for IdPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_id_agrees_with_sha256sum() {
        // `printf 'hello\n' | sha256sum`
        assert_eq!(
            Id::of_bytes(b"hello\n").to_string(),
            "sha256:5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
    }

    #[test]
    fn parse_round_trips_and_rejects_uppercase() {
        let id = Id::of_bytes(b"x");
        assert_eq!(id.to_string().parse::<Id>().unwrap(), id);
        assert!(id.to_string().to_uppercase().parse::<Id>().is_err());
        assert!(id.hex().parse::<Id>().is_err(), "bare hex is not the display form");
        assert_eq!(Id::from_hex(&id.hex()), Some(id));
        let ff = "f".repeat(64);
        assert_eq!(Id::from_hex(&ff), Some(Id::from_bytes([0xff; 32])));
        for bad in ["g", "/", ":", "`", "G", "é"] {
            let text = format!("{bad}{}", &id.hex()[bad.len()..]);
            assert_eq!(Id::from_hex(&text), None, "{text:?}");
        }
        assert_eq!(Id::from_hex(&id.hex()[1..]), None, "63 digits");
        assert_eq!(Id::from_hex(&format!("{}0", id.hex())), None, "65 digits");
    }

    #[test]
    fn prefixes() {
        let id = Id::of_bytes(b"x");
        let p = IdPrefix::parse(&id.to_string()[..15]).unwrap();
        assert!(p.matches(&id));
        assert!(IdPrefix::parse("abc").is_none());
        assert!(IdPrefix::parse("ghijklmn").is_none());
        assert_eq!(IdPrefix::parse("ABCDEF12").unwrap().as_hex(), "abcdef12");
    }
}
