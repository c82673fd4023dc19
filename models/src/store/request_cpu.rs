//! The client's own CPU for each HTTP request: a pool of threads (the HTTP client's executor)
//! each request passes through before it goes out (building and signing it, taking a
//! connection, the task that drives it). A burst of requests leaves one after another, `threads`
//! at a time, each `per_request_ns` after the last: polars' 36 row-group fetches leave over
//! about 30 ms on 2 cores (the README's `sim check-peers` section), not at once.
//!
//! First come, first served on the earliest free thread: a request sent at `now` goes out at
//! `max(now, earliest free) + per_request_ns`. No event is needed: the store schedules the
//! request's first byte from the time it goes out.

/// The pool; see the module comment. With `per_request_ns` 0 every request goes out when sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestCpu {
    per_request_ns: u64,
    /// When each thread is next free, ns.
    free_at_ns: Vec<u64>,
}

impl RequestCpu {
    /// The most client threads a pool takes (a bound on its per-request scan):
    /// `limits::MAX_THREADS`, as for every thread setting.
    pub const MAX_THREADS: u32 = limits::MAX_THREADS as u32;

    /// A pool of `threads` threads (clamped to 1..=[`Self::MAX_THREADS`]), each request taking
    /// `per_request_ns` on one of them.
    pub fn new(per_request_ns: u64, threads: u32) -> Self {
        let threads = threads.clamp(1, Self::MAX_THREADS) as usize;
        RequestCpu {
            per_request_ns,
            free_at_ns: vec![0; threads],
        }
    }

    /// No cost: every request goes out when sent.
    pub fn free() -> Self {
        Self::new(0, 1)
    }

    /// A request sent at `now_ns`: when it goes out on the wire (never before `now_ns`).
    pub fn send(&mut self, now_ns: u64) -> u64 {
        if self.per_request_ns == 0 {
            return now_ns;
        }
        // `new` gives at least one thread; with none, the request would go out at once.
        let Some((i, free)) = self
            .free_at_ns
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(i, t)| (t, i))
        else {
            return now_ns;
        };
        let out = now_ns.max(free).saturating_add(self.per_request_ns);
        debug_assert!(
            out >= now_ns && out > free,
            "a request goes out after its CPU"
        );
        self.free_at_ns[i] = out;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_cost_requests_go_out_when_sent() {
        let mut p = RequestCpu::free();
        assert_eq!([p.send(5), p.send(5), p.send(7)], [5, 5, 7]);
    }

    #[test]
    fn a_burst_leaves_threads_at_a_time() {
        let mut p = RequestCpu::new(10, 2);
        let out: Vec<u64> = (0..5).map(|_| p.send(100)).collect();
        assert_eq!(out, [110, 110, 120, 120, 130]);
    }

    #[test]
    fn an_idle_thread_starts_at_once() {
        let mut p = RequestCpu::new(10, 2);
        assert_eq!(p.send(0), 10);
        assert_eq!(p.send(50), 60);
        // Thread 0 is free at 10, thread 1 at 60: a request at 55 takes thread 0.
        assert_eq!(p.send(55), 65);
        assert_eq!(p.send(56), 70);
    }

    #[test]
    fn threads_are_bounded() {
        let p = RequestCpu::new(1, u32::MAX);
        assert_eq!(p.free_at_ns.len(), RequestCpu::MAX_THREADS as usize);
        assert_eq!(RequestCpu::new(1, 0).free_at_ns.len(), 1);
    }
}
