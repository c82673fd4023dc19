//! The in-memory page cache ("userspace page cache" in ClickHouse): whole blocks of
//! `page_cache_block_size` (1 MiB) of remote objects, keyed by (object, block index), evicted
//! least-recently-used beyond `page_cache_max_size`.
//!
//! The model answers one question per read: which parts come from the cache and which from the
//! store ([`PageCache::plan`]). Two behaviours (`docs/readpath.md` section 2 and R8):
//! - **Base**: a read is rounded out to whole blocks (a missed block is fetched whole, to fill
//!   the cache), and every missing block is its own request, fetched one after another: the
//!   `populateBlockRange` of the measured base build, before misses were coalesced. The base
//!   reader serves cache hits through the same IO queue as ~30 ms
//!   network reads and only when the whole read task is ready; that queueing lives in the
//!   reader's IO pool and the driver's whole-read readiness, not here.
//! - **Read-through** (R8): a run of consecutive missing blocks is one request (the coalescing
//!   of misses that came with the redesign's cache-side changes), and short interior islands of
//!   cached blocks are fetched with their neighbours instead of splitting the read
//!   (`PageCacheReadThroughBytes` counts them), under
//!   the per-island and per-request bounds of [`read_through`]'s module documentation.
//!
//! The fetches of one read are serial (one thread runs them one after another) and the read is
//! ready only when all of them are: that is the driver's part (`drive::io`).
//!
//! The model never reads a clock: the driver turns [`PageCache::hit_ns`] into virtual time and
//! calls [`PageCache::insert`] when a fetch completes.

pub(crate) mod lru;
mod read_through;
mod warm;

use layout::ByteRange;
use lru::Lru;
use read_through::Run;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use units::{Bandwidth, Bytes, Duration};

pub use read_through::{waste_permille, FetchFit, ReadThroughSpec, MAX_BUDGET_BYTES, MIN_SAMPLES};
pub use warm::{WarmPattern, WarmSpec};

/// A bad page-cache specification: what is wrong and what would be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PageCacheError {
    /// A field has a value the model cannot use.
    #[error("page_cache: {0}")]
    Invalid(String),
}

/// The page cache as a scenario writes it (`caches: page_cache:`). Keys are ClickHouse's
/// setting names where the concept is theirs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageCacheSpec {
    /// `page_cache_max_size` (server setting): the cache's capacity. Required: ClickHouse's
    /// default is 0 (no cache). At least one block.
    pub page_cache_max_size: Bytes,
    /// `page_cache_block_size` (query setting, default 1 MiB): the unit of caching, lookup and
    /// eviction. Reads are rounded out to whole blocks.
    #[serde(default = "default_block_size")]
    pub page_cache_block_size: Bytes,
    /// Fixed cost of serving one read (or fragment) from the cache: lookup, pinning, locks.
    #[serde(default = "default_hit_latency")]
    pub hit_latency: Duration,
    /// Rate at which hits are copied out of the cache (one memcpy-bound thread).
    #[serde(default = "default_hit_bandwidth")]
    pub hit_bandwidth: Bandwidth,
    /// What the cache holds when the run starts (default: cold).
    #[serde(default)]
    pub warm: WarmSpec,
    /// Tuning of the R8 read-through budget.
    #[serde(default)]
    pub read_through: ReadThroughSpec,
}

fn default_block_size() -> Bytes {
    Bytes(1 << 20)
}
fn default_hit_latency() -> Duration {
    // An estimate: a hash lookup and a pin under a sharded mutex, a few microseconds.
    Duration(2_000)
}
fn default_hit_bandwidth() -> Bandwidth {
    // An estimate: one core copying from memory, ~10 GiB/s.
    Bandwidth(10.0 * (1u64 << 30) as f64)
}

impl PageCacheSpec {
    /// A cold cache of `capacity` bytes with the defaults above.
    pub fn with_capacity(capacity: Bytes) -> Self {
        Self {
            page_cache_max_size: capacity,
            page_cache_block_size: default_block_size(),
            hit_latency: default_hit_latency(),
            hit_bandwidth: default_hit_bandwidth(),
            warm: WarmSpec::default(),
            read_through: ReadThroughSpec::default(),
        }
    }

