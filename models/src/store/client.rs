//! The S3 client of one node as a sans-IO state machine: reads in, timed events out.
//!
//! Contract: times passed to [`S3Client::start`] and [`S3Client::advance`] must not decrease
//! (an earlier time is treated as the latest time seen). The driver calls `advance(t)` with
//! `t = next_event_ns()` (or any later time it jumps to) and receives, in time order, what
//! happened up to `t`.
//!
//! Per attempt (one HTTP GET), the outcome is drawn when it is sent: throttled by the prefix's
//! rate limit (503 after a first-byte latency), an injected error (500), a silent loss (no
//! answer until `timeout`), a first byte later than `timeout` (timeout), or a first byte after
//! the sampled latency followed by the body at the stream's share of the NIC. A failed attempt
//! is retried after an exponential backoff unless another attempt of the same read (a hedge)
//! is still live; after `retry.max_attempts` the read fails.

use super::dist::Sampler;
use super::link::SharedLink;
use super::request_cpu::RequestCpu;
use super::spec::StoreSpec;
use super::StoreError;
use engine::{EventKey, EventQueue};
use rand::RngExt;
use rand_pcg::Pcg64;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::BTreeMap;

const MIB: f64 = 1024.0 * 1024.0;

/// HTTP status recorded for an attempt aborted because a sibling (hedge) answered first
/// (nginx's "client closed request").
pub const STATUS_ABORTED: u16 = 499;
/// HTTP status recorded for an attempt that timed out (no response).
pub const STATUS_TIMEOUT: u16 = 0;

/// One ranged read the driver asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GetRequest {
    /// The driver's name for this read; unique among reads in flight.
    pub token: u64,
    /// GET of a range, HEAD (no body: `len` 0) or LIST (a listing's body of `len` bytes).
    pub method: Method,
    /// Object id, for logs and traces.
    pub object: u64,
    /// Key prefix, for the per-prefix rate limit.
    pub prefix: u32,
    /// First byte of the range.
    pub offset: u64,
    /// Bytes in the range.
    pub len: u64,
}

/// The HTTP request a read is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// A ranged GET of an object.
    #[default]
    Get,
    /// HEAD of an object (its size and ETag; no body).
    Head,
    /// A LIST of a prefix (ListObjectsV2), whose response body is the listing.
    List,
}

/// What the client tells the driver about a read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientEvent {
    /// The first byte of the winning attempt arrived.
    FirstByte {
        /// The read.
        token: u64,
    },
    /// `bytes_ready` bytes from the start of the range have arrived (chunk boundaries only).
    Progress {
        /// The read.
        token: u64,
        /// Bytes ready so far.
        bytes_ready: u64,
    },
    /// All bytes of the range have arrived.
    Completed {
        /// The read.
        token: u64,
    },
    /// The read failed after its retries were exhausted.
    Failed {
        /// The read.
        token: u64,
        /// Why, e.g. `503 SlowDown after 10 attempts`.
        reason: String,
    },
}

/// One HTTP request, for the request trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The read it belongs to.
    pub token: u64,
    /// Object id.
    pub object: u64,
    /// 1 for the first attempt of a read, then 2, 3... (hedges included).
    pub attempt: u32,
    /// When the request was sent.
    pub start_ns: u64,
    /// When its first byte arrived, if it did.
    pub first_byte_ns: Option<u64>,
    /// When it ended (last byte, error response, timeout or abort).
    pub end_ns: u64,
    /// 206 (ranged body), 503, 500, 0 = timeout, 499 = aborted after a hedge won.
    pub status: u16,
    /// Range start.
    pub offset: u64,
    /// Range length.
    pub len: u64,
    /// Whether this attempt was a hedge.
    pub hedge: bool,
    /// The request's method.
    pub method: Method,
}

