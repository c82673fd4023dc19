//! [`TestBed`]: the S3 server and the injecting proxy in front of it, started and stopped
//! together, usable from synchronous code.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ClientOptions, ObjectStoreExt, PutPayload, RetryConfig};
use tokio::runtime::Runtime;

use crate::error::TestBedError;
use crate::proxy::{Proxy, ProxyConfig};
use crate::server::Server;

/// The bucket the test bed serves (a subdirectory of the data directory).
pub const BUCKET: &str = "testbed";
/// Access key of the one account the server accepts. Test credentials: loopback only.
pub const ACCESS_KEY: &str = "testbed-access-key";
/// Secret key of the one account the server accepts.
pub const SECRET_KEY: &str = "testbed-secret-key";
/// The region clients sign for.
pub const REGION: &str = "us-east-1";

/// How long one upload may take before it is reported as failed.
const UPLOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// Server runtime worker threads: enough for tens of concurrent GETs on a 2-core machine.
const SERVER_WORKER_THREADS: usize = 2;

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestBedConfig {
    /// The server's root directory (created if missing); the bucket is its subdirectory
    /// [`BUCKET`], so objects also appear as plain files under `data_dir/testbed/`.
    pub data_dir: PathBuf,
    /// Round trip the proxy injects, in nanoseconds (half in each direction); 0 for none.
    pub rtt_ns: u64,
    /// Server-to-client bandwidth per connection through the proxy, in bytes per second;
    /// `None` or `Some(0)` for unpaced.
    pub bandwidth_bytes_per_s: Option<u64>,
}

/// An S3 API server (s3s-fs) on `127.0.0.1` and a latency and bandwidth injecting proxy in
/// front of it, both on their own threads so that synchronous callers can use them.
///
/// Clients that should see the injected network use [`TestBed::endpoint_url`]; uploads and
/// baselines use [`TestBed::direct_url`]. Requests must be path-style and signed (SigV4) with
/// [`TestBed::access_key`] / [`TestBed::secret_key`] for [`TestBed::region`].
///
/// Dropping the test bed stops the proxy (closing its connections) and the server.
#[derive(Debug)]
pub struct TestBed {
    config: TestBedConfig,
    proxy: Proxy,
    server: Server,
    // An Option only so that Drop can shut it down with a deadline.
    runtime: Option<Runtime>,
}

