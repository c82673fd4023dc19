//! Units (files or buckets) and streams: opening, the footer and Iceberg metadata phases,
//! and handing a stream its next unit.

use super::*;
use limits::u32_of;
use std::borrow::Cow;

impl ClickHouseReader {
    pub(super) fn open_next_unit(&mut self, stream: usize) -> Result<(), PlanError> {
        let Some(unit) = self.units.list.get(self.units.next).cloned() else {
            return Ok(());
        };
        let uid = u32_of(self.units.next);
        self.units.next += 1;
        let Some(file) = self.table.files.get(unit.file as usize) else {
            return Err(PlanError::Query(format!(
                "file {} does not exist",
                unit.file
            )));
        };
        let input = PlanInput {
            file_index: unit.file,
            row_groups: unit.row_groups.clone(),
            main_columns: &self.cfg.main_columns,
            prewhere_columns: &self.query.prewhere_columns,
            column_index_columns: &self.query.column_index_columns,
            bloom_columns: &self.query.bloom_columns,
            bloom_probes: self.query.bloom_probes,
            row_group_keep_fraction: self.query.row_group_keep_fraction,
            predicate: self.query.predicate.as_deref(),
            page_keep_fraction: self.query.page_keep_fraction,
            prewhere_selectivity: self.query.prewhere_selectivity,
            bloom_drop_fraction: self.query.bloom_drop_fraction,
            seed: self.query.seed,
            use_offset_index: self.strategy.use_offset_index,
            whole_chunks: self.strategy.reads_whole_chunks(),
            // ClickHouse's Prefetcher splits only chunks of at least `min_bytes_for_seek`.
            unsplit_below_bytes: if self.cfg.subgroups {
                self.strategy.min_bytes_for_seek()
            } else {
                0
            },
            subgroups: self.cfg.subgroups,
            planned: self.cfg.planned,
            sequential_subgroups: self.cfg.stage_driven,
        };
        // The file's full layout, made again if the table holds an outline of it.
        let table = &self.table;
        let layout = || {
            table
                .layout(unit.file)
                .map_err(|e| PlanError::Layout(e.to_string()))
        };
        // Made once here when the needed ranges are recorded (they read it too), else only if
        // the plan is not cached: an outlined file is not made twice for one unit.
        let recorded = if self.record_needed {
            Some(layout()?)
        } else {
            None
        };
        let held = || match &recorded {
            Some(full) => Ok(Cow::Borrowed(&**full)),
            None => layout(),
        };
        let plan = match &self.plans {
            Some(cache) => {
                // Every unit of this reader shares the query key: interned once.
                let query = *self
                    .plan_query
                    .get_or_insert_with(|| cache.query_id(&input));
                cache.get_or_plan(query, held, &input)?
            }
            None => Arc::new(plan_file(&*held()?, &input)),
        };
        if let Some(full) = &recorded {
            if self.footers_noted.insert(unit.file)
                && !self.query.parquet_metadata_cache_warm
                && file.size_bytes > 0
            {
                self.needed
                    .push(crate::needed::footer(full, unit.file, unit.query_pos));
            }
            crate::needed::plan_ranges(
                full,
                unit.file,
                unit.query_pos,
                &plan,
                &self.cfg.part_columns,
                self.strategy.use_offset_index && !self.strategy.reads_whole_chunks(),
                &mut self.needed,
            );
        }
        let size = file.size_bytes;
        let footer_len = file.footer_len_bytes as u64 + 8;
        // A closed unit's vectors, refilled below for this plan.
        let mut b = self.units.spare.pop().unwrap_or_default();
        let whole_file = crate::footer::footer_reads(
            self.strategy.footer,
            self.strategy.whole_file,
            size,
            footer_len,
            self.query.parquet_metadata_cache_warm,
            &mut b.footer_reads,
        );
        let n_entries = plan.entries.len();
        b.fill_for(&plan);
        let lazy = if self.cfg.lazy && n_entries > 0 {
            let needed: Vec<NeededRange> = plan
                .entries
                .iter()
                .map(|e| NeededRange {
                    range: e.range,
                    group: e.group,
                    likely_used: true,
                })
                .collect();
            let (seek, per_task) = match self.policy {
                CoalescePolicy::ClickHouseBase {
                    min_bytes_for_seek,
                    bytes_per_read_task,
                } => (min_bytes_for_seek, bytes_per_read_task),
                _ => (0, 0),
            };
            Some(LazyCoalescer::new(needed, seek, per_task)?)
        } else {
            None
        };
        let current = self.units.streams.get(stream).is_some_and(|s| s.is_empty());
        let u = OpenUnit {
            id: uid,
            file: unit.file,
            stream,
            current,
            phase: Phase::Footer,
            footer_reads: b.footer_reads,
            whole_file,
            entry_state: b.entry_state,
            entry_pieces: b.entry_pieces,
            entry_counted: b.entry_counted,
            entry_consumers: b.entry_consumers,
            entry_read: b.entry_read,
            extra_reads: BTreeMap::new(),
            waiters: b.waiters,
            lazy,
            steps: b.steps,
            cursor: 0,
            started_not_ready: 0,
            started_decodes_not_ready: 0,
            rgs: b.rgs,
            first_incomplete: 0,
            rgs_done: 0,
            queue: IssueQueue::new(stream),
            local_waiting: b.local_waiting,
            reads_running: 0,
            reads_alive: 0,
            plan,
        };
        if let Some(s) = self.units.streams.get_mut(stream) {
            s.push_back(uid);
        }
        self.units.open_id(uid);
        self.io.controllers.open(uid)?;
        if let Some(slot) = self.units.open.get_mut(uid as usize) {
            *slot = Some(Box::new(u));
        }
        self.with_unit(uid, |r, u| r.next_footer_read(u))
    }

