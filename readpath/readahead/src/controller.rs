//! The bytes-in-flight controller (R5, R7), shaped like quinn-proto's congestion controller:
//! events in with `now` as a parameter, the admission answer (`can_issue`, `target_bytes`) out.
//!
//! Each read the reader hands to an IO thread is tracked from issue to completion under the
//! caller's `read_id`. Bytes "in flight" are a read's whole length until it ends (completed or
//! failed): with R7 only while the read runs on an IO thread (`on_start`), without R7 from the
//! moment it is issued. Progress does not shrink them: `Prefetcher.cpp` adds `task->length`
//! when a task is scheduled (and, for the running count, when it starts) and subtracts it only
//! when `runTask` ends (until 2026-12-07 received bytes left the count as they arrived, which
//! admitted more read-ahead than ClickHouse does).

use limits::saturating_u64;
use serde::{Deserialize, Serialize};

use crate::error::ReadaheadError;
use crate::estimator::{BandwidthEstimator, FirstByteEstimator};
use crate::events::{ProfileEvent, ProfileEvents};

/// Default of `input_format_parquet_min_bytes_in_flight`: 64 MiB.
pub const DEFAULT_MIN_BYTES_IN_FLIGHT: u64 = 64 << 20;

/// The target never drops below this many read tasks' worth of bytes.
pub const READ_TASKS_FLOOR: u64 = 4;

/// The fitted target keeps this many round trips of every IO thread busy.
pub const ROUND_TRIPS_AHEAD: f64 = 2.0;

/// The fitted bandwidth x round trip, per IO thread, is clamped to this before it is multiplied
/// by the threads: `Prefetcher::targetBytesInFlight`'s `max_product_bytes` ("1 GiB, per-stream
/// ceiling"), so that one absurd bandwidth sample cannot blow the target up.
pub const MAX_PRODUCT_BYTES_PER_STREAM: f64 = (1u64 << 30) as f64;

/// Where a read's bytes came from; reads served by the page cache are excluded from the fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ReadSource {
    /// The object store (or the local file).
    Store,
    /// The in-memory page cache: its timings say nothing about the store.
    PageCache,
    /// The local filesystem cache of remote objects.
    FilesystemCache,
}

/// Settings of the controller (resolved values, not text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControllerConfig {
    /// `input_format_parquet_min_bytes_in_flight`: the floor of the target; 0 disables planning
    /// (the planner then keeps the base reader's behaviour).
    pub min_bytes_in_flight: u64,
    /// `input_format_parquet_bytes_per_read_task`, resolved (never 0 here): the target is never
    /// below [`READ_TASKS_FLOOR`] of these.
    pub bytes_per_read_task: u64,
    /// Size of the IO pool the reads run on (see [`crate::io_pool::io_pool_size`]).
    pub io_threads: u32,
    /// `false` = R7 (only running reads count against the target); `true` = queued reads count
    /// too (the ablation without R7).
    pub count_queued_bytes: bool,
}

impl Default for ControllerConfig {
    /// The redesign on remote storage: 64 MiB floor, 16 MiB tasks, 16 IO threads, R7 on.
    fn default() -> Self {
        ControllerConfig {
            min_bytes_in_flight: DEFAULT_MIN_BYTES_IN_FLIGHT,
            bytes_per_read_task: 16 << 20,
            io_threads: 16,
            count_queued_bytes: false,
        }
    }
}

impl ControllerConfig {
    /// Checks the settings: `bytes_per_read_task` and `io_threads` must be at least 1.
    pub fn validate(&self) -> Result<(), ReadaheadError> {
        if self.bytes_per_read_task == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "ControllerConfig::input_format_parquet_bytes_per_read_task",
                what: "room for a read task (resolve 0 = derive before building the controller)",
            });
        }
        if self.io_threads == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "ControllerConfig::io_threads",
                what: "IO thread",
            });
        }
        Ok(())
    }
}

