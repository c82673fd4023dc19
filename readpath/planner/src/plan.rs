//! The per-file plan: from the layout and the query, every stage's needed byte ranges
//! (`docs/readpath.md` section 1) as steps with dependencies. No IO and no scheduling here: the
//! [`crate::Reader`] runs the steps; this module only says what each one needs.
//!
//! Steps of one surviving row group, in order: bloom header -> bloom blocks, dictionary ->
//! column + offset indexes -> per row subgroup: PREWHERE pages (then their decode) -> the
//! remaining columns' pages (then their decode, then delivery). Steps with no work do not
//! exist. A step is *finished* when its bytes are ready (index steps) or decoded (page steps).

use limits::{narrow, u32_of, usize_of};
use std::ops::Range;
use std::sync::Arc;

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
    /// The pages of one chunk too short to split share a non-zero id: the first subgroup that
    /// needs one of them reads them all (`PlanInput::unsplit_below_bytes`). 0 otherwise.
    pub whole_chunk: u32,
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
    /// Entries it needs (indexes into [`FilePlan::entries`], sorted, unique): read them with
    /// [`FilePlan::entries_of`].
    pub entries: ListSpan,
    /// Steps that must be finished before this one may start: read them with
    /// [`FilePlan::deps_of`].
    pub deps: ListSpan,
    /// The steps that name this one in their deps, in step order: read them with
    /// [`FilePlan::dependents_of`].
    pub dependents: ListSpan,
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

impl Step {
    /// Where the step falls in its row group: the early stages (`false, 0`), then the page
    /// steps by subgroup. A row group's steps are sorted by it ([`FilePlanner::plan_row_group`]
    /// asserts it in debug builds).
    pub fn decode_order(&self) -> (bool, u32) {
        (self.kind.decodes(), self.kind.subgroup())
    }
}

/// Where one step's list (its entries, deps or dependents) lies in [`FilePlan::step_lists`].
/// The lists of every step share one vector: a `Vec` each was three allocations a step (with
/// the reused buffers of the subgroups' candidates, planning `single-large-file` went from 203 M
/// to 161 M instructions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListSpan {
    start: u32,
    len: u32,
}

impl ListSpan {
    fn range(self) -> Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }

    /// Appends `items`, then `extra`, to `list`: their span.
    fn append(list: &mut Vec<u32>, items: &[u32], extra: Option<u32>) -> ListSpan {
        let start = u32_of(list.len());
        list.extend_from_slice(items);
        list.extend(extra);
        ListSpan {
            start,
            len: u32_of(list.len()) - start,
        }
    }
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

/// Everything one file (or bucket) needs. The parts its wiring leaves alone are shared with
/// the [`PlanShape`] it was wired from and every other wiring of it (`Arc`); the steps and
/// their lists are its own.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct FilePlan {
    /// Registered ranges, sorted, non-overlapping.
    pub entries: Arc<[Entry]>,
    /// For each entry, how many steps need it.
    pub entry_consumers: Arc<[u32]>,
    /// Surviving row groups, in file order.
    pub row_groups: Arc<[RowGroupPlan]>,
    /// All steps, row group by row group, each row group's in the order above.
    pub steps: Vec<Step>,
    /// Every step's entries, deps and dependents ([`ListSpan`]).
    pub step_lists: Vec<u32>,
    /// The entries of each whole chunk ([`Entry::whole_chunk`]), in offset order: those of
    /// chunk `w` are `whole_chunk_lists[whole_chunk_starts[w]..whole_chunk_starts[w + 1]]`.
    pub whole_chunk_starts: Arc<[u32]>,
    /// See `whole_chunk_starts`.
    pub whole_chunk_lists: Arc<[u32]>,
}

impl FilePlan {
    /// The entries `step` needs (indexes into [`FilePlan::entries`], sorted, unique).
    pub fn entries_of(&self, step: &Step) -> &[u32] {
        self.step_lists
            .get(step.entries.range())
            .unwrap_or_default()
    }

    /// The steps that must be finished before `step` may start.
    pub fn deps_of(&self, step: &Step) -> &[u32] {
        self.step_lists.get(step.deps.range()).unwrap_or_default()
    }

    /// The entries of whole chunk `w` (the pages of one chunk too short to split), in offset
    /// order; none for `w` 0.
    pub fn whole_chunk_entries(&self, w: u32) -> &[u32] {
        let w = w as usize;
        let (Some(&lo), Some(&hi)) = (
            self.whole_chunk_starts.get(w),
            self.whole_chunk_starts.get(w + 1),
        ) else {
            return &[];
        };
        self.whole_chunk_lists
            .get(lo as usize..hi as usize)
            .unwrap_or_default()
    }

    /// The steps whose deps name `step`, in step order.
    pub fn dependents_of(&self, step: &Step) -> &[u32] {
        self.step_lists
            .get(step.dependents.range())
            .unwrap_or_default()
    }
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
    /// Each column chunk is one range, its dictionary page included, and no page index is
    /// read: how Trino (`ParquetReader` plans `DiskRange(getStartingPos(), getTotalSize())`),
    /// parquet-java (`internalReadRowGroup`) and Velox (`ParquetData::enqueueRowGroup`) read a
    /// chunk. The peers on ClickHouse's coupled discipline set it.
    pub whole_chunks: bool,
    /// `min_bytes_for_seek`: a chunk whose data pages span fewer bytes is not split into its
    /// pages' own coalescing group but read whole by the first subgroup that needs it, as one
    /// range that may coalesce with its neighbours (`Prefetcher::splitRange`: "If the request is
    /// already short, don't split it, and try to coalesce with other ranges"). 0: every chunk
    /// of several pages is split.
    pub unsplit_below_bytes: u64,
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

/// Everything that shapes a plan besides the file's layout, the file and row groups it names
/// ([`UnitKey`]) and its [`Wiring`], owned and ordered: the same for every file one reader
/// plans, so [`crate::PlanCache`] interns it once per reader. Fractions by their bits (equal
/// inputs, equal bits), the predicate as a [`PredicateKey`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct QueryKey {
    shape: (u32, u64, u64, [bool; 3]),
    columns: [Vec<u32>; 4],
    fractions: [u64; 4],
    predicate: Option<PredicateKey>,
}

/// The key of a [`PlanShape`] in [`crate::PlanCache`]: an interned [`QueryKey`], the file
/// and its row groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct UnitKey {
    pub(crate) query: u32,
    pub(crate) file: u32,
    pub(crate) row_groups: (u32, u32),
}

/// A predicate as a key: ordered by a hash of it, and two unequal predicates of one hash (a
/// collision) by their `Debug` text. Keyed by that text alone, formatting it on every plan
/// asked for was 6% of `tpch-iceberg`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PredicateKey {
    hash: u64,
    predicate: Predicate,
}

impl PredicateKey {
    fn new(predicate: &Predicate) -> PredicateKey {
        use std::hash::{Hash, Hasher};
        // Fixed keys: the same hash in every run (and the order is only a map's).
        let mut h = std::hash::DefaultHasher::new();
        predicate.hash(&mut h);
        PredicateKey {
            hash: h.finish(),
            predicate: predicate.clone(),
        }
    }
}

