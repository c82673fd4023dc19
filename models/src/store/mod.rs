//! The simulated object store and the S3 client in front of it.
//!
//! One [`S3Client`] per node: first-byte latency and per-stream bandwidth from distributions,
//! the node's NIC shared max-min fairly by active transfers, progress in chunks, a per-prefix
//! rate limit answered with 503 SlowDown, injected errors and silent losses, client retries
//! with exponential backoff, optional hedging, and the dollar cost. It is event-driven in
//! integer nanoseconds (the driver asks [`S3Client::next_event_ns`] and calls
//! [`S3Client::advance`]) and never reads a clock; the same spec, seed and calls give the same
//! events.
//!
//! Parameters come from YAML ([`StoreSpec::from_yaml`]) or a shipped preset
//! ([`StoreSpec::preset`]) in `models/presets/`, each citing its source.

mod client;
mod dist;
mod lazy_queue;
mod link;
mod request_cpu;
mod spec;

pub use client::{Attempt, ClientEvent, GetRequest, Method, S3Client, StoreStats};
pub use dist::Sampler;
pub use link::{LinkEvent, SharedLink};
pub use request_cpu::RequestCpu;
pub use spec::{
    DistKind, DistSpec, FaultSpec, HedgeSpec, PriceSpec, Quantity, RateLimitSpec, RetrySpec,
    StoreSpec,
};

/// What can go wrong building or driving a store model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StoreError {
    /// The YAML did not parse or a value had the wrong type or unit (with line and column).
    #[error("store spec: {0}")]
    Yaml(String),
    /// A value is out of range or inconsistent with another.
    #[error("store spec: `{key}` {problem}")]
    Invalid {
        /// The dotted key, e.g. `first_byte.median`.
        key: String,
        /// What is wrong and what would be right.
        problem: String,
    },
    /// No preset has this name.
    #[error("unknown store preset `{name}`; available: {available}")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The shipped presets.
        available: String,
    },
    /// A shipped preset failed to load (a bug in the preset file).
    #[error("store preset `{name}`: {error}")]
    Preset {
        /// The preset's name.
        name: String,
        /// The underlying error.
        error: String,
    },
    /// A read was started with a token that is still in flight.
    #[error("read token {0} is already in flight; tokens must be unique among active reads")]
    DuplicateToken(u64),
}
