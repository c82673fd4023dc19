//! The query-level reader: every file of one query on one node, spread over `max_threads`
//! streams, with all client-side scheduling (IO pool, decode threads, memory, issue queues,
//! bytes-in-flight controller). Sans-IO, in the style of quinn-proto (STYLE.md).
//!
//! # Contract
//!
//! Methods fall in four groups: getters (`&self`: [`Reader::status`], [`Reader::output`],
//! [`Reader::profile_events`], [`Reader::is_finished`], [`Reader::error`],
//! [`Reader::poll_timeout`]), events in ([`Reader::handle`], [`Reader::handle_timeout`]),
//! and work out ([`Reader::poll_action`]).
//!
//! **Polling order.** After building the reader and after every `handle` or
//! `handle_timeout`, the driver MUST call `poll_action` until it returns `None`, and carry out
//! every action at once (start the read, run the decode, hand over the chunk). Then it jumps
//! to `min(poll_timeout(), next event of its world)`, feeds every event of that instant with
//! `handle`, and polls again. When `is_finished()` is true the query is done.
//!
//! **Monotonic time.** Every `now_ns` given MUST be at least the largest `now_ns` given
//! before (virtual nanoseconds; the reader never reads a clock). A smaller one is a broken
//! contract: the reader stops with a sticky [`PlanError::Contract`].
//!
//! **Sticky errors.** After an error (a failed read, a broken contract) every call does
//! nothing and `poll_action` returns `None`; `error()` says why.
//!
//! # How it works
//!
//! Each file (or bucket of row groups) becomes a *unit* with a [`crate::plan::FilePlan`]:
//! steps (bloom header, bloom blocks, dictionary, indexes, PREWHERE pages, main pages) with
//! dependencies. Two issue disciplines run the steps:
//!
//! - *coupled* (`clickhouse-base`, peers): a cursor walks a unit's steps in order and starts
//!   the next one only when its dependencies finished, memory admits it, it lies within the
//!   row-group window and (base) every earlier step's bytes arrived, so the reads of a file
//!   form one chain: about one GET in flight per open file. Base coalescing is lazy over the
//!   whole file's registered ranges; a read that finds the IO pool full runs inline on a free
//!   decode thread.
//! - *planned* (R5): all index steps start at init into the unit's issue queue, page steps as
//!   soon as their row group's indexes arrived; queues issue while bytes in flight stay under
//!   the controller's target and memory admits, the current subgroup of the first incomplete
//!   row group always admitted.
//!
//! Costs are O(log n) per event (B-tree maps keyed by id); a unit's plan is built when it is
//! opened and dropped when it is done, so memory follows the open files, not the query.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use coalescer::{CoalescePolicy, LazyCoalescer, NeededRange, ReadTask};
use layout::{ByteRange, FileIndex, Table};
use readahead::{
    AdmissionContext, Admission, Charge, ChargeRequest, InFlightController, IoPool, IssueQueue, Memory,
    MemoryClass, PlannedRead, ProfileEvent, ProfileEvents, Slot, SubRange, TaskReadiness,
};

use crate::error::PlanError;
use crate::plan::{plan_file, FilePlan, PlanInput, StepKind};
use crate::query::QuerySpec;
use crate::strategy::{Family, FooterRead, Strategy};
use crate::types::{
    Action, CacheView, Chunk, ChunkId, DecodeId, DecodeRequest, Event, FileCache, Object, QueryOutput, ReadId,
    ReadKind, ReadRequest, Status,
};

const KIB: u64 = 1024;

