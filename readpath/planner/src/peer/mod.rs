//! The peer readers (arrow-rs, Arrow C++/pyarrow, DuckDB, Polars) as their own request
//! programs: each reader's query is compiled into a [`program::Program`] (`readers.rs`) that
//! a small task machine runs (`engine.rs`). They share the reader's contract with
//! ClickHouse's reader ([`crate::Reader`]): events in, actions out, time a parameter.

mod engine;
mod inflight;
pub mod knobs;
pub mod program;
mod readers;

/// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` of a Polars coalescing policy (at least 1 byte):
/// the merge target, each GET's hold on the in-flight budget and the budget's floor. `None`
/// for another policy.
pub(crate) fn polars_chunk_bytes(policy: &coalescer::CoalescePolicy) -> Option<u64> {
    match policy {
        coalescer::CoalescePolicy::Polars {
            chunk_size_bytes, ..
        } => Some((*chunk_size_bytes).max(1)),
        _ => None,
    }
}

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use layout::Table;
use readahead::{ProfileEvents, ReadSource};

use crate::error::PlanError;
use crate::needed::NeededRange;
use crate::query::QuerySpec;
use crate::strategy::Strategy;
use crate::types::{Action, Event, QueryOutput, ReadId, ReadKind, Status};

/// A peer reader running one query.
pub(crate) struct PeerReader {
    table: Arc<Table>,
    query: QuerySpec,
    strategy: Strategy,
    engine: engine::Engine,
    out: VecDeque<Action>,
    events: ProfileEvents,
    output: QueryOutput,
    error: Option<PlanError>,
    started: bool,
    now_ns: u64,
    record_needed: bool,
    /// Polars' adaptive in-flight budget, when the program has one.
    controller: Option<inflight::Controller>,
    /// Budgeted reads in flight: (started, first byte) in virtual ns, for the controller.
    budgeted_reads: BTreeMap<u64, (u64, Option<u64>)>,
}

impl PeerReader {
    /// The reader of `strategy`'s family, or `None` for a family without a program of its own.
    pub(crate) fn new(
        table: Arc<Table>,
        query: QuerySpec,
        strategy: Strategy,
    ) -> Result<Option<PeerReader>, PlanError> {
        query.validate(&table)?;
        let Some(program) = readers::program(&strategy, &table, &query)? else {
            return Ok(None);
        };
        let output = QueryOutput {
            rows_per_file: vec![0; query.files.len()],
            rows_per_unit: vec![0; query.files.len()],
            ..QueryOutput::default()
        };
        let controller = match program.budget {
            Some(program::Budget::PolarsAdaptive {
                init_bytes,
                chunk_bytes,
            }) => Some(inflight::Controller::new(init_bytes, chunk_bytes)),
            _ => None,
        };
        Ok(Some(PeerReader {
            engine: engine::Engine::new(program)?,
            controller,
            budgeted_reads: BTreeMap::new(),
            table,
            query,
            strategy,
            out: VecDeque::new(),
            events: ProfileEvents::new(),
            output,
            error: None,
            started: false,
            now_ns: 0,
            record_needed: false,
        }))
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.error.is_none() && self.started && self.out.is_empty() && self.engine.is_finished()
    }

    pub(crate) fn error(&self) -> Option<&PlanError> {
        self.error.as_ref()
    }

    pub(crate) fn profile_events(&self) -> &ProfileEvents {
        &self.events
    }

    pub(crate) fn output(&self) -> &QueryOutput {
        &self.output
    }

    pub(crate) fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    pub(crate) fn record_needed(&mut self, on: bool) {
        self.record_needed = on;
    }