impl Ord for PredicateKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.hash.cmp(&other.hash).then_with(|| {
            if self.predicate == other.predicate {
                std::cmp::Ordering::Equal
            } else {
                format!("{:?}", self.predicate).cmp(&format!("{:?}", other.predicate))
            }
        })
    }
}

impl PartialOrd for PredicateKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PlanInput<'_> {
    /// How its plan's steps wait for one another.
    pub(crate) fn wiring(&self) -> Wiring {
        Wiring {
            planned: self.planned,
            sequential_subgroups: self.sequential_subgroups,
        }
    }

    /// Its [`UnitKey`], given the id its [`QueryKey`] was interned under.
    pub(crate) fn unit_key(&self, query: u32) -> UnitKey {
        UnitKey {
            query,
            file: self.file_index,
            row_groups: (self.row_groups.start, self.row_groups.end),
        }
    }

    /// Its [`QueryKey`]. Every field is named (no `..`), so a field added to `PlanInput` does
    /// not compile until it is in a key or the wiring.
    pub(crate) fn query_key(&self) -> QueryKey {
        let PlanInput {
            main_columns,
            prewhere_columns,
            column_index_columns,
            bloom_columns,
            bloom_probes,
            row_group_keep_fraction,
            predicate,
            page_keep_fraction,
            prewhere_selectivity,
            bloom_drop_fraction,
            seed,
            use_offset_index,
            whole_chunks,
            unsplit_below_bytes,
            subgroups,
            // The unit's ([`Self::unit_key`]).
            file_index: _,
            row_groups: _,
            // The wiring's ([`Self::wiring`]): the shape is the same whatever they are.
            planned: _,
            sequential_subgroups: _,
        } = self;
        QueryKey {
            shape: (
                *bloom_probes,
                *seed,
                *unsplit_below_bytes,
                [*use_offset_index, *whole_chunks, *subgroups],
            ),
            columns: [
                main_columns.to_vec(),
                prewhere_columns.to_vec(),
                column_index_columns.to_vec(),
                bloom_columns.to_vec(),
            ],
            fractions: [
                row_group_keep_fraction.to_bits(),
                page_keep_fraction.to_bits(),
                prewhere_selectivity.to_bits(),
                bloom_drop_fraction.to_bits(),
            ],
            predicate: predicate.map(PredicateKey::new),
        }
    }
}

/// A page of a column read, as (first row, end row, bytes).
type PageRows = (u64, u64, ByteRange);

/// One column read in a row group and where the walk through its pages stands.
struct ColumnWalk {
    column: u32,
    /// Its pages: a span of [`SubgroupPages::pages`].
    pages: Range<usize>,
    /// Its candidates' (coalescing group, whole chunk).
    ids: (u32, u32),
    /// A PREWHERE column.
    prewhere: bool,
    /// The first page that may still overlap the next subgroup (an index into `pages`).
    cursor: usize,
    /// Its dictionary page not read yet (when it is not an early stage).
    dict_pending: Option<ByteRange>,
    /// The last page made a candidate, and that candidate.
    last_page: Option<(ByteRange, u32)>,
}

/// A candidate range before overlapping ones are merged into entries.
struct Candidate {
    range: ByteRange,
    group: u32,
    whole_chunk: u32,
    kind: ReadKind,
}

struct Builder {
    candidates: Vec<Candidate>,
    /// Per step, its candidate indexes in `candidate_lists` (mapped to entries at the end).
    step_candidates: Vec<ListSpan>,
    candidate_lists: Vec<u32>,
    next_group: u32,
}

impl Builder {
    fn add(&mut self, range: ByteRange, group: u32, kind: ReadKind) -> u32 {
        self.add_in((group, 0), range, kind)
    }
    /// A candidate of coalescing group `group` and whole chunk `whole_chunk`.
    fn add_in(
        &mut self,
        (group, whole_chunk): (u32, u32),
        range: ByteRange,
        kind: ReadKind,
    ) -> u32 {
        self.candidates.push(Candidate {
            range,
            group,
            whole_chunk,
            kind,
        });
        u32_of(self.candidates.len() - 1)
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
    plan_shape(file, input).wired(input.wiring())
}

/// The plan of `input` before its steps are wired: what every [`Wiring`] shares.
pub(crate) fn plan_shape(file: &FileLayout, input: &PlanInput<'_>) -> PlanShape {
    let mut planner = FilePlanner::new(file, input);
    let rg_end = input.row_groups.end.min(u32_of(file.row_groups.len()));
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
        if survives {
            planner.plan_row_group(rg_index, rg);
        }
    }
    PlanShape(planner.finish())
}

/// The fields of [`PlanInput`] that decide only how a plan's steps wait for one another
/// (`docs/readpath.md` section 1, item 4): every other part of the plan is the same whatever
/// they are, so the base, the redesign and its floor-0 arm share one [`PlanShape`] of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Wiring {
    /// [`PlanInput::planned`].
    planned: bool,
    /// [`PlanInput::sequential_subgroups`].
    sequential_subgroups: bool,
}

/// A plan whose steps wait for nothing yet: its entries, row groups and steps, and in
/// `step_lists` only the steps' entries. [`PlanShape::wired`] makes the plan of a [`Wiring`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanShape(FilePlan);

impl PlanShape {
    /// The plan with its steps' deps as `w` says, and each step's dependents. Of a row
    /// group's steps: bloom blocks wait for the bloom header; unless issue is planned, the
    /// dictionary waits for the bloom header and the indexes for the bloom verdict and the
    /// dictionary; a subgroup's first page step waits for every early stage (and, with
    /// sequential subgroups, for the subgroup before), its main step for its PREWHERE step.
    pub(crate) fn wired(&self, w: Wiring) -> FilePlan {
        let mut plan = self.0.clone();
        let mut deps: Vec<u32> = Vec::with_capacity(4);
        for rg in plan.row_groups.iter() {
            let (mut header, mut blocks, mut dictionary, mut indexes) = (None, None, None, None);
            for s in rg.steps.clone() {
                let Some(kind) = plan.steps.get(s as usize).map(|st| st.kind) else {
                    continue;
                };
                // The step before it in its row group, and what it does.
                let before = s
                    .checked_sub(1)
                    .filter(|&p| p >= rg.steps.start)
                    .and_then(|p| Some((p, plan.steps.get(p as usize)?.kind)));
                deps.clear();
                match kind {
                    StepKind::BloomHeader => header = Some(s),
                    StepKind::BloomBlocks => {
                        deps.extend(header);
                        blocks = Some(s);
                    }
                    StepKind::Dictionary => {
                        deps.extend(header.filter(|_| !w.planned));
                        dictionary = Some(s);
                    }
                    StepKind::Indexes => {
                        if !w.planned {
                            deps.extend(blocks.or(header));
                            deps.extend(dictionary);
                        }
                        indexes = Some(s);
                    }
                    StepKind::Prewhere(_) | StepKind::Main(_) => match (kind, before) {
                        (StepKind::Main(n), Some((p, StepKind::Prewhere(m)))) if n == m => {
                            deps.push(p);
                        }
                        _ => {
                            deps.extend(blocks.or(header));
                            deps.extend(dictionary);
                            deps.extend(indexes);
                            let previous_subgroup = before
                                .filter(|(_, k)| k.decodes() && w.sequential_subgroups)
                                .map(|(p, _)| p);
                            deps.extend(previous_subgroup);
                        }
                    },
                }
                let span = ListSpan::append(&mut plan.step_lists, &deps, None);
                if let Some(st) = plan.steps.get_mut(s as usize) {
                    debug_assert_eq!(st.deps, ListSpan::default(), "a shape has no deps");
                    st.deps = span;
                }
            }
        }
        add_dependents(&mut plan.steps, &mut plan.step_lists);
        plan
    }
}

