//! One real ranged read: GET attempts against an `ObjectStore`, whose response body feeds the
//! reader's events (first byte, progress every `progress_chunk` bytes, completion or failure),
//! each stamped with the run's clock and sent to the driver over a channel.
//!
//! Retries are ours, not `object_store`'s (its client is built with retries off), so that every
//! attempt is counted as a GET and traced with its number and status, like the simulated store
//! client does: up to `store.retry.max_attempts` attempts, with `store.retry`'s doubling backoff
//! and jitter in [50%, 100%]. An attempt that fails before its first body byte is retried; one
//! that fails in the middle of its body fails the read (the reader was already told about bytes
//! that a new attempt would have to deliver again). `store.timeout` bounds the wait for the
//! first body byte and for each later body chunk.

use super::clock::Clock;
use futures::StreamExt;
use layout::ByteRange;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};
use planner::{Event, ReadId, ReadSource};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

/// HTTP status of a successful ranged GET, as the simulated store records it.
pub const STATUS_PARTIAL_CONTENT: u16 = 206;
/// Status recorded for an attempt that timed out (as the simulated store client records it).
pub const STATUS_TIMEOUT: u16 = 0;

/// What a request task tells the driver.
#[derive(Debug)]
pub enum Msg {
    /// An event for the reader, at `at_ns` on the run's clock.
    Reader { at_ns: u64, event: Event },
    /// One finished GET attempt (sent before the read's final event).
    Attempt(AttemptRecord),
}

/// One HTTP GET attempt, for the counters and the request trace.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptRecord {
    /// The object's id in the trace (the data file's index).
    pub object: u64,
    /// The bytes asked for.
    pub range: ByteRange,
    /// 1 for the first attempt of a read.
    pub attempt: u32,
    pub start_ns: u64,
    /// Arrival of the first body byte, if any came.
    pub first_byte_ns: Option<u64>,
    pub end_ns: u64,
    /// 206 on success; 404 for a missing object; 500 for other errors; 0 for a timeout.
    pub status: u16,
    /// Body bytes received.
    pub body_bytes: u64,
}

/// How reads are run, from the scenario's store model.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Partial readiness is reported every this many bytes (0 = only at the end).
    pub progress_chunk_bytes: u64,
    /// Longest wait for the first body byte, and between body chunks.
    pub timeout: Duration,
    /// Attempts per read, the first included (at least 1).
    pub max_attempts: u32,
    pub backoff_initial_ns: u64,
    pub backoff_max_ns: u64,
}

impl FetchPolicy {
    /// The policy the scenario's store model states.
    pub fn from_store(spec: &models::store::StoreSpec) -> Self {
        FetchPolicy {
            progress_chunk_bytes: spec.progress_chunk.0,
            timeout: Duration::from_nanos(spec.timeout.0.max(1)),
            max_attempts: spec.retry.max_attempts.max(1),
            backoff_initial_ns: spec.retry.backoff_initial.0,
            backoff_max_ns: spec.retry.backoff_max.0,
        }
    }

    /// Backoff before retry number `failed` (1-based): doubling, capped, jitter in [50%, 100%]
    /// drawn from a hash of the read and the attempt, so a rerun waits the same.
    pub fn backoff_ns(&self, read: ReadId, failed: u32) -> u64 {
        let base =
            self.backoff_initial_ns as f64 * 2f64.powi(failed.saturating_sub(1).min(62) as i32);
        let capped = base.min(self.backoff_max_ns as f64);
        let h = engine::splitmix64(read.0 ^ engine::splitmix64(failed as u64));
        let jitter = (h >> 11) as f64 / (1u64 << 53) as f64;
        (capped * (0.5 + 0.5 * jitter)).round() as u64
    }
}

/// One read to run.
pub struct FetchJob {
    pub store: Arc<dyn ObjectStore>,
    pub path: Path,
    pub object: u64,
    pub read: ReadId,
    pub range: ByteRange,
    pub clock: Clock,
    pub policy: Arc<FetchPolicy>,
}

/// How an attempt ended badly.
struct AttemptFailure {
    status: u16,
    reason: String,
    /// Whether body bytes had already reached the reader (no retry then).
    body_started: bool,
    retryable: bool,
}

