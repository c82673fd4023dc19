//! `ParquetFetchWaitTimeMicroseconds`: time decode threads were reserved for a unit whose bytes
//! were not ready yet. Waits are kept in nanoseconds and converted once per wait, as ClickHouse
//! measures each wait with its own stopwatch.

use std::collections::BTreeMap;

use crate::events::{ProfileEvent, ProfileEvents};

/// Open waits of decode units, keyed by the caller's unit id (e.g. a decode id).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchWait {
    waiting_since_ns: BTreeMap<u64, u64>,
    total_ns: u64,
}

impl FetchWait {
    /// No open waits.
    pub fn new() -> FetchWait {
        FetchWait::default()
    }

    /// A decode thread was reserved for `unit` at `now_ns` but its bytes are not ready. A second
    /// call for a unit already waiting keeps the earlier start.
    pub fn start(&mut self, now_ns: u64, unit: u64) {
        self.waiting_since_ns.entry(unit).or_insert(now_ns);
    }

    /// The bytes of `unit` became ready at `now_ns`: closes its wait (if one is open), adds it to
    /// `ParquetFetchWaitTimeMicroseconds` and returns its length in nanoseconds.
    pub fn finish(&mut self, now_ns: u64, unit: u64, events: &mut ProfileEvents) -> u64 {
        let Some(since_ns) = self.waiting_since_ns.remove(&unit) else {
            return 0;
        };
        let waited_ns = now_ns.saturating_sub(since_ns);
        self.total_ns = self.total_ns.saturating_add(waited_ns);
        events.add(
            ProfileEvent::ParquetFetchWaitTimeMicroseconds,
            waited_ns / 1_000,
        );
        waited_ns
    }

    /// Whether `unit` waits now.
    pub fn is_waiting(&self, unit: u64) -> bool {
        self.waiting_since_ns.contains_key(&unit)
    }

    /// Units waiting now (decode threads blocked on bytes).
    pub fn waiting(&self) -> usize {
        self.waiting_since_ns.len()
    }

    /// Total closed wait time in nanoseconds (exact, unlike the microsecond event).
    pub fn total_ns(&self) -> u64 {
        self.total_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_add_up_per_unit() {
        let mut events = ProfileEvents::new();
        let mut wait = FetchWait::new();
        wait.start(1_000, 1);
        wait.start(2_000, 2);
        wait.start(5_000, 1); // already waiting: keeps 1_000
        assert_eq!(wait.waiting(), 2);
        assert_eq!(wait.finish(3_500_000, 1, &mut events), 3_499_000);
        assert_eq!(wait.finish(2_002_000, 2, &mut events), 2_000_000);
        assert_eq!(wait.finish(9_000_000, 2, &mut events), 0, "no open wait");
        assert_eq!(events.parquet_fetch_wait_time_microseconds, 3_499 + 2_000);
        assert_eq!(wait.total_ns(), 5_499_000);
        assert!(!wait.is_waiting(1));
    }
}
