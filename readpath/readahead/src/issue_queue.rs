//! The issue queue of one file (R5): a FIFO of planned reads, issued while bytes in flight stay
//! under the controller's target and the memory model admits their bytes. The read of the first
//! incomplete row group's current subgroup is privileged: always admitted, even out of FIFO
//! order, so the reader cannot deadlock. A Metadata-pool refusal at the head counts
//! `ParquetIssueQueueStalls` (once per blocked head read).

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use serde::{Deserialize, Serialize};

use crate::controller::InFlightController;
use crate::error::ReadaheadError;
use crate::events::{ProfileEvent, ProfileEvents};
use crate::memory::{Admission, Budget, Charge, ChargeRequest, Memory, MemoryClass, Pool, Refusal};

/// A read the planner wants issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRead {
    /// The caller's read id (the same id the controller and IO pool see).
    pub read_id: u64,
    /// Bytes of the read.
    pub bytes: u64,
    /// What the bytes are (selects the memory budget).
    pub class: MemoryClass,
    /// Row group the read serves.
    pub row_group: u32,
    /// Row subgroup within it (0 for reads that serve the whole row group, e.g. indexes).
    pub subgroup: u32,
}

/// What the planner knows at poll time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmissionContext {
    /// Decode tasks running now (base memory admission).
    pub running_tasks: u32,
    /// `(row_group, subgroup)` of the first incomplete row group's current subgroup, if any:
    /// reads of it are privileged.
    pub privileged: Option<(u32, u32)>,
    /// A blocked decode task takes its subgroup's queued reads (`takeQueuedReads`) rather than
    /// the pump issuing them (`pumpIssueQueue`): such reads are not counted in
    /// `ParquetPlannedReads`, which only the pump increments (until 2026-12-07 both were).
    pub demand: bool,
}

/// A read the queue released: issue it now (hand it to the IO pool) and hold the charge until
/// its bytes are freed.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "the charge of an issued read must be released exactly once"]
pub struct Issued {
    /// The read.
    pub read: PlannedRead,
    /// Its memory charge.
    pub charge: Charge,
    /// Whether it was the privileged read (admitted regardless of the target and memory).
    pub privileged: bool,
}

/// Why the head of the queue waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Blocked {
    /// The queue is empty.
    Empty,
    /// Bytes in flight would exceed the target.
    Target {
        /// The controller's target now.
        target_bytes: u64,
    },
    /// The memory model refused the head's bytes.
    Memory(Refusal),
}

/// One FIFO of planned reads (one per file, or per stream). Every operation is O(log n) or a
/// push at an end: the reads are kept by arrival sequence, with an index by
/// `(row_group, subgroup)` so that finding the privileged read behind a blocked head never
/// scans the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueQueue {
    stream: usize,
    /// The reads by arrival sequence: the first is the head.
    fifo: Fifo,
    /// `(row_group, subgroup)` -> arrival sequences of its waiting reads, ascending. A hash map
    /// (looked up on every poll, walked only by `cancel_row_group`, which sorts what it finds).
    by_subgroup: FxHashMap<(u32, u32), Waiting>,
    next_seq: u64,
    queued_bytes: u64,
    stalled_head: Option<u64>,
    last_blocked: Option<Blocked>,
}

/// The waiting reads of one `(row_group, subgroup)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Waiting {
    /// Their arrival sequences, ascending.
    seqs: SmallVec<[u64; 4]>,
    /// Their bytes (what the demand path would charge: looked up on every blocked-task
    /// admission).
    bytes: u64,
}

/// Reads by arrival sequence: (sequence, read) in a deque, the sequences ascending. A read
/// taken from the middle (a privileged one) leaves a hole (`None`) until the reads before it
/// are gone; the front is never a hole. A `BTreeMap` here walked a tree on every poll.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Fifo {
    slots: VecDeque<(u64, Option<PlannedRead>)>,
    live: usize,
}

