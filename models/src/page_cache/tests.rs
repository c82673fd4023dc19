use super::*;
use proptest::prelude::*;
use rand::SeedableRng;

const MIB: u64 = 1 << 20;

fn rng() -> rand_pcg::Pcg64 {
    rand_pcg::Pcg64::seed_from_u64(42)
}

fn cache(capacity: u64) -> PageCache {
    PageCache::new(&PageCacheSpec::with_capacity(Bytes(capacity)), &mut rng()).unwrap()
}

/// Four fetches of `object` at 30 ms first byte and 100 B/us: a 3 MB budget per island.
fn fit(pc: &mut PageCache, object: u64) {
    for _ in 0..MIN_SAMPLES {
        pc.record_fetch(object, 30_000_000, 30_000_000, 3_000_000);
    }
}

fn summary(frags: &[Fragment]) -> Vec<(u64, u64, bool)> {
    frags
        .iter()
        .map(|f| {
            (
                f.range.start,
                f.range.end,
                f.source == FragmentSource::Cached,
            )
        })
        .collect()
}

#[test]
fn base_rounds_to_blocks_and_splits_around_cached_blocks() {
    let mut pc = cache(1 << 30);
    pc.insert(7, ByteRange::new(2 * MIB, 3 * MIB)); // block 2 cached
                                                    // A read from inside block 0 to inside block 4.
    let frags = pc.plan(7, ByteRange::new(100, 4 * MIB + 5), PageCacheMode::Base);
    assert_eq!(
        summary(&frags),
        // One fetch per missing block (the base build's `populateBlockRange`).
        vec![
            (0, MIB, false),
            (MIB, 2 * MIB, false),
            (2 * MIB, 3 * MIB, true),
            (3 * MIB, 4 * MIB, false),
            (4 * MIB, 5 * MIB, false)
        ]
    );
    let s = pc.stats();
    assert_eq!(
        (s.hits, s.misses, s.hit_bytes, s.miss_bytes),
        (1, 4, MIB, 4 * MIB)
    );
    assert_eq!(s.read_through_bytes, 0);
}

#[test]
fn rounding_stops_at_the_object_end() {
    let mut pc = cache(1 << 30);
    pc.set_object_size(1, 25_000);
    let frags = pc.plan(1, ByteRange::new(10_000, 20_000), PageCacheMode::Base);
    assert_eq!(summary(&frags), vec![(0, 25_000, false)]);
    // Fetching it caches the short last block, so the same read now hits.
    pc.insert(1, frags[0].range);
    assert!(pc.is_cached(1, ByteRange::new(0, 25_000)));
    let again = pc.plan(1, ByteRange::new(10_000, 20_000), PageCacheMode::Base);
    assert_eq!(summary(&again), vec![(0, 25_000, true)]);
}

#[test]
fn insert_caches_whole_blocks_only() {
    let mut pc = cache(1 << 30);
    pc.insert(3, ByteRange::new(MIB / 2, 3 * MIB + 10)); // covers blocks 1 and 2 fully
    assert_eq!(pc.cached_bytes(3, ByteRange::new(0, 4 * MIB)), 2 * MIB);
    assert_eq!(pc.cached_bytes(3, ByteRange::new(MIB + 10, MIB + 20)), 10);
    assert!(!pc.is_cached(3, ByteRange::new(0, 2 * MIB)));
    assert!(pc.is_cached(3, ByteRange::new(MIB, 3 * MIB)));
}

#[test]
fn read_through_merges_short_cached_islands() {
    let mut pc = cache(1 << 30);
    // Blocks 2 (1 MiB island) and 5..9 (4 MiB island) cached; the read covers blocks 0..12.
    pc.insert(9, ByteRange::new(2 * MIB, 3 * MIB));
    pc.insert(9, ByteRange::new(5 * MIB, 9 * MIB));
    let range = ByteRange::new(0, 12 * MIB);
    let base = pc.clone().plan(9, range, PageCacheMode::Base);
    // The base: 7 missing blocks, each its own fetch, and the two cached islands.
    assert_eq!(base.len(), 9, "{:?}", summary(&base));
    // Before four fetches the budget is 0: nothing is read through, but each run of misses is
    // one fetch.
    let unfitted = pc.clone().plan(
        9,
        range,
        PageCacheMode::ReadThrough {
            waste_permille: 1000,
        },
    );
    assert_eq!(
        summary(&unfitted),
        vec![
            (0, 2 * MIB, false),
            (2 * MIB, 3 * MIB, true),
            (3 * MIB, 5 * MIB, false),
            (5 * MIB, 9 * MIB, true),
            (9 * MIB, 12 * MIB, false)
        ]
    );
    // Fitted: 3 MB per island (2 blocks); 4 IO threads: 1000 permille of 7 missing blocks. The
    // 1 MiB island is read through, the 4 MiB one still splits the read.
    fit(&mut pc, 9);
    let frags = pc.plan(
        9,
        range,
        PageCacheMode::ReadThrough {
            waste_permille: waste_permille(4),
        },
    );
    assert_eq!(
        summary(&frags),
        vec![
            (0, 5 * MIB, false),
            (5 * MIB, 9 * MIB, true),
            (9 * MIB, 12 * MIB, false)
        ]
    );
    assert_eq!(frags[0].read_through_bytes, MIB);
    let s = pc.stats();
    assert_eq!(s.read_through_bytes, MIB);
    assert_eq!(s.hits, 4);
    assert_eq!(s.misses, 7);
}

