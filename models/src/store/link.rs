//! The node's NIC shared max-min fairly (water-filling) by the active transfers, each also
//! capped by its own per-stream bandwidth.
//!
//! With capacity C and stream caps c_i, the water level L solves sum_i min(c_i, L) = C (or is
//! infinite when sum_i c_i <= C). A transfer with c_i <= L runs at its own cap ("capped"); the
//! others run at L ("shared"). Rates change only when a transfer joins or leaves.
//!
//! To avoid rescheduling every transfer at each change:
//! - capped transfers keep a fixed rate while they stay capped, so their next chunk-boundary
//!   time is computed once and kept in a time-ordered queue;
//! - shared transfers all run at the same rate L, so they are tracked in "virtual bytes"
//!   V(t) = integral of L dt (the bytes any shared transfer received since time 0): a
//!   transfer's next boundary is a fixed tag in V, whatever L does later.
//!
//! Only transfers whose cap lies between the old and the new level switch groups at a change,
//! so the cost of a change is O(n) for the level walk over the sorted caps plus O(log n) per
//! switching transfer: no transfer is rescheduled merely because its share changed. Both
//! queues drop an entry lazily ([`LazyMinQueue`]): every public change ends by settling them, so
//! that their fronts are current.

use super::lazy_queue::LazyMinQueue;
use rustc_hash::FxHashMap;

const NS_PER_S: f64 = 1e9;

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Runs at its own cap: `bytes_done(t) = bytes_at + cap * (t - t_at)`.
    Capped {
        bytes_at: f64,
        t_at: u64,
        due_ns: u64,
    },
    /// Runs at the level: `bytes_done = V - offset_v`; its next boundary is at V = `tag`.
    Shared { offset_v: f64, tag: f64 },
}

#[derive(Clone, Debug)]
struct Transfer {
    cap: f64,
    len: u64,
    next_boundary: u64,
    mode: Mode,
}

/// What [`SharedLink::step`] reports about one transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkEvent {
    /// The transfer's id, as given to [`SharedLink::add`].
    pub id: u64,
    /// Bytes delivered so far (a chunk boundary, or the length when finished).
    pub bytes_done: u64,
    /// Whether the transfer finished (and was removed).
    pub finished: bool,
}

/// A shared link; see the module comment.
#[derive(Clone, Debug)]
pub struct SharedLink {
    capacity: f64,
    chunk: u64,
    /// By id; looked up on every boundary, walked only to sum the rates (a test's check).
    transfers: FxHashMap<u64, Transfer>,
    /// (cap bits, id), ascending: positive f64 bit patterns order like the values.
    caps: Vec<(u64, u64)>,
    level: f64,
    v: f64,
    v_ns: u64,
    /// (tag bits, id) of the shared transfers: positive f64 bit patterns order like the values.
    shared: LazyMinQueue,
    /// Transfers in `shared`'s mode (its queue may also hold stale entries).
    shared_count: usize,
    /// (due ns, id) of the capped transfers.
    capped: LazyMinQueue,
    capped_rate_sum: f64,
    busy_ns: u64,
    saturated_ns: u64,
}

impl SharedLink {
    /// A link of `capacity_bytes_per_s`, delivering progress every `chunk_bytes` (0 = only at
    /// the end).
    pub fn new(capacity_bytes_per_s: f64, chunk_bytes: u64) -> Self {
        SharedLink {
            capacity: capacity_bytes_per_s,
            chunk: chunk_bytes,
            transfers: FxHashMap::default(),
            caps: Vec::new(),
            level: f64::INFINITY,
            v: 0.0,
            v_ns: 0,
            shared: LazyMinQueue::default(),
            shared_count: 0,
            capped: LazyMinQueue::default(),
            capped_rate_sum: 0.0,
            busy_ns: 0,
            saturated_ns: 0,
        }
    }

    /// Active transfers.
    pub fn len(&self) -> usize {
        self.transfers.len()
    }

    /// Whether no transfer is active.
    pub fn is_empty(&self) -> bool {
        self.transfers.is_empty()
    }

