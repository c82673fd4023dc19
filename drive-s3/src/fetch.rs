//! One real ranged read: GET attempts against an `ObjectStore`, whose response bodies feed the
//! reader's events (first byte, progress every `progress_chunk` bytes, completion or failure),
//! each stamped with the run's clock and sent to the driver over a channel.
//!
//! Retries are ours, not `object_store`'s (its client is built with retries off), so that every
//! attempt is counted as a GET and traced with its number and its real status, like the
//! simulated store client does: up to `store.retry.max_attempts` attempts per read, with
//! `store.retry`'s doubling backoff and jitter in [50%, 100%]. `store.timeout` bounds the wait
//! for the response and for each body chunk.
//!
//! What is retried:
//! - no response (a connection reset, refused or closed before the head; no head within the
//!   timeout): traced with status 0, as the simulated store traces a lost request;
//! - a 5xx, 429 or 408 answer: traced with its status (503 SlowDown stays 503);
//! - a body that breaks off or stalls past the timeout after its head: traced as the 206 it was,
//!   with the bytes that arrived as its length (S3's access log records such a request the same
//!   way: its status and the bytes sent). The next attempt **resumes from the byte received**:
//!   it asks for the rest of the range only, and fails the read if the object's ETag changed in
//!   between. This is what `object_store` 0.14 does itself when its own retries are on
//!   (`client/get.rs`, `GetContext::retry_stream`: "Retry all response body errors" with a
//!   `Bounded(range.start + received..end)` request and an ETag check), and the reader, already
//!   told of the bytes before the break, goes on receiving progress from where it was.
//!
//! Not retried: 404 and other 4xx, and a body shorter than the range (the object is shorter
//! than the layout says). The attempts of one read tile its range, so the body bytes counted
//! are the range's, once, however many attempts it took.

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
/// Status recorded for an attempt that got no response: it timed out before the head, or its
/// connection failed before the head (as the simulated store client records a lost request).
pub const STATUS_NO_RESPONSE: u16 = 0;
/// Status recorded for an error answer whose status `object_store` does not say.
pub const STATUS_UNKNOWN_ERROR: u16 = 500;

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
    /// The bytes this attempt asked for (after a broken body, the rest of the read's range).
    pub range: ByteRange,
    /// 1 for the first attempt of a read.
    pub attempt: u32,
    pub start_ns: u64,
    /// Arrival of the attempt's first body byte, if any came.
    pub first_byte_ns: Option<u64>,
    pub end_ns: u64,
    /// The response's HTTP status: 206 when a head came (even if the body then broke off: see
    /// `body_bytes`), the error's status (404, 500, 503...), or 0 for no response.
    pub status: u16,
    /// Body bytes received.
    pub body_bytes: u64,
}

impl AttemptRecord {
    /// Whether the response's body came whole.
    pub fn complete(&self) -> bool {
        self.status == STATUS_PARTIAL_CONTENT && self.body_bytes == self.range.len()
    }
}

/// How reads are run, from the scenario's store model.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// Partial readiness is reported every this many bytes (0 = only at the end).
    pub progress_chunk_bytes: u64,
    /// Longest wait for the response head, and for each body chunk.
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
    retryable: bool,
}

/// What the read has delivered so far, across its attempts.
#[derive(Default)]
struct ReadState {
    /// Bytes of the range received, from its start.
    received: u64,
    /// Partial readiness last reported.
    reported: u64,
    /// The reader was told of the first byte.
    first_byte_sent: bool,
    /// The object's ETag from the first response, to resume only the same object.
    etag: Option<String>,
}

