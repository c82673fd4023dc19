//! What-if replay: the byte ranges a recorded run NEEDED (the `served_by = needed` rows of its
//! `sim run --trace` trace) re-planned and re-read under other strategies and settings, through
//! the real read path and the simulated driver, against a given store model.
//!
//! The rebuilt layout ([`rebuild`]): one file per object of the run, in the order the run read
//! them, with its recorded size and footer length; per file, the row groups that had needed
//! ranges, in file order, with their recorded row counts; per row group, one chunk per column
//! the run read, placed at its recorded offsets: dictionary page, data pages (listed in the
//! page table with their first rows when the chunk has an offset index and not every page was
//! one needed range), offset index, column index, and the chunk's recorded decoded size.
//! Files, row groups and columns are renumbered densely in that order (the pruning hashes that
//! used the old numbers are not needed: the rebuilt query keeps everything). A column a row
//! group did not need becomes an empty chunk (no bytes, no indexes), which the planner skips.
//! The schema is as wide as the columns read, named `c<original index>`.
//!
//! The rebuilt query reads exactly the needed ranges: every column read, nothing pruned
//! (fractions 1, but see page pruning below), column indexes for the columns that read one, the
//! metadata cache warm only if the run read no footer. Page pruning: when column indexes were
//! read, page pruning stays on at a fraction that keeps every page (1 - 2^-53), because pruning
//! changes the plan's dependencies (in the redesign, pages then wait for the offset index).
//! Measured: the recording's own strategy gives back its GETs and bytes exactly, and its wall
//! time exactly without page pruning (with it, within 5%: row-level pruning is not rebuilt, so
//! the pruned pages' rows go to the kept pages before them and the rebuilt chunks decode their
//! whole decoded size where the recording decoded the kept rows' share). Not rebuilt, and said in the report's notes: bloom-filter reads
//! (their blocks are chosen by hashes of the old numbering), PREWHERE (the rebuilt query reads
//! the passing pages of every column in one step), codecs (the decode cost model does not use
//! them), Iceberg metadata.

use std::collections::BTreeMap;
use std::sync::Arc;

mod from_reads;
pub use from_reads::{needed_from_reads, RECORDED_ARM};

use layout::{ByteRange, ColumnChunk, FileLayout, PageLocation, RowGroup, Schema, Table};
use planner::QuerySpec;
use serde::Serialize;
use tracefit::{NeededKind, ParsedTrace, ServedBy, TraceRecord};

use drive::Recording;
use scenario::{Resolved, ResolvedArm, ResolvedQuery};

/// Why a what-if replay cannot run.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    /// The trace has no run with needed ranges.
    #[error("{0}")]
    NoNeededRanges(String),
    /// The needed ranges do not make a consistent layout.
    #[error("the needed ranges of {object} do not make a layout: {what}")]
    Inconsistent { object: String, what: String },
    /// A strategy or setting is wrong.
    #[error("what-if `{arm}`: {what}")]
    Strategy { arm: String, what: String },
    /// The simulated run failed.
    #[error("what-if `{arm}`: {what}")]
    Run { arm: String, what: String },
}

/// One strategy to re-run the needed ranges under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhatIfArm {
    /// A strategy preset (`clickhouse-base`, `clickhouse-redesign`, `arrow-rs`...).
    pub strategy: String,
    /// Settings shared by every what-if (applied first), e.g. the scenario's `max_threads`.
    pub shared_settings: Vec<(String, String)>,
    /// This arm's own settings, applied next, in order
    /// (`input_format_parquet_coalesce_gap_bytes`, `2MiB`).
    pub settings: Vec<(String, String)>,
}

impl WhatIfArm {
    /// The name the report shows: the preset, then its own settings.
    pub fn name(&self) -> String {
        if self.settings.is_empty() {
            return self.strategy.clone();
        }
        let s: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!("{} {}", self.strategy, s.join(" "))
    }
}

/// Which recorded run to replay, and how.
#[derive(Debug, Clone, Default)]
pub struct WhatIfOptions {
    /// The arm of the recorded run (default: the first run with needed ranges).
    pub arm: Option<String>,
    /// Root seed of the simulated runs (pass the scenario's seed to reproduce its seconds).
    pub seed: u64,
    /// The CPU model (default: the scenario default).
    pub cpu: models::cpu::CpuSpec,
}

