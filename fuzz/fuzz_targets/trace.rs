//! The access-log, sim-trace and test-bed request-log parsers: any bytes give a parsed trace (malformed lines
//! counted) or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracefit::{parse_bytes, ParseOptions, TraceFormat};

fuzz_target!(|bytes: &[u8]| {
    for format in [
        None,
        Some(TraceFormat::S3AccessLog),
        Some(TraceFormat::SimTrace),
        Some(TraceFormat::RequestLog),
    ] {
        let opts = ParseOptions {
            format,
            ..ParseOptions::default()
        };
        if let Ok(t) = parse_bytes(bytes, "fuzz.log", &opts) {
            assert!(
                t.records.len() as u64 <= t.lines_read,
                "more records than lines"
            );
        }
    }
});