/// The plan of one file as it is built, row group by row group.
struct FilePlanner<'a> {
    file: &'a FileLayout,
    input: &'a PlanInput<'a>,
    /// PREWHERE columns, then the other output columns.
    read_columns: Vec<u32>,
    b: Builder,
    steps: Vec<Step>,
    row_groups: Vec<RowGroupPlan>,
}

/// The row group being planned.
#[derive(Clone, Copy)]
struct Rg<'a> {
    /// Index in the file.
    index: u32,
    /// Position in [`FilePlan::row_groups`].
    pos: u32,
    layout: &'a layout::RowGroup,
}

impl<'a> Rg<'a> {
    fn chunk(self, c: u32) -> Option<&'a ColumnChunk> {
        self.layout.columns.get(c as usize)
    }

    fn rows(self) -> u64 {
        self.layout.num_rows
    }
}

/// The steps of a row group's early stages (each `None` when it has no work).
#[derive(Clone, Copy)]
struct EarlySteps {
    /// The step whose end decides the bloom verdict.
    bloom_decision: Option<u32>,
    indexes: Option<u32>,
    /// Whether a condition column's column index was read (pages may be pruned).
    column_index_present: bool,
}

/// One subgroup's page step as it is collected: candidates, compressed and decoded bytes.
#[derive(Default)]
struct PageStep {
    candidates: Vec<u32>,
    compressed_bytes: u64,
    decoded_bytes: u64,
}

impl PageStep {
    /// Empty, keeping the buffer.
    fn clear(&mut self) {
        self.candidates.clear();
        self.compressed_bytes = 0;
        self.decoded_bytes = 0;
    }
}

