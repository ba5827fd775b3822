//! What every module's errors share. Each layer owns its error type (`store::Error`,
//! `manifest::Error`, `resolve::Error`, ...), each variant with an error code and a `help:`;
//! the operations' error, `ops::Error`, wraps them all and the CLI renders it with
//! miette. This module holds only the one failure every layer meets: an I/O error, with what
//! memorix was doing and to which path.

use std::io;
use std::path::{Path, PathBuf};

use miette::Diagnostic;

/// An I/O failure while doing `action` to `path`.
#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("could not {action} {}: {source}", path.display())]
#[diagnostic(code(memorix::io), help("{}", io_help(source)))]
pub struct IoError {
    pub action: &'static str,
    pub path: PathBuf,
    pub source: io::Error,
}

fn io_help(err: &io::Error) -> &'static str {
    match err.kind() {
        io::ErrorKind::StorageFull => {
            "the disk is full; free space and retry (nothing already stored was changed)"
        }
        io::ErrorKind::PermissionDenied => "check the permissions of this path",
        io::ErrorKind::NotFound => "check that the path exists",
        _ => "check the path and retry",
    }
}

/// Builds any module's error from an I/O failure: `.map_err(Error::io("read", path))?`.
pub trait FromIo: From<IoError> {
    fn io<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> Self + 'a {
        move |source| IoError { action, path: path.to_path_buf(), source }.into()
    }
}

impl<E: From<IoError>> FromIo for E {}