/// A file, or a bucket of one file's row groups, read by one stream.
#[derive(Clone, Debug)]
struct Unit {
    file: FileIndex,
    /// Position of the file in `QuerySpec::files`.
    query_pos: usize,
    row_groups: Range<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Footer,
    Steps,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepStatus {
    /// Dependencies not finished.
    Waiting,
    /// May start (planned: held until the unit is current, for page steps).
    Eligible,
    /// Reads requested; waiting for bytes.
    Started,
    /// Bytes ready; a decode is queued or running.
    Decoding,
    /// Done (or skipped because its row group was dropped).
    Finished,
}

#[derive(Debug)]
struct StepState {
    status: StepStatus,
    unmet: u32,
    pending: u32,
    dependents: Vec<u32>,
    /// Coupled mode: the step's memory charge, held until it finishes.
    charge: Option<Charge>,
}

#[derive(Debug, Default)]
struct RgState {
    open_steps: u32,
    dropped: bool,
    complete: bool,
    subgroups_done: u32,
    active_decodes: u32,
    pending_decodes: VecDeque<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EntryState {
    Idle,
    Requested,
    Ready,
}

struct OpenUnit {
    id: u32,
    file: FileIndex,
    stream: usize,
    current: bool,
    phase: Phase,
    footer_reads: VecDeque<ByteRange>,
    whole_file: bool,
    plan: FilePlan,
    entry_state: Vec<EntryState>,
    entry_pieces: Vec<u32>,
    entry_counted: Vec<bool>,
    entry_consumers: Vec<u32>,
    /// The read serving each entry (`u64::MAX` = none); split entries list the rest in
    /// `extra_reads`.
    entry_read: Vec<u64>,
    extra_reads: BTreeMap<u32, Vec<u64>>,
    waiters: BTreeMap<u32, Vec<u32>>,
    lazy: Option<LazyCoalescer>,
    steps: Vec<StepState>,
    cursor: usize,
    started_not_ready: u32,
    rgs: Vec<RgState>,
    first_incomplete: usize,
    rgs_done: usize,
    queue: IssueQueue,
    local_waiting: VecDeque<u64>,
    reads_running: u32,
    reads_alive: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    Iceberg,
    Footer,
    Entries,
}

struct ReadState {
    unit: u32,
    purpose: Purpose,
    object: Object,
    range: ByteRange,
    kind: ReadKind,
    readiness: TaskReadiness,
    /// Entry of each sub-range, in the readiness order.
    served: Vec<u32>,
    unconsumed: u32,
    charge: Option<Charge>,
    issued: bool,
    started_ns: Option<u64>,
    inline: bool,
    completed: bool,
}

struct RunningDecode {
    unit: u32,
    step: u32,
    charge: Option<Charge>,
}

/// One query's reader on one node. See the module documentation for the contract.
pub struct Reader {
    table: Arc<Table>,
    query: QuerySpec,
    strategy: Strategy,
    policy: CoalescePolicy,
    planned: bool,
    lazy: bool,
    inline_reads: bool,
    serial: bool,
    subgroups: bool,
    partial_readiness: bool,
    parallel_subgroups: u32,
    prefetch_ahead: u32,
    max_parsing_threads: u32,
    main_columns: Vec<u32>,
    units: Vec<Unit>,
    next_unit: usize,
    units_done: usize,
    streams: Vec<VecDeque<u32>>,
    open: Vec<Option<Box<OpenUnit>>>,
    open_ids: BTreeSet<u32>,
    dirty: BTreeSet<u32>,
    eligible: Vec<(u32, u32)>,
    reads: BTreeMap<u64, ReadState>,
    next_id: u64,
    io_pool: IoPool,
    controller: InFlightController,
    memory: Memory,
    events: ProfileEvents,
    decodes_running: u32,
    inline_running: u32,
    decode_queue: VecDeque<(u32, u32)>,
    decode_scan_needed: bool,
    decodes: BTreeMap<u64, RunningDecode>,
    chunks: BTreeMap<u64, Option<Charge>>,
    out: VecDeque<Action>,
    output: QueryOutput,
    error: Option<PlanError>,
    iceberg_reads: VecDeque<(Object, u64)>,
    iceberg_running: bool,
    started: bool,
    planned_queued: u64,
    local_queued: u64,
    now_ns: u64,
}

fn memory_class(kind: ReadKind) -> MemoryClass {
    match kind {
        ReadKind::IcebergMetadata | ReadKind::Footer => MemoryClass::Footer,
        ReadKind::BloomHeader => MemoryClass::BloomFilterHeader,
        ReadKind::BloomBlocks => MemoryClass::BloomFilterBlocks,
        ReadKind::Dictionary => MemoryClass::Dictionary,
        ReadKind::ColumnIndex => MemoryClass::ColumnIndex,
        ReadKind::OffsetIndex => MemoryClass::OffsetIndex,
        ReadKind::DataPages => MemoryClass::CompressedPages,
    }
}

fn step_class(kind: StepKind) -> MemoryClass {
    match kind {
        StepKind::BloomHeader => MemoryClass::BloomFilterHeader,
        StepKind::BloomBlocks => MemoryClass::BloomFilterBlocks,
        StepKind::Dictionary => MemoryClass::Dictionary,
        StepKind::Indexes => MemoryClass::ColumnIndex,
        StepKind::Prewhere(_) | StepKind::Main(_) => MemoryClass::CompressedPages,
    }
}

impl Reader {
    /// Builds the reader: validates the query against the table and the strategy's
    /// settings, splits files into units (row-group buckets when asked) and streams.
    pub fn new(table: Arc<Table>, query: QuerySpec, strategy: Strategy) -> Result<Reader, PlanError> {
        query.validate(&table)?;
        let policy = strategy.coalesce_policy();
        policy.validate()?;
        let planned = strategy.planned_issue();
        let mut units = Vec::new();
        for (query_pos, &file) in query.files.iter().enumerate() {
            let n_rg = table.files.get(file as usize).map_or(0, |f| f.row_groups.len() as u32);
            let buckets = if strategy.row_group_buckets {
                (n_rg / strategy.row_group_buckets_min_row_groups.max(1)).min(strategy.max_threads).max(1)
            } else {
                1
            };
            for b in 0..buckets {
                let lo = (n_rg as u64 * b as u64 / buckets as u64) as u32;
                let hi = (n_rg as u64 * (b as u64 + 1) / buckets as u64) as u32;
                units.push(Unit { file, query_pos, row_groups: lo..hi });
            }
        }
        let n_streams = (strategy.max_threads as usize).min(units.len()).max(1);
        let memory = Memory::new(strategy.memory_settings(n_streams as u32))?;
        let io_pool = IoPool::new(strategy.io_threads())?;
        let controller = InFlightController::new(strategy.controller_config())?;
        let main_columns: Vec<u32> =
            query.columns.iter().copied().filter(|c| !query.prewhere_columns.contains(c)).collect();
        let iceberg_reads = match (&table.iceberg, query.iceberg_metadata_cache_warm) {
            (Some(m), false) => {
                let mut v = vec![(Object::IcebergMetadataJson, m.metadata_json_bytes), (Object::IcebergManifestList, m.manifest_list_bytes)];
                v.extend(m.manifest_bytes.iter().enumerate().map(|(i, b)| (Object::IcebergManifest(i as u32), *b)));
                v.into_iter().filter(|(_, b)| *b > 0).collect()
            }
            _ => VecDeque::new(),
        };
        let clickhouse = strategy.family() == Family::ClickHouse;
        let output = QueryOutput {
            rows_per_file: vec![0; query.files.len()],
            rows_per_unit: vec![0; units.len()],
            ..QueryOutput::default()
        };
        Ok(Reader {
            lazy: !planned && matches!(policy, CoalescePolicy::ClickHouseBase { .. }),
            inline_reads: clickhouse && !planned,
            serial: clickhouse && !planned,
            subgroups: clickhouse,
            partial_readiness: strategy.mechanism(1),
            parallel_subgroups: if strategy.mechanism(10) { strategy.parallel_subgroups.max(1) } else { 1 },
            prefetch_ahead: if strategy.mechanism(9) { strategy.files_prefetch_ahead } else { 0 },
            max_parsing_threads: strategy.max_parsing_threads.max(1),
            open: (0..units.len()).map(|_| None).collect(),
            streams: vec![VecDeque::new(); n_streams],
            units,
            table,
            query,
            policy,
            planned,
            strategy,
            main_columns,
            next_unit: 0,
            units_done: 0,
            open_ids: BTreeSet::new(),
            dirty: BTreeSet::new(),
            eligible: Vec::new(),
            reads: BTreeMap::new(),
            next_id: 0,
            io_pool,
            controller,
            memory,
            events: ProfileEvents::new(),
            decodes_running: 0,
            inline_running: 0,
            decode_queue: VecDeque::new(),
            decode_scan_needed: false,
            decodes: BTreeMap::new(),
            chunks: BTreeMap::new(),
            out: VecDeque::new(),
            output,
            error: None,
            iceberg_reads,
            iceberg_running: false,
            started: false,
            planned_queued: 0,
            local_queued: 0,
            now_ns: 0,
        })
    }

    // ---------------------------------------------------------------- getters

    /// Whether every selected row was delivered and consumed.
    pub fn is_finished(&self) -> bool {
        self.error.is_none()
            && self.started
            && self.iceberg_reads.is_empty()
            && !self.iceberg_running
            && self.units_done == self.units.len()
            && self.chunks.is_empty()
            && self.decodes.is_empty()
    }

    /// The sticky error, if the reader stopped.
    pub fn error(&self) -> Option<&PlanError> {
        self.error.as_ref()
    }

    /// Profile events under ClickHouse names.
    pub fn profile_events(&self) -> &ProfileEvents {
        &self.events
    }

    /// Rows delivered and bytes needed so far.
    pub fn output(&self) -> &QueryOutput {
        &self.output
    }

    /// The strategy the reader runs.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// Earliest timer: the reader has none (every decision follows an event).
    pub fn poll_timeout(&self) -> Option<u64> {
        None
    }