impl<'a> FilePlanner<'a> {
    fn new(file: &'a FileLayout, input: &'a PlanInput<'a>) -> FilePlanner<'a> {
        let mut read_columns: Vec<u32> =
            Vec::with_capacity(input.prewhere_columns.len() + input.main_columns.len());
        read_columns.extend_from_slice(input.prewhere_columns);
        read_columns.extend(
            input
                .main_columns
                .iter()
                .filter(|c| !input.prewhere_columns.contains(c)),
        );
        // Room for a row group's usual share (an index step, one page step, a candidate per
        // column and index), so that small files plan without growing their vectors; larger
        // ones grow as before.
        let rgs = input
            .row_groups
            .end
            .min(u32_of(file.row_groups.len()))
            .saturating_sub(input.row_groups.start) as usize;
        let per_rg = 2 * read_columns.len() + 1;
        FilePlanner {
            file,
            input,
            b: Builder {
                candidates: Vec::with_capacity(rgs * per_rg),
                step_candidates: Vec::with_capacity(rgs * 2),
                candidate_lists: Vec::with_capacity(rgs * per_rg),
                next_group: 0,
            },
            read_columns,
            steps: Vec::with_capacity(rgs * 2),
            row_groups: Vec::with_capacity(rgs),
        }
    }

    fn clip(&self, r: ByteRange) -> ByteRange {
        let end = self.file.size_bytes;
        ByteRange::new(r.start.min(end), r.end.min(end))
    }

    /// A step of `kind` needing candidates `cands`. Its deps are wired when the plan is
    /// finished ([`FilePlan::wired`]).
    fn push_step(&mut self, rg: Rg<'_>, kind: StepKind, cands: &[u32]) -> u32 {
        self.steps.push(Step {
            rg: rg.pos,
            kind,
            entries: ListSpan::default(),
            deps: ListSpan::default(),
            dependents: ListSpan::default(),
            compressed_bytes: 0,
            decoded_bytes: 0,
            rows: 0,
            deliver_rows: 0,
            ends_subgroup: false,
        });
        let cands = ListSpan::append(&mut self.b.candidate_lists, cands, None);
        self.b.step_candidates.push(cands);
        debug_assert_eq!(self.steps.len(), self.b.step_candidates.len());
        u32_of(self.steps.len() - 1)
    }

    /// Plans one surviving row group: its early stages, then its subgroups' page steps.
    fn plan_row_group(&mut self, index: u32, layout: &layout::RowGroup) {
        let rg = Rg {
            index,
            pos: u32_of(self.row_groups.len()),
            layout,
        };
        let first_step = u32_of(self.steps.len());
        let early = self.early_steps(rg);
        let column_index = early.column_index_present || self.unread_column_index(rg);
        let slices = Slices::new(self.input, rg, column_index);
        let subgroups = self.page_steps(rg, &early, &slices);
        debug_assert!(
            self.steps
                .get(first_step as usize..)
                .is_some_and(|steps| steps.is_sorted_by_key(Step::decode_order)),
            "a row group's steps: the early stages, then page steps by subgroup"
        );
        let input = self.input;
        self.row_groups.push(RowGroupPlan {
            row_group: index,
            rows: rg.rows(),
            steps: first_step..u32_of(self.steps.len()),
            bloom_decision_step: early.bloom_decision,
            dropped_by_bloom: early.bloom_decision.is_some()
                && chance(
                    input.bloom_drop_fraction,
                    input.seed,
                    Decision::Bloom,
                    input.file_index,
                    index as u64,
                    0,
                ),
            subgroups,
        });
    }

    /// Whether a reader of whole chunks, which reads no column index, returns the rows a
    /// reader of it keeps: every reader returns the query's answer (the peer programs' too),
    /// whatever it reads to find it.
    fn unread_column_index(&self, rg: Rg<'_>) -> bool {
        self.input.whole_chunks
            && self
                .input
                .column_index_columns
                .iter()
                .any(|&c| rg.chunk(c).is_some_and(|ch| ch.column_index().is_some()))
    }

    /// The stages before the pages: bloom filters, dictionaries, indexes.
    fn early_steps(&mut self, rg: Rg<'_>) -> EarlySteps {
        let (bloom_header, bloom_blocks) = self.bloom_steps(rg);
        let bloom_decision = bloom_blocks.or(bloom_header);
        self.dictionary_step(rg, bloom_decision.is_some());
        let (indexes, column_index_present) = self.index_step(rg);
        EarlySteps {
            bloom_decision,
            indexes,
            column_index_present,
        }
    }

    /// Bloom header guesses, then the blocks the probes hit: (header step, blocks step).
    fn bloom_steps(&mut self, rg: Rg<'_>) -> (Option<u32>, Option<u32>) {
        let blooms: Vec<(u32, layout::BloomFilterLocation)> = self
            .input
            .bloom_columns
            .iter()
            .filter_map(|&c| rg.chunk(c).and_then(|ch| ch.bloom_filter()).map(|l| (c, l)))
            .collect();
        let mut headers = Vec::new();
        let mut blocks = Vec::new();
        for &(c, loc) in &blooms {
            let len = loc.len.map_or(BLOOM_HEADER_GUESS_BYTES, |l| {
                (l as u64).min(BLOOM_HEADER_GUESS_BYTES)
            });
            let header = self.clip(ByteRange::new(loc.offset, loc.offset.saturating_add(len)));
            if !header.is_empty() {
                headers.push(self.b.add(header, 0, ReadKind::BloomHeader));
            }
            self.bloom_blocks(rg, c, loc, &mut blocks);
        }
        let header_step =
            (!headers.is_empty()).then(|| self.push_step(rg, StepKind::BloomHeader, &headers));
        let blocks_step =
            (!blocks.is_empty()).then(|| self.push_step(rg, StepKind::BloomBlocks, &blocks));
        (header_step, blocks_step)
    }

    /// The blocks of column `c`'s filter its probes hit, added to `blocks`. Known length:
    /// blocks lie in the bitset after the header; unknown: a bitset of 4 blocks per probe.
    fn bloom_blocks(
        &mut self,
        rg: Rg<'_>,
        c: u32,
        loc: layout::BloomFilterLocation,
        blocks: &mut Vec<u32>,
    ) {
        let input = self.input;
        let n_blocks = match loc.len {
            Some(l) => (l as u64).saturating_sub(BLOOM_HEADER_GUESS_BYTES) / BLOOM_BLOCK_BYTES,
            None => 4 * input.bloom_probes as u64,
        };
        if n_blocks == 0 {
            return;
        }
        let column_seed =
            splitmix64(((input.file_index as u64) << 32) ^ ((rg.index as u64) << 12) ^ c as u64);
        let mut picked: Vec<u64> = (0..input.bloom_probes as u64)
            .map(|p| splitmix64(input.seed ^ column_seed ^ p) % n_blocks)
            .collect();
        picked.sort_unstable();
        picked.dedup();
        let group = self.b.group();
        for i in picked {
            let start = loc
                .offset
                .saturating_add(BLOOM_HEADER_GUESS_BYTES + i * BLOOM_BLOCK_BYTES);
            let r = self.clip(ByteRange::new(
                start,
                start.saturating_add(BLOOM_BLOCK_BYTES),
            ));
            if !r.is_empty() {
                blocks.push(self.b.add(r, group, ReadKind::BloomBlocks));
            }
        }
    }

    /// Dictionary pages of every column read: an early stage only where a condition can drop
    /// the row group (dictionary filtering, `early`); otherwise they are read with the first
    /// pages of their chunk.
    fn dictionary_step(&mut self, rg: Rg<'_>, early: bool) {
        // A whole chunk brings its dictionary with it.
        if !early || self.input.whole_chunks {
            return;
        }
        let mut dicts: Vec<u32> = Vec::with_capacity(self.read_columns.len());
        for &c in &self.read_columns {
            if let Some(r) = rg.chunk(c).and_then(|ch| ch.dictionary_page()) {
                let r = self.clip(r);
                dicts.push(self.b.add(r, 0, ReadKind::Dictionary));
            }
        }
        if dicts.is_empty() {
            return;
        }
        self.push_step(rg, StepKind::Dictionary, &dicts);
    }

    /// Column indexes (condition columns) and offset indexes (columns read): (the step,
    /// whether a column index was read).
    fn index_step(&mut self, rg: Rg<'_>) -> (Option<u32>, bool) {
        let input = self.input;
        if !input.use_offset_index || input.whole_chunks {
            return (None, false);
        }
        // Column indexes first, then offset indexes, each in column order.
        let mut idx: Vec<u32> =
            Vec::with_capacity(input.column_index_columns.len() + self.read_columns.len());
        for &c in input.column_index_columns {
            if let Some(r) = rg.chunk(c).and_then(|ch| ch.column_index()) {
                let r = self.clip(r);
                idx.push(self.b.add(r, 0, ReadKind::ColumnIndex));
            }
        }
        let column_index_present = !idx.is_empty();
        for &c in &self.read_columns {
            if let Some(r) = rg.chunk(c).and_then(|ch| ch.offset_index()) {
                let r = self.clip(r);
                idx.push(self.b.add(r, 0, ReadKind::OffsetIndex));
            }
        }
        if idx.is_empty() {
            return (None, column_index_present);
        }
        let step = self.push_step(rg, StepKind::Indexes, &idx);
        (Some(step), column_index_present)
    }

    /// Rows per subgroup: cut by bytes only with an offset index for every column read
    /// (pages addressable); otherwise the whole row group.
    fn subgroup_rows(&self, rg: Rg<'_>) -> u64 {
        let input = self.input;
        let rows = rg.rows();
        let all_paged = self
            .read_columns
            .iter()
            .all(|&c| rg.chunk(c).is_some_and(|ch| self.paged(ch)));
        if !(input.subgroups && all_paged) {
            return rows;
        }
        let bytes: u64 = self
            .read_columns
            .iter()
            .filter_map(|&c| rg.chunk(c))
            .map(|ch| ch.uncompressed_bytes)
            .sum();
        let per_row = (bytes / rows).max(1);
        (SUBGROUP_TARGET_BYTES / per_row).clamp(SUBGROUP_MIN_ROWS, SUBGROUP_MAX_ROWS)
    }

    /// Whether a chunk's pages are addressable (its offset index is read).
    fn paged(&self, ch: &ColumnChunk) -> bool {
        self.input.use_offset_index && !self.input.whole_chunks && ch.offset_index().is_some()
    }

    /// The bytes of a chunk read as one "page": the whole chunk, or its data pages (the
    /// dictionary then read as a range of its own).
    fn unpaged_range(&self, ch: &ColumnChunk) -> ByteRange {
        if self.input.whole_chunks {
            ch.range()
        } else {
            ch.data_pages()
        }
    }

    /// Column `c`'s pages as (first row, end row, bytes), or one whole-chunk "page", appended
    /// to `out`.
    fn column_pages(&self, rg: Rg<'_>, c: u32, out: &mut Vec<PageRows>) {
        let rows = rg.rows();
        let Some(ch) = rg.chunk(c) else {
            return;
        };
        if ch.data_len == 0 {
            return;
        }
        match ch.pages(self.file).filter(|_| self.paged(ch)) {
            Some(pages) => {
                out.reserve(pages.len());
                out.extend((0..pages.len()).filter_map(|i| {
                    let p = pages.get(i)?;
                    let end_row = pages
                        .get(i + 1)
                        .map_or(rows, |n| n.first_row_index.min(rows));
                    Some((p.first_row_index.min(rows), end_row, self.clip(p.range())))
                }));
            }
            None => out.push((0, rows, self.clip(self.unpaged_range(ch)))),
        }
    }

    /// Every column read with its pages and coalescing group. Chunks located through the offset
    /// index get one group per row group (the lazy coalescer merges only equal groups; batch
    /// presets ignore groups), so the base never merges them with the index read or with
    /// another row group's chunks. ClickHouse's code would let it (`Reader::initializePrefetches`
    /// registers every chunk, index and dictionary up front in one sorted set, and
    /// `Prefetcher::splitRange` leaves a chunk under `min_bytes_for_seek` there); the
    /// measurements say the base did not (README, "Which ranges a short chunk may join").
    fn columns(&mut self, rg: Rg<'_>, located_late: bool, early_dictionary: bool) -> SubgroupPages {
        let late_group = if located_late { self.b.group() } else { 0 };
        let mut walk = SubgroupPages {
            columns: Vec::with_capacity(self.read_columns.len()),
            pages: Vec::with_capacity(self.read_columns.len()),
        };
        for ci in 0..self.read_columns.len() {
            let Some(&c) = self.read_columns.get(ci) else {
                break;
            };
            let first = walk.pages.len();
            self.column_pages(rg, c, &mut walk.pages);
            let n_pages = walk.pages.len() - first;
            // A one-page chunk is a whole range, not a split one; so is a chunk too short to
            // split, whose pages the first subgroup reads together.
            let short = rg
                .chunk(c)
                .is_some_and(|ch| ch.data_len < self.input.unsplit_below_bytes);
            let whole = if n_pages > 1 && short {
                self.b.group()
            } else {
                0
            };
            let group = if n_pages > 1 && !short {
                self.b.group()
            } else if located_late && rg.chunk(c).is_some_and(|ch| self.paged(ch)) {
                late_group
            } else {
                0
            };
            let dict_pending = rg
                .chunk(c)
                .and_then(|ch| ch.dictionary_page())
                .filter(|_| !early_dictionary && !self.input.whole_chunks)
                .map(|r| self.clip(r));
            walk.columns.push(ColumnWalk {
                column: c,
                pages: first..walk.pages.len(),
                ids: (group, whole),
                prewhere: self.input.prewhere_columns.contains(&c),
                cursor: first,
                dict_pending,
                last_page: None,
            });
        }
        walk
    }

    /// The page steps of every subgroup with rows left; returns the number of subgroups.
    fn page_steps(&mut self, rg: Rg<'_>, early: &EarlySteps, slices: &Slices) -> u32 {
        let rows = rg.rows();
        let sub_rows = self.subgroup_rows(rg);
        let early_dictionary = early.bloom_decision.is_some();
        let mut pages = self.columns(rg, early.indexes.is_some(), early_dictionary);
        let mut subgroups = 0;
        // One pair of candidate buffers for every subgroup of the row group.
        let with_room = || PageStep {
            candidates: Vec::with_capacity(pages.columns.len() + 1),
            ..PageStep::default()
        };
        let (mut pw, mut main) = (with_room(), with_room());
        for k in 0..rows.div_ceil(sub_rows) {
            let lo = k * sub_rows;
            let hi = ((k + 1) * sub_rows).min(rows);
            let kept_rows = slices.count_rows(&slices.kept, lo, hi);
            if kept_rows == 0 {
                continue;
            }
            let pass_rows = slices.count_rows(&slices.pass, lo, hi);
            pw.clear();
            main.clear();
            let steps = (&mut pw, &mut main);
            let counts = (kept_rows, pass_rows);
            self.subgroup_pages(rg, &mut pages, slices, lo..hi, counts, steps);
            let rows = SubgroupRows {
                kept: kept_rows,
                pass: pass_rows,
            };
            if self
                .push_subgroup(rg, subgroups, (&pw, &main), rows)
                .is_some()
            {
                subgroups += 1;
            }
        }
        subgroups
    }

    /// Subgroup `rows`' pages of every column, into (PREWHERE step, main step), both empty
    /// before. A PREWHERE column reads the pages of rows page pruning kept, the others those
    /// PREWHERE passed; a chunk's dictionary (when not an early stage) goes with its first page
    /// read.
    fn subgroup_pages(
        &mut self,
        rg: Rg<'_>,
        pages: &mut SubgroupPages,
        slices: &Slices,
        rows: Range<u64>,
        (kept_rows, pass_rows): (u64, u64),
        (pw, main): (&mut PageStep, &mut PageStep),
    ) {
        let (lo, hi) = (rows.start, rows.end);
        let all_pages = &pages.pages;
        for col in pages.columns.iter_mut() {
            let ps = if col.prewhere {
                &slices.kept
            } else {
                &slices.pass
            };
            let column = all_pages.get(col.pages.clone()).unwrap_or_default();
            let base = col.pages.start;
            let mut p = col.cursor - base;
            while column.get(p).is_some_and(|pg| pg.1 <= lo) {
                p += 1;
            }
            col.cursor = base + p;
            let target = if col.prewhere { &mut *pw } else { &mut *main };
            for &(a, z, range) in column.get(p..).unwrap_or_default() {
                if a >= hi {
                    break;
                }
                if slices.any(ps, a.max(lo), z.min(hi)) && !range.is_empty() {
                    if let Some(d) = col.dict_pending.take() {
                        // Split out of the same chunk as its pages: the same group.
                        target
                            .candidates
                            .push(self.b.add_in(col.ids, d, ReadKind::Dictionary));
                        target.compressed_bytes += d.len();
                    }
                    // A page that spans several subgroups is one candidate, named by each
                    // (duplicates would only merge into its entry, after a sort of them all),
                    // and its bytes count once, in the first subgroup that reads it: a page is
                    // decompressed once (`decodePrimitiveColumn` goes on in `column.page`
                    // across subgroups) and prefetched for the first subgroup that needs it
                    // (`determinePagesToPrefetch`). Until 2026-12-07 each subgroup counted it,
                    // so decode time and step charges grew with pages past the subgroup size.
                    let cand = match col.last_page {
                        Some((r, i)) if r == range => i,
                        _ => {
                            let i = self.b.add_in(col.ids, range, ReadKind::DataPages);
                            col.last_page = Some((range, i));
                            target.compressed_bytes += range.len();
                            i
                        }
                    };
                    target.candidates.push(cand);
                }
            }
            let col_rows = if col.prewhere { kept_rows } else { pass_rows };
            let uncompressed = rg.chunk(col.column).map_or(0, |ch| ch.uncompressed_bytes);
            // `col_rows <= rows`, so the share is at most `uncompressed`.
            target.decoded_bytes +=
                narrow::<u128, u64>(uncompressed as u128 * col_rows as u128 / rg.rows() as u128);
        }
    }

    /// Pushes subgroup `sub`'s PREWHERE and main steps (those with work); returns its last
    /// step, which ends the subgroup and delivers its rows once every output column is decoded.
    fn push_subgroup(
        &mut self,
        rg: Rg<'_>,
        sub: u32,
        (pw, main): (&PageStep, &PageStep),
        rows: SubgroupRows,
    ) -> Option<u32> {
        let input = self.input;
        let has_main_columns = !input
            .main_columns
            .iter()
            .all(|c| input.prewhere_columns.contains(c));
        let mut last = None;
        if !pw.candidates.is_empty() {
            let s = self.push_step(rg, StepKind::Prewhere(sub), &pw.candidates);
            self.set_decode(s, pw.compressed_bytes, pw.decoded_bytes, rows.kept);
            last = Some(s);
        }
        if !main.candidates.is_empty() && rows.pass > 0 {
            let s = self.push_step(rg, StepKind::Main(sub), &main.candidates);
            self.set_decode(s, main.compressed_bytes, main.decoded_bytes, rows.pass);
            last = Some(s);
        }
        let last = last?;
        if let Some(st) = self.steps.get_mut(last as usize) {
            st.ends_subgroup = true;
            let complete = matches!(st.kind, StepKind::Main(_)) || !has_main_columns;
            st.deliver_rows = if complete { rows.pass } else { 0 };
        }
        Some(last)
    }

    fn set_decode(&mut self, s: u32, compressed_bytes: u64, decoded_bytes: u64, rows: u64) {
        if let Some(st) = self.steps.get_mut(s as usize) {
            debug_assert!(st.kind.decodes());
            st.compressed_bytes = compressed_bytes;
            st.decoded_bytes = decoded_bytes;
            st.rows = rows;
        }
    }

    /// Merges the candidates into entries and gives each step its entries (deps come with
    /// [`PlanShape::wired`]).
    fn finish(self) -> FilePlan {
        let FilePlanner {
            b,
            mut steps,
            row_groups,
            ..
        } = self;
        let (entries, map) = merge_candidates(&b.candidates);
        let mut entry_consumers = vec![0u32; entries.len()];
        let mut step_lists = Vec::with_capacity(b.candidate_lists.len());
        let mut e: Vec<u32> = Vec::new();
        for (step, cands) in steps.iter_mut().zip(&b.step_candidates) {
            let cands = b.candidate_lists.get(cands.range()).unwrap_or_default();
            e.clear();
            e.extend(
                cands
                    .iter()
                    .filter_map(|&c| map.get(c as usize).copied().flatten()),
            );
            e.sort_unstable();
            e.dedup();
            for &i in &e {
                if let Some(n) = entry_consumers.get_mut(i as usize) {
                    *n += 1;
                }
            }
            step.entries = ListSpan::append(&mut step_lists, &e, None);
        }
        let (whole_chunk_starts, whole_chunk_lists) = whole_chunks(&entries);
        debug_assert!(entries
            .windows(2)
            .all(|w| w[0].range.end <= w[1].range.start));
        FilePlan {
            entries: entries.into(),
            entry_consumers: entry_consumers.into(),
            row_groups: row_groups.into(),
            steps,
            step_lists,
            whole_chunk_starts: whole_chunk_starts.into(),
            whole_chunk_lists: whole_chunk_lists.into(),
        }
    }
}

/// Rows of one subgroup: kept by page pruning, and passed by PREWHERE as well.
#[derive(Clone, Copy)]
struct SubgroupRows {
    kept: u64,
    pass: u64,
}

/// The columns read, each with where its walk through its pages stands, and every column's
/// pages in one vector.
struct SubgroupPages {
    columns: Vec<ColumnWalk>,
    pages: Vec<PageRows>,
}

/// A row group's row slices: which survive page pruning (`kept`) and which pass PREWHERE as
/// well (`pass`), as prefix sums over slices of `slice_rows` rows.
struct Slices {
    slice_rows: u64,
    kept: Vec<u64>,
    pass: Vec<u64>,
}

impl Slices {
    fn new(input: &PlanInput<'_>, rg: Rg<'_>, column_index_present: bool) -> Slices {
        let rows = rg.rows();
        let slice_rows = rows.div_ceil(SLICES_PER_ROW_GROUP).max(1);
        let n_slices = rows.div_ceil(slice_rows);
        let prune_pages = column_index_present && input.page_keep_fraction < 1.0;
        let draw = |fraction: f64, decision: Decision, s: u64| {
            chance(
                fraction,
                input.seed,
                decision,
                input.file_index,
                rg.index as u64,
                s,
            )
        };
        let mut kept = Vec::with_capacity(usize_of(n_slices) + 1);
        let mut pass = Vec::with_capacity(usize_of(n_slices) + 1);
        let (mut k, mut p) = (0u64, 0u64);
        kept.push(k);
        pass.push(p);
        for s in 0..n_slices {
            let is_kept = !prune_pages || draw(input.page_keep_fraction, Decision::PageSlice, s);
            let passes = is_kept
                && (input.prewhere_columns.is_empty()
                    || draw(input.prewhere_selectivity, Decision::Prewhere, s));
            k += u64::from(is_kept);
            p += u64::from(passes);
            kept.push(k);
            pass.push(p);
        }
        Slices {
            slice_rows,
            kept,
            pass,
        }
    }

