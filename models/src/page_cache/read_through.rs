//! R8, the page cache's half: a run of missing blocks may be fetched through short islands of
//! cached blocks instead of being split around them (the fetched copies of cached blocks are
//! discarded and counted as `PageCacheReadThroughBytes`).
//!
//! The rules are those of Altinity's `CachedInMemoryReadBufferFromFile::populateBlockRange` and
//! `Prefetcher::publishCacheReadThroughPolicy` (`docs/readpath.md`, "What the code says"):
//! - **per island**: an island is bridged only if it has at most `budget / block_size` blocks,
//!   where the budget is `min(bandwidth x first-byte time, 8 MiB)`, both fitted (EWMA, alpha 0.2,
//!   the first sample taken as is) over this object's own fetches, and 0 until 4 fetches were
//!   seen ([`FetchFit`]). The "first byte" is the fetch's first progress callback, one progress
//!   chunk into the body, and the bandwidth sample is all the fetch's bytes over the time after
//!   it (`updateReadStats`), so a two-chunk fetch samples twice the stream's bandwidth; fetches
//!   of one chunk give no sample;
//! - **per request**: the blocks bridged in one request are at most
//!   `missing_blocks x waste_permille / 1000` (integer division), where the reader publishes
//!   `waste_permille = clamp(4 / io_threads, 0.05, 1) x 1000` ([`waste_permille`]). At a deep IO
//!   pool the product rounds to 0 for any request of fewer than 20 missing blocks at 128 threads,
//!   so read-through switches itself off.

use serde::{Deserialize, Serialize};
use units::Bytes;

/// The largest read-through budget per island (`max_budget_bytes` in the source).
pub const MAX_BUDGET_BYTES: u64 = 8 << 20;
/// Fetches of an object seen before its budget may be non-zero.
pub const MIN_SAMPLES: u32 = 4;
/// EWMA weight of a new sample.
const ALPHA: f64 = 0.2;
/// The IO concurrency below which a request may waste as many blocks as it misses
/// (`latency_bound_concurrency` in the source).
const LATENCY_BOUND_CONCURRENCY: f64 = 4.0;

/// The per-request waste bound the reader publishes for an IO pool of `io_threads` threads:
/// `clamp(4 / io_threads, 0.05, 1) x 1000`, in blocks per thousand missing blocks.
pub fn waste_permille(io_threads: u32) -> u64 {
    let share = (LATENCY_BOUND_CONCURRENCY / f64::from(io_threads.max(1))).clamp(0.05, 1.0);
    (share * 1000.0) as u64
}

/// Overrides of the read-through policy (`read_through:` in the page-cache section).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadThroughSpec {
    /// `setReadThroughBudgetOverrideBytes`: a fixed per-island budget instead of the fit (unset:
    /// the fit).
    #[serde(default)]
    pub budget_override_bytes: Option<Bytes>,
}

/// The fit of one object's fetches: first-byte time and per-request bandwidth, as EWMAs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FetchFit {
    samples: u32,
    first_byte_us: f64,
    bytes_per_us: f64,
}

impl FetchFit {
    /// One fetch of `bytes` whose first byte came `first_byte_ns` after it started and whose
    /// body took `transfer_ns` more.
    pub fn record(&mut self, first_byte_ns: u64, transfer_ns: u64, bytes: u64) {
        let rtt = first_byte_ns as f64 / 1e3;
        let bw = if transfer_ns == 0 {
            0.0
        } else {
            bytes as f64 / (transfer_ns as f64 / 1e3)
        };
        if self.samples == 0 {
            self.first_byte_us = rtt;
            self.bytes_per_us = bw;
        } else {
            self.first_byte_us += ALPHA * (rtt - self.first_byte_us);
            self.bytes_per_us += ALPHA * (bw - self.bytes_per_us);
        }
        self.samples = self.samples.saturating_add(1);
    }

    /// The per-island budget in bytes: `min(bandwidth x first-byte time, 8 MiB)`, 0 until
    /// [`MIN_SAMPLES`] fetches were seen or while either term is not positive.
    pub fn budget_bytes(&self) -> u64 {
        if self.samples < MIN_SAMPLES || self.first_byte_us <= 0.0 || self.bytes_per_us <= 0.0 {
            return 0;
        }
        let product = self.first_byte_us * self.bytes_per_us;
        if !product.is_finite() {
            return 0;
        }
        (product as u64).min(MAX_BUDGET_BYTES)
    }
}

/// One run of consecutive blocks with the same state: `[first, end)` block indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    pub first: u64,
    pub end: u64,
    pub cached: bool,
    /// Blocks of this run that are cached but are read through.
    pub read_through_blocks: u64,
}

