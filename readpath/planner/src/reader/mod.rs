//! ClickHouse's query-level reader ([`ClickHouseReader`]), behind [`crate::Reader`].

use limits::{narrow, u32_of};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use coalescer::{CoalescePolicy, LazyCoalescer, NeededRange, ReadTask};
use layout::{ByteRange, FileIndex, Table};
use readahead::{
    Admission, AdmissionContext, Charge, ChargeRequest, IoPool, IssueQueue, Memory, MemoryClass,
    PlannedRead, ProfileEvent, ProfileEvents, Slot, SubRange, TaskReadiness,
};

use crate::error::PlanError;
use crate::plan::{plan_file, FilePlan, PlanInput, StepKind};
use crate::query::QuerySpec;
use crate::strategy::{Family, Strategy};
mod blocked;
mod controllers;
mod decode;
mod dense_ids;
mod id_set;
mod invariants;
mod owners;
mod reads;
mod steps;
mod units;
mod waiters;

use crate::types::{
    Action, CacheView, Chunk, ChunkId, DecodeId, DecodeRequest, Event, FileCache, Object,
    QueryOutput, ReadId, ReadKind, ReadRequest, Status, ThreadTime,
};

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
    /// Coupled mode: the step's memory charge, held until it finishes.
    charge: Option<Charge>,
}

#[derive(Debug, Default)]
struct RgState {
    open_steps: u32,
    dropped: bool,
    complete: bool,
    subgroups_done: u32,
    /// Where the search for the current subgroup's decode step starts: every step of the row
    /// group before it is an early stage, of an earlier subgroup, or finished ([`blocked`]).
    decode_search_from: u32,
    /// Decodes queued or running (at most `parallel_subgroups`).
    active_decodes: u32,
    /// Decode steps whose bytes are in, waiting for their subgroup's turn or a slot, in step
    /// (hence subgroup) order.
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
    plan: Arc<FilePlan>,
    entry_state: Vec<EntryState>,
    entry_pieces: Vec<u32>,
    entry_counted: Vec<bool>,
    entry_consumers: Vec<u32>,
    /// The first read serving each entry (`None` until one is created); split entries list
    /// the rest in `extra_reads`.
    entry_read: Vec<Option<u64>>,
    extra_reads: BTreeMap<u32, Vec<u64>>,
    /// The started steps waiting for each entry, by entry index: looked up on nearly every
    /// event.
    waiters: waiters::Waiters,
    lazy: Option<LazyCoalescer>,
    steps: Vec<StepState>,
    cursor: usize,
    started_not_ready: u32,
    /// Of those, the decode (page) steps: only they can block a parsing thread, so the
    /// blocked walk stops once it has seen this many.
    started_decodes_not_ready: u32,
    rgs: Vec<RgState>,
    first_incomplete: usize,
    rgs_done: usize,
    queue: IssueQueue,
    local_waiting: VecDeque<u64>,
    reads_running: u32,
    reads_alive: u32,
}

/// Who a read is for. Iceberg metadata reads belong to no unit and no stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// The Iceberg metadata phase (metadata JSON, manifest list, manifests), one at a time.
    Iceberg,
    /// A piece of unit `unit`'s footer (or its whole file), read by stream `stream`.
    Footer { unit: u32, stream: usize },
    /// Entries of unit `unit`'s plan (data pages, dictionaries, indexes, bloom filters).
    Entries { unit: u32, stream: usize },
}

impl Purpose {
    /// The unit the read is for (none for the Iceberg phase).
    fn unit(self) -> Option<u32> {
        match self {
            Purpose::Iceberg => None,
            Purpose::Footer { unit, .. } | Purpose::Entries { unit, .. } => Some(unit),
        }
    }

    /// Whether the read is a Prefetcher task (`scheduleTask` / `runTask`): counted in
    /// `ParquetReadTasks` and `ParquetReadTaskBytes`, in the bytes in flight, and fed to the
    /// first-byte and bandwidth fit (`updateReadStats`). A footer is not: `readFileMetaData`
    /// reads it with `Prefetcher::readSync`, outside all three (until 2026-12-07 the model
    /// counted footers there: on `many-small-files` half of the redesign's 9,968 read tasks and
    /// 491 MB of its 604 MB of task bytes were footers). Nor is the Iceberg phase's metadata.
    fn is_prefetch_task(self) -> bool {
        matches!(self, Purpose::Entries { .. })
    }

    /// The stream whose thread would run the read inline (none for the Iceberg phase).
    fn stream(self) -> Option<usize> {
        match self {
            Purpose::Iceberg => None,
            Purpose::Footer { stream, .. } | Purpose::Entries { stream, .. } => Some(stream),
        }
    }
}

/// The entry of each sub-range a read serves: most reads serve at most four, kept inline.
type Served = smallvec::SmallVec<[u32; 4]>;

/// Which thread runs a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    /// A thread of the IO pool.
    IoPool,
    /// A parsing thread, inline: a stream's own thread (`took_thread`: one it took for the
    /// read, counted in `decodes_running`), or a blocked decode task's
    /// (`Threads::blocked_by_read` says which).
    Inline { took_thread: bool },
}

/// A read's life: created, counted in flight by the controller, running, completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadStatus {
    /// Created; waiting in its unit's planning queue or behind the per-file limit.
    Created,
    /// Counted in flight by the controller; waiting for a thread in the IO pool.
    Issued,
    /// A thread runs it.
    Running(Runner),
    /// Every byte is in; kept until every entry it served is consumed.
    Completed,
}

struct ReadState {
    purpose: Purpose,
    status: ReadStatus,
    object: Object,
    range: ByteRange,
    kind: ReadKind,
    readiness: TaskReadiness,
    /// Entry of each sub-range, in the readiness order.
    served: Served,
    unconsumed: u32,
    /// Bytes of the distinct entries it serves (its range less the gaps it reads through):
    /// each entry's share of the charge is its length times `range / served_bytes`, as
    /// `startPrefetch` charges a handle `length x memory_amplification`.
    served_bytes: u64,
    charge: Option<Charge>,
}

struct RunningDecode {
    unit: u32,
    step: u32,
    charge: Option<Charge>,
}