    /// Whether any row in `lo_row..hi_row` is in the set `ps` counts.
    fn any(&self, ps: &[u64], lo_row: u64, hi_row: u64) -> bool {
        if lo_row >= hi_row {
            return false;
        }
        let a = usize_of(lo_row / self.slice_rows);
        let z = usize_of((hi_row - 1) / self.slice_rows) + 1;
        ps.get(z).copied().unwrap_or(0) > ps.get(a).copied().unwrap_or(0)
    }

    /// Rows of `lo_row..hi_row` in the set `ps` counts: the parts of its first and last
    /// slices, and the whole slices between them from the prefix sums (two divisions, where a
    /// walk slice by slice made one per slice: a tenth of planning a small file).
    fn count_rows(&self, ps: &[u64], lo_row: u64, hi_row: u64) -> u64 {
        if lo_row >= hi_row {
            return 0;
        }
        let sr = self.slice_rows;
        let in_set = |s: u64| {
            let i = usize_of(s);
            ps.get(i + 1).copied().unwrap_or(0) > ps.get(i).copied().unwrap_or(0)
        };
        let (first, last) = (lo_row / sr, (hi_row - 1) / sr);
        if first == last {
            return if in_set(first) { hi_row - lo_row } else { 0 };
        }
        let head = if in_set(first) {
            (first + 1) * sr - lo_row
        } else {
            0
        };
        let tail = if in_set(last) { hi_row - last * sr } else { 0 };
        let at = |s: u64| ps.get(usize_of(s)).copied().unwrap_or(0);
        let middle = at(last).saturating_sub(at(first + 1)) * sr;
        head + middle + tail
    }

