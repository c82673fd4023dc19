//! Worked examples from `docs/findings.md` and `docs/peers.md`, run through the public API.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use coalescer::{
    arrow_cpp_from_network_metrics, coalesce, CachedBytes, CoalesceError, CoalescePolicy,
    LazyCoalescer, NeededRange, NothingCached, ReadTask, WHOLE_RANGES,
};
use layout::ByteRange;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

fn needed(ranges: &[(u64, u64)]) -> Vec<NeededRange> {
    ranges
        .iter()
        .map(|&(s, e)| NeededRange::new(ByteRange::new(s, e)))
        .collect()
}

fn preset(name: &str) -> CoalescePolicy {
    CoalescePolicy::preset(name).unwrap()
}

fn spans(tasks: &[ReadTask]) -> Vec<(u64, u64)> {
    tasks.iter().map(|t| (t.range.start, t.range.end)).collect()
}

/// F3 / q20: per row group two wanted columns (~25 KB together), then 3.4 MB of unwanted
/// columns, then a wanted 640-byte column; row groups 16 MiB apart.
fn q20_like(row_groups: u64) -> Vec<NeededRange> {
    let mut out = Vec::new();
    for rg in 0..row_groups {
        let base = rg * 16 * MIB;
        out.push((base, base + 12_000));
        out.push((base + 12_000, base + 25_000));
        let tiny = base + 25_000 + 3_400_000;
        out.push((tiny, tiny + 640));
    }
    needed(&out)
}

#[test]
fn q20_tiny_column_is_bridged_by_base_and_not_by_redesign() {
    let ranges = q20_like(4);
    let base = coalesce(&ranges, &NothingCached, &preset("clickhouse-base")).unwrap();
    assert_eq!(base.len(), 4, "one read per row group: {:?}", spans(&base));
    for t in &base {
        let len = t.range.len();
        assert!(
            (3 * MIB..4 * MIB).contains(&len),
            "~3.5 MB read expected, got {len}"
        );
        assert_eq!(t.serves.len(), 3);
    }

    let redesign = coalesce(&ranges, &NothingCached, &preset("clickhouse-redesign")).unwrap();
    assert_eq!(
        redesign.len(),
        8,
        "two reads per row group: {:?}",
        spans(&redesign)
    );
    let fetched: u64 = redesign.iter().map(|t| t.range.len()).sum();
    let needed_bytes: u64 = ranges.iter().map(|n| n.range.len()).sum();
    assert_eq!(fetched, needed_bytes, "no gap bytes read");
    let base_fetched: u64 = base.iter().map(|t| t.range.len()).sum();
    assert!(
        base_fetched > 100 * fetched,
        "base amplification {base_fetched} / {fetched}"
    );
}

/// F4: a small file whose five wanted columns (a few hundred bytes each) lie a few KB apart;
/// one read would waste about 20 KB at more than 8x.
fn small_file_columns() -> Vec<NeededRange> {
    let sizes = [300, 400, 350, 300, 450];
    let gaps = [2 * KIB, 9 * KIB, 3 * KIB, 6 * KIB];
    let mut out = Vec::new();
    let mut at = 4 * KIB;
    for (k, size) in sizes.iter().enumerate() {
        out.push((at, at + size));
        at += size + gaps.get(k).copied().unwrap_or(0);
    }
    needed(&out)
}

#[test]
fn small_file_floor_keeps_one_read_and_ratio_alone_splits_it() {
    let ranges = small_file_columns();
    let needed_bytes: u64 = ranges.iter().map(|n| n.range.len()).sum();
    let hull = ranges.last().unwrap().range.end - ranges[0].range.start;
    let waste = hull - needed_bytes;
    assert!(
        (15 * KIB..25 * KIB).contains(&waste),
        "about 20 KB wasted: {waste}"
    );
    assert!(hull as f64 / needed_bytes as f64 > 8.0);

    let defaults = coalesce(&ranges, &NothingCached, &preset("clickhouse-redesign")).unwrap();
    assert_eq!(
        spans(&defaults),
        vec![(ranges[0].range.start, ranges[4].range.end)]
    );

    let mut floor0 = preset("clickhouse-redesign");
    if let CoalescePolicy::ClickHouseRedesign {
        read_amplification_floor_bytes,
        ..
    } = &mut floor0
    {
        *read_amplification_floor_bytes = 0;
    }
    let split = coalesce(&ranges, &NothingCached, &floor0).unwrap();
    assert!(
        (3..=4).contains(&split.len()),
        "three or four reads: {:?}",
        spans(&split)
    );
    for t in &split {
        assert!(t.range.len() as f64 <= 8.0 * t.needed_bytes() as f64);
    }
    // Base reads the file in one go too (gaps far below 4 MiB).
    let base = coalesce(&ranges, &NothingCached, &preset("clickhouse-base")).unwrap();
    assert_eq!(base.len(), 1);
}

