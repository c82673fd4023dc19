//! Velox `DirectBufferedInput` (facebookincubator/velox @ 4d16851, 2026-08,
//! `velox/dwio/common/DirectBufferedInput.cpp`, over `coalesceIo` in
//! `velox/common/base/CoalesceIo.h`):
//!
//! - `groupRequests`: requests in offset order join the current group while the gap from the
//!   previous request's end is `0 < gap < max-coalesced-distance` (adjacent requests join); a
//!   request counts `min(length, load-quantum)` bytes, both towards its end and towards the
//!   group's payload, and the request that takes the payload past `max-coalesced-bytes` starts
//!   a new group, whose count starts again at 0 (that request itself not counted). Gaps are
//!   not counted.
//! - `DirectCoalescedLoad::computeLoadSizes`: a group is one GET from its first request's
//!   start; every request but the last is read whole, the last up to `load-quantum` bytes.
//! - `DirectInputStream::loadPosition`: the rest of that last request is read when the decoder
//!   reaches it, `load-quantum` bytes per GET.

use layout::ByteRange;

use crate::build::split_tasks;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn velox(
    needed: &[NeededRange],
    max_gap_bytes: u64,
    load_quantum_bytes: u64,
    max_coalesced_bytes: u64,
) -> Vec<ReadTask> {
    let quantum = load_quantum_bytes.max(1);
    let mut tasks = Vec::new();
    for (first, last) in groups(needed, max_gap_bytes, quantum, max_coalesced_bytes) {
        if let (Some(a), Some(z)) = (needed.get(first), needed.get(last)) {
            split_tasks(
                needed,
                first,
                last,
                loads(a.range.start, z.range, quantum),
                &mut tasks,
            );
        }
    }
    tasks
}

/// `groupRequests`: the groups as `(first, last)` indexes, in order.
fn groups(
    needed: &[NeededRange],
    max_gap_bytes: u64,
    quantum: u64,
    max_coalesced_bytes: u64,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let Some(first) = needed.first() else {
        return out;
    };
    // Checked input has no overlaps, so no duplicate requests (`coalesceIo` keeps those in
    // their group), and a counted end never passes the next start.
    let (mut start, mut coalesced, mut last_end) = (0, 0u64, first.range.start);
    for (i, n) in needed.iter().enumerate() {
        let size = n.range.len().min(quantum);
        coalesced += size;
        let enough = coalesced > max_coalesced_bytes;
        if enough {
            coalesced = 0;
        }
        let gap = n.range.start.saturating_sub(last_end);
        let bridged = !enough && (gap == 0 || gap < max_gap_bytes);
        if !bridged && i > start {
            out.push((start, i - 1));
            start = i;
        }
        last_end = n.range.start + size;
    }
    out.push((start, needed.len() - 1));
    out
}

/// The GETs of a group from `start` whose last request is `last`: the group's load, through
/// the first `quantum` bytes of `last`, then the rest of `last` in pieces of `quantum`.
fn loads(start: u64, last: ByteRange, quantum: u64) -> impl Iterator<Item = ByteRange> {
    let first_end = last.start.saturating_add(quantum).min(last.end);
    let rest = ByteRange::new(first_end, last.end);
    std::iter::once(ByteRange::new(start, first_end)).chain(pieces(rest, quantum))
}

/// `range` in pieces of `quantum` bytes from its start, the last one shorter.
fn pieces(range: ByteRange, quantum: u64) -> impl Iterator<Item = ByteRange> {
    let mut offset = range.start;
    std::iter::from_fn(move || {
        (offset < range.end).then(|| {
            let end = offset.saturating_add(quantum).min(range.end);
            let piece = ByteRange::new(offset, end);
            offset = end;
            piece
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn spans(ranges: &[(u64, u64)], max_coalesced: u64) -> Vec<(u64, u64)> {
        let needed: Vec<NeededRange> = ranges
            .iter()
            .map(|&(s, e)| NeededRange::new(ByteRange::new(s, e)))
            .collect();
        velox(&needed, 512 * KIB, 8 * MIB, max_coalesced)
            .iter()
            .map(|t| (t.range.start, t.range.end))
            .collect()
    }

    #[test]
    fn a_chunk_over_the_quantum_is_read_in_quanta_and_ends_its_group() {
        // Two adjacent chunks of 20 MiB: the second starts 12 MiB past the first one's
        // counted end, farther than the 512 KiB distance.
        let r = spans(&[(0, 20 * MIB), (20 * MIB, 40 * MIB)], 128 * MIB);
        assert_eq!(
            r,
            vec![
                (0, 8 * MIB),
                (8 * MIB, 16 * MIB),
                (16 * MIB, 20 * MIB),
                (20 * MIB, 28 * MIB),
                (28 * MIB, 36 * MIB),
                (36 * MIB, 40 * MIB)
            ]
        );
    }

    #[test]
    fn a_group_reads_its_last_request_up_to_the_quantum() {
        // 1 MiB, a 100 KiB gap, then 10 MiB: one load through 8 MiB of the second, then 2 MiB.
        let b = MIB + 100 * KIB;
        let r = spans(&[(0, MIB), (b, b + 10 * MIB)], 128 * MIB);
        assert_eq!(r, vec![(0, b + 8 * MIB), (b + 8 * MIB, b + 10 * MIB)]);
        // A gap of the distance itself does not join.
        let c = MIB + 512 * KIB;
        assert_eq!(spans(&[(0, MIB), (c, c + MIB)], 128 * MIB).len(), 2);
    }

    #[test]
    fn the_payload_cap_counts_clamped_sizes_and_restarts_at_zero() {
        // Adjacent 3 MiB chunks under an 8 MiB cap: the third takes the payload to 9 MiB and
        // starts a group counted from 0, so the fourth and fifth join it (6 MiB), the sixth
        // reaches 9 MiB again.
        let r: Vec<(u64, u64)> = (0..6).map(|k| (k * 3 * MIB, (k + 1) * 3 * MIB)).collect();
        assert_eq!(
            spans(&r, 8 * MIB),
            vec![(0, 6 * MIB), (6 * MIB, 15 * MIB), (15 * MIB, 18 * MIB)]
        );
        assert_eq!(spans(&r, 128 * MIB), vec![(0, 18 * MIB)]);
    }
}