impl Fifo {
    fn insert(&mut self, seq: u64, read: PlannedRead) {
        if self.slots.back().is_none_or(|&(last, _)| seq > last) {
            self.slots.push_back((seq, Some(read)));
        } else {
            match self.slots.binary_search_by_key(&seq, |&(s, _)| s) {
                Ok(at) => {
                    if let Some((_, slot)) = self.slots.get_mut(at) {
                        debug_assert!(slot.is_none(), "sequence {seq} queued twice");
                        *slot = Some(read);
                    }
                }
                Err(at) => self.slots.insert(at, (seq, Some(read))),
            }
        }
        self.live += 1;
    }

    fn remove(&mut self, seq: u64) -> Option<PlannedRead> {
        let at = self.slots.binary_search_by_key(&seq, |&(s, _)| s).ok()?;
        let read = self.slots.get_mut(at)?.1.take()?;
        self.live -= 1;
        while self.slots.front().is_some_and(|(_, r)| r.is_none()) {
            self.slots.pop_front();
        }
        // The front is never a hole, so the deque is empty exactly when no read is left.
        debug_assert_eq!(self.live == 0, self.slots.is_empty());
        Some(read)
    }

    /// The head: (its sequence, the read).
    fn first(&self) -> Option<(u64, &PlannedRead)> {
        let (seq, read) = self.slots.front()?;
        read.as_ref().map(|r| (*seq, r))
    }

    fn len(&self) -> usize {
        self.live
    }

    fn is_empty(&self) -> bool {
        self.live == 0
    }
}

impl IssueQueue {
    /// An empty queue whose reads charge memory for `stream`.
    pub fn new(stream: usize) -> IssueQueue {
        IssueQueue {
            stream,
            fifo: Fifo::default(),
            by_subgroup: FxHashMap::default(),
            next_seq: 0,
            queued_bytes: 0,
            stalled_head: None,
            last_blocked: None,
        }
    }

    /// The stream its charges go to.
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Appends a planned read (`ParquetPlannedReads` counts it when it is issued from the
    /// queue, as `pumpIssueQueue` does after `startPrefetch`: a read taken by the demand path or
    /// cancelled is not counted).
    pub fn push(&mut self, read: PlannedRead) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.insert(seq, read);
    }

    fn insert(&mut self, seq: u64, read: PlannedRead) {
        self.queued_bytes = self.queued_bytes.saturating_add(read.bytes);
        let waiting = self
            .by_subgroup
            .entry((read.row_group, read.subgroup))
            .or_default();
        // Nearly always past the last (a refused read goes back to its place).
        let at = waiting.seqs.partition_point(|&x| x < seq);
        if waiting.seqs.get(at) != Some(&seq) {
            waiting.seqs.insert(at, seq);
            waiting.bytes = waiting.bytes.saturating_add(read.bytes);
        }
        self.fifo.insert(seq, read);
    }

    fn remove(&mut self, seq: u64) -> Option<PlannedRead> {
        let read = self.fifo.remove(seq)?;
        self.queued_bytes = self.queued_bytes.saturating_sub(read.bytes);
        let key = (read.row_group, read.subgroup);
        if let Some(waiting) = self.by_subgroup.get_mut(&key) {
            if let Ok(at) = waiting.seqs.binary_search(&seq) {
                waiting.seqs.remove(at);
                waiting.bytes = waiting.bytes.saturating_sub(read.bytes);
            }
            if waiting.seqs.is_empty() {
                debug_assert_eq!(waiting.bytes, 0, "no read of {key:?} waits");
                self.by_subgroup.remove(&key);
            }
        }
        Some(read)
    }

    /// Whether a read of `(row_group, subgroup)` waits in the queue.
    pub fn has_subgroup(&self, key: (u32, u32)) -> bool {
        self.by_subgroup
            .get(&key)
            .is_some_and(|w| !w.seqs.is_empty())
    }

    /// Bytes of the reads of `(row_group, subgroup)` waiting in the queue (what taking them on
    /// the demand path would charge).
    pub fn subgroup_bytes(&self, key: (u32, u32)) -> u64 {
        self.by_subgroup.get(&key).map_or(0, |w| w.bytes)
    }

