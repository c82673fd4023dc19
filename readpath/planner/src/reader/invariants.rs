//! The reader's invariants, checked after every event and every poll in debug builds: the
//! post-conditions every state transition must leave behind. Each counter the reader keeps for
//! speed is recomputed from the state it summarises, so a transition that forgets one side of
//! its bookkeeping fails here, at the event that broke it, not later as a wrong figure.

use limits::u32_of;

use super::{
    ClickHouseReader, IcebergPhase, OpenUnit, Purpose, ReadStatus, RgState, Runner, StepStatus,
};
use crate::plan::RowGroupPlan;

/// How many alive reads are in each status.
#[derive(Default)]
struct StatusCounts {
    issued: u32,
    pool: u32,
    inline_own_thread: u32,
    inline_blocked_thread: u32,
    iceberg_unfinished: u32,
}

impl ClickHouseReader {
    /// Asserts the invariants (debug builds only; a no-op in release). Skipped once the reader
    /// has failed: a failed transition may stop halfway, and the error is what it reports.
    pub(super) fn debug_check_invariants(&self) {
        if !cfg!(debug_assertions) || self.error.is_some() {
            return;
        }
        let counts = self.status_counts();
        self.threads.decode_queue.check();
        self.check_threads(&counts);
        self.check_io(&counts);
        self.check_units();
        self.check_iceberg(&counts);
    }

    fn status_counts(&self) -> StatusCounts {
        let mut c = StatusCounts::default();
        for r in self.io.reads.values() {
            match r.status {
                ReadStatus::Created | ReadStatus::Completed => {}
                ReadStatus::Issued => c.issued += 1,
                // The Iceberg metadata reads run one at a time, outside the data files' pool.
                ReadStatus::Running(Runner::IoPool) if r.purpose == Purpose::Iceberg => {}
                ReadStatus::Running(Runner::IoPool) => c.pool += 1,
                ReadStatus::Running(Runner::Inline { took_thread: true }) => {
                    c.inline_own_thread += 1;
                }
                ReadStatus::Running(Runner::Inline { took_thread: false }) => {
                    c.inline_blocked_thread += 1;
                }
            }
            if r.purpose == Purpose::Iceberg && r.status != ReadStatus::Completed {
                c.iceberg_unfinished += 1;
            }
        }
        c
    }

    fn check_threads(&self, c: &StatusCounts) {
        let t = &self.threads;
        assert!(
            t.held() <= self.cfg.max_parsing_threads,
            "{} parsing threads held, {} exist",
            t.held(),
            self.cfg.max_parsing_threads
        );
        assert_eq!(
            t.inline, c.inline_own_thread,
            "inline reads on threads of their own"
        );
        assert_eq!(
            t.decodes_running,
            u32_of(t.decodes.len()) + t.inline,
            "decodes_running counts running decodes and inline reads on their own threads"
        );
        // A blocked task's inline read holds no thread of its own; neither does a stream
        // thread's read run while a task of its unit is blocked (`maybe_run_inline`).
        assert!(
            u32_of(t.blocked_by_read.len()) <= c.inline_blocked_thread,
            "{} reads run by blocked tasks, {} inline reads without a thread of their own",
            t.blocked_by_read.len(),
            c.inline_blocked_thread
        );
        let decoding: u64 = t.decoding_by_unit.iter().map(|&n| u64::from(n)).sum();
        assert_eq!(
            decoding,
            t.decodes.len() as u64,
            "running decodes counted per unit"
        );
        let counted: u64 = t.blocked.iter().map(|m| m.len() as u64).sum();
        assert_eq!(
            counted,
            u64::from(t.blocked_total),
            "blocked tasks counted in all"
        );
        for (uid, tasks) in t.blocked.iter().enumerate() {
            assert!(
                tasks.windows(2).all(|w| w[0].0 < w[1].0),
                "unit {uid}'s blocked tasks sorted by step, each once"
            );
        }
        for (read, task) in &t.blocked_by_read {
            let tasks = t
                .blocked
                .get(task.0 as usize)
                .map_or(&[][..], Vec::as_slice);
            if let Some((_, b)) = tasks.iter().find(|(s, _)| *s == task.1) {
                assert_eq!(
                    b.inline_read,
                    Some(*read),
                    "blocked task {task:?} runs read {read}"
                );
            }
        }
    }

    fn check_io(&self, c: &StatusCounts) {
        assert_eq!(
            self.io.pool.running(),
            c.pool,
            "reads running in the IO pool"
        );
        assert_eq!(
            self.io.inline_running,
            c.inline_own_thread + c.inline_blocked_thread,
            "reads running inline"
        );
        let busy_streams = self.io.inline_by_stream.iter().filter(|b| **b).count();
        // An inline read runs on its stream's thread or on a blocked task's thread.
        assert_eq!(
            busy_streams + self.threads.blocked_by_read.len(),
            self.io.inline_running as usize,
            "inline reads: on stream threads plus on blocked tasks' threads"
        );
        assert!(
            self.io.pool.waiting() <= c.issued as usize,
            "{} reads wait for the IO pool, {} are issued",
            self.io.pool.waiting(),
            c.issued
        );
    }

