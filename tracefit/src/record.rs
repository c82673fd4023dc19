//! The one record type every trace format parses into.

use serde::Serialize;

/// What kind of request a record is. S3 access logs name many operations; the simulator's
/// trace holds only GETs (reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Operation {
    /// `REST.GET.OBJECT`: a whole or ranged GET.
    Get,
    /// `REST.HEAD.OBJECT`.
    Head,
    /// `REST.PUT.OBJECT`.
    Put,
    /// Any other operation, verbatim (e.g. `REST.GET.VERSIONING`, `BATCH.DELETE.OBJECT`).
    Other(String),
}

impl Operation {
    /// Maps an access-log operation name (`REST.GET.OBJECT`) to an [`Operation`].
    pub fn from_s3(name: &str) -> Operation {
        match name {
            "REST.GET.OBJECT" => Operation::Get,
            "REST.HEAD.OBJECT" => Operation::Head,
            "REST.PUT.OBJECT" => Operation::Put,
            other => Operation::Other(other.to_string()),
        }
    }
}

/// Where the simulator served a read from (`served_by` column of the sim trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ServedBy {
    /// The object store (a real HTTP request).
    Store,
    /// The OS page cache (local).
    PageCache,
    /// ClickHouse's filesystem cache (local disk).
    FilesystemCache,
    /// Not a request: a byte range the reader needed (before coalescing), written by
    /// `sim run --trace` so that a what-if replay can re-plan the same reads. Fitting and
    /// replay skip these rows.
    Needed,
}

impl ServedBy {
    /// The name used in the sim trace CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            ServedBy::Store => "store",
            ServedBy::PageCache => "page_cache",
            ServedBy::FilesystemCache => "filesystem_cache",
            ServedBy::Needed => "needed",
        }
    }
}

/// What a needed range is, in the words of the read path (`kind` column of the sim trace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum NeededKind {
    /// The footer with its trailing length and magic (`footer_len_bytes + 8` bytes at the end).
    Footer,
    /// The guess at a bloom filter's header.
    BloomHeader,
    /// Bloom-filter blocks hit by the probes.
    BloomBlocks,
    /// A dictionary page.
    Dictionary,
    /// A column index (page min/max).
    ColumnIndex,
    /// An offset index (page locations).
    OffsetIndex,
    /// Data pages (one page, or a whole chunk's pages without an offset index).
    DataPages,
}

/// Every kind with its CSV name, in one place.
const NEEDED_KINDS: [(NeededKind, &str); 7] = [
    (NeededKind::Footer, "footer"),
    (NeededKind::BloomHeader, "bloom_header"),
    (NeededKind::BloomBlocks, "bloom_blocks"),
    (NeededKind::Dictionary, "dictionary"),
    (NeededKind::ColumnIndex, "column_index"),
    (NeededKind::OffsetIndex, "offset_index"),
    (NeededKind::DataPages, "data_pages"),
];

impl NeededKind {
    /// The name used in the sim trace CSV.
    pub fn as_str(self) -> &'static str {
        NEEDED_KINDS
            .iter()
            .find(|(k, _)| *k == self)
            .map(|(_, n)| *n)
            .unwrap_or("data_pages")
    }

    /// The kind a CSV name stands for.
    pub fn from_name(name: &str) -> Option<NeededKind> {
        NEEDED_KINDS
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(k, _)| *k)
    }

    /// Whether the range belongs to one column chunk (all kinds but the footer).
    pub fn is_per_chunk(self) -> bool {
        self != NeededKind::Footer
    }
}

/// What a needed range is and where it sits in the file: enough to rebuild a layout that makes
/// the planner need the same ranges (see `sim::whatif`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NeededPart {
    /// What the bytes are.
    pub kind: NeededKind,
    /// Index of the row group in its file (`None` for the footer).
    pub row_group: Option<u32>,
    /// Index of the column in the file's schema (`None` for the footer).
    pub column: Option<u32>,
    /// Rows in the row group (0 for the footer).
    pub row_group_rows: u64,
    /// First row of the page in its row group (data pages; 0 otherwise).
    pub first_row: u64,
    /// Decoded size of the whole column chunk (0 for the footer): the decode cost and the
    /// row-subgroup cut depend on it.
    pub uncompressed_bytes: u64,
    /// Size of the object.
    pub object_size_bytes: u64,
    /// The footer's length as the file's last 8 bytes state it.
    pub footer_len_bytes: u32,
}

/// Labels only the simulator's trace carries (which run the request belongs to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct SimLabels {
    /// Scenario case name.
    pub case: String,
    /// Arm name (strategy preset plus overrides).
    pub arm: String,
    /// Replication index.
    pub replication: u32,
    /// Query name.
    pub query: String,
    /// Retry attempt number, 0 for the first try.
    pub attempt: u32,
    /// Whether this request was a hedge (a duplicate of a slow one).
    pub hedge: bool,
}

/// What the first-byte latency of a trace measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FirstByteSource {
    /// Client-side first-byte time (the sim trace): network round trip included.
    Client,
    /// S3's Turn-Around Time: server side only, from the last request byte received to the first
    /// response byte sent. The client sees more (a network round trip).
    TurnAround,
}

/// One request, whatever the trace format.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceRecord {
    /// 1-based line number in the source.
    pub line: u64,
    /// Start time in ns: virtual time for the sim trace, Unix epoch time for access logs (whose
    /// resolution is one second).
    pub start_ns: u64,
    /// First-byte latency in ns measured from the start (or the Turn-Around Time), when known.
    pub first_byte_latency_ns: Option<u64>,
    /// Total time in ns, from the start to the last byte, when known.
    pub total_ns: Option<u64>,
    /// Bytes transferred (S3 `Bytes Sent`, sim `length_bytes`).
    pub bytes: u64,
    /// Size of the whole object, when the trace says it.
    pub object_size_bytes: Option<u64>,
    /// Object key (access logs) or object id (sim trace).
    pub object: String,
    /// Offset of the range in the object, when the trace says it (sim trace only).
    pub offset_bytes: Option<u64>,
    /// HTTP status; 0 for a timeout (sim trace).
    pub status: u16,
    /// Operation.
    pub operation: Operation,
    /// Who served it (sim trace only; access-log records are all served by the store).
    pub served_by: ServedBy,
    /// Sim-only labels.
    pub sim: Option<SimLabels>,
    /// For `served_by = needed` rows: what the range is.
    pub needed: Option<NeededPart>,
}

impl TraceRecord {
    /// A successful (2xx) request.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// A failed request in the sense of the error rate: a 5xx or a timeout (status 0).
    pub fn is_error(&self) -> bool {
        self.status == 0 || (500..600).contains(&self.status)
    }

    /// A successful GET served by the store: the requests the store model is fitted on.
    pub fn is_store_read(&self) -> bool {
        self.operation == Operation::Get && self.served_by == ServedBy::Store && self.is_success()
    }

    /// Transfer time (total minus first byte), when both are known and ordered.
    pub fn transfer_ns(&self) -> Option<u64> {
        let total = self.total_ns?;
        let first = self.first_byte_latency_ns?;
        total.checked_sub(first)
    }
}
