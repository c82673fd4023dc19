//! Writing a parsed trace back in the sim format, and hostile input of any size.

mod common;

use common::{to_access_log, Latency, Synth};
use tracefit::{fit_store, parse_bytes, write_sim_trace, FitOptions, ParseOptions, TraceFormat};

#[test]
fn an_access_log_written_as_a_sim_trace_fits_the_same() {
    let synth = Synth {
        requests: 3_000,
        latency: Latency::Gamma {
            mean_ns: 30e6,
            shape: 3.0,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 70.0 * 1024.0 * 1024.0,
        bandwidth_sigma: 0.25,
        rate_per_s: 100.0,
        error_share: 0.01,
        seed: 5,
    };
    let log = to_access_log(&synth.generate());
    let from_log = parse_bytes(log.as_bytes(), "a.log", &ParseOptions::default()).unwrap();
    let mut csv = Vec::new();
    let written = write_sim_trace(&from_log.records, &mut csv).unwrap();
    assert_eq!(written, 3_000);
    let from_csv = parse_bytes(
        &csv,
        "a.csv",
        &ParseOptions {
            strict: true,
            ..ParseOptions::default()
        },
    )
    .unwrap();
    assert_eq!(from_csv.format, TraceFormat::SimTrace);
    for (a, b) in from_log.records.iter().zip(&from_csv.records) {
        assert_eq!(
            (
                a.start_ns,
                a.first_byte_latency_ns,
                a.total_ns,
                a.bytes,
                a.status
            ),
            (
                b.start_ns,
                b.first_byte_latency_ns,
                b.total_ns,
                b.bytes,
                b.status
            )
        );
        assert_eq!(a.object, b.object);
    }
    // Same numbers; only the rounding grid (known for logs, not for the CSV) differs, so the
    // first-byte fit may differ a little in KS but not in parameters.
    let f1 = fit_store(&from_log, &FitOptions::default()).unwrap();
    let f2 = fit_store(&from_csv, &FitOptions::default()).unwrap();
    let m1 = f1.first_byte.candidates[1].dist.mean();
    let m2 = f2.first_byte.candidates[1].dist.mean();
    assert!((m1 / m2 - 1.0).abs() < 1e-9, "{m1} vs {m2}");
    assert_eq!(f1.errors, f2.errors);
    // A sim trace written back is byte-identical.
    let mut again = Vec::new();
    write_sim_trace(&from_csv.records, &mut again).unwrap();
    assert_eq!(csv, again);
}

#[test]
fn huge_lines_and_garbage_are_counted_not_fatal() {
    let synth = Synth {
        requests: 3,
        latency: Latency::Lognormal {
            median_ns: 27e6,
            sigma: 0.5,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 60.0 * 1024.0 * 1024.0,
        bandwidth_sigma: 0.3,
        rate_per_s: 10.0,
        error_share: 0.0,
        seed: 1,
    };
    let good = to_access_log(&synth.generate());
    let mut input = Vec::new();
    input.extend_from_slice(good.as_bytes());
    // A 20 MB line of quotes and brackets, a 20 MB line of one field, a NUL-laden binary line,
    // a lone CR, and a final huge line without a newline.
    input.extend(std::iter::repeat_n(b"\"[".iter().copied(), 10_000_000).flatten());
    input.push(b'\n');
    input.extend(std::iter::repeat_n(b'7', 20_000_000));
    input.push(b'\n');
    input.extend((0..=255u8).cycle().take(100_000));
    input.push(b'\n');
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(good.as_bytes());
    input.extend(std::iter::repeat_n(b' ', 10_000_000));
    let t = parse_bytes(&input, "hostile.log", &ParseOptions::default()).unwrap();
    assert_eq!(t.records.len(), 6);
    // The 0..=255 line holds '\n' bytes itself, so it splits into several malformed lines.
    assert!(t.malformed_count >= 3, "{}", t.summary());
    assert_eq!(t.records.len() as u64 + t.malformed_count, t.lines_read);
}

#[test]
fn a_test_bed_request_log_is_detected_and_parsed_whole() {
    // A real capture: DuckDB's iceberg extension through the loopback test bed.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../traces/captured/iceberg/tpch-q06-duckdb-iceberg.csv"
    );
    let text = std::fs::read(path).unwrap();
    let rows = text.iter().filter(|b| **b == b'\n').count() - 1;
    let strict = ParseOptions {
        strict: true,
        ..ParseOptions::default()
    };
    let t = parse_bytes(&text, "q06.csv", &strict).unwrap();
    assert_eq!(t.format, TraceFormat::RequestLog);
    assert_eq!(t.records.len(), rows);
    assert!(t.records.iter().all(|r| r.total_ns.is_some()));
    let gets = t
        .records
        .iter()
        .filter(|r| r.operation == tracefit::Operation::Get);
    assert!(gets.clone().all(|r| r.offset_bytes.is_some()));
    // The format can be asked for, and another file is then refused.
    let asked = ParseOptions {
        format: Some(TraceFormat::RequestLog),
        ..strict.clone()
    };
    assert!(parse_bytes(&text, "q06.csv", &asked).is_ok());
    let e = parse_bytes(b"start_ns,end_ns\n1,2\n", "x.csv", &asked).unwrap_err();
    assert!(e.to_string().contains("method"), "{e}");
}
