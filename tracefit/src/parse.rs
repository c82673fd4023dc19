//! Reading a whole trace: format detection, line splitting with a length cap, and the count of
//! malformed lines (or, in strict mode, a failure at the first one).

use std::io::BufRead;
use std::path::Path;

use serde::Serialize;

use crate::access_log;
use crate::error::{LineError, Malformed, TraceError};
use crate::record::{FirstByteSource, TraceRecord};
use crate::request_log::{self, RequestLogColumns};
use crate::sim_trace::{self, SimColumns};

/// Lines longer than this are refused without being held in memory: no valid record of either
/// format comes near it, and it bounds memory whatever the input.
pub use limits::MAX_TRACE_LINE_BYTES as MAX_LINE_BYTES;

/// Records and run lines held from one trace: past this the parse fails, naming the line.
pub use limits::MAX_TRACE_RECORDS as MAX_RECORDS;

/// The trace formats this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TraceFormat {
    /// Amazon S3 server access log records.
    S3AccessLog,
    /// The CSV request trace of `sim run --trace`.
    SimTrace,
    /// The loopback test bed's request log (`requests.csv`: ranges and nanosecond times).
    RequestLog,
}

/// How to parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOptions {
    /// Fail at the first malformed line instead of counting it.
    pub strict: bool,
    /// How many malformed lines to keep with their line number and reason.
    pub max_reported: usize,
    /// The format, or `None` to detect it from the first non-blank line (a sim trace starts
    /// with its header).
    pub format: Option<TraceFormat>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            strict: false,
            max_reported: 10,
            format: None,
        }
    }
}

/// A parsed trace: its records and what was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTrace {
    /// Where the trace came from (a file name), for the fitted model's `source:`.
    pub source: String,
    /// The format it was read as.
    pub format: TraceFormat,
    /// Every well-formed record, in input order.
    pub records: Vec<TraceRecord>,
    /// Non-blank lines read (records, malformed lines; the header not included).
    pub lines_read: u64,
    /// How many lines were malformed.
    pub malformed_count: u64,
    /// The first malformed lines (at most `max_reported`).
    pub malformed: Vec<Malformed>,
    /// What each run of a `sim run --trace` file ran with (its `# run ...` lines).
    pub runs: Vec<RunMeta>,
}

/// What one run of a simulated or measured trace ran with: written as a comment line
/// `# run case=C arm=A replication=R query=Q strategy=S seed=N store=M settings=k=v,k=v`
/// before the header, one per run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunMeta {
    pub case: String,
    pub arm: String,
    pub replication: u32,
    pub query: String,
    /// The strategy preset.
    pub strategy: String,
    /// The scenario's root seed.
    pub seed: u64,
    /// The store model's name (empty for an inline model).
    pub store: String,
    /// Every setting that differed from the preset's default, `name=value`, in listing order.
    pub settings: Vec<(String, String)>,
}

/// The prefix of a run's metadata line.
pub const RUN_META_PREFIX: &str = "# run ";

impl RunMeta {
    /// The comment line (no newline). Values never hold spaces or commas (names, presets and
    /// setting values with units do not).
    pub fn line(&self) -> String {
        let settings: Vec<String> = self
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={}", v.replace([' ', ','], "")))
            .collect();
        format!(
            "{RUN_META_PREFIX}case={} arm={} replication={} query={} strategy={} seed={} store={} settings={}",
            self.case,
            self.arm,
            self.replication,
            self.query,
            self.strategy,
            self.seed,
            if self.store.is_empty() { "-" } else { &self.store },
            settings.join(",")
        )
    }

    /// Parses a line [`RunMeta::line`] wrote; `None` for any other comment.
    pub fn parse(line: &str) -> Option<RunMeta> {
        let rest = line.strip_prefix(RUN_META_PREFIX)?;
        let mut m = RunMeta::default();
        for field in rest.split(' ') {
            let (k, v) = field.split_once('=')?;
            match k {
                "case" => m.case = v.into(),
                "arm" => m.arm = v.into(),
                "replication" => m.replication = v.parse().ok()?,
                "query" => m.query = v.into(),
                "strategy" => m.strategy = v.into(),
                "seed" => m.seed = v.parse().ok()?,
                "store" => m.store = if v == "-" { String::new() } else { v.into() },
                "settings" => {
                    m.settings = v
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .filter_map(|s| s.split_once('='))
                        .map(|(a, b)| (a.to_string(), b.to_string()))
                        .collect()
                }
                _ => {}
            }
        }
        Some(m)
    }
}

