//! Polars: `merge_ranges` and `split_range` (pola-rs/polars
//! `crates/polars-io/src/cloud/polars_object_store.rs`). A range joins the current read when
//! the gap is at most `clamp(max(needed_bytes_so_far, next_len) / 8, 1 MiB, 8 MiB)` and the
//! merged length moves no farther from the chunk size than the current one; every merged read
//! is then split into parts as close as possible to the chunk size, the remainder going to the
//! first part.

use layout::ByteRange;

use crate::build::{greedy_runs, split_tasks};
use crate::types::{NeededRange, ReadTask};

pub(crate) fn polars(
    needed: &[NeededRange],
    chunk_size_bytes: u64,
    min_gap_bytes: u64,
    max_gap_bytes: u64,
) -> Vec<ReadTask> {
    let mut tasks = Vec::new();
    greedy_runs(
        needed,
        |run, n| {
            let gap = n.range.start - run.end;
            let new_len = n.range.end - run.start;
            let current_len = run.end - run.start;
            let closer =
                new_len.abs_diff(chunk_size_bytes) <= current_len.abs_diff(chunk_size_bytes);
            let tolerance =
                (run.needed_bytes.max(n.range.len()) / 8).clamp(min_gap_bytes, max_gap_bytes);
            (closer && gap <= tolerance).then_some(0)
        },
        |run| {
            split_tasks(
                needed,
                run.first,
                run.last,
                split_range(run.span(), chunk_size_bytes),
                &mut tasks,
            )
        },
    );
    tasks
}

/// `split_range`: the part count (of `ceil(len / chunk)` and `floor(len / chunk)`, at least 1)
/// whose part size is nearest the chunk size, the first on ties; equal parts of
/// `len / n_parts`, the remainder added to the first.
fn split_range(range: ByteRange, chunk_size_bytes: u64) -> impl Iterator<Item = ByteRange> {
    let len = range.len();
    let chunk = chunk_size_bytes.max(1);
    let ceil = len.div_ceil(chunk).max(1);
    let floor = (len / chunk).max(1);
    let n_parts = if (len / floor).abs_diff(chunk) < (len / ceil).abs_diff(chunk) {
        floor
    } else {
        ceil
    };
    let part = (len / n_parts).max(1);
    let remainder = len % part;
    (0..n_parts).map(move |k| {
        if k == 0 {
            ByteRange::new(range.start, (range.start + part + remainder).min(range.end))
        } else {
            let start = range.start + remainder + k * part;
            ByteRange::new(start, start + part)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn parts(start: u64, end: u64, chunk: u64) -> Vec<(u64, u64)> {
        split_range(ByteRange::new(start, end), chunk)
            .map(|r| (r.start, r.end))
            .collect()
    }

    // The expected values are those of Polars' own `test_split_range` (chunk 64 MiB).
    #[test]
    fn split_matches_polars_thresholds() {
        let chunk = 64 * MIB;
        let n = 4 * chunk / 3;
        assert_eq!(parts(0, n, chunk), vec![(0, 89478485)]);
        assert_eq!(
            parts(0, n + 1, chunk),
            vec![(0, 44739243), (44739243, 89478486)]
        );
        let n = 12 * chunk / 5;
        assert_eq!(
            parts(0, n, chunk),
            vec![(0, 80530637), (80530637, 161061273)]
        );
        assert_eq!(
            parts(0, n + 1, chunk),
            vec![(0, 53687092), (53687092, 107374183), (107374183, 161061274)]
        );
    }

    // From Polars' `test_merge_ranges` (chunk 64 MiB, tolerance 1..8 MiB).
    #[test]
    fn merge_matches_polars_examples() {
        let chunk = 64 * MIB;
        let run = |ranges: &[(u64, u64)]| -> Vec<(u64, u64)> {
            let needed: Vec<NeededRange> = ranges
                .iter()
                .map(|&(s, e)| NeededRange::new(ByteRange::new(s, e)))
                .collect();
            polars(&needed, chunk, MIB, 8 * MIB)
                .iter()
                .map(|t| (t.range.start, t.range.end))
                .collect()
        };
        assert_eq!(
            run(&[(0, 1), (1, 127 * MIB)]),
            vec![(0, 66584576), (66584576, 133169152)]
        );
        assert_eq!(run(&[(0, 1), (MIB + 1, MIB + 2)]), vec![(0, 1048578)]);
        assert_eq!(
            run(&[(0, 1), (MIB + 2, MIB + 3)]),
            vec![(0, 1), (1048578, 1048579)]
        );
        assert_eq!(run(&[(0, 8), (10, 11)]), vec![(0, 11)]);
        assert_eq!(run(&[(0, 1), (3, 11)]), vec![(0, 11)]);
    }
}
