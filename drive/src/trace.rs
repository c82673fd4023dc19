//! The request trace `sim run --trace` writes: one row per HTTP request (or local cache read),
//! the same format `sim replay` and `sim fit` read; plus one row per byte range the reader
//! needed (`served_by = needed`), from which `sim replay --what-if` rebuilds the reads.

use layout::{ByteRange, FileLayout, Table};
use planner::plan::{plan_file, PlanInput};
use planner::{QuerySpec, ReadKind, Strategy};
use serde::Serialize;
use tracefit::{NeededKind, NeededPart};

/// Where a row's bytes came from; `Needed` rows are not requests but needed ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServedBy {
    Store,
    PageCache,
    FilesystemCache,
    /// A range the reader needed, before coalescing, and what it is.
    Needed(NeededPart),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRow {
    pub start_ns: u64,
    /// Time of the first response byte; equal to `end_ns` for local reads.
    pub first_byte_ns: u64,
    pub end_ns: u64,
    pub object: u64,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    /// HTTP status (200, 206, 503, 500), 0 for a timeout.
    pub status: u16,
    pub served_by: ServedBy,
    pub attempt: u32,
    pub hedge: bool,
}

impl TraceRow {
    pub fn local(
        start: u64,
        first: u64,
        end: u64,
        object: u64,
        range: ByteRange,
        by: ServedBy,
        status: u16,
    ) -> Self {
        TraceRow {
            start_ns: start,
            first_byte_ns: first,
            end_ns: end,
            object,
            offset_bytes: range.start,
            length_bytes: range.len(),
            status,
            served_by: by,
            attempt: 0,
            hedge: false,
        }
    }

    pub fn from_attempt(a: &models::store::Attempt, object: u64, range: ByteRange) -> Self {
        TraceRow {
            start_ns: a.start_ns,
            first_byte_ns: a.first_byte_ns.unwrap_or(a.end_ns),
            end_ns: a.end_ns,
            object,
            offset_bytes: range.start,
            length_bytes: range.len(),
            status: a.status,
            served_by: ServedBy::Store,
            attempt: a.attempt,
            hedge: a.hedge,
        }
    }

    /// A needed range: no times (written empty), status 200.
    pub fn needed(object: u64, range: ByteRange, part: NeededPart) -> Self {
        TraceRow {
            start_ns: 0,
            first_byte_ns: 0,
            end_ns: 0,
            object,
            offset_bytes: range.start,
            length_bytes: range.len(),
            status: 200,
            served_by: ServedBy::Needed(part),
            attempt: 0,
            hedge: false,
        }
    }
}

fn needed_kind(k: ReadKind) -> Option<NeededKind> {
    Some(match k {
        ReadKind::Footer => NeededKind::Footer,
        ReadKind::BloomHeader => NeededKind::BloomHeader,
        ReadKind::BloomBlocks => NeededKind::BloomBlocks,
        ReadKind::Dictionary => NeededKind::Dictionary,
        ReadKind::ColumnIndex => NeededKind::ColumnIndex,
        ReadKind::OffsetIndex => NeededKind::OffsetIndex,
        ReadKind::DataPages => NeededKind::DataPages,
        ReadKind::IcebergMetadata => return None,
    })
}

/// One part of a column chunk a plan entry can come from.
struct Part {
    range: ByteRange,
    kind: NeededKind,
    row_group: u32,
    column: u32,
    first_row: u64,
}

/// Every part of the chunks of `columns` in `row_groups` of `file`, sorted by offset.
fn chunk_parts(
    file: &FileLayout,
    row_groups: &[u32],
    columns: &[u32],
    use_offset_index: bool,
) -> Vec<Part> {
    let mut parts = Vec::new();
    for &g in row_groups {
        let Some(rg) = file.row_groups.get(g as usize) else {
            continue;
        };
        for &c in columns {
            let Some(ch) = rg.columns.get(c as usize) else {
                continue;
            };
            let mut push = |range: ByteRange, kind: NeededKind, first_row: u64| {
                parts.push(Part {
                    range,
                    kind,
                    row_group: g,
                    column: c,
                    first_row,
                })
            };
            if let Some(r) = ch.dictionary_page() {
                push(r, NeededKind::Dictionary, 0);
            }
            match ch.pages(file).filter(|_| use_offset_index) {
                Some(pages) => {
                    for p in pages.iter() {
                        push(p.range(), NeededKind::DataPages, p.first_row_index);
                    }
                }
                None => push(ch.data_pages(), NeededKind::DataPages, 0),
            }
            if let Some(r) = ch.offset_index() {
                push(r, NeededKind::OffsetIndex, 0);
            }
            if let Some(r) = ch.column_index() {
                push(r, NeededKind::ColumnIndex, 0);
            }
            if let Some(b) = ch.bloom_filter() {
                let len = b.len.map_or(u64::MAX, u64::from);
                let r = ByteRange::with_len(b.offset, len);
                push(r, NeededKind::BloomHeader, 0);
                push(r, NeededKind::BloomBlocks, 0);
            }
        }
    }
    parts.sort_by_key(|p| (p.range.start, p.kind));
    parts
}

