//! What can go wrong fetching a pinned library's docs. A hash that does not match is exit 1
//! (a check that failed, book: design/reliability.md#exit-codes); everything else is exit 2.

use miette::Diagnostic;

/// Boxed: the variants carry the URLs and hashes a message names.
pub type Result<T, E = Box<Error>> = std::result::Result<T, E>;

impl From<crate::store::Error> for Box<Error> {
    fn from(e: crate::store::Error) -> Box<Error> {
        Box::new(Error::Store(e))
    }
}

impl From<crate::diagnostics::IoError> for Box<Error> {
    fn from(e: crate::diagnostics::IoError) -> Box<Error> {
        Box::new(Error::Io(e))
    }
}

#[derive(Debug, thiserror::Error, Diagnostic)]
pub enum Error {
    #[error("{artifact} from {registry} does not match {expected_from}: expected {expected}, got {actual}")]
    #[diagnostic(
        code(memorix::fetch::hash_mismatch),
        help(
            "nothing was stored. The registry (or a mirror, or a proxy) served other bytes than the ones {expected_from} pinned: check `{url}`, and the pin at {site}"
        )
    )]
    HashMismatch {
        artifact: String,
        registry: &'static str,
        url: String,
        expected: String,
        expected_from: String,
        actual: String,
        site: String,
    },

    #[error("{library} {version} from {artifact} unpacks to {actual}, but memorix.lock has {expected}")]
    #[diagnostic(
        code(memorix::fetch::tree_mismatch),
        help(
            "nothing was stored. The artifact matches its hash, so memorix.lock was written by a memorix that kept other files (or [fetch.{library}] changed); run `memorix lock` to record what this one keeps"
        )
    )]
    TreeMismatch { library: String, version: String, artifact: String, expected: String, actual: String },

    #[error("cannot reach {registry} at {url}: {why}")]
    #[diagnostic(
        code(memorix::fetch::unreachable),
        help(
            "check the network, a proxy (HTTPS_PROXY) or the registry URL ({env}); `--offline` builds from what the Store has"
        )
    )]
    Unreachable { registry: &'static str, url: String, why: String, env: &'static str },

    #[error("{registry} has no {what} (asked {url}: {answer})")]
    #[diagnostic(
        code(memorix::fetch::not_found),
        help("check the pin at {site}; the versions the registry knows: {known}")
    )]
    NotFound {
        registry: &'static str,
        what: String,
        url: String,
        answer: String,
        site: String,
        known: String,
    },

    #[error("{registry} answered {url} with something memorix cannot read: {why}")]
    #[diagnostic(
        code(memorix::fetch::bad_answer),
        help("a mirror set in {env} must speak the registry's protocol")
    )]
    BadAnswer { registry: &'static str, url: String, why: String, env: &'static str },

    #[error("{file} is not an archive memorix can read: {why}")]
    #[diagnostic(
        code(memorix::fetch::bad_archive),
        help("nothing was stored; report the artifact to its maintainers")
    )]
    BadArchive { file: String, why: String },

    #[error("{file} is not a .crate, .tar.gz, .tgz, .whl or .zip")]
    #[diagnostic(
        code(memorix::fetch::unknown_archive),
        help("memorix reads the artifacts crates.io, PyPI and npm serve")
    )]
    UnknownArchive { file: String },

    #[error("{file} unpacks to more than {cap} bytes or {entries} entries")]
    #[diagnostic(
        code(memorix::fetch::too_large),
        help("nothing was stored; a release artifact this large is likely a decompression bomb")
    )]
    TooLarge { file: String, cap: u64, entries: usize },

    #[error("{file} is {size} bytes, past the {cap}-byte cap on release artifacts")]
    #[diagnostic(
        code(memorix::fetch::artifact_too_large),
        help(
            "nothing was downloaded. A release this large is binary (a CUDA wheel, say); ingest the library's docs by hand: `memorix ingest docs/LIB/ DIR --version X`"
        )
    )]
    ArtifactTooLarge { file: String, size: u64, cap: u64 },

    #[error("{file} holds nothing the docs view keeps")]
    #[diagnostic(
        code(memorix::fetch::nothing_kept),
        help("add `[fetch.{library}] include = [\"GLOB\", ...]` to memorix.toml to keep files of it")
    )]
    NothingKept { file: String, library: String },

    #[error("{library} {version} is not in the Store, and fetching it from {registry} is off ({why})")]
    #[diagnostic(
        code(memorix::fetch::offline),
        help(
            "run `memorix build` without --offline (or `memorix fetch {library}`) to fetch it, or ingest it by hand: `memorix ingest docs/{library}/ DIR --version {version}`"
        )
    )]
    Offline { library: String, version: String, registry: &'static str, why: &'static str },

    #[error("{what} is not a valid registry URL: {url}")]
    #[diagnostic(code(memorix::fetch::bad_registry_url), help("give an http:// or https:// URL"))]
    BadRegistryUrl { what: &'static str, url: String },

    #[error(transparent)]
    #[diagnostic(transparent)]
    Store(#[from] crate::store::Error),

    #[error(transparent)]
    #[diagnostic(transparent)]
    Io(#[from] crate::diagnostics::IoError),
}

/// The most characters of a registry's text (an error, a URL) a message quotes.
const QUOTED: usize = 500;
/// The most versions a message lists.
const LISTED: usize = 20;

/// `text` cut to a few hundred characters: a message quotes a registry, not its whole answer.
pub(crate) fn capped(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}… ({} bytes in all)", &text[..at], text.len()),
        None => text.to_string(),
    }
}