    /// The sum of the current rates, bytes per second (never above the capacity).
    pub fn aggregate_rate(&self) -> f64 {
        self.transfers
            .values()
            .map(|t| match t.mode {
                Mode::Capped { .. } => t.cap,
                Mode::Shared { .. } => self.level,
            })
            .sum()
    }

    /// The capacity, bytes per second.
    pub fn capacity(&self) -> f64 {
        self.capacity
    }

    /// Time with at least one transfer active, and time with the cap binding, up to the last
    /// advance.
    pub fn busy_and_saturated_ns(&self) -> (u64, u64) {
        (self.busy_ns, self.saturated_ns)
    }

    /// Moves the link's clock to `now_ns` (never backwards).
    fn advance_to(&mut self, now_ns: u64) {
        if now_ns <= self.v_ns {
            return;
        }
        let dt = now_ns - self.v_ns;
        if !self.transfers.is_empty() {
            self.busy_ns += dt;
        }
        if self.shared_count > 0 {
            self.v += self.level * dt as f64 / NS_PER_S;
            self.saturated_ns += dt;
        }
        self.v_ns = now_ns;
    }

    /// The time of the next chunk boundary or completion.
    pub fn next_event_ns(&self) -> Option<u64> {
        match (self.next_capped(), self.next_shared()) {
            (Some((a, _)), Some((b, _))) => Some(a.min(b)),
            (a, b) => a.or(b).map(|x| x.0),
        }
    }

    fn next_capped(&self) -> Option<(u64, u64)> {
        self.capped.first()
    }

    /// Drops the queues' stale entries from their fronts (see the module comment).
    fn settle(&mut self) {
        let transfers = &self.transfers;
        self.capped.settle(|due, id| {
            matches!(transfers.get(&id).map(|t| t.mode),
                Some(Mode::Capped { due_ns, .. }) if due_ns == due)
        });
        self.shared.settle(|bits, id| {
            matches!(transfers.get(&id).map(|t| t.mode),
                Some(Mode::Shared { tag, .. }) if tag.to_bits() == bits)
        });
        debug_assert_eq!(
            self.shared_count,
            self.transfers
                .values()
                .filter(|t| matches!(t.mode, Mode::Shared { .. }))
                .count()
        );
    }

    fn next_shared(&self) -> Option<(u64, u64)> {
        let (tag_bits, id) = self.shared.first()?;
        let ahead = f64::from_bits(tag_bits) - self.v;
        let dt = if ahead <= 0.0 {
            0
        } else {
            (ahead / self.level * NS_PER_S).ceil() as u64
        };
        Some((self.v_ns.saturating_add(dt), id))
    }

    /// Starts a transfer of `len` bytes (> 0) at a per-stream cap of `cap` bytes per second.
    pub fn add(&mut self, now_ns: u64, id: u64, cap: f64, len: u64) {
        self.advance_to(now_ns);
        let cap = if cap > 0.0 && cap.is_finite() {
            cap
        } else {
            self.capacity
        };
        let next_boundary = self.boundary_after(0, len);
        let key = (cap.to_bits(), id);
        let pos = self.caps.partition_point(|k| *k < key);
        self.caps.insert(pos, key);
        // Enter as capped at 0 bytes; the regroup below moves it if the level says so.
        let due_ns = now_ns.saturating_add((next_boundary as f64 / cap * NS_PER_S).ceil() as u64);
        self.transfers.insert(
            id,
            Transfer {
                cap,
                len,
                next_boundary,
                mode: Mode::Capped {
                    bytes_at: 0.0,
                    t_at: now_ns,
                    due_ns,
                },
            },
        );
        self.capped.push(due_ns, id);
        self.capped_rate_sum += cap;
        let old = self.level;
        self.relevel(now_ns, old);
        if cap > self.level {
            self.make_shared(now_ns, id);
        }
        self.settle();
    }