impl ParsedTrace {
    /// What the first-byte latencies of this trace measure.
    pub fn first_byte_source(&self) -> FirstByteSource {
        match self.format {
            // The bed's request log times requests at the server, as S3 does.
            TraceFormat::S3AccessLog | TraceFormat::RequestLog => FirstByteSource::TurnAround,
            TraceFormat::SimTrace => FirstByteSource::Client,
        }
    }

    /// A one-paragraph account for the user: counts and the first malformed lines.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}: {} records from {} lines ({:?}), {} malformed",
            self.source,
            self.records.len(),
            self.lines_read,
            self.format,
            self.malformed_count
        );
        for m in &self.malformed {
            s.push_str(&format!("\n  {m}"));
        }
        if self.malformed_count > self.malformed.len() as u64 {
            s.push_str(&format!(
                "\n  ... and {} more",
                self.malformed_count - self.malformed.len() as u64
            ));
        }
        s
    }
}

/// A duration that may be years, in days past one (`31536000.012s` said a year badly).
fn long_duration(ns: u64) -> String {
    const DAY_NS: f64 = 86_400e9;
    if ns as f64 >= DAY_NS {
        format!("{:.1} days", ns as f64 / DAY_NS)
    } else {
        units::format_duration_ns(ns)
    }
}

/// The span of the records read so far, to refuse a trace past `MAX_VIRTUAL_TIME_NS`: the
/// earliest start and the latest start or end, each with its line.
#[derive(Default)]
struct Span {
    first: Option<(u64, u64)>,
    last: Option<(u64, u64, &'static str)>,
}

impl Span {
    /// Takes in `r`; an error if the span now exceeds the bound, naming the line of the latest
    /// start or end and the line of the earliest start (one of them is `r`'s).
    fn extend(&mut self, r: &TraceRecord) -> Result<(), TraceError> {
        let reach = r
            .total_ns
            .max(r.first_byte_latency_ns)
            .map_or(r.start_ns, |d| r.start_ns.saturating_add(d));
        let what = if reach > r.start_ns { "ends" } else { "starts" };
        if self.first.is_none_or(|(t, _)| r.start_ns < t) {
            self.first = Some((r.start_ns, r.line));
        }
        if self.last.is_none_or(|(t, _, _)| reach > t) {
            self.last = Some((reach, r.line, what));
        }
        let (Some((first, first_line)), Some((last, line, what))) = (self.first, self.last) else {
            return Ok(());
        };
        let span = last.saturating_sub(first);
        if span <= limits::MAX_VIRTUAL_TIME_NS {
            return Ok(());
        }
        Err(TraceError::SpanTooLong {
            line,
            what,
            span: long_duration(span),
            first_line,
            bound: long_duration(limits::MAX_VIRTUAL_TIME_NS),
        })
    }
}

/// Reads one line (without its `\n`) into `buf`, keeping at most `cap` bytes. Returns `None` at
/// the end of input, else whether the line was longer than `cap`.
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if any { Some(too_long) } else { None });
        }
        any = true;
        let (chunk, used, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + chunk.len() > cap {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if done {
            return Ok(Some(too_long));
        }
    }
}

/// Whether `trace` may hold one more record or run line (`bound`, `MAX_RECORDS` but in tests);
/// `line` is the one that would pass the bound.
fn hold(trace: &ParsedTrace, line: u64, bound: usize) -> Result<(), TraceError> {
    if trace.records.len() + trace.runs.len() >= bound {
        return Err(TraceError::TooManyRecords { line, bound });
    }
    Ok(())
}

enum Parser {
    Detect,
    Access,
    // Boxed: the column map is much larger than the other variants.
    Sim(Box<SimColumns>),
    Requests(RequestLogColumns),
}

/// Parses a trace from any buffered reader. `source` names it in messages and in the model.
/// It holds at most [`MAX_RECORDS`] records and run lines.
pub fn parse_reader<R: BufRead>(
    reader: R,
    source: &str,
    options: &ParseOptions,
) -> Result<ParsedTrace, TraceError> {
    parse_bounded(reader, source, options, MAX_RECORDS)
}

