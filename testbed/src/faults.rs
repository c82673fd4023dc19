//! The bed's fault mode: what the S3 server does wrong, and to which requests.
//!
//! A [`FaultPlan`] names GETs of objects by their sequence number at the server (0 for the first
//! GET of an object since the plan was set, retries included; uploads, HEADs and LISTs are not
//! counted), so the number of faults of each kind is fixed whatever the timing. Which *read*
//! the n-th GET belongs to depends on the order concurrent requests arrive in; a test compares
//! totals, not which read was hit. The faults are those a client of a real store meets:
//!
//! - [`Fault::SlowDown`]: a burst of `503 SlowDown` answers (S3's throttling), with S3's XML body;
//! - [`Fault::ResetBeforeResponse`]: the connection is closed before any response;
//! - [`Fault::ResetMidBody`]: the head and the first half of the body are sent (at least the
//!   head: a 1-byte body is cut before its byte), then the connection is closed;
//! - [`Fault::Stall`]: as `ResetMidBody`, but the connection then stays silent for `stall_ns`
//!   before it is closed (a client's timeout should fire first);
//! - [`Fault::Restart`]: the server restarts: every open connection is closed (this GET gets no
//!   response) and for `down_ns` every new connection is closed as it is accepted. Through the
//!   proxy, a client sees a refused connection as one closed before any response either way.
//!
//! What the server did is counted ([`FaultCounts`]) and every answered request is in the
//! request log as usual (a cut body with the bytes that were sent).

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame};
use tokio::sync::watch;

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// This GET and the next `count - 1` are answered `503 SlowDown`.
    SlowDown { count: u64 },
    /// The connection is closed before the response.
    ResetBeforeResponse,
    /// The head and half the body are handed to the server, then the connection is closed
    /// (the server may close before flushing them: the client can receive less, or nothing,
    /// while the request log counts half; a known defect, README "The test bed").
    ResetMidBody,
    /// The head and half the body are sent, then nothing for `stall_ns`, then the connection is
    /// closed.
    Stall { stall_ns: u64 },
    /// Every open connection is closed, and new ones are closed on arrival for `down_ns`.
    Restart { down_ns: u64 },
}

impl Fault {
    /// GETs it answers, from its own.
    fn span(&self) -> u64 {
        match self {
            Fault::SlowDown { count } => (*count).max(1),
            _ => 1,
        }
    }
}

/// Which GETs get which fault, by GET sequence number (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    by_get: BTreeMap<u64, Fault>,
}

impl FaultPlan {
    /// No faults.
    pub fn none() -> Self {
        FaultPlan::default()
    }

    /// Adds `fault` at GET number `get` (0-based); a later fault at the same number replaces it.
    pub fn at(mut self, get: u64, fault: Fault) -> Self {
        self.by_get.insert(get, fault);
        self
    }

    /// The faults, by the GET number they start at.
    pub fn faults(&self) -> impl Iterator<Item = (u64, Fault)> + '_ {
        self.by_get.iter().map(|(n, f)| (*n, *f))
    }

    /// The fault for GET number `get`, if any (a burst covers the GETs after its own).
    pub fn fault_for(&self, get: u64) -> Option<Fault> {
        let (start, fault) = self.by_get.range(..=get).next_back()?;
        (get - start < fault.span()).then_some(*fault)
    }

    /// Parses a comma-separated list of `KIND@N` (N the 0-based GET number): `503x3@5` (a burst
    /// of three 503s from GET 5), `reset@10` (before the response), `cut@14` (mid-body),
    /// `stall=2s@18`, `restart=100ms@25`.
    pub fn parse(spec: &str) -> Result<FaultPlan, String> {
        let mut plan = FaultPlan::none();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (kind, at) = item.rsplit_once('@').ok_or_else(|| {
                format!("`{item}`: give the GET number after `@`, e.g. `{item}@3`")
            })?;
            let at: u64 = at
                .parse()
                .map_err(|_| format!("`{item}`: `{at}` is not a GET number (0, 1, 2...)"))?;
            let duration =
                |v: &str| units::parse_duration_ns(v).map_err(|e| format!("`{item}`: {e}"));
            let fault = match kind.split_once(['=', 'x']) {
                None if kind == "reset" => Fault::ResetBeforeResponse,
                None if kind == "cut" => Fault::ResetMidBody,
                None if kind == "503" => Fault::SlowDown { count: 1 },
                Some(("503", n)) => Fault::SlowDown {
                    count: n.parse().ok().filter(|c| *c > 0).ok_or_else(|| {
                        format!("`{item}`: `{n}` is not a burst length (1, 2...)")
                    })?,
                },
                Some(("stall", v)) => Fault::Stall {
                    stall_ns: duration(v)?,
                },
                Some(("restart", v)) => Fault::Restart {
                    down_ns: duration(v)?,
                },
                _ => {
                    return Err(format!(
                        "`{item}`: the kinds are `503x<count>`, `reset`, `cut`, \
                         `stall=<duration>` and `restart=<duration>`"
                    ))
                }
            };
            plan = plan.at(at, fault);
        }
        Ok(plan)
    }
}