/// The byte ranges `query` needs under `strategy`, one row each, before any coalescing: each
/// file's footer (unless the metadata cache is warm), then the planner's own registered ranges
/// (`planner::plan::plan_file`, the function the reader plans with, so pruning decisions are
/// the reader's), each tagged with its row group, column, kind and the layout facts a what-if
/// replay needs to rebuild it. Iceberg metadata reads are not included.
pub fn needed_rows(table: &Table, query: &QuerySpec, strategy: &Strategy) -> Vec<TraceRow> {
    let use_offset_index = strategy
        .settings()
        .iter()
        .find(|s| s.0 == "input_format_parquet_use_offset_index")
        .is_none_or(|s| s.1 == "true");
    let main_columns: Vec<u32> = query
        .columns
        .iter()
        .copied()
        .filter(|c| !query.prewhere_columns.contains(c))
        .collect();
    let mut part_columns: Vec<u32> = query
        .columns
        .iter()
        .chain(&query.prewhere_columns)
        .chain(&query.column_index_columns)
        .chain(&query.bloom_columns)
        .copied()
        .collect();
    part_columns.sort_unstable();
    part_columns.dedup();
    let mut rows = Vec::new();
    for &f in &query.files {
        let Some(file) = table.files.get(f as usize) else {
            continue;
        };
        let object = f as u64;
        let part = |kind, row_group, column, rg_rows, first_row, uncompressed| NeededPart {
            kind,
            row_group,
            column,
            row_group_rows: rg_rows,
            first_row,
            uncompressed_bytes: uncompressed,
            object_size_bytes: file.size_bytes,
            footer_len_bytes: file.footer_len_bytes,
        };
        if !query.parquet_metadata_cache_warm && file.size_bytes > 0 {
            rows.push(TraceRow::needed(
                object,
                file.footer_range(),
                part(NeededKind::Footer, None, None, 0, 0, 0),
            ));
        }
        let input = PlanInput {
            file_index: f,
            row_groups: 0..file.row_groups.len() as u32,
            main_columns: &main_columns,
            prewhere_columns: &query.prewhere_columns,
            column_index_columns: &query.column_index_columns,
            bloom_columns: &query.bloom_columns,
            bloom_probes: query.bloom_probes,
            row_group_keep_fraction: query.row_group_keep_fraction,
            page_keep_fraction: query.page_keep_fraction,
            prewhere_selectivity: query.prewhere_selectivity,
            bloom_drop_fraction: query.bloom_drop_fraction,
            seed: query.seed,
            use_offset_index,
            subgroups: true,
            planned: false,
        };
        let plan = plan_file(file, &input);
        let surviving: Vec<u32> = plan.row_groups.iter().map(|g| g.row_group).collect();
        let parts = chunk_parts(file, &surviving, &part_columns, use_offset_index);
        for e in &plan.entries {
            let Some(kind) = needed_kind(e.kind) else {
                continue;
            };
            // Parts are sorted by start; the one holding the entry starts at or before it.
            let upto = parts.partition_point(|p| p.range.start <= e.range.start);
            let found = parts[..upto]
                .iter()
                .rev()
                .take(64)
                .find(|p| p.kind == kind && p.range.contains(&e.range))
                .or_else(|| {
                    parts
                        .iter()
                        .find(|p| p.kind == kind && p.range.overlaps(&e.range))
                });
            let Some(p) = found else { continue };
            let rg = file.row_groups.get(p.row_group as usize);
            let uncompressed = rg
                .and_then(|g| g.columns.get(p.column as usize))
                .map_or(0, |c| c.uncompressed_bytes);
            rows.push(TraceRow::needed(
                object,
                e.range,
                part(
                    kind,
                    Some(p.row_group),
                    Some(p.column),
                    rg.map_or(0, |g| g.num_rows),
                    if e.range.start == p.range.start {
                        p.first_row
                    } else {
                        0
                    },
                    uncompressed,
                ),
            ));
        }
    }
    rows
}

/// Rows of several runs with the run's labels in front.
pub fn to_csv(rows: &[(String, String, u32, String, Vec<TraceRow>)]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // One format in both directions: the header `sim fit` and `sim replay` parse.
    w.write_record(tracefit::SIM_TRACE_HEADER.split(','))?;
    for (case, arm, rep, query, trace) in rows {
        for r in trace {
            let (served, needed) = match &r.served_by {
                ServedBy::Store => ("store", None),
                ServedBy::PageCache => ("page_cache", None),
                ServedBy::FilesystemCache => ("filesystem_cache", None),
                ServedBy::Needed(p) => ("needed", Some(p)),
            };
            // Needed rows have no times.
            let time = |t: u64| {
                if needed.is_some() {
                    String::new()
                } else {
                    t.to_string()
                }
            };
            let mut record = vec![
                case.clone(),
                arm.clone(),
                rep.to_string(),
                query.clone(),
                r.start_ns.to_string(),
                time(r.first_byte_ns),
                time(r.end_ns),
                r.object.to_string(),
                r.offset_bytes.to_string(),
                r.length_bytes.to_string(),
                r.status.to_string(),
                served.to_string(),
                r.attempt.to_string(),
                r.hedge.to_string(),
            ];
            record.extend(tracefit::needed_columns(needed));
            w.write_record(&record)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