/// One attempt's own figures.
#[derive(Default)]
struct AttemptState {
    first_byte_ns: Option<u64>,
    body_bytes: u64,
    /// A response head came (the status is then the head's, 206).
    answered: bool,
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
    let mut read = ReadState::default();
    let mut attempt = 1u32;
    loop {
        // Resume from the byte received (the whole range on a first attempt).
        let range = ByteRange::new(job.range.start + read.received, job.range.end);
        let start_ns = job.clock.now_ns();
        let mut this = AttemptState::default();
        let outcome = attempt_once(&job, range, &tx, &mut read, &mut this).await;
        let end_ns = job.clock.now_ns();
        let status = match &outcome {
            Ok(()) => STATUS_PARTIAL_CONTENT,
            Err(_) if this.answered => STATUS_PARTIAL_CONTENT,
            Err(f) => f.status,
        };
        let _ = tx.send(Msg::Attempt(AttemptRecord {
            object: job.object,
            range,
            attempt,
            start_ns,
            first_byte_ns: this.first_byte_ns,
            end_ns,
            status,
            body_bytes: this.body_bytes,
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
            Err(f) if !f.retryable || attempt >= job.policy.max_attempts => {
                let reason = format!(
                    "GET {} bytes {}..{} (attempt {attempt} of at most {}, {} of {} bytes \
                     received): {}",
                    job.path,
                    job.range.start,
                    job.range.end,
                    job.policy.max_attempts,
                    read.received,
                    job.range.len(),
                    f.reason
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

/// One GET of `range` (the rest of the read's range): streams the body, reporting the read's
/// first byte and progress as it arrives.
async fn attempt_once(
    job: &FetchJob,
    range: ByteRange,
    tx: &Sender<Msg>,
    read: &mut ReadState,
    this: &mut AttemptState,
) -> Result<(), AttemptFailure> {
    let expected = job.range.len();
    let opts = GetOptions {
        range: Some(GetRange::Bounded(range.start..range.end)),
        ..Default::default()
    };
    let timeout = job.policy.timeout;
    let timed_out = |what: &str| AttemptFailure {
        status: STATUS_NO_RESPONSE,
        reason: format!("no {what} within the store timeout of {timeout:?}"),
        retryable: true,
    };
    let result = tokio::time::timeout(timeout, job.store.get_opts(&job.path, opts))
        .await
        .map_err(|_| timed_out("response"))?
        .map_err(|e| store_failure(&e))?;
    this.answered = true;
    match (&read.etag, &result.meta.e_tag) {
        (Some(before), Some(now)) if before != now => {
            return Err(AttemptFailure {
                status: STATUS_PARTIAL_CONTENT,
                reason: format!(
                    "the object changed while it was read (ETag {before}, then {now}); \
                     its bytes cannot be resumed"
                ),
                retryable: false,
            })
        }
        (None, Some(now)) => read.etag = Some(now.clone()),
        _ => {}
    }
    let mut body = result.into_stream();
    let chunk = job.policy.progress_chunk_bytes;
    loop {
        let what = if this.body_bytes == 0 {
            "first body byte"
        } else {
            "body chunk"
        };
        let next = tokio::time::timeout(timeout, body.next())
            .await
            .map_err(|_| timed_out(what))?;
        let bytes = match next {
            None => break,
            Some(Ok(b)) => b,
            // Every byte came before the break: the read has what it asked for.
            Some(Err(_)) if this.body_bytes == range.len() => break,
            Some(Err(e)) => {
                return Err(AttemptFailure {
                    status: STATUS_PARTIAL_CONTENT,
                    reason: format!("the body broke off: {e}"),
                    retryable: true,
                })
            }
        };
        if bytes.is_empty() {
            continue;
        }
        let t = job.clock.now_ns();
        if this.first_byte_ns.is_none() {
            this.first_byte_ns = Some(t);
        }
        if !read.first_byte_sent {
            read.first_byte_sent = true;
            let _ = tx.send(Msg::Reader {
                at_ns: t,
                event: Event::ReadFirstByte { id: job.read },
            });
        }
        // A body longer than asked for is cut to the range (the surplus is not the read's).
        let n = (bytes.len() as u64).min(range.len() - this.body_bytes);
        this.body_bytes += n;
        read.received += n;
        // Progress at whole chunks only, as the simulated store reports it; the end of the body
        // is reported as the completion instead.
        if chunk > 0 && read.received < expected {
            let ready = read.received / chunk * chunk;
            if ready > read.reported {
                read.reported = ready;
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
    if this.body_bytes != range.len() {
        return Err(AttemptFailure {
            status: STATUS_PARTIAL_CONTENT,
            reason: format!(
                "the body had {} bytes where the range has {} (is the object shorter than the \
                 layout says? re-record the layout from the uploaded files)",
                this.body_bytes,
                range.len()
            ),
            retryable: false,
        });
    }
    Ok(())
}

fn store_failure(e: &object_store::Error) -> AttemptFailure {
    use object_store::Error as E;
    let (status, retryable) = match e {
        E::NotFound { .. } => (404, false),
        E::InvalidPath { .. } | E::NotSupported { .. } => (400, false),
        E::Precondition { .. } => (412, false),
        _ => match http_status(e) {
            Some(s) => (s, matches!(s, 408 | 429 | 500..=599)),
            None => (STATUS_NO_RESPONSE, true),
        },
    };
    AttemptFailure {
        status,
        reason: e.to_string(),
        retryable,
    }
}

/// The HTTP status of an error answer, if the error says one. `object_store` 0.14 keeps the
/// status in a private type (`client::retry::RequestError::Status`), whose message is
/// "Server returned non-2xx status code: 503 Service Unavailable: ..."; it is read from there.
/// `None` means no response came (a transport error).
fn http_status(e: &(dyn std::error::Error + 'static)) -> Option<u16> {
    const MARK: &str = "status code: ";
    let mut current = Some(e);
    while let Some(err) = current {
        let text = err.to_string();
        if let Some(at) = text.find(MARK) {
            let digits: String = text[at + MARK.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(s) = digits.parse::<u16>() {
                if (100..600).contains(&s) {
                    return Some(s);
                }
            }
        }
        if text.contains("Server returned error response") {
            // An S3 error body in a 200 answer (`object_store` retries those as a 5xx).
            return Some(STATUS_UNKNOWN_ERROR);
        }
        current = err.source();
    }
    None
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

    #[derive(Debug, thiserror::Error)]
    #[error("Server returned non-2xx status code: 503 Service Unavailable: <Error><Code>SlowDown</Code></Error>")]
    struct Inner;

    #[derive(Debug, thiserror::Error)]
    #[error("Error performing GET http://x/b/k in 2ms")]
    struct Outer(#[source] Inner);

    #[derive(Debug, thiserror::Error)]
    #[error("error sending request: connection reset by peer")]
    struct Transport;

    #[test]
    fn the_status_is_read_from_the_error_chain() {
        assert_eq!(http_status(&Outer(Inner)), Some(503));
        assert_eq!(http_status(&Transport), None);
        let e = object_store::Error::Generic {
            store: "S3",
            source: Box::new(Outer(Inner)),
        };
        let f = store_failure(&e);
        assert_eq!((f.status, f.retryable), (503, true));
        let lost = object_store::Error::Generic {
            store: "S3",
            source: Box::new(Transport),
        };
        let f = store_failure(&lost);
        assert_eq!((f.status, f.retryable), (STATUS_NO_RESPONSE, true));
    }
}