/// Counters over a client's life, named after ClickHouse profile events where theirs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoreStats {
    /// Reads started by the driver.
    pub reads: u64,
    /// Reads completed.
    pub reads_completed: u64,
    /// Reads abandoned by the driver ([`S3Client::cancel`]).
    pub reads_cancelled: u64,
    /// HTTP GET requests sent, retries and hedges included (ClickHouse `S3GetObject`).
    pub gets: u64,
    /// HEAD requests sent (retries included).
    pub heads: u64,
    /// LIST requests sent (retries included).
    pub lists: u64,
    /// Body bytes received (ClickHouse `ReadBufferFromS3Bytes`).
    pub bytes_fetched: u64,
    /// Attempts answered 503 SlowDown (ClickHouse `S3ReadRequestsThrottling`).
    pub responses_503: u64,
    /// Attempts answered 500 (injected errors).
    pub errors_500: u64,
    /// Attempts that timed out.
    pub timeouts: u64,
    /// Retries scheduled after a failed attempt.
    pub retries: u64,
    /// Reads failed after their retries were exhausted.
    pub failures: u64,
    /// Hedged attempts sent.
    pub hedges: u64,
    /// Attempts aborted: a sibling (a hedge, or the attempt it hedged) answered first, or the
    /// reader cancelled the read.
    pub aborted: u64,
    /// Dollars: requests plus bytes.
    pub cost_usd: f64,
    /// Most attempts in flight at once.
    pub peak_concurrency: u32,
    /// Time-weighted mean attempts in flight, over the span from the first read.
    pub mean_concurrency: f64,
    /// Time from the first read to the last advance.
    pub span_ns: u64,
    /// Time with at least one body transfer active.
    pub nic_busy_ns: u64,
    /// Time with the NIC cap binding (some stream gets less than its own bandwidth).
    pub nic_saturated_ns: u64,
}

#[derive(Clone, Copy, Debug)]
enum Timer {
    /// Send the next (retry) attempt of a read.
    Retry { token: u64 },
    /// An attempt's first byte arrives.
    FirstByte { attempt: u64 },
    /// An attempt is answered with an error status.
    ErrorResponse { attempt: u64, status: u16 },
    /// An attempt times out.
    Timeout { attempt: u64 },
    /// Send a hedge if the read has no first byte yet.
    Hedge { token: u64 },
}

#[derive(Clone, Debug)]
struct Read {
    req: GetRequest,
    /// Non-hedge attempts sent.
    tries: u32,
    hedges: u32,
    /// Attempts in flight: one but for hedges and retries racing (inline up to two).
    live: SmallVec<[u64; 2]>,
    winner: Option<u64>,
    hedge_timer: Option<EventKey>,
    retry_timer: Option<EventKey>,
}

#[derive(Clone, Debug)]
struct AttemptState {
    token: u64,
    number: u32,
    start_ns: u64,
    first_byte_ns: Option<u64>,
    hedge: bool,
    timer: Option<EventKey>,
    cap_bytes_per_s: f64,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    tokens: f64,
    at_ns: u64,
}

/// One node's S3 client against a simulated store; see the module comment.
pub struct S3Client {
    spec: StoreSpec,
    first_byte: Sampler,
    bandwidth: Sampler,
    first_byte_per_mib_ns: f64,
    rng: Pcg64,
    /// Retry backoff's jitter, a stream of its own: drawn only when an attempt fails, so from
    /// the attempts' stream it would shift every later sample after the first retry.
    jitter_rng: Pcg64,
    timers: EventQueue<Timer>,
    link: SharedLink,
    /// By token; looked up on every event, never walked (`rustc_hash` has no random state).
    reads: FxHashMap<u64, Read>,
    /// By attempt id; the same.
    attempts: FxHashMap<u64, AttemptState>,
    next_attempt: u64,
    buckets: BTreeMap<u32, Bucket>,
    now_ns: u64,
    trace_enabled: bool,
    trace: Vec<Attempt>,
    stats: StoreStats,
    in_flight: u32,
    first_ns: Option<u64>,
    acc_ns: u64,
    concurrency_integral: f64,
    request_cpu: RequestCpu,
}

