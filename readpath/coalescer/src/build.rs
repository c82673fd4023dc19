//! Turning runs of needed ranges into [`ReadTask`]s: the shared greedy merge loop, and the
//! bookkeeping of where each needed piece sits inside its task.

use layout::ByteRange;
use limits::u32_of;

use crate::types::{NeededRange, ReadTask, Served};

/// A run of consecutive needed ranges `first..=last` being merged into one task.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run {
    /// Index of the first needed range in the run.
    pub first: usize,
    /// Index of the last needed range in the run.
    pub last: usize,
    /// Start of the span (the first range's start).
    pub start: u64,
    /// The first range's end: ClickHouse's task cap counts from it (`Prefetcher.cpp`
    /// `pickRangesAndCreateTaskIfNotExists`, "Go right": `initial_offset = end_offset`).
    pub first_end: u64,
    /// End of the span (the last range's end).
    pub end: u64,
    /// Bytes of needed ranges in the run.
    pub needed_bytes: u64,
    /// Gap bytes the run counts as waste (the preset decides which gap bytes count).
    pub wasted_bytes: u64,
}

impl Run {
    pub(crate) fn new(index: usize, n: &NeededRange) -> Self {
        Run {
            first: index,
            last: index,
            start: n.range.start,
            first_end: n.range.end,
            end: n.range.end,
            needed_bytes: n.range.len(),
            wasted_bytes: 0,
        }
    }

    fn extend(&mut self, index: usize, n: &NeededRange, wasted_gap_bytes: u64) {
        self.last = index;
        self.end = n.range.end;
        self.needed_bytes += n.range.len();
        self.wasted_bytes += wasted_gap_bytes;
    }

    pub(crate) fn span(&self) -> ByteRange {
        ByteRange::new(self.start, self.end)
    }
}

/// Greedy left-to-right merging: `join(run, next)` returns `Some(wasted_gap_bytes)` if `next`
/// joins the run (counting that many gap bytes as waste) or `None` to start a new run. `emit`
/// receives each finished run. Linear in the number of ranges.
pub(crate) fn greedy_runs(
    needed: &[NeededRange],
    mut join: impl FnMut(&Run, &NeededRange) -> Option<u64>,
    mut emit: impl FnMut(&Run),
) {
    let mut iter = needed.iter().enumerate();
    let Some((i0, n0)) = iter.next() else { return };
    let mut run = Run::new(i0, n0);
    for (i, n) in iter {
        match join(&run, n) {
            Some(wasted) => run.extend(i, n, wasted),
            None => {
                emit(&run);
                run = Run::new(i, n);
            }
        }
    }
    emit(&run);
}

/// One task spanning whole needed ranges `first..=last`.
pub(crate) fn whole_task(needed: &[NeededRange], first: usize, last: usize) -> ReadTask {
    let members = needed.get(first..=last).unwrap_or(&[]);
    let start = members.first().map_or(0, |n| n.range.start);
    let end = members.last().map_or(start, |n| n.range.end);
    let serves = members
        .iter()
        .enumerate()
        .map(|(k, n)| Served {
            // `first + k` fits a u32: inputs are checked to have at most u32::MAX ranges.
            needed: u32_of(first + k),
            needed_offset: 0,
            task_offset: n.range.start - start,
            len: n.range.len(),
        })
        .collect();
    ReadTask {
        range: ByteRange::new(start, end),
        serves,
    }
}

/// Tasks for `pieces` (sorted, non-overlapping sub-spans covering every byte of needed ranges
/// `first..=last`), each serving the parts of needed ranges that fall inside it. Used by
/// presets that split large reads, so one needed range may be served by several tasks.
pub(crate) fn split_tasks(
    needed: &[NeededRange],
    first: usize,
    last: usize,
    pieces: impl IntoIterator<Item = ByteRange>,
    out: &mut Vec<ReadTask>,
) {
    let mut j = first;
    for piece in pieces {
        let mut serves = Vec::new();
        while let Some(n) = needed.get(j).filter(|_| j <= last) {
            let r = n.range;
            if r.start >= piece.end {
                break;
            }
            let lo = r.start.max(piece.start);
            let hi = r.end.min(piece.end);
            if lo < hi {
                serves.push(Served {
                    needed: u32_of(j),
                    needed_offset: lo - r.start,
                    task_offset: lo - piece.start,
                    len: hi - lo,
                });
            }
            if r.end <= piece.end {
                j += 1;
            } else {
                break;
            }
        }
        out.push(ReadTask {
            range: piece,
            serves,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: u64, end: u64) -> NeededRange {
        NeededRange::new(ByteRange::new(start, end))
    }

    #[test]
    fn whole_task_records_offsets() {
        let needed = [r(0, 5), r(100, 110), r(120, 130)];
        let t = whole_task(&needed, 1, 2);
        assert_eq!(t.range, ByteRange::new(100, 130));
        assert_eq!(t.serves.len(), 2);
        assert_eq!(
            t.serves[1],
            Served {
                needed: 2,
                needed_offset: 0,
                task_offset: 20,
                len: 10
            }
        );
        assert_eq!(t.needed_bytes(), 20);
        assert_eq!(t.gap_bytes(), 10);
    }

    #[test]
    fn split_tasks_cut_ranges_at_piece_edges() {
        let needed = [r(0, 10), r(15, 40)];
        let mut out = Vec::new();
        let pieces = [ByteRange::new(0, 20), ByteRange::new(20, 40)];
        split_tasks(&needed, 0, 1, pieces, &mut out);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].serves.len(), 2);
        assert_eq!(
            out[0].serves[1],
            Served {
                needed: 1,
                needed_offset: 0,
                task_offset: 15,
                len: 5
            }
        );
        assert_eq!(
            out[1].serves,
            vec![Served {
                needed: 1,
                needed_offset: 5,
                task_offset: 0,
                len: 20
            }]
        );
    }

    #[test]
    fn greedy_runs_emit_every_range_once() {
        let needed = [r(0, 10), r(12, 20), r(100, 110)];
        let mut runs = Vec::new();
        greedy_runs(
            &needed,
            |run, n| (n.range.start - run.end <= 5).then_some(0),
            |run| runs.push((run.first, run.last)),
        );
        assert_eq!(runs, vec![(0, 1), (2, 2)]);
    }
}
