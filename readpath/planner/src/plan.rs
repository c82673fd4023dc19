//! The per-file plan: from the layout and the query, every stage's needed byte ranges
//! (`docs/readpath.md` section 1) as steps with dependencies. No IO and no scheduling here: the
//! [`crate::Reader`] runs the steps; this module only says what each one needs.
//!
//! Steps of one surviving row group, in order: bloom header -> bloom blocks, dictionary ->
//! column + offset indexes -> per row subgroup: PREWHERE pages (then their decode) -> the
//! remaining columns' pages (then their decode, then delivery). Steps with no work do not
//! exist. A step is *finished* when its bytes are ready (index steps) or decoded (page steps).

use std::ops::Range;

use layout::{ByteRange, ColumnChunk, FileLayout};

use crate::hash::{chance, splitmix64, Decision};
use crate::predicate::Predicate;
use crate::types::ReadKind;

/// Rows per row subgroup at most (ClickHouse's `65409`).
pub const SUBGROUP_MAX_ROWS: u64 = 65_409;
/// Bytes per row subgroup aimed at (ClickHouse's `16744704`).
pub const SUBGROUP_TARGET_BYTES: u64 = 16_744_704;
/// Rows per row subgroup at least.
pub const SUBGROUP_MIN_ROWS: u64 = 128;
/// The bloom-filter header guess.
pub const BLOOM_HEADER_GUESS_BYTES: u64 = 256;
/// A bloom-filter block.
pub const BLOOM_BLOCK_BYTES: u64 = 32;
/// Row-level decisions (page pruning, PREWHERE) are drawn per slice of 1/64 of a row group.
pub const SLICES_PER_ROW_GROUP: u64 = 64;

/// What a step does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// Bloom-filter header guesses.
    BloomHeader,
    /// Bloom-filter blocks hit by the probes.
    BloomBlocks,
    /// Dictionary pages.
    Dictionary,
    /// Column indexes and offset indexes.
    Indexes,
    /// PREWHERE columns' pages of subgroup `n`, then their decode.
    Prewhere(u32),
    /// The other columns' pages of subgroup `n`, then their decode and delivery.
    Main(u32),
}

impl StepKind {
    /// Whether the step ends in a decode (page steps).
    pub fn decodes(self) -> bool {
        matches!(self, StepKind::Prewhere(_) | StepKind::Main(_))
    }

    /// The subgroup of a page step (0 for index steps, as the issue queue expects).
    pub fn subgroup(self) -> u32 {
        match self {
            StepKind::Prewhere(n) | StepKind::Main(n) => n,
            _ => 0,
        }
    }
}

/// One registered range of the file (overlapping needs merged), sorted by offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The bytes.
    pub range: ByteRange,
    /// Coalescing group (0 = whole range; pages of one chunk and blocks of one filter share
    /// a non-zero id).
    pub group: u32,
    /// What the bytes are.
    pub kind: ReadKind,
}

/// One step of one row group.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Position of its row group in [`FilePlan::row_groups`].
    pub rg: u32,
    /// What it does.
    pub kind: StepKind,
    /// Entries it needs (indexes into [`FilePlan::entries`], sorted, unique).
    pub entries: Vec<u32>,
    /// Steps that must be finished before this one may start.
    pub deps: Vec<u32>,
    /// Compressed bytes decoded (page steps).
    pub compressed_bytes: u64,
    /// Decoded bytes produced (page steps).
    pub decoded_bytes: u64,
    /// Rows decoded (page steps).
    pub rows: u64,
    /// Rows delivered when this step's decode finishes (the last step of a subgroup).
    pub deliver_rows: u64,
    /// Whether the step ends the subgroup (delivery, then the next subgroup).
    pub ends_subgroup: bool,
}

/// One row group that survived min/max pruning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowGroupPlan {
    /// Index of the row group in the file.
    pub row_group: u32,
    /// Rows in the row group.
    pub rows: u64,
    /// Its steps in [`FilePlan::steps`].
    pub steps: Range<u32>,
    /// The step whose end decides the bloom verdict, if the row group has a bloom filter
    /// the query probes.
    pub bloom_decision_step: Option<u32>,
    /// The verdict: dropped once that step finishes.
    pub dropped_by_bloom: bool,
    /// Row subgroups with work.
    pub subgroups: u32,
}