    /// A cheap snapshot (O(budgets)).
    pub fn status(&self) -> Status {
        let c = self.controller.status();
        Status {
            bytes_in_flight: c.bytes_in_flight,
            target_bytes_in_flight: c.target_bytes_in_flight,
            peak_bytes_in_flight: c.peak_bytes_in_flight,
            reads_running: self.io_pool.running() as u64 + self.inline_running as u64,
            reads_queued: self.io_pool.waiting() as u64 + self.planned_queued + self.local_queued,
            inline_reads_running: self.inline_running as u64,
            io_threads: self.io_pool.capacity(),
            decodes_running: self.decodes_running,
            decodes_queued: self.decode_queue.len() as u64,
            chunks_outstanding: self.chunks.len() as u64,
            open_files: self.streams.iter().map(|s| s.len() as u64).sum(),
            memory: self.memory.usage(),
        }
    }

    // ---------------------------------------------------------------- events in

    fn set_now(&mut self, now_ns: u64) -> bool {
        if self.error.is_some() {
            return false;
        }
        if now_ns < self.now_ns {
            self.error = Some(PlanError::Contract(format!(
                "time went backwards: now_ns {now_ns} after {}; every now_ns must be at least the previous one",
                self.now_ns
            )));
            return false;
        }
        self.now_ns = now_ns;
        true
    }

    fn fail(&mut self, e: impl Into<PlanError>) {
        if self.error.is_none() {
            self.error = Some(e.into());
        }
    }

    /// Timers: none, so nothing to do.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        self.set_now(now_ns);
    }

    /// Feeds one event that happened at `now_ns`.
    pub fn handle(&mut self, now_ns: u64, event: Event) {
        if !self.set_now(now_ns) {
            return;
        }
        let r = match event {
            Event::ReadFirstByte { id } => self.on_first_byte(id),
            Event::ReadProgress { id, bytes_ready } => self.on_progress(id, bytes_ready),
            Event::ReadCompleted { id, source } => self.on_read_completed(id, source),
            Event::ReadFailed { id, reason } => self.on_read_failed(id, reason),
            Event::DecodeCompleted { id } => self.on_decode_completed(id),
            Event::ChunkConsumed { id } => self.on_chunk_consumed(id),
        };
        if let Err(e) = r {
            self.fail(e);
        }
    }

    fn read_mut(&mut self, id: ReadId) -> Result<&mut ReadState, PlanError> {
        self.reads
            .get_mut(&id.0)
            .ok_or_else(|| PlanError::Contract(format!("event for read {} which is not running", id.0)))
    }

    fn on_first_byte(&mut self, id: ReadId) -> Result<(), PlanError> {
        let now = self.now_ns;
        let read = self.read_mut(id)?;
        if read.purpose != Purpose::Iceberg {
            self.controller.on_first_byte(now, id.0)?;
        }
        Ok(())
    }

    fn on_progress(&mut self, id: ReadId, bytes_ready: u64) -> Result<(), PlanError> {
        let now = self.now_ns;
        let read = self.reads.get_mut(&id.0).ok_or_else(|| PlanError::Contract(format!("progress for read {} which is not running", id.0)))?;
        if read.purpose == Purpose::Iceberg {
            return Ok(());
        }
        let newly = read.readiness.on_progress(bytes_ready, &mut self.events);
        let entries: Vec<u32> = read.served.get(newly).map(<[u32]>::to_vec).unwrap_or_default();
        let uid = read.unit;
        self.controller.on_progress(now, id.0, bytes_ready)?;
        self.entries_ready(uid, &entries);
        Ok(())
    }

    fn on_read_completed(&mut self, id: ReadId, source: readahead::ReadSource) -> Result<(), PlanError> {
        let now = self.now_ns;
        let read = self.reads.get_mut(&id.0).ok_or_else(|| PlanError::Contract(format!("completion of read {} which is not running", id.0)))?;
        if read.completed {
            return Err(PlanError::Contract(format!("read {} completed twice", id.0)));
        }
        read.completed = true;
        let (uid, purpose, inline, started) = (read.unit, read.purpose, read.inline, read.started_ns);
        let newly = read.readiness.on_complete();
        let entries: Vec<u32> = read.served.get(newly).map(<[u32]>::to_vec).unwrap_or_default();
        if purpose == Purpose::Iceberg {
            self.reads.remove(&id.0);
            self.iceberg_running = false;
            return Ok(());
        }
        self.controller.on_complete(now, id.0, source, &mut self.events)?;
        self.free_read_slot(uid, inline, started);
        match purpose {
            Purpose::Footer => {
                self.reads.remove(&id.0);
                self.with_unit(uid, |r, u| r.footer_done(u))?;
            }
            Purpose::Entries => {
                self.entries_ready(uid, &entries);
                self.maybe_forget_read(id.0)?;
            }
            Purpose::Iceberg => {}
        }
        Ok(())
    }

    fn on_read_failed(&mut self, id: ReadId, reason: String) -> Result<(), PlanError> {
        let read = self.reads.get(&id.0).ok_or_else(|| PlanError::Contract(format!("failure of read {} which is not running", id.0)))?;
        Err(PlanError::ReadFailed { read_id: id.0, object: read.object.to_string(), range: read.range, reason })
    }

    /// Frees the IO slot (or the inline decode thread) of a finished read, and starts what
    /// waited for it.
    fn free_read_slot(&mut self, uid: u32, inline: bool, started: Option<u64>) {
        if inline {
            self.inline_running = self.inline_running.saturating_sub(1);
            self.decodes_running = self.decodes_running.saturating_sub(1);
            self.decode_scan_needed = true;
            let waited_ns = self.now_ns - started.unwrap_or(self.now_ns);
            self.events.add(ProfileEvent::ParquetFetchWaitTimeMicroseconds, waited_ns / 1_000);
        } else if let Some(next) = self.io_pool.release() {
            self.start_read(next, false);
        }
        let next_local = match self.open.get_mut(uid as usize).and_then(|u| u.as_mut()) {
            Some(u) => {
                u.reads_running = u.reads_running.saturating_sub(1);
                u.reads_alive = u.reads_alive.saturating_sub(1);
                u.local_waiting.pop_front()
            }
            None => None,
        };
        if let Some(next) = next_local {
            self.local_queued = self.local_queued.saturating_sub(1);
            self.submit_read(uid, next);
        }
        self.maybe_close(uid);
    }

    fn on_decode_completed(&mut self, id: DecodeId) -> Result<(), PlanError> {
        let d = self
            .decodes
            .remove(&id.0)
            .ok_or_else(|| PlanError::Contract(format!("completion of decode {} which is not running", id.0)))?;
        self.decodes_running = self.decodes_running.saturating_sub(1);
        self.decode_scan_needed = true;
        self.with_unit(d.unit, |r, u| r.decode_done(u, d.step, d.charge))
    }