impl S3Client {
    /// A client for `spec`, drawing from `rng` (give it its own stream, e.g.
    /// `RngStreams::stream_for(Subsystem::Store, node, replication)`); the retry jitter draws
    /// from a fixed stream until [`S3Client::set_jitter_rng`] gives it one.
    pub fn new(spec: &StoreSpec, rng: Pcg64) -> Result<Self, StoreError> {
        spec.validate()?;
        Ok(S3Client {
            first_byte: Sampler::new("first_byte", &spec.first_byte)?,
            bandwidth: Sampler::new("stream_bandwidth", &spec.stream_bandwidth)?,
            first_byte_per_mib_ns: spec.first_byte_per_mib.0 as f64,
            rng,
            jitter_rng: Pcg64::new(0, 0),
            timers: EventQueue::with_capacity(1024),
            link: SharedLink::new(spec.nic.0, spec.progress_chunk.0),
            reads: FxHashMap::default(),
            attempts: FxHashMap::default(),
            next_attempt: 0,
            buckets: BTreeMap::new(),
            now_ns: 0,
            trace_enabled: false,
            trace: Vec::new(),
            stats: StoreStats::default(),
            in_flight: 0,
            first_ns: None,
            acc_ns: 0,
            concurrency_integral: 0.0,
            request_cpu: RequestCpu::free(),
            spec: spec.clone(),
        })
    }

    /// Records one [`Attempt`] per HTTP request for [`S3Client::drain_attempts`] (off by
    /// default, for speed).
    pub fn set_trace(&mut self, enabled: bool) {
        self.trace_enabled = enabled;
    }

    /// The client's CPU per request ([`RequestCpu`]); none by default.
    pub fn set_request_cpu(&mut self, cpu: RequestCpu) {
        self.request_cpu = cpu;
    }

    /// The spec this client was built from.
    pub fn spec(&self) -> &StoreSpec {
        &self.spec
    }

    /// Reads in flight.
    pub fn reads_in_flight(&self) -> usize {
        self.reads.len()
    }

    /// HTTP attempts in flight (connections in use).
    pub fn attempts_in_flight(&self) -> u32 {
        self.in_flight
    }

    /// The NIC's current aggregate rate, bytes per second (never above `spec.nic`).
    pub fn nic_rate_bytes_per_s(&self) -> f64 {
        self.link.aggregate_rate()
    }

    /// Starts a read at `now_ns`. Its events come from later [`S3Client::advance`] calls.
    /// Call `advance(now_ns)` first, so that earlier events are not reported after this start.
    pub fn start(&mut self, now_ns: u64, req: GetRequest) -> Result<(), StoreError> {
        if self.reads.contains_key(&req.token) {
            return Err(StoreError::DuplicateToken(req.token));
        }
        let now = now_ns.max(self.now_ns);
        self.now_ns = now;
        self.first_ns.get_or_insert(now);
        self.stats.reads += 1;
        self.reads.insert(
            req.token,
            Read {
                req,
                tries: 0,
                hedges: 0,
                live: SmallVec::new(),
                winner: None,
                hedge_timer: None,
                retry_timer: None,
            },
        );
        self.send(now, req.token, false);
        Ok(())
    }

    /// Abandons a read (e.g. the query needs no more data): aborts its attempts and its
    /// transfer, counting the body bytes already received. Call after `advance(now_ns)`.
    /// Returns false if no such read is in flight. The token may be reused at once.
    pub fn cancel(&mut self, now_ns: u64, token: u64) -> bool {
        let now = now_ns.max(self.now_ns);
        let Some(read) = self.reads.get_mut(&token) else {
            return false;
        };
        let live = std::mem::take(&mut read.live);
        let winner = read.winner;
        for key in [read.hedge_timer.take(), read.retry_timer.take()]
            .into_iter()
            .flatten()
        {
            self.timers.cancel(key);
        }
        if let Some(w) = winner {
            if let Some(done) = self.link.abort(now, w) {
                self.stats.bytes_fetched += done;
            }
        }
        for id in live {
            self.stats.aborted += 1;
            self.finish_attempt(now, id, STATUS_ABORTED);
        }
        self.reads.remove(&token);
        self.stats.reads_cancelled += 1;
        true
    }

