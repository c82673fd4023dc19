//! The request trace `sim run --trace` writes (CSV, one row per request), read and written, so
//! that a parsed trace (from either format) can be written back and fed to `sim replay`.
//!
//! Columns: `case,arm,replication,query,start_ns,first_byte_ns,end_ns,object,offset_bytes,
//! length_bytes,status,served_by,attempt,hedge`. Times are absolute (virtual) nanoseconds. The
//! parser maps columns by header name, so order does not matter and unknown columns are ignored;
//! `start_ns`, `end_ns`, `first_byte_ns`, `object`, `length_bytes` and `status` are required.
//! An empty `first_byte_ns` or `end_ns` means unknown (the writer emits that for access-log
//! records without Turn-Around Time).
//!
//! Needed ranges. Besides requests, `sim run --trace` writes one row per byte range the reader
//! needed (before coalescing), with `served_by = needed`, `start_ns = 0`, empty times and
//! status 200, and eight more columns: `kind` (footer, bloom_header, bloom_blocks, dictionary,
//! column_index, offset_index, data_pages), `row_group`, `column`, `row_group_rows`,
//! `first_row`, `uncompressed_bytes`, `object_size_bytes`, `footer_len_bytes` (empty on request
//! rows). Traces written before these columns existed parse as before; fitting and replay
//! ignore needed rows.

use std::io::Write;

use crate::error::{LineError, TraceError};
use crate::record::{NeededKind, NeededPart, Operation, ServedBy, SimLabels, TraceRecord};

/// The header line the simulator writes (and [`write_sim_trace`] writes).
pub const SIM_TRACE_HEADER: &str =
    "case,arm,replication,query,start_ns,first_byte_ns,end_ns,object,offset_bytes,length_bytes,status,served_by,attempt,hedge,kind,row_group,column,row_group_rows,first_row,uncompressed_bytes,object_size_bytes,footer_len_bytes,method";

/// Column positions of a sim trace, from its header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimColumns {
    case: Option<usize>,
    arm: Option<usize>,
    replication: Option<usize>,
    query: Option<usize>,
    start_ns: usize,
    first_byte_ns: usize,
    end_ns: usize,
    object: usize,
    offset_bytes: Option<usize>,
    length_bytes: usize,
    status: usize,
    served_by: Option<usize>,
    attempt: Option<usize>,
    hedge: Option<usize>,
    kind: Option<usize>,
    row_group: Option<usize>,
    column: Option<usize>,
    row_group_rows: Option<usize>,
    first_row: Option<usize>,
    uncompressed_bytes: Option<usize>,
    object_size_bytes: Option<usize>,
    footer_len_bytes: Option<usize>,
    method: Option<usize>,
}

impl SimColumns {
    /// Reads the header line; fails if a required column is missing.
    pub fn from_header(header: &str) -> Result<SimColumns, TraceError> {
        let names = split_csv(header).unwrap_or_default();
        check_unique(&names)?;
        let find = |name: &str| names.iter().position(|n| n.trim() == name);
        let need = |name: &'static str| {
            find(name).ok_or(TraceError::MissingColumn {
                column: name,
                format: "sim trace",
                expected: SIM_TRACE_HEADER,
            })
        };
        Ok(SimColumns {
            case: find("case"),
            arm: find("arm"),
            replication: find("replication"),
            query: find("query"),
            start_ns: need("start_ns")?,
            first_byte_ns: need("first_byte_ns")?,
            end_ns: need("end_ns")?,
            object: need("object")?,
            offset_bytes: find("offset_bytes"),
            length_bytes: need("length_bytes")?,
            status: need("status")?,
            served_by: find("served_by"),
            attempt: find("attempt"),
            hedge: find("hedge"),
            kind: find("kind"),
            row_group: find("row_group"),
            column: find("column"),
            row_group_rows: find("row_group_rows"),
            first_row: find("first_row"),
            uncompressed_bytes: find("uncompressed_bytes"),
            object_size_bytes: find("object_size_bytes"),
            footer_len_bytes: find("footer_len_bytes"),
            method: find("method"),
        })
    }

    /// Whether a line looks like a sim trace header (used to detect the format): it names
    /// `start_ns` among comma-separated names, so that a header missing another required
    /// column is reported as such, not read as an access log.
    pub fn looks_like_header(line: &str) -> bool {
        line.contains(',') && line.split(',').any(|n| n.trim() == "start_ns")
    }
}

