//! The peer readers' own knobs, under their own names (the registry in `settings.rs` exposes
//! them), with their defaults and where each comes from. Defaults that depend on the machine
//! (a reader's thread count is its cores) are the node's: 16, like ClickHouse's `max_threads`
//! default; a scenario or `sim check-peers` sets them to the machine it describes.

/// Knobs of one peer reader; each reader reads the ones it has.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerKnobs {
    /// Arrow C++ `ArrowReaderProperties::pre_buffer` (pyarrow `read_table(pre_buffer=True)`).
    pub pre_buffer: bool,
    /// Arrow C++ `CacheOptions::lazy`: the `ReadRangeCache` issues a coalesced read when it is
    /// first needed (true: `LazyDefaults`, the reader's default), or every one of them when the
    /// ranges are cached at `PreBuffer` (false: `Defaults`, `MakeFromNetworkMetrics`).
    pub lazy: bool,
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
    /// controller starts from; unset, Polars' default `max(ceil(POLARS_MAX_THREADS / 8), 4)` ×
    /// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` ([`PeerKnobs::polars_init_bytes`]).
    pub inflight_init_bytes: Option<u64>,
    /// Polars `POLARS_RESOLVE_SAMPLE_LIMIT`: footers read at plan time at most; unset, Polars'
    /// default `max(concurrency limit, 16)`, the concurrency limit being
    /// `max(POLARS_MAX_THREADS, 10)` (`pl_async::get_concurrency_limit`):
    /// `max(POLARS_MAX_THREADS, 16)` ([`PeerKnobs::polars_sample_limit`]).
    pub resolve_sample_limit: Option<u32>,
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
            lazy: true,
            io_threads: 8,
            cpu_threads: 16,
            fragment_readahead: 4,
            footer_read_bytes: 64 * 1024,
            inflight_init_bytes: None,
            resolve_sample_limit: None,
            coalesce_parallel: 10,
            streaming_buffer_bytes: 1_000_000,
        }
    }
}

impl PeerKnobs {
    /// Polars' starting in-flight budget, at a target chunk of `chunk_bytes`.
    pub fn polars_init_bytes(&self, chunk_bytes: u64) -> u64 {
        self.inflight_init_bytes.unwrap_or_else(|| {
            super::inflight::default_init_bytes(self.cpu_threads.max(1), chunk_bytes)
        })
    }

    /// Polars' plan-time footer limit.
    pub fn polars_sample_limit(&self) -> u32 {
        self.resolve_sample_limit
            .unwrap_or_else(|| self.cpu_threads.max(16))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polars_defaults_follow_its_threads_until_set() {
        let mut k = PeerKnobs::defaults();
        assert_eq!(k.polars_init_bytes(8 << 20), 32 << 20);
        assert_eq!(k.polars_sample_limit(), 16);
        k.cpu_threads = 64;
        assert_eq!(
            k.polars_init_bytes(8 << 20),
            64 << 20,
            "ceil(64 / 8) x 8 MiB"
        );
        assert_eq!(
            k.polars_init_bytes(16 << 20),
            128 << 20,
            "the chunk scales it"
        );
        assert_eq!(k.polars_sample_limit(), 64, "max(threads, 16)");
        k.inflight_init_bytes = Some(48 << 20);
        k.resolve_sample_limit = Some(3);
        assert_eq!(k.polars_init_bytes(8 << 20), 48 << 20, "set: kept");
        assert_eq!(
            k.polars_sample_limit(),
            3,
            "set: kept, even under the floor"
        );
    }
}