/// Which run of the trace: its labels.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct RunLabel {
    pub case: String,
    pub arm: String,
    pub replication: u32,
    pub query: String,
}

impl std::fmt::Display for RunLabel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "case {}, arm {}, replication {}, query {}",
            self.case, self.arm, self.replication, self.query
        )
    }
}

/// GETs, bytes and seconds of one way of reading the needed ranges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfRow {
    /// `recorded (arm X)` or the strategy with its settings.
    pub name: String,
    /// Store GETs, every attempt.
    pub gets: u64,
    /// Bytes fetched from the store by successful GETs.
    pub bytes: u64,
    /// Time of the last byte of the last GET, ns from the start of the run.
    pub last_byte_ns: u64,
    /// Wall time of the simulated run (decode of the last chunk included); `None` for the
    /// recorded row, whose trace does not say it.
    pub wall_ns: Option<u64>,
}

/// A layout and query rebuilt from a run's needed ranges.
#[derive(Debug, Clone)]
pub struct Rebuilt {
    /// The run.
    pub run: RunLabel,
    /// The rebuilt layout.
    pub table: Table,
    /// The query that reads exactly the needed ranges.
    pub query: QuerySpec,
    /// Needed ranges used, and their bytes.
    pub needed_ranges: usize,
    /// Bytes of the needed ranges used.
    pub needed_bytes: u64,
    /// The recorded run's GETs, bytes and last byte.
    pub recorded: WhatIfRow,
    /// What was not rebuilt.
    pub notes: Vec<String>,
}

/// The comparison: the recorded run first, then each what-if.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfReport {
    pub run: RunLabel,
    pub files: usize,
    pub needed_ranges: usize,
    pub needed_bytes: u64,
    pub rows: Vec<WhatIfRow>,
    pub notes: Vec<String>,
}

