//! A local registry for fetch tests: serves the corpus's `registry/` folder on 127.0.0.1 in
//! each registry's protocol, the way a mirror would — crates.io's sparse index (its
//! `config.json` naming this server's `dl`), PyPI's Simple API JSON and npm packuments, their
//! download URLs rewritten to point here. Counts requests; can corrupt one artifact, or fail
//! the next few requests with a 503.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

pub struct Registry {
    pub port: u16,
    requests: Arc<AtomicUsize>,
    tamper: Arc<Mutex<Option<String>>>,
    /// How many of the next requests are answered 503.
    failing: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Registry {
    /// Serves `root` (the corpus's `registry/` folder) until dropped.
    pub fn serve(root: &Path) -> Registry {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().unwrap().port();
        let reg = Registry {
            port,
            requests: Arc::default(),
            tamper: Arc::default(),
            failing: Arc::default(),
            stop: Arc::default(),
        };
        let (root, requests, tamper, failing, stop) = (
            root.to_path_buf(),
            reg.requests.clone(),
            reg.tamper.clone(),
            reg.failing.clone(),
            reg.stop.clone(),
        );
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                requests.fetch_add(1, Ordering::SeqCst);
                let (root, tamper) = (root.clone(), tamper.lock().unwrap().clone());
                let fail =
                    failing.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
                std::thread::spawn(move || handle(conn, &root, port, tamper.as_deref(), fail));
            }
        });
        reg
    }

    /// The environment that points memorix at this server.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        let base = format!("http://127.0.0.1:{}", self.port);
        vec![
            ("MEMORIX_CRATES_INDEX", format!("{base}/crates/index/")),
            ("MEMORIX_PYPI_INDEX", format!("{base}/pypi/simple/")),
            ("MEMORIX_NPM_REGISTRY", format!("{base}/npm/")),
        ]
    }

    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// From now on, serve the artifact named `file` with one byte changed.
    pub fn tamper(&self, file: &str) {
        *self.tamper.lock().unwrap() = Some(file.to_string());
    }

    /// Answers the next `n` requests with a 503, as a registry under load does.
    pub fn fail_next(&self, n: usize) {
        self.failing.store(n, Ordering::SeqCst);
    }

    /// From now on, announce the artifact named `file` as 1 GiB (and send nothing).
    pub fn oversize(&self, file: &str) {
        *self.tamper.lock().unwrap() = Some(format!("oversize:{file}"));
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Answers one request (then closes the connection): with a 503 when told to `fail`.
fn handle(mut conn: TcpStream, root: &Path, port: u16, tamper: Option<&str>, fail: bool) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
            break;
        }
    }
    if fail {
        let _ = conn
            .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        return;
    }
    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
    let (status, content_type, mut body) = route(root, port, &path);
    if let Some(f) = tamper.and_then(|t| t.strip_prefix("oversize:"))
        && path.ends_with(f)
    {
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            1u64 << 30
        );
        let _ = conn.write_all(head.as_bytes());
        return;
    }
    if let Some(t) = tamper
        && path.ends_with(t)
        && let Some(last) = body.last_mut()
    {
        *last ^= 0xff;
    }
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn.write_all(head.as_bytes()).and_then(|_| conn.write_all(&body));
}

/// A PEP 503 page for a PEP 691 document: `<a href="../../../pypi/host/...#sha256=HEX">FILE</a>`.
fn simple_html(json: &[u8]) -> Vec<u8> {
    let doc: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut html = String::from("<!DOCTYPE html>\n<html><body>\n");
    for f in doc["files"].as_array().unwrap() {
        let url =
            f["url"].as_str().unwrap().replace("https://files.pythonhosted.org/", "../../../pypi/host/");
        let sha = f["hashes"]["sha256"].as_str().unwrap_or_default();
        html.push_str(&format!(
            "<a href=\"{url}#sha256={sha}\">{}</a><br/>\n",
            f["filename"].as_str().unwrap()
        ));
    }
    html.push_str("</body></html>\n");
    html.into_bytes()
}

/// The registry protocols, mapped onto the corpus's folders.
fn route(root: &Path, port: u16, path: &str) -> (&'static str, &'static str, Vec<u8>) {
    let base = format!("http://127.0.0.1:{port}");
    let file = |p: PathBuf| std::fs::read(p).ok();
    let found = match path {
        "/crates/index/config.json" => {
            let dl = format!("{base}/crates/dl/{{crate}}/{{crate}}-{{version}}.crate");
            Some((serde_json::json!({ "dl": dl }).to_string().into_bytes(), "application/json"))
        }
        p if p.starts_with("/crates/") => file(root.join(&p[1..])).map(|b| (b, "application/octet-stream")),
        p if p.starts_with("/pypi/simple/") => {
            let name = p["/pypi/simple/".len()..].trim_end_matches('/');
            file(root.join(format!("pypi/simple/{name}.json"))).map(|b| {
                let text = String::from_utf8(b).unwrap();
                let text = text.replace("https://files.pythonhosted.org/", &format!("{base}/pypi/host/"));
                (text.into_bytes(), "application/vnd.pypi.simple.v1+json")
            })
        }
        // PEP 503: the same project pages in HTML, links relative to the page, as older
        // indexes and mirrors serve them.
        p if p.starts_with("/pypi-html/simple/") => {
            let name = p["/pypi-html/simple/".len()..].trim_end_matches('/');
            file(root.join(format!("pypi/simple/{name}.json"))).map(|b| (simple_html(&b), "text/html"))
        }
        p if p.starts_with("/pypi/host/") => {
            let name = p.rsplit('/').next().unwrap();
            file(root.join("pypi/files").join(name)).map(|b| (b, "application/octet-stream"))
        }
        p if p.starts_with("/npm/") && p.contains("/-/") => {
            let name = p.rsplit('/').next().unwrap();
            file(root.join("npm/tarballs").join(name)).map(|b| (b, "application/octet-stream"))
        }
        p if p.starts_with("/npm/") => file(root.join(format!("npm/packuments/{}.json", &p[5..]))).map(|b| {
            let text = String::from_utf8(b).unwrap();
            let text = text.replace("https://registry.npmjs.org/", &format!("{base}/npm/"));
            (text.into_bytes(), "application/json")
        }),
        _ => None,
    };
    match found {
        Some((body, ct)) => ("200 OK", ct, body),
        None => ("404 Not Found", "text/plain", b"not found".to_vec()),
    }
}
