use super::*;
use crate::page_cache::WarmPattern;
use proptest::prelude::*;
use rand::SeedableRng;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const SIZE: u64 = 256 * MIB;

fn spec() -> FsCacheSpec {
    FsCacheSpec::with_capacity(Bytes(1 << 40))
}

fn redesign_spec(alignment: u64, background: bool) -> FsCacheSpec {
    FsCacheSpec {
        filesystem_cache_boundary_alignment: Some(Bytes(alignment)),
        filesystem_cache_allow_background_download: background,
        ..spec()
    }
}

fn complete_all(fc: &mut FsCache, object: u64, plan: &FsPlan) {
    for r in plan.remote.iter().chain(plan.background.iter()) {
        fc.complete(object, *r);
    }
}

#[test]
fn base_cold_4k_read_opens_a_get_to_the_segment_end() {
    let mut fc = FsCache::new(&spec()).unwrap();
    let read = ByteRange::with_len(5 * MIB + 100, 4 * KIB);
    let plan = fc.plan(1, SIZE, read, FsCacheMode::Base);
    // The 4 MiB boundary alignment makes the segment [4, 8) MiB; the GET runs from its start
    // (predownload) to its end.
    assert_eq!(plan.remote, vec![ByteRange::new(4 * MIB, 8 * MIB)]);
    assert!(plan.local.is_empty());
    assert!(
        plan.background.is_empty(),
        "the GET already reaches the segment end"
    );
    assert_eq!(plan.remote_bytes() / read.len(), 1024);
}

#[test]
fn base_ignores_the_per_query_settings() {
    let read = ByteRange::with_len(5 * MIB + 100, 4 * KIB);
    let base =
        FsCache::new(&redesign_spec(MIB, false))
            .unwrap()
            .plan(1, SIZE, read, FsCacheMode::Base);
    let plain = FsCache::new(&spec())
        .unwrap()
        .plan(1, SIZE, read, FsCacheMode::Base);
    assert_eq!(base, plain);
}

#[test]
fn redesign_with_1mib_alignment_downloads_at_most_the_aligned_span() {
    let mut fc = FsCache::new(&redesign_spec(MIB, false)).unwrap();
    let read = ByteRange::with_len(5 * MIB + 100, 4 * KIB);
    let plan = fc.plan(1, SIZE, read, FsCacheMode::Redesign);
    let aligned = ByteRange::new(read.start / MIB * MIB, read.end.div_ceil(MIB) * MIB);
    assert!(
        plan.remote.iter().all(|g| aligned.contains(g)),
        "{:?}",
        plan.remote
    );
    assert!(plan.remote_bytes() <= aligned.len());
    assert!(plan.remote.iter().any(|g| g.contains(&read)));
    assert!(plan.background.is_empty());
    // With no alignment at all, exactly the bytes read.
    let mut exact = FsCache::new(&redesign_spec(0, false)).unwrap();
    assert_eq!(
        exact.plan(1, SIZE, read, FsCacheMode::Redesign).remote,
        vec![read]
    );
}

#[test]
fn background_download_of_partly_read_segments() {
    // A segment [4, 8) MiB whose first MiB is on disk: made by a base read whose GET failed,
    // then filled to the 1 MiB-aligned end of a redesign read.
    let partly = |s: &FsCacheSpec| {
        let mut fc = FsCache::new(s).unwrap();
        let plan = fc.plan(
            1,
            SIZE,
            ByteRange::with_len(4 * MIB, KIB),
            FsCacheMode::Base,
        );
        assert_eq!(plan.remote, vec![ByteRange::new(4 * MIB, 8 * MIB)]);
        fc.abort(1, plan.remote[0]);
        let plan = fc.plan(
            1,
            SIZE,
            ByteRange::with_len(4 * MIB, KIB),
            FsCacheMode::Redesign,
        );
        assert_eq!(plan.remote, vec![ByteRange::new(4 * MIB, 5 * MIB)]);
        fc.complete(1, plan.remote[0]);
        for g in &plan.background {
            fc.abort(1, *g); // the setup's own background download never ran
        }
        assert_eq!(fc.held_bytes(1, ByteRange::new(0, SIZE)), MIB);
        fc
    };
    let read = ByteRange::with_len(4 * MIB + 100, 4 * KIB);
    let rest = vec![ByteRange::new(5 * MIB, 8 * MIB)];
    // Base: served from disk, and the rest of the segment is queued whatever the settings.
    let base = partly(&redesign_spec(MIB, false)).plan(1, SIZE, read, FsCacheMode::Base);
    assert_eq!(
        (base.local.clone(), base.remote.len(), base.background),
        (vec![read], 0, rest.clone())
    );
    // Redesign honours filesystem_cache_allow_background_download.
    let off = partly(&redesign_spec(MIB, false)).plan(1, SIZE, read, FsCacheMode::Redesign);
    assert!(off.background.is_empty());
    let on = partly(&redesign_spec(MIB, true)).plan(1, SIZE, read, FsCacheMode::Redesign);
    assert_eq!(on.background, rest);
}

