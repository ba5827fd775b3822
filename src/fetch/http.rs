//! One HTTP client for every registry: reqwest's blocking client (rustls, the standard proxy
//! variables), a deadline for each whole answer (headers and body), retries with backoff for
//! what may pass (refused connections, 429 and 5xx; `MEMORIX_NET_RETRIES` of them, as cargo's
//! `net.retry`), redirects only to http(s), and bodies
//! read under a size cap: an index document is streamed to its parser, never held three
//! times, so a hostile registry costs neither time nor memory.

use std::io::Read;
use std::time::{Duration, Instant};

use super::Registry;
use super::error::{Error, Result, capped};

/// The most an artifact may weigh.
pub const MAX_BODY: u64 = 256 << 20;
/// The most an index document may weigh (a crate's index file, a project page, a packument):
/// the largest real ones weigh a few MiB.
pub const MAX_INDEX: u64 = 64 << 20;
/// Retries per request when `MEMORIX_NET_RETRIES` is unset, and the first wait before one
/// (doubled each time).
const RETRIES: u32 = 2;
const BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait between two tries, however many retries are asked for.
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// `MEMORIX_FETCH_TIMEOUT` when unset: the seconds one whole answer may take.
const DEFAULT_TIMEOUT: u64 = 300;
/// The longest wait for any one read (or the connection): a stalled server fails early.
const STALL: Duration = Duration::from_secs(30);

/// A response body, with its content type.
pub struct Body {
    pub bytes: Vec<u8>,
    pub content_type: String,
}

/// What a request got: a body, or a status the registry answered with (404: it does not know).
pub enum Answer<B = Body> {
    Ok(B),
    Status(u16),
    /// The server says the body is this many bytes, past the cap: not downloaded.
    TooLarge(u64),
}

pub struct Client {
    inner: reqwest::blocking::Client,
    timeout: Duration,
    retries: u32,
}

/// A body being read: at most `max` bytes, within the request's deadline.
pub struct Stream {
    resp: reqwest::blocking::Response,
    left: u64,
    max: u64,
    started: Instant,
    timeout: Duration,
    pub content_type: String,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = if self.left == 0 {
            // At the cap: one more byte means the answer is too large.
            match self.resp.read(&mut [0u8])? {
                0 => return Ok(0),
                _ => {
                    return Err(std::io::Error::other(format!(
                        "the answer is larger than {} bytes",
                        self.max
                    )));
                }
            }
        } else {
            let n = buf.len().min(self.left.try_into().unwrap_or(usize::MAX));
            self.resp.read(&mut buf[..n])
        };
        let got = read.map_err(|e| match self.started.elapsed() >= self.timeout {
            true => std::io::Error::other(deadline(self.timeout)),
            false => e,
        })?;
        self.left -= got as u64;
        Ok(got)
    }
}

/// `MEMORIX_NET_RETRIES`: how many times a request that may pass is tried again (registries
/// and remotes read the same variable); unset, empty or not a number leaves the default.
fn retries_from_env() -> Option<u32> {
    std::env::var("MEMORIX_NET_RETRIES").ok().and_then(|s| s.trim().parse().ok())
}

fn deadline(timeout: Duration) -> String {
    format!("no whole answer within {} s (MEMORIX_FETCH_TIMEOUT)", timeout.as_secs())
}

