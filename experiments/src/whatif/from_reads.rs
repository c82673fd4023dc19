//! A what-if replay of a real reader's run: the needed ranges are not in its log (a request
//! log says which bytes were fetched, not which the reader used), so they are derived from the
//! recorded layout of the files it read and the columns its query needed.
//!
//! For every data file of the layout that a successful GET of the log touched (object keys
//! matched to layout paths by suffix: `warehouse/db/t/data/x.parquet` is the layout's
//! `data/x.parquet`): the footer, when a GET covered any of it; and in every row group where a
//! GET covered a byte of one of the named columns' chunks, those columns' dictionary and data
//! pages, whole. A row group none of whose named chunks was fetched was pruned by the reader
//! (statistics, a page index, a bloom filter) and is left out, as the reader left it out. The
//! GETs of those files are the recorded run; requests on other objects (Iceberg metadata) and
//! other operations (HEAD, LIST) are in neither the recorded row nor the what-ifs, and a note
//! counts them. Times are rebased to the first kept GET. Not derived: page indexes and bloom
//! filters (a real reader's use of them is not in its log), row-level pruning inside a kept
//! row group.

use std::collections::BTreeMap;

use layout::{ByteRange, FileLayout, Table};
use tracefit::{NeededKind, NeededPart, Operation, ParsedTrace, ServedBy, SimLabels, TraceRecord};

use super::WhatIfError;

/// The arm name the derived run carries.
pub const RECORDED_ARM: &str = "recorded";

/// A run with needed ranges, derived from `trace`'s GETs on `table`'s files and the columns
/// named in `columns` (names of the table's columns), ready for [`super::what_if`]; and notes
/// on what was left out.
pub fn needed_from_reads(
    trace: &ParsedTrace,
    table: &Table,
    columns: &[String],
) -> Result<(ParsedTrace, Vec<String>), WhatIfError> {
    let wanted = column_indexes(table, columns)?;
    let files = match_objects(trace, table);
    let kept: Vec<&TraceRecord> = trace
        .records
        .iter()
        .filter(|r| r.operation == Operation::Get && files.contains_key(r.object.as_str()))
        .collect();
    if kept.is_empty() {
        return Err(WhatIfError::NoNeededRanges(format!(
            "no GET of {} is on a file of the layout (object keys are matched to layout paths by \
             suffix); is it the layout of the table the reader read?",
            trace.source
        )));
    }
    let t0 = kept.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let labels = SimLabels {
        case: trace.source.clone(),
        arm: RECORDED_ARM.into(),
        query: "from the log".into(),
        ..SimLabels::default()
    };
    let mut records = Vec::new();
    let mut fetched: BTreeMap<&str, Vec<ByteRange>> = BTreeMap::new();
    for r in &kept {
        let mut r2 = (*r).clone();
        r2.start_ns -= t0;
        r2.sim = Some(labels.clone());
        r2.served_by = ServedBy::Store;
        if r.is_success() {
            let Some(offset) = r.offset_bytes else {
                return Err(WhatIfError::NoNeededRanges(format!(
                    "{} line {}: a GET without its offset in the object: a what-if of a real \
                     reader's run needs a log that says where each GET's bytes lie (the test \
                     bed's request CSV, a `sim measure` trace), not an S3 access log",
                    trace.source, r.line
                )));
            };
            fetched
                .entry(r.object.as_str())
                .or_default()
                .push(ByteRange::with_len(offset, r.bytes));
        }
        records.push(r2);
    }
    let mut ranges = 0usize;
    let mut column_ranges = 0usize;
    for (object, got) in &fetched {
        let Some(file) = files.get(object).and_then(|i| table.files.get(*i)) else {
            continue;
        };
        for (part, range) in needed_parts(file, &wanted, got) {
            column_ranges += usize::from(part.kind != NeededKind::Footer);
            records.push(needed_record(object, file, part, range, &labels));
            ranges += 1;
        }
    }
    if column_ranges == 0 {
        // Said here: downstream it was "bad query: no columns selected", about columns given.
        return Err(WhatIfError::NoNeededRanges(format!(
            "no GET of {} touched the columns {} (at most footers): a what-if re-plans the data \
             a query read; are they the columns it read?",
            trace.source,
            columns.join(", ")
        )));
    }
    let left_out = trace.records.len() - kept.len();
    let mut notes = vec![format!(
        "needed ranges derived from the layout: {ranges} ranges of {} columns in {} files \
         (the GETs' row groups, whole chunks, footers)",
        wanted.len(),
        fetched.len()
    )];
    if left_out > 0 {
        notes.push(format!(
            "{left_out} requests of the log are not GETs of the layout's data files (Iceberg \
             metadata, HEAD, LIST): in no row"
        ));
    }
    let mut derived = trace.clone();
    derived.records = records;
    derived.runs.clear();
    Ok((derived, notes))
}