#[test]
fn a_second_read_while_a_segment_downloads_bypasses_for_its_own_bytes() {
    let mut fc = FsCache::new(&spec()).unwrap();
    let first = fc.plan(
        1,
        SIZE,
        ByteRange::with_len(4 * MIB, KIB),
        FsCacheMode::Base,
    );
    let read = ByteRange::with_len(6 * MIB, 8 * KIB);
    let second = fc.plan(1, SIZE, read, FsCacheMode::Base);
    assert_eq!(second.bypass, vec![read]);
    assert!(second.remote.is_empty(), "a bypassing GET claims nothing");
    assert!(second.background.is_empty());
    assert_eq!(fc.stats().bypass_bytes, read.len());
    assert_eq!(second.remote_bytes(), read.len());
    // Bypassed bytes are not cached (the driver completes no bypassing GET); the first
    // GET's are.
    assert_eq!(fc.held_bytes(1, read), 0);
    complete_all(&mut fc, 1, &first);
    assert_eq!(fc.held_bytes(1, ByteRange::new(4 * MIB, 8 * MIB)), 4 * MIB);
}

/// A bypassing GET whose range equals another read's claim (the audit's case: X claims
/// [4, 8) MiB, Y needs [3, 9) MiB and reads [4, 8) around it) is in `bypass`, so the driver
/// neither completes nor aborts the claim with it: the claim stays until X's GET ends.
#[test]
fn a_bypass_equal_to_a_claim_is_kept_apart_from_it() {
    let mut fc = FsCache::new(&spec()).unwrap();
    let first = fc.plan(
        1,
        SIZE,
        ByteRange::with_len(5 * MIB, 4 * KIB),
        FsCacheMode::Base,
    );
    assert_eq!(first.remote, vec![ByteRange::new(4 * MIB, 8 * MIB)]);
    let second = fc.plan(1, SIZE, ByteRange::new(3 * MIB, 9 * MIB), FsCacheMode::Base);
    assert!(
        second.bypass.contains(&ByteRange::new(4 * MIB, 8 * MIB)),
        "{second:?}"
    );
    assert!(
        !second.remote.contains(&ByteRange::new(4 * MIB, 8 * MIB)),
        "{second:?}"
    );
    // A third read of the segment still sees it downloading (no second full download).
    let third = fc.plan(
        1,
        SIZE,
        ByteRange::with_len(6 * MIB, 4 * KIB),
        FsCacheMode::Base,
    );
    assert!(
        third.remote.is_empty() && !third.bypass.is_empty(),
        "{third:?}"
    );
}

#[test]
fn completed_downloads_serve_the_next_run_locally() {
    for mode in [FsCacheMode::Base, FsCacheMode::Redesign] {
        let mut fc = FsCache::new(&redesign_spec(MIB, false)).unwrap();
        let reads: Vec<ByteRange> = (0..20)
            .map(|i| ByteRange::with_len(i * 7 * MIB + 12_345, 300 * KIB))
            .collect();
        for r in &reads {
            let plan = fc.plan(3, SIZE, *r, mode);
            complete_all(&mut fc, 3, &plan);
        }
        let before = fc.stats();
        for r in &reads {
            let plan = fc.plan(3, SIZE, *r, mode);
            assert_eq!(plan.local, vec![*r], "{mode:?}");
            assert!(plan.remote.is_empty() && plan.background.is_empty());
        }
        assert_eq!(fc.stats().remote_bytes, before.remote_bytes);
    }
}

