//! DuckDB 1.4 `read_parquet` through httpfs (`parquet_reader.cpp` `LoadMetadata` and
//! `ScanInternal`, `thrift_tools.hpp` `ReadAheadBuffer`, `caching_file_system.cpp`,
//! `multi_file_function.hpp`, httpfs `httpfs.cpp`).
//!
//! - `threads` workers. The first file is opened at bind time; a worker opens a later file
//!   itself when the files before it have no row group left to start (looking ahead at most
//!   `threads` files): a HEAD for its size, the footer tail, and when the metadata does not
//!   fit the tail, the metadata again (see [`second_footer_read`]).
//! - A worker reads one row group at a time: its read heads (column chunks merged when the
//!   gap is at most `ALLOW_GAP`, 16 KiB; the whole row group when the columns read are over
//!   95% of its span and nothing is filtered), last registered first, one GET after another;
//!   then decodes it. With a filter, only the filter columns' chunks merge and each head is
//!   fetched when first read: the filter columns' first, then each other column's chunk on
//!   its own, and none of those when no row of the group passes ([`filtered_reads`]). A free
//!   worker takes the first ready item in file order.
//! - Every read goes through the external file cache, which holds the footer reads: a read
//!   whose uncached part is one piece fetches only that piece.
//! - The result streams to the client through a buffer of `streaming_buffer_size`
//!   (1,000,000 bytes; `simple_buffered_data.cpp`, `physical_buffered_collector.cpp`): a
//!   worker's sink blocks while the buffer holds at least that much, and only the client's
//!   fetches drain it. Row groups are delivered whole here (DuckDB sinks 2048-row vectors).
//!   Not modelled: the streaming collector blocking each scanner's first chunk, which made a
//!   streamed scan of one file of large row groups bimodal (README, "The peer presets"); a
//!   materialized result (`to_arrow_table()`, what `sim check-peers` collects) has neither.

use coalescer::CoalescePolicy;
use layout::ByteRange;

use super::{decode_and_deliver, get, head, merged, needed_in, one, FileRead};
use crate::error::PlanError;
use crate::peer::knobs::PeerKnobs;
use crate::peer::program::{Program, Step};
use crate::types::ReadKind;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;

/// DuckDB's footer tail: `clamp(size / 1000, 16 KiB, 256 KiB)` rounded up to a power of two,
/// at most the file.
pub(super) fn duckdb_tail(size: u64) -> u64 {
    (size / 1000)
        .clamp(16 * KIB, 256 * KIB)
        .next_power_of_two()
        .min(size)
}

/// The read of the whole metadata when it does not fit the tail `tail`: through httpfs's
/// buffered read, `[size - footer, size)` when the footer is at most 1 MiB; otherwise up to
/// the cached tail, or 1 MiB from the metadata's start when less than 1 MiB is missing.
fn second_footer_read(size: u64, footer: u64, tail: u64) -> Option<ByteRange> {
    if footer <= tail {
        return None;
    }
    let start = size - footer;
    Some(if footer <= MIB {
        ByteRange::new(start, size)
    } else if footer - tail > MIB {
        ByteRange::new(start, size - tail)
    } else {
        ByteRange::new(start, start + MIB)
    })
}

/// What a read fetches when `cached` (sorted, disjoint) already holds some of it: the one
/// uncached piece, nothing, or (two or more pieces) the whole read.
fn through_cache(read: ByteRange, cached: &[ByteRange]) -> Option<ByteRange> {
    let mut pieces = Vec::new();
    let mut at = read.start;
    for c in cached.iter().filter(|c| c.overlaps(&read)) {
        if c.start > at {
            pieces.push(ByteRange::new(at, c.start));
        }
        at = at.max(c.end);
    }
    if at < read.end {
        pieces.push(ByteRange::new(at, read.end));
    }
    match pieces.len() {
        0 => None,
        1 => Some(pieces[0]),
        _ => Some(read),
    }
}

/// The columns of a filtered scan (`filters` set in `ParquetReader::Scan`): those a filter
/// reads, and every column read, in the scan's order.
pub(super) struct Filter<'a> {
    pub(super) filter_columns: &'a [u32],
    pub(super) columns: &'a [u32],
}