/// One tracked read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TrackedRead {
    bytes: u64,
    issued_ns: u64,
    started_ns: Option<u64>,
    /// The first progress report before the end (`publishBytesReady`'s first call): where the
    /// Prefetcher's fit puts the first byte.
    first_progress_ns: Option<u64>,
}

/// What the controller measured for one completed read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletedRead {
    /// Bytes of the read.
    pub bytes: u64,
    /// Time waiting for an IO thread (issue to start).
    pub queued_ns: u64,
    /// Start to the first progress report (the Prefetcher's "first byte"), or start to end when
    /// no report came before the end.
    pub first_byte_ns: u64,
    /// The first progress report to the last byte (0 without a report before the end).
    pub transfer_ns: u64,
    /// Whether the sample fed the estimators (not for page-cache reads).
    pub fed_estimators: bool,
}

/// Cheap snapshot of the controller for status reports and timelines.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ControllerStatus {
    /// Bytes counting against the target now.
    pub bytes_in_flight: u64,
    /// The target now; 0 with planning off (nothing is held to a target).
    pub target_bytes_in_flight: u64,
    /// Largest `bytes_in_flight` seen.
    pub peak_bytes_in_flight: u64,
    /// Reads started and not completed.
    pub reads_running: u64,
    /// Reads issued and not yet started.
    pub reads_queued: u64,
    /// Current first-byte estimate (ns).
    pub first_byte_estimate_ns: f64,
    /// Current bandwidth estimate (bytes/us).
    pub bandwidth_estimate_bytes_per_us: f64,
}

/// The bytes-in-flight controller of one reader.
#[derive(Debug, Clone)]
pub struct InFlightController {
    config: ControllerConfig,
    first_byte: FirstByteEstimator,
    bandwidth: BandwidthEstimator,
    /// A hash map: looked up on every event, never walked (`rustc_hash` has no random state).
    reads: rustc_hash::FxHashMap<u64, TrackedRead>,
    bytes_in_flight: u64,
    peak_bytes_in_flight: u64,
    reads_running: u64,
    /// [`Self::target_bytes`], kept: it changes only when the estimators learn, and every
    /// poll of a planning queue asks for it (computing it was a tenth of a poll).
    target_bytes: u64,
}

impl InFlightController {
    /// A controller starting from the priors of [`crate::estimator`].
    pub fn new(config: ControllerConfig) -> Result<InFlightController, ReadaheadError> {
        InFlightController::with_estimators(
            config,
            FirstByteEstimator::new(),
            BandwidthEstimator::new(),
        )
    }

    /// A controller starting from given estimators (e.g. other priors).
    pub fn with_estimators(
        config: ControllerConfig,
        first_byte: FirstByteEstimator,
        bandwidth: BandwidthEstimator,
    ) -> Result<InFlightController, ReadaheadError> {
        config.validate()?;
        let mut c = InFlightController {
            config,
            first_byte,
            bandwidth,
            reads: rustc_hash::FxHashMap::default(),
            bytes_in_flight: 0,
            peak_bytes_in_flight: 0,
            reads_running: 0,
            target_bytes: 0,
        };
        c.target_bytes = c.fitted_target_bytes();
        Ok(c)
    }

    /// The settings.
    pub fn config(&self) -> &ControllerConfig {
        &self.config
    }

    /// `false` when `min_bytes_in_flight` is 0: the planner keeps base behaviour and does not
    /// ask [`can_issue`](Self::can_issue) (which then always answers yes).
    pub fn planning_enabled(&self) -> bool {
        self.config.min_bytes_in_flight > 0
    }

    /// `max(min_bytes_in_flight, min(bandwidth x first_byte_time, 1 GiB) x io_threads x 2)`,
    /// never below `4 x bytes_per_read_task`.
    pub fn target_bytes(&self) -> u64 {
        debug_assert_eq!(self.target_bytes, self.fitted_target_bytes());
        self.target_bytes
    }