/// A header naming a column twice is refused (the first one was used, silently).
pub(crate) fn check_unique(names: &[String]) -> Result<(), TraceError> {
    for (i, n) in names.iter().enumerate() {
        let n = n.trim();
        if !n.is_empty() && names[..i].iter().any(|m| m.trim() == n) {
            return Err(TraceError::DuplicateColumn {
                column: n.to_string(),
            });
        }
    }
    Ok(())
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines). Text after a closing quote
/// is kept (lenient); an unclosed quote is an error (a cut line).
pub fn split_csv(line: &str) -> Result<Vec<String>, LineError> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut out = Vec::with_capacity(14);
    let mut field = String::new();
    let mut in_quotes = false;
    let mut at_field_start = true;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
        } else if c == ',' {
            out.push(std::mem::take(&mut field));
            at_field_start = true;
            continue;
        } else if c == '"' && at_field_start {
            in_quotes = true;
        } else {
            field.push(c);
        }
        at_field_start = false;
    }
    if in_quotes {
        return Err(LineError::Unterminated {
            field: out.len() + 1,
            name: "CSV field",
            open: '"',
            close: '"',
        });
    }
    out.push(field);
    Ok(out)
}

/// `name` is the column's header name as written (for a request log, its own header's), so
/// the message names the column the line has, not another format's.
fn bad(index: usize, name: &'static str, value: &str, expected: &'static str) -> LineError {
    let mut shown: String = value.chars().take(60).collect();
    if shown.len() < value.len() {
        shown.push_str("...");
    }
    LineError::BadField {
        field: index + 1,
        name,
        value: shown,
        expected,
    }
}

pub(crate) fn text(fields: &[String], index: Option<usize>) -> &str {
    index
        .and_then(|i| fields.get(i))
        .map(|s| s.as_str())
        .unwrap_or("")
}

pub(crate) fn required_u64(
    fields: &[String],
    index: usize,
    name: &'static str,
) -> Result<u64, LineError> {
    let value = text(fields, Some(index));
    value
        .trim()
        .parse()
        .map_err(|_| bad(index, name, value, "a non-negative integer"))
}

pub(crate) fn optional_u64(
    fields: &[String],
    index: Option<usize>,
    name: &'static str,
) -> Result<Option<u64>, LineError> {
    let value = text(fields, index).trim();
    if value.is_empty() {
        return Ok(None);
    }
    value.parse().map(Some).map_err(|_| {
        bad(
            index.unwrap_or(0),
            name,
            value,
            "a non-negative integer or nothing",
        )
    })
}

const SIZE: &str = "a byte count up to 5 TiB (S3's largest object)";

/// A byte count or offset, bounded by `MAX_OBJECT_BYTES`: an impossible size was fitted into
/// a model and replayed until the replay gave up.
pub(crate) fn optional_size(
    fields: &[String],
    index: Option<usize>,
    name: &'static str,
) -> Result<Option<u64>, LineError> {
    match optional_u64(fields, index, name)? {
        Some(v) if v > limits::MAX_OBJECT_BYTES => Err(bad(
            index.unwrap_or(0),
            name,
            text(fields, index).trim(),
            SIZE,
        )),
        other => Ok(other),
    }
}

/// [`optional_size`] of a column that must have a value.
pub(crate) fn required_size(
    fields: &[String],
    index: usize,
    name: &'static str,
) -> Result<u64, LineError> {
    let v = required_u64(fields, index, name)?;
    if v > limits::MAX_OBJECT_BYTES {
        return Err(bad(index, name, text(fields, Some(index)).trim(), SIZE));
    }
    Ok(v)
}

