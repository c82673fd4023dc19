//! A self-starting S3 test bed on loopback, for checking the simulator against a real S3 API
//! (issue 9).
//!
//! - [`TestBed`]: an S3 API server ([s3s-fs](https://crates.io/crates/s3s-fs) serving a
//!   directory, `TCP_NODELAY` on every connection) and, in front of it, a user-space TCP proxy
//!   that delays each direction by half an injected round trip and paces each connection's
//!   server-to-client bytes to a set bandwidth. Both listen on `127.0.0.1` only, run on their own
//!   threads (synchronous callers can use them), and stop when the test bed is dropped.
//! - [`faults`]: the fault mode ([`TestBed::set_faults`]): 503 bursts, connections reset before
//!   and during a body, a stalled body, a server restart, on GETs chosen by sequence number.
//! - [`proxy::Proxy`]: the injector alone, in front of any TCP server.
//! - [`parquet_shapes`]: real Parquet files in the shapes of the shipped scenarios
//!   `many-small-files` and `single-large-file`, scaled down.
//!
//! **Invariant:** nothing here listens on or connects to anything but `127.0.0.1`.

#[cfg(feature = "arrow-rs")]
pub mod arrow_rs;
mod bed;
mod error;
mod fast_get;
pub mod faults;
pub mod pacer;
pub mod parquet_shapes;
pub mod proxy;
pub mod request_log;
mod server;

pub use bed::{TestBed, TestBedConfig, ACCESS_KEY, BUCKET, REGION, SECRET_KEY};
pub use error::TestBedError;
pub use faults::{Fault, FaultCounts, FaultPlan};
pub use parquet_shapes::{
    write_many_small_files, write_one_large_file, LargeFileShape, SmallFilesShape,
};
