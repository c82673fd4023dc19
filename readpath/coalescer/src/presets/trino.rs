//! Trino: `AbstractParquetDataSource.planChunksRead` (trinodb/trino
//! `lib/trino-parquet/src/main/java/io/trino/parquet/AbstractParquetDataSource.java`): ranges
//! longer than `max-buffer-size` are split into reads of that size (the last one shorter) and
//! never merged; the others merge (`mergeAdjacentDiskRanges`) while the merged length stays
//! `<= max-buffer-size` and `last.end + max-merge-distance >= next.start`.

use layout::ByteRange;

use crate::build::{split_tasks, whole_task, Run};
use crate::types::{NeededRange, ReadTask};

pub(crate) fn trino(
    needed: &[NeededRange],
    max_merge_distance_bytes: u64,
    max_buffer_size_bytes: u64,
) -> Vec<ReadTask> {
    let mut tasks = Vec::new();
    let mut run: Option<Run> = None;
    for (i, n) in needed.iter().enumerate() {
        if n.range.len() > max_buffer_size_bytes {
            // A large range ends any run: merged small ranges could not span it anyway.
            if let Some(r) = run.take() {
                tasks.push(whole_task(needed, r.first, r.last));
            }
            split_tasks(
                needed,
                i,
                i,
                split_large(n.range, max_buffer_size_bytes),
                &mut tasks,
            );
            continue;
        }
        match run.as_mut() {
            Some(r)
                if n.range.end - r.start <= max_buffer_size_bytes
                    && r.end.saturating_add(max_merge_distance_bytes) >= n.range.start =>
            {
                r.last = i;
                r.end = n.range.end;
            }
            _ => {
                if let Some(r) = run.take() {
                    tasks.push(whole_task(needed, r.first, r.last));
                }
                run = Some(Run::new(i, n));
            }
        }
    }
    if let Some(r) = run {
        tasks.push(whole_task(needed, r.first, r.last));
    }
    tasks
}

/// `splitLargeRange`: pieces of `max` bytes from the start, the remainder last.
fn split_large(range: ByteRange, max: u64) -> impl Iterator<Item = ByteRange> {
    let mut offset = range.start;
    std::iter::from_fn(move || {
        (offset < range.end).then(|| {
            let end = offset.saturating_add(max).min(range.end);
            let piece = ByteRange::new(offset, end);
            offset = end;
            piece
        })
    })
}