    /// [`Self::target_bytes`] from the estimators as they stand.
    fn fitted_target_bytes(&self) -> u64 {
        let product = self.bandwidth.bytes_per_ns() * self.first_byte.get_ns();
        // `f64::min` takes the clamp for a NaN product as well.
        let fitted = product.min(MAX_PRODUCT_BYTES_PER_STREAM)
            * f64::from(self.config.io_threads)
            * ROUND_TRIPS_AHEAD;
        // Saturating (NaN -> 0), so a huge estimate cannot wrap.
        let fitted = saturating_u64(fitted);
        let floor = self
            .config
            .bytes_per_read_task
            .saturating_mul(READ_TASKS_FLOOR);
        fitted.max(self.config.min_bytes_in_flight).max(floor)
    }

    /// Whether a read of `bytes` may be issued now: it fits under the target (`pumpIssueQueue`
    /// blocks on `bytesInFlight() + bytes > target`, with no exception for an idle reader: a
    /// read larger than the target goes when it is privileged or demanded; until 2026-12-07 an
    /// idle controller admitted any read, which changed no shipped scenario). Always `true` when
    /// planning is disabled.
    pub fn can_issue(&self, bytes: u64) -> bool {
        !self.planning_enabled()
            || self.bytes_in_flight.saturating_add(bytes) <= self.target_bytes()
    }

    /// Bytes counting against the target now.
    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    /// Largest `bytes_in_flight` seen so far.
    pub fn peak_bytes_in_flight(&self) -> u64 {
        self.peak_bytes_in_flight
    }

    /// Reads started on an IO thread and not completed.
    pub fn reads_running(&self) -> u64 {
        self.reads_running
    }

    /// Reads issued and waiting for an IO thread.
    pub fn reads_queued(&self) -> u64 {
        self.reads.len() as u64 - self.reads_running
    }

    /// The first-byte estimator.
    pub fn first_byte_estimator(&self) -> &FirstByteEstimator {
        &self.first_byte
    }

    /// The bandwidth estimator.
    pub fn bandwidth_estimator(&self) -> &BandwidthEstimator {
        &self.bandwidth
    }

    /// A snapshot for reports.
    pub fn status(&self) -> ControllerStatus {
        ControllerStatus {
            bytes_in_flight: self.bytes_in_flight,
            // No target when nothing issues against one (planning off: the base reader, floor
            // 0): a timeline drew the floor's 64 MiB as the base's target.
            target_bytes_in_flight: if self.planning_enabled() {
                self.target_bytes()
            } else {
                0
            },
            peak_bytes_in_flight: self.peak_bytes_in_flight,
            reads_running: self.reads_running,
            reads_queued: self.reads_queued(),
            first_byte_estimate_ns: self.first_byte.get_ns(),
            bandwidth_estimate_bytes_per_us: self.bandwidth.bytes_per_us(),
        }
    }

    fn counts(&self, read: &TrackedRead) -> bool {
        read.started_ns.is_some() || self.config.count_queued_bytes
    }

    /// The bytes a read counts in flight while it counts: all of them, until it ends.
    fn outstanding(read: &TrackedRead) -> u64 {
        read.bytes
    }

    fn add_in_flight(&mut self, bytes: u64) {
        self.bytes_in_flight += bytes;
        self.peak_bytes_in_flight = self.peak_bytes_in_flight.max(self.bytes_in_flight);
    }

    fn tracked(&self, read_id: u64) -> Result<TrackedRead, ReadaheadError> {
        self.reads
            .get(&read_id)
            .copied()
            .ok_or(ReadaheadError::UnknownRead { read_id })
    }

    /// A read task of `bytes` was created and handed to the IO pool (queued or started).
    /// Counts `ParquetReadTasks` and `ParquetReadTaskBytes`.
    pub fn on_issue(
        &mut self,
        now_ns: u64,
        read_id: u64,
        bytes: u64,
        events: &mut ProfileEvents,
    ) -> Result<(), ReadaheadError> {
        if self.reads.contains_key(&read_id) {
            return Err(ReadaheadError::DuplicateRead { read_id });
        }
        let read = TrackedRead {
            bytes,
            issued_ns: now_ns,
            started_ns: None,
            first_progress_ns: None,
        };
        if self.counts(&read) {
            self.add_in_flight(bytes);
        }
        self.reads.insert(read_id, read);
        events.add(ProfileEvent::ParquetReadTasks, 1);
        events.add(ProfileEvent::ParquetReadTaskBytes, bytes);
        Ok(())
    }