    /// Checks every field; the message names the key and the accepted values.
    pub fn validate(&self) -> Result<(), PageCacheError> {
        let bad = |m: String| Err(PageCacheError::Invalid(m));
        let block = self.page_cache_block_size.get();
        if block < limits::MIN_CACHE_BLOCK_BYTES {
            return bad(format!(
                "page_cache_block_size is {}, below {} (limits::MIN_CACHE_BLOCK_BYTES); use a \
                 size such as `1MiB` (ClickHouse's default)",
                self.page_cache_block_size,
                Bytes(limits::MIN_CACHE_BLOCK_BYTES)
            ));
        }
        if self.page_cache_max_size.get() < block {
            return bad(format!(
                "page_cache_max_size ({}) is smaller than one block (page_cache_block_size = {}); \
                 give at least one block, or omit the page_cache section for no page cache",
                self.page_cache_max_size, self.page_cache_block_size
            ));
        }
        let bw = self.hit_bandwidth.bytes_per_s();
        if !(bw.is_finite() && bw > 0.0) {
            return bad(format!(
                "hit_bandwidth is {}; use a positive rate such as `10GiB/s`",
                self.hit_bandwidth
            ));
        }
        if self.read_through.budget_override_bytes == Some(Bytes(0)) {
            return bad(
                "read_through.budget_override_bytes is 0; give a positive size such as `2MiB`, \
                 or omit it to use the fitted budget"
                    .into(),
            );
        }
        self.warm
            .validate("page_cache")
            .map_err(PageCacheError::Invalid)
    }
}

/// How the reader uses the page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageCacheMode {
    /// The base reader: reads rounded to whole blocks and **one fetch per missing block**, as
    /// `populateBlockRange` did before it coalesced misses ("fill each missing block by reading
    /// directly into its cache cell"; Altinity's later version says why it changed: "reading one
    /// block at a time turns a cold scan into one request per block"). The redesign's own
    /// measurements saw it: "Page cache on, fs cache off: exactly 1.00 MB per GET"
    /// (`docs/readpath.md`, "What the code says").
    Base,
    /// R8: consecutive missing blocks are one fetch, and interior islands of cached blocks are
    /// read through within the per-island budget (fitted per object) and the per-request waste
    /// bound.
    ReadThrough {
        /// What the reader published: [`waste_permille`] of its IO pool size.
        waste_permille: u64,
    },
}

/// Where a fragment of a planned read comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FragmentSource {
    /// Served from the page cache (after [`PageCache::hit_ns`]).
    Cached,
    /// Fetched from below (filesystem cache or store); insert it when it completes.
    Fetch,
}

/// One piece of a planned read, in offset order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// The bytes, block-aligned (the last block of an object may be short).
    pub range: ByteRange,
    /// Cache or fetch.
    pub source: FragmentSource,
    /// Bytes of this fetched fragment the cache already held (read through, R8).
    pub read_through_bytes: u64,
}

/// Counters since the cache was built (warming excluded, except `evictions`: warming a cache
/// past its size evicts, and those count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageCacheStats {
    /// Blocks served from the cache.
    pub hits: u64,
    /// Blocks not in the cache, fetched.
    pub misses: u64,
    /// Bytes served from the cache.
    pub hit_bytes: u64,
    /// Bytes fetched because they were not cached (block-rounded).
    pub miss_bytes: u64,
    /// `PageCacheReadThroughBytes`: cached bytes fetched anyway, to avoid splitting a read.
    pub read_through_bytes: u64,
    /// Blocks evicted to stay within `page_cache_max_size`.
    pub evictions: u64,
    /// Bytes held now (whole blocks).
    pub used_bytes: u64,
}

/// The page cache of one node. See the module documentation.
#[derive(Debug, Clone)]
pub struct PageCache {
    spec: PageCacheSpec,
    block_size: u64,
    capacity_blocks: u64,
    blocks: Lru<(u64, u64)>,
    object_sizes: BTreeMap<u64, u64>,
    /// Per object: the fit of its own fetches (R8's per-island budget).
    fits: BTreeMap<u64, FetchFit>,
    stats: PageCacheStats,
}