    /// [`Self::count_rows`] slice by slice: the tests' reference.
    #[cfg(test)]
    fn count_rows_walking(&self, ps: &[u64], lo_row: u64, hi_row: u64) -> u64 {
        let mut total = 0;
        let mut r = lo_row;
        while r < hi_row {
            let s = r / self.slice_rows;
            let end = ((s + 1) * self.slice_rows).min(hi_row);
            let i = usize_of(s);
            if ps.get(i + 1).copied().unwrap_or(0) > ps.get(i).copied().unwrap_or(0) {
                total += end - r;
            }
            r = end;
        }
        total
    }
}

/// The entries of each whole chunk, by chunk id, as (starts, lists): see
/// [`FilePlan::whole_chunk_starts`]. Chunk 0 (no whole chunk) has none.
fn whole_chunks(entries: &[Entry]) -> (Vec<u32>, Vec<u32>) {
    let Some(max) = entries
        .iter()
        .map(|e| e.whole_chunk)
        .max()
        .filter(|&m| m > 0)
    else {
        return (Vec::new(), Vec::new());
    };
    let mut starts = vec![0u32; max as usize + 2];
    for e in entries.iter().filter(|e| e.whole_chunk != 0) {
        if let Some(n) = starts.get_mut(e.whole_chunk as usize + 1) {
            *n += 1;
        }
    }
    for i in 1..starts.len() {
        let before = starts.get(i - 1).copied().unwrap_or(0);
        if let Some(n) = starts.get_mut(i) {
            *n += before;
        }
    }
    let mut placed = starts.clone();
    let mut lists = vec![0u32; entries.len()];
    for (i, e) in entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.whole_chunk != 0)
    {
        if let Some(at) = placed.get_mut(e.whole_chunk as usize) {
            if let Some(slot) = lists.get_mut(*at as usize) {
                *slot = u32_of(i);
            }
            *at += 1;
        }
    }
    lists.truncate(starts.last().copied().unwrap_or(0) as usize);
    (starts, lists)
}