    /// The read got an IO thread (or a decode thread, for an inline read) and its request went
    /// out. Under R7 its bytes start counting against the target now.
    pub fn on_start(&mut self, now_ns: u64, read_id: u64) -> Result<(), ReadaheadError> {
        let mut read = self.tracked(read_id)?;
        if read.started_ns.is_some() {
            return Err(ReadaheadError::OutOfOrder {
                read_id,
                event: "start",
                why: "the read already started",
            });
        }
        let counted_before = self.counts(&read);
        read.started_ns = Some(now_ns.max(read.issued_ns));
        if !counted_before {
            self.add_in_flight(Self::outstanding(&read));
        }
        self.reads_running += 1;
        self.reads.insert(read_id, read);
        Ok(())
    }

    /// The first byte of the read arrived. Checked for order only: the Prefetcher's fit does
    /// not see the transport's first byte, only its progress reports ([`Self::on_progress`]).
    pub fn on_first_byte(&mut self, _now_ns: u64, read_id: u64) -> Result<(), ReadaheadError> {
        if self.tracked(read_id)?.started_ns.is_none() {
            return Err(ReadaheadError::OutOfOrder {
                read_id,
                event: "first byte",
                why: "the read has not started",
            });
        }
        Ok(())
    }

    /// `bytes_ready` bytes of the read (cumulative, in offset order) have arrived. The read still
    /// counts whole in flight; the first report before the end is the fit's first byte.
    pub fn on_progress(
        &mut self,
        now_ns: u64,
        read_id: u64,
        bytes_ready: u64,
    ) -> Result<(), ReadaheadError> {
        let mut read = self.tracked(read_id)?;
        if read.started_ns.is_none() {
            return Err(ReadaheadError::OutOfOrder {
                read_id,
                event: "progress",
                why: "the read has not started",
            });
        }
        let ready = bytes_ready.min(read.bytes);
        if read.first_progress_ns.is_none() && ready < read.bytes {
            // `publishBytesReady`'s first call before the end: the fit's "first byte".
            read.first_progress_ns = Some(now_ns);
        }
        self.reads.insert(read_id, read);
        Ok(())
    }

    /// The read finished. Feeds the estimators and counts `ParquetReadFirstByteMicroseconds` and
    /// `ParquetReadTransferMicroseconds` (neither for bytes from the page cache), as
    /// `Prefetcher::updateReadStats` does: the first byte is the first progress report before
    /// the end, and a read without one (one progress chunk or less, a local `pread`) samples its
    /// whole time as first byte and no bandwidth. A read completed without a start event is
    /// taken as started now (a synchronous read).
    pub fn on_complete(
        &mut self,
        now_ns: u64,
        read_id: u64,
        source: ReadSource,
        events: &mut ProfileEvents,
    ) -> Result<CompletedRead, ReadaheadError> {
        let read = self.forget(read_id)?;
        let started_ns = read.started_ns.unwrap_or(now_ns).max(read.issued_ns);
        let now_ns = now_ns.max(started_ns);
        // No report before the end (a local pread, a one-chunk body): the whole time is the
        // round trip ("rtt_sample_us = transport_progress ? first_byte_us : total_us").
        let first_byte_at = read
            .first_progress_ns
            .unwrap_or(now_ns)
            .clamp(started_ns, now_ns);
        let first_byte_ns = first_byte_at - started_ns;
        let transfer_ns = now_ns - first_byte_at;
        let fed_estimators = source != ReadSource::PageCache;
        // Both counted inside `updateReadStats`, which a page-cache read does not reach.
        if fed_estimators {
            self.first_byte.update(first_byte_ns);
            self.bandwidth.update(read.bytes, transfer_ns);
            self.target_bytes = self.fitted_target_bytes();
            events.add(
                ProfileEvent::ParquetReadFirstByteMicroseconds,
                first_byte_ns / 1_000,
            );
            events.add(
                ProfileEvent::ParquetReadTransferMicroseconds,
                transfer_ns / 1_000,
            );
        }
        Ok(CompletedRead {
            bytes: read.bytes,
            queued_ns: started_ns - read.issued_ns,
            first_byte_ns,
            transfer_ns,
            fed_estimators,
        })
    }

