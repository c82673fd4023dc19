//! The values that cross the reader's boundary: actions out, events in, and the snapshots a
//! driver reads (status, output).

use layout::{ByteRange, FileIndex};
use serde::Serialize;

pub use readahead::{BudgetUsage, ReadSource};

/// An object the reader reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Object {
    /// A Parquet data file of the table.
    Data(FileIndex),
    /// The Iceberg table's metadata JSON.
    IcebergMetadataJson,
    /// The Iceberg manifest list.
    IcebergManifestList,
    /// Iceberg manifest number `n`.
    IcebergManifest(u32),
    /// The listing of the table's files (a LIST of their prefix, page `n`).
    Listing(u32),
}

impl std::fmt::Display for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Object::Data(i) => write!(f, "file {i}"),
            Object::IcebergMetadataJson => write!(f, "iceberg metadata json"),
            Object::IcebergManifestList => write!(f, "iceberg manifest list"),
            Object::IcebergManifest(i) => write!(f, "iceberg manifest {i}"),
            Object::Listing(i) => write!(f, "listing page {i}"),
        }
    }
}

/// What a read is for (the first range it serves decides for coalesced reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum ReadKind {
    /// Iceberg metadata JSON, manifest list or manifest.
    IcebergMetadata,
    /// The footer tail, or the rest of a large footer.
    Footer,
    /// The 256-byte guess at a bloom filter's header.
    BloomHeader,
    /// 32-byte bloom-filter blocks hit by the probes.
    BloomBlocks,
    /// Dictionary pages.
    Dictionary,
    /// Column indexes (page min/max).
    ColumnIndex,
    /// Offset indexes (page locations).
    OffsetIndex,
    /// Data pages (or whole column chunks without an offset index).
    DataPages,
    /// A HEAD of a data file (its size, before the footer can be read by offset).
    Head,
    /// A LIST of the table's files (a glob), whose response body is the listing.
    List,
}

impl ReadKind {
    /// Whether it is a request without a range of the object's bytes (HEAD, LIST).
    pub fn is_metadata_request(self) -> bool {
        matches!(self, ReadKind::Head | ReadKind::List)
    }
}

/// Id of a read, unique within one reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ReadId(pub u64);
/// Id of a decode, unique within one reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct DecodeId(pub u64);
/// Id of a delivered chunk, unique within one reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ChunkId(pub u64);

/// A ranged read to start now.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReadRequest {
    /// Id to quote in the events about it.
    pub id: ReadId,
    /// What to read from.
    pub object: Object,
    /// The bytes to read.
    pub range: ByteRange,
    /// What the read is for.
    pub kind: ReadKind,
    /// It runs on a decode thread, not an IO thread (base: a decode that needs a task still
    /// queued for the IO pool runs its GET inline).
    pub inline: bool,
}

/// A decode to run now on a decode thread the reader reserved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DecodeRequest {
    /// Id to quote in `DecodeCompleted`.
    pub id: DecodeId,
    /// The file decoded.
    pub file: FileIndex,
    /// The row group (index in the file).
    pub row_group: u32,
    /// Compressed bytes decoded.
    pub compressed_bytes: u64,
    /// Decoded bytes produced.
    pub decoded_bytes: u64,
    /// Rows decoded.
    pub rows: u64,
}

/// A chunk of rows for the downstream consumer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chunk {
    /// Id to quote in `ChunkConsumed`.
    pub id: ChunkId,
    /// The file it came from.
    pub file: FileIndex,
    /// The source (pipeline source processor) that emits it: a whole file, or one row-group
    /// bucket of it. Chunks of one source leave it one at a time (`docs/findings.md` F7).
    pub source: u32,
    /// Rows in the chunk.
    pub rows: u64,
    /// Its decoded size.
    pub decoded_bytes: u64,
}

/// What the driver should do next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Action {
    /// Start this ranged read now (the reader gave it an IO slot or an inline decode thread).
    Read(ReadRequest),
    /// Run this decode now; reply `DecodeCompleted` after the CPU model's time.
    Decode(DecodeRequest),
    /// Hand this chunk to the consumer; reply `ChunkConsumed` when it is dropped.
    Deliver(Chunk),
}

/// Something that happened outside the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// The first byte of a read arrived.
    ReadFirstByte {
        /// The read.
        id: ReadId,
    },
    /// Cumulative bytes of the read available in offset order.
    ReadProgress {
        /// The read.
        id: ReadId,
        /// Bytes ready from the read's first byte.
        bytes_ready: u64,
    },
    /// The read finished.
    ReadCompleted {
        /// The read.
        id: ReadId,
        /// Where its bytes came from (page-cache reads do not feed the estimators).
        source: ReadSource,
    },
    /// The read failed for good (the driver already retried).
    ReadFailed {
        /// The read.
        id: ReadId,
        /// Why.
        reason: String,
    },
    /// A decode finished.
    DecodeCompleted {
        /// The decode.
        id: DecodeId,
    },
    /// The consumer dropped a chunk.
    ChunkConsumed {
        /// The chunk.
        id: ChunkId,
    },
}

/// Which bytes of a file the source already holds (page cache), for R8.
pub trait CacheView {
    /// How many bytes of `range` in `file` the source holds.
    fn cached_bytes(&self, file: FileIndex, range: ByteRange) -> u64;
}

/// A source that holds nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCache;

impl CacheView for NoCache {
    fn cached_bytes(&self, _file: FileIndex, _range: ByteRange) -> u64 {
        0
    }
}