/// What the strategy resolves to for this reader, fixed at construction.
struct Resolved {
    /// Planned issue (the redesign's planning queue, `input_format_parquet_min_bytes_in_flight`
    /// above 0).
    planned: bool,
    /// The redesign with planning off (`input_format_parquet_min_bytes_in_flight = 0`): the
    /// stages issue the reads, one subgroup per row group at a time, against the Compressed pool.
    stage_driven: bool,
    /// Steps start as they become eligible (planned or stage-driven), not by a cursor.
    eligible_driven: bool,
    /// Blocked decode tasks run their queued reads inline (the redesign; [`blocked`]).
    blocked_inline: bool,
    /// The `ColumnData` stage's threads per reader ([`blocked::stage_threads`]).
    column_data_threads: u32,
    /// The base reader's lazy coalescing (one read task at a time, as steps ask).
    lazy: bool,
    /// A stream's thread runs a read queued in the IO pool itself (the base reader).
    inline_reads: bool,
    /// ClickHouse reads a file's footer on the stream's own thread when the IO pool is busy
    /// (both generations: metadata is read synchronously by the thread that opens the file).
    inline_footer_reads: bool,
    /// One step of a unit at a time (the base reader's chain).
    serial: bool,
    /// Row groups split into subgroups of rows (ClickHouse).
    subgroups: bool,
    /// Pieces of a read become ready as their bytes arrive (R1).
    partial_readiness: bool,
    /// Decodes of one row group at once (R10).
    parallel_subgroups: u32,
    /// Files opened ahead per stream (R9).
    prefetch_ahead: u32,
    max_parsing_threads: u32,
    /// Columns read after PREWHERE.
    main_columns: Vec<u32>,
    /// Whether the query has PREWHERE columns (its main step is then not the first).
    prewhere: bool,
    /// Columns whose chunk parts a needed range may come from.
    part_columns: Vec<u32>,
}

/// Reads alive and what issues and runs them.
struct Io {
    /// A hash map: looked up on every event and only counted over, never walked in order
    /// (`rustc_hash` has no random state, so a run's bytes do not depend on it).
    reads: rustc_hash::FxHashMap<u64, ReadState>,
    pool: IoPool,
    /// One bytes-in-flight controller per open unit (each file's `Prefetcher` has its own).
    controllers: controllers::Controllers,
    /// Reads in the units' planning queues.
    planned_queued: u64,
    /// Reads behind a unit's per-file limit.
    local_queued: u64,
    /// Reads running inline on parsing threads.
    inline_running: u32,
    /// Per stream: whether its thread is running a read inline. A thread runs one read at a
    /// time, so a stream waiting on several queued reads runs only one of them itself.
    inline_by_stream: Vec<bool>,
}

impl Io {
    /// Whether `stream`'s thread can run a queued read inline (it runs one at a time).
    fn stream_thread_free(&self, stream: usize) -> bool {
        !self.inline_by_stream.get(stream).copied().unwrap_or(false)
    }

    fn set_stream_thread(&mut self, stream: usize, busy: bool) {
        if let Some(b) = self.inline_by_stream.get_mut(stream) {
            debug_assert_ne!(*b, busy, "stream {stream}'s thread runs one read at a time");
            *b = busy;
        }
    }
}

use owners::{Asker, Owners};

/// `start_steps`'s buffers, kept between calls (emptied, with their capacity) so that starting
/// steps allocates nothing once they have grown: the entries to read, who each is read for,
/// the steps ready at once.
#[derive(Debug, Default)]
struct StartScratch {
    to_read: Vec<u32>,
    owner: Owners,
    ready_now: Vec<u32>,
    /// `whole_short_chunks`'s (chunk, earliest owner) pairs.
    chunks: Vec<(u32, Option<(u32, u32)>)>,
    /// Sorts `to_read` and drops its repeats.
    ids: dense_ids::DenseIds,
}

/// The parsing threads: decodes, inline reads on threads of their own, blocked decode tasks.
struct Threads {
    /// Decodes running plus inline reads that hold a thread of their own.
    decodes_running: u32,
    /// Inline reads that hold a parsing thread of their own (counted in `decodes_running`).
    inline: u32,
    decode_queue: decode::DecodeQueue,
    /// Whether `decode_queue` may hold a decode that can start now.
    scan_needed: bool,
    /// Running decodes by id: a hash map, looked up on every decode event and only counted
    /// over (`rustc_hash` has no random state).
    decodes: rustc_hash::FxHashMap<u64, RunningDecode>,
    /// Decodes running per unit (the `ColumnData` stage's tasks in progress).
    decoding_by_unit: Vec<u32>,
    /// Decode tasks holding a thread while their bytes are not in: per unit id, by step.
    /// Changed only through [`Threads::block`] and [`Threads::unblock`], which keep
    /// `blocked_total`. Per unit, not one map keyed by (unit, step): the blocked-task pass
    /// walks a woken unit's tasks, and a range seek per unit was about 14% of a run when every
    /// pump walked every unit; each unit's tasks in a `Vec` sorted by step, not a map, for the
    /// same walk (a unit has at most the `ColumnData` stage's threads blocked).
    blocked: Vec<Vec<(u32, blocked::BlockedTask)>>,
    /// Tasks in `blocked`, all units.
    blocked_total: u32,
    /// A reused buffer of one unit's blocked steps (`blocked_tasks_of`, on nearly every event).
    steps_scratch: Vec<u32>,
    /// The blocked task running each inline read (a hash map: checked in any order).
    blocked_by_read: rustc_hash::FxHashMap<u64, (u32, u32)>,
    /// The units the blocked-task pass visits next.
    wake: blocked::BlockedWake,
    /// How the threads spent the run, as integrals over time.
    time: ThreadTime,
}

/// Whether unit `uid` has a free `ColumnData` slot (see `column_data_slot_free`), from the
/// threads' fields alone, so that a scan borrowing the decode queue can ask it.
fn slot_free_in(
    gated: bool,
    cap: u32,
    decoding_by_unit: &[u32],
    blocked: &[Vec<(u32, blocked::BlockedTask)>],
    uid: u32,
) -> bool {
    !gated || decoding_in(decoding_by_unit, uid) + blocked_count_in(blocked, uid) < cap
}

/// [`Threads::decoding`] from the field alone (a scan that borrows the decode queue reads it).
fn decoding_in(decoding_by_unit: &[u32], uid: u32) -> u32 {
    decoding_by_unit.get(uid as usize).copied().unwrap_or(0)
}

/// [`Threads::blocked_count`] from the field alone.
fn blocked_count_in(blocked: &[Vec<(u32, blocked::BlockedTask)>], uid: u32) -> u32 {
    blocked.get(uid as usize).map_or(0, |m| u32_of(m.len()))
}

impl Threads {
    /// Threads held: decodes, inline reads on threads of their own (both in
    /// `decodes_running`) and blocked tasks.
    fn held(&self) -> u32 {
        self.decodes_running + self.blocked_total
    }