impl WhatIfReport {
    /// The table the CLI prints.
    pub fn to_table(&self) -> String {
        let mut s = format!(
            "what-if replay of {}: {} needed ranges, {} in {} files\n",
            self.run,
            self.needed_ranges,
            units::format_bytes(self.needed_bytes),
            self.files
        );
        let w = self
            .rows
            .iter()
            .map(|r| r.name.chars().count())
            .max()
            .unwrap_or(8)
            .max(8);
        s.push_str(&format!(
            "{:<w$}  {:>8}  {:>11}  {:>10}  {:>10}\n",
            "strategy", "GETs", "bytes", "last byte", "wall"
        ));
        for r in &self.rows {
            s.push_str(&format!(
                "{:<w$}  {:>8}  {:>11}  {:>10}  {:>10}\n",
                r.name,
                r.gets,
                units::format_bytes(r.bytes),
                units::format_duration_ns(r.last_byte_ns),
                r.wall_ns
                    .map(units::format_duration_ns)
                    .unwrap_or_else(|| "-".into())
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("note: {n}\n"));
        }
        s
    }
}

fn label(r: &TraceRecord) -> Option<RunLabel> {
    let s = r.sim.as_ref()?;
    Some(RunLabel {
        case: s.case.clone(),
        arm: s.arm.clone(),
        replication: s.replication,
        query: s.query.clone(),
    })
}

/// Limits that keep a hostile trace from allocating without bound.
const MAX_ROW_GROUPS_PER_FILE: usize = limits::MAX_ROW_GROUPS_PER_FILE as usize;

#[derive(Default)]
struct ChunkBuild {
    dictionary: Option<ByteRange>,
    pages: Vec<(ByteRange, u64)>,
    offset_index: Option<ByteRange>,
    column_index: Option<ByteRange>,
    uncompressed_bytes: u64,
}

#[derive(Default)]
struct RowGroupBuild {
    rows: u64,
    /// The trace line that first stated `rows` (`None` before any).
    rows_line: Option<u64>,
    chunks: BTreeMap<u32, ChunkBuild>,
}

struct FileBuild {
    object: String,
    size_bytes: u64,
    footer_len_bytes: u32,
    footer_read: bool,
    row_groups: BTreeMap<u32, RowGroupBuild>,
}

/// Picks the run (by `arm`, else the first with needed ranges) and rebuilds its layout and
/// query from its needed ranges.
pub fn rebuild(trace: &ParsedTrace, arm: Option<&str>) -> Result<Rebuilt, WhatIfError> {
    let runs: Vec<RunLabel> = {
        let mut seen = Vec::new();
        for r in trace.records.iter().filter(|r| r.needed.is_some()) {
            if let Some(l) = label(r) {
                if !seen.contains(&l) {
                    seen.push(l);
                }
            }
        }
        seen
    };
    let run = match arm {
        Some(a) => runs.iter().find(|l| l.arm == a).cloned().ok_or_else(|| {
            let arms: Vec<&str> = runs.iter().map(|l| l.arm.as_str()).collect();
            WhatIfError::NoNeededRanges(format!(
                "{} has no needed ranges of arm `{a}`; arms with needed ranges: {}",
                trace.source,
                if arms.is_empty() { "none".to_string() } else { arms.join(", ") }
            ))
        })?,
        None => runs.first().cloned().ok_or_else(|| {
            WhatIfError::NoNeededRanges(format!(
                "{} has no needed ranges (rows with served_by=needed): a what-if replay needs a \
                 trace written by `sim run --trace` of this version, not an access log or an older trace",
                trace.source
            ))
        })?,
    };
    let in_run: Vec<&TraceRecord> = trace
        .records
        .iter()
        .filter(|r| label(r).as_ref() == Some(&run))
        .collect();

    // The recorded run: its store GETs.
    let store: Vec<&&TraceRecord> = in_run
        .iter()
        .filter(|r| r.served_by == ServedBy::Store)
        .collect();
    let recorded = WhatIfRow {
        name: format!("recorded (arm {})", run.arm),
        gets: store.len() as u64,
        bytes: store
            .iter()
            .filter(|r| r.is_success())
            .map(|r| r.bytes)
            .sum(),
        last_byte_ns: store
            .iter()
            .filter_map(|r| r.total_ns.map(|t| r.start_ns.saturating_add(t)))
            .max()
            .unwrap_or(0),
        wall_ns: None,
    };

    let mut notes = Vec::new();
    let mut files: Vec<FileBuild> = Vec::new();
    let mut file_of: BTreeMap<&str, usize> = BTreeMap::new();
    let mut columns: std::collections::BTreeSet<u32> = Default::default();
    let mut index_columns: std::collections::BTreeSet<u32> = Default::default();
    let (mut needed_ranges, mut needed_bytes, mut blooms) = (0usize, 0u64, 0usize);
    for r in &in_run {
        let Some(n) = r.needed else { continue };
        let at = *file_of.entry(r.object.as_str()).or_insert_with(|| {
            files.push(FileBuild {
                object: r.object.clone(),
                size_bytes: n.object_size_bytes,
                footer_len_bytes: n.footer_len_bytes,
                footer_read: false,
                row_groups: BTreeMap::new(),
            });
            files.len() - 1
        });
        let Some(f) = files.get_mut(at) else { continue };
        let bad = |what: String| WhatIfError::Inconsistent {
            object: r.object.clone(),
            what: format!("line {}: {what}", r.line),
        };
        if n.object_size_bytes != f.size_bytes || n.footer_len_bytes != f.footer_len_bytes {
            return Err(bad(format!(
                "object size {} and footer length {} differ from the first row's {} and {}",
                n.object_size_bytes, n.footer_len_bytes, f.size_bytes, f.footer_len_bytes
            )));
        }
        let offset = r.offset_bytes.unwrap_or(0);
        let range = ByteRange::with_len(offset, r.bytes);
        if range.end > f.size_bytes {
            return Err(bad(format!(
                "range {range} ends past the object's {} bytes",
                f.size_bytes
            )));
        }
        match (n.kind, n.row_group, n.column) {
            (NeededKind::Footer, ..) => f.footer_read = true,
            (NeededKind::BloomHeader | NeededKind::BloomBlocks, ..) => {
                blooms += 1;
                continue;
            }
            (kind, Some(g), Some(c)) => {
                if f.row_groups.len() >= MAX_ROW_GROUPS_PER_FILE && !f.row_groups.contains_key(&g) {
                    return Err(bad(format!(
                        "more than {MAX_ROW_GROUPS_PER_FILE} row groups"
                    )));
                }
                if n.row_group_rows > limits::MAX_ROWS_PER_ROW_GROUP {
                    return Err(bad(format!(
                        "row group {g} has {} rows, past the bound of {} \
                         (limits::MAX_ROWS_PER_ROW_GROUP)",
                        n.row_group_rows,
                        limits::MAX_ROWS_PER_ROW_GROUP
                    )));
                }
                let rg = f.row_groups.entry(g).or_default();
                match rg.rows_line {
                    None => (rg.rows, rg.rows_line) = (n.row_group_rows, Some(r.line)),
                    Some(first) if rg.rows != n.row_group_rows => {
                        return Err(bad(format!(
                            "row group {g} has {} rows here, {} on line {first}: one row group \
                             has one row count",
                            n.row_group_rows, rg.rows
                        )));
                    }
                    Some(_) => {}
                }
                let ch = rg.chunks.entry(c).or_default();
                ch.uncompressed_bytes = ch.uncompressed_bytes.max(n.uncompressed_bytes);
                match kind {
                    NeededKind::Dictionary => ch.dictionary = Some(range),
                    NeededKind::OffsetIndex => ch.offset_index = Some(range),
                    NeededKind::ColumnIndex => {
                        ch.column_index = Some(range);
                        index_columns.insert(c);
                    }
                    _ => ch.pages.push((range, n.first_row)),
                }
                columns.insert(c);
            }
            (kind, ..) => {
                return Err(bad(format!(
                    "a {} row without a row group and a column",
                    kind.as_str()
                )))
            }
        }
        needed_ranges += 1;
        needed_bytes += r.bytes;
    }
    if blooms > 0 {
        notes.push(format!(
            "{blooms} bloom-filter ranges not replayed (their blocks are picked by hashes of the recorded numbering)"
        ));
    }

    // Dense column numbering: position in the sorted set.
    let col_pos: BTreeMap<u32, usize> = columns.iter().enumerate().map(|(i, c)| (*c, i)).collect();
    let width = col_pos.len();
    let mut table = Table {
        schemas: vec![Schema {
            columns: columns.iter().map(|c| format!("c{c}")).collect(),
        }],
        files: Vec::with_capacity(files.len()),
        iceberg: None,
        provenance: layout::Provenance {
            tool: format!("sim what-if from the needed ranges of {}", trace.source),
            created_unix_s: None,
            sources: vec![trace.source.clone()],
        },
        lazy: None,
    };
    let mut any_footer = false;
    for f in files {
        any_footer |= f.footer_read;
        let mut file = FileLayout {
            path: f.object.clone(),
            materialized: true,
            outline: false,
            size_bytes: f.size_bytes,
            footer_len_bytes: f.footer_len_bytes,
            schema: 0,
            row_groups: Vec::with_capacity(f.row_groups.len()),
            pages: Vec::new(),
        };
        for (g, rg) in f.row_groups {
            let mut chunks = vec![ColumnChunk::default(); width];
            for (c, ch) in rg.chunks {
                let Some(slot) = col_pos.get(&c).and_then(|i| chunks.get_mut(*i)) else {
                    continue;
                };
                *slot =
                    build_chunk(ch, &mut file.pages).map_err(|what| WhatIfError::Inconsistent {
                        object: f.object.clone(),
                        what: format!("row group {g} column {c}: {what}"),
                    })?;
            }
            file.row_groups.push(RowGroup::new(rg.rows, chunks));
        }
        table.files.push(file);
    }
    table.validate().map_err(|e| WhatIfError::Inconsistent {
        object: "the rebuilt layout".into(),
        what: e.to_string(),
    })?;
    let mut query = QuerySpec::new(
        (0..width as u32).collect(),
        (0..table.files.len() as u32).collect(),
    );
    query.column_index_columns = index_columns
        .iter()
        .filter_map(|c| col_pos.get(c).map(|i| *i as u32))
        .collect();
    query.parquet_metadata_cache_warm = !any_footer;
    if !query.column_index_columns.is_empty() {
        // A column index read means the recording pruned pages (a condition keeping every page
        // is the one case this gets wrong). Pruning changes the plan's dependencies (pages wait
        // for the indexes), so keep it on, at the largest fraction below 1: a slice is dropped
        // only if its hash is exactly 1 - 2^-53, a chance of 2^-53 per slice.
        query.page_keep_fraction = 1.0 - f64::EPSILON / 2.0;
    }
    Ok(Rebuilt {
        run,
        table,
        query,
        needed_ranges,
        needed_bytes,
        recorded,
        notes,
    })
}

/// One chunk from its needed parts; pages it lists go to `page_table`.
fn build_chunk(
    mut ch: ChunkBuild,
    page_table: &mut Vec<PageLocation>,
) -> Result<ColumnChunk, String> {
    ch.pages.sort_by_key(|p| (p.0.start, p.1));
    let mut c = ColumnChunk {
        uncompressed_bytes: ch.uncompressed_bytes,
        ..ColumnChunk::default()
    };
    if let Some(r) = ch.offset_index {
        c.offset_index_offset = r.start;
        c.offset_index_len = u32::try_from(r.len()).map_err(|_| "offset index over 4 GiB")?;
    }
    if let Some(r) = ch.column_index {
        c.column_index_offset = r.start;
        c.column_index_len = u32::try_from(r.len()).map_err(|_| "column index over 4 GiB")?;
    }
    let first_page = ch.pages.first().map(|p| p.0);
    let data_start = match (ch.dictionary, first_page) {
        (Some(d), Some(p)) if d.end > p.start => {
            return Err(format!("dictionary {d} overlaps the first data page {p}"))
        }
        (Some(d), _) => {
            c.chunk_start = d.start;
            c.dictionary_len = u32::try_from(d.len()).map_err(|_| "dictionary over 4 GiB")?;
            d.end
        }
        (None, Some(p)) => {
            c.chunk_start = p.start;
            p.start
        }
        (None, None) => return Ok(c),
    };
    let data_end = ch.pages.iter().map(|p| p.0.end).max().unwrap_or(data_start);
    c.data_len = data_end.saturating_sub(data_start);
    // With an offset index the planner reads the listed pages; one page spanning the data is
    // the implicit single page.
    let single = ch.pages.len() == 1 && first_page == Some(ByteRange::new(data_start, data_end));
    if ch.offset_index.is_some() && !ch.pages.is_empty() && !single {
        c.pages_first = u32::try_from(page_table.len()).map_err(|_| "page table over 2^32")?;
        c.pages_count = u32::try_from(ch.pages.len()).map_err(|_| "over 2^32 pages")?;
        for (r, first_row) in &ch.pages {
            page_table.push(PageLocation {
                offset: r.start,
                first_row_index: *first_row,
                compressed_page_size: u32::try_from(r.len())
                    .map_err(|_| format!("page {r} over 4 GiB"))?,
            });
        }
    }
    Ok(c)
}

/// Re-runs the needed ranges of one run of `trace` under each of `arms` against `store`; the
/// recorded run is the first row.
pub fn what_if(
    trace: &ParsedTrace,
    store: &models::store::StoreSpec,
    arms: &[WhatIfArm],
    options: &WhatIfOptions,
) -> Result<WhatIfReport, WhatIfError> {
    let rebuilt = rebuild(trace, options.arm.as_deref())?;
    // What the recorded run ran with (its `# run` line), so that a what-if starts from the
    // recorded settings; a what-if's own `--set` comes after.
    let recorded = trace.runs.iter().find(|m| {
        m.case == rebuilt.run.case
            && m.arm == rebuilt.run.arm
            && m.replication == rebuilt.run.replication
            && m.query == rebuilt.run.query
    });
    let mut resolved_arms = Vec::new();
    let mut inherited_note = None;
    for a in arms {
        let name = a.name();
        let mut strategy =
            planner::Strategy::preset(&a.strategy).map_err(|e| WhatIfError::Strategy {
                arm: name.clone(),
                what: e.to_string(),
            })?;
        let inherited: Vec<(String, String)> = recorded
            .map(|m| {
                m.settings
                    .iter()
                    .filter(|(k, _)| strategy.honours(k))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        if !inherited.is_empty() && inherited_note.is_none() {
            inherited_note = Some(format!(
                "every what-if starts from the recorded run's settings it honours: {}",
                inherited
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ));
        }
        for (k, v) in inherited
            .iter()
            .chain(&a.shared_settings)
            .chain(&a.settings)
        {
            strategy.set(k, v).map_err(|e| WhatIfError::Strategy {
                arm: name.clone(),
                what: e.to_string(),
            })?;
        }
        resolved_arms.push(ResolvedArm {
            name,
            strategy_name: a.strategy.clone(),
            strategy,
        });
    }
    let query = ResolvedQuery {
        name: rebuilt.run.query.clone(),
        spec: rebuilt.query.clone(),
    };
    let files = rebuilt.table.files.len();
    let r = Resolved {
        name: format!("what-if {}", rebuilt.run.case),
        seed: options.seed,
        replications: 1,
        table: Arc::new(rebuilt.table),
        plans: Default::default(),
        queries: vec![query],
        store: store.clone(),
        page_cache: None,
        fs_cache: None,
        cpu: options.cpu.clone(),
        arms: resolved_arms,
        notes: Vec::new(),
    };
    let mut notes = rebuilt.notes;
    if let Some(n) = inherited_note {
        notes.insert(0, n);
    }
    if let Some(a) = arms.first().filter(|a| !a.shared_settings.is_empty()) {
        let s: Vec<String> = a
            .shared_settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        notes.insert(0, format!("settings of every what-if: {}", s.join(" ")));
    }
    notes.push(
        "needed bytes include footers; GETs count every attempt; last byte = end of the last GET"
            .into(),
    );
    let mut rows = vec![rebuilt.recorded];
    for arm in &r.arms {
        let out = drive::run_once(
            &r,
            arm,
            0,
            &r.queries[0],
            0,
            Recording {
                trace: true,
                timeline: false,
            },
        )
        .map_err(|e| WhatIfError::Run {
            arm: arm.name.clone(),
            what: e.to_string(),
        })?;
        let m = |metric: drive::metric::Metric| out.metrics.value(metric);
        let last_byte_ns = out
            .trace
            .iter()
            .filter(|t| t.served_by == drive::trace::ServedBy::Store)
            .map(|t| t.end_ns)
            .max()
            .unwrap_or(0);
        rows.push(WhatIfRow {
            name: arm.name.clone(),
            gets: m(drive::metric::Metric::Gets) as u64,
            bytes: m(drive::metric::Metric::StoreBytes) as u64,
            last_byte_ns,
            wall_ns: Some(m(drive::metric::Metric::WallTime) as u64),
        });
    }
    Ok(WhatIfReport {
        run: rebuilt.run,
        files,
        needed_ranges: rebuilt.needed_ranges,
        needed_bytes: rebuilt.needed_bytes,
        rows,
        notes,
    })
}

/// Groups `--what-if NAME` and `--set KEY=VALUE` arguments in command-line order: a `--set`
/// applies to the `--what-if` before it; `--set`s before the first `--what-if` apply to every
/// one (first, so that an arm's own settings win). Both `--flag value` and `--flag=value`.
pub fn what_if_arms(args: &[String]) -> Result<Vec<WhatIfArm>, String> {
    let mut global: Vec<(String, String)> = Vec::new();
    let mut arms: Vec<WhatIfArm> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a, None),
        };
        if flag != "--what-if" && flag != "--set" {
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))?
            }
        };
        if flag == "--what-if" {
            arms.push(WhatIfArm {
                strategy: value,
                shared_settings: global.clone(),
                settings: Vec::new(),
            });
        } else {
            let (k, v) = value
                .split_once('=')
                .ok_or_else(|| format!("--set `{value}`: expected SETTING=VALUE, e.g. input_format_parquet_coalesce_gap_bytes=2MiB"))?;
            let kv = (k.trim().to_string(), v.trim().to_string());
            match arms.last_mut() {
                Some(arm) => arm.settings.push(kv),
                None => global.push(kv),
            }
        }
        i += 1;
    }
    Ok(arms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn sets_follow_their_what_if_and_leading_sets_apply_to_all() {
        let arms = what_if_arms(&args(
            "sim replay t.csv --set max_threads=25 --what-if clickhouse-redesign \
             --what-if=clickhouse-base --set input_format_parquet_coalesce_gap_bytes=2MiB",
        ))
        .unwrap();
        assert_eq!(arms.len(), 2);
        assert_eq!(arms[0].strategy, "clickhouse-redesign");
        assert!(arms[0].settings.is_empty());
        for a in &arms {
            assert_eq!(a.shared_settings, vec![("max_threads".into(), "25".into())]);
        }
        assert_eq!(
            arms[1].settings,
            vec![(
                "input_format_parquet_coalesce_gap_bytes".into(),
                "2MiB".into()
            )]
        );
        assert_eq!(
            arms[1].name(),
            "clickhouse-base input_format_parquet_coalesce_gap_bytes=2MiB"
        );
        assert!(what_if_arms(&args("--what-if a --set nokey")).is_err());
        assert!(what_if_arms(&args("--what-if")).is_err());
        assert!(what_if_arms(&args("replay t.csv")).unwrap().is_empty());
    }

    #[allow(clippy::too_many_arguments)]
    fn needed(
        object: u64,
        offset: u64,
        len: u64,
        kind: NeededKind,
        rg: u32,
        col: u32,
        size: u64,
        footer: u32,
    ) -> TraceRecord {
        TraceRecord {
            line: 2,
            start_ns: 0,
            first_byte_latency_ns: None,
            total_ns: None,
            bytes: len,
            object_size_bytes: Some(size),
            object: object.to_string(),
            offset_bytes: Some(offset),
            status: 200,
            operation: tracefit::Operation::Get,
            served_by: ServedBy::Needed,
            sim: Some(tracefit::SimLabels {
                arm: "a".into(),
                ..Default::default()
            }),
            needed: Some(tracefit::NeededPart {
                kind,
                row_group: Some(rg),
                column: Some(col),
                row_group_rows: 1000,
                first_row: 0,
                uncompressed_bytes: 4 * len,
                object_size_bytes: size,
                footer_len_bytes: footer,
            }),
        }
    }

    fn parsed(records: Vec<TraceRecord>) -> ParsedTrace {
        ParsedTrace {
            runs: Vec::new(),
            source: "t".into(),
            format: tracefit::TraceFormat::SimTrace,
            lines_read: records.len() as u64,
            records,
            malformed_count: 0,
            malformed: Vec::new(),
        }
    }

    #[test]
    fn a_row_group_stated_with_two_row_counts_is_an_error_naming_both_lines() {
        let k = NeededKind::DataPages;
        let mut second = needed(9, 2000, 50, k, 3, 7, 5000, 92);
        second.line = 5;
        if let Some(n) = second.needed.as_mut() {
            n.row_group_rows = 999;
        }
        let trace = parsed(vec![needed(9, 1000, 100, k, 3, 40, 5000, 92), second]);
        let Err(e) = rebuild(&trace, None) else {
            panic!("two row counts were taken")
        };
        let e = e.to_string();
        assert!(e.contains("line 5") && e.contains("on line 2"), "{e}");
        let mut huge = needed(9, 1000, 100, k, 3, 40, 5000, 92);
        if let Some(n) = huge.needed.as_mut() {
            n.row_group_rows = limits::MAX_ROWS_PER_ROW_GROUP + 1;
        }
        let Err(e) = rebuild(&parsed(vec![huge]), None) else {
            panic!("a row count past the bound was taken")
        };
        let e = e.to_string();
        assert!(
            e.contains("line 2") && e.contains("MAX_ROWS_PER_ROW_GROUP"),
            "{e}"
        );
    }

    #[test]
    fn objects_row_groups_and_columns_are_renumbered_in_reading_order() {
        let k = NeededKind::DataPages;
        let trace = parsed(vec![
            needed(9, 0, 100, NeededKind::Footer, 0, 0, 5000, 92),
            needed(9, 1000, 100, k, 3, 40, 5000, 92),
            needed(9, 2000, 50, k, 3, 7, 5000, 92),
            needed(2, 10, 80, k, 0, 40, 3000, 200),
        ]);
        let r = rebuild(&trace, None).unwrap();
        let paths: Vec<&str> = r.table.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["9", "2"]);
        assert_eq!(r.table.schemas[0].columns, ["c7", "c40"]);
        assert_eq!(r.query.columns, [0, 1]);
        assert_eq!(r.query.files, [0, 1]);
        let f = &r.table.files[0];
        assert_eq!(
            (f.size_bytes, f.footer_len_bytes, f.row_groups.len()),
            (5000, 92, 1)
        );
        assert_eq!(
            f.row_groups[0].columns[1].data_pages(),
            ByteRange::new(1000, 1100)
        );
        // File 2 read no footer, but file 9 did: the metadata cache stays cold.
        assert!(!r.query.parquet_metadata_cache_warm);
        assert_eq!((r.needed_ranges, r.needed_bytes), (4, 330));
        // A range past the object's end is refused.
        let bad = parsed(vec![needed(1, 900, 200, k, 0, 0, 1000, 10)]);
        assert!(matches!(
            rebuild(&bad, None),
            Err(WhatIfError::Inconsistent { .. })
        ));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Any needed rows give a layout or an error, and a layout runs or fails cleanly.
        #[test]
        fn arbitrary_needed_rows_never_panic(
            rows in proptest::collection::vec(
                (0u64..3, 0u64..6000, 0u64..3000, 0usize..7, 0u32..3, 0u32..4),
                1..12,
            )
        ) {
            let kinds = [
                NeededKind::Footer, NeededKind::BloomHeader, NeededKind::BloomBlocks,
                NeededKind::Dictionary, NeededKind::ColumnIndex, NeededKind::OffsetIndex,
                NeededKind::DataPages,
            ];
            let records = rows
                .iter()
                .map(|(o, off, len, k, rg, c)| {
                    // One footer length per object, as a real trace has.
                    needed(*o, *off, *len, kinds[*k], *rg, *c, 10_000, 64 + 8 * *o as u32)
                })
                .collect();
            let trace = parsed(records);
            if rebuild(&trace, None).is_ok() {
                let spec = models::store::StoreSpec::preset("s3-standard").unwrap();
                for strategy in ["clickhouse-base", "clickhouse-redesign"] {
                    let arm = WhatIfArm {
                        strategy: strategy.into(),
                        shared_settings: Vec::new(),
                        settings: Vec::new(),
                    };
                    let _ = what_if(&trace, &spec, &[arm], &WhatIfOptions::default());
                }
            }
        }
    }

    #[test]
    fn a_chunk_with_pruned_pages_lists_the_needed_ones() {
        let mut table = Vec::new();
        let ch = ChunkBuild {
            dictionary: Some(ByteRange::new(100, 150)),
            pages: vec![
                (ByteRange::new(400, 500), 300),
                (ByteRange::new(150, 250), 0),
            ],
            offset_index: Some(ByteRange::new(900, 940)),
            column_index: None,
            uncompressed_bytes: 4000,
        };
        let c = build_chunk(ch, &mut table).unwrap();
        assert_eq!(c.dictionary_page(), Some(ByteRange::new(100, 150)));
        assert_eq!(c.data_pages(), ByteRange::new(150, 500));
        assert_eq!((c.pages_first, c.pages_count), (0, 2));
        assert_eq!(table[1].first_row_index, 300);
        assert_eq!(table[0].range(), ByteRange::new(150, 250));
        // One page spanning the data: the implicit page, no table entry.
        let mut t2 = Vec::new();
        let one = ChunkBuild {
            pages: vec![(ByteRange::new(10, 90), 0)],
            offset_index: Some(ByteRange::new(90, 99)),
            ..ChunkBuild::default()
        };
        let c = build_chunk(one, &mut t2).unwrap();
        assert_eq!((c.chunk_start, c.data_len, c.pages_count), (10, 80, 0));
        assert!(t2.is_empty());
        let overlapping = ChunkBuild {
            dictionary: Some(ByteRange::new(0, 20)),
            pages: vec![(ByteRange::new(10, 90), 0)],
            ..ChunkBuild::default()
        };
        assert!(build_chunk(overlapping, &mut t2).is_err());
    }
}