/// The table's column indexes of `names`; an unknown name is an error listing the columns.
fn column_indexes(table: &Table, names: &[String]) -> Result<Vec<u32>, WhatIfError> {
    let schema = table
        .columns()
        .map_err(|what| WhatIfError::NoNeededRanges(format!("the layout: {what}")))?;
    if names.is_empty() {
        return Err(WhatIfError::NoNeededRanges(
            "name the columns the query read (--columns a,b,c): a request log does not say \
             which of the bytes fetched the reader used"
                .into(),
        ));
    }
    names
        .iter()
        .map(|n| {
            schema
                .columns
                .iter()
                .position(|c| c == n)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    // A suggestion, and at most 20 names: a wide table listed all 437.
                    let hint = scenario::nearest(n, schema.columns.iter().map(String::as_str))
                        .map(|b| format!(" (did you mean `{b}`?)"))
                        .unwrap_or_default();
                    let shown: Vec<&str> =
                        schema.columns.iter().take(20).map(String::as_str).collect();
                    let more = schema.columns.len().saturating_sub(shown.len());
                    let more = if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    };
                    WhatIfError::NoNeededRanges(format!(
                        "the layout has no column `{n}`{hint}; its columns: {}{more}",
                        shown.join(", ")
                    ))
                })
        })
        .collect()
}

/// Object key -> file index, for the keys of `trace` that end with a layout path (at a `/`).
fn match_objects<'a>(trace: &'a ParsedTrace, table: &Table) -> BTreeMap<&'a str, usize> {
    let by_path: BTreeMap<&str, usize> = table
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| f.materialized)
        .map(|(i, f)| (f.path.as_str(), i))
        .collect();
    let mut out = BTreeMap::new();
    for r in &trace.records {
        let key = r.object.as_str();
        if out.contains_key(key) {
            continue;
        }
        // The key itself, then each suffix after a '/'.
        let found = std::iter::once(key)
            .chain(key.match_indices('/').map(|(i, _)| &key[i + 1..]))
            .find_map(|suffix| by_path.get(suffix).copied());
        if let Some(i) = found {
            out.insert(key, i);
        }
    }
    out
}

fn overlaps(got: &[ByteRange], range: ByteRange) -> bool {
    !range.is_empty() && got.iter().any(|g| g.overlaps(&range))
}

/// The needed parts of one file, in file order: the footer, then per kept row group the
/// wanted columns' dictionary and data pages.
fn needed_parts(
    file: &FileLayout,
    wanted: &[u32],
    got: &[ByteRange],
) -> Vec<(NeededPart, ByteRange)> {
    let part = |kind, row_group, column, rows, uncompressed| NeededPart {
        kind,
        row_group,
        column,
        row_group_rows: rows,
        first_row: 0,
        uncompressed_bytes: uncompressed,
        object_size_bytes: file.size_bytes,
        footer_len_bytes: file.footer_len_bytes,
    };
    let mut out = Vec::new();
    let footer = ByteRange::new(
        file.size_bytes
            .saturating_sub(u64::from(file.footer_len_bytes) + 8),
        file.size_bytes,
    );
    if overlaps(got, footer) {
        out.push((part(NeededKind::Footer, None, None, 0, 0), footer));
    }
    for (g, rg) in file.row_groups.iter().enumerate() {
        let chunks: Vec<(u32, &layout::ColumnChunk)> = wanted
            .iter()
            .filter_map(|c| rg.columns.get(*c as usize).map(|ch| (*c, ch)))
            .collect();
        if !chunks.iter().any(|(_, ch)| overlaps(got, ch.range())) {
            continue;
        }
        let g = g as u32;
        for (c, ch) in chunks {
            let at = |kind| part(kind, Some(g), Some(c), rg.num_rows, ch.uncompressed_bytes);
            if let Some(d) = ch.dictionary_page() {
                out.push((at(NeededKind::Dictionary), d));
            }
            if !ch.data_pages().is_empty() {
                out.push((at(NeededKind::DataPages), ch.data_pages()));
            }
        }
    }
    out
}

