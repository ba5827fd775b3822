//! Remote store URLs: where a shared Store lives (book: design/remotes.md#where-a-remote-is).

use std::fmt;
use std::path::PathBuf;

/// Where a remote store lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RemoteUrl {
    S3 {
        bucket: String,
        prefix: String,
    },
    File {
        path: PathBuf,
    },
    /// Read-only: plain HTTP(S) GETs of the remote layout (any static file server).
    Http {
        url: String,
    },
}

impl RemoteUrl {
    /// Parses `s3://BUCKET[/PREFIX]`, `file:///ABSOLUTE/DIR` or `http(s)://HOST[/PATH]`.
    pub fn parse(text: &str) -> std::result::Result<RemoteUrl, String> {
        let (scheme, rest) = text.split_once("://").ok_or("it has no scheme (s3://, file://, https://)")?;
        let clean_path = |p: &str| -> std::result::Result<String, String> {
            let parts: Vec<&str> = p.split('/').filter(|c| !c.is_empty()).collect();
            if parts.iter().any(|c| *c == "." || *c == "..") {
                return Err("its path has `.` or `..` components".into());
            }
            Ok(parts.join("/"))
        };
        match scheme {
            "s3" => {
                let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
                if bucket.is_empty() {
                    return Err("it names no bucket".into());
                }
                Ok(RemoteUrl::S3 { bucket: bucket.to_string(), prefix: clean_path(prefix)? })
            }
            "file" => {
                if !rest.starts_with('/') {
                    return Err("a file:// URL needs an absolute path (file:///DIR)".into());
                }
                Ok(RemoteUrl::File { path: PathBuf::from(format!("/{}", clean_path(rest)?)) })
            }
            "http" | "https" => {
                if rest.is_empty() || rest.starts_with('/') {
                    return Err("it names no host".into());
                }
                Ok(RemoteUrl::Http { url: format!("{scheme}://{}", rest.trim_end_matches('/')) })
            }
            other => Err(format!("scheme {other}:// is not supported")),
        }
    }

    pub fn writable(&self) -> bool {
        !matches!(self, RemoteUrl::Http { .. })
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteUrl::S3 { bucket, prefix } if prefix.is_empty() => write!(f, "s3://{bucket}"),
            RemoteUrl::S3 { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
            RemoteUrl::File { path } => write!(f, "file://{}", path.display()),
            RemoteUrl::Http { url } => f.write_str(url),
        }
    }
}
