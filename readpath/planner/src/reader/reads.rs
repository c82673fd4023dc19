//! Reads: coalescing a batch of entries into read tasks, the per-file limit, the IO pool
//! (and inline reads), and the planned issue queues.

use super::*;
use limits::u32_of;

impl ClickHouseReader {
    pub(super) fn create_reads(
        &mut self,
        u: &mut OpenUnit,
        to_read: &[u32],
        owner: &Owners,
        cache: &dyn CacheView,
    ) -> Result<(), PlanError> {
        // (task, entry of each served piece), in a buffer kept across calls.
        let mut tasks = std::mem::take(&mut self.tasks_scratch);
        tasks.clear();
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
            let mut needed = std::mem::take(&mut self.needed_scratch);
            needed.clear();
            needed.extend(
                to_read
                    .iter()
                    .filter_map(|&e| u.plan.entries.get(e as usize))
                    .map(|x| NeededRange {
                        range: x.range,
                        group: x.group,
                        likely_used: true,
                    }),
            );
            let view = FileCache {
                view: cache,
                file: u.file,
            };
            for task in coalescer::coalesce(&needed, &view, &self.policy)? {
                let entries = task
                    .serves
                    .iter()
                    .filter_map(|s| to_read.get(s.needed as usize).copied())
                    .collect();
                tasks.push((task, entries));
            }
            self.needed_scratch = needed;
        }
        for (task, entries) in tasks.drain(..) {
            let kind = entries
                .first()
                .and_then(|&e| u.plan.entries.get(e as usize))
                .map_or(ReadKind::DataPages, |x| x.kind);
            // Charged by what asks for it, not by its first bytes: a read a decoding step asks
            // for is column data (Compressed), also when it starts at the chunk's dictionary
            // page (`enqueueRowGroupPageReads` plans the dictionary inside the
            // `ColumnDataPrefetch` entry; `poolOf` maps that stage to Compressed). Until
            // 2026-12-07 such reads were charged to Metadata: a dictionary-encoded table's
            // data read-ahead was gated by the 5% pool.
            let class = if entries.iter().any(|&e| owner.for_decode(e)) {
                MemoryClass::CompressedPages
            } else {
                memory_class(kind)
            };
            let subranges = task.serves.iter().map(|s| SubRange {
                task_offset: s.task_offset,
                len: s.len,
            });
            let purpose = Purpose::Entries {
                unit: u.id,
                stream: u.stream,
            };
            // The earliest (row group, subgroup) served: a read the first incomplete row
            // group's current subgroup waits for must be recognised as privileged.
            let earliest = entries
                .iter()
                .filter_map(|&e| owner.get(e))
                .min()
                .unwrap_or((0, 0));
            // Whether ClickHouse's planner queues it (else its stage's task starts it).
            let queued = entries.iter().any(|&e| owner.planned(e));
            let served_bytes = distinct_entry_bytes(&u.plan, &entries);
            let id = self.new_read(u, purpose, task.range, kind, subranges, entries)?;
            let distinct = self.note_requested(u, id);
            if let Some(r) = self.io.reads.get_mut(&id) {
                r.unconsumed = distinct;
                r.served_bytes = served_bytes;
            }
            if self.cfg.planned && queued {
                let (rg, subgroup) = earliest;
                let planned = PlannedRead {
                    read_id: id,
                    bytes: task.range.len(),
                    class,
                    row_group: rg,
                    subgroup,
                };
                u.queue.push(planned);
                self.units.note_queued(u.id);
                self.io.planned_queued += 1;
                // A blocked task of its subgroup may issue it (the demand path).
                self.threads.wake.wake(u.id);
            } else if self.cfg.planned {
                // Started by its stage's task, past the target, never queued.
                let (rg, subgroup) = earliest;
                let read = PlannedRead {
                    read_id: id,
                    bytes: task.range.len(),
                    class,
                    row_group: rg,
                    subgroup,
                };
                let context = AdmissionContext {
                    running_tasks: self.threads.decodes_running,
                    privileged: Some((rg, subgroup)),
                    demand: true,
                };
                let (now, memory, events) = (self.now_ns, &mut self.memory, &mut self.events);
                let issued = self.io.controllers.with(u.id, |c| {
                    u.queue
                        .issue_unplanned(now, read, &context, c, memory, events)
                })??;
                self.on_issued(u, issued)?;
            } else {
                self.submit_read_of(u, id);
            }
        }
        self.tasks_scratch = tasks;
        Ok(())
    }

    /// Marks the entries read `id` serves as requested (each served piece counted) and the
    /// read as theirs; returns how many distinct entries it serves. A read's pieces are nearly
    /// always distinct entries in order, so a sorted copy is made only when they are not.
    fn note_requested(&self, u: &mut OpenUnit, id: u64) -> u32 {
        let Some(served) = self.io.reads.get(&id).map(|r| &r.served) else {
            return 0;
        };
        for &e in served {
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
        let sorted_copy;
        let distinct: &[u32] = if served.windows(2).all(|w| w[0] < w[1]) {
            served
        } else {
            let mut d = served.clone();
            d.sort_unstable();
            d.dedup();
            sorted_copy = d;
            &sorted_copy
        };
        for &e in distinct {
            match u.entry_read.get_mut(e as usize) {
                Some(slot @ None) => *slot = Some(id),
                Some(Some(_)) => u.extra_reads.entry(e).or_default().push(id),
                None => debug_assert!(false, "entry {e} outside the file's plan"),
            }
        }
        u32_of(distinct.len())
    }

    pub(super) fn new_read(
        &mut self,
        u: &mut OpenUnit,
        purpose: Purpose,
        range: ByteRange,
        kind: ReadKind,
        subranges: impl IntoIterator<Item = SubRange>,
        served: Served,
    ) -> Result<u64, PlanError> {
        let id = self.next_id;
        self.next_id += 1;
        let readiness = TaskReadiness::new(range.len(), subranges, self.cfg.partial_readiness)?;
        self.io.reads.insert(
            id,
            ReadState {
                purpose,
                status: ReadStatus::Created,
                object: Object::Data(u.file),
                range,
                kind,
                readiness,
                served,
                unconsumed: 0,
                served_bytes: 0,
                charge: None,
            },
        );
        u.reads_alive += 1;
        Ok(id)
    }

    /// Coupled issue of a created read: the per-file limit, then the IO pool (or inline).
    pub(super) fn submit_read_of(&mut self, u: &mut OpenUnit, id: u64) {
        // The redesign's stages hand their reads to the shared IO pool (R6), as the planning
        // queue does: the per-file limit of the base chain does not apply.
        let limit = if self.cfg.stage_driven {
            0
        } else {
            self.strategy.max_concurrent_reads_per_file
        };
        if limit > 0 && u.reads_running >= limit {
            u.local_waiting.push_back(id);
            self.io.local_queued += 1;
            return;
        }
        u.reads_running += 1;
        self.submit_to_pool(id);
    }

    /// Same as [`Self::submit_read_of`] for a unit that is not taken out.
    pub(super) fn submit_read(&mut self, uid: u32, id: u64) {
        match self.units.open.get_mut(uid as usize).and_then(Option::take) {
            Some(mut u) => {
                self.submit_read_of(&mut u, id);
                if let Some(slot) = self.units.open.get_mut(uid as usize) {
                    *slot = Some(u);
                }
            }
            // The unit is taken out by a caller up the stack: no limit bookkeeping needed.
            None => self.submit_to_pool(id),
        }
    }

    pub(super) fn submit_to_pool(&mut self, id: u64) {
        let Some(read) = self.io.reads.get_mut(&id) else {
            return;
        };
        debug_assert!(matches!(
            read.status,
            ReadStatus::Created | ReadStatus::Issued
        ));
        if read.status == ReadStatus::Created {
            read.status = ReadStatus::Issued;
            let bytes = read.range.len();
            // A footer is no Prefetcher task (see `Purpose::is_prefetch_task`).
            let now = self.now_ns;
            let events = &mut self.events;
            let issued = match (read.purpose.is_prefetch_task(), read.purpose.unit()) {
                (true, Some(uid)) => self
                    .io
                    .controllers
                    .with(uid, |c| c.on_issue(now, id, bytes, events))
                    .and_then(|r| r.map_err(PlanError::from)),
                _ => Ok(()),
            };
            if let Err(e) = issued {
                self.fail(e);
                return;
            }
        }
        let purpose = read.purpose;
        if let Purpose::Footer { stream, .. } = purpose {
            if self.cfg.inline_footer_reads && self.io.stream_thread_free(stream) {
                // `readFileMetaData` reads the footer with `readSync` on the stream's own
                // (pipeline) thread: no IO-pool slot, no parsing thread. Until 2026-12-07 it
                // went to the IO pool and, queued there, took a parsing thread.
                self.io.set_stream_thread(stream, true);
                self.io.inline_running += 1;
                self.start_read(id, Runner::Inline { took_thread: false });
                return;
            }
        }
        match self.io.pool.submit(id) {
            Slot::Started => self.start_read(id, Runner::IoPool),
            Slot::Queued => {
                // A blocked task of its unit may run it inline.
                if let Some(uid) = purpose.unit() {
                    self.threads.wake.wake(uid);
                }
                self.maybe_run_inline(id, purpose);
            }
        }
    }

    /// A read queued in the IO pool: the unit's blocked decode task runs it on the thread it
    /// holds; otherwise (an index stage's read, or the base reader) the stream's thread takes a
    /// free parsing thread and runs it.
    fn maybe_run_inline(&mut self, id: u64, purpose: Purpose) {
        let (Some(uid), Some(stream)) = (purpose.unit(), purpose.stream()) else {
            return;
        };
        let may_inline = self.cfg.inline_reads
            || (self.cfg.inline_footer_reads && matches!(purpose, Purpose::Footer { .. }));
        let by_blocked = self.threads.blocked_count(uid) > 0;
        if may_inline
            && (by_blocked || self.threads.held() < self.cfg.max_parsing_threads)
            && self.io.stream_thread_free(stream)
            && self.io.pool.take_waiting(id)
        {
            self.io.set_stream_thread(stream, true);
            if !by_blocked {
                self.threads.decodes_running += 1;
                self.threads.inline += 1;
            }
            self.io.inline_running += 1;
            self.start_read(
                id,
                Runner::Inline {
                    took_thread: !by_blocked,
                },
            );
        }
    }

    pub(super) fn start_read(&mut self, id: u64, runner: Runner) {
        let now = self.now_ns;
        let Some(read) = self.io.reads.get_mut(&id) else {
            return;
        };
        debug_assert_eq!(
            read.status,
            ReadStatus::Issued,
            "read {id} starts once, after issue"
        );
        read.status = ReadStatus::Running(runner);
        let request = ReadRequest {
            id: ReadId(id),
            object: read.object,
            range: read.range,
            kind: read.kind,
            inline: matches!(runner, Runner::Inline { .. }),
        };
        if let (true, Some(uid)) = (read.purpose.is_prefetch_task(), read.purpose.unit()) {
            let started = self
                .io
                .controllers
                .with(uid, |c| c.on_start(now, id))
                .and_then(|r| r.map_err(PlanError::from));
            if let Err(e) = started {
                self.fail(e);
                return;
            }
        }
        self.out.push_back(Action::Read(request));
    }

    /// Planned issue: poll every open unit's queue while reads go out. The IO pool's queue is
    /// not bounded: that is the first generation of the redesign (RD1); a later one (RD2,
    /// Altinity `d7d093bf`) also waits while `2 x io_threads` reads wait for a thread
    /// (`docs/readpath.md`, "What the code says").
    #[inline(never)] // a stage of `pump`, kept out of its body (see there)
    pub(super) fn issue_from_queues(&mut self) -> Result<bool, PlanError> {
        let mut any = false;
        // The units that may have queued reads, in id order (as a walk over the open units).
        let mut ids = std::mem::take(&mut self.units.open_ids_scratch);
        ids.clear();
        ids.extend_from_slice(&self.units.queued);
        for &uid in &ids {
            // An empty queue issues nothing, and polling it changes nothing the reader reads
            // (this loop polled about 300 queues per GET on `clickbench-single-file`).
            let queued = self
                .units
                .open
                .get(uid as usize)
                .and_then(|u| u.as_deref())
                .is_some_and(|u| !u.queue.is_empty());
            if !queued {
                if let Ok(at) = self.units.queued.binary_search(&uid) {
                    self.units.queued.remove(at);
                }
                continue;
            }
            let issued = self.with_unit(uid, |r, u| {
                let mut n = 0u32;
                loop {
                    let context = AdmissionContext {
                        running_tasks: r.threads.decodes_running,
                        privileged: Self::privileged(u),
                        demand: false,
                    };
                    let (now, memory, events) = (r.now_ns, &mut r.memory, &mut r.events);
                    let polled =
                        r.io.controllers
                            .with(u.id, |c| u.queue.poll(now, &context, c, memory, events))??;
                    let Some(issued) = polled else { break };
                    r.on_queue_issued(u, issued)?;
                    n += 1;
                }
                Ok(n)
            })?;
            any |= issued > 0;
        }
        self.units.return_open_ids(ids);
        Ok(any)
    }

    /// A read the planning queue released: it holds its charge and goes to the IO pool (a
    /// blocked decode task may run it inline while it waits there).
    pub(super) fn on_queue_issued(
        &mut self,
        u: &mut OpenUnit,
        issued: readahead::Issued,
    ) -> Result<(), PlanError> {
        debug_assert!(self.io.planned_queued > 0);
        self.io.planned_queued -= 1;
        self.on_issued(u, issued)
    }

    /// Issued read `issued` (from the queue or by its stage) goes to the IO pool.
    fn on_issued(&mut self, u: &mut OpenUnit, issued: readahead::Issued) -> Result<(), PlanError> {
        let id = issued.read.read_id;
        match self.io.reads.get_mut(&id) {
            Some(read) => {
                debug_assert_eq!(read.status, ReadStatus::Created);
                debug_assert!(read.charge.is_none());
                read.status = ReadStatus::Issued;
                read.charge = Some(issued.charge);
            }
            None => self.release_charge(issued.charge)?,
        }
        u.reads_running += 1;
        match self.io.pool.submit(id) {
            Slot::Started => self.start_read(id, Runner::IoPool),
            // A blocked task of the unit may run it inline.
            Slot::Queued => self.threads.wake.wake(u.id),
        }
        Ok(())
    }
}

/// The bytes of the distinct entries among `entries` (pieces of one entry count once). The
/// pieces nearly always come in increasing entry order; a sorted copy is made only when not.
fn distinct_entry_bytes(plan: &FilePlan, entries: &[u32]) -> u64 {
    let len = |e: u32| plan.entries.get(e as usize).map_or(0, |x| x.range.len());
    if entries.windows(2).all(|w| w[0] < w[1]) {
        return entries.iter().map(|&e| len(e)).sum();
    }
    let mut sorted = entries.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.into_iter().map(len).sum()
}
