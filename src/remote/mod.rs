//! Remote stores (DESIGN.md §11): one Store shared across machines and CI through object
//! storage (S3, a local directory, read-only HTTP) via `object_store`. A remote holds the
//! store's own relative paths (`blobs/<aa>/<hex>`, `trees/<aa>/<hex>.json`, ...), so a
//! `file://` remote is browsable. object_store is async; a small tokio runtime lives inside
//! each [`Remote`] so the rest of memorix stays synchronous.

pub mod config;
pub mod error;
pub mod objects;
pub mod transfer;

use std::sync::Arc;
use std::time::Duration;

use crate::diagnostics::FromIo;
use crate::model::RemoteUrl;
use crate::progress::Task;
pub use error::{Error, Result};
use futures::StreamExt;
use futures::stream;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::http::HttpBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientConfigKey, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};

/// Transfers in flight at once per remote.
const CONCURRENCY: usize = 16;

/// A connection to one remote store, with its own small runtime.
pub struct Remote {
    pub url: RemoteUrl,
    store: Arc<dyn ObjectStore>,
    prefix: String,
    runtime: tokio::runtime::Runtime,
}

/// Retries with exponential backoff on transient errors (connection refused, 5xx, timeouts),
/// bounded so a dead server is reported within seconds, not minutes.
fn retry_config() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            base: 2.0,
        },
        max_retries: 4,
        retry_timeout: Duration::from_secs(30),
    }
}

impl Remote {
    /// Connects to `url` (no request is made yet). `create` makes a missing `file://`
    /// directory, for pushes.
    pub fn open(url: &RemoteUrl, create: bool) -> Result<Remote> {
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

    /// Downloads one object; `None` when the remote does not have it.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let store = self.store.clone();
        let path = self.path(key);
        self.runtime.block_on(get(store, path)).map_err(|e| self.failed("download", key, e))
    }

    /// Uploads one object, replacing what is there.
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<()> {
        let store = self.store.clone();
        let path = self.path(key);
        self.runtime
            .block_on(async move { store.put(&path, PutPayload::from(bytes)).await.map(drop) })
            .map_err(|e| self.failed("upload", key, e))
    }

    /// Downloads `keys`, CONCURRENCY at once, handing each object to `arrived` as it comes
    /// (in arrival order, on this thread). Returns the indices of the keys the remote lacks.
    /// Stops at the first failure, of the remote or of `arrived`.
    pub fn get_many(
        &self,
        keys: &[String],
        bar: &dyn Task,
        mut arrived: impl FnMut(usize, Vec<u8>) -> Result<()>,
    ) -> Result<Vec<usize>> {
        self.runtime.block_on(async {
            let mut fetches = stream::iter(keys.iter().enumerate())
                .map(|(i, key)| {
                    let (store, path) = (self.store.clone(), self.path(key));
                    async move { (i, get(store, path).await) }
                })
                .buffer_unordered(CONCURRENCY);
            let mut absent = Vec::new();
            while let Some((i, fetched)) = fetches.next().await {
                match fetched.map_err(|e| self.failed("download", &keys[i], e))? {
                    Some(bytes) => arrived(i, bytes)?,
                    None => absent.push(i),
                }
                bar.advance(1);
            }
            absent.sort_unstable();
            Ok(absent)
        })
    }

    /// Uploads each object the remote does not have yet (an existence check first, never a
    /// re-upload), CONCURRENCY at once. `load` reads and checks an object's bytes, on a
    /// runtime thread. Returns how many were uploaded.
    pub fn put_missing<T: Send + Sync>(
        &self,
        items: &[(String, T)],
        bar: &dyn Task,
        load: impl Fn(&T) -> Result<Vec<u8>> + Sync,
    ) -> Result<usize> {
        let load = &load;
        self.runtime.block_on(async {
            let mut uploads = stream::iter(items.iter())
                .map(|(key, item)| {
                    let (store, path) = (self.store.clone(), self.path(key));
                    async move {
                        match store.head(&path).await {
                            Ok(_) => return Ok(false),
                            Err(object_store::Error::NotFound { .. }) => {}
                            Err(e) => return Err(self.failed("check", key, e)),
                        }
                        let bytes = load(item)?;
                        store
                            .put(&path, PutPayload::from(bytes))
                            .await
                            .map_err(|e| self.failed("upload", key, e))?;
                        Ok(true)
                    }
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
}

async fn get(store: Arc<dyn ObjectStore>, path: ObjectPath) -> object_store::Result<Option<Vec<u8>>> {
    match store.get(&path).await {
        Ok(found) => Ok(Some(found.bytes().await?.to_vec())),
        Err(object_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
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
