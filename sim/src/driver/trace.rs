//! The request trace `sim run --trace` writes: one row per HTTP request (or local cache read),
//! the same format `sim replay` and `sim fit` read.

use layout::ByteRange;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServedBy {
    Store,
    PageCache,
    FilesystemCache,
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
}

/// Rows of several runs with the run's labels in front.
pub fn to_csv(rows: &[(String, String, u32, String, Vec<TraceRow>)]) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // One format in both directions: the header `sim fit` and `sim replay` parse.
    w.write_record(tracefit::SIM_TRACE_HEADER.split(','))?;
    for (case, arm, rep, query, trace) in rows {
        for r in trace {
            let served = match r.served_by {
                ServedBy::Store => "store",
                ServedBy::PageCache => "page_cache",
                ServedBy::FilesystemCache => "filesystem_cache",
            };
            w.write_record([
                case.as_str(),
                arm.as_str(),
                &rep.to_string(),
                query.as_str(),
                &r.start_ns.to_string(),
                &r.first_byte_ns.to_string(),
                &r.end_ns.to_string(),
                &r.object.to_string(),
                &r.offset_bytes.to_string(),
                &r.length_bytes.to_string(),
                &r.status.to_string(),
                served,
                &r.attempt.to_string(),
                &r.hedge.to_string(),
            ])?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
