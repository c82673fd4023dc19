//! The one error type of the test bed: every fault names what failed and, where it helps, what
//! would be right.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why the test bed could not start, upload or write files.
#[derive(Debug, thiserror::Error)]
pub enum TestBedError {
    /// A socket could not be bound, connected or configured.
    #[error("{what} on {addr}: {source}")]
    Socket {
        what: &'static str,
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// A file or directory could not be read, written or created.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The tokio runtime or one of the test bed's threads could not be started.
    #[error("could not start the {what}: {source}")]
    Runtime {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// s3s-fs refused the data directory.
    #[error("the S3 server cannot serve {path}: {message}")]
    Server { path: PathBuf, message: String },
    /// An S3 request made by the test bed itself failed.
    #[error("S3 {op} of `{key}` failed: {source}")]
    ObjectStore {
        op: &'static str,
        key: String,
        #[source]
        source: object_store::Error,
    },
    /// An S3 request made by the test bed itself did not finish in time.
    #[error("S3 {op} of `{key}` did not finish within {timeout_s} s")]
    Timeout {
        op: &'static str,
        key: String,
        timeout_s: u64,
    },
    /// A blocking call was made from inside an async runtime, where it would deadlock or panic.
    #[error(
        "TestBed::{call} blocks and was called from inside a tokio runtime; call it from a plain \
         thread (e.g. tokio::task::spawn_blocking)"
    )]
    InsideAsyncRuntime { call: &'static str },
    /// An argument is out of range; the message says what is wrong and what would be right.
    #[error("{0}")]
    Invalid(String),
    /// A real reader run against the bed failed.
    #[error("the {reader} reader: {message}")]
    Reader {
        reader: &'static str,
        message: String,
    },
    /// The Parquet writer failed.
    #[error("writing Parquet file {path}: {source}")]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },
}

impl TestBedError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        TestBedError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn socket(what: &'static str, addr: SocketAddr, source: std::io::Error) -> Self {
        TestBedError::Socket { what, addr, source }
    }
}