    /// The time of the next event, if any is pending.
    pub fn next_event_ns(&self) -> Option<u64> {
        match (self.timers.peek_time(), self.link.next_event_ns()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Advances the model to `now_ns`, appending what happened, in time order, to `out`.
    pub fn advance(&mut self, now_ns: u64, out: &mut Vec<(u64, ClientEvent)>) {
        let now_ns = now_ns.max(self.now_ns);
        loop {
            let timer = self.timers.peek_time().filter(|t| *t <= now_ns);
            let link = self.link.next_event_ns().filter(|t| *t <= now_ns);
            match (timer, link) {
                (None, None) => break,
                // Body progress first at equal times: a completion frees bandwidth and a
                // connection before new attempts start.
                (Some(a), Some(b)) if b <= a => self.on_link(b, out),
                (None, Some(b)) => self.on_link(b, out),
                (Some(_), _) => {
                    let Some((t, timer)) = self.timers.pop() else {
                        break;
                    };
                    self.now_ns = t;
                    self.on_timer(t, timer, out);
                }
            }
        }
        self.now_ns = now_ns;
        self.account(now_ns);
    }

    /// Moves the recorded attempts to `out` (empty unless [`S3Client::set_trace`] is on).
    pub fn drain_attempts(&mut self, out: &mut Vec<Attempt>) {
        out.append(&mut self.trace);
    }

    /// Counters so far, with cost and concurrency computed up to the last advance.
    pub fn stats(&self) -> StoreStats {
        let mut s = self.stats.clone();
        let span = self.first_ns.map_or(0, |f| self.acc_ns.saturating_sub(f));
        s.span_ns = span;
        s.mean_concurrency = if span > 0 {
            self.concurrency_integral / span as f64
        } else {
            0.0
        };
        let (busy, saturated) = self.link.busy_and_saturated_ns();
        s.nic_busy_ns = busy;
        s.nic_saturated_ns = saturated;
        // HEADs are billed as GETs ("GET, SELECT and all other requests"), LISTs at their own
        // price.
        let price = &self.spec.price;
        s.cost_usd = (s.gets + s.heads) as f64 * price.per_1000_gets_usd / 1000.0
            + s.lists as f64 * price.per_1000_lists_usd / 1000.0
            + s.bytes_fetched as f64 / 1e9 * price.per_gb_usd;
        s
    }

    /// Integrates concurrency up to `t`; call before every change of `in_flight`.
    fn account(&mut self, t: u64) {
        if t > self.acc_ns {
            if self.first_ns.is_some() {
                self.concurrency_integral += self.in_flight as f64 * (t - self.acc_ns) as f64;
            }
            self.acc_ns = t;
        }
    }

    /// Sends one attempt of `token` and decides its outcome.
    fn send(&mut self, now: u64, token: u64, hedge: bool) {
        let Some(read) = self.reads.get_mut(&token) else {
            return;
        };
        if hedge {
            read.hedges += 1;
        } else {
            read.tries += 1;
        }
        let number = read.tries + read.hedges;
        let req = read.req;
        let id = self.next_attempt;
        self.next_attempt += 1;
        read.live.push(id);

        // Draw every random number in the same order whatever the outcome, so that one
        // parameter change does not shift all later samples.
        let fb = self.first_byte.sample(&mut self.rng)
            + self.first_byte_per_mib_ns * req.len as f64 / MIB;
        let cap = self.bandwidth.sample(&mut self.rng);
        let u: f64 = self.rng.random();
        let fb_ns = fb.max(0.0).round() as u64;
        let throttled = !self.take_token(now, req.prefix);
        let faults = &self.spec.faults;
        let timeout = self.spec.timeout.0;
        let timer = if throttled {
            Timer::ErrorResponse {
                attempt: id,
                status: 503,
            }
        } else if u < faults.loss_rate {
            Timer::Timeout { attempt: id }
        } else if u < faults.loss_rate + faults.error_rate {
            Timer::ErrorResponse {
                attempt: id,
                status: 500,
            }
        } else if fb_ns > timeout {
            Timer::Timeout { attempt: id }
        } else {
            Timer::FirstByte { attempt: id }
        };
        // The client's own CPU first: the request goes out when a client thread has built it.
        // Its trace start is then; it counts in flight (its connection taken) from `now`, which
        // is the same time unless `cpu.network.per_request` is set (check-peers' fit).
        let out_ns = self.request_cpu.send(now);
        let at = match timer {
            Timer::Timeout { .. } => out_ns.saturating_add(timeout),
            _ => out_ns.saturating_add(fb_ns),
        };
        let key = self.timers.schedule(at, timer);
        self.attempts.insert(
            id,
            AttemptState {
                token,
                number,
                start_ns: out_ns,
                first_byte_ns: None,
                hedge,
                timer: Some(key),
                cap_bytes_per_s: cap,
            },
        );
        self.account(now);
        self.in_flight += 1;
        match req.method {
            Method::Get => self.stats.gets += 1,
            Method::Head => self.stats.heads += 1,
            Method::List => self.stats.lists += 1,
        }
        self.stats.peak_concurrency = self.stats.peak_concurrency.max(self.in_flight);
        if hedge {
            self.stats.hedges += 1;
        }
        self.arm_hedge(now, token);
    }

    /// Schedules the next hedge of a read if hedging is on and hedges remain.
    fn arm_hedge(&mut self, now: u64, token: u64) {
        let Some(h) = &self.spec.hedge else { return };
        let (after, max) = (h.after.0, h.max_hedges);
        let Some(read) = self.reads.get_mut(&token) else {
            return;
        };
        if read.winner.is_some() || read.hedges >= max {
            return;
        }
        if let Some(k) = read.hedge_timer.take() {
            self.timers.cancel(k);
        }
        read.hedge_timer = Some(
            self.timers
                .schedule(now.saturating_add(after), Timer::Hedge { token }),
        );
    }

    /// The prefix's token bucket: refills at the rate, up to the burst; false = throttled.
    fn take_token(&mut self, now: u64, prefix: u32) -> bool {
        let Some(limit) = &self.spec.rate_limit else {
            return true;
        };
        let rate = limit.requests_per_s;
        let burst = limit.burst.unwrap_or(rate).max(1.0);
        let b = self.buckets.entry(prefix).or_insert(Bucket {
            tokens: burst,
            at_ns: now,
        });
        b.tokens = (b.tokens + rate * now.saturating_sub(b.at_ns) as f64 / 1e9).min(burst);
        b.at_ns = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    fn on_timer(&mut self, now: u64, timer: Timer, out: &mut Vec<(u64, ClientEvent)>) {
        match timer {
            Timer::Retry { token } => {
                if let Some(read) = self.reads.get_mut(&token) {
                    read.retry_timer = None;
                }
                self.send(now, token, false)
            }
            Timer::Hedge { token } => {
                let Some(read) = self.reads.get_mut(&token) else {
                    return;
                };
                read.hedge_timer = None;
                if read.winner.is_none() {
                    self.send(now, token, true);
                }
            }
            Timer::FirstByte { attempt } => self.on_first_byte(now, attempt, out),
            Timer::ErrorResponse { attempt, status } => {
                if status == 503 {
                    self.stats.responses_503 += 1;
                } else {
                    self.stats.errors_500 += 1;
                }
                self.on_attempt_failed(now, attempt, status, out);
            }
            Timer::Timeout { attempt } => {
                self.stats.timeouts += 1;
                self.on_attempt_failed(now, attempt, STATUS_TIMEOUT, out);
            }
        }
    }

    fn on_first_byte(&mut self, now: u64, id: u64, out: &mut Vec<(u64, ClientEvent)>) {
        let Some(a) = self.attempts.get_mut(&id) else {
            return;
        };
        a.timer = None;
        a.first_byte_ns = Some(now);
        let (token, cap) = (a.token, a.cap_bytes_per_s);
        let Some(read) = self.reads.get_mut(&token) else {
            return;
        };
        read.winner = Some(id);
        let losers: Vec<u64> = read.live.iter().copied().filter(|x| *x != id).collect();
        read.live.retain(|x| *x == id);
        if let Some(k) = read.hedge_timer.take() {
            self.timers.cancel(k);
        }
        let len = read.req.len;
        for loser in losers {
            self.stats.aborted += 1;
            self.finish_attempt(now, loser, STATUS_ABORTED);
        }
        out.push((now, ClientEvent::FirstByte { token }));
        if len == 0 {
            self.complete(now, id, out);
        } else {
            self.link.add(now, id, cap, len);
        }
    }

    fn on_link(&mut self, t: u64, out: &mut Vec<(u64, ClientEvent)>) {
        self.now_ns = t;
        let Some(e) = self.link.step(t) else { return };
        if e.finished {
            self.complete(t, e.id, out);
        } else if let Some(a) = self.attempts.get(&e.id) {
            out.push((
                t,
                ClientEvent::Progress {
                    token: a.token,
                    bytes_ready: e.bytes_done,
                },
            ));
        }
    }

    fn complete(&mut self, now: u64, id: u64, out: &mut Vec<(u64, ClientEvent)>) {
        let Some(token) = self.attempts.get(&id).map(|a| a.token) else {
            return;
        };
        // Record the attempt while its read still exists (the trace takes the range from it).
        self.finish_attempt(now, id, 206);
        if let Some(read) = self.reads.remove(&token) {
            self.stats.bytes_fetched += read.req.len;
            self.stats.reads_completed += 1;
        }
        out.push((now, ClientEvent::Completed { token }));
    }

    fn on_attempt_failed(
        &mut self,
        now: u64,
        id: u64,
        status: u16,
        out: &mut Vec<(u64, ClientEvent)>,
    ) {
        let Some(token) = self.attempts.get(&id).map(|a| a.token) else {
            return;
        };
        self.finish_attempt(now, id, status);
        let max = self.spec.retry.max_attempts;
        let Some(read) = self.reads.get_mut(&token) else {
            return;
        };
        read.live.retain(|x| *x != id);
        if !read.live.is_empty() || read.winner.is_some() {
            return; // a sibling hedge is still live
        }
        let tries = read.tries;
        if tries < max {
            // No hedge while waiting to retry: the retry re-arms it.
            if let Some(k) = read.hedge_timer.take() {
                self.timers.cancel(k);
            }
            let delay = self.backoff_ns(tries);
            self.stats.retries += 1;
            let key = self
                .timers
                .schedule(now.saturating_add(delay), Timer::Retry { token });
            if let Some(read) = self.reads.get_mut(&token) {
                read.retry_timer = Some(key);
            }
            return;
        }
        if let Some(read) = self.reads.remove(&token) {
            if let Some(k) = read.hedge_timer {
                self.timers.cancel(k);
            }
        }
        self.stats.failures += 1;
        let what = match status {
            503 => "503 SlowDown",
            500 => "500 InternalError",
            _ => "timeout",
        };
        out.push((
            now,
            ClientEvent::Failed {
                token,
                reason: format!("{what} after {tries} attempts"),
            },
        ));
    }

    /// The stream the retry backoff's jitter draws from (give it its own, e.g.
    /// `RngStreams::stream(Subsystem::Named("store_retry_jitter"), replication)`).
    pub fn set_jitter_rng(&mut self, rng: Pcg64) {
        self.jitter_rng = rng;
    }

    /// Exponential backoff before retry number `failed` (1-based), with jitter in [50%, 100%].
    fn backoff_ns(&mut self, failed: u32) -> u64 {
        let r = &self.spec.retry;
        let base = r.backoff_initial.0 as f64 * 2f64.powi(failed.saturating_sub(1).min(62) as i32);
        let capped = base.min(r.backoff_max.0 as f64);
        let jitter: f64 = self.jitter_rng.random();
        (capped * (0.5 + 0.5 * jitter)).round() as u64
    }

    /// Ends an attempt: frees its connection, cancels its timer, records it for the trace.
    fn finish_attempt(&mut self, now: u64, id: u64, status: u16) {
        let Some(a) = self.attempts.remove(&id) else {
            return;
        };
        if let Some(k) = a.timer {
            self.timers.cancel(k);
        }
        self.account(now);
        self.in_flight = self.in_flight.saturating_sub(1);
        if self.trace_enabled {
            let req = self.reads.get(&a.token).map(|r| r.req);
            self.trace.push(Attempt {
                token: a.token,
                object: req.map_or(0, |r| r.object),
                attempt: a.number,
                start_ns: a.start_ns,
                first_byte_ns: a.first_byte_ns,
                end_ns: now,
                status,
                offset: req.map_or(0, |r| r.offset),
                len: req.map_or(0, |r| r.len),
                hedge: a.hedge,
                method: req.map_or(Method::Get, |r| r.method),
            });
        }
    }
}
