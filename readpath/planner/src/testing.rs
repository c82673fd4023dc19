//! Test support the lead can reuse: a tiny table builder and a fake driver that runs a
//! [`Reader`] to the end with a fixed first-byte latency and per-read bandwidth, in integer
//! nanoseconds (no simulator, no store model, no randomness).

use limits::{narrow, u32_of};
use std::collections::{BTreeMap, VecDeque};

use layout::{
    ByteRange, ColumnChunk, FileLayout, PageLocation, RowGroup, Schema, Table, NO_BLOOM_FILTER,
};

use crate::types::{Action, CacheView, Event, NoCache, Object, ReadKind, ReadSource};
use crate::Reader;

/// Shape of a synthetic table laid out like a Parquet 1.12 writer does: chunks (dictionary
/// page, data pages) row group by row group, then column indexes, offset indexes, bloom
/// filters, then the footer.
#[derive(Clone, Debug, PartialEq)]
pub struct TableShape {
    /// Files.
    pub files: u32,
    /// Row groups per file.
    pub row_groups: u32,
    /// Columns.
    pub columns: u32,
    /// Data pages per chunk.
    pub pages: u32,
    /// Compressed bytes per data page.
    pub page_bytes: u64,
    /// Dictionary page bytes (0 = none).
    pub dictionary_bytes: u32,
    /// Rows per row group.
    pub rows: u64,
    /// Decoded / compressed.
    pub compression_ratio: u64,
    /// Bloom filters (4 KiB) on every column.
    pub bloom: bool,
    /// Footer bytes (excluding the last 8).
    pub footer_bytes: u32,
}

impl Default for TableShape {
    fn default() -> Self {
        TableShape {
            files: 1,
            row_groups: 4,
            columns: 4,
            pages: 4,
            page_bytes: 64 * 1024,
            dictionary_bytes: 1024,
            rows: 100_000,
            compression_ratio: 4,
            bloom: false,
            footer_bytes: 4096,
        }
    }
}

/// Builds a table of the given shape (every file identical in shape).
pub fn table(shape: &TableShape) -> Table {
    let schema = Schema {
        columns: (0..shape.columns).map(|c| format!("c{c}")).collect(),
    };
    let files = (0..shape.files).map(|f| file(shape, f)).collect();
    Table {
        schemas: vec![schema],
        files,
        iceberg: None,
        provenance: Default::default(),
        lazy: None,
    }
}

fn file(s: &TableShape, index: u32) -> FileLayout {
    let mut offset = 4u64;
    let mut pages = Vec::new();
    let mut row_groups = Vec::new();
    for _ in 0..s.row_groups {
        let mut columns = Vec::new();
        for _ in 0..s.columns {
            let chunk_start = offset;
            offset += s.dictionary_bytes as u64;
            let first = u32_of(pages.len());
            for p in 0..s.pages as u64 {
                pages.push(PageLocation {
                    offset,
                    first_row_index: p * s.rows / s.pages.max(1) as u64,
                    compressed_page_size: narrow::<u64, u32>(s.page_bytes),
                });
                offset += s.page_bytes;
            }
            let data_len = s.page_bytes * s.pages as u64;
            columns.push(ColumnChunk {
                chunk_start,
                data_len,
                uncompressed_bytes: (data_len + s.dictionary_bytes as u64) * s.compression_ratio,
                dictionary_len: s.dictionary_bytes,
                pages_first: first,
                pages_count: s.pages,
                bloom_filter_offset: NO_BLOOM_FILTER,
                ..Default::default()
            });
        }
        row_groups.push(RowGroup::new(s.rows, columns));
    }
    let ci_len = 16 + 8 * s.pages as u64;
    let oi_len = 4 + 20 * s.pages as u64;
    for rg in &mut row_groups {
        for c in &mut rg.columns {
            c.column_index_offset = offset;
            c.column_index_len = narrow::<u64, u32>(ci_len);
            offset += ci_len;
        }
    }
    for rg in &mut row_groups {
        for c in &mut rg.columns {
            c.offset_index_offset = offset;
            c.offset_index_len = narrow::<u64, u32>(oi_len);
            offset += oi_len;
        }
    }
    if s.bloom {
        for rg in &mut row_groups {
            for c in &mut rg.columns {
                c.bloom_filter_offset = offset;
                c.bloom_filter_len = 4096;
                offset += 4096;
            }
        }
    }
    let size_bytes = offset + s.footer_bytes as u64 + 8;
    FileLayout {
        path: format!("part-{index:05}.parquet"),
        materialized: true,
        outline: false,
        size_bytes,
        footer_len_bytes: s.footer_bytes,
        schema: 0,
        row_groups,
        pages,
    }
}

/// One read as the fake driver saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadRecord {
    /// When it started.
    pub start_ns: u64,
    /// When it completed.
    pub end_ns: u64,
    /// What it read.
    pub object: Object,
    /// The bytes.
    pub range: ByteRange,
    /// What for.
    pub kind: ReadKind,
    /// Whether it ran inline on a decode thread.
    pub inline: bool,
}

/// The outcome of a fake run.
#[derive(Clone, Debug, PartialEq)]
pub struct FakeRun {
    /// Virtual time when the reader finished.
    pub end_ns: u64,
    /// Every read in start order.
    pub reads: Vec<ReadRecord>,
    /// Time-weighted mean of reads in flight.
    pub mean_reads_in_flight: f64,
    /// Most reads in flight at once.
    pub max_reads_in_flight: u64,
    /// Rows the reader delivered.
    pub rows: u64,
    /// Whether the reader finished (false = stalled or failed).
    pub finished: bool,
    /// The reader's sticky error, if any.
    pub error: Option<String>,
}

