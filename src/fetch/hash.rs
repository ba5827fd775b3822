//! Artifact hashes in the notations pin files and registries use: `sha256:<hex>` (Cargo.lock,
//! uv.lock, requirements `--hash`, poetry.lock, PyPI) and SRI `sha512-<base64>` (npm).

use std::fmt;

use base64::Engine;
use sha2::{Digest, Sha256, Sha512};

/// A validated artifact hash; it prints in the notation it was read in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactHash {
    algorithm: Algorithm,
    digest: Vec<u8>,
    sri: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    Sha256,
    Sha512,
}

impl ArtifactHash {
    /// Reads `sha256:<hex>`, `sha256=<hex>`, SRI `sha256-<b64>`/`sha512-<b64>`; `None` for
    /// anything else (md5, go.sum `h1:`), which memorix does not verify with.
    pub fn parse(text: &str) -> Option<ArtifactHash> {
        let text = text.trim();
        // SRI first: its base64 may end with `=`.
        let (name, rest, sri) = match text.split_once('-').filter(|(n, _)| n.starts_with("sha")) {
            Some((n, r)) => (n, r, true),
            None => {
                let (n, r) = text.split_once([':', '='])?;
                (n, r, false)
            }
        };
        let algorithm = match name.to_ascii_lowercase().as_str() {
            "sha256" => Algorithm::Sha256,
            "sha512" => Algorithm::Sha512,
            _ => return None,
        };
        let digest = if sri {
            base64::engine::general_purpose::STANDARD.decode(rest).ok()?
        } else {
            hex::decode(rest.to_ascii_lowercase()).ok()?
        };
        let len = match algorithm {
            Algorithm::Sha256 => 32,
            Algorithm::Sha512 => 64,
        };
        (digest.len() == len).then_some(ArtifactHash { algorithm, digest, sri })
    }

    /// The sha256 of `bytes`, as `sha256:<hex>` (what memorix records when it trusts the registry).
    pub fn sha256_of(bytes: &[u8]) -> ArtifactHash {
        ArtifactHash { algorithm: Algorithm::Sha256, digest: Sha256::digest(bytes).to_vec(), sri: false }
    }

    /// Whether `bytes` hash to this.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        self.of(bytes).digest == self.digest
    }

    /// `bytes` hashed with this hash's algorithm, in its notation (for naming what was found).
    pub fn of(&self, bytes: &[u8]) -> ArtifactHash {
        let digest = match self.algorithm {
            Algorithm::Sha256 => Sha256::digest(bytes).to_vec(),
            Algorithm::Sha512 => Sha512::digest(bytes).to_vec(),
        };
        ArtifactHash { algorithm: self.algorithm, digest, sri: self.sri }
    }
}

impl fmt::Display for ArtifactHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.algorithm {
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
        };
        if self.sri {
            write!(f, "{name}-{}", base64::engine::general_purpose::STANDARD.encode(&self.digest))
        } else {
            write!(f, "{name}:{}", hex::encode(&self.digest))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notations_round_trip_and_verify() {
        let sha = ArtifactHash::sha256_of(b"abc");
        assert_eq!(ArtifactHash::parse(&sha.to_string()), Some(sha.clone()));
        assert!(sha.matches(b"abc") && !sha.matches(b"abd"));
        let sri = ArtifactHash::parse(
            "sha512-3a81oZNherrMQXNJriBBMRLm+k6JqX6iCp7u5ktV05ohkpkqJ0/BqDa6PCOj/uu9RU1EI2Q86A4qmslPpUyknw==",
        )
        .unwrap();
        assert!(sri.matches(b"abc"));
        assert!(sri.to_string().starts_with("sha512-"));
        assert_eq!(ArtifactHash::parse("md5:abc"), None);
        assert_eq!(ArtifactHash::parse("sha256:zz"), None);
    }
}
