//! The `arrow-rs` preset against the real object_store `coalesce_ranges` (0.14): on random
//! inputs it must fetch exactly the merged ranges object_store fetches for the same gap, and
//! each needed range must come out of the same bytes.

use std::convert::Infallible;
use std::future::Future;
use std::ops::Range;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use coalescer::{coalesce, CoalescePolicy, NeededRange, NothingCached};
use layout::ByteRange;
use proptest::prelude::*;

/// A tiny executor: the fetches below are always ready, so polling in a loop terminates.
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

/// The byte stored at absolute offset `x` of the simulated object.
fn byte_at(x: u64) -> u8 {
    (x % 251) as u8
}

fn content(r: &Range<u64>) -> Bytes {
    Bytes::from((r.start..r.end).map(byte_at).collect::<Vec<u8>>())
}

/// object_store's fetches and per-range results for `ranges` at gap `coalesce_bytes`.
fn object_store_fetches(
    ranges: &[Range<u64>],
    coalesce_bytes: u64,
) -> (Vec<Range<u64>>, Vec<Bytes>) {
    let mut fetched = Vec::new();
    let out = block_on(object_store::coalesce_ranges(
        ranges,
        |r: Range<u64>| {
            fetched.push(r.clone());
            std::future::ready(Ok::<Bytes, Infallible>(content(&r)))
        },
        coalesce_bytes,
    ));
    let Ok(slices) = out;
    (fetched, slices)
}

fn ranges_strategy() -> impl Strategy<Value = Vec<Range<u64>>> {
    let gap = prop_oneof![1 => Just(0u64), 3 => 1u64..4096, 3 => 4096u64..300_000];
    prop::collection::vec((gap, 1u64..20_000), 1..60).prop_map(|parts| {
        let mut at = 0;
        parts
            .into_iter()
            .map(|(g, len)| {
                let start = at + g;
                at = start + len;
                start..at
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn arrow_rs_preset_matches_object_store(
        ranges in ranges_strategy(),
        coalesce_bytes in prop_oneof![Just(0u64), 1u64..4096, 4096u64..300_000, Just(1024 * 1024)],
    ) {
        let (fetched, slices) = object_store_fetches(&ranges, coalesce_bytes);
        let needed: Vec<NeededRange> =
            ranges.iter().map(|r| NeededRange::new(ByteRange::new(r.start, r.end))).collect();
        let policy = CoalescePolicy::ArrowRs { coalesce_bytes };
        let tasks = coalesce(&needed, &NothingCached, &policy)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let ours: Vec<Range<u64>> = tasks.iter().map(|t| t.range.start..t.range.end).collect();
        prop_assert_eq!(&ours, &fetched);

        // Every needed range is cut from its task's bytes exactly where object_store cuts it.
        for t in &tasks {
            let data = content(&(t.range.start..t.range.end));
            for s in &t.serves {
                let from = s.task_offset as usize;
                let ours = data.slice(from..from + s.len as usize);
                prop_assert_eq!(s.needed_offset, 0);
                prop_assert_eq!(&ours, &slices[s.needed as usize]);
            }
        }
    }
}

#[test]
fn default_gap_is_object_stores_default() {
    let p = CoalescePolicy::preset("arrow-rs").unwrap();
    assert_eq!(
        p,
        CoalescePolicy::ArrowRs {
            coalesce_bytes: object_store::OBJECT_STORE_COALESCE_DEFAULT
        }
    );
}
