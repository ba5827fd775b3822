//! One HTTP client for every registry: reqwest's blocking client (rustls, the standard proxy
//! variables), a timeout per request, and retries with backoff for what may pass (timeouts,
//! refused connections, 429 and 5xx).

use std::io::Read;
use std::time::Duration;

use super::Registry;
use super::error::{Error, Result};

/// The most an index document or artifact may weigh.
const MAX_BODY: u64 = 256 << 20;
/// Attempts per request, and the first wait between two (doubled each time).
const ATTEMPTS: u32 = 3;
const BACKOFF: Duration = Duration::from_millis(200);

/// A response body, with its content type.
pub struct Body {
    pub bytes: Vec<u8>,
    pub content_type: String,
}

/// What a request got: a body, or a status the registry answered with (404: it does not know).
pub enum Answer {
    Ok(Body),
    Status(u16),
}

pub struct Client {
    inner: reqwest::blocking::Client,
}

impl Client {
    pub fn new() -> Result<Client> {
        let timeout = std::env::var("MEMORIX_FETCH_TIMEOUT")
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(Duration::from_secs(60), Duration::from_secs);
        let inner = reqwest::blocking::Client::builder()
            .user_agent(concat!("memorix/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10).min(timeout))
            .timeout(timeout)
            .build()
            .map_err(|e| Error::Unreachable {
                registry: "any registry",
                url: String::new(),
                why: e.to_string(),
                env: "MEMORIX_CRATES_INDEX",
            })?;
        Ok(Client { inner })
    }

    /// GETs `url` with `accept`, retrying what may pass; a 4xx is an answer, not a failure.
    pub fn get(&self, registry: Registry, url: &str, accept: &str) -> Result<Answer> {
        let mut wait = BACKOFF;
        let mut attempt = 1;
        loop {
            match self.once(url, accept) {
                Ok(Answer::Status(s)) if (s == 429 || s >= 500) && attempt < ATTEMPTS => {}
                Err(_) if attempt < ATTEMPTS => {}
                Ok(answer) => return Ok(answer),
                Err(why) => {
                    let (registry, env) = (registry.as_str(), registry.env());
                    return Err(Error::Unreachable { registry, url: url.to_string(), why, env }.into());
                }
            }
            std::thread::sleep(wait);
            wait *= 2;
            attempt += 1;
        }
    }

    fn once(&self, url: &str, accept: &str) -> std::result::Result<Answer, String> {
        let resp = self.inner.get(url).header("Accept", accept).send().map_err(describe)?;
        let status = resp.status().as_u16();
        if !resp.status().is_success() {
            return Ok(Answer::Status(status));
        }
        let content_type =
            resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
        let mut bytes = Vec::new();
        resp.take(MAX_BODY + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        if bytes.len() as u64 > MAX_BODY {
            return Err(format!("the answer is larger than {MAX_BODY} bytes"));
        }
        Ok(Answer::Ok(Body { bytes, content_type }))
    }
}

/// An error with its causes, which reqwest keeps in the source chain.
fn describe(e: reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
