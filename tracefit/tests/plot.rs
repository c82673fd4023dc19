//! ECDF plots render to valid PNG and SVG files of the expected size.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use common::{to_access_log, Latency, Synth};
use tracefit::{fit_store, parse_bytes, plot_store_fit, FitOptions, ParseOptions, PlotUnit};

fn be_u32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Walks the PNG chunks: returns (width, height, bit depth, colour type, inflated IDAT length).
fn inspect_png(bytes: &[u8]) -> (u32, u32, u8, u8, usize) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let mut header = None;
    let mut idat = Vec::new();
    let mut saw_end = false;
    while at + 8 <= bytes.len() {
        let len = be_u32(&bytes[at..]) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        let crc = be_u32(&bytes[at + 8 + len..]);
        assert_eq!(
            crc,
            crc32fast::hash(&bytes[at + 4..at + 8 + len]),
            "chunk CRC"
        );
        match kind {
            b"IHDR" => header = Some((be_u32(data), be_u32(&data[4..]), data[8], data[9])),
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => saw_end = true,
            _ => {}
        }
        at += 12 + len;
    }
    assert!(saw_end, "IEND chunk");
    let (w, h, depth, colour) = header.expect("IHDR chunk");
    let raw = miniz_oxide::inflate::decompress_to_vec_zlib(&idat).expect("IDAT inflates");
    (w, h, depth, colour, raw.len())
}

#[test]
fn ecdf_plots_are_valid_png_and_svg() {
    let synth = Synth {
        requests: 4_000,
        latency: Latency::Lognormal {
            median_ns: 27e6,
            sigma: 0.5,
        },
        ns_per_mib: 0.0,
        bandwidth_median: 57.0 * 1024.0 * 1024.0,
        bandwidth_sigma: 0.3,
        rate_per_s: 300.0,
        error_share: 0.0,
        seed: 3,
    };
    let log = to_access_log(&synth.generate());
    let trace = parse_bytes(log.as_bytes(), "plot.log", &ParseOptions::default()).unwrap();
    let fit = fit_store(&trace, &FitOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = plot_store_fit(&fit, dir.path(), "plot").unwrap();
    assert_eq!(written.len(), 4);

    let png = std::fs::read(dir.path().join("plot-first-byte.png")).unwrap();
    let (w, h, depth, colour, raw) = inspect_png(&png);
    assert_eq!((w, h), tracefit::plot::PLOT_SIZE);
    assert_eq!((depth, colour), (8, 2), "8-bit RGB");
    assert_eq!(
        raw,
        (h as usize) * (1 + 3 * w as usize),
        "one filter byte plus RGB per row"
    );
    // A blank 1000x650 PNG compresses to a few KiB; curves, axes and text take more.
    assert!(
        png.len() > 15_000 && png.len() < 3_000_000,
        "PNG of {} bytes",
        png.len()
    );

    let svg = std::fs::read_to_string(dir.path().join("plot-bandwidth.svg")).unwrap();
    assert!(svg.starts_with("<svg") || svg.contains("<svg"), "SVG root");
    assert!(svg.contains("cumulative probability"), "y axis label");
    assert!(svg.contains("MiB/s"), "x axis unit");
    assert!(
        svg.contains("lognormal (KS D = "),
        "legend with KS statistic"
    );
    assert!(svg.trim_end().ends_with("</svg>"));
}

#[test]
fn a_bad_extension_is_an_error_not_a_panic() {
    let fit = tracefit::fit::fit_candidates(vec![1.0, 2.0, 3.0, 4.0], 0.0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = tracefit::plot_ecdf(
        &fit,
        "t",
        "x",
        PlotUnit::Milliseconds,
        &dir.path().join("x.jpg"),
    )
    .unwrap_err();
    assert!(err.to_string().contains(".png or .svg"), "{err}");
}