    /// The ranges the reader needs: each file's footer, then every column chunk it reads.
    pub(crate) fn take_needed(&mut self) -> Result<Vec<NeededRange>, PlanError> {
        if !self.record_needed {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        let mut columns: Vec<u32> = self
            .query
            .columns
            .iter()
            .chain(&self.query.prewhere_columns)
            .copied()
            .collect();
        columns.sort_unstable();
        columns.dedup();
        for f in readers::files(&self.table, &self.query)? {
            out.push(crate::needed::footer(&f.layout, f.index, f.query_pos));
            for (g, _) in &f.row_groups {
                let Some(rg) = f.layout.row_groups.get(*g as usize) else {
                    continue;
                };
                for &c in &columns {
                    let Some(ch) = rg.columns.get(c as usize) else {
                        continue;
                    };
                    out.push(NeededRange {
                        file: f.index,
                        query_pos: f.query_pos,
                        range: ch.range(),
                        kind: ReadKind::DataPages,
                        row_group: Some(*g),
                        column: Some(c),
                        row_group_rows: rg.num_rows,
                        first_row: 0,
                        uncompressed_bytes: ch.uncompressed_bytes,
                    });
                }
            }
        }
        crate::needed::sort(&mut out);
        Ok(out)
    }

    pub(crate) fn status(&self) -> Status {
        Status {
            bytes_in_flight: 0,
            target_bytes_in_flight: 0,
            peak_bytes_in_flight: 0,
            reads_running: self.engine.reads_running,
            reads_queued: self.engine.reads_queued(),
            inline_reads_running: 0,
            io_threads: self.strategy.peer.io_threads,
            decodes_running: self.engine.decodes_running(),
            decodes_queued: 0,
            chunks_outstanding: self.engine.chunks_outstanding(),
            open_files: 0,
            memory: Vec::new(),
            peak_memory_bytes: 0,
        }
    }

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

    /// The controller's next tick, while the query runs.
    pub(crate) fn poll_timeout(&self) -> Option<u64> {
        if self.error.is_some() || self.is_finished() {
            return None;
        }
        self.controller.as_ref()?.next_tick_ns()
    }

    pub(crate) fn handle_timeout(&mut self, now_ns: u64) {
        if !self.set_now(now_ns) {
            return;
        }
        let Some(c) = self.controller.as_mut() else {
            return;
        };
        if let Some(budget) = c.tick(now_ns) {
            self.engine.set_budget(budget);
            let r = self.engine.pump(&mut self.out);
            self.after(r);
        }
    }

    /// Keeps the first error, and stops a program that can no longer move.
    fn after(&mut self, r: Result<(), PlanError>) {
        if let Err(e) = r {
            self.error.get_or_insert(e);
        }
        if self.error.is_none() && self.out.is_empty() && self.engine.is_stalled() {
            self.error = Some(PlanError::Contract(
                "peer program stalled: tasks wait for each other and nothing runs".into(),
            ));
        }
        self.sync_counters();
    }

    /// A budgeted read ended: one sample for the controller.
    fn sample(&mut self, id: ReadId, now_ns: u64) {
        let (Some(c), Some((start, first))) =
            (self.controller.as_mut(), self.budgeted_reads.remove(&id.0))
        else {
            return;
        };
        let bytes = self.engine.read_len(id).unwrap_or(0);
        c.record(bytes, first.unwrap_or(now_ns).saturating_sub(start), now_ns);
    }

    pub(crate) fn handle(&mut self, now_ns: u64, event: Event) {
        if !self.set_now(now_ns) {
            return;
        }
        let r = match event {
            // Peers serve a read when it is whole: first bytes only time the controller.
            Event::ReadFirstByte { id } => {
                if let Some((_, first)) = self.budgeted_reads.get_mut(&id.0) {
                    first.get_or_insert(now_ns);
                }
                Ok(())
            }
            Event::ReadProgress { .. } => Ok(()),
            Event::ReadCompleted { id, source } => {
                let _: ReadSource = source;
                self.sample(id, now_ns);
                self.engine.on_read_completed(id, &mut self.out)
            }
            Event::ReadFailed { id, reason } => Err(PlanError::ReadFailed {
                read_id: id.0,
                object: format!("{:?}", self.engine.read_kind(id)),
                range: layout::ByteRange::new(0, 0),
                reason,
            }),
            Event::DecodeCompleted { id } => self.engine.on_decode_completed(id, &mut self.out),
            Event::ChunkConsumed { id } => self.engine.on_chunk_consumed(id, &mut self.out),
        };
        self.after(r);
    }

    pub(crate) fn poll_action(&mut self, now_ns: u64) -> Option<Action> {
        if !self.set_now(now_ns) {
            return None;
        }
        if !self.started {
            self.started = true;
            let r = self.engine.pump(&mut self.out);
            self.after(r);
            if self.error.is_some() {
                return None;
            }
        }
        let a = self.out.pop_front();
        if let Some(Action::Read(r)) = &a {
            if let Some(c) = self.controller.as_mut() {
                c.used(now_ns);
                if self.engine.read_is_budgeted(r.id) {
                    self.budgeted_reads.insert(r.id.0, (now_ns, None));
                }
            }
        }
        if let Some(Action::Deliver(c)) = &a {
            if let Some(pos) = self.query.files.iter().position(|f| *f == c.file) {
                if let Some(r) = self.output.rows_per_file.get_mut(pos) {
                    *r += c.rows;
                }
                if let Some(r) = self.output.rows_per_unit.get_mut(pos) {
                    *r += c.rows;
                }
            }
        }
        a
    }

    fn sync_counters(&mut self) {
        self.events.parquet_read_tasks = self.engine.gets;
        self.events.parquet_read_task_bytes = self.engine.get_bytes;
        self.output.rows = self.engine.rows;
        self.output.chunks = self.engine.chunks_delivered;
        self.output.needed_bytes = self.engine.needed_bytes;
    }
}
