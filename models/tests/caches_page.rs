//! Page cache at model level: the same reads against a warm cache plan fewer store bytes than
//! against a cold one, and read-through (R8) trades bytes for requests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use layout::ByteRange;
use models::page_cache::{
    waste_permille, FragmentSource, PageCache, PageCacheMode, PageCacheSpec, WarmPattern, WarmSpec,
};
use rand::{RngExt, SeedableRng};
use units::Bytes;

const MIB: u64 = 1 << 20;
const OBJECTS: u64 = 8;
const OBJECT_SIZE: u64 = 512 * MIB;

/// Read tasks shaped like a coalesced Parquet scan: 200 KiB to 12 MiB at random offsets.
fn reads(seed: u64) -> Vec<(u64, ByteRange)> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..400)
        .map(|_| {
            let object = rng.random_range(0..OBJECTS);
            let len = rng.random_range(200 * 1024..12 * MIB);
            let start = rng.random_range(0..OBJECT_SIZE - len);
            (object, ByteRange::with_len(start, len))
        })
        .collect()
}

fn cache(warm: WarmSpec) -> PageCache {
    let mut spec = PageCacheSpec::with_capacity(Bytes(64 << 30));
    spec.warm = warm;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let mut pc = PageCache::new(&spec, &mut rng).unwrap();
    for object in 0..OBJECTS {
        pc.warm(object, OBJECT_SIZE, &mut rng);
    }
    pc
}

/// (store bytes, store requests) the reads plan, without inserting what they fetch.
fn fetched(pc: &mut PageCache, mode: PageCacheMode, seed: u64) -> (u64, u64) {
    // Four fetches per object at 30 ms first byte and 60 B/us: a 1.8 MB budget per island.
    for object in 0..OBJECTS {
        for _ in 0..models::page_cache::MIN_SAMPLES {
            pc.record_fetch(object, 30_000_000, 30_000_000, 1_800_000);
        }
    }
    let mut bytes = 0;
    let mut requests = 0;
    for (object, range) in reads(seed) {
        for f in pc.plan(object, range, mode) {
            if f.source == FragmentSource::Fetch {
                bytes += f.range.len();
                requests += 1;
            }
        }
    }
    (bytes, requests)
}

#[test]
fn a_warm_cache_fetches_fewer_store_bytes_than_a_cold_one() {
    let (cold, _) = fetched(&mut cache(WarmSpec::default()), PageCacheMode::Base, 1);
    let (half, _) = fetched(
        &mut cache(WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Random,
        }),
        PageCacheMode::Base,
        1,
    );
    let (full, _) = fetched(
        &mut cache(WarmSpec {
            fraction: 1.0,
            pattern: WarmPattern::Random,
        }),
        PageCacheMode::Base,
        1,
    );
    assert!(half < cold, "half-warm {half} vs cold {cold}");
    // Half the blocks cached: about half the bytes fetched (blocks are independent).
    let ratio = half as f64 / cold as f64;
    assert!((0.4..0.6).contains(&ratio), "half-warm / cold = {ratio}");
    eprintln!("store bytes: cold {cold}, half-warm {half} ({ratio:.3}), fully warm {full}");
    assert_eq!(full, 0);
}

#[test]
fn a_second_run_fetches_only_what_the_first_did_not_cache() {
    let mut pc = cache(WarmSpec::default());
    let mut first = 0;
    for (object, range) in reads(2) {
        for f in pc.plan(object, range, PageCacheMode::Base) {
            if f.source == FragmentSource::Fetch {
                first += f.range.len();
                pc.insert(object, f.range);
            }
        }
    }
    let (second, requests) = fetched(&mut pc, PageCacheMode::Base, 2);
    assert!(first > 0);
    assert_eq!((second, requests), (0, 0));
}

#[test]
fn read_through_makes_fewer_requests_for_the_bytes_it_reads_through() {
    // 1 MiB islands every 2 MiB: within the 1.8 MB budget (30 ms x 60 MB/s, one block).
    let warm = WarmSpec {
        fraction: 0.5,
        pattern: WarmPattern::Stripes { stripe: Bytes(MIB) },
    };
    let (base_bytes, base_requests) = fetched(&mut cache(warm.clone()), PageCacheMode::Base, 3);
    let mut pc = cache(warm);
    let (rt_bytes, rt_requests) = fetched(
        &mut pc,
        PageCacheMode::ReadThrough {
            waste_permille: waste_permille(4),
        },
        3,
    );
    let read_through = pc.stats().read_through_bytes;
    assert!(read_through > 0);
    assert_eq!(
        rt_bytes,
        base_bytes + read_through,
        "PageCacheReadThroughBytes is exactly the extra bytes"
    );
    assert!(
        rt_requests < base_requests,
        "{rt_requests} vs {base_requests}"
    );
    eprintln!(
        "read-through: requests {base_requests} -> {rt_requests}, bytes {base_bytes} -> {rt_bytes}"
    );
    // A deep pool disables it: the same plan as base.
    let (deep_bytes, deep_requests) = fetched(
        &mut cache(WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Stripes { stripe: Bytes(MIB) },
        }),
        PageCacheMode::ReadThrough {
            waste_permille: waste_permille(256),
        },
        3,
    );
    assert_eq!((deep_bytes, deep_requests), (base_bytes, base_requests));
}