/// Runs the read to its end; every outcome is a message (a closed channel means the driver gave
/// up, and the task just stops).
pub async fn run(job: FetchJob, tx: Sender<Msg>) {
    let reader = |at_ns: u64, event: Event| Msg::Reader { at_ns, event };
    if job.range.is_empty() {
        let now = job.clock.now_ns();
        let _ = tx.send(reader(
            now,
            Event::ReadCompleted {
                id: job.read,
                source: ReadSource::Store,
            },
        ));
        return;
    }
    let mut attempt = 1u32;
    loop {
        let start_ns = job.clock.now_ns();
        let mut first_byte_ns = None;
        let mut body_bytes = 0u64;
        let outcome = attempt_once(&job, &tx, &mut first_byte_ns, &mut body_bytes).await;
        let end_ns = job.clock.now_ns();
        let status = match &outcome {
            Ok(()) => STATUS_PARTIAL_CONTENT,
            Err(f) => f.status,
        };
        let _ = tx.send(Msg::Attempt(AttemptRecord {
            object: job.object,
            range: job.range,
            attempt,
            start_ns,
            first_byte_ns,
            end_ns,
            status,
            body_bytes,
        }));
        match outcome {
            Ok(()) => {
                let _ = tx.send(reader(
                    end_ns,
                    Event::ReadCompleted {
                        id: job.read,
                        source: ReadSource::Store,
                    },
                ));
                return;
            }
            Err(f) if f.body_started || !f.retryable || attempt >= job.policy.max_attempts => {
                let reason = format!(
                    "GET {} bytes {}..{} (attempt {attempt} of at most {}): {}",
                    job.path, job.range.start, job.range.end, job.policy.max_attempts, f.reason
                );
                let _ = tx.send(reader(
                    end_ns,
                    Event::ReadFailed {
                        id: job.read,
                        reason,
                    },
                ));
                return;
            }
            Err(_) => {
                let wait = job.policy.backoff_ns(job.read, attempt);
                tokio::time::sleep(Duration::from_nanos(wait)).await;
                attempt += 1;
            }
        }
    }
}

/// One GET: streams the body, reporting the first byte and progress as it arrives.
async fn attempt_once(
    job: &FetchJob,
    tx: &Sender<Msg>,
    first_byte_ns: &mut Option<u64>,
    body_bytes: &mut u64,
) -> Result<(), AttemptFailure> {
    let expected = job.range.len();
    let opts = GetOptions {
        range: Some(GetRange::Bounded(job.range.start..job.range.end)),
        ..Default::default()
    };
    let timeout = job.policy.timeout;
    let timed_out = |what: &str, body_started: bool| AttemptFailure {
        status: STATUS_TIMEOUT,
        reason: format!("no {what} within the store timeout of {timeout:?}"),
        body_started,
        retryable: true,
    };
    let result = tokio::time::timeout(timeout, job.store.get_opts(&job.path, opts))
        .await
        .map_err(|_| timed_out("response", false))?
        .map_err(|e| store_failure(&e, false))?;
    let mut body = result.into_stream();
    let chunk = job.policy.progress_chunk_bytes;
    let mut reported = 0u64;
    loop {
        let what = if *body_bytes == 0 {
            "first body byte"
        } else {
            "body chunk"
        };
        let next = tokio::time::timeout(timeout, body.next())
            .await
            .map_err(|_| timed_out(what, *body_bytes > 0))?;
        let bytes = match next {
            None => break,
            Some(Ok(b)) => b,
            Some(Err(e)) => return Err(store_failure(&e, *body_bytes > 0)),
        };
        if bytes.is_empty() {
            continue;
        }
        let t = job.clock.now_ns();
        if first_byte_ns.is_none() {
            *first_byte_ns = Some(t);
            let _ = tx.send(Msg::Reader {
                at_ns: t,
                event: Event::ReadFirstByte { id: job.read },
            });
        }
        *body_bytes += bytes.len() as u64;
        // Progress at whole chunks only, as the simulated store reports it; the end of the body
        // is reported as the completion instead.
        if chunk > 0 && *body_bytes < expected {
            let ready = *body_bytes / chunk * chunk;
            if ready > reported {
                reported = ready;
                let _ = tx.send(Msg::Reader {
                    at_ns: t,
                    event: Event::ReadProgress {
                        id: job.read,
                        bytes_ready: ready,
                    },
                });
            }
        }
    }
    if *body_bytes != expected {
        return Err(AttemptFailure {
            status: 500,
            reason: format!(
                "the body had {} bytes where the range has {expected} (is the object shorter \
                 than the layout says? re-record the layout from the uploaded files)",
                body_bytes
            ),
            body_started: *body_bytes > 0,
            retryable: false,
        });
    }
    Ok(())
}

fn store_failure(e: &object_store::Error, body_started: bool) -> AttemptFailure {
    use object_store::Error as E;
    let (status, retryable) = match e {
        E::NotFound { .. } => (404, false),
        E::InvalidPath { .. } | E::NotSupported { .. } | E::Precondition { .. } => (400, false),
        _ => (500, true),
    };
    AttemptFailure {
        status,
        reason: e.to_string(),
        body_started,
        retryable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> FetchPolicy {
        FetchPolicy {
            progress_chunk_bytes: 1 << 20,
            timeout: Duration::from_secs(5),
            max_attempts: 3,
            backoff_initial_ns: 25_000_000,
            backoff_max_ns: 60_000_000,
        }
    }

    #[test]
    fn backoff_doubles_within_jitter_and_is_capped() {
        let p = policy();
        for read in 0..50u64 {
            let first = p.backoff_ns(ReadId(read), 1);
            assert!((12_500_000..=25_000_000).contains(&first), "{first}");
            let second = p.backoff_ns(ReadId(read), 2);
            assert!((25_000_000..=50_000_000).contains(&second), "{second}");
            let late = p.backoff_ns(ReadId(read), 10);
            assert!((30_000_000..=60_000_000).contains(&late), "{late}");
            assert_eq!(first, p.backoff_ns(ReadId(read), 1));
        }
    }
}