    fn on_chunk_consumed(&mut self, id: ChunkId) -> Result<(), PlanError> {
        let charge = self
            .chunks
            .remove(&id.0)
            .ok_or_else(|| PlanError::Contract(format!("chunk {} was not delivered or was already consumed", id.0)))?;
        if let Some(c) = charge {
            self.memory.release(c)?;
        }
        self.decode_scan_needed = true;
        Ok(())
    }

    // ---------------------------------------------------------------- work out

    /// The next thing to do, or `None` until the next event. `cache` tells which bytes the
    /// source already holds (R8 reads through them when coalescing).
    pub fn poll_action(&mut self, now_ns: u64, cache: &dyn CacheView) -> Option<Action> {
        if !self.set_now(now_ns) {
            return None;
        }
        if let Some(a) = self.out.pop_front() {
            return Some(a);
        }
        if let Err(e) = self.pump(cache) {
            self.fail(e);
            return None;
        }
        self.out.pop_front()
    }

    fn pump(&mut self, cache: &dyn CacheView) -> Result<(), PlanError> {
        if !self.iceberg_phase() {
            return Ok(());
        }
        if !self.started {
            self.started = true;
            for _round in 0..=self.prefetch_ahead {
                for s in 0..self.streams.len() {
                    self.open_next_unit(s)?;
                }
            }
        }
        for _ in 0..64 {
            let mut progressed = false;
            while let Some((uid, first)) = self.eligible.first().copied() {
                // One batch per unit: every eligible step of that unit coalesces together.
                let batch: Vec<u32> = self.eligible.iter().filter(|(u, _)| *u == uid).map(|(_, s)| *s).collect();
                self.eligible.retain(|(u, _)| *u != uid);
                let _ = first;
                self.with_unit(uid, |r, u| r.start_steps(u, &batch, cache))?;
                progressed = true;
            }
            while let Some(uid) = self.dirty.pop_first() {
                self.with_unit(uid, |r, u| r.advance_cursor(u, cache))?;
                progressed = true;
            }
            if self.planned {
                progressed |= self.issue_from_queues()?;
            }
            progressed |= self.start_decodes()?;
            if !progressed || !self.out.is_empty() {
                break;
            }
        }
        Ok(())
    }

    /// Runs the Iceberg metadata phase; true once it is over.
    fn iceberg_phase(&mut self) -> bool {
        if self.iceberg_running {
            return false;
        }
        let Some((object, bytes)) = self.iceberg_reads.pop_front() else { return true };
        let id = self.next_id;
        self.next_id += 1;
        let range = ByteRange::new(0, bytes);
        let readiness = TaskReadiness::new(bytes, Vec::new(), false);
        let Ok(readiness) = readiness else { return false };
        self.reads.insert(
            id,
            ReadState {
                unit: u32::MAX,
                purpose: Purpose::Iceberg,
                object,
                range,
                kind: ReadKind::IcebergMetadata,
                readiness,
                served: Vec::new(),
                unconsumed: 0,
                charge: None,
                issued: true,
                started_ns: Some(self.now_ns),
                inline: false,
                completed: false,
            },
        );
        self.iceberg_running = true;
        self.out.push_back(Action::Read(ReadRequest { id: ReadId(id), object, range, kind: ReadKind::IcebergMetadata, inline: false }));
        false
    }

    /// Takes unit `uid` out of the table for `f`, then puts it back (or drops it when done
    /// and no read of it is alive).
    fn with_unit<R>(
        &mut self,
        uid: u32,
        f: impl FnOnce(&mut Self, &mut OpenUnit) -> Result<R, PlanError>,
    ) -> Result<R, PlanError>
    where
        R: Default,
    {
        let Some(mut u) = self.open.get_mut(uid as usize).and_then(Option::take) else {
            return Ok(R::default());
        };
        let r = f(self, &mut u);
        if let Some(slot) = self.open.get_mut(uid as usize) {
            *slot = Some(u);
        }
        self.maybe_close(uid);
        r
    }

    fn maybe_close(&mut self, uid: u32) {
        if let Some(slot) = self.open.get_mut(uid as usize) {
            if slot.as_ref().is_some_and(|u| u.phase == Phase::Done && u.reads_alive == 0) {
                *slot = None;
            }
        }
    }

    // ---------------------------------------------------------------- units and streams

    fn open_next_unit(&mut self, stream: usize) -> Result<(), PlanError> {
        let Some(unit) = self.units.get(self.next_unit).cloned() else { return Ok(()) };
        let uid = self.next_unit as u32;
        self.next_unit += 1;
        let Some(file) = self.table.files.get(unit.file as usize) else {
            return Err(PlanError::Query(format!("file {} does not exist", unit.file)));
        };
        let input = PlanInput {
            file_index: unit.file,
            row_groups: unit.row_groups.clone(),
            main_columns: &self.main_columns,
            prewhere_columns: &self.query.prewhere_columns,
            column_index_columns: &self.query.column_index_columns,
            bloom_columns: &self.query.bloom_columns,
            bloom_probes: self.query.bloom_probes,
            row_group_keep_fraction: self.query.row_group_keep_fraction,
            page_keep_fraction: self.query.page_keep_fraction,
            prewhere_selectivity: self.query.prewhere_selectivity,
            bloom_drop_fraction: self.query.bloom_drop_fraction,
            seed: self.query.seed,
            use_offset_index: self.strategy.use_offset_index,
            subgroups: self.subgroups,
            planned: self.planned,
        };
        let plan = plan_file(file, &input);
        let size = file.size_bytes;
        let footer_len = file.footer_len_bytes as u64 + 8;
        let whole_file = size > 0 && size < self.strategy.read_whole_file_below_bytes;
        let footer_reads: VecDeque<ByteRange> = if whole_file {
            VecDeque::from([ByteRange::new(0, size)])
        } else if self.query.parquet_metadata_cache_warm {
            VecDeque::new()
        } else {
            let tail = match self.strategy.footer {
                FooterRead::Tail(n) => n,
                FooterRead::DuckDb => (size / 1000).clamp(16 * KIB, 256 * KIB),
                FooterRead::ArrowRs => 8,
            }
            .min(size);
            let mut v = VecDeque::from([ByteRange::new(size - tail, size)]);
            if footer_len > tail {
                v.push_back(ByteRange::new(size - footer_len.min(size), size - tail));
            }
            v
        };
        let n_entries = plan.entries.len();
        let mut steps: Vec<StepState> = plan
            .steps
            .iter()
            .map(|s| StepState { status: StepStatus::Waiting, unmet: s.deps.len() as u32, pending: 0, dependents: Vec::new(), charge: None })
            .collect();
        for (i, s) in plan.steps.iter().enumerate() {
            for &d in &s.deps {
                if let Some(st) = steps.get_mut(d as usize) {
                    st.dependents.push(i as u32);
                }
            }
        }
        let rgs: Vec<RgState> = plan
            .row_groups
            .iter()
            .map(|rg| RgState { open_steps: rg.steps.len() as u32, ..RgState::default() })
            .collect();
        let lazy = if self.lazy && n_entries > 0 {
            let needed: Vec<NeededRange> = plan
                .entries
                .iter()
                .map(|e| NeededRange { range: e.range, group: e.group, likely_used: true })
                .collect();
            let (seek, per_task) = match self.policy {
                CoalescePolicy::ClickHouseBase { min_bytes_for_seek, bytes_per_read_task } => (min_bytes_for_seek, bytes_per_read_task),
                _ => (0, 0),
            };
            Some(LazyCoalescer::new(needed, seek, per_task)?)
        } else {
            None
        };
        let current = self.streams.get(stream).is_some_and(|s| s.is_empty());
        let u = OpenUnit {
            id: uid,
            file: unit.file,
            stream,
            current,
            phase: Phase::Footer,
            footer_reads,
            whole_file,
            entry_state: vec![EntryState::Idle; n_entries],
            entry_pieces: vec![0; n_entries],
            entry_counted: vec![false; n_entries],
            entry_consumers: plan.entry_consumers.clone(),
            entry_read: vec![u64::MAX; n_entries],
            extra_reads: BTreeMap::new(),
            waiters: BTreeMap::new(),
            lazy,
            steps,
            cursor: 0,
            started_not_ready: 0,
            rgs,
            first_incomplete: 0,
            rgs_done: 0,
            queue: IssueQueue::new(stream),
            local_waiting: VecDeque::new(),
            reads_running: 0,
            reads_alive: 0,
            plan,
        };
        if let Some(s) = self.streams.get_mut(stream) {
            s.push_back(uid);
        }
        self.open_ids.insert(uid);
        if let Some(slot) = self.open.get_mut(uid as usize) {
            *slot = Some(Box::new(u));
        }
        self.with_unit(uid, |r, u| r.next_footer_read(u))
    }

