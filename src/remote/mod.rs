//! Remote stores (book: design/remotes.md): one Store shared across machines and CI through
//! object storage (S3, a local directory, read-only HTTP) via `object_store`. A remote holds
//! the store's own relative paths (`blobs/<aa>/<hex>`, `trees/<aa>/<hex>.json`, ...), so a
//! `file://` remote is browsable. object_store is async; a small tokio runtime lives inside
//! each [`Remote`] so the rest of memorix stays synchronous.

pub mod config;
pub mod error;
pub mod objects;
pub mod transfer;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub use error::{Error, Result};
use futures::StreamExt;
use futures::stream;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey, S3ConditionalPut};
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions,
    PutPayload, RetryConfig, UpdateVersion, WriteMultipart,
};
use sha2::{Digest, Sha256};

use crate::diagnostics::FromIo;
use crate::model::{Id, RemoteUrl};
use crate::progress::Task;

/// Transfers in flight at once per remote.
const CONCURRENCY: usize = 16;

/// Objects other than blobs are records of a few MiB at most; a bigger one is refused while it
/// downloads, so a hostile remote cannot make memorix hold it in memory.
pub const MAX_RECORD: u64 = 64 << 20;

/// The largest blob a remote carries. A blob's size is known only once it has arrived and
/// hashed, so a remote could serve gigabytes under an 11-byte blob's key: this bounds what a
/// pull streams to disk before the hash tells, by the size the remote announces. `push`
/// refuses a larger blob, so whatever is pushed can be pulled.
pub const MAX_BLOB: u64 = 512 << 20;

/// Blobs larger than this are uploaded in parts, read from the file as they go.
const PART: usize = 8 << 20;

/// An object streamed to a temp file as it downloaded: never whole in memory.
pub struct Download {
    pub path: PathBuf,
    pub len: u64,
    /// The SHA-256 of its bytes (a blob's id, when it is the blob it claims to be).
    pub sha256: Id,
}

impl Download {
    /// The bytes of a record (within [`MAX_RECORD`], which the download enforced).
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        std::fs::read(&self.path)
    }
}