    /// Blocked tasks of unit `uid`, by (unit, step), in step order.
    fn blocked_of(&self, uid: u32) -> impl Iterator<Item = ((u32, u32), &blocked::BlockedTask)> {
        self.blocked
            .get(uid as usize)
            .into_iter()
            .flat_map(move |m| m.iter().map(move |(s, t)| ((uid, *s), t)))
    }

    /// How many decodes of unit `uid` run (its `ColumnData` tasks in progress).
    fn decoding(&self, uid: u32) -> u32 {
        decoding_in(&self.decoding_by_unit, uid)
    }

    /// How many tasks of unit `uid` are blocked.
    fn blocked_count(&self, uid: u32) -> u32 {
        blocked_count_in(&self.blocked, uid)
    }

    /// The blocked task of step `s` of unit `uid`, if it is blocked.
    fn blocked_task_mut(&mut self, (uid, s): (u32, u32)) -> Option<&mut blocked::BlockedTask> {
        let tasks = self.blocked.get_mut(uid as usize)?;
        let i = tasks.binary_search_by_key(&s, |(step, _)| *step).ok()?;
        tasks.get_mut(i).map(|(_, t)| t)
    }

    /// Step `s` of unit `uid` holds a thread while it waits; false if it already did. For a
    /// walk that asks in increasing step order: `from` is where the walk's last step was found
    /// or put (0 to begin), and the search goes on from there, one pass over the unit's tasks
    /// for the whole walk (a binary search for each step was a third of the blocked-task pass
    /// on `single-large-file`, whose walk asks about every waiting row group's step).
    fn block_in_order(
        &mut self,
        uid: u32,
        s: u32,
        task: blocked::BlockedTask,
        from: &mut usize,
    ) -> bool {
        let i = uid as usize;
        if self.blocked.len() <= i {
            self.blocked.resize_with(i + 1, Vec::new);
        }
        let Some(tasks) = self.blocked.get_mut(i) else {
            return false;
        };
        debug_assert!(
            tasks
                .get(..*from)
                .is_some_and(|before| before.iter().all(|(t, _)| *t < s)),
            "steps asked in increasing order"
        );
        let mut at = *from;
        while tasks.get(at).is_some_and(|(step, _)| *step < s) {
            at += 1;
        }
        *from = at;
        if tasks.get(at).is_some_and(|(step, _)| *step == s) {
            return false;
        }
        tasks.insert(at, (s, task));
        self.blocked_total += 1;
        true
    }

    /// Step `s` of unit `uid` no longer holds a thread: its task, if it was blocked.
    fn unblock(&mut self, uid: u32, s: u32) -> Option<blocked::BlockedTask> {
        let tasks = self.blocked.get_mut(uid as usize)?;
        let i = tasks.binary_search_by_key(&s, |(step, _)| *step).ok()?;
        let (_, task) = tasks.remove(i);
        decrement(&mut self.blocked_total);
        Some(task)
    }
}

/// Units (files or buckets of row groups) and the streams that read them.
struct Units {
    list: Vec<Unit>,
    /// The next unit to open.
    next: usize,
    done: usize,
    /// Per stream, its open units; the front one is current.
    streams: Vec<VecDeque<u32>>,
    open: Vec<Option<Box<OpenUnit>>>,
    /// The ids of the open units, sorted: a `Vec`, not a set, because passes copy it to walk
    /// it and units open and close rarely ([`Units::open_id`], [`Units::close_id`]).
    open_ids: Vec<u32>,
    /// A buffer reused by the passes over `open_ids` or `queued` (a pass may open or close
    /// units, so it walks a copy); [`Units::take_open_ids`].
    open_ids_scratch: Vec<u32>,
    /// Units whose planning queue may hold reads, sorted: every unit with a non-empty queue
    /// is in it (added at each push, dropped when the issue pass finds its queue empty), so
    /// that pass walks these, not every open unit (it polled 160 queues in 1.3 M open-unit
    /// visits on `fs-cache-cold`).
    queued: Vec<u32>,
    /// Units whose cursor may advance.
    dirty: id_set::IdSet,
    /// (unit, step) that may start now (eligible-driven).
    eligible: Vec<(u32, u32)>,
    /// A buffer for one unit's batch of `eligible`, reused by every pump.
    batch_scratch: Vec<u32>,
    /// Steps the Compressed pool refused (stage-driven): eligible again when memory frees.
    parked: Vec<(u32, u32)>,
    /// Units whose next step memory refused (coupled): dirty again when memory frees.
    memory_blocked: id_set::IdSet,
    /// Closed units' vectors, for units that open later ([`UnitBuffers`]).
    spare: Vec<UnitBuffers>,
}

/// The most closed units' vectors [`Units::spare`] keeps. A stream opens its next unit as its
/// current one finishes, before the finished one closes, and a new reader starts with none:
/// a stream's first opens allocate (on `iceberg-bench`, a reader per query, about two opens in
/// three), later ones mostly find a spare.
const MAX_SPARE_UNITS: usize = 8;

/// The vectors of a closed unit, kept for a unit that opens later and refilled for its plan:
/// opening a unit made about a dozen allocations and closing it freed them again
/// (`many-small-files` opens 7,476 units).
#[derive(Debug, Default)]
struct UnitBuffers {
    footer_reads: VecDeque<ByteRange>,
    entry_state: Vec<EntryState>,
    entry_pieces: Vec<u32>,
    entry_counted: Vec<bool>,
    entry_consumers: Vec<u32>,
    entry_read: Vec<Option<u64>>,
    waiters: waiters::Waiters,
    steps: Vec<StepState>,
    rgs: Vec<RgState>,
    local_waiting: VecDeque<u64>,
}

impl UnitBuffers {
    /// The vectors of `u`, which is closed.
    fn of(u: OpenUnit) -> UnitBuffers {
        debug_assert!(u.phase == Phase::Done && u.reads_alive == 0);
        UnitBuffers {
            footer_reads: u.footer_reads,
            entry_state: u.entry_state,
            entry_pieces: u.entry_pieces,
            entry_counted: u.entry_counted,
            entry_consumers: u.entry_consumers,
            entry_read: u.entry_read,
            waiters: u.waiters,
            steps: u.steps,
            rgs: u.rgs,
            local_waiting: u.local_waiting,
        }
    }
}