    fn next_footer_read(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        match u.footer_reads.pop_front() {
            Some(range) => {
                let id = self.new_read(u, Purpose::Footer, range, ReadKind::Footer, Vec::new(), Vec::new())?;
                self.submit_read_of(u, id);
                Ok(())
            }
            None => self.start_plan(u),
        }
    }

    fn footer_done(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        if !u.footer_reads.is_empty() {
            return self.next_footer_read(u);
        }
        if u.whole_file {
            // The whole file is in memory: every entry is ready.
            for (e, st) in u.entry_state.iter_mut().enumerate() {
                *st = EntryState::Ready;
                if let Some(l) = u.lazy.as_mut() {
                    let _ = l.task_for(e as u32);
                }
            }
        }
        self.start_plan(u)
    }

    fn start_plan(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        u.phase = Phase::Steps;
        for (i, st) in u.steps.iter_mut().enumerate() {
            if st.unmet == 0 && st.status == StepStatus::Waiting {
                st.status = StepStatus::Eligible;
                if self.planned {
                    let is_page = u.plan.steps.get(i).is_some_and(|s| s.kind.decodes());
                    if u.current || !is_page {
                        self.eligible.push((u.id, i as u32));
                    }
                }
            }
        }
        if !self.planned {
            self.dirty.insert(u.id);
        }
        // Row groups with no step at all are complete now.
        for rg in 0..u.rgs.len() {
            if u.rgs.get(rg).is_some_and(|r| r.open_steps == 0 && !r.complete) {
                self.rg_complete(u, rg)?;
            }
        }
        if u.rgs.is_empty() {
            self.unit_done(u)?;
        }
        Ok(())
    }

    fn unit_done(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        if u.phase == Phase::Done {
            return Ok(());
        }
        u.phase = Phase::Done;
        self.units_done += 1;
        self.open_ids.remove(&u.id);
        // Reads still queued serve nothing any more.
        while let Some(id) = u.local_waiting.pop_front() {
            self.local_queued = self.local_queued.saturating_sub(1);
            self.reads.remove(&id);
            u.reads_alive = u.reads_alive.saturating_sub(1);
        }
        let stream = u.stream;
        let was_front = self.streams.get(stream).and_then(|s| s.front()).copied() == Some(u.id);
        if let Some(s) = self.streams.get_mut(stream) {
            s.retain(|&x| x != u.id);
        }
        if was_front {
            if let Some(&next) = self.streams.get(stream).and_then(|s| s.front()) {
                self.make_current(next);
            }
        }
        self.open_next_unit(stream)?;
        Ok(())
    }

    fn make_current(&mut self, uid: u32) {
        let Some(u) = self.open.get_mut(uid as usize).and_then(|u| u.as_mut()) else { return };
        if u.current {
            return;
        }
        u.current = true;
        if self.planned {
            for (i, st) in u.steps.iter().enumerate() {
                let is_page = u.plan.steps.get(i).is_some_and(|s| s.kind.decodes());
                if is_page && st.status == StepStatus::Eligible {
                    self.eligible.push((uid, i as u32));
                }
            }
        } else {
            self.dirty.insert(uid);
        }
    }

    // ---------------------------------------------------------------- steps

    fn privileged(u: &OpenUnit) -> Option<(u32, u32)> {
        let rg = u.rgs.get(u.first_incomplete)?;
        Some((u.first_incomplete as u32, rg.subgroups_done))
    }

    fn is_privileged(u: &OpenUnit, step: u32) -> bool {
        let Some(s) = u.plan.steps.get(step as usize) else { return false };
        Self::privileged(u) == Some((s.rg, s.kind.subgroup()))
    }

    /// Coupled issue: start steps in order while dependencies, the serial chain, the
    /// row-group window and memory allow.
    fn advance_cursor(&mut self, u: &mut OpenUnit, cache: &dyn CacheView) -> Result<(), PlanError> {
        if u.phase != Phase::Steps || !u.current {
            return Ok(());
        }
        while let Some(plan_step) = u.plan.steps.get(u.cursor) {
            let s = u.cursor as u32;
            let rg = plan_step.rg as usize;
            let Some(state) = u.steps.get(u.cursor) else { break };
            if matches!(state.status, StepStatus::Finished | StepStatus::Started | StepStatus::Decoding) {
                u.cursor += 1;
                continue;
            }
            if state.status != StepStatus::Eligible {
                break;
            }
            if self.serial && u.started_not_ready > 0 {
                break;
            }
            let window = self.strategy.row_groups_ahead as usize;
            if rg > u.first_incomplete.saturating_add(window) {
                break;
            }
            let bytes: u64 = if plan_step.kind.decodes() {
                plan_step.compressed_bytes
            } else {
                plan_step.entries.iter().filter_map(|&e| u.plan.entries.get(e as usize)).map(|e| e.range.len()).sum()
            };
            let request = ChargeRequest {
                stream: u.stream,
                class: step_class(plan_step.kind),
                bytes,
                running_tasks: self.decodes_running,
                privileged: Self::is_privileged(u, s),
            };
            match self.memory.try_charge(request)? {
                Admission::Charged(c) => {
                    if let Some(st) = u.steps.get_mut(u.cursor) {
                        st.charge = Some(c);
                    }
                }
                Admission::Refused(_) => break,
            }
            u.cursor += 1;
            self.start_steps(u, &[s], cache)?;
        }
        Ok(())
    }