impl PageCache {
    /// A cache as `spec` describes it, empty: call [`PageCache::warm`] per object to apply the
    /// warm state. `rng` is not used yet (the warm pattern draws per object) but keeps the
    /// signature stable if construction ever needs randomness.
    pub fn new(spec: &PageCacheSpec, _rng: &mut impl rand::Rng) -> Result<Self, PageCacheError> {
        spec.validate()?;
        let block_size = spec.page_cache_block_size.get();
        Ok(Self {
            spec: spec.clone(),
            block_size,
            capacity_blocks: spec.page_cache_max_size.get() / block_size,
            blocks: Lru::default(),
            object_sizes: BTreeMap::new(),
            fits: BTreeMap::new(),
            stats: PageCacheStats::default(),
        })
    }

    /// The specification the cache was built from.
    pub fn spec(&self) -> &PageCacheSpec {
        &self.spec
    }

    /// Records an object's size, so that block rounding stops at its end.
    pub fn set_object_size(&mut self, object: u64, object_size: u64) {
        self.object_sizes.insert(object, object_size);
    }

    /// Applies the warm state to one object (and records its size). Blocks are added in offset
    /// order, so under capacity pressure the last-warmed objects survive.
    pub fn warm(&mut self, object: u64, object_size: u64, rng: &mut impl rand::Rng) {
        self.set_object_size(object, object_size);
        for block in self.spec.warm.warm_units(self.block_size, object_size, rng) {
            self.blocks.touch((object, block));
        }
        self.evict_to_capacity();
    }

    /// How a read of `range` of `object` decomposes: fragments in offset order covering the
    /// block-rounded range (clipped at the object's end when its size is known). Records hits,
    /// misses and read-through bytes, and refreshes the recency of the cached blocks it uses.
    pub fn plan(&mut self, object: u64, range: ByteRange, mode: PageCacheMode) -> Vec<Fragment> {
        let Some((first, end)) = self.block_span(object, range) else {
            return Vec::new();
        };
        let mut runs: Vec<Run> = Vec::new();
        for block in first..end {
            let cached = self.blocks.contains(&(object, block));
            match runs.last_mut() {
                Some(r) if r.cached == cached => r.end = block + 1,
                _ => runs.push(Run {
                    first: block,
                    end: block + 1,
                    cached,
                    read_through_blocks: 0,
                }),
            }
        }
        match mode {
            PageCacheMode::Base => runs = read_through::split_misses_per_block(runs),
            PageCacheMode::ReadThrough { waste_permille } => {
                let budget = match self.spec.read_through.budget_override_bytes {
                    Some(b) => b.get(),
                    None => self.fits.get(&object).map_or(0, FetchFit::budget_bytes),
                };
                runs = read_through::merge_islands(runs, budget / self.block_size, waste_permille);
            }
        }
        let mut out = Vec::with_capacity(runs.len());
        for run in runs {
            let bytes = self.blocks_range(object, run.first, run.end);
            let blocks = run.end - run.first;
            let mut read_through_bytes = 0;
            if run.cached {
                self.stats.hits += blocks;
                self.stats.hit_bytes += bytes.len();
            } else if run.read_through_blocks > 0 {
                // The cached blocks inside this fetch: count them exactly, block by block.
                for block in run.first..run.end {
                    if self.blocks.contains(&(object, block)) {
                        read_through_bytes += self.blocks_range(object, block, block + 1).len();
                    }
                }
                self.stats.read_through_bytes += read_through_bytes;
                self.stats.misses += blocks - run.read_through_blocks;
                self.stats.miss_bytes += bytes.len() - read_through_bytes;
            } else {
                self.stats.misses += blocks;
                self.stats.miss_bytes += bytes.len();
            }
            if run.cached {
                for block in run.first..run.end {
                    self.blocks.touch((object, block));
                }
            }
            let source = if run.cached {
                FragmentSource::Cached
            } else {
                FragmentSource::Fetch
            };
            out.push(Fragment {
                range: bytes,
                source,
                read_through_bytes,
            });
        }
        out
    }