    /// Processes the earliest boundary if it is due at or before `now_ns`.
    pub fn step(&mut self, now_ns: u64) -> Option<LinkEvent> {
        let capped = self.next_capped().filter(|(t, _)| *t <= now_ns);
        let shared = self.next_shared().filter(|(t, _)| *t <= now_ns);
        let (t, id) = match (capped, shared) {
            (Some(c), Some(s)) => {
                if s < c {
                    s
                } else {
                    c
                }
            }
            (Some(c), None) => c,
            (None, Some(s)) => s,
            (None, None) => return None,
        };
        self.advance_to(t);
        let tr = self.transfers.get(&id)?.clone();
        let bytes_done = tr.next_boundary;
        if bytes_done >= tr.len {
            self.remove(t, id);
            self.settle();
            return Some(LinkEvent {
                id,
                bytes_done: tr.len,
                finished: true,
            });
        }
        let nb = self.boundary_after(bytes_done, tr.len);
        let mode = match tr.mode {
            Mode::Capped {
                bytes_at,
                t_at,
                due_ns,
            } => {
                // The event's own entry is the queue's (settled) front.
                let front = self.capped.pop_first();
                debug_assert_eq!(front, Some((due_ns, id)));
                let due =
                    t_at.saturating_add(((nb as f64 - bytes_at) / tr.cap * NS_PER_S).ceil() as u64);
                self.capped.push(due, id);
                Mode::Capped {
                    bytes_at,
                    t_at,
                    due_ns: due,
                }
            }
            Mode::Shared { offset_v, tag } => {
                let front = self.shared.pop_first();
                debug_assert_eq!(front, Some((tag.to_bits(), id)));
                let tag = offset_v + nb as f64;
                self.shared.push(tag.to_bits(), id);
                Mode::Shared { offset_v, tag }
            }
        };
        if let Some(t) = self.transfers.get_mut(&id) {
            t.next_boundary = nb;
            t.mode = mode;
        }
        self.settle();
        Some(LinkEvent {
            id,
            bytes_done,
            finished: false,
        })
    }

    /// Aborts a transfer (e.g. a cancelled request); returns the bytes it had received.
    pub fn abort(&mut self, now_ns: u64, id: u64) -> Option<u64> {
        self.advance_to(now_ns);
        let done = self.bytes_done(id)?;
        self.remove(now_ns, id);
        self.settle();
        Some(done)
    }

    fn bytes_done(&self, id: u64) -> Option<u64> {
        let t = self.transfers.get(&id)?;
        let b = match t.mode {
            Mode::Capped { bytes_at, t_at, .. } => {
                bytes_at + t.cap * (self.v_ns.saturating_sub(t_at)) as f64 / NS_PER_S
            }
            Mode::Shared { offset_v, .. } => self.v - offset_v,
        };
        Some((b.max(0.0) as u64).min(t.len))
    }

    fn boundary_after(&self, done: u64, len: u64) -> u64 {
        match done.checked_div(self.chunk) {
            None => len, // chunk 0: deliver only at the end
            Some(q) => (q + 1).saturating_mul(self.chunk).min(len),
        }
    }

    fn remove(&mut self, now_ns: u64, id: u64) {
        let Some(t) = self.transfers.remove(&id) else {
            return;
        };
        // Its queue entry goes lazily (`settle`).
        match t.mode {
            Mode::Capped { .. } => self.capped_rate_sum -= t.cap,
            Mode::Shared { .. } => self.shared_count -= 1,
        }
        let key = (t.cap.to_bits(), id);
        if let Ok(pos) = self.caps.binary_search(&key) {
            self.caps.remove(pos);
        }
        if self.transfers.is_empty() {
            // Nothing left: reset the sums so float error cannot accumulate across busy periods.
            self.capped_rate_sum = 0.0;
            self.level = f64::INFINITY;
            self.capped.clear();
            self.shared.clear();
            return;
        }
        let old = self.level;
        self.relevel(now_ns, old);
    }