    pub(super) fn next_footer_read(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        match u.footer_reads.pop_front() {
            Some(range) => {
                let id = self.new_read(
                    u,
                    Purpose::Footer {
                        unit: u.id,
                        stream: u.stream,
                    },
                    range,
                    ReadKind::Footer,
                    [],
                    Served::new(),
                )?;
                self.submit_read_of(u, id);
                Ok(())
            }
            None => self.start_plan(u),
        }
    }

    pub(super) fn footer_done(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        if !u.footer_reads.is_empty() {
            return self.next_footer_read(u);
        }
        if u.whole_file {
            // The whole file is in memory: every entry is ready.
            for (e, st) in u.entry_state.iter_mut().enumerate() {
                *st = EntryState::Ready;
                if let Some(l) = u.lazy.as_mut() {
                    let _ = l.task_for(u32_of(e));
                }
            }
        }
        self.start_plan(u)
    }

    pub(super) fn start_plan(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        u.phase = Phase::Steps;
        for (i, st) in u.steps.iter_mut().enumerate() {
            if st.unmet == 0 && st.status == StepStatus::Waiting {
                st.status = StepStatus::Eligible;
                if self.cfg.eligible_driven {
                    let is_page = u.plan.steps.get(i).is_some_and(|s| s.kind.decodes());
                    if u.current || !is_page {
                        self.units.eligible.push((u.id, u32_of(i)));
                    }
                }
            }
        }
        if !self.cfg.eligible_driven {
            self.units.dirty.insert(u.id);
        }
        // Row groups with no step at all are complete now.
        for rg in 0..u.rgs.len() {
            if u.rgs
                .get(rg)
                .is_some_and(|r| r.open_steps == 0 && !r.complete)
            {
                self.rg_complete(u, rg)?;
            }
        }
        if u.rgs.is_empty() {
            self.unit_done(u)?;
        }
        Ok(())
    }

    pub(super) fn unit_done(&mut self, u: &mut OpenUnit) -> Result<(), PlanError> {
        if u.phase == Phase::Done {
            return Ok(());
        }
        u.phase = Phase::Done;
        self.units.done += 1;
        self.units.close_id(u.id);
        // Every planned read was issued: a unit finishes only once each of its steps has its
        // bytes, and a step's bytes come from reads its queue held.
        debug_assert!(
            u.queue.is_empty(),
            "unit {} closes with {} planned reads never issued",
            u.id,
            u.queue.len()
        );
        // Reads still queued serve nothing any more.
        while let Some(id) = u.local_waiting.pop_front() {
            decrement(&mut self.io.local_queued);
            self.io.reads.remove(&id);
            decrement(&mut u.reads_alive);
        }
        let stream = u.stream;
        let was_front = self
            .units
            .streams
            .get(stream)
            .and_then(|s| s.front())
            .copied()
            == Some(u.id);
        if let Some(s) = self.units.streams.get_mut(stream) {
            s.retain(|&x| x != u.id);
        }
        if was_front {
            if let Some(&next) = self.units.streams.get(stream).and_then(|s| s.front()) {
                self.make_current(next);
            }
        }
        self.open_next_unit(stream)?;
        Ok(())
    }

    pub(super) fn make_current(&mut self, uid: u32) {
        let Some(u) = self
            .units
            .open
            .get_mut(uid as usize)
            .and_then(|u| u.as_mut())
        else {
            return;
        };
        if u.current {
            return;
        }
        u.current = true;
        if self.cfg.eligible_driven {
            for (i, st) in u.steps.iter().enumerate() {
                let is_page = u.plan.steps.get(i).is_some_and(|s| s.kind.decodes());
                if is_page && st.status == StepStatus::Eligible {
                    self.units.eligible.push((uid, u32_of(i)));
                }
            }
        } else {
            self.units.dirty.insert(uid);
        }
    }
}