/// What the server did wrong since the plan was set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// GETs of objects seen.
    pub gets: u64,
    /// `503 SlowDown` answers.
    pub slow_downs: u64,
    pub resets_before_response: u64,
    pub resets_mid_body: u64,
    pub stalls: u64,
    pub restarts: u64,
    /// Connections a restart closed (busy or idle).
    pub connections_closed_by_restart: u64,
    /// Connections closed on arrival while the server was down.
    pub connections_refused_while_down: u64,
}

impl FaultCounts {
    /// GETs the plan itself failed (a restart's GET included, not the others it cut).
    pub fn failed_gets(&self) -> u64 {
        self.slow_downs
            + self.resets_before_response
            + self.resets_mid_body
            + self.stalls
            + self.restarts
    }
}

/// The fault mode's state, shared by the service and the accept loop.
#[derive(Debug)]
pub(crate) struct Faults {
    plan: Mutex<FaultPlan>,
    next_get: AtomicU64,
    counts: Mutex<FaultCounts>,
    down_until: Mutex<Option<Instant>>,
    /// Bumped at each restart; every connection task watches it.
    restarts: watch::Sender<u64>,
}

impl Faults {
    pub(crate) fn new() -> Self {
        Faults {
            plan: Mutex::new(FaultPlan::none()),
            next_get: AtomicU64::new(0),
            counts: Mutex::new(FaultCounts::default()),
            down_until: Mutex::new(None),
            restarts: watch::channel(0).0,
        }
    }