/// [`parse_reader`] holding at most `max_records` records and run lines.
fn parse_bounded<R: BufRead>(
    mut reader: R,
    source: &str,
    options: &ParseOptions,
    max_records: usize,
) -> Result<ParsedTrace, TraceError> {
    let mut parser = match options.format {
        None => Parser::Detect,
        Some(TraceFormat::S3AccessLog) => Parser::Access,
        // The header decides the columns; it is the first non-blank line.
        Some(TraceFormat::SimTrace | TraceFormat::RequestLog) => Parser::Detect,
    };
    let mut trace = ParsedTrace {
        source: source.to_string(),
        format: options.format.unwrap_or(TraceFormat::S3AccessLog),
        records: Vec::new(),
        lines_read: 0,
        malformed_count: 0,
        malformed: Vec::new(),
        runs: Vec::new(),
    };
    let mut buf = Vec::with_capacity(512);
    let mut line_no: u64 = 0;
    let mut span = Span::default();
    while let Some(too_long) = read_line_capped(&mut reader, &mut buf, MAX_LINE_BYTES)? {
        line_no += 1;
        let result: Result<Option<TraceRecord>, LineError> = if too_long {
            Err(LineError::BadField {
                field: 0,
                name: "line",
                value: format!("longer than {MAX_LINE_BYTES} bytes"),
                expected: "a trace record",
            })
        } else {
            match std::str::from_utf8(&buf) {
                Err(e) => Err(LineError::NotUtf8 {
                    valid_up_to: e.valid_up_to(),
                }),
                Ok(line) => {
                    let line = line.strip_suffix('\r').unwrap_or(line);
                    if line.trim().is_empty() {
                        continue;
                    }
                    // A simulated trace's run metadata; access logs have no comment lines.
                    if !matches!(parser, Parser::Access) && line.starts_with('#') {
                        if let Some(meta) = RunMeta::parse(line) {
                            hold(&trace, line_no, max_records)?;
                            trace.runs.push(meta);
                        }
                        continue;
                    }
                    match &parser {
                        Parser::Detect => {
                            if options.format != Some(TraceFormat::SimTrace)
                                && RequestLogColumns::looks_like_header(line)
                            {
                                parser = Parser::Requests(RequestLogColumns::from_header(line)?);
                                trace.format = TraceFormat::RequestLog;
                                continue;
                            }
                            if options.format != Some(TraceFormat::RequestLog)
                                && SimColumns::looks_like_header(line)
                            {
                                parser = Parser::Sim(Box::new(SimColumns::from_header(line)?));
                                trace.format = TraceFormat::SimTrace;
                                continue;
                            }
                            if options.format == Some(TraceFormat::SimTrace) {
                                return Err(TraceError::MissingColumn {
                                    column: "start_ns",
                                    format: "sim trace",
                                    expected: sim_trace::SIM_TRACE_HEADER,
                                });
                            }
                            if options.format == Some(TraceFormat::RequestLog) {
                                return Err(TraceError::MissingColumn {
                                    column: "method",
                                    format: "request log",
                                    expected: request_log::REQUEST_LOG_HEADER,
                                });
                            }
                            parser = Parser::Access;
                            trace.format = TraceFormat::S3AccessLog;
                            access_log::parse_line(line, line_no).map(Some)
                        }
                        Parser::Access => access_log::parse_line(line, line_no).map(Some),
                        Parser::Sim(columns) => {
                            sim_trace::parse_row(line, columns, line_no).map(Some)
                        }
                        Parser::Requests(columns) => {
                            request_log::parse_row(line, columns, line_no).map(Some)
                        }
                    }
                }
            }
        };
        trace.lines_read += 1;
        match result {
            Ok(Some(record)) => {
                span.extend(&record)?;
                hold(&trace, line_no, max_records)?;
                trace.records.push(record);
            }
            Ok(None) => {}
            Err(error) => {
                let m = Malformed {
                    line: line_no,
                    error,
                };
                if options.strict {
                    return Err(TraceError::Strict(m));
                }
                trace.malformed_count += 1;
                if trace.malformed.len() < options.max_reported {
                    trace.malformed.push(m);
                }
            }
        }
    }
    if trace.records.is_empty() && trace.malformed_count == 0 {
        return Err(TraceError::Empty(format!("{source} holds no records")));
    }
    Ok(trace)
}