#[test]
fn segments_are_cut_at_max_file_segment_size() {
    let mut fc = FsCache::new(&spec()).unwrap();
    let plan = fc.plan(1, SIZE, ByteRange::new(MIB, 70 * MIB), FsCacheMode::Base);
    // Aligned span [0, 72) MiB in segments of at most 32 MiB: one GET per segment.
    assert_eq!(
        plan.remote,
        vec![
            ByteRange::new(0, 32 * MIB),
            ByteRange::new(32 * MIB, 64 * MIB),
            ByteRange::new(64 * MIB, 72 * MIB)
        ]
    );
}

#[test]
fn reads_stop_at_the_object_end() {
    let mut fc = FsCache::new(&spec()).unwrap();
    let plan = fc.plan(1, 25_000, ByteRange::new(20_000, 30_000), FsCacheMode::Base);
    assert_eq!(plan.remote, vec![ByteRange::new(0, 25_000)]);
    assert_eq!(fc.stats().requested_bytes, 5_000);
    assert_eq!(
        fc.plan(1, 25_000, ByteRange::new(25_000, 26_000), FsCacheMode::Base),
        FsPlan::default()
    );
}

#[test]
fn eviction_keeps_usage_within_max_size() {
    let mut fc = FsCache::new(&FsCacheSpec {
        max_size: Bytes(8 * MIB),
        ..spec()
    })
    .unwrap();
    for i in 0..4 {
        let plan = fc.plan(
            1,
            SIZE,
            ByteRange::with_len(i * 16 * MIB, KIB),
            FsCacheMode::Base,
        );
        complete_all(&mut fc, 1, &plan);
        assert!(fc.stats().used_bytes <= 8 * MIB);
    }
    assert_eq!(fc.stats().evictions, 2);
    assert_eq!(fc.stats().written_bytes, 16 * MIB);
    // The most recent segment is still there.
    assert_eq!(
        fc.held_bytes(1, ByteRange::with_len(48 * MIB, 4 * MIB)),
        4 * MIB
    );
    assert_eq!(fc.held_bytes(1, ByteRange::with_len(0, 4 * MIB)), 0);
}

#[test]
fn disk_time_is_latency_plus_transfer() {
    let fc = FsCache::new(&spec()).unwrap();
    assert_eq!(fc.disk_read_ns(0), 100_000);
    // 2 MiB at 2 GiB/s = 976,563 ns.
    assert_eq!(fc.disk_read_ns(2 * MIB), 100_000 + 976_563);
}

#[test]
fn warm_half_holds_about_half() {
    let s = FsCacheSpec {
        warm: WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Random,
        },
        ..spec()
    };
    let mut fc = FsCache::new(&s).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let size = 4000 * MIB + 123; // 1001 units of 4 MiB, the last one short
    for object in 0..5 {
        fc.warm(object, size, &mut rng);
    }
    let held: u64 = (0..5)
        .map(|o| fc.held_bytes(o, ByteRange::new(0, size)))
        .sum();
    let frac = held as f64 / (5 * size) as f64;
    assert!((frac - 0.5).abs() < 0.05, "{frac}");
    assert_eq!(fc.stats().used_bytes, held);
}

#[test]
fn spec_from_yaml_and_errors() {
    let yaml = "max_size: 100GiB\nfilesystem_cache_boundary_alignment: 1MiB\n\
                filesystem_cache_allow_background_download: false\ndisk: {latency: 80us, bandwidth: 3GiB/s}\n";
    let s: FsCacheSpec = serde_saphyr::from_str(yaml).unwrap();
    assert_eq!(s.filesystem_cache_boundary_alignment, Some(Bytes(MIB)));
    assert_eq!(s.boundary_alignment, Bytes(4 * MIB));
    assert!(!s.filesystem_cache_allow_background_download);
    s.validate().unwrap();
    let e =
        serde_saphyr::from_str::<FsCacheSpec>("max_size: 1GiB\nsegment_size: 4MiB\n").unwrap_err();
    assert!(e.to_string().contains("segment_size"), "{e}");
    let bad = FsCacheSpec {
        boundary_alignment: Bytes(64 * MIB),
        ..s.clone()
    };
    let e = FsCache::new(&bad).unwrap_err().to_string();
    assert!(
        e.contains("boundary_alignment") && e.contains("max_file_segment_size"),
        "{e}"
    );
    let zero = FsCacheSpec {
        max_size: Bytes(0),
        ..s
    };
    assert!(zero
        .validate()
        .unwrap_err()
        .to_string()
        .contains("max_size"));
}

