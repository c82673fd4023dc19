//! The read-ahead side of the Parquet read path: the per-file issue queue, the bytes-in-flight
//! controller fitted online, the IO pool, the memory budgets of both reader generations,
//! partial readiness of read tasks, and the ClickHouse profile events counted here.
//!
//! Sans-IO: nothing here reads a clock, spawns a thread or does IO; `now_ns` (virtual time in
//! nanoseconds, monotonic) is always a parameter. Everything is deterministic: no hash-map
//! iteration, no randomness. The planner crate composes these parts; see `docs/readpath.md`
//! sections 2 and 3 (R1, R4, R5, R6, R7) for the mechanisms.
//!
//! Components:
//! - [`estimator`]: [`FirstByteEstimator`], [`BandwidthEstimator`] (EWMA 0.2, priors 50 ms, 64 B/us).
//! - [`controller`]: [`InFlightController`] (target bytes in flight; R7 switch).
//! - [`issue_queue`]: [`IssueQueue`] (FIFO, admission, privileged subgroup, stalls).
//! - [`io_pool`]: [`io_pool_size`] (R6) and [`IoPool`] (slots + FIFO of waiting reads).
//! - [`memory`]: [`Memory`] (base stage budgets, or R4 lifetime pools), [`Charge`] tokens.
//! - [`readiness`]: [`TaskReadiness`] (R1, 1 MiB progress chunks).
//! - [`events`]: [`ProfileEvents`] with ClickHouse names.
//! - [`fetch_wait`]: [`FetchWait`] (`ParquetFetchWaitTimeMicroseconds`).
//!
//! How a planner drives the parts for one read (R5 + R7 + R1, redesign defaults):
//!
//! ```
//! use readahead::*;
//!
//! let mut events = ProfileEvents::new();
//! let mut controller = InFlightController::new(ControllerConfig::default())?;
//! let mut memory = Memory::new(MemorySettings { r4_memory_by_lifetime: true, ..MemorySettings::default() })?;
//! let mut pool = IoPool::new(controller.config().io_threads)?;
//! let mut queue = IssueQueue::new(0);
//!
//! // Plan a 3 MiB data-page read of row group 0 (ParquetPlannedReads counts it once issued).
//! queue.push(PlannedRead { read_id: 7, bytes: 3 << 20, class: MemoryClass::CompressedPages, row_group: 0, subgroup: 0 });
//! let context = AdmissionContext { running_tasks: 0, privileged: Some((0, 0)), demand: false };
//! let issued = queue.poll(0, &context, &mut controller, &mut memory, &mut events)?.expect("admitted");
//! // The IO pool gives it a thread: under R7 its bytes count from here.
//! assert_eq!(pool.submit(7), Slot::Started);
//! controller.on_start(0, 7)?;
//! // Two sub-ranges served from the task; R1 serves the first after the first 1 MiB.
//! let mut readiness = TaskReadiness::new(3 << 20, vec![SubRange { task_offset: 0, len: 1000 }, SubRange { task_offset: 2 << 20, len: 1 << 20 }], true)?;
//! controller.on_first_byte(30_000_000, 7)?;
//! controller.on_progress(31_000_000, 7, 1 << 20)?;
//! assert_eq!(readiness.on_progress(1 << 20, &mut events), 0..1);
//! controller.on_complete(33_000_000, 7, ReadSource::Store, &mut events)?;
//! assert_eq!(readiness.on_complete(), 1..2);
//! assert_eq!(pool.release(), None);
//! // The compressed bytes are freed once decoded.
//! memory.release(issued.charge)?;
//! assert_eq!(events.parquet_partial_reads_served, 1);
//! assert_eq!(events.parquet_read_tasks, 1);
//! # Ok::<(), ReadaheadError>(())
//! ```
// Casts that could truncate are checked (`limits::narrow`) or say why they cannot.
#![warn(clippy::cast_possible_truncation)]
// Tests build their fixtures with plain casts; the library target above is what is checked.
#![cfg_attr(test, allow(clippy::cast_possible_truncation))]

pub mod controller;
pub mod error;
pub mod estimator;
pub mod events;
pub mod fetch_wait;
pub mod io_pool;
pub mod issue_queue;
pub mod memory;
pub mod readiness;

pub use controller::{
    CompletedRead, ControllerConfig, ControllerStatus, InFlightController, ReadSource,
};
pub use error::ReadaheadError;
pub use estimator::{BandwidthEstimator, FirstByteEstimator};
pub use events::{ProfileEvent, ProfileEvents};
pub use fetch_wait::FetchWait;
pub use io_pool::{io_pool_size, IoPool, IoPoolSettings, Slot};
pub use issue_queue::{AdmissionContext, Blocked, IssueQueue, Issued, PlannedRead};
pub use memory::{
    Admission, Budget, BudgetUsage, Charge, ChargeRequest, Memory, MemoryClass, MemorySettings,
    Pool, Refusal, Stage,
};
pub use readiness::{SubRange, TaskReadiness, PROGRESS_CHUNK_BYTES};
