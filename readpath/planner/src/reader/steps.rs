//! Steps of a unit: the coupled cursor, starting steps, readiness, finishing, row groups
//! dropped by bloom filters and completed.

use super::*;
use limits::u32_of;

impl ClickHouseReader {
    /// Whether ClickHouse's planner queues the reads of a step of `kind` for the pump
    /// (`enqueueRowGroupIndexReads`: bloom-filter headers, column and offset indexes,
    /// dictionaries for a filter; `enqueueRowGroupPageReads`: the first step's pages). Bloom-
    /// filter blocks (known only once the header is decoded) and the pages of the main step
    /// after PREWHERE are started by their stage's task (`scheduleTask`), never queued.
    pub(super) fn queued_by_the_planner(&self, kind: StepKind) -> bool {
        match kind {
            StepKind::BloomBlocks => false,
            StepKind::Main(_) => !self.cfg.prewhere,
            StepKind::BloomHeader
            | StepKind::Dictionary
            | StepKind::Indexes
            | StepKind::Prewhere(_) => true,
        }
    }

    pub(super) fn privileged(u: &OpenUnit) -> Option<(u32, u32)> {
        let rg = u.rgs.get(u.first_incomplete)?;
        Some((u32_of(u.first_incomplete), rg.subgroups_done))
    }

    pub(super) fn is_privileged(u: &OpenUnit, step: u32) -> bool {
        let Some(s) = u.plan.steps.get(step as usize) else {
            return false;
        };
        Self::privileged(u) == Some((s.rg, s.kind.subgroup()))
    }

    /// Stage-driven issue: a page step starts only if the Compressed pool admits its bytes;
    /// refused steps wait for memory to free ([`Self::parked`]).
    pub(super) fn admit_stage_driven(
        &mut self,
        u: &mut OpenUnit,
        batch: &[u32],
    ) -> Result<Vec<u32>, PlanError> {
        let mut admitted = Vec::with_capacity(batch.len());
        for &s in batch {
            let Some(plan_step) = u.plan.steps.get(s as usize) else {
                continue;
            };
            if !plan_step.kind.decodes() {
                admitted.push(s);
                continue;
            }
            let request = ChargeRequest {
                stream: u.stream,
                class: step_class(plan_step.kind),
                bytes: plan_step.compressed_bytes,
                running_tasks: self.threads.decodes_running,
                privileged: Self::is_privileged(u, s),
            };
            match self.memory.try_charge(request)? {
                Admission::Charged(c) => {
                    if let Some(st) = u.steps.get_mut(s as usize) {
                        debug_assert!(st.charge.is_none());
                        st.charge = Some(c);
                    }
                    admitted.push(s);
                }
                Admission::Refused(_) => self.units.parked.push((u.id, s)),
            }
        }
        Ok(admitted)
    }

    /// Coupled issue: start steps in order while dependencies, the serial chain, the
    /// row-group window and memory allow.
    #[inline(never)] // a stage of `pump`, kept out of its body (see there)
    pub(super) fn advance_cursor(
        &mut self,
        u: &mut OpenUnit,
        cache: &dyn CacheView,
    ) -> Result<(), PlanError> {
        if u.phase != Phase::Steps || !u.current {
            return Ok(());
        }
        while let Some(plan_step) = u.plan.steps.get(u.cursor) {
            let s = u32_of(u.cursor);
            let rg = plan_step.rg as usize;
            let Some(state) = u.steps.get(u.cursor) else {
                break;
            };
            if matches!(
                state.status,
                StepStatus::Finished | StepStatus::Started | StepStatus::Decoding
            ) {
                u.cursor += 1;
                continue;
            }
            if state.status != StepStatus::Eligible {
                break;
            }
            if self.cfg.serial && u.started_not_ready > 0 {
                break;
            }
            let window = self.strategy.row_groups_ahead as usize;
            if rg > u.first_incomplete.saturating_add(window) {
                break;
            }
            let bytes: u64 = if plan_step.kind.decodes() {
                plan_step.compressed_bytes
            } else {
                u.plan
                    .entries_of(plan_step)
                    .iter()
                    .filter_map(|&e| u.plan.entries.get(e as usize))
                    .map(|e| e.range.len())
                    .sum()
            };
            let request = ChargeRequest {
                stream: u.stream,
                class: step_class(plan_step.kind),
                bytes,
                running_tasks: self.threads.decodes_running,
                privileged: Self::is_privileged(u, s),
            };
            match self.memory.try_charge(request)? {
                Admission::Charged(c) => {
                    if let Some(st) = u.steps.get_mut(u.cursor) {
                        st.charge = Some(c);
                    }
                }
                Admission::Refused(_) => {
                    self.units.memory_blocked.insert(u.id);
                    break;
                }
            }
            u.cursor += 1;
            self.start_steps(u, &[s], cache)?;
        }
        Ok(())
    }

