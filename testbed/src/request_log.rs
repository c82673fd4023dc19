//! The test bed's request log: every request the S3 server answers, as the server saw it
//! (method, key, the `Range` header as sent, suffix ranges included, status, bytes sent, the
//! object's size, and when the request arrived, its first response byte left and its last
//! response byte left), written two ways:
//!
//! - as Amazon S3 server access-log lines ([`RequestRecord::access_log_line`]), so that
//!   `sim fit` and `sim replay` read a test-bed log as they read a real one (times in whole
//!   milliseconds, as S3 writes them);
//! - as a side CSV with nanosecond times and the exact range ([`to_csv`]), for comparisons.
//!
//! Times are the server's, like S3's own logs: a client sees each request half a round trip
//! later and its last byte half a round trip (and its pacing) later.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use hyper::body::{Body, Frame, SizeHint};

/// What the server did for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// `GET`, `HEAD`, `PUT`...
    pub method: String,
    /// The object key (empty for a request on the bucket, such as a LIST).
    pub key: String,
    /// The request's query string (a LIST's `list-type=2&prefix=...`), without the `?`.
    pub query: String,
    /// The `Range` header exactly as sent (`bytes=-262144`, `bytes=0-99`), if any.
    pub range_header: Option<String>,
    /// The bytes served, `[start, end)`, as the server resolved the range (GETs of an object).
    pub range: Option<(u64, u64)>,
    pub status: u16,
    /// Body bytes sent.
    pub bytes_sent: u64,
    /// The object's size, when the response says it.
    pub object_size: Option<u64>,
    /// Since the bed started: the request arrived (its head was parsed).
    pub start_ns: u64,
    /// The response head left the server.
    pub first_byte_ns: u64,
    /// The last body byte left the server (the head, for a response without a body).
    pub last_byte_ns: u64,
    /// Wall-clock time of the request's arrival, for the access log's `[time]` field.
    pub wall_unix_ms: u64,
}

impl RequestRecord {
    /// The S3 access-log operation name.
    pub fn operation(&self) -> String {
        let resource = if self.key.is_empty() {
            "BUCKET"
        } else {
            "OBJECT"
        };
        format!("REST.{}.{resource}", self.method)
    }

    /// Whether it is a LIST (a GET on the bucket).
    pub fn is_list(&self) -> bool {
        self.method == "GET" && self.key.is_empty()
    }

    /// One Amazon S3 server access-log line (the format `docs/stores.md` describes; fields it does
    /// not know are `-`).
    pub fn access_log_line(&self, bucket: &str, id: usize) -> String {
        // Rounded to the nearest millisecond, as `tracefit` reads access-log times (a `0` is
        // the cell [0, 0.5 ms]); AWS does not document which it does. Truncated until
        // 2026-12-07.
        let ms = |ns: u64| ns.saturating_add(500_000) / 1_000_000;
        let total = ms(self.last_byte_ns.saturating_sub(self.start_ns));
        let turn_around = ms(self.first_byte_ns.saturating_sub(self.start_ns));
        let uri = if self.key.is_empty() {
            format!("/{bucket}?{}", self.query)
        } else if self.query.is_empty() {
            format!("/{bucket}/{}", self.key)
        } else {
            format!("/{bucket}/{}?{}", self.key, self.query)
        };
        let dash = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |v| v.to_string());
        format!(
            "testbed {bucket} [{}] 127.0.0.1 testbed {id:016X} {} {} \"{} {uri} HTTP/1.1\" {} {} {} {} {total} {turn_around} \"-\" \"-\" - - SigV4 - AuthHeader 127.0.0.1 - - -",
            clf_time(self.wall_unix_ms / 1000),
            self.operation(),
            if self.key.is_empty() { "-" } else { &self.key },
            self.method,
            self.status,
            if self.status >= 400 { "Error" } else { "-" },
            if self.bytes_sent == 0 && self.method == "HEAD" { "-".to_string() } else { self.bytes_sent.to_string() },
            dash(self.object_size),
        )
    }
}

