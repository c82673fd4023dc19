//! The peer readers' own knobs, under their own names (the registry in `settings.rs` exposes
//! them), with their defaults and where each comes from. Defaults that depend on the machine
//! (a reader's thread count is its cores) are the node's: 16, like ClickHouse's `max_threads`
//! default; a scenario or `sim check-peers` sets them to the machine it describes.

/// Knobs of one peer reader; each reader reads the ones it has.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerKnobs {
    /// Arrow C++ `ArrowReaderProperties::pre_buffer` (pyarrow `read_table(pre_buffer=True)`).
    pub pre_buffer: bool,
    /// Arrow C++ IO thread pool (`kDefaultNumIoThreads` = 8; `ARROW_IO_THREADS`).
    pub io_threads: u32,
    /// Threads of a reader's CPU pool: Arrow's `cpu_count`, DuckDB's `threads`, Polars'
    /// `POLARS_MAX_THREADS`; each defaults to the machine's cores.
    pub cpu_threads: u32,
    /// pyarrow dataset `fragment_readahead` (4): files scanned at once.
    pub fragment_readahead: u32,
    /// Arrow C++ `ReaderProperties::footer_read_size` (64 KiB); Polars
    /// `POLARS_CLOUD_FOOTER_READ_SIZE` (256 KiB).
    pub footer_read_bytes: u64,
    /// Polars `POLARS_INFLIGHT_INIT_BYTE_BUDGET`: the in-flight byte budget its adaptive
    /// controller starts from (`max(ceil(threads / 8), 4)` × 8 MiB).
    pub inflight_init_bytes: u64,
    /// Polars `POLARS_RESOLVE_SAMPLE_LIMIT`: footers read at plan time at most (default
    /// `max(concurrency limit, 16)`, 16 up to 16 threads).
    pub resolve_sample_limit: u32,
    /// object_store `OBJECT_STORE_COALESCE_PARALLEL` (10): merged reads of one `get_ranges`
    /// call at once.
    pub coalesce_parallel: u32,
    /// DuckDB `streaming_buffer_size` (1,000,000 bytes): decoded bytes a streaming result
    /// buffers before its producers block.
    pub streaming_buffer_bytes: u64,
}

impl PeerKnobs {
    /// Every reader's defaults.
    pub fn defaults() -> Self {
        PeerKnobs {
            pre_buffer: true,
            io_threads: 8,
            cpu_threads: 16,
            fragment_readahead: 4,
            footer_read_bytes: 64 * 1024,
            inflight_init_bytes: super::inflight::INIT_BYTE_BUDGET,
            resolve_sample_limit: 16,
            coalesce_parallel: 10,
            streaming_buffer_bytes: 1_000_000,
        }
    }
}
