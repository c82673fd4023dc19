//! Helpers shared by the integration tests: timed S3 GETs with a deadline on every await.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops
#![allow(dead_code)] // each test binary uses a part

use std::future::Future;
use std::ops::Range;
use std::time::{Duration, Instant};

use futures::StreamExt;
use object_store::aws::AmazonS3;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, ObjectStore};

/// Deadline on every network await: no test may hang.
pub const NET_TIMEOUT: Duration = Duration::from_secs(20);

/// A runtime for the test's own client side.
pub fn client_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// Awaits `f` or fails the test after [`NET_TIMEOUT`].
pub async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(NET_TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what} did not finish within {NET_TIMEOUT:?}"),
    }
}

/// One ranged GET, timed.
#[derive(Debug, Clone)]
pub struct TimedGet {
    /// The body.
    pub bytes: Vec<u8>,
    /// From sending the request to the response head (first byte).
    pub first_byte: Duration,
    /// From sending the request to the first body chunk.
    pub first_body_chunk: Duration,
    /// From sending the request to the last body byte.
    pub total: Duration,
    /// Body bytes in the first chunk (not paced by the time measured after it).
    pub first_chunk_bytes: usize,
}

/// A ranged GET of `key`, timing the response head, the first body chunk and the end.
pub async fn timed_get(store: &AmazonS3, key: &str, range: Range<u64>) -> TimedGet {
    let location = ObjectPath::from(key);
    let t0 = Instant::now();
    let result = within(
        "GET head",
        store.get_opts(&location, GetOptions::new().with_range(Some(range))),
    )
    .await
    .expect("ranged GET");
    let first_byte = t0.elapsed();
    let mut stream = result.into_stream();
    let mut bytes = Vec::new();
    let mut first_body_chunk = None;
    let mut first_chunk_bytes = 0;
    while let Some(chunk) = within("GET body", stream.next()).await {
        let chunk = chunk.expect("body chunk");
        if first_body_chunk.is_none() {
            first_body_chunk = Some(t0.elapsed());
            first_chunk_bytes = chunk.len();
        }
        bytes.extend_from_slice(&chunk);
    }
    let total = t0.elapsed();
    TimedGet {
        bytes,
        first_byte,
        first_body_chunk: first_body_chunk.unwrap_or(total),
        total,
        first_chunk_bytes,
    }
}

/// The median of some durations.
pub fn median(mut xs: Vec<Duration>) -> Duration {
    assert!(!xs.is_empty(), "median of nothing");
    xs.sort();
    xs[xs.len() / 2]
}

/// Deterministic incompressible test bytes.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            // xorshift64
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Milliseconds, for messages.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// How late `std::thread::sleep` wakes on this machine: the median overshoot of 15 sleeps of
/// 5 ms. The proxy delays each direction with one sleep, so its first byte can be late by this
/// twice for reasons of the machine (timer slack, a VM's scheduler), not of the proxy; a fresh
/// CI machine's proxied first byte came 0.9-1.4 ms late at 10 ms where this one's comes
/// 0.3 ms late.
pub fn sleep_overshoot() -> Duration {
    const NAP: Duration = Duration::from_millis(5);
    let overshoots = (0..15)
        .map(|_| {
            let t0 = Instant::now();
            std::thread::sleep(NAP);
            t0.elapsed().saturating_sub(NAP)
        })
        .collect();
    median(overshoots)
}

/// Timing tests in one binary take this lock so they do not run at once and disturb each
/// other on a 2-core machine.
pub fn timing_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs a timing check up to `attempts` times and passes when one attempt passes. The checks
/// measure the bed, whose pacing only the machine's load can spoil (on 2 cores, dirty-page
/// writeback after the workspace's tests wrote their files has failed one attempt while the
/// same check passed alone): load only adds delay, so a bed that meets its figure once meets
/// it. Every failed attempt is printed; the last one's panic is the test's.
pub fn timing_attempts(attempts: u32, check: fn()) {
    for attempt in 1..=attempts {
        match std::panic::catch_unwind(check) {
            Ok(()) => return,
            Err(e) if attempt == attempts => std::panic::resume_unwind(e),
            Err(_) => eprintln!("timing check: attempt {attempt} of {attempts} failed; again"),
        }
    }
}
