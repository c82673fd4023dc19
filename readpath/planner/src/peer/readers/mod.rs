//! Each peer reader's request stream as a [`Program`], from its own source and from its
//! request log through the test bed (`sim check-peers`; docs/peers.md gives the sources and
//! the measured logs). Only what decides requests and their timing is here: which HEADs and
//! LISTs, the footer reads, which column-chunk ranges merge into one GET, and what runs at
//! once. One file per reader; this one has what they share.

mod arrow_cpp;
mod arrow_rs;
mod duckdb;
mod polars;

use limits::u32_of;
use std::borrow::Cow;
use std::collections::BTreeMap;

use coalescer::{CoalescePolicy, NeededRange, NothingCached};
use layout::{ByteRange, FileIndex, FileLayout, Table};

use super::program::{Program, Request, Step};
use crate::error::PlanError;
use crate::plan::row_group_survives;
use crate::plan::{plan_file, PlanInput};
use crate::query::QuerySpec;
use crate::strategy::{Family, Strategy};
use crate::types::{Object, ReadKind};

/// One file of the query: its layout and what the query reads of it.
pub(crate) struct FileRead<'a> {
    pub(crate) index: FileIndex,
    pub(crate) query_pos: usize,
    /// Made again here if the table holds an outline of it.
    pub(crate) layout: Cow<'a, FileLayout>,
    /// Surviving row groups with the column-chunk ranges of the selected columns, by offset.
    pub(crate) row_groups: Vec<(u32, Vec<ByteRange>)>,
    /// For each of `row_groups`, the rows of the query's answer in it (what any reader
    /// returns after filtering; ClickHouse's planner decides which).
    pub(crate) answer_rows: Vec<u64>,
}

impl FileRead<'_> {
    pub(super) fn size(&self) -> u64 {
        self.layout.size_bytes
    }

    /// The footer's bytes with its trailing length and magic.
    pub(super) fn footer_len(&self) -> u64 {
        (self.layout.footer_len_bytes as u64 + 8).min(self.size())
    }
}

/// The files of `query` with the ranges each reader reads (whole column chunks: none of the
/// peers reads the page index by default), and the row groups min/max pruning keeps (the
/// same decisions as ClickHouse's planner, so arms see the same row groups).
pub(crate) fn files<'a>(
    table: &'a Table,
    query: &QuerySpec,
) -> Result<Vec<FileRead<'a>>, PlanError> {
    let mut columns: Vec<u32> = query
        .columns
        .iter()
        .chain(&query.prewhere_columns)
        .copied()
        .collect();
    columns.sort_unstable();
    columns.dedup();
    let mut out = Vec::new();
    for (query_pos, &fi) in query.files.iter().enumerate() {
        let layout = table
            .layout(fi)
            .map_err(|e| PlanError::Layout(e.to_string()))?;
        let mut row_groups = Vec::new();
        for (g, rg) in layout.row_groups.iter().enumerate() {
            let keep = row_group_survives(
                query.predicate.as_deref(),
                query.row_group_keep_fraction,
                query.seed,
                fi,
                u32_of(g),
                rg,
            );
            if !keep {
                continue;
            }
            let mut ranges: Vec<ByteRange> = columns
                .iter()
                .filter_map(|&c| rg.columns.get(c as usize))
                .map(|c| c.range())
                .filter(|r| !r.is_empty())
                .collect();
            ranges.sort_by_key(|r| r.start);
            row_groups.push((u32_of(g), ranges));
        }
        let answer = answer_rows(&layout, fi, query);
        let answer_rows = row_groups
            .iter()
            .map(|(g, _)| answer.get(g).copied().unwrap_or(0))
            .collect();
        out.push(FileRead {
            index: fi,
            query_pos,
            layout,
            row_groups,
            answer_rows,
        });
    }
    Ok(out)
}

/// The rows of the query's answer in each row group of a file: the same filter decisions as
/// ClickHouse's planner (page slices, PREWHERE, bloom filters), so every reader returns the
/// same rows whatever it reads to find them.
fn answer_rows(layout: &FileLayout, fi: FileIndex, query: &QuerySpec) -> BTreeMap<u32, u64> {
    let main: Vec<u32> = query
        .columns
        .iter()
        .filter(|c| !query.prewhere_columns.contains(c))
        .copied()
        .collect();
    let input = PlanInput {
        file_index: fi,
        row_groups: 0..u32_of(layout.row_groups.len()),
        main_columns: &main,
        prewhere_columns: &query.prewhere_columns,
        column_index_columns: &query.column_index_columns,
        bloom_columns: &query.bloom_columns,
        bloom_probes: query.bloom_probes,
        row_group_keep_fraction: query.row_group_keep_fraction,
        predicate: query.predicate.as_deref(),
        page_keep_fraction: query.page_keep_fraction,
        prewhere_selectivity: query.prewhere_selectivity,
        bloom_drop_fraction: query.bloom_drop_fraction,
        seed: query.seed,
        use_offset_index: true,
        whole_chunks: false,
        unsplit_below_bytes: 0,
        subgroups: false,
        planned: false,
        sequential_subgroups: false,
    };
    let plan = plan_file(layout, &input);
    plan.row_groups
        .iter()
        .map(|rg| {
            let rows = if rg.dropped_by_bloom {
                0
            } else {
                plan.steps[rg.steps.start as usize..rg.steps.end as usize]
                    .iter()
                    .map(|s| s.deliver_rows)
                    .sum()
            };
            (rg.row_group, rows)
        })
        .collect()
}

