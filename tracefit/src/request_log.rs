//! The loopback test bed's request log (`testbed serve --log`, `requests.csv`): one CSV row per
//! request with the `Range` header as sent, the bytes served (`range_start`, `range_end`
//! exclusive) and the server's nanosecond times since the bed started. Unlike an S3 access log
//! it says where each GET's bytes lie in the object, which a what-if replay of a real reader's
//! run needs, and its times are exact where the access log's are whole milliseconds. The times
//! are the server's, as in S3's logs: the first-byte time is a turn-around time.

use crate::error::{LineError, TraceError};
use crate::record::{Operation, ServedBy, TraceRecord};
use crate::sim_trace::{optional_size, required_size, required_u64, split_csv, text};

/// The header the test bed writes.
pub const REQUEST_LOG_HEADER: &str = "method,key,query,range_header,range_start,range_end,status,bytes_sent,object_size,start_ns,first_byte_ns,last_byte_ns";

/// Where each column is, from the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestLogColumns {
    method: usize,
    key: usize,
    range_start: usize,
    status: usize,
    bytes_sent: usize,
    object_size: usize,
    start_ns: usize,
    first_byte_ns: usize,
    last_byte_ns: usize,
}

impl RequestLogColumns {
    /// Whether a line is a request-log header (it names `method`, `range_start` and
    /// `last_byte_ns`).
    pub fn looks_like_header(line: &str) -> bool {
        line.starts_with("method,") && line.contains("range_start") && line.contains("last_byte_ns")
    }

    /// The columns of a header line; a missing one is an error naming it.
    pub fn from_header(header: &str) -> Result<RequestLogColumns, TraceError> {
        let names = split_csv(header).unwrap_or_default();
        crate::sim_trace::check_unique(&names)?;
        let need = |name: &'static str| {
            names
                .iter()
                .position(|n| n.trim() == name)
                .ok_or(TraceError::MissingColumn {
                    column: name,
                    format: "request log",
                    expected: REQUEST_LOG_HEADER,
                })
        };
        Ok(RequestLogColumns {
            method: need("method")?,
            key: need("key")?,
            range_start: need("range_start")?,
            status: need("status")?,
            bytes_sent: need("bytes_sent")?,
            object_size: need("object_size")?,
            start_ns: need("start_ns")?,
            first_byte_ns: need("first_byte_ns")?,
            last_byte_ns: need("last_byte_ns")?,
        })
    }

    fn last(&self) -> usize {
        [
            self.method,
            self.key,
            self.range_start,
            self.status,
            self.bytes_sent,
            self.object_size,
            self.start_ns,
            self.first_byte_ns,
            self.last_byte_ns,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }
}

fn bad(index: usize, name: &'static str, value: &str, expected: &'static str) -> LineError {
    LineError::BadField {
        field: index + 1,
        name,
        value: value.chars().take(60).collect(),
        expected,
    }
}