impl UnitBuffers {
    /// Refilled for a unit of `plan` that opens now: every step waiting on its deps, every
    /// entry idle, nothing waiting or queued (the footer reads are the opener's).
    fn fill_for(&mut self, plan: &FilePlan) {
        let n_entries = plan.entries.len();
        clear_for(&mut self.steps, plan.steps.len());
        self.steps.extend(plan.steps.iter().map(|s| StepState {
            status: StepStatus::Waiting,
            unmet: u32_of(plan.deps_of(s).len()),
            pending: 0,
            charge: None,
        }));
        clear_for(&mut self.rgs, plan.row_groups.len());
        self.rgs.extend(plan.row_groups.iter().map(|rg| RgState {
            open_steps: u32_of(rg.steps.len()),
            ..RgState::default()
        }));
        refill(&mut self.entry_state, n_entries, EntryState::Idle);
        refill(&mut self.entry_pieces, n_entries, 0);
        refill(&mut self.entry_counted, n_entries, false);
        refill(&mut self.entry_read, n_entries, None);
        clear_for(&mut self.entry_consumers, n_entries);
        self.entry_consumers
            .extend_from_slice(&plan.entry_consumers);
        self.waiters.reset(&plan.entry_consumers);
        self.local_waiting.clear();
    }
}

/// `v` emptied and refilled with `n` copies of `x`, in the memory it holds if that is enough.
fn refill<T: Clone>(v: &mut Vec<T>, n: usize, x: T) {
    clear_for(v, n);
    v.resize(n, x);
}

/// `v` emptied, with room for `n`: a vector too small is replaced, not grown (growing would
/// copy the old contents, which are dropped anyway).
fn clear_for<T>(v: &mut Vec<T>, n: usize) {
    v.clear();
    if v.capacity() < n {
        *v = Vec::with_capacity(n);
    }
}

impl Units {
    /// A copy of the open units' ids, in the reused buffer; give it back with
    /// [`Units::return_open_ids`].
    fn take_open_ids(&mut self) -> Vec<u32> {
        let mut ids = std::mem::take(&mut self.open_ids_scratch);
        ids.clear();
        ids.extend_from_slice(&self.open_ids);
        ids
    }

    /// Unit `uid` is open.
    fn open_id(&mut self, uid: u32) {
        if let Err(at) = self.open_ids.binary_search(&uid) {
            self.open_ids.insert(at, uid);
        }
    }

    /// Unit `uid` is closed.
    fn close_id(&mut self, uid: u32) {
        if let Ok(at) = self.open_ids.binary_search(&uid) {
            self.open_ids.remove(at);
        }
    }

    fn return_open_ids(&mut self, ids: Vec<u32>) {
        self.open_ids_scratch = ids;
    }

    /// Unit `uid`'s planning queue holds a read.
    fn note_queued(&mut self, uid: u32) {
        if let Err(at) = self.queued.binary_search(&uid) {
            self.queued.insert(at, uid);
        }
    }
}

/// The Iceberg metadata phase: its reads, one at a time, before any data file opens.
#[derive(Debug)]
enum IcebergPhase {
    /// Reads still to issue, and whether one is running.
    Reading {
        queue: VecDeque<(Object, u64)>,
        running: bool,
    },
    /// Over (or none: no Iceberg table, or its metadata cache is warm).
    Done,
}

/// ClickHouse's Parquet reader (both generations; see [`crate::Reader`] for the contract and
/// the disciplines).
pub(crate) struct ClickHouseReader {
    table: Arc<Table>,
    query: QuerySpec,
    strategy: Strategy,
    policy: CoalescePolicy,
    cfg: Resolved,
    io: Io,
    threads: Threads,
    units: Units,
    iceberg: IcebergPhase,
    memory: Memory,
    /// Memory was released since the last pump: what it refused may try again.
    memory_freed: bool,
    /// The last pump ended with nothing to do, and no event since could have changed that:
    /// the next poll returns `None` without pumping. Every event clears it except a first byte
    /// and a progress report that serves no range and frees no issue budget (those change
    /// nothing a pump reads); the driver's own wake-ups (a CPU stand-in, a cache's download)
    /// reach the reader with no event at all.
    quiescent: bool,
    events: ProfileEvents,
    /// Delivered chunks not yet consumed, with their charges (a hash map: only counted over).
    chunks: rustc_hash::FxHashMap<u64, Option<Charge>>,
    /// The entries a progress report or a completion made ready, copied out of their read
    /// (a buffer kept, not a vector per report).
    ready_scratch: Vec<u32>,
    /// `create_reads`' tasks with the entries each serves (a buffer kept across calls).
    tasks_scratch: Vec<(ReadTask, Served)>,
    /// The ranges `create_reads` hands a batch coalescer (a buffer kept across calls).
    needed_scratch: Vec<NeededRange>,
    /// One counter for read, decode and chunk ids.
    next_id: u64,
    out: VecDeque<Action>,
    output: QueryOutput,
    error: Option<PlanError>,
    started: bool,
    now_ns: u64,
    /// Whether to keep what the plans needed ([`Reader::take_needed`]).
    record_needed: bool,
    /// Plans shared with the other readers of the table, if the driver gave a cache.
    plans: Option<Arc<crate::PlanCache>>,
    /// This reader's query key's id in `plans` (`PlanCache::query_id`), once asked.
    plan_query: Option<u32>,
    needed: Vec<crate::needed::NeededRange>,
    /// Files whose footer is already in `needed` (buckets of a file share it).
    footers_noted: BTreeSet<FileIndex>,
    /// See [`StartScratch`]; empty between calls.
    start_scratch: StartScratch,
}

/// Takes one from a counter that cannot be 0 here: every decrement pairs with an earlier
/// increment of the same transition (asserted in debug builds).
#[track_caller]
fn decrement<T>(counter: &mut T)
where
    T: Copy + Default + PartialEq + std::ops::SubAssign + From<u8>,
{
    debug_assert!(*counter != T::default(), "a counter would go below 0");
    *counter -= T::from(1);
}