#[test]
fn arrow_cpp_network_metrics_worked_example() {
    let (hole, range) = arrow_cpp_from_network_metrics(5_000_000, 500.0 * MIB as f64);
    assert_eq!((hole, range), (5 * MIB / 2, 45 * MIB / 2));
    // The derived limits make a valid policy.
    let p = CoalescePolicy::ArrowCpp {
        hole_size_limit_bytes: hole,
        range_size_limit_bytes: range,
    };
    assert_eq!(p.validate(), Ok(()));
}

/// A cache that holds every byte of one range.
struct Holds(ByteRange);

impl CachedBytes for Holds {
    fn cached_bytes(&self, r: ByteRange) -> u64 {
        r.end
            .min(self.0.end)
            .saturating_sub(r.start.max(self.0.start))
    }
}

#[test]
fn redesign_reads_through_a_cached_gap() {
    // Two columns 3 MiB apart: too far for the 2 MiB gap unless the gap is cached.
    let ranges = needed(&[(0, 300 * KIB), (3 * MIB, 3 * MIB + 300 * KIB)]);
    let p = preset("clickhouse-redesign");
    assert_eq!(coalesce(&ranges, &NothingCached, &p).unwrap().len(), 2);
    let cache = Holds(ByteRange::new(300 * KIB, 3 * MIB));
    let through = coalesce(&ranges, &cache, &p).unwrap();
    assert_eq!(spans(&through), vec![(0, 3 * MIB + 300 * KIB)]);
    // A gap only partly cached: 1.7 MiB of it uncached, fewer than the 2 MiB gap, and 1.7 MiB
    // of waste for 600 KiB needed stays within 8x. (ClickHouse's `gapIsCached` would count
    // this gap whole: see `presets/clickhouse_redesign.rs`.)
    let partly = Holds(ByteRange::new(300 * KIB, MIB + 300 * KIB));
    assert_eq!(coalesce(&ranges, &partly, &p).unwrap().len(), 1);
    // Less of it cached: 2.45 MiB uncached is beyond the gap.
    let less = Holds(ByteRange::new(300 * KIB, 300 * KIB + MIB / 4));
    assert_eq!(coalesce(&ranges, &less, &p).unwrap().len(), 2);
    // With read-through off the cache is ignored.
    let mut off = p.clone();
    if let CoalescePolicy::ClickHouseRedesign {
        read_through_cached,
        ..
    } = &mut off
    {
        *read_through_cached = false;
    }
    assert_eq!(coalesce(&ranges, &cache, &off).unwrap().len(), 2);
}

#[test]
fn base_incidental_rule_and_groups() {
    let seek = 4 * MIB;
    let mut ranges = needed(&[(0, 1000), (2000, 2000 + 5 * MIB), (6 * MIB, 6 * MIB + 1000)]);
    // A large neighbour that is not likely used is not read incidentally...
    ranges[1].likely_used = false;
    // (range 2 still joins range 1's own task: 1 MiB gap, and it is small.)
    let tasks = coalesce(&ranges, &NothingCached, &preset("clickhouse-base")).unwrap();
    assert_eq!(spans(&tasks), vec![(0, 1000), (2000, 6 * MIB + 1000)]);
    // ...but a likely-used one is.
    ranges[1].likely_used = true;
    let tasks = coalesce(&ranges, &NothingCached, &preset("clickhouse-base")).unwrap();
    assert_eq!(tasks.len(), 1, "{:?}", spans(&tasks));
    assert!(tasks[0].range.len() < 4 * seek);

    // Pages of one split chunk (group 7) coalesce with each other only.
    let mut split = needed(&[(0, 100), (200, 300), (400, 500), (600, 700)]);
    split[1].group = 7;
    split[2].group = 7;
    let tasks = coalesce(&split, &NothingCached, &preset("clickhouse-base")).unwrap();
    assert_eq!(spans(&tasks), vec![(0, 100), (200, 500), (600, 700)]);
    assert_eq!(split[0].group, WHOLE_RANGES);
}