/// A fixed world: every read takes `first_byte_ns` then `len / bytes_per_us` microseconds,
/// streaming progress every 1 MiB; decodes take `decode_ns_per_kib` per KiB of decoded bytes;
/// the consumer drops a chunk `consume_ns` after it is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FakeDriver {
    /// First-byte latency of every read.
    pub first_byte_ns: u64,
    /// Per-read transfer bandwidth in bytes per microsecond.
    pub bytes_per_us: u64,
    /// Decode cost per KiB of decoded bytes.
    pub decode_ns_per_kib: u64,
    /// Time a chunk spends in the consumer.
    pub consume_ns: u64,
    /// Stop after this much virtual time (a stall guard).
    pub limit_ns: u64,
}

impl Default for FakeDriver {
    fn default() -> Self {
        FakeDriver {
            first_byte_ns: 30_000_000,
            bytes_per_us: 64,
            decode_ns_per_kib: 1_000,
            consume_ns: 100_000,
            limit_ns: 3_600_000_000_000,
        }
    }
}

const PROGRESS_BYTES: u64 = 1 << 20;

impl FakeDriver {
    /// Runs `reader` to the end (or until it stalls, fails, or `limit_ns` passes).
    pub fn run(&self, reader: &mut Reader) -> FakeRun {
        self.run_with_cache(reader, &NoCache)
    }

    /// Same, with a page-cache view for R8.
    pub fn run_with_cache(&self, reader: &mut Reader, cache: &dyn CacheView) -> FakeRun {
        // (time, sequence) -> event; the sequence keeps simultaneous events in issue order.
        let mut pending: BTreeMap<(u64, u64), Event> = BTreeMap::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        let mut reads: Vec<ReadRecord> = Vec::new();
        let mut index_of: BTreeMap<u64, usize> = BTreeMap::new();
        let mut in_flight = 0u64;
        let mut max_in_flight = 0u64;
        let mut area = 0u128;
        let mut last_change = 0u64;
        let mut consumers: VecDeque<u64> = VecDeque::new();
        loop {
            while let Some(action) = reader.poll_action(now, cache) {
                let mut at = |t: u64, e: Event, seq: &mut u64| {
                    pending.insert((t, *seq), e);
                    *seq += 1;
                };
                match action {
                    Action::Read(r) => {
                        area += in_flight as u128 * (now - last_change) as u128;
                        last_change = now;
                        in_flight += 1;
                        max_in_flight = max_in_flight.max(in_flight);
                        let len = r.range.len();
                        let first = now + self.first_byte_ns;
                        let transfer = len * 1_000 / self.bytes_per_us.max(1);
                        at(first, Event::ReadFirstByte { id: r.id }, &mut seq);
                        let mut done = PROGRESS_BYTES;
                        while done < len {
                            at(
                                first + done * 1_000 / self.bytes_per_us.max(1),
                                Event::ReadProgress {
                                    id: r.id,
                                    bytes_ready: done,
                                },
                                &mut seq,
                            );
                            done += PROGRESS_BYTES;
                        }
                        at(
                            first + transfer,
                            Event::ReadCompleted {
                                id: r.id,
                                source: ReadSource::Store,
                            },
                            &mut seq,
                        );
                        index_of.insert(r.id.0, reads.len());
                        reads.push(ReadRecord {
                            start_ns: now,
                            end_ns: first + transfer,
                            object: r.object,
                            range: r.range,
                            kind: r.kind,
                            inline: r.inline,
                        });
                    }
                    Action::Decode(d) => {
                        let ns = d.decoded_bytes / 1024 * self.decode_ns_per_kib + 1_000;
                        at(now + ns, Event::DecodeCompleted { id: d.id }, &mut seq);
                    }
                    Action::Deliver(c) => {
                        consumers.push_back(c.id.0);
                        at(
                            now + self.consume_ns,
                            Event::ChunkConsumed { id: c.id },
                            &mut seq,
                        );
                    }
                }
            }
            if reader.is_finished() || reader.error().is_some() {
                break;
            }
            let next = pending.keys().next().map(|k| k.0);
            let next = [next, reader.poll_timeout()].into_iter().flatten().min();
            let Some(next) = next else { break };
            if next > self.limit_ns {
                break;
            }
            now = now.max(next);
            while let Some(entry) = pending.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let event = entry.remove();
                if let Event::ReadCompleted { id, .. } = &event {
                    if index_of.contains_key(&id.0) {
                        area += in_flight as u128 * (now - last_change) as u128;
                        last_change = now;
                        in_flight = in_flight.saturating_sub(1);
                    }
                }
                reader.handle(now, event);
            }
            if reader.poll_timeout().is_some_and(|t| t <= now) {
                reader.handle_timeout(now);
            }
        }
        let mean = if now > 0 {
            area as f64 / now as f64
        } else {
            0.0
        };
        FakeRun {
            end_ns: now,
            reads,
            mean_reads_in_flight: mean,
            max_reads_in_flight: max_in_flight,
            rows: reader.output().rows,
            finished: reader.is_finished(),
            error: reader.error().map(|e| e.to_string()),
        }
    }
}
