//! The request trace `sim run --trace` writes: one row per HTTP request (or local cache read),
//! the same format `sim replay` and `sim fit` read; plus one row per byte range the reader
//! needed (`served_by = needed`), from which `sim replay --what-if` rebuilds the reads.

use layout::{ByteRange, Table};
use planner::{NeededRange, ReadKind};
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
    /// GET, HEAD or LIST.
    pub method: models::store::Method,
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
            method: models::store::Method::Get,
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
            method: a.method,
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
            method: models::store::Method::Get,
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
        ReadKind::IcebergMetadata | ReadKind::Head | ReadKind::List => return None,
    })
}

/// The ranges the reader needed (`planner::Reader::take_needed`), one trace row each, with the
/// layout facts a what-if replay needs to rebuild the file. Iceberg metadata reads are not
/// included.
pub fn needed_rows(table: &Table, needed: &[NeededRange]) -> Vec<TraceRow> {
    needed
        .iter()
        .filter_map(|n| {
            let kind = needed_kind(n.kind)?;
            let file = table.files.get(n.file as usize)?;
            Some(TraceRow::needed(
                n.file as u64,
                n.range,
                NeededPart {
                    kind,
                    row_group: n.row_group,
                    column: n.column,
                    row_group_rows: n.row_group_rows,
                    first_row: n.first_row,
                    uncompressed_bytes: n.uncompressed_bytes,
                    object_size_bytes: file.size_bytes,
                    footer_len_bytes: file.footer_len_bytes,
                },
            ))
        })
        .collect()
}

/// Rows of several runs with the run's labels in front, after one `# run ...` line per run
/// saying what it ran with (`tracefit::RunMeta`).
pub fn to_csv(
    rows: &[(String, String, u32, String, Vec<TraceRow>)],
    runs: &[tracefit::RunMeta],
) -> Result<String, csv::Error> {
    let mut head = String::new();
    for m in runs {
        head.push_str(&m.line());
        head.push('\n');
    }
    let mut w = csv::Writer::from_writer(head.into_bytes());
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
            record.push(
                match r.method {
                    models::store::Method::Get => "GET",
                    models::store::Method::Head => "HEAD",
                    models::store::Method::List => "LIST",
                }
                .to_string(),
            );
            w.write_record(&record)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