/// Parses a trace held in memory.
pub fn parse_bytes(
    input: &[u8],
    source: &str,
    options: &ParseOptions,
) -> Result<ParsedTrace, TraceError> {
    parse_reader(input, source, options)
}

/// Parses a trace file; the file name becomes the trace's `source`.
pub fn parse_file(path: &Path, options: &ParseOptions) -> Result<ParsedTrace, TraceError> {
    let file = std::fs::File::open(path)?;
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    parse_reader(
        std::io::BufReader::with_capacity(1 << 16, file),
        &source,
        options,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCESS: &str = "o b [10/Mar/2024:12:34:56 +0000] 1.2.3.4 r id REST.GET.OBJECT k \"GET /b/k HTTP/1.1\" 206 - 100 1000 12 10 \"-\" \"ua 1\" - h SigV4 c AuthHeader host TLSv1.3 - -";

    #[test]
    fn detects_and_counts_malformed_lines() {
        let input = format!("{ACCESS}\n\ngarbage line\n{ACCESS}\r\n\"unterminated\n{ACCESS}");
        let t = parse_bytes(input.as_bytes(), "x.log", &ParseOptions::default()).unwrap();
        assert_eq!(t.format, TraceFormat::S3AccessLog);
        assert_eq!(t.records.len(), 3);
        assert_eq!(t.malformed_count, 2);
        assert_eq!(t.lines_read, 5);
        assert_eq!(
            t.malformed.iter().map(|m| m.line).collect::<Vec<_>>(),
            vec![3, 5]
        );
        assert_eq!(
            t.records.iter().map(|r| r.line).collect::<Vec<_>>(),
            vec![1, 4, 6]
        );
        assert!(t.summary().contains("line 3"), "{}", t.summary());
    }

    #[test]
    fn strict_fails_at_the_first_bad_line() {
        let input = format!("{ACCESS}\nbad\n{ACCESS}\n");
        let opts = ParseOptions {
            strict: true,
            ..ParseOptions::default()
        };
        match parse_bytes(input.as_bytes(), "x.log", &opts) {
            Err(TraceError::Strict(m)) => assert_eq!(m.line, 2),
            other => panic!("expected a strict failure, got {other:?}"),
        }
    }

    #[test]
    fn reported_lines_are_capped_but_all_counted() {
        let input = "bad\n".repeat(50);
        let opts = ParseOptions {
            max_reported: 3,
            ..ParseOptions::default()
        };
        let t = parse_bytes(input.as_bytes(), "x", &opts).unwrap();
        assert_eq!((t.malformed_count, t.malformed.len()), (50, 3));
        assert!(t.summary().contains("47 more"));
    }

    #[test]
    fn sim_trace_is_detected_by_its_header() {
        let input = format!(
            "{}\nc,a,0,q,0,10,20,1,0,5,200,store,0,false\n",
            sim_trace::SIM_TRACE_HEADER
        );
        let t = parse_bytes(input.as_bytes(), "t.csv", &ParseOptions::default()).unwrap();
        assert_eq!(t.format, TraceFormat::SimTrace);
        assert_eq!(t.records.len(), 1);
        assert_eq!(t.records[0].line, 2);
        let forced = ParseOptions {
            format: Some(TraceFormat::SimTrace),
            ..ParseOptions::default()
        };
        assert!(matches!(
            parse_bytes(ACCESS.as_bytes(), "x", &forced),
            Err(TraceError::MissingColumn { .. })
        ));
    }

    #[test]
    fn huge_lines_and_binary_garbage_are_refused_not_fatal() {
        let mut input = Vec::new();
        input.extend_from_slice(ACCESS.as_bytes());
        input.push(b'\n');
        input.extend(std::iter::repeat_n(b'"', 5 * MAX_LINE_BYTES + 17));
        input.push(b'\n');
        input.extend_from_slice(&[0xff, 0xfe, 0x00, b' ', 0xc3]);
        input.push(b'\n');
        input.extend(std::iter::repeat_n(b'x', 3 * MAX_LINE_BYTES));
        input.push(b'\n');
        input.extend_from_slice(ACCESS.as_bytes());
        let t = parse_bytes(&input, "x", &ParseOptions::default()).unwrap();
        assert_eq!(t.records.len(), 2);
        assert_eq!(t.malformed_count, 3);
        assert!(matches!(
            t.malformed[1].error,
            LineError::NotUtf8 { valid_up_to: 0 }
        ));
    }

    /// The audit's `span.log` (1970, 1971, 9999) wrapped the fit's span and replayed to
    /// "recorded 18446744073.71s"; `huge.csv` started a request at 1.8e19 ns. Refused, naming
    /// the two lines.
    #[test]
    fn a_trace_spanning_more_than_a_run_may_is_refused_naming_the_lines() {
        let at = |date: &str| ACCESS.replace("10/Mar/2024", date);
        let log = [at("01/Jan/1970"), at("02/Jan/1970"), at("31/Dec/2500")].join("\n");
        let err = parse_bytes(log.as_bytes(), "span.log", &ParseOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::SpanTooLong {
                    line: 3,
                    first_line: 1,
                    ..
                }
            ),
            "{err}"
        );
        let text = err.to_string();
        assert!(
            text.contains("MAX_VIRTUAL_TIME_NS")
                && text.contains("line 3 ends")
                && text.contains("at most 26.1 days"),
            "{text}"
        );
        // Earliest last: the message still names both ends.
        let log = [at("31/Dec/2500"), at("01/Jan/1970")].join("\n");
        let err = parse_bytes(log.as_bytes(), "x", &ParseOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::SpanTooLong {
                    line: 1,
                    first_line: 2,
                    ..
                }
            ),
            "{err}"
        );
        let csv = format!(
            "{}\nc,a,0,q,0,1000,2000,1,0,100,206,store,1,false\nc,a,0,q,18446744073709551000,18446744073709551100,18446744073709551200,1,0,100,206,store,1,false\n",
            sim_trace::SIM_TRACE_HEADER
        );
        let err = parse_bytes(csv.as_bytes(), "huge.csv", &ParseOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                TraceError::SpanTooLong {
                    line: 3,
                    first_line: 2,
                    ..
                }
            ),
            "{err}"
        );
        // 26 days is fine.
        let log = [at("01/Mar/2024"), at("26/Mar/2024")].join("\n");
        assert!(parse_bytes(log.as_bytes(), "x", &ParseOptions::default()).is_ok());
    }

    /// 600,000 access-log lines took 453 MB: the records and run lines held are bounded, and
    /// the line past the bound is named (here a bound of 4; `parse_reader` passes
    /// `MAX_RECORDS`).
    #[test]
    fn records_past_the_bound_are_refused_naming_the_line() {
        let opts = ParseOptions::default();
        let csv = format!(
            "{}\n# run case=c arm=a replication=0 query=q strategy=s seed=1 store=- settings=\n{}",
            sim_trace::SIM_TRACE_HEADER,
            "c,a,0,q,0,10,20,1,0,5,200,store,1,false\nbad\n".repeat(3)
        );
        let t = parse_bounded(csv.as_bytes(), "x", &opts, 4).unwrap();
        assert_eq!((t.records.len(), t.runs.len()), (3, 1));
        let more = format!("{csv}c,a,0,q,0,10,20,1,0,5,200,store,1,false\n");
        match parse_bounded(more.as_bytes(), "x", &opts, 4) {
            Err(TraceError::TooManyRecords { line: 9, bound: 4 }) => {}
            other => panic!("expected the bound at line 9, got {other:?}"),
        }
        let err = parse_bounded(more.as_bytes(), "x", &opts, 4).unwrap_err();
        assert!(
            err.to_string().contains("limits::MAX_TRACE_RECORDS"),
            "{err}"
        );
        assert_eq!(MAX_RECORDS, limits::MAX_TRACE_RECORDS);
    }

    #[test]
    fn empty_input_is_an_error() {
        assert!(matches!(
            parse_bytes(b"\n\n", "x", &ParseOptions::default()),
            Err(TraceError::Empty(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000)) {
            let _ = parse_bytes(&bytes, "x", &ParseOptions::default());
        }

        #[test]
        fn arbitrary_lines_are_records_or_counted(lines in proptest::collection::vec(".{0,300}", 1..20)) {
            let input = lines.join("\n");
            if let Ok(t) = parse_bytes(input.as_bytes(), "x", &ParseOptions::default()) {
                proptest::prop_assert_eq!(t.records.len() as u64 + t.malformed_count, t.lines_read);
            }
        }
    }
}