/// Everything one file (or bucket) needs.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FilePlan {
    /// Registered ranges, sorted, non-overlapping.
    pub entries: Vec<Entry>,
    /// For each entry, how many steps need it.
    pub entry_consumers: Vec<u32>,
    /// Surviving row groups, in file order.
    pub row_groups: Vec<RowGroupPlan>,
    /// All steps, row group by row group, each row group's in the order above.
    pub steps: Vec<Step>,
}

/// What shapes a plan, resolved from the query and the strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInput<'a> {
    /// Index of the file in the table.
    pub file_index: u32,
    /// Row groups of this unit.
    pub row_groups: Range<u32>,
    /// Output columns not in PREWHERE.
    pub main_columns: &'a [u32],
    /// PREWHERE columns.
    pub prewhere_columns: &'a [u32],
    /// Columns whose column index is read.
    pub column_index_columns: &'a [u32],
    /// Columns whose bloom filter is probed.
    pub bloom_columns: &'a [u32],
    /// Probes per bloom column and row group.
    pub bloom_probes: u32,
    /// Query fractions.
    pub row_group_keep_fraction: f64,
    /// See [`crate::QuerySpec`]: when set, it alone decides which row groups survive.
    pub predicate: Option<&'a Predicate>,
    /// See [`crate::QuerySpec`].
    pub page_keep_fraction: f64,
    /// See [`crate::QuerySpec`].
    pub prewhere_selectivity: f64,
    /// See [`crate::QuerySpec`].
    pub bloom_drop_fraction: f64,
    /// Seed of the pruning decisions.
    pub seed: u64,
    /// `input_format_parquet_use_offset_index`.
    pub use_offset_index: bool,
    /// Cut row groups into subgroups (ClickHouse); peers read a row group as one unit.
    pub subgroups: bool,
    /// Issue is planned (R5): dictionary and index steps wait for nothing; otherwise each
    /// stage waits for the one before (`docs/readpath.md` section 1, item 4).
    pub planned: bool,
    /// A row group's subgroup starts only after the one before it finished (ClickHouse's
    /// `finishRowSubgroupStage`: "sequential: one subgroup at a time"): the redesign with
    /// planning off, where the stages, not a plan, issue the page reads.
    pub sequential_subgroups: bool,
}

/// A column's pages as (first row, end row, bytes), its coalescing group, and whether it is a
/// PREWHERE column.
type ColumnPages = (u32, Vec<(u64, u64, ByteRange)>, u32, bool);

/// A candidate range before overlapping ones are merged into entries.
struct Candidate {
    range: ByteRange,
    group: u32,
    kind: ReadKind,
}

struct Builder {
    candidates: Vec<Candidate>,
    /// Per step, its candidate indexes (mapped to entries at the end).
    step_candidates: Vec<Vec<u32>>,
    next_group: u32,
}

impl Builder {
    fn add(&mut self, range: ByteRange, group: u32, kind: ReadKind) -> u32 {
        self.candidates.push(Candidate { range, group, kind });
        (self.candidates.len() - 1) as u32
    }
    fn group(&mut self) -> u32 {
        self.next_group += 1;
        self.next_group
    }
}

/// Whether row group `rg_index` of file `file_index` survives min/max pruning: judged by the
/// predicate against its recorded statistics when there is one, else a seeded draw at
/// `keep_fraction`. Empty row groups never survive.
pub(crate) fn row_group_survives(
    predicate: Option<&Predicate>,
    keep_fraction: f64,
    seed: u64,
    file_index: u32,
    rg_index: u32,
    rg: &layout::RowGroup,
) -> bool {
    if rg.num_rows == 0 {
        return false;
    }
    match predicate {
        Some(p) => p.row_group_may_match(rg),
        None => chance(
            keep_fraction,
            seed,
            Decision::MinMax,
            file_index,
            rg_index as u64,
            0,
        ),
    }
}