#[derive(Debug, Clone)]
struct Read {
    object: u64,
    start: u64,
    len: u64,
    finish: bool,
}

fn read() -> impl Strategy<Value = Read> {
    (0u64..3, 0u64..SIZE, 1u64..6 * MIB, any::<bool>()).prop_map(|(object, start, len, finish)| {
        Read {
            object,
            start,
            len,
            finish,
        }
    })
}

proptest! {
    #[test]
    fn plans_cover_reads_and_usage_stays_under_max_size(
        capacity_mib in 1u64..64,
        redesign in any::<bool>(),
        background in any::<bool>(),
        alignment_kib in prop::sample::select(vec![0u64, 64, 1024, 4096]),
        reads in prop::collection::vec(read(), 1..40),
    ) {
        let s = FsCacheSpec { max_size: Bytes(capacity_mib * MIB), ..redesign_spec(alignment_kib * KIB, background) };
        let mode = if redesign { FsCacheMode::Redesign } else { FsCacheMode::Base };
        let mut fc = FsCache::new(&s).unwrap();
        let mut pending: Vec<(u64, ByteRange)> = Vec::new();
        for r in reads {
            let range = ByteRange::with_len(r.start, r.len);
            let need = ByteRange::new(range.start, range.end.min(SIZE));
            let plan = fc.plan(r.object, SIZE, range, mode);
            // Local pieces and the needed parts of the GETs tile the read exactly.
            let mut pieces: Vec<ByteRange> = plan.local.clone();
            pieces.extend(plan.remote.iter().chain(&plan.bypass).map(|g| ByteRange::new(g.start.max(need.start), g.end.min(need.end))));
            pieces.retain(|p| !p.is_empty());
            pieces.sort_by_key(|p| p.start);
            let mut cursor = need.start;
            for p in &pieces {
                prop_assert_eq!(p.start, cursor, "gap or overlap in {:?} for {:?}", pieces, need);
                cursor = p.end;
            }
            prop_assert_eq!(cursor, need.end);
            pending.extend(plan.remote.iter().chain(plan.background.iter()).map(|g| (r.object, *g)));
            if r.finish {
                for (o, g) in pending.drain(..) {
                    fc.complete(o, g);
                    prop_assert!(fc.stats().used_bytes <= s.max_size.get() || pending_is_busy(&fc));
                }
            }
        }
        for (o, g) in pending.drain(..) {
            fc.complete(o, g);
        }
        prop_assert!(fc.stats().used_bytes <= s.max_size.get());
        prop_assert!(fc.stats().written_bytes <= fc.stats().remote_bytes - fc.stats().bypass_bytes + fc.stats().background_bytes);
    }
}

/// Segments still being filled may not be evicted, so usage can exceed `max_size` briefly.
fn pending_is_busy(fc: &FsCache) -> bool {
    fc.objects
        .values()
        .flat_map(|m| m.values())
        .any(|s| s.is_downloading())
}

#[test]
fn an_alignment_below_the_smallest_cache_unit_is_refused() {
    // A 1-byte alignment made a cold cache run for minutes.
    let at = |alignment: u64| FsCacheSpec {
        boundary_alignment: Bytes(alignment),
        ..spec()
    };
    at(limits::MIN_CACHE_BLOCK_BYTES).validate().unwrap();
    for alignment in [0, 1, limits::MIN_CACHE_BLOCK_BYTES - 1] {
        let e = at(alignment).validate().unwrap_err().to_string();
        assert!(
            e.contains("boundary_alignment") && e.contains("MIN_CACHE_BLOCK_BYTES"),
            "{alignment}: {e}"
        );
    }
}
