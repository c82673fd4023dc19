//! Deterministic shards of a sweep (`--shard K/N`): shard K of N runs the points `K, K+N,
//! K+2N, ...` of the grid, a fixed round-robin partition (neighbouring points, which often cost
//! alike, go to different shards, so the shards are balanced). A shard's CSV is the sweep's CSV
//! with a second comment line naming the shard, the grid's point count and the arms:
//!
//! ```text
//! # sim sweep 5c1f0e3a9b27d4c8; program=...; axes=...; reps=2; seed=3
//! # sim sweep shard 1/3; points=10; arms=2
//! point,input_format_parquet_coalesce_gap_bytes,arm,...
//! 1,...
//! ```
//!
//! so that `sim sweep merge` can check the parts without the scenario: one fingerprint, every
//! shard once, every point of each shard complete.

use limits::MAX_GRID_POINTS;

/// The second line's prefix in a shard's CSV.
pub const SHARD_PREFIX: &str = "# sim sweep shard ";

/// Shard `index` of `count` (`0 <= index < count`): the index a scheduler hands out
/// (Kubernetes' `JOB_COMPLETION_INDEX`, Slurm's `SLURM_ARRAY_TASK_ID` of `--array=0-(N-1)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

/// What a shard's CSV says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardLine {
    pub shard: Shard,
    /// Points of the whole grid.
    pub points: usize,
    /// Rows per point.
    pub arms: usize,
}

impl Shard {
    /// `K/N`, with `0 <= K < N <= MAX_GRID_POINTS`.
    pub fn parse(text: &str) -> Result<Shard, String> {
        let expected = "expected K/N with 0 <= K < N, e.g. `0/4` (K: the shard's index from 0)";
        let (k, n) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}`: {expected}"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{text}`: {expected}"))
        };
        let (index, count) = (num(k)?, num(n)?);
        if count == 0 || index >= count {
            return Err(format!("`{text}`: {expected}"));
        }
        if count > MAX_GRID_POINTS {
            return Err(format!(
                "`{text}`: at most {MAX_GRID_POINTS} shards (limits::MAX_GRID_POINTS, the most points a sweep may have)"
            ));
        }
        Ok(Shard { index, count })
    }

    /// The grid points (of `total`) this shard runs, in order.
    pub fn points(self, total: usize) -> Vec<usize> {
        debug_assert!(self.index < self.count, "shard {self:?}");
        (self.index..total).step_by(self.count).collect()
    }

    /// The shard a grid point belongs to.
    pub fn of_point(point: usize, count: usize) -> usize {
        debug_assert!(count > 0, "no shards");
        point % count
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl ShardLine {
    /// The CSV's second line (without its newline).
    pub fn line(&self) -> String {
        format!(
            "{SHARD_PREFIX}{}; points={}; arms={}",
            self.shard, self.points, self.arms
        )
    }

    /// Reads a second line written by [`ShardLine::line`].
    pub fn parse(line: &str) -> Result<ShardLine, String> {
        let bad = || format!("`{line}` is not a `{SHARD_PREFIX}K/N; points=P; arms=A` line");
        let rest = line.trim_end().strip_prefix(SHARD_PREFIX).ok_or_else(bad)?;
        let mut fields = rest.split(';').map(str::trim);
        let shard = Shard::parse(fields.next().ok_or_else(bad)?)?;
        let mut number = |key: &str| -> Result<usize, String> {
            fields
                .next()
                .and_then(|f| f.strip_prefix(key))
                .and_then(|v| v.parse().ok())
                .ok_or_else(bad)
        };
        let points = number("points=")?;
        let arms = number("arms=")?;
        if points > MAX_GRID_POINTS || arms == 0 {
            return Err(bad());
        }
        Ok(ShardLine {
            shard,
            points,
            arms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_points_and_are_balanced() {
        for total in [0, 1, 5, 12, 100] {
            for count in [1, 2, 3, 7] {
                let mut seen = vec![0u32; total];
                let mut sizes = Vec::new();
                for index in 0..count {
                    let pts = Shard { index, count }.points(total);
                    assert!(pts.windows(2).all(|w| w[0] < w[1]), "{pts:?}");
                    for &p in &pts {
                        seen[p] += 1;
                        assert_eq!(Shard::of_point(p, count), index);
                    }
                    sizes.push(pts.len());
                }
                assert!(seen.iter().all(|&n| n == 1), "{total} {count}: {seen:?}");
                let (lo, hi) = (sizes.iter().min(), sizes.iter().max());
                assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{sizes:?}");
            }
        }
    }

    #[test]
    fn a_shard_is_k_of_n_from_zero() {
        assert_eq!(Shard::parse("0/1"), Ok(Shard { index: 0, count: 1 }));
        assert_eq!(Shard::parse("6/7"), Ok(Shard { index: 6, count: 7 }));
        for bad in ["7/7", "1/0", "0", "-1/3", "a/3", "1/3/4", "", "/"] {
            let e = Shard::parse(bad).err().unwrap_or_default();
            assert!(e.contains("expected K/N"), "{bad}: {e}");
        }
        let e = Shard::parse("0/1000001").err().unwrap_or_default();
        assert!(e.contains("MAX_GRID_POINTS"), "{e}");
    }

    #[test]
    fn the_shard_line_reads_back() {
        let l = ShardLine {
            shard: Shard { index: 2, count: 3 },
            points: 10,
            arms: 2,
        };
        assert_eq!(l.line(), "# sim sweep shard 2/3; points=10; arms=2");
        assert_eq!(ShardLine::parse(&l.line()), Ok(l));
        for bad in [
            "# sim sweep shard 2/3; points=10",
            "# sim sweep shard 2/3; arms=2; points=10",
            "# sim sweep shard 3/3; points=10; arms=2",
            "# sim sweep shard 0/3; points=10; arms=0",
            "point,arm",
        ] {
            assert!(ShardLine::parse(bad).is_err(), "{bad}");
        }
    }
}
