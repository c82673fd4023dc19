//! parquet-java's vectored read through Hadoop S3A, as Spark's Parquet reader does it:
//!
//! - parquet-java (`ParquetFileReader.internalReadRowGroup`) first puts the chunks it reads
//!   into `ConsecutivePartList`s, a new list only where a chunk does not start at the previous
//!   one's end (`currentParts.endPos() != startingPos`), with no size limit, and asks for one
//!   range per list (`readAllPartsVectoredOrNormal`);
//! - S3A (`VectoredReadUtils.mergeSortedRanges`, `CombinedFileRange.merge`, apache/hadoop)
//!   then merges those ranges, refusing when `other.start - end >= minSeek` or the merged
//!   length would pass `maxSize`, and reads each merged range in one GET, whatever its length
//!   (S3A passes a chunk size of 1: no rounding).

use crate::build::whole_task;
use crate::types::{NeededRange, ReadTask};

pub(crate) fn hadoop_s3a(
    needed: &[NeededRange],
    min_seek_bytes: u64,
    max_merged_bytes: u64,
) -> Vec<ReadTask> {
    let mut tasks = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for (first, last) in consecutive_lists(needed) {
        let (Some(a), Some(z)) = (needed.get(first), needed.get(last)) else {
            continue;
        };
        let merges = current.and_then(|(f, l)| {
            let (start, end) = (needed.get(f)?.range.start, needed.get(l)?.range.end);
            (a.range.start - end < min_seek_bytes && z.range.end - start <= max_merged_bytes)
                .then_some(f)
        });
        current = match (merges, current) {
            (Some(f), _) => Some((f, last)),
            (None, Some((f, l))) => {
                tasks.push(whole_task(needed, f, l));
                Some((first, last))
            }
            (None, None) => Some((first, last)),
        };
    }
    if let Some((f, l)) = current {
        tasks.push(whole_task(needed, f, l));
    }
    tasks
}

/// parquet-java's `ConsecutivePartList`s: runs of ranges each starting where the one before
/// ends, as `(first, last)` indexes.
fn consecutive_lists(needed: &[NeededRange]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (i, n) in needed.iter().enumerate() {
        match out.last_mut() {
            Some((_, last))
                if needed
                    .get(*last)
                    .is_some_and(|p| p.range.end == n.range.start) =>
            {
                *last = i
            }
            _ => out.push((i, i)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::ByteRange;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn spans(ranges: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let needed: Vec<NeededRange> = ranges
            .iter()
            .map(|&(s, e)| NeededRange::new(ByteRange::new(s, e)))
            .collect();
        hadoop_s3a(&needed, 128 * KIB, 2 * MIB)
            .iter()
            .map(|t| (t.range.start, t.range.end))
            .collect()
    }

    #[test]
    fn adjacent_chunks_are_one_range_whatever_its_length() {
        // Four adjacent 3 MiB chunks: one list of 12 MiB, never split; S3A's 2 MiB bound alone
        // would have read them in four GETs.
        let r: Vec<(u64, u64)> = (0..4).map(|k| (k * 3 * MIB, (k + 1) * 3 * MIB)).collect();
        assert_eq!(spans(&r), vec![(0, 12 * MIB)]);
    }

    #[test]
    fn lists_merge_under_the_seek_and_size_bounds() {
        // Two 512 KiB lists 64 KiB apart merge; a third 200 KiB past them does not (gap);
        // a fourth 1 KiB past the third would take its range past 2 MiB.
        let a = (0, 512 * KIB);
        let b = (576 * KIB, 1088 * KIB);
        let c = (1288 * KIB, 1800 * KIB);
        let d = (1801 * KIB, 3400 * KIB);
        assert_eq!(
            spans(&[a, b, c, d]),
            vec![
                (0, 1088 * KIB),
                (1288 * KIB, 1800 * KIB),
                (1801 * KIB, 3400 * KIB)
            ]
        );
        assert_eq!(
            spans(&[a, b, (1100 * KIB, 3 * MIB)]),
            vec![(0, 1088 * KIB), (1100 * KIB, 3 * MIB)]
        );
    }
}