    /// The read failed for good (the driver already retried): it leaves the in-flight count
    /// and feeds nothing.
    pub fn on_failed(&mut self, _now_ns: u64, read_id: u64) -> Result<(), ReadaheadError> {
        self.forget(read_id).map(|_| ())
    }

    fn forget(&mut self, read_id: u64) -> Result<TrackedRead, ReadaheadError> {
        let read = self
            .reads
            .remove(&read_id)
            .ok_or(ReadaheadError::UnknownRead { read_id })?;
        if self.counts(&read) {
            self.bytes_in_flight -= Self::outstanding(&read);
        }
        if read.started_ns.is_some() {
            self.reads_running -= 1;
        }
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const MIB: u64 = 1 << 20;

    fn config(min_bytes_in_flight: u64, count_queued_bytes: bool) -> ControllerConfig {
        ControllerConfig {
            min_bytes_in_flight,
            bytes_per_read_task: 16 * MIB,
            io_threads: 16,
            count_queued_bytes,
        }
    }

    #[test]
    fn prior_target_is_bandwidth_times_first_byte_times_threads_times_two() {
        let controller = InFlightController::new(config(MIB, false)).unwrap();
        // 64 B/us x 50 ms = 3.2 MB per thread, x 16 threads x 2 = 102.4 MB.
        assert_eq!(controller.target_bytes(), 102_400_000);
    }

    #[test]
    fn floors_apply() {
        let mut c = config(500 * MIB, false);
        assert_eq!(
            InFlightController::new(c).unwrap().target_bytes(),
            500 * MIB
        );
        c.min_bytes_in_flight = 1;
        c.io_threads = 1; // fitted 6.4 MB, below 4 x 16 MiB
        assert_eq!(InFlightController::new(c).unwrap().target_bytes(), 64 * MIB);
    }

    #[test]
    fn zero_min_disables_planning() {
        let mut controller = InFlightController::new(config(0, false)).unwrap();
        assert!(!controller.planning_enabled());
        let mut events = ProfileEvents::new();
        controller.on_issue(0, 1, 10 << 30, &mut events).unwrap();
        controller.on_start(0, 1).unwrap();
        assert!(controller.can_issue(10 << 30));
        // Nothing is held to a target, so none is reported (a timeline drew the floor).
        assert_eq!(controller.status().target_bytes_in_flight, 0);
        let planned = InFlightController::new(config(1, false)).unwrap();
        assert!(planned.planning_enabled());
        assert_eq!(
            planned.status().target_bytes_in_flight,
            planned.target_bytes()
        );
        assert!(planned.status().target_bytes_in_flight > 0);
    }

    #[test]
    fn bad_config_is_an_error() {
        let mut c = config(MIB, false);
        c.io_threads = 0;
        assert!(matches!(
            InFlightController::new(c),
            Err(ReadaheadError::ZeroSetting { .. })
        ));
        let mut c = config(MIB, false);
        c.bytes_per_read_task = 0;
        assert!(InFlightController::new(c).is_err());
    }

    #[test]
    fn r7_counts_only_running_reads() {
        let mut events = ProfileEvents::new();
        let mut r7 = InFlightController::new(config(MIB, false)).unwrap();
        let mut no_r7 = InFlightController::new(config(MIB, true)).unwrap();
        for c in [&mut r7, &mut no_r7] {
            c.on_issue(0, 7, 3 * MIB, &mut events).unwrap();
        }
        assert_eq!(r7.bytes_in_flight(), 0);
        assert_eq!(r7.reads_queued(), 1);
        assert_eq!(no_r7.bytes_in_flight(), 3 * MIB);
        for c in [&mut r7, &mut no_r7] {
            c.on_start(5, 7).unwrap();
            assert_eq!(c.bytes_in_flight(), 3 * MIB);
            assert_eq!(c.reads_running(), 1);
            c.on_first_byte(10, 7).unwrap();
            c.on_progress(11, 7, MIB).unwrap();
            assert_eq!(c.bytes_in_flight(), 3 * MIB, "a running read counts whole");
            c.on_progress(12, 7, MIB / 2).unwrap(); // stale: ignored
            assert_eq!(c.bytes_in_flight(), 3 * MIB);
        }
        assert_eq!(events.parquet_read_tasks, 2);
        assert_eq!(events.parquet_read_task_bytes, 6 * MIB);
    }

    #[test]
    fn completion_feeds_estimators_and_events() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        c.on_issue(1_000, 1, 1_000_000, &mut events).unwrap();
        c.on_start(3_000, 1).unwrap();
        c.on_first_byte(10_003_000, 1).unwrap(); // not what the fit sees
        c.on_progress(20_003_000, 1, 250_000).unwrap(); // first report: 20 ms
        let done = c
            .on_complete(21_003_000, 1, ReadSource::Store, &mut events)
            .unwrap(); // 1 MB over the 1 ms after the first report
        assert_eq!(done.queued_ns, 2_000);
        assert_eq!(done.first_byte_ns, 20_000_000);
        assert_eq!(done.transfer_ns, 1_000_000);
        assert!(done.fed_estimators);
        assert_eq!(c.first_byte_estimator().samples(), 1);
        assert!((c.first_byte_estimator().get_ns() - 44_000_000.0).abs() < 1e-3);
        assert!(
            (c.bandwidth_estimator().bytes_per_us() - (64.0 + 0.2 * (1000.0 - 64.0))).abs() < 1e-9
        );
        assert_eq!(events.parquet_read_first_byte_microseconds, 20_000);
        assert_eq!(events.parquet_read_transfer_microseconds, 1_000);
        assert_eq!(c.bytes_in_flight(), 0);
        assert_eq!(c.reads_running(), 0);
        assert_eq!(
            c.on_complete(22_000_000, 1, ReadSource::Store, &mut events),
            Err(ReadaheadError::UnknownRead { read_id: 1 })
        );
    }