/// Gives each step the list of steps whose deps name it, in step order, at the end of
/// `lists` (which holds every step's deps).
fn add_dependents(steps: &mut [Step], lists: &mut Vec<u32>) {
    let mut count = vec![0u32; steps.len()];
    for s in steps.iter() {
        for &d in lists.get(s.deps.range()).unwrap_or_default() {
            if let Some(n) = count.get_mut(d as usize) {
                *n += 1;
            }
        }
    }
    // Each step's span, laid out in step order after the lists already there.
    let mut next = u32_of(lists.len());
    for (s, &n) in steps.iter_mut().zip(&count) {
        s.dependents = ListSpan {
            start: next,
            len: n,
        };
        next += n;
    }
    lists.resize(next as usize, 0);
    // `count` now counts each step's dependents placed so far.
    count.fill(0);
    for i in 0..steps.len() {
        let Some(deps) = steps.get(i).map(|s| s.deps.range()) else {
            break;
        };
        for k in deps {
            let Some(&d) = lists.get(k) else { continue };
            let (Some(target), Some(placed)) = (steps.get(d as usize), count.get_mut(d as usize))
            else {
                continue;
            };
            let at = (target.dependents.start + *placed) as usize;
            *placed += 1;
            if let Some(slot) = lists.get_mut(at) {
                *slot = u32_of(i);
            }
        }
    }
    debug_assert!(steps
        .iter()
        .zip(&count)
        .all(|(s, &n)| s.dependents.len == n));
}

/// The indexes of the non-empty candidates sorted by (start, end, index). The keys are
/// distinct, so an unstable sort gives the stable order. Each key is packed into one `u128`
/// (start, end and index in 47, 47 and 32 bits) when the offsets fit, which they do for any
/// object within `limits::MAX_OBJECT_BYTES` (2^42.3): comparing one integer is cheaper than
/// comparing tuples field by field, and much cheaper than looking each candidate up in the
/// comparator (this sort was a fifth of planning a file, then 3% of `single-large-file`).
fn candidate_order(c: &[Candidate]) -> Vec<u32> {
    const OFFSET_BITS: u32 = 47;
    let non_empty = || {
        c.iter()
            .zip(0..u32_of(c.len()))
            .filter(|(x, _)| !x.range.is_empty())
    };
    if non_empty().all(|(x, _)| x.range.end >> OFFSET_BITS == 0) {
        let mut keys: Vec<u128> = non_empty()
            .map(|(x, i)| {
                u128::from(x.range.start) << (OFFSET_BITS + 32)
                    | u128::from(x.range.end) << 32
                    | u128::from(i)
            })
            .collect();
        keys.sort_unstable();
        // The low 32 bits are the index.
        keys.into_iter()
            .map(|k| narrow::<u128, u32>(k & u128::from(u32::MAX)))
            .collect()
    } else {
        let mut keys: Vec<(u64, u64, u32)> = non_empty()
            .map(|(x, i)| (x.range.start, x.range.end, i))
            .collect();
        keys.sort_unstable();
        keys.into_iter().map(|(_, _, i)| i).collect()
    }
}