    /// Starts `batch` (steps of one unit): registers what each waits for and creates the
    /// reads of every entry nobody requested yet, coalesced together.
    fn start_steps(&mut self, u: &mut OpenUnit, batch: &[u32], cache: &dyn CacheView) -> Result<(), PlanError> {
        if u.phase == Phase::Done {
            return Ok(());
        }
        let mut to_read: Vec<u32> = Vec::new();
        let mut owner: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
        let mut ready_now = Vec::new();
        for &s in batch {
            let Some(plan_step) = u.plan.steps.get(s as usize) else { continue };
            let Some(state) = u.steps.get_mut(s as usize) else { continue };
            if state.status != StepStatus::Eligible {
                continue;
            }
            if u.rgs.get(plan_step.rg as usize).is_some_and(|r| r.dropped) {
                continue;
            }
            state.status = StepStatus::Started;
            u.started_not_ready += 1;
            let mut pending = 0;
            for &e in &plan_step.entries {
                let ei = e as usize;
                if let Some(counted) = u.entry_counted.get_mut(ei) {
                    if !*counted {
                        *counted = true;
                        self.output.needed_bytes += u.plan.entries.get(ei).map_or(0, |x| x.range.len());
                    }
                }
                match u.entry_state.get(ei).copied() {
                    Some(EntryState::Ready) | None => {}
                    Some(EntryState::Requested) => {
                        pending += 1;
                        u.waiters.entry(e).or_default().push(s);
                    }
                    Some(EntryState::Idle) => {
                        pending += 1;
                        u.waiters.entry(e).or_default().push(s);
                        to_read.push(e);
                        owner.entry(e).or_insert((plan_step.rg, plan_step.kind.subgroup()));
                    }
                }
            }
            state.pending = pending;
            if pending == 0 {
                ready_now.push(s);
            }
        }
        to_read.sort_unstable();
        to_read.dedup();
        if !to_read.is_empty() {
            self.create_reads(u, &to_read, &owner, cache)?;
        }
        for s in ready_now {
            self.step_ready(u, s)?;
        }
        Ok(())
    }

    fn create_reads(
        &mut self,
        u: &mut OpenUnit,
        to_read: &[u32],
        owner: &BTreeMap<u32, (u32, u32)>,
        cache: &dyn CacheView,
    ) -> Result<(), PlanError> {
        // (task, entry of each served piece)
        let mut tasks: Vec<(ReadTask, Vec<u32>)> = Vec::new();
        if let Some(lazy) = u.lazy.as_mut() {
            for &e in to_read {
                if u.entry_state.get(e as usize) != Some(&EntryState::Idle) {
                    continue;
                }
                if let Some(task) = lazy.task_for(e)? {
                    let entries = task.serves.iter().map(|s| s.needed).collect();
                    tasks.push((task, entries));
                }
            }
        } else {
            let needed: Vec<NeededRange> = to_read
                .iter()
                .filter_map(|&e| u.plan.entries.get(e as usize))
                .map(|x| NeededRange { range: x.range, group: x.group, likely_used: true })
                .collect();
            let view = FileCache { view: cache, file: u.file };
            for task in coalescer::coalesce(&needed, &view, &self.policy)? {
                let entries = task.serves.iter().filter_map(|s| to_read.get(s.needed as usize).copied()).collect();
                tasks.push((task, entries));
            }
        }
        for (task, entries) in tasks {
            let kind = entries.first().and_then(|&e| u.plan.entries.get(e as usize)).map_or(ReadKind::DataPages, |x| x.kind);
            let subranges: Vec<SubRange> = task.serves.iter().map(|s| SubRange { task_offset: s.task_offset, len: s.len }).collect();
            let id = self.new_read(u, Purpose::Entries, task.range, kind, subranges, entries.clone())?;
            let mut distinct = entries.clone();
            distinct.sort_unstable();
            distinct.dedup();
            for &e in &entries {
                let ei = e as usize;
                if let Some(st) = u.entry_state.get_mut(ei) {
                    if *st == EntryState::Idle {
                        *st = EntryState::Requested;
                    }
                }
                if let Some(p) = u.entry_pieces.get_mut(ei) {
                    *p += 1;
                }
            }
            for &e in &distinct {
                match u.entry_read.get_mut(e as usize) {
                    Some(slot) if *slot == u64::MAX => *slot = id,
                    Some(_) => u.extra_reads.entry(e).or_default().push(id),
                    None => {}
                }
            }
            if let Some(r) = self.reads.get_mut(&id) {
                r.unconsumed = distinct.len() as u32;
            }
            if self.planned {
                let (rg, subgroup) = entries.iter().find_map(|e| owner.get(e)).copied().unwrap_or((0, 0));
                let planned = PlannedRead { read_id: id, bytes: task.range.len(), class: memory_class(kind), row_group: rg, subgroup };
                u.queue.push(planned, &mut self.events);
                self.planned_queued += 1;
            } else {
                self.submit_read_of(u, id);
            }
        }
        Ok(())
    }

    fn new_read(
        &mut self,
        u: &mut OpenUnit,
        purpose: Purpose,
        range: ByteRange,
        kind: ReadKind,
        subranges: Vec<SubRange>,
        served: Vec<u32>,
    ) -> Result<u64, PlanError> {
        let id = self.next_id;
        self.next_id += 1;
        let readiness = TaskReadiness::new(range.len(), subranges, self.partial_readiness)?;
        self.reads.insert(
            id,
            ReadState {
                unit: u.id,
                purpose,
                object: Object::Data(u.file),
                range,
                kind,
                readiness,
                served,
                unconsumed: 0,
                charge: None,
                issued: false,
                started_ns: None,
                inline: false,
                completed: false,
            },
        );
        u.reads_alive += 1;
        Ok(id)
    }

    /// Coupled issue of a created read: the per-file limit, then the IO pool (or inline).
    fn submit_read_of(&mut self, u: &mut OpenUnit, id: u64) {
        let limit = self.strategy.max_concurrent_reads_per_file;
        if limit > 0 && u.reads_running >= limit {
            u.local_waiting.push_back(id);
            self.local_queued += 1;
            return;
        }
        u.reads_running += 1;
        self.to_pool(id);
    }