/// Versions a registry knows, as a message lists them: the last few it lists (the newest, in
/// the order registries publish), and how many came before.
#[derive(Debug, Default)]
pub(crate) struct Known {
    listed: std::collections::VecDeque<String>,
    earlier: usize,
}

impl Known {
    pub(crate) fn push(&mut self, version: &str) {
        if version.is_empty() || self.listed.iter().any(|v| v == version) {
            return;
        }
        self.listed.push_back(capped(version));
        if self.listed.len() > LISTED {
            self.listed.pop_front();
            self.earlier += 1;
        }
    }

    pub(crate) fn text(&self) -> String {
        let listed = Vec::from(self.listed.clone()).join(", ");
        if self.earlier == 0 { listed } else { format!("{listed} (and {} earlier)", self.earlier) }
    }
}

impl Error {
    pub(crate) fn bad_archive(file: &str, why: impl std::fmt::Display) -> Box<Error> {
        Box::new(Error::BadArchive { file: file.to_string(), why: capped(&why.to_string()) })
    }

    /// The same failure once more, for each request it stops (a registry's `config.json` that
    /// cannot be read stops every crate).
    pub(crate) fn again(&self) -> Box<Error> {
        Box::new(match self {
            Error::Unreachable { registry, url, why, env } => {
                Error::Unreachable { registry, url: url.clone(), why: why.clone(), env }
            }
            Error::BadAnswer { registry, url, why, env } => {
                Error::BadAnswer { registry, url: url.clone(), why: why.clone(), env }
            }
            other => Error::BadAnswer {
                registry: "crates-io",
                url: String::new(),
                why: other.to_string(),
                env: "MEMORIX_CRATES_INDEX",
            },
        })
    }

    /// 1 for a check that failed (a hash, a tree id), 2 for the rest.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::HashMismatch { .. } | Error::TreeMismatch { .. } => 1,
            _ => 2,
        }
    }
}

/// An index document past the cap, which the server said before sending it.
pub(crate) fn index_too_large(registry: super::Registry, url: &str, size: u64) -> Box<Error> {
    Box::new(Error::BadAnswer {
        registry: registry.as_str(),
        url: capped(url),
        why: format!("an index document of {size} bytes, past the cap"),
        env: registry.env(),
    })
}