/// Sorts candidates and merges overlapping ones (touching ones stay apart); returns the
/// entries and, per candidate, its entry (`None` for an empty candidate).
fn merge_candidates(c: &[Candidate]) -> (Vec<Entry>, Vec<Option<u32>>) {
    let order = candidate_order(c);
    let mut entries: Vec<Entry> = Vec::with_capacity(order.len());
    let mut map = vec![None; c.len()];
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
                whole_chunk: cand.whole_chunk,
                kind: cand.kind,
            }),
        }
        if let Some(m) = map.get_mut(i as usize) {
            *m = Some(u32_of(entries.len() - 1));
        }
    }
    (entries, map)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::testing::{table, TableShape};

    #[test]
    fn candidate_order_is_the_tuple_order_packed_or_not() {
        let cand = |start: u64, end: u64| Candidate {
            range: ByteRange { start, end },
            group: 0,
            whole_chunk: 0,
            kind: ReadKind::DataPages,
        };
        // Ties on start broken by end, then by index; empty ranges left out.
        let small = [
            cand(50, 60),
            cand(10, 20),
            cand(10, 15),
            cand(5, 5),
            cand(10, 15),
        ];
        assert_eq!(candidate_order(&small), [2, 4, 1, 0]);
        // Offsets past 47 bits take the tuple sort, with the same order.
        let big = 1u64 << 50;
        let large = [
            cand(big + 9, big + 10),
            cand(50, 60),
            cand(big, big + 20),
            cand(50, 55),
        ];
        assert_eq!(candidate_order(&large), [3, 1, 2, 0]);
    }

    proptest::proptest! {
        #[test]
        fn counting_rows_by_prefix_sums_agrees_with_the_walk(
            rows in 1u64..5_000,
            bits in proptest::collection::vec(proptest::bool::ANY, 64),
            a in 0u64..5_000,
            b in 0u64..5_000,
        ) {
            let slice_rows = rows.div_ceil(SLICES_PER_ROW_GROUP).max(1);
            let n = rows.div_ceil(slice_rows);
            let mut ps = vec![0u64];
            for s in 0..n {
                let set = bits.get(s as usize).copied().unwrap_or(false);
                ps.push(ps.last().copied().unwrap_or(0) + u64::from(set));
            }
            let slices = Slices { slice_rows, kept: ps.clone(), pass: ps.clone() };
            let (lo, hi) = (a.min(b) % (rows + 1), a.max(b).min(rows));
            proptest::prop_assert_eq!(
                slices.count_rows(&ps, lo, hi),
                slices.count_rows_walking(&ps, lo, hi)
            );
        }

        /// The packed sort agrees with sorting `(start, end, index)` tuples, offsets on both
        /// sides of the 47-bit line, duplicates and empty ranges included.
        #[test]
        fn candidate_order_agrees_with_tuples(
            ranges in proptest::collection::vec(
                (proptest::prop_oneof![0u64..64, (1u64 << 47) - 64..(1u64 << 47) + 64], 0u64..8),
                0..40,
            )
        ) {
            let c: Vec<Candidate> = ranges
                .iter()
                .map(|&(start, len)| Candidate {
                    range: ByteRange { start, end: start + len },
                    group: 0,
                    whole_chunk: 0,
                    kind: ReadKind::DataPages,
                })
                .collect();
            let mut tuples: Vec<(u64, u64, u32)> = c
                .iter()
                .zip(0u32..)
                .filter(|(x, _)| !x.range.is_empty())
                .map(|(x, i)| (x.range.start, x.range.end, i))
                .collect();
            tuples.sort_unstable();
            let want: Vec<u32> = tuples.into_iter().map(|(_, _, i)| i).collect();
            proptest::prop_assert_eq!(candidate_order(&c), want);
        }
    }

    pub(crate) fn input<'a>(cols: &'a [u32], rgs: Range<u32>) -> PlanInput<'a> {
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
            whole_chunks: false,
            unsplit_below_bytes: 0,
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

    /// A page that spans several subgroups is decompressed once: the decoding steps' compressed
    /// bytes add up to the pages and dictionaries read, each once, however many subgroups
    /// name a page (they added up to a page's bytes times its subgroups until 2026-12-07).
    #[test]
    fn a_page_spanning_subgroups_counts_its_bytes_once() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 2,
            columns: 3,
            pages: 1,
            page_bytes: 4 << 20,
            ..TableShape::default()
        });
        let file = &t.files[0];
        let plan = plan_file(file, &input(&[0, 2], 0..2));
        let decoding: Vec<&Step> = plan.steps.iter().filter(|s| s.kind.decodes()).collect();
        assert!(
            decoding.len() > 2 * 2,
            "several subgroups a row group: {} decoding steps",
            decoding.len()
        );
        let counted: u64 = decoding.iter().map(|s| s.compressed_bytes).sum();
        let read: u64 = plan
            .entries
            .iter()
            .filter(|e| matches!(e.kind, ReadKind::DataPages | ReadKind::Dictionary))
            .map(|e| e.range.len())
            .sum();
        assert_eq!(counted, read);
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
            let dep = plan.deps_of(s)[0] as usize;
            assert!(
                matches!(plan.steps[dep].kind, StepKind::Prewhere(n) if n == s.kind.subgroup())
            );
        }
        let rows: u64 = plan.steps.iter().map(|s| s.deliver_rows).sum();
        assert!(rows < t.files[0].num_rows());
    }

    #[test]
    fn whole_chunk_lists_hold_each_chunks_entries_in_offset_order() {
        let entry = |start: u64, whole_chunk: u32| Entry {
            range: ByteRange::new(start, start + 10),
            group: 0,
            whole_chunk,
            kind: ReadKind::DataPages,
        };
        let entries = [
            entry(0, 2),
            entry(10, 0),
            entry(20, 2),
            entry(30, 4),
            entry(40, 2),
        ];
        let (starts, lists) = whole_chunks(&entries);
        let plan = FilePlan {
            whole_chunk_starts: starts.into(),
            whole_chunk_lists: lists.into(),
            ..FilePlan::default()
        };
        assert_eq!(plan.whole_chunk_entries(2), [0, 2, 4]);
        assert_eq!(plan.whole_chunk_entries(4), [3]);
        assert!(plan.whole_chunk_entries(0).is_empty());
        assert!(plan.whole_chunk_entries(3).is_empty());
        assert!(plan.whole_chunk_entries(99).is_empty());
        assert_eq!(whole_chunks(&[entry(0, 0)]), (Vec::new(), Vec::new()));
    }

    #[test]
    fn each_steps_dependents_are_the_steps_whose_deps_name_it_in_step_order() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 3,
            columns: 3,
            pages: 6,
            bloom: true,
            ..TableShape::default()
        });
        let mut q = input(&[0, 1, 2], 0..3);
        q.prewhere_columns = &[0];
        q.prewhere_selectivity = 0.5;
        q.bloom_columns = &[1];
        q.sequential_subgroups = true;
        let plan = plan_file(&t.files[0], &q);
        let mut expected: Vec<Vec<u32>> = vec![Vec::new(); plan.steps.len()];
        for (i, s) in plan.steps.iter().enumerate() {
            for &d in plan.deps_of(s) {
                expected[d as usize].push(u32_of(i));
            }
        }
        assert!(expected.iter().filter(|d| !d.is_empty()).count() > 3);
        for (s, want) in plan.steps.iter().zip(&expected) {
            assert_eq!(plan.dependents_of(s), want.as_slice());
        }
    }

    #[test]
    fn every_wiring_of_one_shape_waits_as_the_stages_say() {
        let t = table(&TableShape {
            files: 1,
            row_groups: 1,
            columns: 2,
            pages: 6,
            bloom: true,
            ..TableShape::default()
        });
        let mut q = input(&[0, 1], 0..1);
        q.prewhere_columns = &[0];
        q.prewhere_selectivity = 1.0;
        q.bloom_columns = &[1];
        let shape = plan_shape(&t.files[0], &q);
        for (planned, sequential) in [(false, false), (true, false), (false, true), (true, true)] {
            q.planned = planned;
            q.sequential_subgroups = sequential;
            let plan = plan_file(&t.files[0], &q);
            assert_eq!(plan, shape.wired(q.wiring()), "plan_file wires the shape");
            let kinds: Vec<StepKind> = plan.steps.iter().map(|s| s.kind).collect();
            use StepKind::*;
            assert_eq!(
                kinds,
                [
                    BloomHeader,
                    BloomBlocks,
                    Dictionary,
                    Indexes,
                    Prewhere(0),
                    Main(0),
                    Prewhere(1),
                    Main(1)
                ]
            );
            let coupled = |d: &'static [u32]| if planned { &[][..] } else { d };
            let after_first: &[u32] = if sequential {
                &[1, 2, 3, 5]
            } else {
                &[1, 2, 3]
            };
            let want: [&[u32]; 8] = [
                &[],
                &[0],
                coupled(&[0]),
                coupled(&[1, 2]),
                &[1, 2, 3],
                &[4],
                after_first,
                &[6],
            ];
            for (s, w) in plan.steps.iter().zip(want) {
                assert_eq!(plan.deps_of(s), w, "{:?}, planned {planned}", s.kind);
            }
        }
    }

    #[test]
    fn predicate_keys_are_equal_only_for_equal_predicates_even_on_a_hash_collision() {
        use crate::predicate::{CmpOp, Term};
        let p = |v: i64| Predicate {
            terms: vec![Term::Compare {
                column: 1,
                op: CmpOp::Lt,
                value: layout::StatValue::Int(v),
            }],
            text: String::new(),
        };
        let (a, b) = (PredicateKey::new(&p(3)), PredicateKey::new(&p(4)));
        assert_eq!(a.cmp(&PredicateKey::new(&p(3))), std::cmp::Ordering::Equal);
        assert_ne!(a.cmp(&b), std::cmp::Ordering::Equal);
        assert_eq!(a.cmp(&b), b.cmp(&a).reverse());
        // The same hash forced on unequal predicates: still ordered, and by their text.
        let collided = PredicateKey {
            hash: a.hash,
            predicate: p(4),
        };
        assert_eq!(
            a.cmp(&collided),
            std::cmp::Ordering::Less,
            "3 before 4 in the text"
        );
        assert_eq!(collided.cmp(&a), std::cmp::Ordering::Greater);
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
        assert_eq!(coupled.deps_of(&coupled.steps[3]), [1, 2]);
        q.planned = true;
        let planned = plan_file(&t.files[0], &q);
        assert!(planned.deps_of(&planned.steps[2]).is_empty());
        assert!(planned.deps_of(&planned.steps[3]).is_empty());
        assert_eq!(planned.row_groups[0].bloom_decision_step, Some(1));
    }
}