/// A row group's GETs, in the order DuckDB issues them: `answer_rows` of its rows pass the
/// filter, if there is one.
fn row_group_reads(
    f: &FileRead<'_>,
    g: u32,
    ranges: &[ByteRange],
    policy: &CoalescePolicy,
    filter: Option<&Filter<'_>>,
    answer_rows: u64,
    cached: &[ByteRange],
) -> Result<Vec<ByteRange>, PlanError> {
    let reads = match filter {
        None => unfiltered_reads(f, g, ranges, policy)?,
        Some(filter) => filtered_reads(f, g, filter, policy, answer_rows)?,
    };
    Ok(reads
        .into_iter()
        .filter_map(|r| through_cache(r, cached))
        .collect())
}

/// No filter: the whole row group when the chunks read cover more than 95% of its span
/// (`WHOLE_GROUP_PREFETCH_MINIMUM_SCAN`), else every chunk registered for merging and all the
/// read heads prefetched, last registered first.
fn unfiltered_reads(
    f: &FileRead<'_>,
    g: u32,
    ranges: &[ByteRange],
    policy: &CoalescePolicy,
) -> Result<Vec<ByteRange>, PlanError> {
    let all: Vec<ByteRange> = f
        .layout
        .row_groups
        .get(g as usize)
        .map(|rg| {
            rg.columns
                .iter()
                .map(|c| c.range())
                .filter(|r| !r.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let start = all.iter().map(|r| r.start).min().unwrap_or(0);
    let end = all.iter().map(|r| r.end).max().unwrap_or(0);
    let selected: u64 = ranges.iter().map(|r| r.len()).sum();
    let mut reads = if end > start && selected * 100 > (end - start) * 95 {
        vec![ByteRange::new(start, end)]
    } else {
        merged(ranges, policy)?
    };
    // Read heads are fetched last registered first.
    reads.reverse();
    Ok(reads)
}

/// A filter (`lazy_fetch`): each column registers its chunk with merging only if it has a
/// filter (`RegisterPrefetch(trans, !(lazy_fetch && !has_filter))`), nothing is prefetched,
/// and a read head is fetched when first read. The filter columns are read first, so their
/// heads come first; the other columns' chunks, one GET each in the scan's column order,
/// only when a row of the group passes (for a vector where none does, `ColumnReader::Skip`
/// only adds to `pending_skips`).
fn filtered_reads(
    f: &FileRead<'_>,
    g: u32,
    filter: &Filter<'_>,
    policy: &CoalescePolicy,
    answer_rows: u64,
) -> Result<Vec<ByteRange>, PlanError> {
    let rg = f.layout.row_groups.get(g as usize);
    let chunk = |c: u32| {
        rg.and_then(|rg| rg.columns.get(c as usize))
            .map(|ch| ch.range())
            .filter(|r| !r.is_empty())
    };
    let mut filtered: Vec<ByteRange> = filter
        .filter_columns
        .iter()
        .filter_map(|&c| chunk(c))
        .collect();
    filtered.sort_by_key(|r| r.start);
    filtered.dedup();
    let mut reads = merged(&filtered, policy)?;
    if answer_rows > 0 {
        let mut seen: Vec<u32> = filter.filter_columns.to_vec();
        for &c in filter.columns {
            if seen.contains(&c) {
                continue;
            }
            seen.push(c);
            reads.extend(chunk(c));
        }
    }
    Ok(reads)
}

pub(super) fn program(
    files: &[FileRead<'_>],
    knobs: &PeerKnobs,
    policy: &CoalescePolicy,
    filter: Option<&Filter<'_>>,
) -> Result<Program, PlanError> {
    let mut p = Program {
        sink_bytes: Some(knobs.streaming_buffer_bytes),
        ..Program::default()
    };
    let threads_n = knobs.cpu_threads.max(1);
    let threads = p.pool("workers", threads_n);
    let mut opens: Vec<usize> = Vec::with_capacity(files.len());
    // Per file: the last row-group task (once it started, the scan moved past the file).
    let mut last_rg: Vec<Option<usize>> = Vec::with_capacity(files.len());
    for (k, f) in files.iter().enumerate() {
        let (size, footer) = (f.size(), f.footer_len());
        let tail = duckdb_tail(size);
        let tail_range = ByteRange::new(size - tail, size);
        let mut open = vec![
            one(head(f.index)),
            one(get(f.index, tail_range, ReadKind::Footer, footer.min(tail))),
        ];
        let mut cached = vec![tail_range];
        if let Some(r) = second_footer_read(size, footer, tail) {
            open.push(one(get(f.index, r, ReadKind::Footer, footer - tail)));
            cached = if r.end >= tail_range.start {
                vec![ByteRange::new(r.start, size)]
            } else {
                vec![r, tail_range]
            };
        }
        let mut deps = Vec::new();
        if let Some(first) = opens.first() {
            deps.push(p.done(*first));
        }
        if let Some(behind) = k.checked_sub(threads_n as usize) {
            deps.push(match last_rg[behind] {
                Some(t) => Program::started(t),
                None => p.done(opens[behind]),
            });
        }
        let opened = p.task_at(threads, deps, open);
        opens.push(opened);
        let mut last = None;
        for ((g, ranges), &answer) in f.row_groups.iter().zip(&f.answer_rows) {
            let requests = row_group_reads(f, *g, ranges, policy, filter, answer, &cached)?
                .into_iter()
                .map(|r| get(f.index, r, ReadKind::DataPages, needed_in(r, ranges)))
                .collect();
            let mut steps = vec![Step::Requests {
                requests,
                parallel: 1,
            }];
            steps.extend(decode_and_deliver(f, *g));
            last = Some(p.task(threads, vec![opened], steps));
        }
        last_rg.push(last);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_a_power_of_two_between_16_and_256_kib() {
        assert_eq!(duckdb_tail(20_016_713), 32 * KIB);
        assert_eq!(duckdb_tail(798_330), 16 * KIB);
        assert_eq!(duckdb_tail(96_000_000), 128 * KIB);
        assert_eq!(duckdb_tail(1_000), 1_000);
    }

    #[test]
    fn the_second_footer_read_follows_the_buffered_read() {
        // Measured: wide0 (798,330 bytes, L = 72,024) reads [726,298, 798,330).
        let size = 798_330;
        let r = second_footer_read(size, 72_024 + 8, duckdb_tail(size)).unwrap();
        assert_eq!((r.start, r.end), (726_298, 798_330));
        assert_eq!(second_footer_read(size, 1_000, duckdb_tail(size)), None);
        let big = second_footer_read(100 * MIB, 3 * MIB, 128 * KIB).unwrap();
        assert_eq!(big.end, 100 * MIB - 128 * KIB);
    }

    #[test]
    fn a_filter_merges_only_the_filter_columns_and_reads_the_others_if_a_row_passes() {
        // Four chunks back to back: unfiltered, the whole row group in one GET.
        let t = crate::testing::table(&crate::testing::TableShape {
            row_groups: 1,
            columns: 4,
            ..Default::default()
        });
        let f = FileRead {
            index: 0,
            query_pos: 0,
            layout: std::borrow::Cow::Borrowed(&t.files[0]),
            row_groups: Vec::new(),
            answer_rows: Vec::new(),
        };
        let chunks: Vec<ByteRange> = t.files[0].row_groups[0]
            .columns
            .iter()
            .map(|c| c.range())
            .collect();
        let policy = CoalescePolicy::preset("duckdb").unwrap();
        let reads = |filter: Option<&Filter<'_>>, answer: u64| {
            row_group_reads(&f, 0, &chunks, &policy, filter, answer, &[]).unwrap()
        };
        assert_eq!(reads(None, 0).len(), 1);
        let on_0 = Filter {
            filter_columns: &[0],
            columns: &[0, 1, 2, 3],
        };
        assert_eq!(reads(Some(&on_0), 10), chunks);
        assert_eq!(reads(Some(&on_0), 0), chunks[..1]);
        // Filter columns 1 and 2 share a head, read first; the others in the scan's order.
        let on_1_2 = Filter {
            filter_columns: &[2, 1],
            columns: &[3, 0, 1, 2],
        };
        let heads = vec![
            ByteRange::new(chunks[1].start, chunks[2].end),
            chunks[3],
            chunks[0],
        ];
        assert_eq!(reads(Some(&on_1_2), 1), heads);
    }

    #[test]
    fn a_read_fetches_only_its_one_uncached_piece() {
        let cached = [ByteRange::new(100, 200)];
        let r = |a, b| ByteRange::new(a, b);
        assert_eq!(through_cache(r(50, 150), &cached), Some(r(50, 100)));
        assert_eq!(through_cache(r(120, 180), &cached), None);
        assert_eq!(through_cache(r(50, 250), &cached), Some(r(50, 250)));
        assert_eq!(through_cache(r(0, 50), &cached), Some(r(0, 50)));
    }
}