fn memory_class(kind: ReadKind) -> MemoryClass {
    match kind {
        ReadKind::IcebergMetadata | ReadKind::Footer | ReadKind::Head | ReadKind::List => {
            MemoryClass::Footer
        }
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

impl ClickHouseReader {
    /// Builds the reader: validates the query against the table and the strategy's
    /// settings, splits files into units (row-group buckets when asked) and streams.
    pub fn new(
        table: Arc<Table>,
        query: QuerySpec,
        strategy: Strategy,
    ) -> Result<ClickHouseReader, PlanError> {
        query.validate(&table)?;
        let policy = strategy.coalesce_policy();
        policy.validate()?;
        let planned = strategy.planned_issue();
        let mut units = Vec::new();
        for (query_pos, &file) in query.files.iter().enumerate() {
            let n_rg = table
                .files
                .get(file as usize)
                .map_or(0, |f| u32_of(f.row_groups.len()));
            let buckets = if strategy.row_group_buckets {
                (n_rg / strategy.row_group_buckets_min_row_groups.max(1))
                    .min(strategy.max_threads)
                    .max(1)
            } else {
                1
            };
            for b in 0..buckets {
                let lo = narrow::<u64, u32>(n_rg as u64 * b as u64 / buckets as u64);
                let hi = narrow::<u64, u32>(n_rg as u64 * (b as u64 + 1) / buckets as u64);
                units.push(Unit {
                    file,
                    query_pos,
                    row_groups: lo..hi,
                });
            }
        }
        let n_streams = (strategy.max_threads as usize).min(units.len()).max(1);
        let memory = Memory::new(strategy.memory_settings(u32_of(n_streams)))?;
        let io_pool = IoPool::new(strategy.io_threads())?;
        let controllers = controllers::Controllers::new(strategy.controller_config())?;
        let main_columns: Vec<u32> = query
            .columns
            .iter()
            .copied()
            .filter(|c| !query.prewhere_columns.contains(c))
            .collect();
        let iceberg = match (&table.iceberg, query.iceberg_metadata_cache_warm) {
            (Some(m), false) => {
                let mut v = vec![
                    (Object::IcebergMetadataJson, m.metadata_json_bytes),
                    (Object::IcebergManifestList, m.manifest_list_bytes),
                ];
                v.extend(
                    m.manifest_bytes
                        .iter()
                        .enumerate()
                        .map(|(i, b)| (Object::IcebergManifest(u32_of(i)), *b)),
                );
                IcebergPhase::Reading {
                    queue: v.into_iter().filter(|(_, b)| *b > 0).collect(),
                    running: false,
                }
            }
            _ => IcebergPhase::Done,
        };
        let clickhouse = strategy.family() == Family::ClickHouse;
        let stage_driven = clickhouse && !planned && strategy.mechanism(5);
        let eligible_driven = planned || stage_driven;
        let column_data_threads = match (clickhouse, eligible_driven) {
            (false, _) => 0,
            // The base reader's chain is serial: one step of a unit at a time.
            (true, false) => 1,
            (true, true) => blocked::stage_threads(
                strategy.max_parsing_threads.max(1),
                blocked::DECODE_THREAD_FRACTION,
                n_streams,
            ),
        };
        let mut part_columns: Vec<u32> = query
            .columns
            .iter()
            .chain(&query.prewhere_columns)
            .chain(&query.column_index_columns)
            .chain(&query.bloom_columns)
            .copied()
            .collect();
        part_columns.sort_unstable();
        part_columns.dedup();
        let output = QueryOutput {
            rows_per_file: vec![0; query.files.len()],
            rows_per_unit: vec![0; units.len()],
            ..QueryOutput::default()
        };
        let cfg = Resolved {
            planned,
            stage_driven,
            eligible_driven,
            blocked_inline: clickhouse && eligible_driven,
            column_data_threads,
            lazy: !planned && matches!(policy, CoalescePolicy::ClickHouseBase { .. }),
            inline_reads: clickhouse && !eligible_driven,
            inline_footer_reads: clickhouse,
            serial: clickhouse && !eligible_driven,
            subgroups: clickhouse,
            partial_readiness: strategy.mechanism(1),
            parallel_subgroups: if strategy.mechanism(10) {
                strategy.parallel_subgroups.max(1)
            } else {
                1
            },
            prefetch_ahead: if strategy.mechanism(9) {
                strategy.files_prefetch_ahead
            } else {
                0
            },
            max_parsing_threads: strategy.max_parsing_threads.max(1),
            main_columns,
            prewhere: !query.prewhere_columns.is_empty(),
            part_columns,
        };
        let io = Io {
            reads: rustc_hash::FxHashMap::default(),
            pool: io_pool,
            controllers,
            planned_queued: 0,
            local_queued: 0,
            inline_running: 0,
            inline_by_stream: vec![false; n_streams],
        };
        let threads = Threads {
            decodes_running: 0,
            inline: 0,
            decode_queue: decode::DecodeQueue::default(),
            scan_needed: false,
            decodes: rustc_hash::FxHashMap::default(),
            decoding_by_unit: Vec::new(),
            blocked: Vec::new(),
            steps_scratch: Vec::new(),
            blocked_total: 0,
            blocked_by_read: rustc_hash::FxHashMap::default(),
            wake: blocked::BlockedWake::default(),
            time: ThreadTime {
                threads: strategy.max_parsing_threads.max(1),
                ..ThreadTime::default()
            },
        };
        let units = Units {
            open: (0..units.len()).map(|_| None).collect(),
            streams: vec![VecDeque::new(); n_streams],
            list: units,
            next: 0,
            done: 0,
            open_ids: Vec::new(),
            open_ids_scratch: Vec::new(),
            queued: Vec::new(),
            dirty: id_set::IdSet::default(),
            eligible: Vec::new(),
            batch_scratch: Vec::new(),
            parked: Vec::new(),
            memory_blocked: id_set::IdSet::default(),
            spare: Vec::new(),
        };
        Ok(ClickHouseReader {
            table,
            query,
            strategy,
            policy,
            cfg,
            io,
            threads,
            units,
            iceberg,
            memory,
            memory_freed: false,
            quiescent: false,
            events: ProfileEvents::new(),
            chunks: rustc_hash::FxHashMap::default(),
            ready_scratch: Vec::new(),
            tasks_scratch: Vec::new(),
            needed_scratch: Vec::new(),
            next_id: 0,
            out: VecDeque::new(),
            output,
            error: None,
            started: false,
            now_ns: 0,
            record_needed: false,
            plans: None,
            plan_query: None,
            needed: Vec::new(),
            footers_noted: BTreeSet::new(),
            start_scratch: StartScratch::default(),
        })
    }

    // ---------------------------------------------------------------- getters

    /// Whether [`Self::poll_action`] would find nothing to do, at any time, until the next
    /// event or timeout: no action waits and no pump is due (its last one made no progress
    /// and released no memory).
    pub fn is_quiescent(&self) -> bool {
        self.quiescent && self.out.is_empty()
    }

    /// Whether every selected row was delivered and consumed.
    pub fn is_finished(&self) -> bool {
        self.error.is_none()
            && self.started
            && matches!(self.iceberg, IcebergPhase::Done)
            && self.units.done == self.units.list.len()
            && self.chunks.is_empty()
            && self.threads.decodes.is_empty()
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

    /// Keep every range the plans need, for [`Reader::take_needed`]. Call before the first
    /// `poll_action`; off by default (it costs memory per planned range).
    pub fn record_needed(&mut self, on: bool) {
        self.record_needed = on;
    }

    /// See [`crate::Reader::share_plans`].
    pub fn share_plans(&mut self, plans: Arc<crate::PlanCache>) {
        self.plans = Some(plans);
        // An id in another cache means nothing here.
        self.plan_query = None;
    }

    /// Every range the reader's plans needed so far, before coalescing, in query order (file by
    /// file, the footer first, then by offset). Empty unless [`Reader::record_needed`].
    pub fn take_needed(&mut self) -> Result<Vec<crate::needed::NeededRange>, PlanError> {
        let mut v = std::mem::take(&mut self.needed);
        crate::needed::sort(&mut v);
        Ok(v)
    }

    /// How the parsing threads spent the run so far.
    pub fn thread_time(&self) -> ThreadTime {
        self.threads.time
    }

    /// The strategy the reader runs.
    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    /// A cheap snapshot (O(budgets)).
    pub fn status(&self) -> Status {
        let c = &self.io.controllers;
        Status {
            bytes_in_flight: c.bytes_in_flight(),
            target_bytes_in_flight: c.target_bytes(),
            peak_bytes_in_flight: c.peak_bytes_in_flight(),
            reads_running: self.io.pool.running() as u64 + self.io.inline_running as u64,
            reads_queued: self.io.pool.waiting() as u64
                + self.io.planned_queued
                + self.io.local_queued,
            inline_reads_running: self.io.inline_running as u64,
            io_threads: self.io.pool.capacity(),
            decodes_running: self.threads.decodes_running,
            decodes_queued: self.threads.decode_queue.len() as u64,
            chunks_outstanding: self.chunks.len() as u64,
            open_files: self.units.streams.iter().map(|s| s.len() as u64).sum(),
            memory: self.memory.usage(),
            peak_memory_bytes: self.memory.total_peak_bytes(),
        }
    }

    // ---------------------------------------------------------------- events in

    /// Inlined, its error apart: it runs on every call of the API (about 500,000 times on
    /// `fs-cache-cold`).
    #[inline]
    fn set_now(&mut self, now_ns: u64) -> bool {
        if self.error.is_some() {
            return false;
        }
        if now_ns < self.now_ns {
            self.time_went_backwards(now_ns);
            return false;
        }
        let dt = now_ns - self.now_ns;
        if dt > 0 {
            let busy = u32_of(self.threads.decodes.len());
            let waiting = self.threads.blocked_total;
            self.threads
                .time
                .advance(dt, busy, waiting, self.threads.inline);
        }
        self.now_ns = now_ns;
        true
    }

    #[cold]
    #[inline(never)]
    fn time_went_backwards(&mut self, now_ns: u64) {
        self.error = Some(PlanError::Contract(format!(
            "time went backwards: now_ns {now_ns} after {}; every now_ns must be at least the previous one",
            self.now_ns
        )));
    }

    fn fail(&mut self, e: impl Into<PlanError>) {
        if self.error.is_none() {
            self.error = Some(e.into());
        }
    }

    /// Timers: none, so nothing to do.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        self.set_now(now_ns);
        self.quiescent = false;
    }

    /// Feeds one event that happened at `now_ns`.
    pub fn handle(&mut self, now_ns: u64, event: Event) {
        if !self.set_now(now_ns) {
            return;
        }
        // Whether the event may let a pump make progress.
        let r = match event {
            Event::ReadFirstByte { id } => self.on_first_byte(id).map(|()| false),
            Event::ReadProgress { id, bytes_ready } => self.on_progress(id, bytes_ready),
            Event::ReadCompleted { id, source } => {
                self.on_read_completed(id, source).map(|()| true)
            }
            Event::ReadFailed { id, reason } => self.on_read_failed(id, reason).map(|()| true),
            Event::DecodeCompleted { id } => self.on_decode_completed(id).map(|()| true),
            Event::ChunkConsumed { id } => self.on_chunk_consumed(id),
        };
        match r {
            Ok(may_progress) => self.quiescent &= !may_progress,
            Err(e) => self.fail(e),
        }
        self.debug_check_invariants();
    }

    fn read_mut(&mut self, id: ReadId) -> Result<&mut ReadState, PlanError> {
        self.io.reads.get_mut(&id.0).ok_or_else(|| {
            PlanError::Contract(format!("event for read {} which is not running", id.0))
        })
    }

    fn on_first_byte(&mut self, id: ReadId) -> Result<(), PlanError> {
        let now = self.now_ns;
        let read = self.read_mut(id)?;
        if let (true, Some(uid)) = (read.purpose.is_prefetch_task(), read.purpose.unit()) {
            debug_assert!(matches!(read.status, ReadStatus::Running(_)));
            self.io
                .controllers
                .with(uid, |c| c.on_first_byte(now, id.0))??;
        }
        Ok(())
    }

    /// True if the report may let a pump make progress: it served a range. (A read's bytes
    /// stay in flight until it ends, so progress frees no room under the target.)
    fn on_progress(&mut self, id: ReadId, bytes_ready: u64) -> Result<bool, PlanError> {
        let now = self.now_ns;
        let read = self.io.reads.get_mut(&id.0).ok_or_else(|| {
            PlanError::Contract(format!("progress for read {} which is not running", id.0))
        })?;
        if !read.purpose.is_prefetch_task() {
            return Ok(false);
        }
        let newly = read.readiness.on_progress(bytes_ready, &mut self.events);
        let mut entries = std::mem::take(&mut self.ready_scratch);
        entries.clear();
        entries.extend_from_slice(read.served.get(newly).unwrap_or_default());
        let uid = read.purpose.unit();
        let charged = match uid {
            Some(uid) => self
                .io
                .controllers
                .with(uid, |c| c.on_progress(now, id.0, bytes_ready))
                .and_then(|r| r.map_err(PlanError::from)),
            None => Ok(()),
        };
        let served = !entries.is_empty();
        if let (Ok(()), Some(uid)) = (&charged, uid) {
            self.entries_ready(uid, &entries);
        }
        self.ready_scratch = entries;
        charged?;
        Ok(served)
    }

    fn on_read_completed(
        &mut self,
        id: ReadId,
        source: readahead::ReadSource,
    ) -> Result<(), PlanError> {
        let now = self.now_ns;
        let read = self.io.reads.get_mut(&id.0).ok_or_else(|| {
            PlanError::Contract(format!("completion of read {} which is not running", id.0))
        })?;
        let ReadStatus::Running(runner) = read.status else {
            let what = if read.status == ReadStatus::Completed {
                "completed twice"
            } else {
                "completed before it was started"
            };
            return Err(PlanError::Contract(format!("read {} {what}", id.0)));
        };
        read.status = ReadStatus::Completed;
        let purpose = read.purpose;
        let newly = read.readiness.on_complete();
        let (uid, stream) = match purpose {
            Purpose::Iceberg => {
                self.io.reads.remove(&id.0);
                return self.iceberg_read_done();
            }
            Purpose::Footer { unit, stream } | Purpose::Entries { unit, stream } => (unit, stream),
        };
        if purpose.is_prefetch_task() {
            let events = &mut self.events;
            self.io
                .controllers
                .with(uid, |c| c.on_complete(now, id.0, source, events))??;
        }
        self.free_read_slot(id.0, uid, runner, stream);
        if let Purpose::Footer { .. } = purpose {
            self.io.reads.remove(&id.0);
            self.with_unit(uid, |r, u| r.footer_done(u))?;
        } else {
            // Copied out: marking them ready reaches the reads table.
            let mut entries = std::mem::take(&mut self.ready_scratch);
            entries.clear();
            if let Some(read) = self.io.reads.get(&id.0) {
                entries.extend_from_slice(read.served.get(newly).unwrap_or_default());
            }
            self.entries_ready(uid, &entries);
            self.ready_scratch = entries;
            self.maybe_forget_read(id.0)?;
        }
        Ok(())
    }

    fn on_read_failed(&mut self, id: ReadId, reason: String) -> Result<(), PlanError> {
        let read = self.io.reads.get(&id.0).ok_or_else(|| {
            PlanError::Contract(format!("failure of read {} which is not running", id.0))
        })?;
        Err(PlanError::ReadFailed {
            read_id: id.0,
            object: read.object.to_string(),
            range: read.range,
            reason,
        })
    }

    /// Frees the IO slot (or the inline decode thread) of a finished read, and starts what
    /// waited for it.
    fn free_read_slot(&mut self, id: u64, uid: u32, runner: Runner, stream: usize) {
        match runner {
            Runner::Inline { .. } if self.blocked_read_done(id) => {
                // A blocked decode task ran it: its wait is counted when its bytes are all in.
            }
            Runner::Inline { took_thread } => {
                // The base reader's stream thread ran it (its wait is the blocked task's, if any).
                self.io.set_stream_thread(stream, false);
                debug_assert!(self.io.inline_running > 0);
                self.io.inline_running -= 1;
                if took_thread {
                    debug_assert!(self.threads.decodes_running > 0 && self.threads.inline > 0);
                    self.threads.decodes_running -= 1;
                    self.threads.inline -= 1;
                }
                self.threads.scan_needed = true;
            }
            Runner::IoPool => {
                if let Some(next) = self.io.pool.release() {
                    self.start_read(next, Runner::IoPool);
                }
            }
        }
        let next_local = match self
            .units
            .open
            .get_mut(uid as usize)
            .and_then(|u| u.as_mut())
        {
            Some(u) => {
                debug_assert!(u.reads_running > 0 && u.reads_alive > 0);
                u.reads_running -= 1;
                u.reads_alive -= 1;
                u.local_waiting.pop_front()
            }
            None => None,
        };
        if let Some(next) = next_local {
            debug_assert!(self.io.local_queued > 0);
            self.io.local_queued -= 1;
            self.submit_read(uid, next);
        }
        self.maybe_close(uid);
    }

    fn on_decode_completed(&mut self, id: DecodeId) -> Result<(), PlanError> {
        let d = self.threads.decodes.remove(&id.0).ok_or_else(|| {
            PlanError::Contract(format!(
                "completion of decode {} which is not running",
                id.0
            ))
        })?;
        debug_assert!(self.threads.decodes_running > 0);
        self.threads.decodes_running -= 1;
        if let Some(n) = self.threads.decoding_by_unit.get_mut(d.unit as usize) {
            decrement(n);
        }
        self.threads.scan_needed = true;
        // Its `ColumnData` slot is free: the unit may block another task.
        self.threads.wake.wake(d.unit);
        self.with_unit(d.unit, |r, u| r.decode_done(u, d.step, d.charge))
    }

    /// A consumed chunk gives its memory back. True if that may let a pump make progress.
    fn on_chunk_consumed(&mut self, id: ChunkId) -> Result<bool, PlanError> {
        let charge = self.chunks.remove(&id.0).ok_or_else(|| {
            PlanError::Contract(format!(
                "chunk {} was not delivered or was already consumed",
                id.0
            ))
        })?;
        let Some(c) = charge else {
            self.threads.scan_needed = true;
            return Ok(true);
        };
        if self.quiescent && self.nothing_waits_for_memory() {
            // The pump this release would cause finds nothing to do (every consumption of
            // `fs-cache-cold`, 61,427 pumps); its flags are set as it would leave them: memory
            // not to retry, and the decode queue's scan wanted unless it would stop at once.
            debug_assert!(
                !self.memory_freed,
                "a quiescent reader has no release to retry"
            );
            self.memory.release(c)?;
            self.threads.scan_needed = self.threads.decode_queue.is_empty()
                || self.threads.held() >= self.cfg.max_parsing_threads;
            return Ok(false);
        }
        self.release_charge(c)?;
        self.threads.scan_needed = true;
        Ok(true)
    }

    /// Whether no planning queue's head waits for memory: each queue holding reads was last
    /// stopped by the controller's target (which memory does not move), not by memory. Read
    /// at quiescence, when the last pump polled every queue until it issued nothing.
    fn no_queue_head_waits_for_memory(&self) -> bool {
        self.io.planned_queued == 0
            || self.units.queued.iter().all(|&uid| {
                self.units
                    .open
                    .get(uid as usize)
                    .and_then(|u| u.as_deref())
                    .is_none_or(|u| {
                        u.queue.is_empty()
                            || matches!(
                                u.queue.last_blocked(),
                                Some(readahead::Blocked::Target { .. })
                            )
                    })
            })
    }

    /// Whether memory freed now would let no stage of a pump go on: no unit's next step and no
    /// parked stage-driven step was refused, no planning queue's head waits for memory, and the decode
    /// queue's scan would stop before asking memory (the queue is empty, every parsing thread
    /// is held, or no unit with a queued decode has a free `ColumnData` slot).
    fn nothing_waits_for_memory(&self) -> bool {
        self.units.memory_blocked.is_empty()
            && self.units.parked.is_empty()
            && self.no_queue_head_waits_for_memory()
            && (self.threads.decode_queue.is_empty()
                || self.threads.held() >= self.cfg.max_parsing_threads
                || !self.some_queued_unit_may_start())
    }

    /// Gives a charge back and lets whatever memory refused try again.
    fn release_charge(&mut self, charge: Charge) -> Result<(), PlanError> {
        self.memory.release(charge)?;
        self.memory_freed = true;
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
        if self.quiescent {
            self.debug_check_quiescent(cache);
            return None;
        }
        if let Err(e) = self.pump(cache) {
            self.fail(e);
            return None;
        }
        self.debug_check_invariants();
        // A pump ends with a pass that made no progress, so another before the next event
        // would make none either, unless its last pass released memory (the next retries
        // what memory refused).
        self.quiescent = !self.memory_freed;
        self.out.pop_front()
    }

    /// Debug builds check a skipped pump: run it, and it must find nothing to do (a pump that
    /// makes no progress changes nothing, so release and debug builds still agree).
    fn debug_check_quiescent(&mut self, cache: &dyn CacheView) {
        if cfg!(debug_assertions) && self.error.is_none() {
            let progressed = self.pump(cache);
            assert!(
                matches!(progressed, Ok(false)) && self.out.is_empty(),
                "a quiescent reader found work at {} ns: {progressed:?}, {} actions",
                self.now_ns,
                self.out.len()
            );
        }
    }

    /// Runs every stage until none progresses. True if any progressed.
    ///
    /// Actions pile up in `out` meanwhile: handing each out as soon as it is made, and pumping
    /// again once the driver has taken it, gave the same actions in the same order (the driver
    /// acts on them without telling the reader anything, and the one thing of the driver's a
    /// pass reads, the cache view, changes only when a fetch completes, an event), at the cost
    /// of a pump that found nothing after each batch: about a third of all pumps.
    ///
    /// The stages (`start_steps`, `advance_cursor`, `issue_from_queues`, `run_blocked_tasks`,
    /// `start_decodes`) are `#[inline(never)]`: kept out of this body, its frame stays small
    /// (1.5-4% fewer instructions over the shipped scenarios) and a profile names each stage.
    fn pump(&mut self, cache: &dyn CacheView) -> Result<bool, PlanError> {
        let mut any = false;
        if !self.iceberg_phase() {
            return Ok(!self.out.is_empty());
        }
        if !self.started {
            self.started = true;
            for _round in 0..=self.cfg.prefetch_ahead {
                for s in 0..self.units.streams.len() {
                    self.open_next_unit(s)?;
                }
            }
        }
        loop {
            if self.memory_freed {
                // Units whose next step memory refused may go on now.
                self.memory_freed = false;
                self.threads.scan_needed = true;
                self.wake_units_with_compressed_room();
                self.units.dirty.append(&mut self.units.memory_blocked);
                let parked = std::mem::take(&mut self.units.parked);
                self.units.eligible.extend(parked);
            }
            let mut progressed = false;
            while let Some(&(uid, _)) = self.units.eligible.first() {
                // One batch per unit: every eligible step of that unit coalesces together.
                let mut batch = std::mem::take(&mut self.units.batch_scratch);
                batch.clear();
                batch.extend(
                    self.units
                        .eligible
                        .iter()
                        .filter(|(u, _)| *u == uid)
                        .map(|(_, s)| *s),
                );
                self.units.eligible.retain(|(u, _)| *u != uid);
                let r = self.with_unit(uid, |r, u| {
                    if r.cfg.stage_driven {
                        let admitted = r.admit_stage_driven(u, &batch)?;
                        r.start_steps(u, &admitted, cache)
                    } else {
                        r.start_steps(u, &batch, cache)
                    }
                });
                self.units.batch_scratch = batch;
                r?;
                progressed = true;
            }
            while let Some(uid) = self.units.dirty.pop_first() {
                self.with_unit(uid, |r, u| r.advance_cursor(u, cache))?;
                progressed = true;
            }
            if self.cfg.planned {
                progressed |= self.issue_from_queues()?;
            }
            progressed |= self.run_blocked_tasks()?;
            progressed |= self.start_decodes()?;
            any |= progressed;
            if !progressed {
                break;
            }
        }
        Ok(any)
    }

    /// Runs the Iceberg metadata phase; true once it is over.
    fn iceberg_phase(&mut self) -> bool {
        let IcebergPhase::Reading { queue, running } = &mut self.iceberg else {
            return true;
        };
        if *running {
            return false;
        }
        let Some((object, bytes)) = queue.pop_front() else {
            self.iceberg = IcebergPhase::Done;
            return true;
        };
        *running = true;
        let id = self.next_id;
        self.next_id += 1;
        let range = ByteRange::new(0, bytes);
        let readiness = match TaskReadiness::new(bytes, Vec::new(), false) {
            Ok(r) => r,
            Err(e) => {
                self.fail(e);
                return false;
            }
        };
        let read = ReadState {
            purpose: Purpose::Iceberg,
            status: ReadStatus::Running(Runner::IoPool),
            object,
            range,
            kind: ReadKind::IcebergMetadata,
            readiness,
            served: Served::new(),
            unconsumed: 0,
            served_bytes: 0,
            charge: None,
        };
        self.io.reads.insert(id, read);
        self.out.push_back(Action::Read(ReadRequest {
            id: ReadId(id),
            object,
            range,
            kind: ReadKind::IcebergMetadata,
            inline: false,
        }));
        false
    }

    /// The Iceberg phase's running read completed: the next one may go.
    fn iceberg_read_done(&mut self) -> Result<(), PlanError> {
        match &mut self.iceberg {
            IcebergPhase::Reading { queue, running } if *running => {
                *running = false;
                if queue.is_empty() {
                    self.iceberg = IcebergPhase::Done;
                }
                Ok(())
            }
            _ => Err(PlanError::Contract(
                "an Iceberg metadata read completed while none was running".to_string(),
            )),
        }
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
        let Some(mut u) = self.units.open.get_mut(uid as usize).and_then(Option::take) else {
            return Ok(R::default());
        };
        let r = f(self, &mut u);
        if let Some(slot) = self.units.open.get_mut(uid as usize) {
            *slot = Some(u);
        }
        self.maybe_close(uid);
        r
    }

    #[inline]
    fn maybe_close(&mut self, uid: u32) {
        let done = self
            .units
            .open
            .get(uid as usize)
            .and_then(|slot| slot.as_ref())
            .is_some_and(|u| u.phase == Phase::Done && u.reads_alive == 0);
        if done {
            self.close(uid);
        }
    }

    /// Drops closed unit `uid`, keeping its vectors for a unit that opens later. Out of line:
    /// [`Self::maybe_close`] runs after every visit of a unit, and closes few.
    #[inline(never)]
    fn close(&mut self, uid: u32) {
        let Some(u) = self.units.open.get_mut(uid as usize).and_then(Option::take) else {
            return;
        };
        self.io.controllers.close(uid);
        if self.units.spare.len() < MAX_SPARE_UNITS {
            self.units.spare.push(UnitBuffers::of(*u));
        }
    }
}