    /// One fetch of `bytes` from below for `object` finished: its first progress report came
    /// `first_byte_ns` after it started and the rest took `transfer_ns` (R8's fit). As in
    /// `updateReadStats`, the "first byte" is the first progress callback (after one progress
    /// chunk), and the bandwidth sample divides all `bytes` by the time after it; the driver
    /// gives no sample for a fetch whose only report is its end.
    pub fn record_fetch(&mut self, object: u64, first_byte_ns: u64, transfer_ns: u64, bytes: u64) {
        self.fits
            .entry(object)
            .or_default()
            .record(first_byte_ns, transfer_ns, bytes);
    }

    /// Caches the whole blocks `range` covers (a fetch completed). A partial block is cached
    /// only if it is the object's last block and `range` reaches the object's end.
    pub fn insert(&mut self, object: u64, range: ByteRange) {
        if range.is_empty() {
            return;
        }
        let bs = self.block_size;
        let first = range.start.div_ceil(bs);
        let mut end = range.end / bs;
        if let Some(&size) = self.object_sizes.get(&object) {
            if range.end >= size && size % bs != 0 && range.start <= (size / bs) * bs {
                end = size.div_ceil(bs);
            }
        }
        for block in first..end {
            self.blocks.touch((object, block));
        }
        self.evict_to_capacity();
    }

    /// Bytes of `range` held in the cache (for the coalescer's R8 read-through of cached gaps).
    /// Does not change recency or counters.
    pub fn cached_bytes(&self, object: u64, range: ByteRange) -> u64 {
        if range.is_empty() {
            return 0;
        }
        let bs = self.block_size;
        let mut total = 0;
        for block in range.start / bs..range.end.div_ceil(bs) {
            if self.blocks.contains(&(object, block)) {
                let b = ByteRange::new(block * bs, (block + 1) * bs);
                total += ByteRange::new(b.start.max(range.start), b.end.min(range.end)).len();
            }
        }
        total
    }

    /// True if every block `range` touches is cached (such a read needs no fetch at all).
    pub fn is_cached(&self, object: u64, range: ByteRange) -> bool {
        let bs = self.block_size;
        !range.is_empty()
            && (range.start / bs..range.end.div_ceil(bs))
                .all(|b| self.blocks.contains(&(object, b)))
    }

    /// Time to serve `bytes` from the cache: `hit_latency` + `bytes / hit_bandwidth`.
    pub fn hit_ns(&self, bytes: u64) -> u64 {
        let copy_ns = bytes as f64 * 1e9 / self.spec.hit_bandwidth.bytes_per_s();
        self.spec
            .hit_latency
            .ns()
            .saturating_add(copy_ns.ceil() as u64)
    }

    /// Counters so far, and the bytes held now.
    pub fn stats(&self) -> PageCacheStats {
        PageCacheStats {
            used_bytes: self.blocks.len() as u64 * self.block_size,
            ..self.stats
        }
    }

    /// `[first, end)` block indexes of the block-rounded range, clipped to the object's end.
    fn block_span(&self, object: u64, range: ByteRange) -> Option<(u64, u64)> {
        let end_byte = match self.object_sizes.get(&object) {
            Some(&size) => range.end.min(size),
            None => range.end,
        };
        if end_byte <= range.start {
            return None;
        }
        Some((
            range.start / self.block_size,
            end_byte.div_ceil(self.block_size),
        ))
    }

    /// Byte range of blocks `[first, end)`, clipped to the object's end when known.
    fn blocks_range(&self, object: u64, first: u64, end: u64) -> ByteRange {
        let bs = self.block_size;
        let mut stop = end.saturating_mul(bs);
        if let Some(&size) = self.object_sizes.get(&object) {
            stop = stop.min(size);
        }
        ByteRange::new(first * bs, stop)
    }

    fn evict_to_capacity(&mut self) {
        while self.blocks.len() as u64 > self.capacity_blocks {
            if self.blocks.pop_oldest().is_none() {
                break;
            }
            self.stats.evictions += 1;
        }
    }
}

#[cfg(test)]
mod tests;
