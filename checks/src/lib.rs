//! The simulator checked against what it claims to reproduce: the findings (measured figures
//! from real S3, with tolerances and mechanism-off companions), a real S3 API through the
//! loopback test bed (`sim check-s3`), and the real peer readers (`sim check-peers`).

pub mod findings;
#[cfg(feature = "testbed")]
pub mod peers;
#[cfg(feature = "testbed")]
pub mod s3check;