    /// Recomputes the level and moves the transfers whose cap lies between the old and the new
    /// level to their new group.
    fn relevel(&mut self, now_ns: u64, old: f64) {
        let mut remaining = self.capacity;
        let mut n = self.caps.len();
        let mut level = f64::INFINITY;
        for &(bits, _) in &self.caps {
            let c = f64::from_bits(bits);
            if c * n as f64 <= remaining {
                remaining -= c;
                n -= 1;
            } else {
                level = remaining / n as f64;
                break;
            }
        }
        self.level = level;
        let (lo, hi) = if level < old {
            (level, old)
        } else {
            (old, level)
        };
        if lo == hi {
            return;
        }
        // Caps in (lo, hi] change group: shared iff cap > level.
        let start = self.caps.partition_point(|(b, _)| f64::from_bits(*b) <= lo);
        let end = self.caps.partition_point(|(b, _)| f64::from_bits(*b) <= hi);
        let ids: Vec<u64> = self
            .caps
            .get(start..end)
            .unwrap_or(&[])
            .iter()
            .map(|k| k.1)
            .collect();
        for id in ids {
            let should_share = self.transfers.get(&id).is_some_and(|t| t.cap > level);
            if should_share {
                self.make_shared(now_ns, id);
            } else {
                self.make_capped(now_ns, id);
            }
        }
    }

    fn make_shared(&mut self, now_ns: u64, id: u64) {
        let Some(t) = self.transfers.get(&id) else {
            return;
        };
        let Mode::Capped { bytes_at, t_at, .. } = t.mode else {
            return;
        };
        let done = bytes_at + t.cap * now_ns.saturating_sub(t_at) as f64 / NS_PER_S;
        let (cap, nb) = (t.cap, t.next_boundary);
        // Its capped entry goes lazily (`settle`).
        self.capped_rate_sum -= cap;
        let offset_v = self.v - done;
        let tag = offset_v + nb as f64;
        self.shared.push(tag.to_bits(), id);
        self.shared_count += 1;
        if let Some(t) = self.transfers.get_mut(&id) {
            t.mode = Mode::Shared { offset_v, tag };
        }
    }