impl TestBed {
    /// Starts the server on the data directory and the proxy in front of it.
    ///
    /// Errors: the data directory cannot be created, a port cannot be bound, or the runtime's
    /// threads cannot be started.
    pub fn start(config: TestBedConfig) -> Result<TestBed, TestBedError> {
        let bucket_dir = config.data_dir.join(BUCKET);
        // s3s-fs maps a bucket to a subdirectory: creating it is creating the bucket.
        std::fs::create_dir_all(&bucket_dir).map_err(|e| TestBedError::io(&bucket_dir, e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(SERVER_WORKER_THREADS)
            .thread_name("testbed-s3")
            .enable_all()
            .build()
            .map_err(|source| TestBedError::Runtime {
                what: "S3 server runtime",
                source,
            })?;
        let server = Server::start(&runtime, &config.data_dir, ACCESS_KEY, SECRET_KEY)?;
        let proxy = Proxy::start(ProxyConfig {
            upstream: server.addr,
            rtt_ns: config.rtt_ns,
            bandwidth_bytes_per_s: config.bandwidth_bytes_per_s,
        })?;
        Ok(TestBed {
            config,
            proxy,
            server,
            runtime: Some(runtime),
        })
    }

    /// The proxy's URL, `http://127.0.0.1:PORT`: requests here see the injected round trip and
    /// bandwidth.
    pub fn endpoint_url(&self) -> String {
        format!("http://{}", self.proxy.local_addr())
    }

    /// The server's own URL, `http://127.0.0.1:PORT`, with nothing injected.
    pub fn direct_url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// The bucket served.
    pub fn bucket(&self) -> &str {
        BUCKET
    }

    /// The access key requests are signed with.
    pub fn access_key(&self) -> &str {
        ACCESS_KEY
    }

    /// The secret key requests are signed with.
    pub fn secret_key(&self) -> &str {
        SECRET_KEY
    }

    /// The region requests are signed for.
    pub fn region(&self) -> &str {
        REGION
    }

    /// The configuration the test bed was started with.
    pub fn config(&self) -> &TestBedConfig {
        &self.config
    }

    /// Every request the server answered since the last call (uploads included), in arrival
    /// order: see [`crate::request_log`].
    pub fn take_requests(&self) -> Vec<crate::request_log::RequestRecord> {
        self.server.log.take()
    }

    /// Requests the log dropped because more than [`crate::request_log::MAX_CSV_ROWS`] were
    /// waiting to be taken (see [`crate::request_log::RequestLog`]).
    pub fn dropped_requests(&self) -> u64 {
        self.server.log.dropped()
    }

    /// Turns the fault mode on with `plan` (or off, with [`crate::FaultPlan::none`]): GETs of
    /// objects are numbered from 0 again and the counts start from 0. See [`crate::faults`].
    pub fn set_faults(&self, plan: crate::FaultPlan) {
        self.server.faults.set(plan);
    }

    /// What the fault mode did since [`TestBed::set_faults`].
    pub fn fault_counts(&self) -> crate::FaultCounts {
        self.server.faults.counts()
    }

    /// Connections the proxy has relayed so far (a check that clients really went through it).
    pub fn proxied_connections(&self) -> u64 {
        self.proxy.connections_accepted()
    }

    /// An `object_store` S3 client for this test bed at `endpoint_url` (normally
    /// [`TestBed::endpoint_url`] or [`TestBed::direct_url`]): path-style, plain http, the test
    /// credentials, no retries (a failure here is a fault to see, not to hide), a 60 s request
    /// timeout.
    pub fn object_store(&self, endpoint_url: &str) -> Result<AmazonS3, TestBedError> {
        AmazonS3Builder::new()
            .with_endpoint(endpoint_url)
            .with_allow_http(true)
            .with_virtual_hosted_style_request(false)
            .with_bucket_name(BUCKET)
            .with_region(REGION)
            .with_access_key_id(ACCESS_KEY)
            .with_secret_access_key(SECRET_KEY)
            .with_retry(RetryConfig {
                max_retries: 0,
                ..RetryConfig::default()
            })
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(true)
                    .with_timeout(Duration::from_secs(60))
                    .with_connect_timeout(Duration::from_secs(5)),
            )
            .build()
            .map_err(|source| TestBedError::ObjectStore {
                op: "client set-up",
                key: String::new(),
                source,
            })
    }

    /// Uploads the file at `path` as object `key` with one S3 PUT to the server directly (not
    /// through the proxy, which would only slow it down). Returns the bytes uploaded.
    ///
    /// Blocks; must not be called from inside a tokio runtime (that is an error, not a panic).
    pub fn upload(&self, key: &str, path: &Path) -> Result<u64, TestBedError> {
        validate_key(key)?;
        let runtime = self.blocking_runtime("upload")?;
        let data = std::fs::read(path).map_err(|e| TestBedError::io(path, e))?;
        let bytes = data.len() as u64;
        let store = Arc::new(self.object_store(&self.direct_url())?);
        let location = ObjectPath::from(key);
        let put = store.put(&location, PutPayload::from(data));
        match runtime.block_on(async { tokio::time::timeout(UPLOAD_TIMEOUT, put).await }) {
            Ok(Ok(_)) => Ok(bytes),
            Ok(Err(source)) => Err(TestBedError::ObjectStore {
                op: "PUT",
                key: key.to_string(),
                source,
            }),
            Err(_) => Err(TestBedError::Timeout {
                op: "PUT",
                key: key.to_string(),
                timeout_s: UPLOAD_TIMEOUT.as_secs(),
            }),
        }
    }

    /// Uploads every file in `paths` as `prefix` + its file name, in order. Returns the keys.
    pub fn upload_all(&self, paths: &[PathBuf], prefix: &str) -> Result<Vec<String>, TestBedError> {
        let mut keys = Vec::with_capacity(paths.len());
        for path in paths {
            let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                TestBedError::Invalid(format!(
                    "{} has no UTF-8 file name to use as an object key; pass a path to a file",
                    path.display()
                ))
            })?;
            let key = format!("{prefix}{name}");
            self.upload(&key, path)?;
            keys.push(key);
        }
        Ok(keys)
    }

    /// Stops the proxy and the server now (dropping the test bed does the same).
    pub fn stop(self) {}

    fn blocking_runtime(&self, call: &'static str) -> Result<&Runtime, TestBedError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(TestBedError::InsideAsyncRuntime { call });
        }
        self.runtime.as_ref().ok_or(TestBedError::Invalid(
            "the test bed has been stopped".into(),
        ))
    }
}

impl Drop for TestBed {
    fn drop(&mut self) {
        self.proxy.stop();
        self.server.stop();
        if let Some(runtime) = self.runtime.take() {
            if tokio::runtime::Handle::try_current().is_ok() {
                // Blocking is not allowed inside another runtime: let the threads wind down.
                runtime.shutdown_background();
            } else {
                // Aborts open server connections; bounded so a stuck task cannot hang the caller.
                runtime.shutdown_timeout(Duration::from_secs(2));
            }
        }
    }
}

/// An S3 key the server can store as a file path: non-empty, relative, no `.`/`..` segments.
fn validate_key(key: &str) -> Result<(), TestBedError> {
    let bad_segment = key
        .split('/')
        .any(|s| s.is_empty() || s == "." || s == "..");
    if key.is_empty() || bad_segment {
        return Err(TestBedError::Invalid(format!(
            "object key `{key}` is not usable: give a non-empty key of '/'-separated names \
             without empty, `.` or `..` segments, e.g. `small/part-00000.parquet`"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked() {
        assert!(validate_key("a.parquet").is_ok());
        assert!(validate_key("small/part-00001.parquet").is_ok());
        for bad in ["", "/a", "a/", "a//b", "../a", "a/./b"] {
            let err = validate_key(bad).unwrap_err().to_string();
            assert!(err.contains("not usable"), "{bad}: {err}");
        }
    }
}