    /// Starts `batch` (steps of one unit): registers what each waits for and creates the
    /// reads of every entry nobody requested yet, coalesced together.
    #[inline(never)] // a stage of `pump`, kept out of its body (see there)
    pub(super) fn start_steps(
        &mut self,
        u: &mut OpenUnit,
        batch: &[u32],
        cache: &dyn CacheView,
    ) -> Result<(), PlanError> {
        if u.phase == Phase::Done {
            return Ok(());
        }
        // Taken, not borrowed: readiness below may start steps again (with fresh buffers).
        let mut scratch = std::mem::take(&mut self.start_scratch);
        let r = self.start_steps_with(u, batch, cache, &mut scratch);
        scratch.owner.clear(&scratch.to_read);
        scratch.to_read.clear();
        scratch.ready_now.clear();
        self.start_scratch = scratch;
        r
    }

    /// [`Self::start_steps`] with its buffers, empty on entry.
    fn start_steps_with(
        &mut self,
        u: &mut OpenUnit,
        batch: &[u32],
        cache: &dyn CacheView,
        scratch: &mut StartScratch,
    ) -> Result<(), PlanError> {
        debug_assert!(scratch.to_read.is_empty() && scratch.owner.is_empty());
        debug_assert!(scratch.ready_now.is_empty());
        // `owner` is looked up by entry, never walked: a vector by entry (a B-tree here was a
        // fifth of `single-large-file`, whose planned start asks for every row group at once).
        let StartScratch {
            to_read,
            owner,
            ready_now,
            chunks,
            ids,
        } = scratch;
        for &s in batch {
            let Some(plan_step) = u.plan.steps.get(s as usize) else {
                continue;
            };
            let Some(state) = u.steps.get_mut(s as usize) else {
                continue;
            };
            if state.status != StepStatus::Eligible {
                continue;
            }
            if u.rgs.get(plan_step.rg as usize).is_some_and(|r| r.dropped) {
                continue;
            }
            state.status = StepStatus::Started;
            u.started_not_ready += 1;
            if plan_step.kind.decodes() {
                u.started_decodes_not_ready += 1;
                // A task that may block.
                self.threads.wake.wake(u.id);
            }
            let mut pending = 0;
            for &e in u.plan.entries_of(plan_step) {
                let ei = e as usize;
                if let Some(counted) = u.entry_counted.get_mut(ei) {
                    if !*counted {
                        *counted = true;
                        self.output.needed_bytes +=
                            u.plan.entries.get(ei).map_or(0, |x| x.range.len());
                    }
                }
                match u.entry_state.get(ei).copied() {
                    Some(EntryState::Ready) | None => {}
                    Some(EntryState::Requested) => {
                        pending += 1;
                        u.waiters.push(ei, s);
                    }
                    Some(EntryState::Idle) => {
                        pending += 1;
                        u.waiters.push(ei, s);
                        to_read.push(e);
                        let key = (plan_step.rg, plan_step.kind.subgroup());
                        let asker = Asker {
                            decodes: plan_step.kind.decodes(),
                            planned: self.queued_by_the_planner(plan_step.kind),
                        };
                        owner.keep_earliest(e, key, asker);
                    }
                }
            }
            state.pending = pending;
            if pending == 0 {
                ready_now.push(s);
            }
        }
        ids.sort_dedup(to_read);
        if self.cfg.subgroups {
            self.whole_short_chunks(u, to_read, owner, chunks, ids);
        }
        if !to_read.is_empty() {
            self.create_reads(u, to_read, owner, cache)?;
        }
        for &s in ready_now.iter() {
            self.step_ready(u, s)?;
        }
        Ok(())
    }