impl Client {
    pub fn new() -> Result<Client> {
        let timeout = std::env::var("MEMORIX_FETCH_TIMEOUT")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .map_or(Duration::from_secs(DEFAULT_TIMEOUT), Duration::from_secs);
        let retries = retries_from_env().unwrap_or(RETRIES);
        // A redirect to another scheme (`file://`) is refused, and said to be.
        let redirect = reqwest::redirect::Policy::custom(|attempt| {
            let scheme = attempt.url().scheme().to_string();
            match scheme.as_str() {
                "http" | "https" if attempt.previous().len() < 10 => attempt.follow(),
                "http" | "https" => attempt.error("more than 10 redirects"),
                _ => {
                    attempt.error(format!("a redirect to a {scheme}: URL was refused (only http and https)"))
                }
            }
        });
        // rustls with ring's primitives: the process's provider, set once (remote sets the same).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let inner = reqwest::blocking::Client::builder()
            .user_agent(concat!("memorix/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .timeout(STALL.min(timeout))
            .redirect(redirect)
            .build()
            .map_err(|e| Error::Unreachable {
                registry: "any registry",
                url: String::new(),
                why: e.to_string(),
                env: "MEMORIX_CRATES_INDEX",
            })?;
        Ok(Client { inner, timeout, retries })
    }

    /// GETs `url` whole (an artifact, a small document).
    pub fn get(&self, registry: Registry, url: &str, accept: &str) -> Result<Answer> {
        self.get_capped(registry, url, accept, MAX_BODY)
    }

    /// GETs an index document whole, under [`MAX_INDEX`].
    pub fn get_index(&self, registry: Registry, url: &str, accept: &str) -> Result<Answer> {
        self.get_capped(registry, url, accept, MAX_INDEX)
    }

    fn get_capped(&self, registry: Registry, url: &str, accept: &str, max: u64) -> Result<Answer> {
        let mut stream = match self.open(registry, url, accept, max)? {
            Answer::Ok(s) => s,
            Answer::Status(s) => return Ok(Answer::Status(s)),
            Answer::TooLarge(n) => return Ok(Answer::TooLarge(n)),
        };
        // Sized by what the server says it sends (up to the cap): read without regrowing.
        let mut bytes = Vec::with_capacity(stream.resp.content_length().unwrap_or(0).min(max) as usize);
        stream.read_to_end(&mut bytes).map_err(|e| unreachable(registry, url, e.to_string()))?;
        Ok(Answer::Ok(Body { bytes, content_type: stream.content_type }))
    }

    /// GETs `url`, retrying what may pass until the answer's headers arrive (a 4xx is an
    /// answer, not a failure; a 429 or 5xx still there after the retries is a registry out of
    /// reach, never a missing version); the body is the caller's to read, once, through the caps.
    pub fn open(&self, registry: Registry, url: &str, accept: &str, max: u64) -> Result<Answer<Stream>> {
        let mut wait = BACKOFF;
        let mut retried = 0;
        loop {
            match self.once(url, accept, max) {
                Ok(Answer::Status(s)) if s == 429 || s >= 500 => {
                    if retried == self.retries {
                        let tries =
                            if retried == 0 { String::new() } else { format!(" ({} tries)", retried + 1) };
                        return Err(unreachable(registry, url, format!("it answered HTTP {s}{tries}")));
                    }
                }
                Err((_, true)) if retried < self.retries => {}
                Ok(answer) => return Ok(answer),
                Err((why, _)) => return Err(unreachable(registry, url, why)),
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(MAX_BACKOFF);
            retried += 1;
        }
    }

    /// One request; an error says why and whether another attempt may pass.
    fn once(&self, url: &str, accept: &str, max: u64) -> std::result::Result<Answer<Stream>, (String, bool)> {
        let started = Instant::now();
        let sent = self.inner.get(url).header("Accept", accept).timeout(self.timeout).send();
        let resp = sent.map_err(|e| match e.is_timeout() && started.elapsed() >= self.timeout {
            true => (deadline(self.timeout), false),
            false => (describe(&e), !e.is_redirect()),
        })?;
        if resp.status().is_redirection() {
            let to = resp.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("nowhere");
            return Err((
                format!("a redirect to {to} was refused (only http and https are followed)"),
                false,
            ));
        }
        if !resp.status().is_success() {
            return Ok(Answer::Status(resp.status().as_u16()));
        }
        if let Some(n) = resp.content_length().filter(|n| *n > max) {
            return Ok(Answer::TooLarge(n));
        }
        let content_type =
            resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        Ok(Answer::Ok(Stream { resp, left: max, max, started, timeout: self.timeout, content_type }))
    }
}

fn unreachable(registry: Registry, url: &str, why: String) -> Box<Error> {
    let (registry, env) = (registry.as_str(), registry.env());
    Box::new(Error::Unreachable { registry, url: capped(url), why: capped(&why), env })
}

/// An error with its causes, which reqwest keeps in the source chain.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