    fn make_capped(&mut self, now_ns: u64, id: u64) {
        let Some(t) = self.transfers.get(&id) else {
            return;
        };
        let Mode::Shared { offset_v, .. } = t.mode else {
            return;
        };
        let done = (self.v - offset_v).max(0.0);
        let (cap, nb) = (t.cap, t.next_boundary);
        // Its shared entry goes lazily (`settle`).
        self.shared_count -= 1;
        let due_ns =
            now_ns.saturating_add(((nb as f64 - done).max(0.0) / cap * NS_PER_S).ceil() as u64);
        self.capped.push(due_ns, id);
        self.capped_rate_sum += cap;
        if let Some(t) = self.transfers.get_mut(&id) {
            t.mode = Mode::Capped {
                bytes_at: done,
                t_at: now_ns,
                due_ns,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const MIB: f64 = 1024.0 * 1024.0;

    fn run_all(link: &mut SharedLink) -> Vec<(u64, LinkEvent)> {
        let mut out = Vec::new();
        while let Some(t) = link.next_event_ns() {
            let e = link.step(t).expect("due event");
            out.push((t, e));
        }
        out
    }

    #[test]
    fn one_stream_runs_at_its_cap() {
        let mut link = SharedLink::new(1000.0 * MIB, 1 << 20);
        link.add(0, 1, 50.0 * MIB, 10 << 20);
        let ev = run_all(&mut link);
        assert_eq!(ev.len(), 10);
        let (t, last) = ev[9];
        assert!(last.finished && last.bytes_done == 10 << 20);
        assert!(
            (t as f64 - 0.2e9).abs() < 10.0,
            "10 MiB at 50 MiB/s takes 200 ms, got {t}"
        );
    }

    #[test]
    fn equal_streams_share_the_nic() {
        // 4 streams capped at 100 on a 200 link: each gets 50.
        let mut link = SharedLink::new(200.0 * MIB, 0);
        for id in 0..4 {
            link.add(0, id, 100.0 * MIB, 50 << 20);
        }
        assert!((link.aggregate_rate() - 200.0 * MIB).abs() < 1.0);
        let ev = run_all(&mut link);
        assert_eq!(ev.len(), 4);
        for (t, _) in ev {
            assert!(
                (t as f64 - 1e9).abs() < 10.0,
                "50 MiB at 50 MiB/s: 1 s, got {t}"
            );
        }
    }

    #[test]
    fn a_slow_stream_keeps_its_cap_and_the_rest_share() {
        // Caps 10 and 100 on a 60 link: 10 and 50.
        let mut link = SharedLink::new(60.0 * MIB, 0);
        link.add(0, 1, 10.0 * MIB, 10 << 20);
        link.add(0, 2, 100.0 * MIB, 100 << 20);
        let ev = run_all(&mut link);
        // id 1: 10 MiB at 10 MiB/s = 1 s. id 2: 50 MiB in the first second, then 50 MiB at
        // 60 MiB/s (its cap is 100, the link 60) = 5/6 s more.
        assert_eq!(ev[0].1.id, 1);
        assert!((ev[0].0 as f64 - 1e9).abs() < 10.0);
        assert_eq!(ev[1].1.id, 2);
        assert!(
            (ev[1].0 as f64 - (1e9 + 1e9 * 50.0 / 60.0)).abs() < 10.0,
            "{}",
            ev[1].0
        );
    }

    #[test]
    fn abort_frees_bandwidth() {
        let mut link = SharedLink::new(100.0 * MIB, 0);
        link.add(0, 1, 100.0 * MIB, 100 << 20);
        link.add(0, 2, 100.0 * MIB, 100 << 20);
        let done = link.abort(500_000_000, 2).unwrap();
        assert!((done as f64 - 25.0 * MIB).abs() < 2.0, "{done}");
        let ev = run_all(&mut link);
        // id 1: 25 MiB by 0.5 s, then 75 MiB at 100 MiB/s: done at 1.25 s.
        assert!((ev[0].0 as f64 - 1.25e9).abs() < 10.0, "{}", ev[0].0);
    }

    proptest! {
        /// Whatever the arrivals, the aggregate rate never exceeds the capacity, every
        /// transfer delivers exactly its length, and boundaries come in order.
        #[test]
        fn capacity_respected_and_bytes_conserved(
            jobs in proptest::collection::vec((0u64..2_000_000_000, 1.0f64..200.0, 1u64..(40 << 20)), 1..60),
            cap_mib in 10.0f64..500.0,
        ) {
            let capacity = cap_mib * MIB;
            let mut link = SharedLink::new(capacity, 1 << 20);
            let mut jobs: Vec<_> = jobs.into_iter().enumerate().collect();
            jobs.sort_by_key(|(i, (t, _, _))| (*t, *i));
            let mut pending = jobs.into_iter().peekable();
            let mut got: BTreeMap<u64, u64> = BTreeMap::new();
            let mut lens: BTreeMap<u64, u64> = BTreeMap::new();
            let mut last_t = 0;
            loop {
                let next_job = pending.peek().map(|(_, (t, _, _))| *t);
                let next_link = link.next_event_ns();
                let t = match (next_job, next_link) {
                    (Some(a), Some(b)) => a.min(b),
                    (a, b) => match a.or(b) { Some(t) => t, None => break },
                };
                prop_assert!(t >= last_t);
                last_t = t;
                if next_job == Some(t) {
                    let (i, (_, c, len)) = pending.next().unwrap();
                    link.add(t, i as u64, c * MIB, len);
                    lens.insert(i as u64, len);
                } else {
                    let e = link.step(t).unwrap();
                    let prev = got.insert(e.id, e.bytes_done).unwrap_or(0);
                    prop_assert!(e.bytes_done > prev);
                    prop_assert_eq!(e.finished, e.bytes_done == lens[&e.id]);
                }
                prop_assert!(link.aggregate_rate() <= capacity * (1.0 + 1e-9));
            }
            prop_assert_eq!(got, lens);
        }
    }
}