/// Parses one data row given the header's columns.
pub fn parse_row(line: &str, columns: &SimColumns, line_no: u64) -> Result<TraceRecord, LineError> {
    let fields = split_csv(line)?;
    let last_required = [
        columns.start_ns,
        columns.first_byte_ns,
        columns.end_ns,
        columns.object,
        columns.length_bytes,
        columns.status,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    if fields.len() <= last_required {
        return Err(LineError::TooFewFields {
            found: fields.len(),
            needed: last_required + 1,
            missing: "a required column",
        });
    }
    let start_ns = required_u64(&fields, columns.start_ns, "start_ns")?;
    let first_byte_ns = optional_u64(&fields, Some(columns.first_byte_ns), "first_byte_ns")?;
    let end_ns = optional_u64(&fields, Some(columns.end_ns), "end_ns")?;
    let bytes = required_size(&fields, columns.length_bytes, "length_bytes")?;
    let status_text = text(&fields, Some(columns.status));
    let status: u16 = match status_text.trim().parse::<u16>() {
        Ok(s) if s == 0 || (100..=599).contains(&s) => s,
        _ => {
            return Err(bad(
                columns.status,
                "status",
                status_text,
                "an HTTP status (100-599) or 0 for a timeout",
            ))
        }
    };
    let since_start = |t: Option<u64>, name: &str| -> Result<Option<u64>, LineError> {
        match t {
            None => Ok(None),
            Some(t) => t
                .checked_sub(start_ns)
                .map(Some)
                .ok_or_else(|| LineError::Inconsistent {
                    what: format!("{name} ({t}) is before start_ns ({start_ns})"),
                }),
        }
    };
    let first_byte_latency_ns = since_start(first_byte_ns, "first_byte_ns")?;
    let total_ns = since_start(end_ns, "end_ns")?;
    if let (Some(f), Some(e)) = (first_byte_ns, end_ns) {
        if f > e {
            return Err(LineError::Inconsistent {
                what: format!("first_byte_ns ({f}) is after end_ns ({e})"),
            });
        }
    }
    let served_text = text(&fields, columns.served_by).trim();
    let served_by = match served_text {
        "" | "store" => ServedBy::Store,
        "page_cache" => ServedBy::PageCache,
        "filesystem_cache" => ServedBy::FilesystemCache,
        "needed" => ServedBy::Needed,
        other => {
            return Err(bad(
                columns.served_by.unwrap_or(0),
                "served_by",
                other,
                "store, page_cache, filesystem_cache or needed",
            ))
        }
    };
    let needed = if served_by == ServedBy::Needed {
        Some(needed_part(&fields, columns)?)
    } else {
        None
    };
    let hedge_text = text(&fields, columns.hedge).trim();
    let hedge = match hedge_text {
        "" | "false" | "0" => false,
        "true" | "1" => true,
        other => {
            return Err(bad(
                columns.hedge.unwrap_or(0),
                "hedge",
                other,
                "true or false",
            ))
        }
    };
    let replication = optional_u64(&fields, columns.replication, "replication")?.unwrap_or(0);
    let attempt = optional_u64(&fields, columns.attempt, "attempt")?.unwrap_or(0);
    let sim = SimLabels {
        case: text(&fields, columns.case).to_string(),
        arm: text(&fields, columns.arm).to_string(),
        replication: u32::try_from(replication).map_err(|_| {
            bad(
                columns.replication.unwrap_or(0),
                "replication",
                &replication.to_string(),
                "a u32",
            )
        })?,
        query: text(&fields, columns.query).to_string(),
        attempt: u32::try_from(attempt).map_err(|_| {
            bad(
                columns.attempt.unwrap_or(0),
                "attempt",
                &attempt.to_string(),
                "a u32",
            )
        })?,
        hedge,
    };
    Ok(TraceRecord {
        line: line_no,
        start_ns,
        first_byte_latency_ns,
        total_ns,
        bytes,
        object_size_bytes: match needed {
            Some(n) => Some(n.object_size_bytes),
            None => optional_size(&fields, columns.object_size_bytes, "object_size_bytes")?,
        },
        object: text(&fields, Some(columns.object)).to_string(),
        offset_bytes: optional_size(&fields, columns.offset_bytes, "offset_bytes")?,
        status,
        operation: operation(&fields, columns)?,
        served_by,
        sim: Some(sim),
        needed,
    })
}

/// The `method` column: GET, HEAD or LIST, as the simulator writes it; empty (or no column,
/// a trace older than it) is GET. Anything else is refused: DELETE and `garbage` were read as
/// GETs and replayed, even with `--strict`.
fn operation(fields: &[String], columns: &SimColumns) -> Result<Operation, LineError> {
    match text(fields, columns.method).trim() {
        "" | "GET" => Ok(Operation::Get),
        "HEAD" => Ok(Operation::Head),
        "LIST" => Ok(Operation::Other("REST.GET.BUCKET".into())),
        other => Err(bad(
            columns.method.unwrap_or(0),
            "method",
            other,
            "GET, HEAD, LIST or nothing (GET)",
        )),
    }
}

fn optional_u32(
    fields: &[String],
    index: Option<usize>,
    name: &'static str,
) -> Result<Option<u32>, LineError> {
    match optional_u64(fields, index, name)? {
        None => Ok(None),
        Some(v) => u32::try_from(v)
            .map(Some)
            .map_err(|_| bad(index.unwrap_or(0), name, &v.to_string(), "a u32")),
    }
}

/// The columns of a `served_by = needed` row: `kind`, `object_size_bytes` and
/// `footer_len_bytes` always; `row_group` and `column` for every kind but the footer.
fn needed_part(fields: &[String], columns: &SimColumns) -> Result<NeededPart, LineError> {
    let kind_text = text(fields, columns.kind).trim();
    let kind = NeededKind::from_name(kind_text).ok_or_else(|| {
        bad(
            columns.kind.unwrap_or(0),
            "kind",
            kind_text,
            "footer, bloom_header, bloom_blocks, dictionary, column_index, offset_index or data_pages",
        )
    })?;
    let required = |index: Option<usize>, name: &'static str| -> Result<u64, LineError> {
        optional_u64(fields, index, name)?.ok_or_else(|| {
            bad(
                index.unwrap_or(0),
                name,
                "",
                "a non-negative integer on a needed row",
            )
        })
    };
    let row_group = optional_u32(fields, columns.row_group, "row_group")?;
    let column = optional_u32(fields, columns.column, "column")?;
    if kind.is_per_chunk() {
        if row_group.is_none() {
            return Err(bad(
                columns.row_group.unwrap_or(0),
                "row_group",
                "",
                "a row-group index on a needed row of a column chunk",
            ));
        }
        if column.is_none() {
            return Err(bad(
                columns.column.unwrap_or(0),
                "column",
                "",
                "a column index on a needed row of a column chunk",
            ));
        }
    }
    let footer_len = required(columns.footer_len_bytes, "footer_len_bytes")?;
    Ok(NeededPart {
        kind,
        row_group,
        column,
        row_group_rows: optional_u64(fields, columns.row_group_rows, "row_group_rows")?
            .unwrap_or(0),
        first_row: optional_u64(fields, columns.first_row, "first_row")?.unwrap_or(0),
        uncompressed_bytes: optional_u64(fields, columns.uncompressed_bytes, "uncompressed_bytes")?
            .unwrap_or(0),
        object_size_bytes: required(columns.object_size_bytes, "object_size_bytes")?,
        footer_len_bytes: u32::try_from(footer_len).map_err(|_| {
            bad(
                columns.footer_len_bytes.unwrap_or(0),
                "footer_len_bytes",
                &footer_len.to_string(),
                "a u32",
            )
        })?,
    })
}