#[test]
fn base_task_ends_under_bytes_per_read_task_past_its_first_range() {
    // 1 MiB ranges 1 KiB apart. ClickHouse's cap counts from the first range's end
    // (`Prefetcher.cpp`, "Go right": `initial_offset = end_offset`): a range joins while it ends
    // less than 16 MiB past it, so 16 join (a 17th would end 16 KiB past that), and the span,
    // 16 MiB + 15 KiB, passes the cap.
    let stride = MIB + KIB;
    let ranges: Vec<(u64, u64)> = (0..40u64).map(|k| (k * stride, k * stride + MIB)).collect();
    // The redesign keeps the base's cap (its gaps here are far under its 2 MiB gap and floor).
    for name in ["clickhouse-base", "clickhouse-redesign"] {
        let tasks = coalesce(&needed(&ranges), &NothingCached, &preset(name)).unwrap();
        assert_eq!(tasks[0].serves.len(), 16, "{name}");
        assert_eq!(spans(&tasks[..1]), vec![(0, 15 * stride + MIB)], "{name}");
        for t in &tasks {
            let first_end = t.range.start + MIB;
            assert!(t.range.end < first_end + 16 * MIB, "{name}: {}", t.range);
        }
    }
    // A long first range carries the cap with it: 10 MiB, then 1 MiB ranges up to 26 MiB.
    let mut ranges = vec![(0, 10 * MIB)];
    ranges.extend((0..20u64).map(|k| (10 * MIB + KIB + k * stride, 11 * MIB + KIB + k * stride)));
    let tasks = coalesce(&needed(&ranges), &NothingCached, &preset("clickhouse-base")).unwrap();
    let last = tasks[0].serves.len() - 1;
    assert_eq!(last, 15, "{:?}", spans(&tasks));
    assert!(tasks[0].range.end < 26 * MIB && tasks[0].range.len() > 16 * MIB);
}

#[test]
fn lazy_base_caps_each_side_from_the_first_needed_range() {
    // Leftwards a range joins while it starts less than the cap before the first-needed one's
    // start; rightwards while it ends less than the cap past its end.
    let stride = MIB + KIB;
    let ranges: Vec<(u64, u64)> = (0..40u64).map(|k| (k * stride, k * stride + MIB)).collect();
    let mut lazy = LazyCoalescer::new(needed(&ranges), 4 * MIB, 0).unwrap();
    let t = lazy.task_for(20).unwrap().unwrap();
    // 20 x 1025 KiB - 16 MiB = 4116 KiB: range 5 (5125 KiB) is the first to start after it;
    // 20 x 1025 KiB + 1 MiB + 16 MiB = 37908 KiB: range 35 (36899 KiB) is the last to end before.
    assert_eq!(
        spans(std::slice::from_ref(&t)),
        vec![(5 * stride, 35 * stride + MIB)]
    );
    assert_eq!(t.serves.len(), 31);
}

#[test]
fn lazy_coalescer_extends_both_ways_over_unstarted_ranges() {
    let ranges = needed(&[(0, 100), (200, 300), (400, 500), (10 * MIB, 10 * MIB + 1)]);
    let mut lazy = LazyCoalescer::new(ranges, 4 * MIB, 0).unwrap();
    // First use of the middle range takes in both neighbours, not the far one.
    let t = lazy.task_for(1).unwrap().unwrap();
    assert_eq!((t.range.start, t.range.end), (0, 500));
    assert!(lazy.is_started(0) && lazy.is_started(2) && !lazy.is_started(3));
    assert_eq!(lazy.task_for(2).unwrap(), None);
    let far = lazy.task_for(3).unwrap().unwrap();
    assert_eq!(far.serves.len(), 1);
    assert!(matches!(
        lazy.task_for(4),
        Err(CoalesceError::NoSuchRange { index: 4, len: 4 })
    ));
    // A range already started stops the extension: later ranges form their own task.
    let ranges = needed(&[(0, 100), (200, 300), (400, 500)]);
    let mut lazy = LazyCoalescer::new(ranges, 4 * MIB, 0).unwrap();
    let t2 = lazy.task_for(2).unwrap().unwrap();
    assert_eq!(
        spans(&[t2]),
        vec![(0, 500)],
        "extends left over unstarted ranges"
    );
}