/// The base build's fetches: every missing run split into runs of one block each (one
/// `readBigAt` per missing block, `PageCacheMode::Base`).
pub(crate) fn split_misses_per_block(runs: Vec<Run>) -> Vec<Run> {
    let mut out = Vec::with_capacity(runs.len());
    for run in runs {
        if run.cached {
            out.push(run);
            continue;
        }
        debug_assert_eq!(run.read_through_blocks, 0, "the base reads nothing through");
        out.extend((run.first..run.end).map(|b| Run {
            first: b,
            end: b + 1,
            ..run
        }));
    }
    out
}

/// Bridges interior cached runs (between two missing runs) of at most `max_island_blocks`
/// blocks, in offset order, while the blocks bridged stay within
/// `missing_blocks x waste_permille / 1000`; merges the neighbours of a bridged island. Cached
/// runs at either edge stay cached: reading them through saves no request.
pub(crate) fn merge_islands(
    runs: Vec<Run>,
    max_island_blocks: u64,
    waste_permille: u64,
) -> Vec<Run> {
    let missing: u64 = runs
        .iter()
        .filter(|r| !r.cached)
        .map(|r| r.end - r.first)
        .sum();
    let max_waste_blocks = missing.saturating_mul(waste_permille) / 1000;
    let mut used = 0u64;
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    let n = runs.len();
    for (i, run) in runs.iter().enumerate() {
        let interior = i > 0 && i + 1 < n;
        let len = run.end - run.first;
        let bridge = run.cached
            && interior
            && max_island_blocks > 0
            && len <= max_island_blocks
            && used + len <= max_waste_blocks;
        let run = if bridge {
            used += len;
            Run {
                cached: false,
                read_through_blocks: len,
                ..*run
            }
        } else {
            *run
        };
        match out.last_mut() {
            Some(last) if !last.cached && !run.cached => {
                last.end = run.end;
                last.read_through_blocks += run.read_through_blocks;
            }
            _ => out.push(run),
        }
    }
    debug_assert!(used <= max_waste_blocks);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(first: u64, end: u64, cached: bool) -> Run {
        Run {
            first,
            end,
            cached,
            read_through_blocks: 0,
        }
    }

    #[test]
    fn permille_follows_the_source() {
        assert_eq!(waste_permille(1), 1000);
        assert_eq!(waste_permille(4), 1000);
        assert_eq!(waste_permille(16), 250);
        assert_eq!(waste_permille(64), 62);
        assert_eq!(waste_permille(128), 50);
    }

    #[test]
    fn budget_is_zero_until_four_fetches_then_the_product_capped() {
        let mut fit = FetchFit::default();
        for _ in 0..3 {
            // 30 ms first byte, 3 MB in 30 ms: 100 B/us.
            fit.record(30_000_000, 30_000_000, 3_000_000);
            assert_eq!(fit.budget_bytes(), 0);
        }
        fit.record(30_000_000, 30_000_000, 3_000_000);
        assert_eq!(fit.budget_bytes(), 3_000_000);
        let mut fast = FetchFit::default();
        for _ in 0..4 {
            fast.record(100_000_000, 1_000_000, 100_000_000);
        }
        assert_eq!(fast.budget_bytes(), MAX_BUDGET_BYTES);
    }

    #[test]
    fn the_base_fetches_each_missing_block_alone() {
        let runs = vec![run(0, 3, false), run(3, 4, true), run(4, 6, false)];
        assert_eq!(
            split_misses_per_block(runs),
            vec![
                run(0, 1, false),
                run(1, 2, false),
                run(2, 3, false),
                run(3, 4, true),
                run(4, 5, false),
                run(5, 6, false)
            ]
        );
    }

    #[test]
    fn islands_bridge_within_both_bounds() {
        let runs = vec![
            run(0, 1, true),
            run(1, 5, false),
            run(5, 6, true),
            run(6, 10, false),
            run(10, 13, true),
            run(13, 17, false),
        ];
        // 12 missing blocks at 1000 permille: 12 may be wasted; islands up to 2 blocks.
        let merged = merge_islands(runs.clone(), 2, 1000);
        assert_eq!(
            merged,
            vec![
                run(0, 1, true),
                Run {
                    first: 1,
                    end: 10,
                    cached: false,
                    read_through_blocks: 1
                },
                run(10, 13, true),
                run(13, 17, false)
            ]
        );
        // At 62 permille, 12 x 62 / 1000 = 0 blocks: nothing is bridged.
        assert_eq!(merge_islands(runs.clone(), 8, 62), runs);
        // A zero budget (too few samples) bridges nothing either.
        assert_eq!(merge_islands(runs.clone(), 0, 1000), runs);
    }
}
