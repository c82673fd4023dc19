//! Each preset reproduces the figures its `source:` cites.

mod store_common;

use models::store::{ClientEvent, StoreSpec};
use store_common::{closed_loop, quantile, MIB};

#[test]
fn every_preset_loads_and_cites_a_source() {
    for name in StoreSpec::preset_names() {
        let spec = StoreSpec::preset(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(spec.source.len() > 40, "{name} needs a real source");
        assert_eq!(spec.name, name);
    }
    let err = StoreSpec::preset("s3-standrd").unwrap_err().to_string();
    assert!(
        err.contains("s3-standard"),
        "lists the available presets: {err}"
    );
}

#[test]
fn s3_standard_small_get_first_byte() {
    // "median about 25-30 ms for 1 KiB objects; p95 about 75 ms".
    let spec = StoreSpec::preset("s3-standard").unwrap();
    let run = closed_loop(&spec, 1, 8, &vec![(1024, 0); 20_000]);
    let fb = run.first_byte_ms();
    let (p50, p95) = (quantile(&fb, 0.5), quantile(&fb, 0.95));
    eprintln!("s3-standard 1 KiB first byte: p50 {p50:.1} ms, p95 {p95:.1} ms");
    assert!((25.0..=30.0).contains(&p50), "p50 {p50} ms");
    assert!((65.0..=85.0).contains(&p95), "p95 {p95} ms");
}

#[test]
fn s3_standard_one_stream_bandwidth() {
    // "per-request bandwidth 25-95 MiB/s, median 55-60 MiB/s, about 15% at a ~95 MiB/s ceiling".
    let spec = StoreSpec::preset("s3-standard").unwrap();
    let run = closed_loop(&spec, 2, 1, &vec![(64 * MIB, 0); 2_000]);
    let bw: Vec<f64> = run
        .done_ns
        .iter()
        .map(|(t, d)| (64 * MIB) as f64 / ((d - run.first_byte_ns[t]) as f64 / 1e9) / MIB as f64)
        .collect();
    let med = quantile(&bw, 0.5);
    eprintln!("s3-standard one stream: median {med:.1} MiB/s");
    assert!((55.0..=60.0).contains(&med), "median stream {med} MiB/s");
    let at_ceiling = bw.iter().filter(|b| **b > 94.5).count() as f64 / bw.len() as f64;
    eprintln!("s3-standard one stream: {at_ceiling:.3} at ceiling");
    assert!(
        (0.11..=0.19).contains(&at_ceiling),
        "fraction at ceiling {at_ceiling}"
    );
    assert!(bw.iter().all(|b| (24.9..=95.1).contains(b)));
}

#[test]
fn s3_standard_latency_grows_about_20ms_per_mib() {
    // "for 8-32 MiB objects about +20 ms per MiB", fitted as the slope of mean latency.
    let spec = StoreSpec::preset("s3-standard").unwrap();
    let mean = |mib: u64| {
        let run = closed_loop(&spec, 3 + mib, 4, &vec![(mib * MIB, 0); 2_000]);
        let l = run.latencies_ms();
        l.iter().sum::<f64>() / l.len() as f64
    };
    let slope = (mean(32) - mean(8)) / 24.0;
    eprintln!("s3-standard 8-32 MiB slope: {slope:.1} ms/MiB");
    assert!((17.0..=23.0).contains(&slope), "slope {slope} ms per MiB");
}

#[test]
fn s3_standard_250_large_gets_approach_the_nic() {
    // "with 16 MiB requests, about 200-250 concurrent requests saturate a 100 Gbit/s instance",
    // while one stream alone gets 55-60 MiB/s (above). The same source's "median about 75
    // Gbit/s achieved on S3" at that depth is not reproduced (about 90 here; the preset's
    // `source:` says so): this checks the saturation, not that median.
    let spec = StoreSpec::preset("s3-standard").unwrap();
    let n = 5_000;
    let run = closed_loop(&spec, 4, 250, &vec![(16 * MIB, 0); n]);
    assert_eq!(run.done_ns.len(), n);
    let gbit = (n as u64 * 16 * MIB) as f64 * 8.0 / (run.end_ns as f64 / 1e9) / 1e9;
    eprintln!("s3-standard 250 x 16 MiB: {gbit:.1} Gbit/s");
    assert!((85.0..=100.0).contains(&gbit), "aggregate {gbit} Gbit/s");
    let (peak, mean) = (run.stats.peak_concurrency, run.stats.mean_concurrency);
    assert_eq!(peak, 250);
    // Below 250 only while the last reads drain (about half a second of 7.5 s).
    assert!(
        (220.0..=250.0).contains(&mean),
        "time-weighted mean concurrency {mean}"
    );
    assert!(
        run.max_nic_rate <= 12.5e9 * (1.0 + 1e-9),
        "NIC cap exceeded: {}",
        run.max_nic_rate
    );
    let fewer = closed_loop(&spec, 4, 50, &vec![(16 * MIB, 0); 1_000]);
    let gbit50 = (1_000 * 16 * MIB) as f64 * 8.0 / (fewer.end_ns as f64 / 1e9) / 1e9;
    eprintln!("s3-standard 50 x 16 MiB: {gbit50:.1} Gbit/s");
    assert!(
        gbit50 < 0.4 * gbit,
        "50 streams ({gbit50} Gbit/s) are far from the cap"
    );
}

#[test]
fn s3_standard_prices() {
    // "reading 1 TiB costs about $0.026 in 16 MiB GETs" (65,536 GETs at $0.0004 per 1,000).
    let spec = StoreSpec::preset("s3-standard").unwrap();
    let run = closed_loop(&spec, 5, 64, &vec![(16 * MIB, 0); 4_096]);
    let per_tib = run.stats.cost_usd * 16.0;
    eprintln!("s3-standard 1 TiB in 16 MiB GETs: ${per_tib:.4}");
    assert!((per_tib - 0.0262).abs() < 0.001, "{per_tib} $/TiB");
}

#[test]
fn s3_express_first_byte() {
    // "about 5 ms p50 and p95 for small GETs"; "$0.00003 per 1,000 plus $0.0006 per GB".
    let spec = StoreSpec::preset("s3-express-one-zone").unwrap();
    let run = closed_loop(&spec, 6, 8, &vec![(1024, 0); 20_000]);
    let fb = run.first_byte_ms();
    let (p50, p95) = (quantile(&fb, 0.5), quantile(&fb, 0.95));
    eprintln!("express first byte: p50 {p50:.2} ms, p95 {p95:.2} ms");
    assert!((4.5..=5.5).contains(&p50), "p50 {p50} ms");
    assert!((5.0..=6.5).contains(&p95), "p95 {p95} ms");
    let want = 20_000.0 * 0.00003 / 1000.0 + 20_000.0 * 1024.0 / 1e9 * 0.0006;
    assert!(
        (run.stats.cost_usd - want).abs() < 1e-9,
        "{} vs {want}",
        run.stats.cost_usd
    );
}

#[test]
fn local_nvme_latency_and_bandwidth() {
    let spec = StoreSpec::preset("local-nvme").unwrap();
    let small = closed_loop(&spec, 7, 1, &vec![(4096, 0); 10_000]);
    let p50_us = quantile(&small.first_byte_ms(), 0.5) * 1e3;
    eprintln!("local-nvme 4 KiB: p50 {p50_us:.1} us");
    assert!((80.0..=100.0).contains(&p50_us), "p50 {p50_us} us");
    let big = closed_loop(&spec, 8, 8, &vec![(64 * MIB, 0); 400]);
    let gb_s = (400 * 64 * MIB) as f64 / (big.end_ns as f64 / 1e9) / 1e9;
    eprintln!("local-nvme 8 x 64 MiB: {gb_s:.2} GB/s");
    assert!((5.0..=6.5).contains(&gb_s), "several GB/s: {gb_s}");
    assert!(
        !big.events
            .iter()
            .any(|(_, e)| matches!(e, ClientEvent::Progress { .. })),
        "a pread delivers all at once"
    );
    assert_eq!(big.stats.cost_usd, 0.0);
}

#[test]
fn s3_standard_findings_preset() {
    // `docs/findings.md`: at about 25 GETs in flight, 26-40 ms per GET up to about 2 MB; a
    // 4.3 MB GET 65-86 ms; 4.3 MB per GET gave about 1.7 GB/s per node.
    let spec = StoreSpec::preset("s3-standard-findings").unwrap();
    let small = closed_loop(&spec, 9, 25, &vec![(1_000_000, 0); 5_000]);
    let p50 = quantile(&small.latencies_ms(), 0.5);
    eprintln!("findings 1 MB at 25 in flight: p50 {p50:.1} ms");
    assert!((26.0..=40.0).contains(&p50), "1 MB GET p50 {p50} ms");
    let big = closed_loop(&spec, 10, 25, &vec![(4_300_000, 0); 5_000]);
    let p50 = quantile(&big.latencies_ms(), 0.5);
    eprintln!("findings 4.3 MB at 25 in flight: p50 {p50:.1} ms");
    assert!((65.0..=86.0).contains(&p50), "4.3 MB GET p50 {p50} ms");
    let gb_s = 5_000.0 * 4.3e6 / (big.end_ns as f64 / 1e9) / 1e9;
    eprintln!("findings 4.3 MB at 25 in flight: {gb_s:.2} GB/s");
    // About 1.5 GB/s here (25 x 4.3 MB over a mean first byte of about 24 ms and 48 ms of
    // transfer), 12% under "about 1.7": the GET latencies above are the fitted figures, and
    // the rate follows from them; 1.4 is the tolerance's lower edge, not the figure.
    assert!((1.4..=2.0).contains(&gb_s), "{gb_s} GB/s per node");
}