    /// Same as [`Self::submit_read_of`] for a unit that is not taken out.
    fn submit_read(&mut self, uid: u32, id: u64) {
        match self.open.get_mut(uid as usize).and_then(Option::take) {
            Some(mut u) => {
                self.submit_read_of(&mut u, id);
                if let Some(slot) = self.open.get_mut(uid as usize) {
                    *slot = Some(u);
                }
            }
            // The unit is taken out by a caller up the stack: no limit bookkeeping needed.
            None => self.to_pool(id),
        }
    }

    fn to_pool(&mut self, id: u64) {
        let Some(read) = self.reads.get_mut(&id) else { return };
        if !read.issued {
            read.issued = true;
            let bytes = read.range.len();
            if let Err(e) = self.controller.on_issue(self.now_ns, id, bytes, &mut self.events) {
                self.fail(e);
                return;
            }
        }
        match self.io_pool.submit(id) {
            Slot::Started => self.start_read(id, false),
            Slot::Queued => {
                if self.inline_reads && self.decodes_running < self.max_parsing_threads && self.io_pool.take_waiting(id) {
                    self.decodes_running += 1;
                    self.inline_running += 1;
                    self.start_read(id, true);
                }
            }
        }
    }

    fn start_read(&mut self, id: u64, inline: bool) {
        let now = self.now_ns;
        let Some(read) = self.reads.get_mut(&id) else { return };
        read.inline = inline;
        read.started_ns = Some(now);
        let request = ReadRequest { id: ReadId(id), object: read.object, range: read.range, kind: read.kind, inline };
        if let Err(e) = self.controller.on_start(now, id) {
            self.fail(e);
            return;
        }
        self.out.push_back(Action::Read(request));
    }

    /// Planned issue: poll every open unit's queue while reads go out.
    fn issue_from_queues(&mut self) -> Result<bool, PlanError> {
        let mut any = false;
        let ids: Vec<u32> = self.open_ids.iter().copied().collect();
        for uid in ids {
            let issued = self.with_unit(uid, |r, u| {
                let mut n = 0u32;
                loop {
                    let context = AdmissionContext { running_tasks: r.decodes_running, privileged: Self::privileged(u) };
                    let polled = u.queue.poll(r.now_ns, &context, &mut r.controller, &mut r.memory, &mut r.events)?;
                    let Some(issued) = polled else { break };
                    r.planned_queued = r.planned_queued.saturating_sub(1);
                    let id = issued.read.read_id;
                    match r.reads.get_mut(&id) {
                        Some(read) => {
                            read.issued = true;
                            read.charge = Some(issued.charge);
                        }
                        None => r.memory.release(issued.charge)?,
                    }
                    u.reads_running += 1;
                    match r.io_pool.submit(id) {
                        Slot::Started => r.start_read(id, false),
                        Slot::Queued => {}
                    }
                    n += 1;
                }
                Ok(n)
            })?;
            any |= issued > 0;
        }
        Ok(any)
    }