impl Drop for Download {
    fn drop(&mut self) {
        // Gone already when the store adopted it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What to upload: a record's bytes, or a blob's file, streamed.
pub enum Upload {
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// A connection to one remote store, with its own small runtime.
pub struct Remote {
    pub url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    prefix: String,
    runtime: tokio::runtime::Runtime,
}

/// Retries with exponential backoff on transient errors (connection refused, 5xx, timeouts),
/// bounded so a dead server is reported within seconds, not minutes: four, or
/// `MEMORIX_NET_RETRIES` (the variable the registries' client reads too).
fn retry_config() -> RetryConfig {
    let retries = std::env::var("MEMORIX_NET_RETRIES").ok().and_then(|s| s.trim().parse().ok());
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: retries.unwrap_or(4),
        retry_timeout: Duration::from_secs(30),
    }
}

impl Remote {
    /// Connects to `url` (no request is made yet). `create` makes a missing `file://`
    /// directory, for pushes.
    pub fn open(url: &RemoteUrl, create: bool) -> Result<Remote> {
        // rustls with ring's primitives: the process's provider, set once (fetch sets the same).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let fail = |message: String| Error::Failed {
            remote: url.to_string(),
            action: "open",
            key: String::new(),
            message,
        };
        let (store, prefix): (Arc<dyn ObjectStore>, String) = match url {
            RemoteUrl::S3 { bucket, prefix } => {
                // Timeouts through `with_config`, so `AWS_*` client settings from the
                // environment (AWS_ALLOW_HTTP, ...) are kept.
                let mut b = AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .with_retry(retry_config())
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout), "5s")
                    .with_config(AmazonS3ConfigKey::Client(ClientConfigKey::Timeout), "120s");
                if let Some(endpoint) = std::env::var("MEMORIX_S3_ENDPOINT").ok().filter(|e| !e.is_empty()) {
                    b = b.with_endpoint(endpoint);
                }
                if b.get_config_value(&AmazonS3ConfigKey::Region).is_none() {
                    b = b.with_region("us-east-1");
                }
                if b.get_config_value(&AmazonS3ConfigKey::Endpoint).is_some_and(|e| e.starts_with("http://"))
                {
                    b = b.with_allow_http(true);
                }
                // Refs and quests are updated with If-Match / If-None-Match (S3 conditional writes).
                b = b.with_conditional_put(S3ConditionalPut::ETagMatch);
                (Arc::new(b.build().map_err(|e| fail(e.to_string()))?), prefix.clone())
            }
            RemoteUrl::File { path } => {
                if create {
                    std::fs::create_dir_all(path).map_err(Error::io("create the remote directory", path))?;
                }
                let local = LocalFileSystem::new_with_prefix(path)
                    .map_err(|e| fail(format!("{} is not a directory here: {e}", path.display())))?
                    .with_fsync(true);
                (Arc::new(local), String::new())
            }
            RemoteUrl::Http { url: base } => {
                let options = ClientOptions::new()
                    .with_allow_http(base.starts_with("http://"))
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(120));
                let http = HttpBuilder::new()
                    .with_url(base)
                    .with_retry(retry_config())
                    .with_client_options(options)
                    .build()
                    .map_err(|e| fail(e.to_string()))?;
                (Arc::new(http), String::new())
            }
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("memorix-remote")
            .enable_all()
            .build()
            .map_err(|e| fail(format!("could not start the I/O runtime: {e}")))?;
        Ok(Remote { url: url.clone(), store, prefix, runtime })
    }

    fn path(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    fn failed(&self, action: &'static str, key: &str, e: object_store::Error) -> Error {
        Error::Failed { remote: self.url.to_string(), action, key: key.to_string(), message: e.to_string() }
    }

    /// Downloads one record (a ref, a quest); `None` when the remote does not have it.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.get_versioned(key)?.map(|(bytes, _)| bytes))
    }

    /// A record and the version it has on the remote (for a conditional update).
    fn get_versioned(&self, key: &str) -> Result<Option<(Vec<u8>, UpdateVersion)>> {
        self.plain_file(key)?;
        let (store, path) = (self.store.clone(), self.path(key));
        self.runtime.block_on(async move {
            let found = match store.get(&path).await {
                Ok(found) => found,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(self.failed("download", key, e)),
            };
            let version =
                UpdateVersion { e_tag: found.meta.e_tag.clone(), version: found.meta.version.clone() };
            if found.meta.size > MAX_RECORD {
                return Err(self.too_large(key, MAX_RECORD));
            }
            let announced = found.meta.size;
            let mut bytes = Vec::new();
            let mut chunks = found.into_stream();
            while let Some(chunk) = chunks.next().await {
                bytes.extend_from_slice(&chunk.map_err(|e| self.failed("download", key, e))?);
                if bytes.len() as u64 > announced {
                    return Err(self.longer_than_announced(key, announced));
                }
            }
            Ok(Some((bytes, version)))
        })
    }

    /// On a `file://` remote, refuses an object that is not a regular file before it is
    /// opened: opening a FIFO blocks for ever, and a device never ends.
    fn plain_file(&self, key: &str) -> Result<()> {
        let RemoteUrl::File { path } = &self.url else { return Ok(()) };
        let file = path.join(key);
        let what = match std::fs::metadata(&file) {
            Ok(m) if m.is_file() => return Ok(()),
            Err(_) => return Ok(()),
            Ok(m) => special_kind(&m.file_type()),
        };
        let reason = format!("{} is a {what}, not a regular file", file.display());
        Err(Error::Corrupt { remote: self.url.to_string(), object: key.to_string(), reason })
    }

    fn longer_than_announced(&self, key: &str, announced: u64) -> Error {
        let reason = format!("it kept coming past the {announced} bytes the remote announced");
        Error::Corrupt { remote: self.url.to_string(), object: key.to_string(), reason }
    }

    fn too_large(&self, key: &str, max: u64) -> Error {
        let reason = format!("it is larger than {} MiB, which no such object is", max >> 20);
        Error::Corrupt { remote: self.url.to_string(), object: key.to_string(), reason }
    }

    /// Uploads one record, replacing what is there.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let store = self.store.clone();
        let path = self.path(key);
        self.runtime
            .block_on(async move { store.put(&path, PutPayload::from(bytes)).await.map(drop) })
            .map_err(|e| self.failed("upload", key, e))
    }

    /// Read-modify-write of one record that another machine may update at the same time:
    /// `change` gets what the remote holds and returns the new bytes (or `None` to leave it).
    /// On S3 the write is conditional (If-Match / If-None-Match) and retried when the record
    /// moved meanwhile; a `file://` remote, which has no conditional update, takes a lease
    /// (`<key>.lease`, created exclusively) around it. True when it wrote.
    pub fn update(
        &self,
        key: &str,
        mut change: impl FnMut(Option<&[u8]>) -> Result<Option<Vec<u8>>>,
    ) -> Result<bool> {
        if matches!(self.url, RemoteUrl::File { .. }) {
            let _lease = self.lease(key)?;
            let current = self.get(key)?;
            let Some(new) = change(current.as_deref())? else { return Ok(false) };
            self.put(key, new)?;
            return Ok(true);
        }
        for _ in 0..16 {
            let current = self.get_versioned(key)?;
            let Some(new) = change(current.as_ref().map(|(b, _)| b.as_slice()))? else { return Ok(false) };
            let mode = match current {
                Some((_, version)) => PutMode::Update(version),
                None => PutMode::Create,
            };
            let (store, path) = (self.store.clone(), self.path(key));
            let opts = PutOptions { mode, ..PutOptions::default() };
            match self
                .runtime
                .block_on(async move { store.put_opts(&path, PutPayload::from(new), opts).await })
            {
                Ok(_) => return Ok(true),
                Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(self.failed("update", key, e)),
            }
        }
        let message = "it kept changing while memorix updated it; run the command again".to_string();
        Err(Error::Failed { remote: self.url.to_string(), action: "update", key: key.to_string(), message })
    }

    /// Takes `<key>.lease` on the remote (an exclusive create), waiting while another holds it;
    /// a lease older than a minute is a crashed holder's and is broken.
    fn lease(&self, key: &str) -> Result<Lease<'_>> {
        let lease = format!("{key}.lease");
        let path = self.path(&lease);
        for attempt in 0..600 {
            let (store, p) = (self.store.clone(), path.clone());
            let opts = PutOptions { mode: PutMode::Create, ..PutOptions::default() };
            let stamp = format!("{}\n", std::process::id());
            match self
                .runtime
                .block_on(async move { store.put_opts(&p, PutPayload::from(stamp), opts).await })
            {
                Ok(_) => return Ok(Lease { remote: self, path }),
                Err(object_store::Error::AlreadyExists { .. }) => {}
                Err(e) => return Err(self.failed("lock", &lease, e)),
            }
            let (store, p) = (self.store.clone(), path.clone());
            let age = self
                .runtime
                .block_on(async move { store.head(&p).await })
                .ok()
                .map(|m| (chrono_now() - m.last_modified.timestamp()).max(0));
            if attempt > 0 && age.is_some_and(|a| a > 60) {
                let (store, p) = (self.store.clone(), path.clone());
                let _ = self.runtime.block_on(async move { store.delete(&p).await });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let message = "another push holds it; run the command again".to_string();
        Err(Error::Failed { remote: self.url.to_string(), action: "lock", key: lease, message })
    }

    /// Downloads `keys`, CONCURRENCY at once, each streamed to a temp file in `tmp` (refused
    /// past its cap), handing each to `arrived` as it comes (in arrival order, on this
    /// thread). Returns the indices of the keys the remote lacks. Stops at the first failure,
    /// of the remote or of `arrived`.
    pub fn get_many(
        &self,
        keys: &[(String, u64)],
        tmp: &Path,
        bar: &dyn Task,
        mut arrived: impl FnMut(usize, Download) -> Result<()>,
    ) -> Result<Vec<usize>> {
        self.runtime.block_on(async {
            let mut fetches = stream::iter(keys.iter().enumerate())
                .map(|(i, (key, max))| async move { (i, self.download(key, *max, tmp).await) })
                .buffer_unordered(CONCURRENCY);
            let mut absent = Vec::new();
            while let Some((i, fetched)) = fetches.next().await {
                match fetched? {
                    Some(download) => arrived(i, download)?,
                    None => absent.push(i),
                }
                bar.advance(1);
            }
            absent.sort_unstable();
            Ok(absent)
        })
    }

    /// Streams one object into a new temp file in `tmp`, hashing as it goes, and stops at the
    /// size the remote announced for it (refused when past `max`).
    async fn download(&self, key: &str, max: u64, tmp: &Path) -> Result<Option<Download>> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        self.plain_file(key)?;
        let found = match self.store.get(&self.path(key)).await {
            Ok(found) => found,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.failed("download", key, e)),
        };
        let announced = found.meta.size;
        if announced > max {
            return Err(self.too_large(key, max));
        }
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = tmp.join(format!(".download.{}.{n}", std::process::id()));
        let mut file = std::fs::File::create(&path).map_err(Error::io("create", &path))?;
        let mut download = Download { path, len: 0, sha256: Id::of_bytes(b"") };
        let mut hasher = Sha256::new();
        let mut chunks = found.into_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk = chunk.map_err(|e| self.failed("download", key, e))?;
            download.len += chunk.len() as u64;
            if download.len > announced {
                return Err(self.longer_than_announced(key, announced));
            }
            hasher.update(&chunk);
            file.write_all(&chunk).map_err(Error::io("write", &download.path))?;
        }
        download.sha256 = Id::from_bytes(hasher.finalize().into());
        Ok(Some(download))
    }

    /// Uploads each object the remote does not have yet (an existence check first, never a
    /// re-upload), CONCURRENCY at once. `load` checks an object and says what to send, on a
    /// runtime thread; a big file goes up in parts. Returns how many were uploaded.
    pub fn put_missing<T: Send + Sync>(
        &self,
        items: &[(String, T)],
        bar: &dyn Task,
        load: impl Fn(&T) -> Result<Upload> + Sync,
    ) -> Result<usize> {
        let load = &load;
        self.runtime.block_on(async {
            let mut uploads = stream::iter(items.iter())
                .map(|(key, item)| async move {
                    match self.store.head(&self.path(key)).await {
                        Ok(_) => return Ok(false),
                        Err(object_store::Error::NotFound { .. }) => {}
                        Err(e) => return Err(self.failed("check", key, e)),
                    }
                    self.upload(key, load(item)?).await?;
                    Ok(true)
                })
                .buffer_unordered(CONCURRENCY);
            let mut uploaded = 0;
            while let Some(done) = uploads.next().await {
                uploaded += usize::from(done?);
                bar.advance(1);
            }
            Ok(uploaded)
        })
    }

    async fn upload(&self, key: &str, what: Upload) -> Result<()> {
        let path = self.path(key);
        let failed = |e| self.failed("upload", key, e);
        let file = match what {
            Upload::Bytes(bytes) => {
                return self.store.put(&path, PutPayload::from(bytes)).await.map(drop).map_err(failed);
            }
            Upload::File(file) => file,
        };
        let mut reader = std::fs::File::open(&file).map_err(Error::io("open", &file))?;
        let len = reader.metadata().map_err(Error::io("stat", &file))?.len();
        if len <= PART as u64 {
            let mut bytes = Vec::with_capacity(len as usize);
            reader.read_to_end(&mut bytes).map_err(Error::io("read", &file))?;
            return self.store.put(&path, PutPayload::from(bytes)).await.map(drop).map_err(failed);
        }
        let mut parts =
            WriteMultipart::new_with_chunk_size(self.store.put_multipart(&path).await.map_err(failed)?, PART);
        let mut buf = vec![0u8; PART];
        loop {
            parts.wait_for_capacity(2).await.map_err(failed)?;
            let n = reader.read(&mut buf).map_err(Error::io("read", &file))?;
            if n == 0 {
                break;
            }
            parts.write(&buf[..n]);
        }
        parts.finish().await.map(drop).map_err(failed)
    }
}