#[test]
fn read_through_disables_itself_at_a_deep_pool() {
    let mut pc = cache(1 << 30);
    pc.insert(9, ByteRange::new(2 * MIB, 3 * MIB));
    let range = ByteRange::new(0, 6 * MIB);
    fit(&mut pc, 9);
    // 64 IO threads: 62 permille of 5 missing blocks rounds to 0 blocks.
    let deep = pc.plan(
        9,
        range,
        PageCacheMode::ReadThrough {
            waste_permille: waste_permille(64),
        },
    );
    assert_eq!(
        summary(&deep),
        vec![
            (0, 2 * MIB, false),
            (2 * MIB, 3 * MIB, true),
            (3 * MIB, 6 * MIB, false)
        ]
    );
    assert_eq!(pc.stats().read_through_bytes, 0);
}

#[test]
fn edge_islands_are_never_read_through() {
    let mut pc = cache(1 << 30);
    pc.insert(4, ByteRange::new(0, MIB));
    fit(&mut pc, 4);
    let frags = pc.plan(
        4,
        ByteRange::new(0, 3 * MIB),
        PageCacheMode::ReadThrough {
            waste_permille: 1000,
        },
    );
    assert_eq!(summary(&frags), vec![(0, MIB, true), (MIB, 3 * MIB, false)]);
}

#[test]
fn warm_fraction_half_gives_about_half_the_blocks() {
    let mut spec = PageCacheSpec::with_capacity(Bytes(1 << 40));
    spec.warm = WarmSpec {
        fraction: 0.5,
        pattern: WarmPattern::Random,
    };
    let mut r = rng();
    let mut pc = PageCache::new(&spec, &mut r).unwrap();
    let size = 4000 * MIB;
    for object in 0..5 {
        pc.warm(object, size, &mut r);
    }
    let cached: u64 = (0..5)
        .map(|o| pc.cached_bytes(o, ByteRange::new(0, size)))
        .sum();
    let frac = cached as f64 / (5 * size) as f64;
    // 20,000 Bernoulli(0.5) blocks: the standard deviation of the fraction is 0.0035.
    assert!((frac - 0.5).abs() < 0.02, "warm fraction {frac}");
    assert_eq!(pc.stats().used_bytes, cached);
    assert_eq!(pc.stats().hits, 0, "warming is not counted as hits");
}

#[test]
fn warm_respects_capacity() {
    let mut spec = PageCacheSpec::with_capacity(Bytes(10 * MIB));
    spec.warm = WarmSpec {
        fraction: 1.0,
        pattern: WarmPattern::Prefix,
    };
    let mut r = rng();
    let mut pc = PageCache::new(&spec, &mut r).unwrap();
    pc.warm(0, 8 * MIB, &mut r);
    pc.warm(1, 8 * MIB, &mut r);
    assert_eq!(pc.stats().used_bytes, 10 * MIB);
    assert_eq!(pc.stats().evictions, 6);
    // The last-warmed object survives whole; the first keeps only its most recent blocks.
    assert_eq!(pc.cached_bytes(1, ByteRange::new(0, 8 * MIB)), 8 * MIB);
    assert_eq!(pc.cached_bytes(0, ByteRange::new(0, 6 * MIB)), 0);
}

#[test]
fn hits_refresh_recency() {
    let mut pc = cache(2 * MIB);
    pc.insert(0, ByteRange::new(0, MIB)); // block A
    pc.insert(1, ByteRange::new(0, MIB)); // block B
    pc.plan(0, ByteRange::new(0, 10), PageCacheMode::Base); // A is used again
    pc.insert(2, ByteRange::new(0, MIB)); // evicts B, the least recently used
    assert!(pc.is_cached(0, ByteRange::new(0, 10)));
    assert!(!pc.is_cached(1, ByteRange::new(0, 10)));
    assert_eq!(pc.stats().evictions, 1);
}

#[test]
fn hit_cost_grows_with_bytes() {
    let pc = cache(1 << 30);
    let small = pc.hit_ns(4096);
    let large = pc.hit_ns(16 * MIB);
    assert!(small >= pc.spec().hit_latency.ns());
    // 16 MiB at 10 GiB/s is about 1.56 ms.
    assert!(
        (1_500_000..1_700_000).contains(&(large - pc.spec().hit_latency.ns())),
        "{large}"
    );
}