    /// Sets the plan and starts counting GETs and faults from 0.
    pub(crate) fn set(&self, plan: FaultPlan) {
        *self.plan.lock().unwrap_or_else(PoisonError::into_inner) = plan;
        *self.counts.lock().unwrap_or_else(PoisonError::into_inner) = FaultCounts::default();
        self.next_get.store(0, Ordering::SeqCst);
        *self
            .down_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    pub(crate) fn counts(&self) -> FaultCounts {
        self.counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn count(&self, f: impl FnOnce(&mut FaultCounts)) {
        f(&mut self.counts.lock().unwrap_or_else(PoisonError::into_inner));
    }

    /// The fault for the GET arriving now (each call is one GET), counted; a restart starts here.
    pub(crate) fn on_get(&self) -> Option<Fault> {
        let n = self.next_get.fetch_add(1, Ordering::SeqCst);
        let fault = self
            .plan
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .fault_for(n);
        self.count(|c| {
            c.gets += 1;
            match fault {
                Some(Fault::SlowDown { .. }) => c.slow_downs += 1,
                Some(Fault::ResetBeforeResponse) => c.resets_before_response += 1,
                Some(Fault::ResetMidBody) => c.resets_mid_body += 1,
                Some(Fault::Stall { .. }) => c.stalls += 1,
                Some(Fault::Restart { .. }) => c.restarts += 1,
                None => {}
            }
        });
        if let Some(Fault::Restart { down_ns }) = fault {
            *self
                .down_until
                .lock()
                .unwrap_or_else(PoisonError::into_inner) =
                Some(Instant::now() + Duration::from_nanos(down_ns));
            self.restarts.send_modify(|g| *g += 1);
        }
        fault
    }

    /// Whether a connection accepted now is refused (the server is down), counted.
    pub(crate) fn refuse_connection(&self) -> bool {
        let down = self
            .down_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|until| Instant::now() < until);
        if down {
            self.count(|c| c.connections_refused_while_down += 1);
        }
        down
    }

    /// Resolves when the server restarts (a connection task closes its connection then).
    pub(crate) fn restarted(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.restarts.subscribe();
        async move {
            // An error means the bed is gone: the connection ends with it anyway.
            let _ = rx.changed().await;
        }
    }

    pub(crate) fn count_closed_by_restart(&self) {
        self.count(|c| c.connections_closed_by_restart += 1);
    }
}

/// A GetObject body cut after `cut_after_bytes`, after `stall_ns` of silence (0: at once).
pub(crate) struct FaultBody {
    inner: s3s::Body,
    cut: Option<Cut>,
    sent_bytes: u64,
}

struct Cut {
    after_bytes: u64,
    stall_ns: u64,
    stall: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl FaultBody {
    /// The body as it is.
    pub(crate) fn whole(inner: s3s::Body) -> Self {
        FaultBody {
            inner,
            cut: None,
            sent_bytes: 0,
        }
    }

    /// The first half of a body of `len_bytes`, then a cut after `stall_ns`.
    pub(crate) fn cut_in_half(inner: s3s::Body, len_bytes: u64, stall_ns: u64) -> Self {
        FaultBody {
            inner,
            cut: Some(Cut {
                after_bytes: len_bytes / 2,
                stall_ns,
                stall: None,
            }),
            sent_bytes: 0,
        }
    }
}

impl Body for FaultBody {
    type Data = Bytes;
    type Error = s3s::StdError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let Some(cut) = this.cut.as_mut() else {
            return Pin::new(&mut this.inner).poll_frame(cx);
        };
        if this.sent_bytes >= cut.after_bytes {
            if cut.stall_ns > 0 {
                let stall_ns = cut.stall_ns;
                let sleep = cut.stall.get_or_insert_with(|| {
                    Box::pin(tokio::time::sleep(Duration::from_nanos(stall_ns)))
                });
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
            }
            return Poll::Ready(Some(Err("the test bed cut the body (fault mode)".into())));
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                Ok(mut data) => {
                    let room = cut.after_bytes - this.sent_bytes;
                    if data.len() as u64 > room {
                        data.truncate(room as usize);
                    }
                    this.sent_bytes += data.len() as u64;
                    if data.is_empty() {
                        // Nothing before the cut: go straight to it.
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    Poll::Ready(Some(Ok(Frame::data(data))))
                }
                Err(other) => Poll::Ready(Some(Ok(other))),
            },
            other => other,
        }
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// S3's answer to a request over its rate: `503 SlowDown` with its XML error body.
pub(crate) fn slow_down_response() -> hyper::Response<s3s::Body> {
    const BODY: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>\
        <Message>Please reduce your request rate.</Message></Error>";
    let mut resp = hyper::Response::new(s3s::Body::from(BODY.to_string()));
    *resp.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    resp.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/xml"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_names_gets_by_number_and_a_burst_covers_the_next() {
        let plan =
            FaultPlan::parse("503x3@5, reset@10,cut@11,stall=2s@12,restart=100ms@20").unwrap();
        let at = |n| plan.fault_for(n);
        assert_eq!(at(4), None);
        for n in 5..8 {
            assert_eq!(at(n), Some(Fault::SlowDown { count: 3 }), "{n}");
        }
        assert_eq!(at(8), None);
        assert_eq!(at(10), Some(Fault::ResetBeforeResponse));
        assert_eq!(at(11), Some(Fault::ResetMidBody));
        assert_eq!(
            at(12),
            Some(Fault::Stall {
                stall_ns: 2_000_000_000
            })
        );
        assert_eq!(at(13), None);
        assert_eq!(
            at(20),
            Some(Fault::Restart {
                down_ns: 100_000_000
            })
        );
        assert_eq!(plan.faults().count(), 5);
        for bad in ["reset", "reset@x", "503x0@1", "boom@1", "stall=soon@2"] {
            assert!(FaultPlan::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(FaultPlan::parse("").unwrap(), FaultPlan::none());
    }

    #[test]
    fn every_get_is_counted_and_a_restart_takes_the_server_down() {
        let faults = Faults::new();
        faults.set(FaultPlan::none().at(1, Fault::SlowDown { count: 2 }).at(
            3,
            Fault::Restart {
                down_ns: 60_000_000_000,
            },
        ));
        let seen: Vec<Option<Fault>> = (0..5).map(|_| faults.on_get()).collect();
        assert_eq!(seen[0], None);
        assert_eq!(seen[4], None);
        assert!(faults.refuse_connection());
        let c = faults.counts();
        assert_eq!((c.gets, c.slow_downs, c.restarts), (5, 2, 1));
        assert_eq!(c.failed_gets(), 3);
        assert_eq!(c.connections_refused_while_down, 1);
        // A new plan counts from 0.
        faults.set(FaultPlan::none());
        assert_eq!(faults.counts(), FaultCounts::default());
    }
}
