//! Runs a sweep has already made, reused where a later point would run the same thing again.
//!
//! A run is deterministic: it depends on the resolved scenario, the arm, the replication and
//! the arm's strategy. When every axis is a setting, points differ only in the arms'
//! strategies (settings feed nothing else), and a setting that does not apply to an arm (its
//! mechanism off, or replaced by one that is on) changes nothing that arm runs
//! (`sim/tests/inert_settings.rs` checks every such setting). So the key is the replication
//! and the arm's strategy with the axes' inert settings put back to the preset's defaults: the
//! base arm of a sweep over the redesign's knobs runs once, not at every point, and two arms
//! that an axis makes equal run once per point.
//! With an axis that is a scenario path (the store, the table, a cache), nothing is reused.

use super::{setting_of, Axis};
use crate::report::RunMetrics;
use scenario::Resolved;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// What a reusable run is known by: the replication and the normalized strategy. Not the arm:
/// arms run on common random numbers (the seed is the scenario's and the query's, never the
/// arm's), so two arms with equal strategies run alike.
pub(super) type Key = (u32, String);

pub(super) struct RunMemo {
    /// Whether every axis is a setting (else nothing is reused).
    enabled: bool,
    runs: Mutex<BTreeMap<Key, RunMetrics>>,
}

impl RunMemo {
    pub(super) fn new(axes: &[Axis]) -> RunMemo {
        RunMemo {
            enabled: axes.iter().all(|a| setting_of(&a.name).is_some()),
            runs: Mutex::new(BTreeMap::new()),
        }
    }

    /// The key of arm `arm`'s replication `rep` at a point resolved as `r`, if reusable.
    pub(super) fn key(&self, r: &Resolved, arm: usize, rep: u32, axes: &[Axis]) -> Option<Key> {
        if !self.enabled {
            return None;
        }
        let a = r.arms.get(arm)?;
        let preset = planner::Strategy::preset(&a.strategy_name).ok()?;
        let mut strategy = a.strategy.clone();
        for axis in axes {
            let setting = setting_of(&axis.name)?;
            if setting.honoured_by(&strategy) && !setting.applies_to(&strategy) {
                strategy
                    .set_value(setting.name, setting.get(&preset))
                    .ok()?;
            }
        }
        Some((rep, format!("{strategy:?}")))
    }

    pub(super) fn get(&self, key: &Key) -> Option<RunMetrics> {
        self.runs.lock().ok()?.get(key).cloned()
    }

    pub(super) fn put(&self, key: Key, metrics: &RunMetrics) {
        if let Ok(mut runs) = self.runs.lock() {
            runs.entry(key).or_insert_with(|| metrics.clone());
        }
    }
}