#[test]
fn trino_and_polars_split_large_ranges_and_serve_pieces_in_order() {
    let ranges = needed(&[(0, 20 * MIB)]);
    let trino = coalesce(&ranges, &NothingCached, &preset("trino")).unwrap();
    assert_eq!(
        spans(&trino),
        vec![(0, 8 * MIB), (8 * MIB, 16 * MIB), (16 * MIB, 20 * MIB)]
    );
    let offsets: Vec<u64> = trino.iter().map(|t| t.serves[0].needed_offset).collect();
    assert_eq!(offsets, vec![0, 8 * MIB, 16 * MIB]);
    // 20 MiB in 8 MiB chunks: 3 parts of 6.67 MiB are nearer 8 MiB than 2 of 10 MiB.
    let polars = coalesce(&ranges, &NothingCached, &preset("polars")).unwrap();
    assert_eq!(polars.len(), 3, "{:?}", spans(&polars));
    let part = 20 * MIB / 3;
    assert_eq!(polars[1].range.len(), part);
    assert_eq!(polars[2].serves[0].needed_offset, 20 * MIB - part);
}

#[test]
fn peers_gap_thresholds_at_their_edges() {
    // gap exactly at each preset's threshold, then one byte more.
    let mut ratio_off = preset("clickhouse-redesign");
    if let CoalescePolicy::ClickHouseRedesign {
        max_read_amplification,
        ..
    } = &mut ratio_off
    {
        *max_read_amplification = 0.0;
    }
    let cases: [(&str, u64, bool); 8] = [
        ("arrow-rs", MIB, true),
        ("arrow-cpp", 8 * KIB, true),
        ("duckdb", 16 * KIB, true),
        ("velox", 512 * KIB, false),
        ("trino", MIB, true),
        ("hadoop-s3a", 128 * KIB, false),
        ("clickhouse-base", 4 * MIB, false),
        // `end_offset + gap_bytes <= r.start` refuses: a gap must be shorter.
        ("clickhouse-redesign", 2 * MIB, false),
    ];
    for (name, gap, merges_at_gap) in cases {
        // The redesign's ratio would refuse 2 MiB of waste for 2 KB needed: switch it off.
        let p = if name == "clickhouse-redesign" {
            ratio_off.clone()
        } else {
            preset(name)
        };
        let at = needed(&[(0, 1000), (1000 + gap, 2000 + gap)]);
        let n = coalesce(&at, &NothingCached, &p).unwrap().len();
        assert_eq!(n == 1, merges_at_gap, "{name} at gap {gap}");
        let beyond = needed(&[(0, 1000), (1001 + gap, 2001 + gap)]);
        assert_eq!(
            coalesce(&beyond, &NothingCached, &p).unwrap().len(),
            2,
            "{name} beyond"
        );
        let below = needed(&[(0, 1000), (999 + gap, 1999 + gap)]);
        assert_eq!(
            coalesce(&below, &NothingCached, &p).unwrap().len(),
            1,
            "{name} below"
        );
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let p = preset("arrow-rs");
    assert_eq!(
        coalesce(&[], &NothingCached, &p),
        Err(CoalesceError::EmptyInput)
    );
    let overlapping = needed(&[(0, 10), (5, 20)]);
    assert!(matches!(
        coalesce(&overlapping, &NothingCached, &p),
        Err(CoalesceError::Overlapping { .. })
    ));
    let unsorted = needed(&[(100, 110), (0, 10)]);
    assert!(matches!(
        coalesce(&unsorted, &NothingCached, &p),
        Err(CoalesceError::Unsorted { .. })
    ));
    let empty = needed(&[(0, 10), (20, 20)]);
    assert!(matches!(
        coalesce(&empty, &NothingCached, &p),
        Err(CoalesceError::EmptyRange { .. })
    ));
    let mut absurd = preset("clickhouse-redesign");
    if let CoalescePolicy::ClickHouseRedesign {
        max_read_amplification,
        ..
    } = &mut absurd
    {
        *max_read_amplification = 0.5;
    }
    let e = coalesce(&needed(&[(0, 10)]), &NothingCached, &absurd).unwrap_err();
    assert!(
        e.to_string().contains("max_read_amplification = 0.5"),
        "{e}"
    );
    assert!(LazyCoalescer::new(Vec::new(), 1, 1).is_err());
    assert!(matches!(
        LazyCoalescer::for_policy(needed(&[(0, 10)]), &preset("arrow-rs")),
        Err(CoalesceError::NotLazy { preset: "arrow-rs" })
    ));
    let lazy = LazyCoalescer::for_policy(needed(&[(0, 10)]), &preset("clickhouse-base"));
    assert_eq!(lazy.map(|l| l.needed().len()).ok(), Some(1));
    // Ranges at the very end of the address space do not overflow.
    let edge = needed(&[(0, 10), (u64::MAX - 10, u64::MAX)]);
    for name in coalescer::PRESET_NAMES {
        let tasks = coalesce(&edge, &NothingCached, &preset(name)).unwrap();
        assert!(!tasks.is_empty(), "{name}");
    }
}
