//! What can go wrong sharing a Store through a remote: bad URLs and names, unreachable or
//! damaged remotes, and a push that lacks what it should send.

use std::path::PathBuf;

use miette::Diagnostic;

use crate::diagnostics::IoError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] IoError),

    #[error("{url:?} is not a remote store URL: {reason}")]
    #[diagnostic(
        code(memorix::remote::bad_url),
        help("remotes are s3://BUCKET[/PREFIX], file:///ABSOLUTE/DIR or http(s)://HOST[/PATH] (read-only)")
    )]
    Url { url: String, reason: String },

    #[error("{name:?} is not a remote name")]
    #[diagnostic(
        code(memorix::remote::bad_name),
        help("use letters, digits, `-`, `_` and `.`, e.g. `cache` or `team-s3`")
    )]
    BadName { name: String },

    #[error("no remote named `{name}`")]
    #[diagnostic(code(memorix::remote::unknown), help("{}", remote_choices(known)))]
    Unknown { name: String, known: Vec<String> },

    #[error("a remote named `{name}` already exists ({url})")]
    #[diagnostic(
        code(memorix::remote::exists),
        help("`memorix remote remove {name}` first, or pick another name")
    )]
    Exists { name: String, url: String },

    #[error("{message}")]
    #[diagnostic(code(memorix::remote::which), help("{}", remote_choices(known)))]
    NoneChosen { message: String, known: Vec<String> },

    #[error("{url} is read-only: memorix cannot push over plain HTTP")]
    #[diagnostic(
        code(memorix::remote::read_only),
        help("push to the s3:// or file:// store behind it; http(s):// remotes only serve substitutions")
    )]
    ReadOnly { url: String },

    #[error("remote {remote}: could not {action} {key}: {message}")]
    #[diagnostic(
        code(memorix::remote::unreachable),
        help(
            "check the URL, the network and the AWS_* credentials (MEMORIX_S3_ENDPOINT or AWS_ENDPOINT_URL for a local server); nothing half-transferred was kept, so run the command again"
        )
    )]
    Failed { remote: String, action: &'static str, key: String, message: String },

    #[error("remote {remote} served a damaged {object}: {reason}")]
    #[diagnostic(
        code(memorix::remote::corrupt),
        help(
            "the object was rejected and did not enter the store; repair the remote (`memorix push --all` from a healthy store re-uploads nothing that exists, so delete the damaged object there first)"
        )
    )]
    Corrupt { remote: String, object: String, reason: String },

    #[error("cannot push blob {blob}: it is {} MiB, and remotes carry blobs of at most {} MiB", size >> 20, max >> 20)]
    #[diagnostic(
        code(memorix::remote::too_large),
        help(
            "a pull cannot tell a real blob that large from a hostile one until it has all arrived, so none is shared; keep files that large out of the Store (`memorix rm`, or .memorixignore)"
        )
    )]
    BlobTooLarge { blob: crate::model::Id, size: u64, max: u64 },

    #[error("cannot push: {object}, which {needed_by}, is not in the store")]
    #[diagnostic(
        code(memorix::remote::incomplete),
        help("run `memorix build` (or `memorix pull`) so the store holds what the lock needs, then push")
    )]
    PushIncomplete { object: String, needed_by: String },

    #[error("remote {remote} lacks {} objects memorix.lock needs, e.g. {}", missing.len(), missing[0])]
    #[diagnostic(
        code(memorix::remote::missing),
        help("push them from a store that has them (`memorix push` in the project), then pull again")
    )]
    Missing { remote: String, missing: Vec<String> },

    #[error("{}: {message}", path.display())]
    #[diagnostic(
        code(memorix::remote::config),
        help("fix or delete the file; `memorix remote add` writes it")
    )]
    Config { path: PathBuf, message: String },
}

fn remote_choices(known: &[String]) -> String {
    if known.is_empty() {
        "add one with `memorix remote add NAME URL`, or name a URL directly".to_string()
    } else {
        format!("the remotes are: {}; a URL works too", known.join(", "))
    }
}

impl Error {
    /// A damaged object served by a remote is a failed check (exit 1); everything else is 2.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Corrupt { .. } => 1,
            _ => 2,
        }
    }
}