/// The eight trailing columns of a row: what a needed range is, or empty for a request.
pub fn needed_columns(needed: Option<&NeededPart>) -> [String; 8] {
    match needed {
        None => Default::default(),
        Some(n) => {
            let opt = |v: Option<u32>| v.map(|v| v.to_string()).unwrap_or_default();
            [
                n.kind.as_str().to_string(),
                opt(n.row_group),
                opt(n.column),
                n.row_group_rows.to_string(),
                n.first_row.to_string(),
                n.uncompressed_bytes.to_string(),
                n.object_size_bytes.to_string(),
                n.footer_len_bytes.to_string(),
            ]
        }
    }
}

fn quote(field: &str) -> std::borrow::Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        std::borrow::Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(field)
    }
}

/// Writes records in the sim trace format, header first. Only GETs are written (the replays
/// read GETs); returns the number of rows written. Records from an
/// access log get empty labels and `offset_bytes`; their object size goes to
/// `object_size_bytes`. Needed rows keep their eight trailing columns.
pub fn write_sim_trace<W: Write>(records: &[TraceRecord], out: W) -> Result<usize, TraceError> {
    let mut out = std::io::BufWriter::new(out);
    writeln!(out, "{SIM_TRACE_HEADER}")?;
    let default_labels = SimLabels::default();
    let mut written = 0;
    for r in records.iter().filter(|r| r.operation == Operation::Get) {
        let labels = r.sim.as_ref().unwrap_or(&default_labels);
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let first = r
            .first_byte_latency_ns
            .map(|l| r.start_ns.saturating_add(l));
        let end = r.total_ns.map(|t| r.start_ns.saturating_add(t));
        let mut extra = needed_columns(r.needed.as_ref());
        if r.needed.is_none() {
            extra[6] = opt(r.object_size_bytes);
        }
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},GET",
            quote(&labels.case),
            quote(&labels.arm),
            labels.replication,
            quote(&labels.query),
            r.start_ns,
            opt(first),
            opt(end),
            quote(&r.object),
            opt(r.offset_bytes),
            r.bytes,
            r.status,
            r.served_by.as_str(),
            labels.attempt,
            labels.hedge,
            extra.join(","),
        )?;
        written += 1;
    }
    out.flush()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> SimColumns {
        SimColumns::from_header(SIM_TRACE_HEADER).unwrap()
    }

    #[test]
    fn sizes_past_the_largest_object_are_refused() {
        let row = |len: &str, off: &str| {
            format!("c,a,0,q,1000,31000,51000,17,{off},{len},206,store,0,false")
        };
        let e = parse_row(&row("18446744073709551615", "0"), &columns(), 2).unwrap_err();
        assert!(
            e.to_string().contains("(length_bytes)") && e.to_string().contains("5 TiB"),
            "{e}"
        );
        let e = parse_row(&row("10", "6000000000000"), &columns(), 2).unwrap_err();
        assert!(e.to_string().contains("(offset_bytes)"), "{e}");
        assert!(parse_row(&row("5497558138880", "0"), &columns(), 2).is_ok());
    }

    /// The audit's `method.csv`: DELETE and `garbage` were read as GETs, even with `--strict`.
    #[test]
    fn an_unknown_method_is_refused_and_the_known_ones_read() {
        let row =
            |m: &str| format!("c,a,0,q,0,30000000,31000000,1,0,100,206,store,1,false,,,,,,,,,{m}");
        for m in ["DELETE", "garbage", "get"] {
            let e = parse_row(&row(m), &columns(), 2).unwrap_err().to_string();
            assert!(
                e.contains("(method)") && e.contains(m) && e.contains("GET, HEAD, LIST"),
                "{e}"
            );
        }
        let op = |m: &str| parse_row(&row(m), &columns(), 2).unwrap().operation;
        assert_eq!(op("GET"), Operation::Get);
        assert_eq!(op(""), Operation::Get);
        assert_eq!(op("HEAD"), Operation::Head);
        assert_eq!(op("LIST"), Operation::Other("REST.GET.BUCKET".into()));
    }

    #[test]
    fn parses_a_row_as_the_simulator_writes_it() {
        let row = "many-small,clickhouse-base,2,q1,1000,31000,51000,17,4096,65536,206,store,1,true";
        let r = parse_row(row, &columns(), 2).unwrap();
        assert_eq!(r.start_ns, 1000);
        assert_eq!(r.first_byte_latency_ns, Some(30_000));
        assert_eq!(r.total_ns, Some(50_000));
        assert_eq!(r.object, "17");
        assert_eq!(r.offset_bytes, Some(4096));
        assert_eq!(r.bytes, 65536);
        assert_eq!(r.status, 206);
        assert_eq!(r.served_by, ServedBy::Store);
        let sim = r.sim.unwrap();
        assert_eq!(
            (
                sim.case.as_str(),
                sim.arm.as_str(),
                sim.replication,
                sim.query.as_str()
            ),
            ("many-small", "clickhouse-base", 2, "q1")
        );
        assert_eq!((sim.attempt, sim.hedge), (1, true));
    }

    #[test]
    fn columns_are_found_by_name_in_any_order() {
        let cols = SimColumns::from_header(
            "status,object,length_bytes,end_ns,first_byte_ns,start_ns,extra",
        )
        .unwrap();
        let r = parse_row("200,k,10,30,20,5,whatever", &cols, 2).unwrap();
        assert_eq!(
            (r.status, r.bytes, r.total_ns, r.first_byte_latency_ns),
            (200, 10, Some(25), Some(15))
        );
        assert_eq!(r.served_by, ServedBy::Store);
    }

    #[test]
    fn missing_required_column_is_an_error() {
        let err = SimColumns::from_header("case,arm,start_ns,end_ns").unwrap_err();
        assert!(err.to_string().contains("first_byte_ns"), "{err}");
        // A header without `end_ns` is still a sim trace's (it was taken for an access log).
        let no_end = "case,arm,start_ns,first_byte_ns,object,length_bytes,status";
        assert!(SimColumns::looks_like_header(no_end));
        let err = SimColumns::from_header(no_end).unwrap_err();
        assert!(
            err.to_string().contains("`end_ns`") && err.to_string().contains("sim trace"),
            "{err}"
        );
        // A column named twice is refused (the first was used).
        let twice = SIM_TRACE_HEADER.replace("first_byte_ns", "start_ns");
        let err = SimColumns::from_header(&twice).unwrap_err();
        assert!(err.to_string().contains("`start_ns` twice"), "{err}");
        assert!(!SimColumns::looks_like_header(
            "owner bkt [06/Feb/2019:00:00:38 +0000] start_ns"
        ));
    }

    #[test]
    fn bad_rows_say_why() {
        let c = columns();
        assert!(matches!(
            parse_row("a,b,0,q,10,5,20,1,0,1,200,store,0,false", &c, 2),
            Err(LineError::Inconsistent { .. })
        ));
        assert!(matches!(
            parse_row("a,b,0,q,10,30,20,1,0,1,200,store,0,false", &c, 2),
            Err(LineError::Inconsistent { .. })
        ));
        assert!(matches!(
            parse_row("a,b,0,q,x,30,40,1,0,1,200,store,0,false", &c, 2),
            Err(LineError::BadField { field: 5, .. })
        ));
        assert!(matches!(
            parse_row("a,b,0,q,10,30,40,1,0,1,200,disk,0,false", &c, 2),
            Err(LineError::BadField { field: 12, .. })
        ));
        assert!(matches!(
            parse_row("a,b,0,q,10,30", &c, 2),
            Err(LineError::TooFewFields { .. })
        ));
        assert!(matches!(
            parse_row("\"a,b,0", &c, 2),
            Err(LineError::Unterminated { .. })
        ));
        assert!(matches!(
            parse_row("a,b,0,q,10,30,40,1,0,1,700,store,0,false", &c, 2),
            Err(LineError::BadField { field: 11, .. })
        ));
    }

    #[test]
    fn timeouts_and_unknown_times() {
        let r = parse_row("a,b,0,q,10,,,1,,0,0,store,0,false", &columns(), 2).unwrap();
        assert_eq!(
            (
                r.status,
                r.first_byte_latency_ns,
                r.total_ns,
                r.offset_bytes
            ),
            (0, None, None, None)
        );
        assert!(r.is_error());
    }

    #[test]
    fn csv_quoting_round_trips() {
        assert_eq!(
            split_csv("a,\"b,c\",\"d\"\"e\",").unwrap(),
            vec!["a", "b,c", "d\"e", ""]
        );
        assert_eq!(split_csv("").unwrap(), vec![""]);
        let record = parse_row(
            "a,b,0,q,10,20,30,\"key, with \"\"comma\"\"\",,5,200,store,0,false",
            &columns(),
            2,
        )
        .unwrap();
        let mut out = Vec::new();
        write_sim_trace(std::slice::from_ref(&record), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(SIM_TRACE_HEADER));
        let back = parse_row(lines.next().unwrap(), &columns(), 2).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn needed_rows_parse_and_write_back() {
        let c = columns();
        let row = "c,base,0,q,0,,,17,1000,200,200,needed,0,false,data_pages,2,5,10000,4096,8000,90000,700";
        let r = parse_row(row, &c, 3).unwrap();
        assert_eq!(r.served_by, ServedBy::Needed);
        assert!(!r.is_store_read());
        assert_eq!(
            r.needed,
            Some(NeededPart {
                kind: NeededKind::DataPages,
                row_group: Some(2),
                column: Some(5),
                row_group_rows: 10_000,
                first_row: 4096,
                uncompressed_bytes: 8000,
                object_size_bytes: 90_000,
                footer_len_bytes: 700,
            })
        );
        assert_eq!((r.offset_bytes, r.bytes), (Some(1000), 200));
        assert_eq!(r.object_size_bytes, Some(90_000));
        let footer = "c,base,0,q,0,,,17,89292,708,200,needed,0,false,footer,,,0,0,0,90000,700";
        let f = parse_row(footer, &c, 4).unwrap();
        assert_eq!(
            f.needed.map(|n| (n.kind, n.row_group)),
            Some((NeededKind::Footer, None))
        );
        let mut out = Vec::new();
        write_sim_trace(&[r.clone(), f.clone()], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(parse_row(lines[1], &c, 3).unwrap(), r);
        assert_eq!(parse_row(lines[2], &c, 4).unwrap(), f);
    }

    #[test]
    fn bad_needed_rows_say_why() {
        let c = columns();
        // Unknown kind; a chunk part without its row group; no object size.
        for (row, field) in [
            (
                "c,a,0,q,0,,,1,0,5,200,needed,0,false,pages,0,1,1,0,1,100,10",
                15,
            ),
            (
                "c,a,0,q,0,,,1,0,5,200,needed,0,false,dictionary,,1,1,0,1,100,10",
                16,
            ),
            (
                "c,a,0,q,0,,,1,0,5,200,needed,0,false,footer,,,0,0,0,,10",
                21,
            ),
        ] {
            match parse_row(row, &c, 2) {
                Err(LineError::BadField { field: f, .. }) => assert_eq!(f, field, "{row}"),
                other => panic!("{row}: {other:?}"),
            }
        }
        // An old trace (14 columns) still parses, with no needed part.
        let old = SimColumns::from_header(
            "case,arm,replication,query,start_ns,first_byte_ns,end_ns,object,offset_bytes,length_bytes,status,served_by,attempt,hedge",
        )
        .unwrap();
        let r = parse_row("a,b,0,q,10,20,30,1,0,5,200,store,0,false", &old, 2).unwrap();
        assert_eq!((r.needed, r.object_size_bytes), (None, None));
    }

    proptest::proptest! {
        #[test]
        fn any_string_is_safe(s in ".*") {
            let _ = parse_row(&s, &columns(), 1);
            let _ = SimColumns::from_header(&s);
        }
    }
}
