//! The example generator specs in tests/specs/ (shapes from `docs/findings.md`) parse, generate
//! valid tables with the stated shape, and survive the layout file format.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use layout::format::{read_table, write_table};
use layout::Table;
use tablegen::{generate, GeneratorSpec};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn spec(yaml: &str) -> GeneratorSpec {
    serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{e}"))
}

fn table(yaml: &str) -> Table {
    let t = generate(&spec(yaml), 42).unwrap_or_else(|e| panic!("{e}"));
    t.validate().unwrap_or_else(|e| panic!("{e}"));
    t
}

fn round_trip(t: &Table) -> usize {
    let bytes = write_table(t).unwrap();
    assert_eq!(&read_table(&bytes).unwrap(), t);
    bytes.len()
}

fn data_bytes(f: &layout::FileLayout) -> u64 {
    f.row_groups.iter().map(|rg| rg.compressed_bytes()).sum()
}

#[test]
fn many_small_files() {
    let t = table(include_str!("specs/many-small-files.yaml"));
    assert_eq!(t.files.len(), 17_554);
    assert_eq!(t.schemas[0].columns.len(), 437);
    assert!(t.files.iter().all(|f| f.row_groups.len() == 1));
    let total = t.total_bytes();
    assert!(
        (60 * GIB..80 * GIB).contains(&total),
        "total {}",
        units::format_bytes(total)
    );
    let mut data: Vec<u64> = t.files.iter().map(data_bytes).collect();
    data.sort_unstable();
    let median = data[data.len() / 2];
    assert!(
        (20 * KIB..32 * KIB).contains(&median),
        "median data {}",
        units::format_bytes(median)
    );
    // Every footer of this width needs ClickHouse's second serial footer read.
    assert!(t
        .files
        .iter()
        .all(|f| f.footer_len_bytes as u64 + 8 > 64 * KIB));
    let size = round_trip(&t);
    assert!(size < 100_000_000, "layout file of {size} bytes");
    eprintln!(
        "many-small-files: {} chunks, total {}, layout file {} bytes",
        t.column_chunk_count(),
        units::format_bytes(total),
        size
    );
}

#[test]
fn single_large_file_and_control() {
    let t = table(include_str!("specs/single-large-file.yaml"));
    assert_eq!(t.files.len(), 1);
    assert_eq!(t.files[0].row_groups.len(), 459);
    assert!(t.files[0]
        .row_groups
        .iter()
        .all(|rg| rg.compressed_bytes() == 16 * MIB));
    assert!(
        !t.files[0].pages.is_empty(),
        "large chunks list their pages"
    );
    round_trip(&t);
    let c = table(include_str!("specs/single-large-file-control.yaml"));
    assert_eq!(c.files.len(), 200);
    assert!(c
        .files
        .iter()
        .all(|f| f.row_groups.len() == 1 && data_bytes(f) == 16 * MIB));
    round_trip(&c);
}

#[test]
fn iceberg_bench_q20_shape() {
    let t = table(include_str!("specs/iceberg-bench.yaml"));
    assert_eq!(t.files.len(), 2300);
    let rgs: u64 = t.files.iter().map(|f| f.row_groups.len() as u64).sum();
    let mean = rgs as f64 / 2300.0;
    assert!((28.0..30.0).contains(&mean), "mean row groups {mean}");
    for f in t.files.iter().take(50) {
        for rg in &f.row_groups {
            let c = &rg.columns;
            assert_eq!(c[3].compressed_bytes(), 640);
            // Cluster A (columns 2..=4) about 25 KB, then ~3.4 MB to cluster B (20, 21).
            let cluster_a = c[4].range().end - c[2].range().start;
            let gap = c[20].range().start - c[4].range().end;
            assert!((24_000..26_000).contains(&cluster_a), "{cluster_a}");
            assert!((3_300_000..3_500_000).contains(&gap), "{gap}");
            assert!(c[21].bloom_filter().is_some() && c[20].bloom_filter().is_none());
        }
    }
    let ice = t.iceberg.as_ref().unwrap();
    assert_eq!(ice.manifest_bytes.len(), 32);
    round_trip(&t);
}

#[test]
fn clickbench_single_and_partitioned() {
    let one = table(include_str!("specs/clickbench-hits.yaml"));
    assert_eq!(one.files.len(), 1);
    assert_eq!(one.schemas[0].columns.len(), 105);
    assert_eq!(one.files[0].num_rows(), 100_000_000);
    let data = data_bytes(&one.files[0]);
    assert_eq!(data, 14 * GIB);
    let parts = table(include_str!("specs/clickbench-partitioned.yaml"));
    assert_eq!(parts.files.len(), 100);
    let part_data: u64 = parts.files.iter().map(data_bytes).sum();
    assert!(
        part_data.abs_diff(data) < data / 1000,
        "{part_data} vs {data}"
    );
    assert_eq!(
        parts.files.iter().map(|f| f.num_rows()).sum::<u64>(),
        100_000_000
    );
    // Same seed, same column weights: column k takes the same share of bytes in both.
    let share = |t: &Table, k: usize| {
        let col: u64 = t
            .files
            .iter()
            .flat_map(|f| &f.row_groups)
            .map(|rg| rg.columns[k].compressed_bytes())
            .sum();
        let all: u64 = t.files.iter().map(data_bytes).sum();
        col as f64 / all as f64
    };
    for k in [0, 17, 104] {
        assert!((share(&one, k) - share(&parts, k)).abs() < 1e-4);
    }
    round_trip(&one);
    round_trip(&parts);
}