fn needed_record(
    object: &str,
    file: &FileLayout,
    part: NeededPart,
    range: ByteRange,
    labels: &SimLabels,
) -> TraceRecord {
    TraceRecord {
        line: 0,
        start_ns: 0,
        first_byte_latency_ns: None,
        total_ns: None,
        bytes: range.len(),
        object_size_bytes: Some(file.size_bytes),
        object: object.to_string(),
        offset_bytes: Some(range.start),
        status: 200,
        operation: Operation::Get,
        served_by: ServedBy::Needed,
        sim: Some(labels.clone()),
        needed: Some(part),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::{ColumnChunk, RowGroup, Schema};
    use tracefit::TraceFormat;

    /// One file of 1,000 bytes: two row groups of columns a, b, c (100 bytes each, from 0; the
    /// first chunk of each row group with a 20-byte dictionary), footer 92 + 8 bytes at 900.
    fn table() -> Table {
        let chunk = |start: u64, dict: u32| ColumnChunk {
            chunk_start: start,
            dictionary_len: dict,
            data_len: 100 - u64::from(dict),
            uncompressed_bytes: 400,
            ..ColumnChunk::default()
        };
        let rg = |base: u64| {
            RowGroup::new(
                50,
                vec![chunk(base, 20), chunk(base + 100, 0), chunk(base + 200, 0)],
            )
        };
        Table {
            schemas: vec![Schema {
                columns: vec!["a".into(), "b".into(), "c".into()],
            }],
            files: vec![FileLayout {
                path: "data/x.parquet".into(),
                materialized: true,
                outline: false,
                size_bytes: 1_000,
                footer_len_bytes: 92,
                schema: 0,
                row_groups: vec![rg(0), rg(300)],
                pages: Vec::new(),
            }],
            ..Table::default()
        }
    }

    fn get(object: &str, offset: Option<u64>, len: u64, start_ns: u64) -> TraceRecord {
        TraceRecord {
            line: 2,
            start_ns,
            first_byte_latency_ns: Some(10),
            total_ns: Some(20),
            bytes: len,
            object_size_bytes: Some(1_000),
            object: object.into(),
            offset_bytes: offset,
            status: 206,
            operation: Operation::Get,
            served_by: ServedBy::Store,
            sim: None,
            needed: None,
        }
    }

    fn trace(records: Vec<TraceRecord>) -> ParsedTrace {
        ParsedTrace {
            source: "bed.csv".into(),
            format: TraceFormat::RequestLog,
            lines_read: records.len() as u64,
            records,
            malformed_count: 0,
            malformed: Vec::new(),
            runs: Vec::new(),
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// Kind, row group, column, offset, length.
    type Part = (NeededKind, Option<u32>, Option<u32>, u64, u64);

    fn needed(t: &ParsedTrace) -> Vec<Part> {
        t.records
            .iter()
            .filter_map(|r| {
                let n = r.needed?;
                Some((n.kind, n.row_group, n.column, r.offset_bytes?, r.bytes))
            })
            .collect()
    }

    #[test]
    fn a_pruned_row_group_stays_out_and_a_tail_read_needs_only_the_footer() {
        let key = "warehouse/db/t/data/x.parquet";
        let t = trace(vec![
            get("warehouse/db/t/metadata/m.json", Some(0), 50, 100),
            get(key, Some(800), 200, 200), // the tail: footer, and c of row group 1 in part
            get(key, Some(0), 100, 300),   // a of row group 0 only
        ]);
        let (d, notes) = needed_from_reads(&t, &table(), &names(&["a", "b"])).unwrap();
        use NeededKind::*;
        // Row group 1's a and b were not fetched (the tail touched only c): pruned.
        assert_eq!(
            needed(&d),
            vec![
                (Footer, None, None, 900, 100),
                (Dictionary, Some(0), Some(0), 0, 20),
                (DataPages, Some(0), Some(0), 20, 80),
                (DataPages, Some(0), Some(1), 100, 100),
            ]
        );
        let store: Vec<u64> = d
            .records
            .iter()
            .filter(|r| r.served_by == ServedBy::Store)
            .map(|r| r.start_ns)
            .collect();
        assert_eq!(store, vec![0, 100], "the data GETs, rebased to the first");
        assert!(notes.iter().any(|n| n.contains("1 requests")), "{notes:?}");
        assert!(d
            .records
            .iter()
            .all(|r| r.sim.as_ref().is_some_and(|s| s.arm == RECORDED_ARM)));
    }

    #[test]
    fn what_it_cannot_derive_is_an_error_that_says_why() {
        let t = trace(vec![get("data/x.parquet", None, 100, 0)]);
        let e = needed_from_reads(&t, &table(), &names(&["a"])).unwrap_err();
        assert!(e.to_string().contains("offset"), "{e}");
        let t = trace(vec![get("data/x.parquet", Some(0), 100, 0)]);
        let e = needed_from_reads(&t, &table(), &names(&["z"])).unwrap_err();
        assert!(
            e.to_string()
                .contains("no column `z`; its columns: a, b, c"),
            "{e}"
        );
        // A near miss is suggested.
        let e = needed_from_reads(&t, &table(), &names(&["aa"])).unwrap_err();
        assert!(e.to_string().contains("did you mean `a`?"), "{e}");
        // Only the footer fetched: no column's bytes to re-plan (it failed later, as "bad
        // query: no columns selected", about columns that were given).
        let tail = trace(vec![get("data/x.parquet", Some(900), 100, 0)]);
        let e = needed_from_reads(&tail, &table(), &names(&["a"])).unwrap_err();
        assert!(e.to_string().contains("touched the columns a"), "{e}");
        let e = needed_from_reads(&t, &table(), &[]).unwrap_err();
        assert!(e.to_string().contains("--columns"), "{e}");
        let t = trace(vec![get("other/y.parquet", Some(0), 100, 0)]);
        let e = needed_from_reads(&t, &table(), &names(&["a"])).unwrap_err();
        assert!(e.to_string().contains("no GET"), "{e}");
        // `xdata/x.parquet` is not `data/x.parquet`: suffixes match at a '/'.
        let t = trace(vec![get("xdata/x.parquet", Some(0), 100, 0)]);
        assert!(needed_from_reads(&t, &table(), &names(&["a"])).is_err());
    }
}