    #[test]
    fn a_read_without_a_report_before_its_end_samples_its_whole_time_and_no_bandwidth() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        let bw_before = c.bandwidth_estimator().bytes_per_us();
        c.on_issue(0, 1, 500_000, &mut events).unwrap();
        c.on_start(0, 1).unwrap();
        c.on_first_byte(20_000_000, 1).unwrap();
        c.on_progress(30_000_000, 1, 500_000).unwrap(); // the end itself: not a report before it
        let done = c
            .on_complete(30_000_000, 1, ReadSource::Store, &mut events)
            .unwrap();
        assert_eq!((done.first_byte_ns, done.transfer_ns), (30_000_000, 0));
        assert_eq!(c.first_byte_estimator().samples(), 1);
        assert_eq!(c.bandwidth_estimator().samples(), 0);
        assert_eq!(c.bandwidth_estimator().bytes_per_us(), bw_before);
        assert_eq!(events.parquet_read_first_byte_microseconds, 30_000);
    }

    #[test]
    fn page_cache_reads_are_excluded_from_the_fit() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        let before = c.target_bytes();
        c.on_issue(0, 1, MIB, &mut events).unwrap();
        c.on_start(0, 1).unwrap();
        c.on_first_byte(1_000, 1).unwrap();
        let done = c
            .on_complete(2_000_000, 1, ReadSource::PageCache, &mut events)
            .unwrap();
        assert!(!done.fed_estimators);
        assert_eq!(c.first_byte_estimator().samples(), 0);
        assert_eq!(c.target_bytes(), before);
        // Nor its profile events: `updateReadStats` counts them, and is not reached.
        assert_eq!(events.parquet_read_first_byte_microseconds, 0);
        assert_eq!(events.parquet_read_transfer_microseconds, 0);
    }

    #[test]
    fn one_absurd_bandwidth_sample_is_clamped_per_stream() {
        // A 1-byte-per-ns stream whose first byte takes 100 s fits 100 GB a stream; the code
        // clamps the product to 1 GiB before multiplying by the threads.
        let mut events = ProfileEvents::new();
        let cfg = config(MIB, false);
        let threads = u64::from(cfg.io_threads);
        let mut c = InFlightController::new(cfg).unwrap();
        for id in 0..40 {
            let t = id * 1_000_000_000_000;
            c.on_issue(t, id, 64 * MIB, &mut events).unwrap();
            c.on_start(t, id).unwrap();
            c.on_progress(t + 100_000_000_000, id, 1).unwrap(); // first byte after 100 s
            c.on_complete(
                t + 100_000_000_000 + 64 * MIB,
                id,
                ReadSource::Store,
                &mut events,
            )
            .unwrap(); // then 1 B/ns
        }
        assert_eq!(c.target_bytes(), (1 << 30) * threads * 2);
    }

    #[test]
    fn target_grows_with_slower_first_bytes() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        let before = c.target_bytes();
        for id in 0..20 {
            let t = id * 1_000_000_000;
            c.on_issue(t, id, 4 * MIB, &mut events).unwrap();
            c.on_start(t, id).unwrap();
            c.on_first_byte(t + 200_000_000, id).unwrap(); // 200 ms
            c.on_complete(
                t + 200_000_000 + 65_536_000,
                id,
                ReadSource::Store,
                &mut events,
            )
            .unwrap(); // 64 B/us
        }
        assert!(
            c.target_bytes() > 3 * before,
            "{} vs {}",
            c.target_bytes(),
            before
        );
    }

    #[test]
    fn fits_the_measured_store_to_about_bandwidth_times_round_trip() {
        // `docs/findings.md`: ~30 ms to first byte, a 4.3 MB GET in 65-86 ms (so ~45 ms of
        // transfer); "bandwidth x round trip, about 100 MB per node" is what must be in flight.
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(64 * MIB, false)).unwrap();
        for id in 0..50 {
            let t = id * 1_000_000_000;
            c.on_issue(t, id, 4_300_000, &mut events).unwrap();
            c.on_start(t, id).unwrap();
            c.on_first_byte(t + 30_000_000, id).unwrap();
            // The first progress report, one 1 MiB chunk in (about 11 ms at 95.6 B/us).
            c.on_progress(t + 41_000_000, id, MIB).unwrap();
            c.on_complete(t + 75_000_000, id, ReadSource::Store, &mut events)
                .unwrap();
        }
        let target = c.target_bytes();
        // As `Prefetcher::updateReadStats` fits it: 41 ms to the first report, and 4.3 MB over
        // the 34 ms after it (126.5 B/us): 126.5 B/us x 41 ms x 16 threads x 2 = 166 MB, where
        // the transport's own first byte and rate would give 91.7 MB.
        assert!(
            (155_000_000..175_000_000).contains(&target),
            "target {target}"
        );
    }

    #[test]
    fn can_issue_respects_the_target_even_when_idle() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        let target = c.target_bytes();
        assert!(
            !c.can_issue(target + 1),
            "an idle controller admits only what fits (the pump has no idle exception)"
        );
        assert!(c.can_issue(target));
        c.on_issue(0, 1, target - 10, &mut events).unwrap();
        c.on_start(0, 1).unwrap();
        assert!(c.can_issue(10));
        assert!(!c.can_issue(11));
    }

    #[test]
    fn events_out_of_order_are_errors() {
        let mut events = ProfileEvents::new();
        let mut c = InFlightController::new(config(MIB, false)).unwrap();
        assert!(c.on_start(0, 9).is_err());
        c.on_issue(0, 9, 100, &mut events).unwrap();
        assert_eq!(
            c.on_issue(0, 9, 100, &mut events),
            Err(ReadaheadError::DuplicateRead { read_id: 9 })
        );
        assert!(matches!(
            c.on_first_byte(1, 9),
            Err(ReadaheadError::OutOfOrder { .. })
        ));
        assert!(matches!(
            c.on_progress(1, 9, 10),
            Err(ReadaheadError::OutOfOrder { .. })
        ));
        c.on_start(1, 9).unwrap();
        assert!(matches!(
            c.on_start(2, 9),
            Err(ReadaheadError::OutOfOrder { .. })
        ));
        c.on_failed(3, 9).unwrap();
        assert_eq!(c.bytes_in_flight(), 0);
        assert_eq!(c.reads_running(), 0);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Issue(u64),
        Start(usize),
        Progress(usize, u64),
        Complete(usize, bool),
        Fail(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1u64..64 * MIB).prop_map(Op::Issue),
            any::<usize>().prop_map(Op::Start),
            (any::<usize>(), 0u64..64 * MIB).prop_map(|(i, b)| Op::Progress(i, b)),
            (any::<usize>(), any::<bool>()).prop_map(|(i, p)| Op::Complete(i, p)),
            any::<usize>().prop_map(Op::Fail),
        ]
    }

    proptest! {
        /// Bytes in flight always equal the whole length of the reads that count (running, or
        /// also queued without R7), whatever progress they made; the target never drops below
        /// its floors.
        #[test]
        fn in_flight_matches_a_recount(
            ops in proptest::collection::vec((op(), 0u64..50_000_000), 1..200),
            count_queued in any::<bool>(),
            min_mib in 0u64..256,
        ) {
            let cfg = ControllerConfig { min_bytes_in_flight: min_mib * MIB, bytes_per_read_task: 4 * MIB, io_threads: 4, count_queued_bytes: count_queued };
            let mut c = InFlightController::new(cfg).unwrap();
            let mut events = ProfileEvents::new();
            // model: id -> (bytes, started, ready)
            let mut model: BTreeMap<u64, (u64, bool, u64)> = BTreeMap::new();
            let mut now = 0u64;
            let mut next_id = 0u64;
            for (op, dt) in ops {
                now += dt;
                let ids: Vec<u64> = model.keys().copied().collect();
                let pick = |i: usize| ids.get(i % ids.len().max(1)).copied();
                match op {
                    Op::Issue(bytes) => {
                        c.on_issue(now, next_id, bytes, &mut events).unwrap();
                        model.insert(next_id, (bytes, false, 0));
                        next_id += 1;
                    }
                    Op::Start(i) => if let Some(id) = pick(i) {
                        let entry = model.get_mut(&id).unwrap();
                        prop_assert_eq!(c.on_start(now, id).is_ok(), !entry.1);
                        entry.1 = true;
                    },
                    Op::Progress(i, b) => if let Some(id) = pick(i) {
                        let entry = model.get_mut(&id).unwrap();
                        prop_assert_eq!(c.on_progress(now, id, b).is_ok(), entry.1);
                        if entry.1 { entry.2 = entry.2.max(b.min(entry.0)); }
                    },
                    Op::Complete(i, page_cache) => if let Some(id) = pick(i) {
                        let source = if page_cache { ReadSource::PageCache } else { ReadSource::Store };
                        c.on_complete(now, id, source, &mut events).unwrap();
                        model.remove(&id);
                    },
                    Op::Fail(i) => if let Some(id) = pick(i) {
                        c.on_failed(now, id).unwrap();
                        model.remove(&id);
                    },
                }
                let expected: u64 = model.values().filter(|(_, started, _)| *started || count_queued).map(|(b, _, _)| b).sum();
                prop_assert_eq!(c.bytes_in_flight(), expected);
                prop_assert!(c.peak_bytes_in_flight() >= c.bytes_in_flight());
                prop_assert_eq!(c.reads_running(), model.values().filter(|e| e.1).count() as u64);
                prop_assert!(c.target_bytes() >= (min_mib * MIB).max(16 * MIB));
            }
            prop_assert_eq!(events.parquet_read_tasks, next_id);
        }
    }
}