#[test]
fn spec_from_yaml_with_units_and_errors() {
    let yaml = "page_cache_max_size: 8GiB\npage_cache_block_size: 2MiB\nwarm: {fraction: 0.5, pattern: prefix}\nhit_latency: 5us\n";
    let spec: PageCacheSpec = serde_saphyr::from_str(yaml).unwrap();
    assert_eq!(spec.page_cache_block_size, Bytes(2 * MIB));
    assert_eq!(spec.hit_latency, Duration(5_000));
    spec.validate().unwrap();
    let unknown =
        serde_saphyr::from_str::<PageCacheSpec>("page_cache_max_size: 8GiB\nblock_sise: 1MiB\n");
    assert!(unknown.unwrap_err().to_string().contains("block_sise"));
    let no_unit = serde_saphyr::from_str::<PageCacheSpec>("page_cache_max_size: 8000\n");
    assert!(no_unit.unwrap_err().to_string().contains("no unit"));
    let tiny = PageCacheSpec {
        page_cache_max_size: Bytes(1000),
        ..spec.clone()
    };
    let e = tiny.validate().unwrap_err().to_string();
    assert!(
        e.contains("page_cache_max_size") && e.contains("one block"),
        "{e}"
    );
    let bad_warm = PageCacheSpec {
        warm: WarmSpec {
            fraction: -0.1,
            pattern: WarmPattern::Random,
        },
        ..spec
    };
    assert!(PageCache::new(&bad_warm, &mut rng()).is_err());
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        object: u64,
        start: u64,
        len: u64,
    },
    Plan {
        object: u64,
        start: u64,
        len: u64,
        read_through: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let coords = (0u64..4, 0u64..64 * MIB, 1u64..20 * MIB);
    prop_oneof![
        coords
            .clone()
            .prop_map(|(object, start, len)| Op::Insert { object, start, len }),
        (coords, any::<bool>()).prop_map(|((object, start, len), read_through)| Op::Plan {
            object,
            start,
            len,
            read_through
        }),
    ]
}

proptest! {
    #[test]
    fn lru_keeps_usage_under_capacity(capacity_blocks in 1u64..24, ops in prop::collection::vec(op(), 1..60)) {
        let mut pc = cache(capacity_blocks * MIB);
        for op in ops {
            match op {
                Op::Insert { object, start, len } => pc.insert(object, ByteRange::with_len(start, len)),
                Op::Plan { object, start, len, read_through } => {
                    let range = ByteRange::with_len(start, len);
                    let mode = if read_through { PageCacheMode::ReadThrough { waste_permille: 500 } } else { PageCacheMode::Base };
                    let frags = pc.plan(object, range, mode);
                    // Fragments tile the block-rounded range in offset order.
                    prop_assert_eq!(frags.first().map(|f| f.range.start), Some(range.start / MIB * MIB));
                    prop_assert_eq!(frags.last().map(|f| f.range.end), Some(range.end.div_ceil(MIB) * MIB));
                    for w in frags.windows(2) {
                        prop_assert_eq!(w[0].range.end, w[1].range.start);
                        // The base fetches each missing block alone; otherwise adjacent
                        // fragments of one source are one fragment.
                        let one_block_fetches = !read_through
                            && w[0].source == FragmentSource::Fetch
                            && w[0].range.len() <= MIB;
                        prop_assert!(
                            w[0].source != w[1].source || one_block_fetches,
                            "adjacent fragments of one source are merged"
                        );
                        if !read_through && w[0].source == FragmentSource::Fetch {
                            prop_assert!(w[0].range.len() <= MIB, "the base fetches one block at a time");
                        }
                    }
                }
            }
            prop_assert!(pc.stats().used_bytes <= capacity_blocks * MIB);
        }
    }

    #[test]
    fn cached_bytes_never_exceeds_the_range(start in 0u64..16 * MIB, len in 0u64..16 * MIB, warm in 0.0f64..=1.0) {
        let mut spec = PageCacheSpec::with_capacity(Bytes(1 << 30));
        spec.warm = WarmSpec { fraction: warm, pattern: WarmPattern::Random };
        let mut r = rng();
        let mut pc = PageCache::new(&spec, &mut r).unwrap();
        pc.warm(0, 40 * MIB, &mut r);
        let range = ByteRange::with_len(start, len);
        prop_assert!(pc.cached_bytes(0, range) <= len);
    }
}

#[test]
fn blocks_below_the_smallest_cache_unit_are_refused() {
    // 1-byte blocks made a half-warm cache ask for 4 GB and abort.
    let at = |block: u64| PageCacheSpec {
        page_cache_block_size: Bytes(block),
        ..PageCacheSpec::with_capacity(Bytes(1 << 30))
    };
    at(limits::MIN_CACHE_BLOCK_BYTES).validate().unwrap();
    for block in [0, 1, limits::MIN_CACHE_BLOCK_BYTES - 1] {
        let e = at(block).validate().unwrap_err().to_string();
        assert!(
            e.contains("page_cache_block_size") && e.contains("MIN_CACHE_BLOCK_BYTES"),
            "{block}: {e}"
        );
    }
}