impl CacheView for coalescer::NothingCached {
    fn cached_bytes(&self, _file: FileIndex, _range: ByteRange) -> u64 {
        0
    }
}

/// One file's view of a [`CacheView`], as the coalescer asks it.
pub(crate) struct FileCache<'a> {
    pub view: &'a dyn CacheView,
    pub file: FileIndex,
}

impl coalescer::CachedBytes for FileCache<'_> {
    fn cached_bytes(&self, range: ByteRange) -> u64 {
        self.view.cached_bytes(self.file, range)
    }
}

/// How the parsing threads spent the run: busy + fetch wait + inline reads + idle =
/// threads x elapsed, less any overcommit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadTime {
    /// The parsing threads (`max_parsing_threads`).
    pub threads: u32,
    /// Integral of decodes running, in thread-nanoseconds.
    pub busy_ns: u64,
    /// Integral of decode tasks holding a thread while they wait for bytes.
    pub fetch_wait_ns: u64,
    /// The same waits summed task by task when each ends (equal to the integral).
    pub fetch_wait_sum_ns: u64,
    /// Decode tasks that waited.
    pub fetch_wait_tasks: u64,
    /// Integral of threads running a read inline for a stage that is not a decode task.
    pub inline_read_ns: u64,
    /// Integral of threads neither decoding nor waiting.
    pub idle_ns: u64,
    /// Integral of threads held beyond `threads` (0 unless the reader broke its own bound).
    pub overcommit_ns: u64,
    /// Time covered.
    pub elapsed_ns: u64,
}

impl ThreadTime {
    /// `dt_ns` passed with `busy` decodes running, `waiting` tasks blocked and `reading`
    /// threads running a read inline.
    pub fn advance(&mut self, dt_ns: u64, busy: u32, waiting: u32, reading: u32) {
        let held = busy.saturating_add(waiting).saturating_add(reading);
        self.inline_read_ns = self
            .inline_read_ns
            .saturating_add(dt_ns.saturating_mul(u64::from(reading)));
        self.busy_ns = self
            .busy_ns
            .saturating_add(dt_ns.saturating_mul(u64::from(busy)));
        self.fetch_wait_ns = self
            .fetch_wait_ns
            .saturating_add(dt_ns.saturating_mul(u64::from(waiting)));
        let idle = self.threads.saturating_sub(held);
        let over = held.saturating_sub(self.threads);
        self.idle_ns = self
            .idle_ns
            .saturating_add(dt_ns.saturating_mul(u64::from(idle)));
        self.overcommit_ns = self
            .overcommit_ns
            .saturating_add(dt_ns.saturating_mul(u64::from(over)));
        self.elapsed_ns = self.elapsed_ns.saturating_add(dt_ns);
    }
}

/// Which of [`Status`]'s gauges a reader keeps. ClickHouse's reader keeps them all; a peer
/// program (arrow-rs, Arrow C++, DuckDB, Polars) keeps its reads and decodes but neither bytes
/// in flight nor memory pools, and its status says 0 for those: not a measurement, so a
/// timeline leaves them out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tracked {
    pub bytes_in_flight: bool,
    pub memory: bool,
}

/// A cheap snapshot of the reader for reports and timelines.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Status {
    /// Bytes counting against the targets now (R7 decides which), over every open file.
    pub bytes_in_flight: u64,
    /// The open files' bytes-in-flight targets now, summed (each file has its own; 0 for a
    /// reader that issues against none).
    pub target_bytes_in_flight: u64,
    /// Largest `bytes_in_flight` seen.
    pub peak_bytes_in_flight: u64,
    /// Reads running (on IO threads or inline).
    pub reads_running: u64,
    /// Reads created and not yet started (issue queues, per-file limits, IO pool queue).
    pub reads_queued: u64,
    /// Reads running inline on decode threads.
    pub inline_reads_running: u64,
    /// IO pool size.
    pub io_threads: u32,
    /// Decode threads busy (decodes and inline reads).
    pub decodes_running: u32,
    /// Decodes waiting for a thread or memory.
    pub decodes_queued: u64,
    /// Chunks delivered and not yet consumed.
    pub chunks_outstanding: u64,
    /// Files (or buckets) open now.
    pub open_files: u64,
    /// Usage, peak and limit of every memory budget.
    pub memory: Vec<BudgetUsage>,
    /// The peak of all budgets' usage summed (what the reader held at once at its most), not
    /// the sum of each budget's own peak.
    pub peak_memory_bytes: u64,
}

impl Status {
    /// `(budget name, bytes used now)` in the memory model's fixed order.
    pub fn memory_usage(&self) -> Vec<(String, u64)> {
        self.memory
            .iter()
            .map(|u| (u.budget.name().to_string(), u.usage_bytes))
            .collect()
    }

    /// `(budget name, peak bytes)` in the memory model's fixed order.
    pub fn peak_memory(&self) -> Vec<(String, u64)> {
        self.memory
            .iter()
            .map(|u| (u.budget.name().to_string(), u.peak_bytes))
            .collect()
    }
}

/// What the query produced so far.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QueryOutput {
    /// Rows delivered.
    pub rows: u64,
    /// Chunks delivered.
    pub chunks: u64,
    /// Bytes the decoder needed (every needed range once, gaps excluded).
    pub needed_bytes: u64,
    /// Rows delivered per file (index = position in `QuerySpec::files`).
    pub rows_per_file: Vec<u64>,
    /// Rows delivered per unit (a file, or a bucket of a file's row groups).
    pub rows_per_unit: Vec<u64>,
    /// Row groups dropped by bloom filters.
    pub row_groups_dropped_by_bloom: u64,
}