/// `06/Feb/2019:00:00:38 +0000` for seconds since the Unix epoch (UTC), by the civil-from-days
/// algorithm (Howard Hinnant's): a date library for one field would be more than it is worth.
pub fn clf_time(unix_s: u64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{day:02}/{}/{year}:{:02}:{:02}:{:02} +0000",
        MONTHS[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// The side CSV's columns, in order.
const CSV_HEADER: [&str; 12] = [
    "method",
    "key",
    "query",
    "range_header",
    "range_start",
    "range_end",
    "status",
    "bytes_sent",
    "object_size",
    "start_ns",
    "first_byte_ns",
    "last_byte_ns",
];

/// Rows a side CSV may hold (a fixture is a few hundred; a check-peers run a few thousand).
pub use limits::MAX_REQUEST_LOG_ROWS as MAX_CSV_ROWS;

/// The side CSV: one row per request, nanosecond times, the exact range (`range_end`
/// exclusive).
pub fn to_csv(records: &[RequestRecord]) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let opt = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
    let row = |r: &RequestRecord| -> [String; 12] {
        [
            r.method.clone(),
            r.key.clone(),
            r.query.clone(),
            r.range_header.clone().unwrap_or_default(),
            opt(r.range.map(|x| x.0)),
            opt(r.range.map(|x| x.1)),
            r.status.to_string(),
            r.bytes_sent.to_string(),
            opt(r.object_size),
            r.start_ns.to_string(),
            r.first_byte_ns.to_string(),
            r.last_byte_ns.to_string(),
        ]
    };
    // Writing to memory cannot fail.
    let _ = w.write_record(CSV_HEADER);
    for r in records {
        let _ = w.write_record(row(r));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// Reads a side CSV back (a captured fixture); errors name the line and the column.
pub fn from_csv(text: &str) -> Result<Vec<RequestRecord>, String> {
    let mut rd = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let header = rd.headers().map_err(|e| format!("line 1: {e}"))?.clone();
    if header.iter().ne(CSV_HEADER) {
        return Err(format!(
            "line 1: the header is `{}`; a request log's is `{}`",
            header.iter().collect::<Vec<_>>().join(","),
            CSV_HEADER.join(",")
        ));
    }
    let mut out = Vec::new();
    for (i, rec) in rd.records().enumerate() {
        let line = i + 2;
        if out.len() >= MAX_CSV_ROWS {
            return Err(format!("line {line}: more than {MAX_CSV_ROWS} rows"));
        }
        let rec = rec.map_err(|e| format!("line {line}: {e}"))?;
        let field = |c: usize| rec.get(c).unwrap_or("");
        let num = |c: usize| -> Result<u64, String> {
            field(c).parse().map_err(|_| {
                format!(
                    "line {line}, column `{}`: `{}` is not a whole number",
                    CSV_HEADER[c],
                    field(c)
                )
            })
        };
        let opt = |c: usize| -> Result<Option<u64>, String> {
            if field(c).is_empty() {
                Ok(None)
            } else {
                num(c).map(Some)
            }
        };
        let range = match (opt(4)?, opt(5)?) {
            (Some(a), Some(b)) if a <= b => Some((a, b)),
            (None, None) => None,
            _ => {
                return Err(format!(
                    "line {line}: range_start and range_end must both be given, start <= end"
                ))
            }
        };
        out.push(RequestRecord {
            method: field(0).to_string(),
            key: field(1).to_string(),
            query: field(2).to_string(),
            range_header: Some(field(3).to_string()).filter(|h| !h.is_empty()),
            range,
            status: u16::try_from(num(6)?)
                .map_err(|_| format!("line {line}: status out of range"))?,
            bytes_sent: num(7)?,
            object_size: opt(8)?,
            start_ns: num(9)?,
            first_byte_ns: num(10)?,
            last_byte_ns: num(11)?,
            wall_unix_ms: 0,
        });
    }
    Ok(out)
}

/// The log the server writes into: records in the order their responses ended. It holds at most
/// [`MAX_CSV_ROWS`] records between two takes; past that a record is dropped and counted
/// ([`RequestLog::dropped`]), so a bed nobody drains does not grow without bound.
#[derive(Debug, Clone)]
pub struct RequestLog {
    records: Arc<Mutex<Vec<RequestRecord>>>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
    /// Records held at most between two takes ([`MAX_CSV_ROWS`]).
    capacity: usize,
    epoch: Instant,
}

impl RequestLog {
    pub(crate) fn new() -> Self {
        Self::with_capacity(MAX_CSV_ROWS)
    }

    fn with_capacity(capacity: usize) -> Self {
        RequestLog {
            records: Arc::new(Mutex::new(Vec::new())),
            dropped: Arc::default(),
            capacity,
            epoch: Instant::now(),
        }
    }

    pub(crate) fn now_ns(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn push(&self, r: RequestRecord) {
        if let Ok(mut v) = self.records.lock() {
            if v.len() < self.capacity {
                v.push(r);
                return;
            }
        }
        self.dropped
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Records dropped since the bed started because the log held [`MAX_CSV_ROWS`] untaken
    /// ones (0 for a log taken often enough).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Every record since the last take, sorted by arrival.
    pub fn take(&self) -> Vec<RequestRecord> {
        let mut v = self
            .records
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        v.sort_by_key(|r| (r.start_ns, r.last_byte_ns));
        v
    }
}

/// A request in progress: what is known once the response head is ready.
pub(crate) struct Pending {
    pub(crate) record: RequestRecord,
    pub(crate) log: RequestLog,
}

impl Pending {
    /// Starts a record at the request's arrival.
    pub(crate) fn start<B>(log: &RequestLog, req: &hyper::Request<B>) -> Pending {
        let uri = req.uri();
        let path = uri.path().trim_start_matches('/');
        // Path-style: `/bucket/key...`.
        let key = path.split_once('/').map_or("", |(_, k)| k);
        Pending {
            record: RequestRecord {
                method: req.method().as_str().to_string(),
                key: percent_decode(key),
                query: uri.query().unwrap_or("").to_string(),
                range_header: req
                    .headers()
                    .get(hyper::header::RANGE)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string),
                range: None,
                status: 0,
                bytes_sent: 0,
                object_size: None,
                start_ns: log.now_ns(),
                first_byte_ns: 0,
                last_byte_ns: 0,
                wall_unix_ms: SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            },
            log: log.clone(),
        }
    }

    /// The response head is ready: status, the served range and the object's size.
    pub(crate) fn head<B>(&mut self, resp: &hyper::Response<B>) {
        let r = &mut self.record;
        r.status = resp.status().as_u16();
        r.first_byte_ns = self.log.now_ns();
        let header = |name: hyper::header::HeaderName| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let length = header(hyper::header::CONTENT_LENGTH).and_then(|v| v.parse::<u64>().ok());
        match header(hyper::header::CONTENT_RANGE).and_then(|v| parse_content_range(&v)) {
            Some((start, end, size)) => {
                r.range = Some((start, end));
                r.object_size = Some(size);
            }
            None if r.status < 300 && !r.key.is_empty() => {
                r.object_size = length;
                if r.method == "GET" {
                    r.range = length.map(|n| (0, n));
                }
            }
            None => {}
        }
    }
}

/// `bytes START-END/SIZE` as `[START, END + 1)` and SIZE.
fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.strip_prefix("bytes ")?;
    let (span, size) = rest.split_once('/')?;
    let (a, b) = span.split_once('-')?;
    let (a, b, size) = (
        a.parse::<u64>().ok()?,
        b.parse::<u64>().ok()?,
        size.parse().ok()?,
    );
    (a <= b).then_some((a, b + 1, size))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A response body that counts what it sends and logs the request when it ends (or is
/// dropped: a HEAD's empty body may never be polled).
pub(crate) struct LoggedBody<B> {
    pub(crate) inner: B,
    pub(crate) pending: Option<Pending>,
}

impl<B> LoggedBody<B> {
    fn finish(&mut self) {
        if let Some(mut p) = self.pending.take() {
            p.record.last_byte_ns = p.log.now_ns().max(p.record.first_byte_ns);
            p.log.push(p.record);
        }
    }
}

impl<B> Drop for LoggedBody<B> {
    fn drop(&mut self) {
        self.finish();
    }
}

impl<B: Body + Unpin> Body for LoggedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(p)) = (frame.data_ref(), self.pending.as_mut()) {
                    p.record.bytes_sent += hyper::body::Buf::remaining(data) as u64;
                }
                if self.inner.is_end_stream() {
                    self.finish();
                }
            }
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => self.finish(),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_drops_and_counts_records_until_taken() {
        let log = RequestLog::with_capacity(2);
        let record = |start_ns| RequestRecord {
            method: "GET".into(),
            key: "k".into(),
            query: String::new(),
            range_header: None,
            range: None,
            status: 200,
            bytes_sent: 0,
            object_size: None,
            start_ns,
            first_byte_ns: start_ns,
            last_byte_ns: start_ns,
            wall_unix_ms: 0,
        };
        for t in 0..5 {
            log.push(record(t));
        }
        assert_eq!(log.dropped(), 3);
        assert_eq!(log.take().len(), 2);
        log.push(record(9));
        assert_eq!(log.take().len(), 1, "a take makes room again");
        assert_eq!(log.dropped(), 3);
    }

    #[test]
    fn clf_times_are_civil_dates() {
        assert_eq!(clf_time(1_549_411_238), "06/Feb/2019:00:00:38 +0000");
        assert_eq!(clf_time(0), "01/Jan/1970:00:00:00 +0000");
        assert_eq!(clf_time(951_782_400), "29/Feb/2000:00:00:00 +0000");
    }

    #[test]
    fn content_ranges_and_keys() {
        assert_eq!(parse_content_range("bytes 0-9/100"), Some((0, 10, 100)));
        assert_eq!(parse_content_range("bytes 9-0/100"), None);
        assert_eq!(percent_decode("a%2Fb%20c"), "a/b c");
        assert_eq!(percent_decode("100%"), "100%");
    }

    #[test]
    fn access_log_lines_parse_as_s3_logs() {
        let r = RequestRecord {
            method: "GET".into(),
            key: "t/part-0.parquet".into(),
            query: String::new(),
            range_header: Some("bytes=-262144".into()),
            range: Some((737_856, 1_000_000)),
            status: 206,
            bytes_sent: 262_144,
            object_size: Some(1_000_000),
            start_ns: 5_000_000,
            first_byte_ns: 7_500_000,
            last_byte_ns: 32_000_000,
            wall_unix_ms: 1_549_411_238_000,
        };
        let line = r.access_log_line("testbed", 7);
        assert!(line.contains("REST.GET.OBJECT t/part-0.parquet"), "{line}");
        // 27 ms in all, 2.5 ms to the first byte: rounded, 27 and 3.
        assert!(line.contains(" 206 - 262144 1000000 27 3 "), "{line}");
    }

    #[test]
    fn the_side_csv_reads_back_and_bad_rows_name_their_line() {
        let mut r = RequestRecord {
            method: "GET".into(),
            key: "t/a,b.parquet".into(),
            query: "list-type=2&prefix=t/".into(),
            range_header: Some("bytes=-8".into()),
            range: Some((92, 100)),
            status: 206,
            bytes_sent: 8,
            object_size: Some(100),
            start_ns: 1,
            first_byte_ns: 2,
            last_byte_ns: 3,
            wall_unix_ms: 0,
        };
        let head = RequestRecord {
            method: "HEAD".into(),
            range_header: None,
            range: None,
            bytes_sent: 0,
            ..r.clone()
        };
        let back = from_csv(&to_csv(&[r.clone(), head.clone()])).unwrap();
        assert_eq!(back, vec![r.clone(), head]);
        r.range = Some((5, 1));
        let text = to_csv(&[r]).replace(",5,1,", ",x,1,");
        let e = from_csv(&text).unwrap_err();
        assert!(e.starts_with("line 2, column `range_start`"), "{e}");
        assert!(from_csv("a,b\n").unwrap_err().starts_with("line 1:"));
    }
}