    /// Reads waiting.
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Whether no read waits.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// Bytes of the reads waiting.
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }

    /// The head, if any.
    pub fn peek(&self) -> Option<&PlannedRead> {
        self.fifo.first().map(|(_, read)| read)
    }

    /// Why the last [`poll`](Self::poll) returned `None` (`None` if it issued a read).
    pub fn last_blocked(&self) -> Option<Blocked> {
        self.last_blocked
    }

    /// Removes every waiting read of `row_group` (e.g. dropped by its bloom filter) and returns
    /// them in queue order. They are not issued (nor counted as planned).
    pub fn cancel_row_group(&mut self, row_group: u32) -> Vec<PlannedRead> {
        let mut seqs: Vec<u64> = self
            .by_subgroup
            .iter()
            .filter(|((rg, _), _)| *rg == row_group)
            .flat_map(|(_, w)| w.seqs.iter().copied())
            .collect();
        seqs.sort_unstable();
        let cancelled: Vec<PlannedRead> = seqs
            .into_iter()
            .filter_map(|seq| self.remove(seq))
            .collect();
        if self
            .stalled_head
            .is_some_and(|id| cancelled.iter().any(|r| r.read_id == id))
        {
            self.stalled_head = None;
        }
        cancelled
    }

    /// Issues the next read if admitted: the head when it fits under the target and memory
    /// admits it; else the first privileged read in the queue (it bypasses both). The issued
    /// read is registered with the controller (`on_issue`, which counts `ParquetReadTasks`).
    /// Call until `None` after every event that frees room.
    pub fn poll(
        &mut self,
        now_ns: u64,
        context: &AdmissionContext,
        controller: &mut InFlightController,
        memory: &mut Memory,
        events: &mut ProfileEvents,
    ) -> Result<Option<Issued>, ReadaheadError> {
        let Some((head_seq, &head)) = self.fifo.first() else {
            self.last_blocked = Some(Blocked::Empty);
            return Ok(None);
        };
        let head_privileged = context.privileged == Some((head.row_group, head.subgroup));
        let blocked = if head_privileged {
            None
        } else if !controller.can_issue(head.bytes) {
            Some(Blocked::Target {
                target_bytes: controller.target_bytes(),
            })
        } else {
            match memory.try_charge(self.request(&head, context, false))? {
                Admission::Charged(charge) => {
                    self.remove(head_seq);
                    let count = !context.demand;
                    return self
                        .issue(
                            now_ns, head_seq, head, charge, false, count, controller, memory,
                            events,
                        )
                        .map(Some);
                }
                Admission::Refused(refusal) => {
                    if refusal.budget == Budget::Pool(Pool::Metadata)
                        && self.stalled_head != Some(head.read_id)
                    {
                        self.stalled_head = Some(head.read_id);
                        events.add(ProfileEvent::ParquetIssueQueueStalls, 1);
                    }
                    Some(Blocked::Memory(refusal))
                }
            }
        };
        let privileged_seq = context
            .privileged
            .and_then(|key| self.by_subgroup.get(&key))
            .and_then(|w| w.seqs.first().copied());
        let Some((seq, read)) =
            privileged_seq.and_then(|seq| self.remove(seq).map(|read| (seq, read)))
        else {
            self.last_blocked = blocked;
            return Ok(None);
        };
        match memory.try_charge(self.request(&read, context, true))? {
            Admission::Charged(charge) => self
                .issue(
                    now_ns,
                    seq,
                    read,
                    charge,
                    true,
                    !context.demand,
                    controller,
                    memory,
                    events,
                )
                .map(Some),
            // A privileged request is always admitted; keep the read in place if that ever changes.
            Admission::Refused(refusal) => {
                self.insert(seq, read);
                self.last_blocked = Some(Blocked::Memory(refusal));
                Ok(None)
            }
        }
    }

    /// Issues a read its stage's task starts itself and that was never queued (ClickHouse's
    /// `scheduleTask` -> `startPrefetch`: bloom-filter blocks, known only once the header is
    /// decoded, and the pages of a step after PREWHERE). The task was admitted by its stage, so
    /// the charge is made as a privileged one (never refused); it is no planned read, so
    /// `ParquetPlannedReads` is not counted. The read is registered with the controller.
    pub fn issue_unplanned(
        &mut self,
        now_ns: u64,
        read: PlannedRead,
        context: &AdmissionContext,
        controller: &mut InFlightController,
        memory: &mut Memory,
        events: &mut ProfileEvents,
    ) -> Result<Issued, ReadaheadError> {
        let charge = memory.charge_admitted(self.request(&read, context, true))?;
        if let Err(error) = controller.on_issue(now_ns, read.read_id, read.bytes, events) {
            memory.release(charge)?;
            return Err(error);
        }
        Ok(Issued {
            read,
            charge,
            privileged: true,
        })
    }

    fn request(
        &self,
        read: &PlannedRead,
        context: &AdmissionContext,
        privileged: bool,
    ) -> ChargeRequest {
        ChargeRequest {
            stream: self.stream,
            class: read.class,
            bytes: read.bytes,
            running_tasks: context.running_tasks,
            privileged,
        }
    }

    /// Registers the read with the controller; if the controller refuses it (a duplicate id),
    /// the read goes back to its place and its charge is released, so nothing leaks. `count`:
    /// the pump issues it (`ParquetPlannedReads`; see [`AdmissionContext::demand`]).
    #[allow(clippy::too_many_arguments)]
    fn issue(
        &mut self,
        now_ns: u64,
        seq: u64,
        read: PlannedRead,
        charge: Charge,
        privileged: bool,
        count: bool,
        controller: &mut InFlightController,
        memory: &mut Memory,
        events: &mut ProfileEvents,
    ) -> Result<Issued, ReadaheadError> {
        if let Err(error) = controller.on_issue(now_ns, read.read_id, read.bytes, events) {
            self.insert(seq, read);
            memory.release(charge)?;
            return Err(error);
        }
        if self.stalled_head == Some(read.read_id) {
            self.stalled_head = None;
        }
        if count {
            events.add(ProfileEvent::ParquetPlannedReads, 1);
        }
        self.last_blocked = None;
        Ok(Issued {
            read,
            charge,
            privileged,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::{ControllerConfig, ReadSource};
    use crate::memory::MemorySettings;

    const MIB: u64 = 1 << 20;

    fn controller() -> InFlightController {
        // Target = max(64 MiB floor, fitted 102.4 MB) with the priors and 16 threads.
        InFlightController::new(ControllerConfig::default()).unwrap()
    }

    fn pools(high: u64) -> Memory {
        Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: high,
            r4_memory_by_lifetime: true,
            ..MemorySettings::default()
        })
        .unwrap()
    }

    fn read(read_id: u64, bytes: u64, class: MemoryClass, row_group: u32) -> PlannedRead {
        PlannedRead {
            read_id,
            bytes,
            class,
            row_group,
            subgroup: 0,
        }
    }

    const FREE: AdmissionContext = AdmissionContext {
        running_tasks: 0,
        privileged: None,
        demand: false,
    };

    /// `takeQueuedReads` (a blocked task taking its subgroup's reads) issues without counting
    /// `ParquetPlannedReads`; the pump's issue counts.
    #[test]
    fn a_demand_issue_is_not_a_planned_read() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(4 << 30);
        let mut queue = IssueQueue::new(0);
        queue.push(read(0, MIB, MemoryClass::CompressedPages, 0));
        queue.push(read(1, MIB, MemoryClass::CompressedPages, 1));
        let demand = AdmissionContext {
            running_tasks: 0,
            privileged: Some((1, 0)),
            demand: true,
        };
        let taken = queue.poll(0, &demand, &mut c, &mut memory, &mut events);
        assert_eq!(taken.unwrap().map(|i| i.read.read_id), Some(0));
        assert_eq!(events.parquet_planned_reads, 0);
        let pumped = queue.poll(0, &FREE, &mut c, &mut memory, &mut events);
        assert_eq!(pumped.unwrap().map(|i| i.read.read_id), Some(1));
        assert_eq!(events.parquet_planned_reads, 1);
        assert_eq!(events.parquet_read_tasks, 2);
    }

    #[test]
    fn subgroup_bytes_are_what_its_waiting_reads_hold() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(4 << 30);
        let mut queue = IssueQueue::new(0);
        queue.push(read(0, MIB, MemoryClass::CompressedPages, 1));
        queue.push(read(1, 3 * MIB, MemoryClass::CompressedPages, 2));
        queue.push(read(2, 2 * MIB, MemoryClass::CompressedPages, 1));
        assert_eq!(queue.subgroup_bytes((1, 0)), 3 * MIB);
        assert_eq!(queue.subgroup_bytes((2, 0)), 3 * MIB);
        assert_eq!(queue.subgroup_bytes((3, 0)), 0);
        let issued = queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        assert_eq!(issued.read.read_id, 0);
        assert_eq!(
            queue.subgroup_bytes((1, 0)),
            2 * MIB,
            "an issued read leaves"
        );
        memory.release(issued.charge).unwrap();
    }

    #[test]
    fn fifo_under_the_target() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(4 << 30);
        let mut queue = IssueQueue::new(0);
        for id in 0..4 {
            queue.push(read(id, 40 * MIB, MemoryClass::CompressedPages, id as u32));
        }
        assert_eq!(
            events.parquet_planned_reads, 0,
            "counted when issued, not when queued"
        );
        let mut issued = Vec::new();
        while let Some(next) = queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
        {
            c.on_start(0, next.read.read_id).unwrap(); // R7: counts once running
            issued.push(next);
        }
        // 102.4 MB target: two 40 MiB reads fit, a third would not.
        assert_eq!(
            issued.iter().map(|i| i.read.read_id).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert!(matches!(queue.last_blocked(), Some(Blocked::Target { .. })));
        assert_eq!(events.parquet_read_tasks, 2);
        assert_eq!(events.parquet_planned_reads, 2);
        // Read 0 behaves like the priors (50 ms, 64 B/us), so the target stays put.
        c.on_first_byte(50_000_000, 0).unwrap();
        let done_ns = 50_000_000 + 40 * MIB * 1_000 / 64;
        c.on_complete(done_ns, 0, ReadSource::Store, &mut events)
            .unwrap();
        let third = queue
            .poll(done_ns, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        assert_eq!(third.read.read_id, 2);
        for issued in issued.into_iter().chain([third]) {
            memory.release(issued.charge).unwrap();
        }
    }

    #[test]
    fn privileged_read_jumps_a_blocked_head() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(4 << 30);
        let mut queue = IssueQueue::new(0);
        queue.push(read(1, 200 * MIB, MemoryClass::CompressedPages, 1));
        queue.push(read(2, 300 * MIB, MemoryClass::CompressedPages, 5));
        // Idle, yet the 200 MiB head is past the 102.4 MB target: it waits (the pump has no
        // exception for an idle reader).
        assert!(queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .is_none());
        assert!(matches!(queue.last_blocked(), Some(Blocked::Target { .. })));
        let privileged = |row_group| AdmissionContext {
            running_tasks: 0,
            privileged: Some((row_group, 0)),
            demand: false,
        };
        // Read 2's subgroup is privileged: it jumps the blocked head.
        let second = queue
            .poll(0, &privileged(5), &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        assert_eq!(second.read.read_id, 2);
        assert!(second.privileged);
        c.on_start(0, 2).unwrap();
        // The head goes once its own subgroup is the privileged one.
        let first = queue
            .poll(0, &privileged(1), &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        assert_eq!(first.read.read_id, 1);
        assert!(first.privileged);
        memory.release(first.charge).unwrap();
        memory.release(second.charge).unwrap();
    }

    #[test]
    fn metadata_refusal_counts_one_stall_per_blocked_head() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        // Metadata pool = 0.05 x 20 MiB = 1 MiB.
        let mut memory = pools(20 * MIB);
        let mut queue = IssueQueue::new(0);
        queue.push(read(1, MIB, MemoryClass::OffsetIndex, 0));
        queue.push(read(2, 1000, MemoryClass::ColumnIndex, 1));
        let first = queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        for _ in 0..3 {
            assert!(queue
                .poll(0, &FREE, &mut c, &mut memory, &mut events)
                .unwrap()
                .is_none());
        }
        assert!(
            matches!(queue.last_blocked(), Some(Blocked::Memory(r)) if r.budget == Budget::Pool(Pool::Metadata))
        );
        assert_eq!(events.parquet_issue_queue_stalls, 1);
        memory.release(first.charge).unwrap();
        let second = queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .unwrap();
        assert_eq!(second.read.read_id, 2);
        assert_eq!(events.parquet_issue_queue_stalls, 1);
        memory.release(second.charge).unwrap();
    }

    #[test]
    fn compressed_refusal_is_not_a_stall() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(20 * MIB); // Compressed = 7 MiB
        let mut queue = IssueQueue::new(0);
        queue.push(read(1, 8 * MIB, MemoryClass::CompressedPages, 0));
        assert!(queue
            .poll(0, &FREE, &mut c, &mut memory, &mut events)
            .unwrap()
            .is_none());
        assert_eq!(events.parquet_issue_queue_stalls, 0);
        assert_eq!(events.parquet_read_tasks, 0);
    }

    #[test]
    fn a_refused_issue_leaks_nothing() {
        let mut events = ProfileEvents::new();
        let mut c = controller();
        let mut memory = pools(4 << 30);
        let mut queue = IssueQueue::new(0);
        c.on_issue(0, 1, 10, &mut events).unwrap(); // id 1 already tracked: a caller bug
        queue.push(read(1, MIB, MemoryClass::Dictionary, 0));
        queue.push(read(2, MIB, MemoryClass::Dictionary, 0));
        let result = queue.poll(0, &FREE, &mut c, &mut memory, &mut events);
        assert_eq!(result, Err(ReadaheadError::DuplicateRead { read_id: 1 }));
        assert_eq!(memory.total_usage_bytes(), 0);
        assert_eq!(memory.outstanding_charges(), 0);
        assert_eq!(queue.len(), 2);
        assert_eq!(
            queue.peek().map(|r| r.read_id),
            Some(1),
            "the read keeps its place"
        );
        assert_eq!(queue.queued_bytes(), 2 * MIB);
    }

    #[test]
    fn cancelled_row_groups_leave_the_queue() {
        let mut queue = IssueQueue::new(0);
        for (id, rg) in [(1, 0), (2, 1), (3, 0), (4, 2)] {
            queue.push(read(id, 10, MemoryClass::Dictionary, rg));
        }
        let cancelled = queue.cancel_row_group(0);
        assert_eq!(
            cancelled.iter().map(|r| r.read_id).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.peek().map(|r| r.read_id), Some(2));
        assert_eq!(queue.queued_bytes(), 20);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn planned() -> impl Strategy<Value = Vec<PlannedRead>> {
            let classes = [
                MemoryClass::OffsetIndex,
                MemoryClass::ColumnIndex,
                MemoryClass::CompressedPages,
            ];
            proptest::collection::vec((1u64..12 * MIB, 0usize..3, 0u32..3), 1..60).prop_map(
                move |spec| {
                    let mut row_group = 0;
                    spec.into_iter()
                        .enumerate()
                        .map(|(i, (bytes, class, step))| {
                            row_group += step / 2; // row groups advance in queue order
                            PlannedRead {
                                read_id: i as u64,
                                bytes,
                                class: classes[class],
                                row_group,
                                subgroup: step % 2,
                            }
                        })
                        .collect()
                },
            )
        }

        proptest! {
            /// Every planned read is issued exactly once; without privilege the queue issues in
            /// FIFO order; pools stay within their limits except while a privileged charge is
            /// held; with the head privileged the queue always drains (no deadlock).
            #[test]
            fn drains_in_order_within_budgets(reads in planned(), high_mib in 8u64..256, r7 in any::<bool>()) {
                let mut events = ProfileEvents::new();
                let mut c = InFlightController::new(ControllerConfig { count_queued_bytes: !r7, ..ControllerConfig::default() }).unwrap();
                let mut memory = pools(high_mib * MIB);
                let mut queue = IssueQueue::new(0);
                for read in &reads {
                    queue.push(*read);
                }
                let mut issued_ids = Vec::new();
                let mut now = 0u64;
                let mut rounds = 0;
                while !queue.is_empty() {
                    rounds += 1;
                    prop_assert!(rounds <= 2 * reads.len() + 2, "queue did not drain");
                    let head = queue.peek().map(|r| (r.row_group, r.subgroup));
                    let mut held = Vec::new();
                    // First without privilege, then with the head privileged.
                    for context in [FREE, AdmissionContext { running_tasks: 0, privileged: head, demand: false }] {
                        loop {
                            let head_before = queue.peek().map(|r| r.read_id);
                            let Some(issued) = queue.poll(now, &context, &mut c, &mut memory, &mut events).unwrap() else {
                                break;
                            };
                            if context.privileged.is_none() {
                                prop_assert!(!issued.privileged);
                                prop_assert_eq!(Some(issued.read.read_id), head_before, "FIFO order");
                            }
                            c.on_start(now, issued.read.read_id).unwrap();
                            issued_ids.push(issued.read.read_id);
                            if !issued.charge.is_privileged() {
                                for usage in memory.usage() {
                                    let privileged_held = held.iter().any(|i: &Issued| i.charge.is_privileged());
                                    prop_assert!(privileged_held || usage.usage_bytes <= usage.limit_bytes);
                                }
                            }
                            held.push(issued);
                        }
                    }
                    // Everything in flight completes; its memory is freed.
                    now += 1_000_000;
                    for issued in held {
                        c.on_complete(now, issued.read.read_id, ReadSource::Store, &mut events).unwrap();
                        memory.release(issued.charge).unwrap();
                    }
                }
                issued_ids.sort_unstable();
                prop_assert_eq!(issued_ids, (0..reads.len() as u64).collect::<Vec<_>>());
                prop_assert_eq!(events.parquet_planned_reads, reads.len() as u64);
                prop_assert_eq!(events.parquet_read_tasks, reads.len() as u64);
                prop_assert_eq!(memory.total_usage_bytes(), 0);
                prop_assert_eq!(c.bytes_in_flight(), 0);
            }
        }
    }

    mod fifo {
        use super::*;
        use proptest::prelude::*;
        use std::collections::BTreeMap;

        proptest! {
            /// The deque with holes answers as a map by sequence would: head, length, and the
            /// read each removal returns, through pushes, removals anywhere and reinsertions.
            #[test]
            fn the_deque_behaves_as_a_map_by_sequence(
                ops in proptest::collection::vec((0u8..3, 0usize..64), 1..200)
            ) {
                let mut fifo = Fifo::default();
                let mut model: BTreeMap<u64, PlannedRead> = BTreeMap::new();
                let mut removed: Vec<(u64, PlannedRead)> = Vec::new();
                let mut next = 0u64;
                for (op, pick) in ops {
                    match op {
                        0 => {
                            let r = read(next, next + 1, MemoryClass::Dictionary, 0);
                            fifo.insert(next, r);
                            model.insert(next, r);
                            next += 1;
                        }
                        1 => {
                            let keys: Vec<u64> = model.keys().copied().collect();
                            if let Some(&seq) = keys.get(pick % keys.len().max(1)) {
                                let got = fifo.remove(seq);
                                prop_assert_eq!(got, model.remove(&seq));
                                if let Some(r) = got {
                                    removed.push((seq, r));
                                }
                            }
                            prop_assert_eq!(fifo.remove(next + 100), None);
                        }
                        _ => {
                            if !removed.is_empty() {
                                let (seq, r) = removed.swap_remove(pick % removed.len());
                                fifo.insert(seq, r);
                                model.insert(seq, r);
                            }
                        }
                    }
                    prop_assert_eq!(fifo.len(), model.len());
                    prop_assert_eq!(fifo.is_empty(), model.is_empty());
                    prop_assert_eq!(fifo.first(), model.first_key_value().map(|(&k, v)| (k, v)));
                }
            }
        }
    }
}