/// Builds the plan of `input.row_groups` of `file`. Ranges outside the file are clipped.
pub fn plan_file(file: &FileLayout, input: &PlanInput<'_>) -> FilePlan {
    let mut b = Builder {
        candidates: Vec::new(),
        step_candidates: Vec::new(),
        next_group: 0,
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut row_groups = Vec::new();
    let file_end = file.size_bytes;
    let clip = |r: ByteRange| ByteRange::new(r.start.min(file_end), r.end.min(file_end));
    let mut read_columns: Vec<u32> = input.prewhere_columns.to_vec();
    read_columns.extend(
        input
            .main_columns
            .iter()
            .filter(|c| !input.prewhere_columns.contains(c)),
    );

    let rg_end = input.row_groups.end.min(file.row_groups.len() as u32);
    for rg_index in input.row_groups.start..rg_end {
        let Some(rg) = file.row_groups.get(rg_index as usize) else {
            break;
        };
        let survives = row_group_survives(
            input.predicate,
            input.row_group_keep_fraction,
            input.seed,
            input.file_index,
            rg_index,
            rg,
        );
        if !survives {
            continue;
        }
        let chunk = |c: u32| rg.columns.get(c as usize);
        let pos = row_groups.len() as u32;
        let first_step = steps.len() as u32;
        let push_step = |b: &mut Builder,
                         steps: &mut Vec<Step>,
                         kind: StepKind,
                         cands: Vec<u32>,
                         deps: Vec<u32>|
         -> u32 {
            steps.push(Step {
                rg: pos,
                kind,
                entries: Vec::new(),
                deps,
                compressed_bytes: 0,
                decoded_bytes: 0,
                rows: 0,
                deliver_rows: 0,
                ends_subgroup: false,
            });
            b.step_candidates.push(cands);
            (steps.len() - 1) as u32
        };

        // Bloom header guesses, then the blocks the probes hit.
        let blooms: Vec<(u32, layout::BloomFilterLocation)> = input
            .bloom_columns
            .iter()
            .filter_map(|&c| chunk(c).and_then(|ch| ch.bloom_filter()).map(|l| (c, l)))
            .collect();
        let mut header_step = None;
        let mut blocks_step = None;
        if !blooms.is_empty() {
            let mut headers = Vec::new();
            let mut blocks = Vec::new();
            for &(c, loc) in &blooms {
                let len = loc.len.map_or(BLOOM_HEADER_GUESS_BYTES, |l| {
                    (l as u64).min(BLOOM_HEADER_GUESS_BYTES)
                });
                let header = clip(ByteRange::new(loc.offset, loc.offset.saturating_add(len)));
                if !header.is_empty() {
                    headers.push(b.add(header, 0, ReadKind::BloomHeader));
                }
                // Known length: blocks lie in the bitset after the header; unknown: assume a
                // bitset of 4 blocks per probe.
                let n_blocks = match loc.len {
                    Some(l) => {
                        (l as u64).saturating_sub(BLOOM_HEADER_GUESS_BYTES) / BLOOM_BLOCK_BYTES
                    }
                    None => 4 * input.bloom_probes as u64,
                };
                if n_blocks == 0 {
                    continue;
                }
                let mut picked: Vec<u64> = (0..input.bloom_probes as u64)
                    .map(|p| {
                        splitmix64(
                            input.seed
                                ^ splitmix64(
                                    ((input.file_index as u64) << 32)
                                        ^ ((rg_index as u64) << 12)
                                        ^ c as u64,
                                )
                                ^ p,
                        ) % n_blocks
                    })
                    .collect();
                picked.sort_unstable();
                picked.dedup();
                let group = b.group();
                for i in picked {
                    let start = loc
                        .offset
                        .saturating_add(BLOOM_HEADER_GUESS_BYTES + i * BLOOM_BLOCK_BYTES);
                    let r = clip(ByteRange::new(
                        start,
                        start.saturating_add(BLOOM_BLOCK_BYTES),
                    ));
                    if !r.is_empty() {
                        blocks.push(b.add(r, group, ReadKind::BloomBlocks));
                    }
                }
            }
            if !headers.is_empty() {
                header_step = Some(push_step(
                    &mut b,
                    &mut steps,
                    StepKind::BloomHeader,
                    headers,
                    Vec::new(),
                ));
            }
            if !blocks.is_empty() {
                let deps = header_step.into_iter().collect();
                blocks_step = Some(push_step(
                    &mut b,
                    &mut steps,
                    StepKind::BloomBlocks,
                    blocks,
                    deps,
                ));
            }
        }
        let bloom_decision_step = blocks_step.or(header_step);

        // Dictionary pages of every column read: an early stage only where a condition can
        // drop the row group (dictionary filtering); otherwise they are read with the first
        // pages of their chunk.
        let early_dictionary = bloom_decision_step.is_some();
        let dicts: Vec<u32> = read_columns
            .iter()
            .filter(|_| early_dictionary)
            .filter_map(|&c| chunk(c).and_then(|ch| ch.dictionary_page()))
            .map(|r| b.add(clip(r), 0, ReadKind::Dictionary))
            .collect();
        let dict_step = if dicts.is_empty() {
            None
        } else {
            let deps = if input.planned {
                Vec::new()
            } else {
                header_step.into_iter().collect()
            };
            Some(push_step(
                &mut b,
                &mut steps,
                StepKind::Dictionary,
                dicts,
                deps,
            ))
        };

        // Column indexes (condition columns) and offset indexes (columns read).
        let mut idx = Vec::new();
        let mut column_index_present = false;
        if input.use_offset_index {
            for &c in input.column_index_columns {
                if let Some(r) = chunk(c).and_then(|ch| ch.column_index()) {
                    column_index_present = true;
                    idx.push(b.add(clip(r), 0, ReadKind::ColumnIndex));
                }
            }
            for &c in &read_columns {
                if let Some(r) = chunk(c).and_then(|ch| ch.offset_index()) {
                    idx.push(b.add(clip(r), 0, ReadKind::OffsetIndex));
                }
            }
        }
        let index_step = if idx.is_empty() {
            None
        } else {
            let deps = if input.planned {
                Vec::new()
            } else {
                bloom_decision_step.into_iter().chain(dict_step).collect()
            };
            Some(push_step(&mut b, &mut steps, StepKind::Indexes, idx, deps))
        };
        // Page steps wait for every earlier stage of their row group.
        let stage_deps: Vec<u32> = bloom_decision_step
            .into_iter()
            .chain(dict_step)
            .chain(index_step)
            .collect();

        // Row slices: which survive page pruning, which pass PREWHERE.
        let rows = rg.num_rows;
        let slice_rows = rows.div_ceil(SLICES_PER_ROW_GROUP).max(1);
        let n_slices = rows.div_ceil(slice_rows);
        let prune_pages = column_index_present && input.page_keep_fraction < 1.0;
        let mut kept_ps = vec![0u64];
        let mut pass_ps = vec![0u64];
        for s in 0..n_slices {
            let kept = !prune_pages
                || chance(
                    input.page_keep_fraction,
                    input.seed,
                    Decision::PageSlice,
                    input.file_index,
                    rg_index as u64,
                    s,
                );
            let pass = kept
                && (input.prewhere_columns.is_empty()
                    || chance(
                        input.prewhere_selectivity,
                        input.seed,
                        Decision::Prewhere,
                        input.file_index,
                        rg_index as u64,
                        s,
                    ));
            let k = kept_ps.last().copied().unwrap_or(0) + kept as u64;
            let p = pass_ps.last().copied().unwrap_or(0) + pass as u64;
            kept_ps.push(k);
            pass_ps.push(p);
        }
        let any = |ps: &[u64], lo_row: u64, hi_row: u64| -> bool {
            if lo_row >= hi_row {
                return false;
            }
            let a = (lo_row / slice_rows) as usize;
            let z = ((hi_row - 1) / slice_rows) as usize + 1;
            ps.get(z).copied().unwrap_or(0) > ps.get(a).copied().unwrap_or(0)
        };
        let count_rows = |ps: &[u64], lo_row: u64, hi_row: u64| -> u64 {
            let mut total = 0;
            let mut r = lo_row;
            while r < hi_row {
                let s = r / slice_rows;
                let end = ((s + 1) * slice_rows).min(hi_row);
                let i = s as usize;
                if ps.get(i + 1).copied().unwrap_or(0) > ps.get(i).copied().unwrap_or(0) {
                    total += end - r;
                }
                r = end;
            }
            total
        };

        // Subgroups: only with an offset index for every column read (pages addressable).
        let paged = |ch: &ColumnChunk| input.use_offset_index && ch.offset_index().is_some();
        let all_paged = read_columns.iter().all(|&c| chunk(c).is_some_and(paged));
        let sub_rows = if input.subgroups && all_paged {
            let bytes: u64 = read_columns
                .iter()
                .filter_map(|&c| chunk(c))
                .map(|ch| ch.uncompressed_bytes)
                .sum();
            let per_row = (bytes / rows).max(1);
            (SUBGROUP_TARGET_BYTES / per_row).clamp(SUBGROUP_MIN_ROWS, SUBGROUP_MAX_ROWS)
        } else {
            rows
        };
        let n_sub = rows.div_ceil(sub_rows);
        // Per column: its pages as (row span, byte range), or one whole-chunk "page".
        let column_pages = |c: u32| -> Vec<(u64, u64, ByteRange)> {
            let Some(ch) = chunk(c) else {
                return Vec::new();
            };
            if ch.data_len == 0 {
                return Vec::new();
            }
            match ch.pages(file).filter(|_| input.use_offset_index) {
                Some(pages) => {
                    let list: Vec<_> = pages.iter().collect();
                    list.iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let end_row = list
                                .get(i + 1)
                                .map_or(rows, |n| n.first_row_index.min(rows));
                            (p.first_row_index.min(rows), end_row, clip(p.range()))
                        })
                        .collect()
                }
                None => vec![(0, rows, clip(ch.data_pages()))],
            }
        };
        let mut columns_data: Vec<ColumnPages> = Vec::new();
        // Pages located through the offset index are known only once it is decoded: the base
        // reader registers them after the index read's task was made, so they never join it.
        // One group per row group for its one-page chunks models that (the lazy coalescer
        // merges only equal groups; batch presets ignore groups).
        let located_late = index_step.is_some();
        let late_group = if located_late { b.group() } else { 0 };
        for &c in &read_columns {
            let pages = column_pages(c);
            // A one-page chunk is a whole range, not a split one.
            let split = pages.len() > 1;
            let from_offset_index = chunk(c).is_some_and(paged);
            let group = if split {
                b.group()
            } else if from_offset_index && located_late {
                late_group
            } else {
                0
            };
            columns_data.push((c, pages, group, input.prewhere_columns.contains(&c)));
        }
        let mut dict_pending: Vec<Option<ByteRange>> = columns_data
            .iter()
            .map(|(c, ..)| {
                chunk(*c)
                    .and_then(|ch| ch.dictionary_page())
                    .filter(|_| !early_dictionary)
                    .map(clip)
            })
            .collect();
        let mut cursors = vec![0usize; columns_data.len()];
        let mut subgroups = 0;
        let mut previous_subgroup_last: Option<u32> = None;
        for k in 0..n_sub {
            let lo = k * sub_rows;
            let hi = ((k + 1) * sub_rows).min(rows);
            let kept_rows = count_rows(&kept_ps, lo, hi);
            if kept_rows == 0 {
                continue;
            }
            let pass_rows = count_rows(&pass_ps, lo, hi);
            let mut pw = (Vec::new(), 0u64, 0u64);
            let mut main = (Vec::new(), 0u64, 0u64);
            for (ci, (c, pages, group, is_pw)) in columns_data.iter().enumerate() {
                let ps = if *is_pw { &kept_ps } else { &pass_ps };
                let mut p = cursors.get(ci).copied().unwrap_or(0);
                while pages.get(p).is_some_and(|pg| pg.1 <= lo) {
                    p += 1;
                }
                if let Some(cur) = cursors.get_mut(ci) {
                    *cur = p;
                }
                let target = if *is_pw { &mut pw } else { &mut main };
                let mut q = p;
                while let Some(&(a, z, range)) = pages.get(q) {
                    if a >= hi {
                        break;
                    }
                    if any(ps, a.max(lo), z.min(hi)) && !range.is_empty() {
                        if let Some(d) = dict_pending.get_mut(ci).and_then(Option::take) {
                            // Split out of the same chunk as its pages: the same group.
                            target.0.push(b.add(d, *group, ReadKind::Dictionary));
                            target.1 += d.len();
                        }
                        target.0.push(b.add(range, *group, ReadKind::DataPages));
                        target.1 += range.len();
                    }
                    q += 1;
                }
                let col_rows = if *is_pw { kept_rows } else { pass_rows };
                let uncompressed = chunk(*c).map_or(0, |ch| ch.uncompressed_bytes);
                target.2 += (uncompressed as u128 * col_rows as u128 / rows as u128) as u64;
            }
            let sub = subgroups;
            let mut last = None;
            let stage_deps: Vec<u32> = match previous_subgroup_last {
                Some(p) if input.sequential_subgroups => {
                    stage_deps.iter().copied().chain([p]).collect()
                }
                _ => stage_deps.clone(),
            };
            let has_main_columns = !input
                .main_columns
                .iter()
                .all(|c| input.prewhere_columns.contains(c));
            if !pw.0.is_empty() {
                let s = push_step(
                    &mut b,
                    &mut steps,
                    StepKind::Prewhere(sub),
                    pw.0,
                    stage_deps.clone(),
                );
                if let Some(st) = steps.get_mut(s as usize) {
                    st.compressed_bytes = pw.1;
                    st.decoded_bytes = pw.2;
                    st.rows = kept_rows;
                }
                last = Some(s);
            }
            if !main.0.is_empty() && pass_rows > 0 {
                let deps = match last {
                    Some(p) => vec![p],
                    None => stage_deps.clone(),
                };
                let s = push_step(&mut b, &mut steps, StepKind::Main(sub), main.0, deps);
                if let Some(st) = steps.get_mut(s as usize) {
                    st.compressed_bytes = main.1;
                    st.decoded_bytes = main.2;
                    st.rows = pass_rows;
                }
                last = Some(s);
            }
            let Some(last) = last else { continue };
            previous_subgroup_last = Some(last);
            if let Some(st) = steps.get_mut(last as usize) {
                st.ends_subgroup = true;
                // Rows leave only once every output column was decoded.
                let complete = matches!(st.kind, StepKind::Main(_)) || !has_main_columns;
                st.deliver_rows = if complete { pass_rows } else { 0 };
            }
            subgroups += 1;
        }
        row_groups.push(RowGroupPlan {
            row_group: rg_index,
            rows,
            steps: first_step..steps.len() as u32,
            bloom_decision_step,
            dropped_by_bloom: bloom_decision_step.is_some()
                && chance(
                    input.bloom_drop_fraction,
                    input.seed,
                    Decision::Bloom,
                    input.file_index,
                    rg_index as u64,
                    0,
                ),
            subgroups,
        });
    }
    let (entries, map) = merge_candidates(&b.candidates);
    let mut entry_consumers = vec![0u32; entries.len()];
    for (step, cands) in steps.iter_mut().zip(&b.step_candidates) {
        let mut e: Vec<u32> = cands
            .iter()
            .filter_map(|&c| map.get(c as usize).copied())
            .collect();
        e.sort_unstable();
        e.dedup();
        for &i in &e {
            if let Some(n) = entry_consumers.get_mut(i as usize) {
                *n += 1;
            }
        }
        step.entries = e;
    }
    FilePlan {
        entries,
        entry_consumers,
        row_groups,
        steps,
    }
}

