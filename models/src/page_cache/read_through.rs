//! R8, the page cache's half: read through short islands of cached blocks instead of splitting a
//! read around them.
//!
//! An island between two fetched runs costs, if served from the cache, one more request and one
//! more first-byte wait for the run after it; if read through, only its transfer time. So an
//! island is worth reading through while it transfers within about one first-byte time: the
//! budget is the bandwidth-delay product of the store as the client measures it. The reader caps
//! it by a share of the request it publishes from its IO concurrency (`request / io_concurrency`):
//! with a deep IO pool the extra fragments run in parallel and cost nothing, the cap falls below
//! one block, and read-through disables itself.

use serde::{Deserialize, Serialize};

/// The store as the client currently measures it (EWMAs of first-byte time and per-request
/// bandwidth), the input of the read-through budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NetworkEstimate {
    /// Time from sending a GET to its first byte, in nanoseconds.
    pub first_byte_ns: u64,
    /// Transfer bandwidth of one request, in bytes per second.
    pub bandwidth_bytes_per_s: f64,
}

impl NetworkEstimate {
    /// The redesign's priors (READPATH.md R5): 50 ms first byte, 64 bytes per microsecond.
    pub const PRIOR: NetworkEstimate = NetworkEstimate {
        first_byte_ns: 50_000_000,
        bandwidth_bytes_per_s: 64e6,
    };

    /// Bytes one request transfers in one first-byte time (bandwidth x round trip).
    pub fn bandwidth_delay_bytes(&self) -> f64 {
        let bdp = self.first_byte_ns as f64 * self.bandwidth_bytes_per_s / 1e9;
        if bdp.is_finite() && bdp > 0.0 {
            bdp
        } else {
            0.0
        }
    }
}

/// Tuning of the read-through budget (`read_through:` in the page-cache section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadThroughSpec {
    /// Budget in units of the bandwidth-delay product; 1 = an island is read through while it
    /// transfers within one first-byte time.
    #[serde(default = "one")]
    pub rtt_multiple: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for ReadThroughSpec {
    fn default() -> Self {
        Self { rtt_multiple: 1.0 }
    }
}

/// Largest cached island (bytes) a read of `request_bytes` reads through.
pub fn budget_bytes(
    spec: &ReadThroughSpec,
    est: &NetworkEstimate,
    request_bytes: u64,
    io_concurrency: u32,
) -> u64 {
    let fitted = est.bandwidth_delay_bytes() * spec.rtt_multiple.max(0.0);
    let cap = request_bytes as f64 / f64::from(io_concurrency.max(1));
    let budget = fitted.min(cap);
    if budget.is_finite() && budget > 0.0 {
        budget as u64
    } else {
        0
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

/// Turns interior cached runs of at most `budget_bytes` into fetched ones and merges the
/// neighbours. Cached runs at either edge stay cached: reading them through would lengthen the
/// one GET without saving a request.
pub(crate) fn merge_islands(runs: Vec<Run>, block_size: u64, budget_bytes: u64) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::with_capacity(runs.len());
    let n = runs.len();
    for (i, run) in runs.iter().enumerate() {
        let interior = i > 0 && i + 1 < n;
        let short = (run.end - run.first).saturating_mul(block_size) <= budget_bytes;
        let run = if run.cached && interior && short {
            Run {
                cached: false,
                read_through_blocks: run.end - run.first,
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
    fn budget_is_bdp_capped_by_share() {
        let est = NetworkEstimate {
            first_byte_ns: 30_000_000,
            bandwidth_bytes_per_s: 100e6,
        };
        let spec = ReadThroughSpec::default();
        // 30 ms x 100 MB/s = 3 MB; a 64 MiB request at 4 IO threads caps at 16 MiB.
        assert_eq!(budget_bytes(&spec, &est, 64 << 20, 4), 3_000_000);
        // A 4 MiB request at 4 threads: the share (1 MiB) is the binding limit.
        assert_eq!(budget_bytes(&spec, &est, 4 << 20, 4), 1 << 20);
        // Deep pool: 4 MiB / 64 = 64 KiB, below one 1 MiB block: nothing is read through.
        assert!(budget_bytes(&spec, &est, 4 << 20, 64) < 1 << 20);
    }

    #[test]
    fn only_short_interior_islands_merge() {
        let runs = vec![
            run(0, 1, true),
            run(1, 3, false),
            run(3, 4, true),
            run(4, 6, false),
            run(6, 9, true),
            run(9, 10, false),
        ];
        let merged = merge_islands(runs, 10, 20);
        // The leading island stays; [3,4) (10 bytes) merges; [6,9) (30 bytes) is too long.
        assert_eq!(
            merged,
            vec![
                run(0, 1, true),
                Run {
                    first: 1,
                    end: 6,
                    cached: false,
                    read_through_blocks: 1
                },
                run(6, 9, true),
                run(9, 10, false)
            ]
        );
    }
}
