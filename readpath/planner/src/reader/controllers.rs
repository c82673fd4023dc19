//! One bytes-in-flight controller per open unit, as each file's `Prefetcher` has its own.
//!
//! In ClickHouse every file read has its own `ReadManager` and `Prefetcher`: `pumpIssueQueue`
//! compares that file's `prefetcher.bytesInFlight()` with its own `bytesInFlightTarget()`
//! (`max(targetBytesInFlight(io_threads), min_bytes_in_flight)`), and the first-byte and
//! bandwidth fits behind the target (`updateReadStats`) are the `Prefetcher`'s members, so a
//! file starts from the priors. Until 2026-12-07 the model had one controller for the whole
//! reader: with several files open, their read-ahead shared one file's target and one fit.
//!
//! The reader's figures (bytes in flight, their peak, the target) are the sums over the open
//! units, kept as each controller changes, so a snapshot is O(1).

use readahead::{ControllerConfig, InFlightController, ReadaheadError};

use crate::error::PlanError;

/// The open units' controllers and their sums.
#[derive(Debug)]
pub(super) struct Controllers {
    config: ControllerConfig,
    /// By unit id; only open units have one. A hash map: looked up on every read event, and
    /// only summed over (`rustc_hash` has no random state).
    by_unit: rustc_hash::FxHashMap<u32, InFlightController>,
    bytes_in_flight: u64,
    peak_bytes_in_flight: u64,
    /// The open units' targets summed (0 while planning is off: nothing issues against one).
    target_bytes: u64,
}

/// What a controller counts towards the sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Counted {
    bytes_in_flight: u64,
    target_bytes: u64,
}

impl Controllers {
    /// No unit open yet; `config` is checked here, as each unit's controller is built from it.
    pub(super) fn new(config: ControllerConfig) -> Result<Controllers, ReadaheadError> {
        config.validate()?;
        Ok(Controllers {
            config,
            by_unit: rustc_hash::FxHashMap::default(),
            bytes_in_flight: 0,
            peak_bytes_in_flight: 0,
            target_bytes: 0,
        })
    }

    /// Whether reads are issued against a target (`input_format_parquet_min_bytes_in_flight`
    /// above 0).
    pub(super) fn planning_enabled(&self) -> bool {
        self.config.min_bytes_in_flight > 0
    }

    fn counted(&self, c: &InFlightController) -> Counted {
        Counted {
            bytes_in_flight: c.bytes_in_flight(),
            target_bytes: if self.planning_enabled() {
                c.target_bytes()
            } else {
                0
            },
        }
    }

    /// Unit `uid` opens: its controller starts from the priors.
    pub(super) fn open(&mut self, uid: u32) -> Result<(), PlanError> {
        let c = InFlightController::new(self.config)?;
        let counted = self.counted(&c);
        debug_assert_eq!(counted.bytes_in_flight, 0);
        self.target_bytes += counted.target_bytes;
        let before = self.by_unit.insert(uid, c);
        debug_assert!(before.is_none(), "unit {uid} opened twice");
        Ok(())
    }

    /// Unit `uid` closes (its reads have all ended).
    pub(super) fn close(&mut self, uid: u32) {
        let Some(c) = self.by_unit.remove(&uid) else {
            debug_assert!(false, "unit {uid} closed without a controller");
            return;
        };
        let counted = self.counted(&c);
        debug_assert_eq!(
            counted.bytes_in_flight, 0,
            "unit {uid} closes with bytes in flight"
        );
        debug_assert!(self.target_bytes >= counted.target_bytes);
        self.target_bytes -= counted.target_bytes;
    }

    /// Runs `f` on unit `uid`'s controller and keeps the sums.
    pub(super) fn with<T>(
        &mut self,
        uid: u32,
        f: impl FnOnce(&mut InFlightController) -> T,
    ) -> Result<T, PlanError> {
        let planning = self.planning_enabled();
        let Some(c) = self.by_unit.get_mut(&uid) else {
            return Err(PlanError::Contract(format!(
                "unit {uid} has no bytes-in-flight controller (it is not open)"
            )));
        };
        let target = |c: &InFlightController| if planning { c.target_bytes() } else { 0 };
        let before = (c.bytes_in_flight(), target(c));
        let out = f(c);
        let after = (c.bytes_in_flight(), target(c));
        debug_assert!(self.bytes_in_flight >= before.0 && self.target_bytes >= before.1);
        self.bytes_in_flight = self.bytes_in_flight - before.0 + after.0;
        self.peak_bytes_in_flight = self.peak_bytes_in_flight.max(self.bytes_in_flight);
        self.target_bytes = self.target_bytes - before.1 + after.1;
        Ok(out)
    }

    /// Bytes in flight over every open unit.
    pub(super) fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    /// The largest [`Self::bytes_in_flight`] so far.
    pub(super) fn peak_bytes_in_flight(&self) -> u64 {
        self.peak_bytes_in_flight
    }

    /// The open units' targets summed (0 with planning off).
    pub(super) fn target_bytes(&self) -> u64 {
        self.target_bytes
    }

    /// The sums recomputed from every controller (for the debug invariants).
    pub(super) fn recomputed(&self) -> (u64, u64) {
        let mut sums = (0u64, 0u64);
        for c in self.by_unit.values() {
            let counted = self.counted(c);
            sums.0 += counted.bytes_in_flight;
            sums.1 += counted.target_bytes;
        }
        (sums.0, sums.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(min_bytes_in_flight: u64) -> ControllerConfig {
        ControllerConfig {
            min_bytes_in_flight,
            ..ControllerConfig::default()
        }
    }

    #[test]
    fn each_unit_counts_against_its_own_target_and_the_sums_follow() {
        let mut cs = Controllers::new(config(64 << 20)).unwrap();
        cs.open(0).unwrap();
        cs.open(1).unwrap();
        let one = cs.with(0, |c| c.target_bytes()).unwrap();
        assert!(one >= 64 << 20);
        assert_eq!(cs.target_bytes(), 2 * one, "two open files, two targets");
        let mut events = readahead::ProfileEvents::default();
        // Unit 0 fills its own target; unit 1 may still issue the same bytes.
        cs.with(0, |c| c.on_issue(0, 7, one, &mut events))
            .unwrap()
            .unwrap();
        cs.with(0, |c| c.on_start(0, 7)).unwrap().unwrap();
        assert!(!cs.with(0, |c| c.can_issue(1)).unwrap());
        assert!(cs.with(1, |c| c.can_issue(one)).unwrap());
        assert_eq!(cs.bytes_in_flight(), one);
        assert_eq!(cs.peak_bytes_in_flight(), one);
        assert_eq!(cs.recomputed(), (cs.bytes_in_flight(), cs.target_bytes()));
        assert!(cs.with(2, |_| ()).is_err(), "unit 2 is not open");
    }

    #[test]
    fn with_planning_off_no_target_is_counted() {
        let mut cs = Controllers::new(config(0)).unwrap();
        cs.open(3).unwrap();
        assert_eq!(cs.target_bytes(), 0);
        cs.close(3);
        assert_eq!(cs.recomputed(), (0, 0));
    }
}