/// Parses one data row. A GET of an object without a range starts at byte 0; a request on the
/// bucket (empty key) is a LIST (`REST.GET.BUCKET`).
pub fn parse_row(
    line: &str,
    columns: &RequestLogColumns,
    line_no: u64,
) -> Result<TraceRecord, LineError> {
    let fields = split_csv(line)?;
    if fields.len() <= columns.last() {
        return Err(LineError::TooFewFields {
            found: fields.len(),
            needed: columns.last() + 1,
            missing: "last_byte_ns",
        });
    }
    let method = text(&fields, Some(columns.method)).trim();
    let object = text(&fields, Some(columns.key)).to_string();
    let operation = match (method, object.is_empty()) {
        ("GET", false) => Operation::Get,
        ("HEAD", false) => Operation::Head,
        ("PUT", false) => Operation::Put,
        ("GET" | "HEAD" | "PUT" | "POST" | "DELETE", _) => Operation::Other(format!(
            "REST.{method}.{}",
            if object.is_empty() {
                "BUCKET"
            } else {
                "OBJECT"
            }
        )),
        _ => {
            return Err(bad(
                columns.method,
                "method",
                method,
                "GET, HEAD, PUT, POST or DELETE",
            ))
        }
    };
    let status_text = text(&fields, Some(columns.status)).trim();
    let status = match status_text.parse::<u16>() {
        Ok(s) if (100..=599).contains(&s) => s,
        _ => {
            return Err(bad(
                columns.status,
                "status",
                status_text,
                "an HTTP status (100-599)",
            ))
        }
    };
    let start_ns = required_u64(&fields, columns.start_ns, "start_ns")?;
    let first_byte_ns = required_u64(&fields, columns.first_byte_ns, "first_byte_ns")?;
    let last_byte_ns = required_u64(&fields, columns.last_byte_ns, "last_byte_ns")?;
    if first_byte_ns < start_ns || last_byte_ns < first_byte_ns {
        return Err(LineError::Inconsistent {
            what: format!(
                "the times are out of order: start_ns {start_ns}, first_byte_ns {first_byte_ns}, last_byte_ns {last_byte_ns}"
            ),
        });
    }
    let offset = optional_size(&fields, Some(columns.range_start), "range_start")?;
    let bytes = required_size(&fields, columns.bytes_sent, "bytes_sent")?;
    let object_size_bytes = optional_size(&fields, Some(columns.object_size), "object_size")?;
    if let (Some(size), Some(start)) = (object_size_bytes, offset) {
        // A range past the object's end was kept and re-planned as if it were in the file (a
        // successful body only: an error's body is not the object's bytes).
        if (200..300).contains(&status) && start.saturating_add(bytes) > size {
            return Err(LineError::Inconsistent {
                what: format!(
                    "range_start {start} + bytes_sent {bytes} runs past the object's end (object_size {size})"
                ),
            });
        }
    }
    let offset_bytes = match operation {
        Operation::Get => Some(offset.unwrap_or(0)),
        _ => offset,
    };
    Ok(TraceRecord {
        line: line_no,
        start_ns,
        first_byte_latency_ns: Some(first_byte_ns - start_ns),
        total_ns: Some(last_byte_ns - start_ns),
        bytes,
        object_size_bytes,
        object,
        offset_bytes,
        status,
        operation,
        served_by: ServedBy::Store,
        sim: None,
        needed: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> RequestLogColumns {
        RequestLogColumns::from_header(REQUEST_LOG_HEADER).unwrap()
    }

    #[test]
    fn rows_read_as_the_bed_wrote_them() {
        let c = columns();
        let get = parse_row(
            "GET,large/large.parquet,,bytes=67244262-67375333,67244262,67375334,206,131072,67375334,100,250,900",
            &c,
            2,
        )
        .unwrap();
        assert_eq!(get.operation, Operation::Get);
        assert_eq!(get.offset_bytes, Some(67_244_262));
        assert_eq!(
            (get.bytes, get.object_size_bytes),
            (131_072, Some(67_375_334))
        );
        assert_eq!(
            (get.first_byte_latency_ns, get.total_ns),
            (Some(150), Some(800))
        );
        let head = parse_row("HEAD,a.parquet,,,,,200,0,10,5,6,7", &c, 3).unwrap();
        assert_eq!((head.operation, head.offset_bytes), (Operation::Head, None));
        let list = parse_row("GET,,list-type=2&prefix=x,,,,200,512,,5,6,7", &c, 4).unwrap();
        assert_eq!(list.operation, Operation::Other("REST.GET.BUCKET".into()));
        let whole = parse_row("GET,a.parquet,,,,,200,10,10,5,6,7", &c, 5).unwrap();
        assert_eq!(whole.offset_bytes, Some(0));
    }

    #[test]
    fn bad_rows_say_what_is_wrong() {
        let c = columns();
        let e = parse_row("GET,a,,,,,206,1,10,9,6,7", &c, 2).unwrap_err();
        assert!(e.to_string().contains("out of order"), "{e}");
        let e = parse_row("FETCH,a,,,,,206,1,10,5,6,7", &c, 2).unwrap_err();
        assert!(e.to_string().contains("method"), "{e}");
        let e = parse_row("GET,a,,,,,206", &c, 2).unwrap_err();
        assert!(matches!(e, LineError::TooFewFields { .. }), "{e}");
        assert!(RequestLogColumns::from_header("method,key,range_start,last_byte_ns").is_err());
        // The column named is this format's own (it said `column`, another format's name).
        let e = parse_row("GET,a,,,0,9,206,99999999999999999999999,100,5,6,7", &c, 2).unwrap_err();
        assert!(e.to_string().contains("(bytes_sent)"), "{e}");
        let e = parse_row("GET,a,,,0,9,206,10,100,5,6,99999999999999999999999", &c, 2).unwrap_err();
        assert!(e.to_string().contains("(last_byte_ns)"), "{e}");
        // Past S3's largest object, and past the object's own end.
        let e = parse_row("GET,a,,,0,9,206,18446744073709551615,100,5,6,7", &c, 2).unwrap_err();
        assert!(e.to_string().contains("5 TiB"), "{e}");
        let e = parse_row("GET,a,,,95,104,206,10,100,5,6,7", &c, 2).unwrap_err();
        assert!(e.to_string().contains("past the object's end"), "{e}");
        assert!(parse_row("GET,a,,,90,99,206,10,100,5,6,7", &c, 2).is_ok());
    }
}