pub(super) fn get(file: FileIndex, range: ByteRange, kind: ReadKind, needed: u64) -> Request {
    Request {
        object: Object::Data(file),
        range,
        kind,
        io_pool: None,
        budget_bytes: 0,
        needed_bytes: needed,
    }
}

pub(super) fn head(file: FileIndex) -> Request {
    get(file, ByteRange::new(0, 0), ReadKind::Head, 0)
}

pub(super) fn one(r: Request) -> Step {
    Step::Requests {
        requests: vec![r],
        parallel: 1,
    }
}

/// Merged reads of `ranges` under one of the coalescer's presets.
pub(super) fn merged(
    ranges: &[ByteRange],
    policy: &CoalescePolicy,
) -> Result<Vec<ByteRange>, PlanError> {
    if ranges.is_empty() {
        return Ok(Vec::new());
    }
    let needed: Vec<NeededRange> = ranges.iter().map(|r| NeededRange::new(*r)).collect();
    Ok(coalescer::coalesce(&needed, &NothingCached, policy)?
        .into_iter()
        .map(|t| t.range)
        .collect())
}

/// Bytes of `ranges` inside `read` (what a merged read serves).
pub(super) fn needed_in(read: ByteRange, ranges: &[ByteRange]) -> u64 {
    ranges
        .iter()
        .map(|r| {
            let s = r.start.max(read.start);
            let e = r.end.min(read.end);
            e.saturating_sub(s)
        })
        .sum()
}

pub(super) fn decode_and_deliver(f: &FileRead<'_>, g: u32) -> [Step; 2] {
    let rg = f.layout.row_groups.get(g as usize);
    let rows = rg.map_or(0, |r| r.num_rows);
    let answer = f
        .row_groups
        .iter()
        .position(|(x, _)| *x == g)
        .and_then(|i| f.answer_rows.get(i))
        .copied()
        .unwrap_or(0);
    let (compressed, decoded) =
        f.row_groups
            .iter()
            .find(|(x, _)| *x == g)
            .map_or((0, 0), |(_, ranges)| {
                let c: u64 = ranges.iter().map(|r| r.len()).sum();
                // Decoded size: the chunks' own figure, for the chunks read.
                let d: u64 = rg.map_or(0, |rg| {
                    rg.columns
                        .iter()
                        .filter(|c| ranges.contains(&c.range()))
                        .map(|c| c.uncompressed_bytes)
                        .sum()
                });
                (c, d)
            });
    [
        Step::Decode {
            file: f.index,
            row_group: g,
            compressed_bytes: compressed,
            decoded_bytes: decoded,
            rows,
        },
        Step::Deliver {
            file: f.index,
            query_pos: f.query_pos,
            rows: answer,
            decoded_bytes: decoded,
        },
    ]
}

/// The program of `strategy` (a peer family with a program of its own), or `None` for the
/// peers that still run on ClickHouse's coupled discipline.
pub(crate) fn program(
    strategy: &Strategy,
    table: &Table,
    query: &QuerySpec,
) -> Result<Option<Program>, PlanError> {
    // Before planning the files: a family without a program (ClickHouse's, and the peers on
    // its discipline) would plan every file of the query for nothing.
    if !matches!(
        strategy.family(),
        Family::ArrowRs | Family::DuckDb | Family::ArrowCpp | Family::Polars
    ) {
        return Ok(None);
    }
    let files = files(table, query)?;
    let knobs = &strategy.peer;
    let policy = strategy.coalesce_policy();
    let filter = duckdb::Filter {
        filter_columns: &query.prewhere_columns,
        columns: &query.columns,
    };
    let filter = (!query.prewhere_columns.is_empty()).then_some(&filter);
    Ok(Some(match strategy.family() {
        Family::ArrowRs => arrow_rs::program(&files, knobs, &policy)?,
        Family::DuckDb => duckdb::program(&files, knobs, &policy, filter)?,
        Family::ArrowCpp => arrow_cpp::program(&files, knobs, &policy)?,
        Family::Polars => polars::program(&files, knobs, &policy)?,
        _ => return Ok(None),
    }))
}
