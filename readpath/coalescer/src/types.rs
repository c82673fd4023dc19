//! The values the coalescer takes and returns: needed ranges in, read tasks out.

use layout::ByteRange;
use serde::{Deserialize, Serialize};

/// The group id of ranges that were not split out of a larger one; they coalesce with each
/// other under `clickhouse-base`.
pub const WHOLE_RANGES: u32 = 0;

/// One range the decoder needs.
///
/// `group`: ranges split out of one original range (the pages of one chunk, the bloom blocks of
/// one filter) share a group id; the `clickhouse-base` preset coalesces them only with each
/// other. The rule is simply "only neighbours with equal group ids share a task", so give every
/// range that was not split [`WHOLE_RANGES`] (0) and each split range its own non-zero id.
/// ClickHouse splits a range only if it is at least `min_bytes_for_seek` long
/// (`Prefetcher::splitAndPrefetchRange`); a shorter one is read as the hull of its sub-ranges
/// and coalesces like a whole range, so a planner mimicking it passes that hull in group 0.
/// Other presets ignore `group`.
///
/// `likely_used`: the base preset's incidental-read rule (a neighbour joins a task only if it
/// is likely to be used or shorter than `min_bytes_for_seek`). ClickHouse marks every range of
/// a batch it starts, and every split sub-range, as allowed; set `likely_used = true` for those.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NeededRange {
    /// The bytes needed, `[start, end)` inside one file.
    pub range: ByteRange,
    /// Ranges split out of one original range share a group id.
    pub group: u32,
    /// Whether the decoder will probably use this range (base preset's incidental-read rule).
    pub likely_used: bool,
}

impl NeededRange {
    /// A whole (unsplit) range that is likely used: the common case.
    pub const fn new(range: ByteRange) -> Self {
        Self {
            range,
            group: WHOLE_RANGES,
            likely_used: true,
        }
    }
}

/// Which bytes the source already holds (page cache); R8 reads through such gaps for free.
pub trait CachedBytes {
    /// How many bytes of `range` the source already holds.
    fn cached_bytes(&self, range: ByteRange) -> u64;
}

/// A source that holds nothing: every gap costs its full length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NothingCached;

impl CachedBytes for NothingCached {
    fn cached_bytes(&self, _range: ByteRange) -> u64 {
        0
    }
}

/// Where part of a needed range sits inside a task. A needed range may be split across tasks
/// by presets that split large ranges (Trino, Polars), so one needed range can appear in
/// several tasks, each `Served` covering `[needed_offset, needed_offset + len)` of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Served {
    /// Index of the needed range in the input slice.
    pub needed: u32,
    /// Offset of this piece from the start of the needed range.
    pub needed_offset: u64,
    /// Offset of this piece from the start of the task.
    pub task_offset: u64,
    /// Length of this piece in bytes.
    pub len: u64,
}

/// One ranged GET: the span to read and the needed pieces it serves, in offset order, so that
/// partial readiness (R1) can serve a piece as soon as `bytes_ready >= task_offset + len`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ReadTask {
    /// The bytes this task reads.
    pub range: ByteRange,
    /// The needed pieces inside it, sorted by `task_offset`. Empty only when a preset that
    /// splits large reads (Polars) cuts a part lying wholly inside a bridged gap, as it does.
    pub serves: Vec<Served>,
}

impl ReadTask {
    /// Bytes the decoder needs out of this task.
    pub fn needed_bytes(&self) -> u64 {
        self.serves.iter().map(|s| s.len).sum()
    }

    /// The pieces fully inside the first `bytes_ready` bytes of the task: those partial
    /// readiness (R1) can serve once `bytes_ready` bytes have arrived in offset order.
    pub fn served_within(&self, bytes_ready: u64) -> &[Served] {
        let n = self
            .serves
            .partition_point(|s| s.task_offset + s.len <= bytes_ready);
        self.serves.get(..n).unwrap_or(&[])
    }

    /// Bytes read that no needed range asked for (gap bytes).
    pub fn gap_bytes(&self) -> u64 {
        self.range.len().saturating_sub(self.needed_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn served_within_is_the_ready_prefix() {
        let piece = |needed, task_offset, len| Served {
            needed,
            needed_offset: 0,
            task_offset,
            len,
        };
        let t = ReadTask {
            range: ByteRange::new(1000, 1300),
            serves: vec![piece(0, 0, 100), piece(1, 150, 50), piece(2, 250, 50)],
        };
        assert_eq!(t.served_within(0).len(), 0);
        assert_eq!(t.served_within(100).len(), 1);
        assert_eq!(t.served_within(199).len(), 1);
        assert_eq!(t.served_within(200).len(), 2);
        assert_eq!(t.served_within(u64::MAX).len(), 3);
        assert_eq!(t.gap_bytes(), 100);
    }
}