    /// `Prefetcher::splitRange`: a column chunk shorter than `min_bytes_for_seek` is not split
    /// into its pages but read whole, so the first subgroup that needs one of its pages
    /// requests them all ([`crate::plan::Entry::whole_chunk`]), on that subgroup's behalf.
    /// Linear in `to_read` plus the chunks' entries: a planned redesign start asks for every
    /// row group's entries at once (a quadratic version was 62% of `single-large-file`).
    /// `to_read` comes sorted and without repeats, and leaves so.
    fn whole_short_chunks(
        &mut self,
        u: &mut OpenUnit,
        to_read: &mut Vec<u32>,
        owner: &mut Owners,
        chunks: &mut Vec<(u32, Option<(u32, u32)>)>,
        ids: &mut dense_ids::DenseIds,
    ) {
        debug_assert!(to_read.windows(2).all(|w| w[0] < w[1]));
        // Each short chunk some requested entry lies in, with the earliest owner among them:
        // (chunk, owner) pairs sorted by chunk, then folded (a `BTreeMap` by chunk here was a
        // fifth of `start_steps` on `single-large-file`). Taken from the entries in offset order,
        // the pairs are already sorted when the file's chunks lie in the order they are
        // numbered, and the sort then ends after one pass.
        chunks.clear();
        chunks.extend(to_read.iter().filter_map(|&e| {
            let w = u.plan.entries.get(e as usize).map(|x| x.whole_chunk)?;
            (w != 0).then(|| (w, owner.get(e)))
        }));
        // A short chunk is read whole for the subgroup that needs one of its pages: column
        // data (the chunk's entries are its pages and dictionary).
        chunks.sort_unstable_by_key(|&(w, _)| w);
        chunks.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = match (kept.1, later.1) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            same
        });
        if chunks.is_empty() {
            return;
        }
        let requested = to_read.len();
        for &(w, earliest) in chunks.iter() {
            let key = earliest.unwrap_or((0, 0));
            // Read with the chunk's requested pages, as their step reads them.
            let asker = Asker {
                decodes: true,
                planned: u
                    .plan
                    .whole_chunk_entries(w)
                    .iter()
                    .any(|&e| owner.planned(e)),
            };
            for &e in u.plan.whole_chunk_entries(w) {
                let idle = u.entry_state.get(e as usize) == Some(&EntryState::Idle);
                if idle && to_read[..requested].binary_search(&e).is_err() {
                    to_read.push(e);
                    owner.keep_first(e, key, asker);
                }
            }
        }
        if to_read.len() > requested {
            ids.sort_dedup(to_read);
        }
    }

    /// Entries of unit `uid` whose bytes arrived.
    pub(super) fn entries_ready(&mut self, uid: u32, entries: &[u32]) {
        if entries.is_empty() {
            return;
        }
        let r = self.with_unit(uid, |r, u| {
            for &e in entries {
                let ei = e as usize;
                let Some(p) = u.entry_pieces.get_mut(ei) else {
                    continue;
                };
                decrement(p);
                if *p > 0 {
                    continue;
                }
                if let Some(st) = u.entry_state.get_mut(ei) {
                    *st = EntryState::Ready;
                }
                // Ready now, so no step waits for it again while its waiters are read.
                let (first, count) = u.waiters.take(ei);
                for slot in first..first + count {
                    let Some(s) = u.waiters.get(slot) else {
                        continue;
                    };
                    let Some(state) = u.steps.get_mut(s as usize) else {
                        continue;
                    };
                    decrement(&mut state.pending);
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

    pub(super) fn step_ready(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        self.unblock(u.id, s);
        decrement(&mut u.started_not_ready);
        if self.cfg.serial {
            self.units.dirty.insert(u.id);
        }
        let Some(plan_step) = u.plan.steps.get(s as usize) else {
            return Ok(());
        };
        if plan_step.kind.decodes() {
            decrement(&mut u.started_decodes_not_ready);
        }
        let rg = plan_step.rg as usize;
        let dropped = u.rgs.get(rg).is_some_and(|r| r.dropped);
        if !plan_step.kind.decodes() || dropped {
            return self.finish_step(u, s);
        }
        if let Some(st) = u.steps.get_mut(s as usize) {
            st.status = StepStatus::Decoding;
        }
        let cap = self.cfg.parallel_subgroups;
        let subgroup = plan_step.kind.subgroup();
        if let Some(r) = u.rgs.get_mut(rg) {
            if r.pending_decodes.is_empty() && Self::decode_turn(r, subgroup, cap, 0) {
                r.active_decodes += 1;
                self.threads.decode_queue.push_back(u.id, s);
                self.threads.scan_needed = true;
            } else {
                // Usually the last: steps of later subgroups come ready later.
                match r.pending_decodes.back() {
                    Some(&last) if last > s => {
                        let at = r.pending_decodes.partition_point(|&p| p < s);
                        r.pending_decodes.insert(at, s);
                    }
                    _ => r.pending_decodes.push_back(s),
                }
                self.release_decodes(u, rg, 0);
            }
        }
        Ok(())
    }

    /// Whether a decode of `subgroup` may be queued in a row group in state `r`, with
    /// `ending` more of its subgroups about to finish: a slot is free and the subgroup is among
    /// the first `cap` unfinished ones.
    fn decode_turn(r: &RgState, subgroup: u32, cap: u32, ending: u32) -> bool {
        let done = r.subgroups_done + ending;
        debug_assert!(subgroup >= done, "a finished subgroup decodes no more");
        r.active_decodes < cap && subgroup < done + cap
    }

    /// Queues for a parsing thread the decodes of row group `rg` whose turn it is: a row group
    /// decodes its subgroups in order, one at a time (`ReadManager::finishRowSubgroupStage`
    /// starts a subgroup's `ColumnData` tasks once the one before finished: "sequential: one
    /// subgroup at a time"), or up to `input_format_parquet_parallel_subgroups` at once with R10.
    /// A later subgroup whose bytes came first waits for its turn.
    /// `ending`: 1 when the decode that just finished ends its subgroup, whose successor's turn
    /// comes now (queued where a finished decode hands its slot on, before the step finishes).
    pub(super) fn release_decodes(&mut self, u: &mut OpenUnit, rg: usize, ending: u32) {
        let cap = self.cfg.parallel_subgroups;
        let Some(r) = u.rgs.get_mut(rg) else {
            return;
        };
        while let Some(&s) = r.pending_decodes.front() {
            let subgroup = u
                .plan
                .steps
                .get(s as usize)
                .map_or(0, |p| p.kind.subgroup());
            if !Self::decode_turn(r, subgroup, cap, ending) {
                break;
            }
            r.pending_decodes.pop_front();
            r.active_decodes += 1;
            self.threads.decode_queue.push_back(u.id, s);
            self.threads.scan_needed = true;
        }
    }

    pub(super) fn consume_entries(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        // The plan is shared: holding it (not a copy of the step's entries) frees `u`.
        let plan = Arc::clone(&u.plan);
        let Some(step) = plan.steps.get(s as usize) else {
            return Ok(());
        };
        for &e in plan.entries_of(step) {
            let Some(n) = u.entry_consumers.get_mut(e as usize) else {
                continue;
            };
            decrement(n);
            if *n > 0 {
                continue;
            }
            let first = u.entry_read.get(e as usize).copied().flatten();
            let extra = u.extra_reads.remove(&e).unwrap_or_default();
            let entry_bytes = plan.entries.get(e as usize).map_or(0, |x| x.range.len());
            for id in first.into_iter().chain(extra) {
                if let Some(r) = self.io.reads.get_mut(&id) {
                    decrement(&mut r.unconsumed);
                    // The entry's share of the read's charge goes back now (each page's token
                    // is reset once it is decoded); the last entry's takes the rest.
                    if let (Some(c), true) = (r.charge.as_mut(), r.unconsumed > 0) {
                        let share = share_of(entry_bytes, r.range.len(), r.served_bytes);
                        if share > 0 {
                            self.memory.release_part(c, share)?;
                            self.memory_freed = true;
                            self.threads.scan_needed = true;
                        }
                    }
                }
                self.maybe_forget_read(id)?;
            }
        }
        Ok(())
    }

    /// Drops a read's state once it completed and every entry it served was consumed,
    /// releasing its memory charge.
    pub(super) fn maybe_forget_read(&mut self, id: u64) -> Result<(), PlanError> {
        let done = self.io.reads.get(&id).is_some_and(|r| {
            r.status == ReadStatus::Completed && (r.unconsumed == 0 || r.charge.is_none())
        });
        if done {
            if let Some(r) = self.io.reads.remove(&id) {
                if let Some(c) = r.charge {
                    self.release_charge(c)?;
                    self.threads.scan_needed = true;
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish_step(&mut self, u: &mut OpenUnit, s: u32) -> Result<(), PlanError> {
        let Some(state) = u.steps.get_mut(s as usize) else {
            return Ok(());
        };
        if state.status == StepStatus::Finished {
            return Ok(());
        }
        state.status = StepStatus::Finished;
        let charge = state.charge.take();
        // The plan is shared: holding it (not a copy of the step's dependents) frees `u`.
        let plan = Arc::clone(&u.plan);
        self.unblock(u.id, s);
        if let Some(c) = charge {
            self.release_charge(c)?;
            self.threads.scan_needed = true;
        }
        self.consume_entries(u, s)?;
        let Some(plan_step) = u.plan.steps.get(s as usize) else {
            return Ok(());
        };
        let rg = plan_step.rg as usize;
        let ends_subgroup = plan_step.ends_subgroup;
        let Some(rg_plan) = u.plan.row_groups.get(rg) else {
            return Ok(());
        };
        let drop_now = rg_plan.bloom_decision_step == Some(s) && rg_plan.dropped_by_bloom;
        if let Some(r) = u.rgs.get_mut(rg) {
            decrement(&mut r.open_steps);
            if ends_subgroup {
                r.subgroups_done += 1;
                // The row group's next subgroup may have a task that blocks.
                self.threads.wake.wake(u.id);
            }
        }
        if drop_now {
            self.drop_row_group(u, rg)?;
        } else {
            let dropped = u.rgs.get(rg).is_some_and(|r| r.dropped);
            let dependents = plan.steps.get(s as usize).map(|p| plan.dependents_of(p));
            for &d in dependents.unwrap_or_default() {
                let Some(st) = u.steps.get_mut(d as usize) else {
                    continue;
                };
                decrement(&mut st.unmet);
                if st.unmet == 0 && st.status == StepStatus::Waiting && !dropped {
                    st.status = StepStatus::Eligible;
                    if self.cfg.eligible_driven {
                        let is_page = u
                            .plan
                            .steps
                            .get(d as usize)
                            .is_some_and(|p| p.kind.decodes());
                        if u.current || !is_page {
                            self.units.eligible.push((u.id, d));
                        }
                    }
                }
            }
            if !self.cfg.eligible_driven {
                self.units.dirty.insert(u.id);
            }
        }
        if u.rgs
            .get(rg)
            .is_some_and(|r| r.open_steps == 0 && !r.complete)
        {
            self.rg_complete(u, rg)?;
        }
        Ok(())
    }

    pub(super) fn drop_row_group(&mut self, u: &mut OpenUnit, rg: usize) -> Result<(), PlanError> {
        let Some(r) = u.rgs.get_mut(rg) else {
            return Ok(());
        };
        if r.dropped {
            return Ok(());
        }
        r.dropped = true;
        self.threads.wake.wake(u.id);
        self.output.row_groups_dropped_by_bloom += 1;
        let steps = u.plan.row_groups.get(rg).map_or(0..0, |p| p.steps.clone());
        for s in steps {
            let skip = u
                .steps
                .get(s as usize)
                .is_some_and(|st| matches!(st.status, StepStatus::Waiting | StepStatus::Eligible));
            if skip {
                if let Some(st) = u.steps.get_mut(s as usize) {
                    st.status = StepStatus::Finished;
                }
                self.consume_entries(u, s)?;
                if let Some(r) = u.rgs.get_mut(rg) {
                    decrement(&mut r.open_steps);
                }
            }
        }
        if !self.cfg.eligible_driven {
            self.units.dirty.insert(u.id);
        }
        Ok(())
    }

    pub(super) fn rg_complete(&mut self, u: &mut OpenUnit, rg: usize) -> Result<(), PlanError> {
        let Some(r) = u.rgs.get_mut(rg) else {
            return Ok(());
        };
        if r.complete {
            return Ok(());
        }
        r.complete = true;
        u.rgs_done += 1;
        while u.rgs.get(u.first_incomplete).is_some_and(|r| r.complete) {
            u.first_incomplete += 1;
        }
        self.threads.wake.wake(u.id);
        if !self.cfg.eligible_driven {
            self.units.dirty.insert(u.id);
        }
        if u.rgs_done == u.rgs.len() {
            self.unit_done(u)?;
        }
        Ok(())
    }
}

/// An entry's share of its read's charge: its bytes times the read's amplification (range over
/// the bytes of the entries it serves), as `startPrefetch` charges a handle.
fn share_of(entry_bytes: u64, range_bytes: u64, served_bytes: u64) -> u64 {
    if served_bytes == 0 {
        return 0;
    }
    let share = u128::from(entry_bytes) * u128::from(range_bytes) / u128::from(served_bytes);
    u64::try_from(share).unwrap_or(u64::MAX)
}