/// A held `<key>.lease`, deleted when dropped.
struct Lease<'r> {
    remote: &'r Remote,
    path: ObjectPath,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let (store, path) = (self.remote.store.clone(), self.path.clone());
        let _ = self.remote.runtime.block_on(async move { store.delete(&path).await });
    }
}

/// Seconds since the epoch.
fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    match () {
        _ if t.is_fifo() => "FIFO",
        _ if t.is_socket() => "socket",
        _ if t.is_block_device() || t.is_char_device() => "device",
        _ if t.is_dir() => "directory",
        _ => "special file",
    }
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_to_one_normal_form() {
        let s3 = RemoteUrl::parse("s3://team/store//ci/").unwrap();
        assert_eq!(s3, RemoteUrl::S3 { bucket: "team".into(), prefix: "store/ci".into() });
        assert_eq!(s3.to_string(), "s3://team/store/ci");
        assert_eq!(RemoteUrl::parse("s3://team").unwrap().to_string(), "s3://team");
        assert_eq!(RemoteUrl::parse("file:///mnt/memory/").unwrap().to_string(), "file:///mnt/memory");
        let http = RemoteUrl::parse("https://cache.example.com/memorix/").unwrap();
        assert_eq!(http.to_string(), "https://cache.example.com/memorix");
        assert!(!http.writable() && s3.writable());
    }

    #[test]
    fn bad_urls_say_why() {
        for (url, why) in [
            ("bucket/prefix", "no scheme"),
            ("s3:///prefix", "no bucket"),
            ("file://relative/dir", "absolute path"),
            ("file:///a/../b", "`..`"),
            ("https:///path", "no host"),
            ("ftp://host/x", "ftp:// is not supported"),
        ] {
            let err = RemoteUrl::parse(url).unwrap_err();
            assert!(err.contains(why), "{url}: {err}");
        }
    }
}