    /// The per-unit and reader-wide read counters against the reads they count: a unit's reads
    /// alive are its reads not completed, its reads running those handed to the IO pool or run
    /// inline (issued or running); the reader's queued counts are the units' planning queues
    /// and per-file waiting lists.
    fn check_read_counters(&self) {
        let (mut planned, mut local) = (0u64, 0u64);
        for unit in self.units.open.iter().flatten() {
            planned += unit.queue.len() as u64;
            local += unit.local_waiting.len() as u64;
            let (mut alive, mut running) = (0u32, 0u32);
            for r in self.io.reads.values() {
                if r.purpose.unit() != Some(unit.id) {
                    continue;
                }
                match r.status {
                    ReadStatus::Completed => {}
                    ReadStatus::Created => alive += 1,
                    ReadStatus::Issued | ReadStatus::Running(_) => {
                        alive += 1;
                        running += 1;
                    }
                }
            }
            assert_eq!(unit.reads_alive, alive, "unit {}: reads alive", unit.id);
            assert_eq!(
                unit.reads_running, running,
                "unit {}: reads issued or running",
                unit.id
            );
        }
        assert_eq!(self.io.planned_queued, planned, "reads in planning queues");
        let c = &self.io.controllers;
        assert_eq!(
            c.recomputed(),
            (c.bytes_in_flight(), c.target_bytes()),
            "bytes in flight and targets summed over the open units' controllers"
        );
        assert_eq!(
            self.io.local_queued, local,
            "reads waiting for their file's limit"
        );
    }

    fn check_units(&self) {
        self.check_read_counters();
        let u = &self.units;
        assert!(
            u.next <= u.list.len(),
            "next unit {} of {}",
            u.next,
            u.list.len()
        );
        assert!(u.done <= u.next, "{} units done, {} opened", u.done, u.next);
        let open = u.open.iter().filter(|o| o.is_some()).count();
        assert_eq!(open, u.open_ids.len(), "open units and their ids");
        assert!(
            u.open_ids.windows(2).all(|w| w[0] < w[1]),
            "open unit ids sorted, each once"
        );
        for id in &u.open_ids {
            let slot = u.open.get(*id as usize);
            assert!(
                slot.is_some_and(Option::is_some),
                "unit {id} listed open, not held"
            );
        }
        assert!(
            u.queued.windows(2).all(|w| w[0] < w[1]),
            "queued unit ids sorted, each once"
        );
        // The issue pass walks `queued`: every unit with a queued read must be in it.
        for unit in u.open.iter().flatten() {
            assert!(
                unit.queue.is_empty() || u.queued.binary_search(&unit.id).is_ok(),
                "unit {} has queued reads but is not listed",
                unit.id
            );
        }
        // `blocked_tasks_of` passes over a unit with no step started and not ready.
        for unit in u.open.iter().flatten() {
            let started = unit
                .steps
                .iter()
                .filter(|st| st.status == StepStatus::Started)
                .count();
            assert_eq!(
                unit.started_not_ready as usize, started,
                "unit {}: steps started and not ready",
                unit.id
            );
            let started_decodes = unit
                .steps
                .iter()
                .zip(&unit.plan.steps)
                .filter(|(st, p)| st.status == StepStatus::Started && p.kind.decodes())
                .count();
            assert_eq!(
                unit.started_decodes_not_ready as usize, started_decodes,
                "unit {}: decode steps started and not ready",
                unit.id
            );
            // `current_decode_step` starts its search at `decode_search_from`.
            for (rg, (state, plan)) in unit.rgs.iter().zip(unit.plan.row_groups.iter()).enumerate()
            {
                for s in plan.steps.start..state.decode_search_from.max(plan.steps.start) {
                    let passed = unit.plan.steps.get(s as usize).is_some_and(|p| {
                        !p.kind.decodes() || p.kind.subgroup() < state.subgroups_done
                    }) || unit
                        .steps
                        .get(s as usize)
                        .is_some_and(|st| st.status == StepStatus::Finished);
                    assert!(
                        passed,
                        "unit {}, row group {rg}: step {s} is before the decode search start",
                        unit.id
                    );
                }
                self.check_decode_order(unit, rg, state, plan);
            }
        }
    }

    /// A row group decodes its subgroups in order: the decodes queued or running (its
    /// `Decoding` steps not pending) are of its first `parallel_subgroups` unfinished
    /// subgroups, at most that many, and its pending ones are in step order.
    fn check_decode_order(&self, unit: &OpenUnit, rg: usize, state: &RgState, plan: &RowGroupPlan) {
        let cap = self.cfg.parallel_subgroups;
        let mut active = 0;
        for s in plan.steps.clone() {
            let decoding = unit
                .steps
                .get(s as usize)
                .is_some_and(|st| st.status == StepStatus::Decoding);
            if !decoding || state.pending_decodes.contains(&s) {
                continue;
            }
            active += 1;
            let subgroup = unit
                .plan
                .steps
                .get(s as usize)
                .map_or(0, |p| p.kind.subgroup());
            assert!(
                subgroup < state.subgroups_done + cap,
                "unit {}, row group {rg}: subgroup {subgroup} decodes with {} done (at most {cap} at once, in order)",
                unit.id,
                state.subgroups_done
            );
        }
        assert_eq!(
            active, state.active_decodes,
            "unit {}, row group {rg}: decodes queued or running",
            unit.id
        );
        assert!(
            active <= cap,
            "unit {}, row group {rg}: {active} decodes",
            unit.id
        );
        assert!(
            state
                .pending_decodes
                .iter()
                .zip(state.pending_decodes.iter().skip(1))
                .all(|(a, b)| a < b),
            "unit {}, row group {rg}: pending decodes in step order",
            unit.id
        );
    }

    fn check_iceberg(&self, c: &StatusCounts) {
        let expected = match &self.iceberg {
            IcebergPhase::Reading { running, .. } => u32::from(*running),
            IcebergPhase::Done => 0,
        };
        assert_eq!(
            c.iceberg_unfinished, expected,
            "Iceberg metadata reads, one at a time"
        );
    }
}