/// Sorts candidates and merges overlapping ones (touching ones stay apart); returns the
/// entries and, per candidate, its entry.
fn merge_candidates(c: &[Candidate]) -> (Vec<Entry>, Vec<u32>) {
    let mut order: Vec<u32> = (0..c.len() as u32)
        .filter(|&i| c.get(i as usize).is_some_and(|x| !x.range.is_empty()))
        .collect();
    order.sort_by_key(|&i| c.get(i as usize).map(|x| (x.range.start, x.range.end)));
    let mut entries: Vec<Entry> = Vec::new();
    let mut map = vec![u32::MAX; c.len()];
    for i in order {
        let Some(cand) = c.get(i as usize) else {
            continue;
        };
        match entries.last_mut() {
            Some(last) if cand.range.start < last.range.end => {
                last.range.end = last.range.end.max(cand.range.end);
            }
            _ => entries.push(Entry {
                range: cand.range,
                group: cand.group,
                kind: cand.kind,
            }),
        }
        if let Some(m) = map.get_mut(i as usize) {
            *m = (entries.len() - 1) as u32;
        }
    }
    (entries, map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{table, TableShape};

    fn input<'a>(cols: &'a [u32], rgs: Range<u32>) -> PlanInput<'a> {
        PlanInput {
            file_index: 0,
            row_groups: rgs,
            main_columns: cols,
            prewhere_columns: &[],
            column_index_columns: &[],
            bloom_columns: &[],
            bloom_probes: 1,
            row_group_keep_fraction: 1.0,
            predicate: None,
            page_keep_fraction: 1.0,
            prewhere_selectivity: 1.0,
            bloom_drop_fraction: 0.0,
            seed: 1,
            use_offset_index: true,
            subgroups: true,
            planned: false,
            sequential_subgroups: false,
        }
    }

    #[test]
    fn plain_scan_reads_every_page_of_the_selected_columns_once() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 3,
            columns: 4,
            pages: 5,
            ..TableShape::default()
        });
        let file = &t.files[0];
        let plan = plan_file(file, &input(&[1, 3], 0..3));
        assert_eq!(plan.row_groups.len(), 3);
        let needed_pages: u64 = plan
            .entries
            .iter()
            .filter(|e| e.kind == ReadKind::DataPages)
            .map(|e| e.range.len())
            .sum();
        let expected: u64 = file
            .row_groups
            .iter()
            .map(|rg| rg.columns[1].data_len + rg.columns[3].data_len)
            .sum();
        assert_eq!(needed_pages, expected);
        let delivered: u64 = plan.steps.iter().map(|s| s.deliver_rows).sum();
        assert_eq!(delivered, file.num_rows());
        // Entries sorted and disjoint.
        assert!(plan
            .entries
            .windows(2)
            .all(|w| w[0].range.end <= w[1].range.start));
        // Offset indexes of both columns in every row group, dictionaries too.
        let oi = plan
            .entries
            .iter()
            .filter(|e| e.kind == ReadKind::OffsetIndex)
            .count();
        assert_eq!(oi, 6);
    }

    #[test]
    fn pruning_fractions_shrink_the_plan() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 40,
            columns: 3,
            pages: 8,
            ..TableShape::default()
        });
        let file = &t.files[0];
        let mut q = input(&[0, 1], 0..40);
        q.row_group_keep_fraction = 0.5;
        let half = plan_file(file, &q);
        assert!(
            (10..30).contains(&half.row_groups.len()),
            "{}",
            half.row_groups.len()
        );
        let mut q = input(&[0, 1], 0..40);
        q.column_index_columns = &[0];
        q.page_keep_fraction = 0.25;
        let pruned = plan_file(file, &q);
        let rows: u64 = pruned.steps.iter().map(|s| s.deliver_rows).sum();
        let all = file.num_rows();
        assert!(rows * 10 < all * 4 && rows * 10 > all, "{rows} of {all}");
        let pages = |p: &FilePlan| {
            p.entries
                .iter()
                .filter(|e| e.kind == ReadKind::DataPages)
                .count()
        };
        assert!(pages(&pruned) < pages(&plan_file(file, &input(&[0, 1], 0..40))));
    }

    #[test]
    fn prewhere_splits_each_subgroup_in_two_steps() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 2,
            columns: 3,
            pages: 8,
            ..TableShape::default()
        });
        let mut q = input(&[0, 1, 2], 0..2);
        q.prewhere_columns = &[0];
        q.prewhere_selectivity = 0.3;
        let plan = plan_file(&t.files[0], &q);
        let pw: Vec<&Step> = plan
            .steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Prewhere(_)))
            .collect();
        assert!(!pw.is_empty());
        for s in plan
            .steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Main(_)))
        {
            let dep = s.deps[0] as usize;
            assert!(
                matches!(plan.steps[dep].kind, StepKind::Prewhere(n) if n == s.kind.subgroup())
            );
        }
        let rows: u64 = plan.steps.iter().map(|s| s.deliver_rows).sum();
        assert!(rows < t.files[0].num_rows());
    }

    #[test]
    fn coupled_stages_chain_and_planned_ones_do_not() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 1,
            columns: 2,
            pages: 2,
            bloom: true,
            ..TableShape::default()
        });
        let mut q = input(&[0, 1], 0..1);
        q.bloom_columns = &[0];
        q.bloom_probes = 3;
        let coupled = plan_file(&t.files[0], &q);
        let kinds: Vec<StepKind> = coupled.steps.iter().map(|s| s.kind).collect();
        assert_eq!(
            &kinds[..4],
            &[
                StepKind::BloomHeader,
                StepKind::BloomBlocks,
                StepKind::Dictionary,
                StepKind::Indexes
            ]
        );
        assert_eq!(coupled.steps[3].deps, vec![1, 2]);
        q.planned = true;
        let planned = plan_file(&t.files[0], &q);
        assert!(planned.steps[2].deps.is_empty() && planned.steps[3].deps.is_empty());
        assert_eq!(planned.row_groups[0].bloom_decision_step, Some(1));
    }
}