    /// Entries of unit `uid` whose bytes arrived.
    fn entries_ready(&mut self, uid: u32, entries: &[u32]) {
        if entries.is_empty() {
            return;
        }
        let r = self.with_unit(uid, |r, u| {
            for &e in entries {
                let ei = e as usize;
                let Some(p) = u.entry_pieces.get_mut(ei) else { continue };
                *p = p.saturating_sub(1);
                if *p > 0 {
                    continue;
                }
                if let Some(st) = u.entry_state.get_mut(ei) {
                    *st = EntryState::Ready;
                }
                for s in u.waiters.remove(&e).unwrap_or_default() {
                    let Some(state) = u.steps.get_mut(s as usize) else { continue };
                    state.pending = state.pending.saturating_sub(1);
                    if state.pending == 0 && state.status == StepStatus::Started {
                        r.step_ready(u, s)?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = r {
            self.fail(e);
        }
    }

    fn step_ready(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        u.started_not_ready = u.started_not_ready.saturating_sub(1);
        if self.serial {
            self.dirty.insert(u.id);
        }
        let Some(plan_step) = u.plan.steps.get(s as usize) else { return Ok(()) };
        let rg = plan_step.rg as usize;
        let dropped = u.rgs.get(rg).is_some_and(|r| r.dropped);
        if !plan_step.kind.decodes() || dropped {
            return self.finish_step(u, s);
        }
        if let Some(st) = u.steps.get_mut(s as usize) {
            st.status = StepStatus::Decoding;
        }
        let cap = self.parallel_subgroups;
        if let Some(r) = u.rgs.get_mut(rg) {
            if r.active_decodes < cap {
                r.active_decodes += 1;
                self.decode_queue.push_back((u.id, s));
                self.decode_scan_needed = true;
            } else {
                r.pending_decodes.push_back(s);
            }
        }
        Ok(())
    }

    fn consume_entries(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        let entries = u.plan.steps.get(s as usize).map(|p| p.entries.clone()).unwrap_or_default();
        for e in entries {
            let Some(n) = u.entry_consumers.get_mut(e as usize) else { continue };
            *n = n.saturating_sub(1);
            if *n > 0 {
                continue;
            }
            let mut ids: Vec<u64> = u.entry_read.get(e as usize).copied().into_iter().filter(|&i| i != u64::MAX).collect();
            ids.extend(u.extra_reads.remove(&e).unwrap_or_default());
            for id in ids {
                if let Some(r) = self.reads.get_mut(&id) {
                    r.unconsumed = r.unconsumed.saturating_sub(1);
                }
                self.maybe_forget_read(id)?;
            }
        }
        Ok(())
    }

    /// Drops a read's state once it completed and every entry it served was consumed,
    /// releasing its memory charge.
    fn maybe_forget_read(&mut self, id: u64) -> Result<(), PlanError> {
        let done = self.reads.get(&id).is_some_and(|r| r.completed && (r.unconsumed == 0 || r.charge.is_none()));
        if done {
            if let Some(r) = self.reads.remove(&id) {
                if let Some(c) = r.charge {
                    self.memory.release(c)?;
                    self.decode_scan_needed = true;
                }
            }
        }
        Ok(())
    }

    fn finish_step(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        let Some(state) = u.steps.get_mut(s as usize) else { return Ok(()) };
        if state.status == StepStatus::Finished {
            return Ok(());
        }
        state.status = StepStatus::Finished;
        let charge = state.charge.take();
        let dependents = state.dependents.clone();
        if let Some(c) = charge {
            self.memory.release(c)?;
            self.decode_scan_needed = true;
        }
        self.consume_entries(u, s)?;
        let Some(plan_step) = u.plan.steps.get(s as usize) else { return Ok(()) };
        let rg = plan_step.rg as usize;
        let ends_subgroup = plan_step.ends_subgroup;
        let Some(rg_plan) = u.plan.row_groups.get(rg) else { return Ok(()) };
        let drop_now = rg_plan.bloom_decision_step == Some(s) && rg_plan.dropped_by_bloom;
        if let Some(r) = u.rgs.get_mut(rg) {
            r.open_steps = r.open_steps.saturating_sub(1);
            if ends_subgroup {
                r.subgroups_done += 1;
            }
        }
        if drop_now {
            self.drop_row_group(u, rg)?;
        } else {
            let dropped = u.rgs.get(rg).is_some_and(|r| r.dropped);
            for d in dependents {
                let Some(st) = u.steps.get_mut(d as usize) else { continue };
                st.unmet = st.unmet.saturating_sub(1);
                if st.unmet == 0 && st.status == StepStatus::Waiting && !dropped {
                    st.status = StepStatus::Eligible;
                    if self.planned {
                        let is_page = u.plan.steps.get(d as usize).is_some_and(|p| p.kind.decodes());
                        if u.current || !is_page {
                            self.eligible.push((u.id, d));
                        }
                    }
                }
            }
            if !self.planned {
                self.dirty.insert(u.id);
            }
        }
        if u.rgs.get(rg).is_some_and(|r| r.open_steps == 0 && !r.complete) {
            self.rg_complete(u, rg)?;
        }
        Ok(())
    }

    fn drop_row_group(&mut self, u: &mut OpenUnit, rg: usize) -> Result<(), PlanError> {
        let Some(r) = u.rgs.get_mut(rg) else { return Ok(()) };
        if r.dropped {
            return Ok(());
        }
        r.dropped = true;
        self.output.row_groups_dropped_by_bloom += 1;
        let steps = u.plan.row_groups.get(rg).map_or(0..0, |p| p.steps.clone());
        for s in steps {
            let skip = u.steps.get(s as usize).is_some_and(|st| matches!(st.status, StepStatus::Waiting | StepStatus::Eligible));
            if skip {
                if let Some(st) = u.steps.get_mut(s as usize) {
                    st.status = StepStatus::Finished;
                }
                self.consume_entries(u, s)?;
                if let Some(r) = u.rgs.get_mut(rg) {
                    r.open_steps = r.open_steps.saturating_sub(1);
                }
            }
        }
        if !self.planned {
            self.dirty.insert(u.id);
        }
        Ok(())
    }

    fn rg_complete(&mut self, u: &mut OpenUnit, rg: usize) -> Result<(), PlanError> {
        let Some(r) = u.rgs.get_mut(rg) else { return Ok(()) };
        if r.complete {
            return Ok(());
        }
        r.complete = true;
        u.rgs_done += 1;
        while u.rgs.get(u.first_incomplete).is_some_and(|r| r.complete) {
            u.first_incomplete += 1;
        }
        if !self.planned {
            self.dirty.insert(u.id);
        }
        if u.rgs_done == u.rgs.len() {
            self.unit_done(u)?;
        }
        Ok(())
    }

    // ---------------------------------------------------------------- decodes

    fn start_decodes(&mut self) -> Result<bool, PlanError> {
        let mut any = false;
        while self.decodes_running < self.max_parsing_threads && !self.decode_queue.is_empty() {
            if !self.decode_scan_needed {
                break;
            }
            let mut picked = None;
            for i in 0..self.decode_queue.len() {
                let Some(&(uid, s)) = self.decode_queue.get(i) else { break };
                let Some(u) = self.open.get(uid as usize).and_then(|u| u.as_deref()) else {
                    picked = Some((i, None));
                    break;
                };
                let Some(plan_step) = u.plan.steps.get(s as usize) else { continue };
                let privileged = plan_step.rg as usize == u.first_incomplete;
                let request = ChargeRequest {
                    stream: u.stream,
                    class: MemoryClass::DecodedColumns,
                    bytes: plan_step.decoded_bytes,
                    running_tasks: self.decodes_running,
                    privileged,
                };
                match self.memory.try_charge(request)? {
                    Admission::Charged(c) => {
                        picked = Some((i, Some(c)));
                        break;
                    }
                    Admission::Refused(_) => {}
                }
            }
            let Some((i, charge)) = picked else {
                self.decode_scan_needed = false;
                break;
            };
            let Some((uid, s)) = self.decode_queue.remove(i) else { break };
            let Some(u) = self.open.get(uid as usize).and_then(|u| u.as_deref()) else {
                if let Some(c) = charge {
                    self.memory.release(c)?;
                }
                continue;
            };
            let Some(plan_step) = u.plan.steps.get(s as usize) else { continue };
            let row_group = u.plan.row_groups.get(plan_step.rg as usize).map_or(0, |r| r.row_group);
            let id = self.next_id;
            self.next_id += 1;
            self.out.push_back(Action::Decode(DecodeRequest {
                id: DecodeId(id),
                file: u.file,
                row_group,
                compressed_bytes: plan_step.compressed_bytes,
                decoded_bytes: plan_step.decoded_bytes,
                rows: plan_step.rows,
            }));
            self.decodes.insert(id, RunningDecode { unit: uid, step: s, charge });
            self.decodes_running += 1;
            any = true;
        }
        Ok(any)
    }

    fn decode_done(&mut self, u: &mut OpenUnit, s: u32, charge: Option<Charge>) -> Result<(), PlanError> {
        let Some(plan_step) = u.plan.steps.get(s as usize) else { return Ok(()) };
        let rg = plan_step.rg as usize;
        let rows = plan_step.deliver_rows;
        let decoded_bytes = plan_step.decoded_bytes;
        if rows > 0 {
            // Decoded columns become a delivered chunk (base: no longer charged; R4: Decoded).
            let chunk_charge = match charge {
                Some(c) => Some(self.memory.reclassify(c, MemoryClass::DeliveredChunk)?),
                None => None,
            };
            let id = self.next_id;
            self.next_id += 1;
            self.chunks.insert(id, chunk_charge);
            self.output.rows += rows;
            self.output.chunks += 1;
            let unit = self.units.get(u.id as usize).map_or(0, |x| x.query_pos);
            if let Some(n) = self.output.rows_per_file.get_mut(unit) {
                *n += rows;
            }
            if let Some(n) = self.output.rows_per_unit.get_mut(u.id as usize) {
                *n += rows;
            }
            self.out.push_back(Action::Deliver(Chunk { id: ChunkId(id), file: u.file, rows, decoded_bytes }));
        } else if let Some(c) = charge {
            self.memory.release(c)?;
        }
        if let Some(r) = u.rgs.get_mut(rg) {
            match r.pending_decodes.pop_front() {
                Some(next) => self.decode_queue.push_back((u.id, next)),
                None => r.active_decodes = r.active_decodes.saturating_sub(1),
            }
        }
        self.finish_step(u, s)
    }
}
