//! The filesystem cache: a local-disk cache of remote objects in file segments (ClickHouse's
//! `FileCache`, used for data lakes and table functions through `filesystem_cache_name`).
//!
//! Segments are made on demand: a read's range is widened to the boundary alignment, and the
//! holes of that span not yet covered by segments become new segments of at most
//! `max_file_segment_size`. A segment is filled from its start, in order (no holes), so a reader
//! in the middle of an empty segment first downloads the bytes before it ("predownload").
//!
//! Two behaviours (`docs/readpath.md` section 2 and R3):
//! - **Base**: on the Parquet random-access path the per-query
//!   `filesystem_cache_boundary_alignment` is ignored (the cache's `boundary_alignment`, 4 MiB,
//!   applies), the remote GET is opened from the segment's download offset to the segment end
//!   (4-32 MiB) for any range, and a background download of the rest of every partly read
//!   segment is always queued. `docs/findings.md` F6: 450 MB of requested pages downloaded 35 GB.
//! - **Redesign** (R3): honours `filesystem_cache_boundary_alignment` (segments and GETs stop at
//!   the aligned end of the read) and `filesystem_cache_allow_background_download`.
//!
//! Pure model: [`FsCache::plan`] says what is served from disk, which GETs to open and which
//! background downloads to queue; the driver calls [`FsCache::complete`] (or
//! [`FsCache::abort`]) when a GET ends and turns [`FsCache::disk_read_ns`] into virtual time.

mod segment;

use crate::page_cache::lru::Lru;
use crate::page_cache::WarmSpec;
use layout::ByteRange;
use segment::Segment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use units::{Bandwidth, Bytes, Duration};

/// A bad filesystem-cache specification: what is wrong and what would be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FsCacheError {
    /// A field has a value the model cannot use.
    #[error("filesystem_cache: {0}")]
    Invalid(String),
}

/// The local disk behind the cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// Time to the first byte of a local read (NVMe: about 100 us including the syscall path).
    #[serde(default = "default_disk_latency")]
    pub latency: Duration,
    /// Bandwidth of one local read.
    #[serde(default = "default_disk_bandwidth")]
    pub bandwidth: Bandwidth,
}

fn default_disk_latency() -> Duration {
    Duration(100_000)
}
fn default_disk_bandwidth() -> Bandwidth {
    // An estimate for one read stream on local NVMe (`docs/findings.md` F7 ran on local NVMe).
    Bandwidth(2.0 * (1u64 << 30) as f64)
}

impl Default for DiskSpec {
    fn default() -> Self {
        Self {
            latency: default_disk_latency(),
            bandwidth: default_disk_bandwidth(),
        }
    }
}

/// The filesystem cache as a scenario writes it (`caches: filesystem_cache:`). Keys are
/// ClickHouse's names: the cache configuration's (`max_size`, `max_file_segment_size`,
/// `boundary_alignment`) and the query settings the redesign honours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsCacheSpec {
    /// `max_size` of the cache configuration: its capacity on disk. Required (ClickHouse has no
    /// default).
    pub max_size: Bytes,
    /// `max_file_segment_size` (default 32 MiB): the largest segment.
    #[serde(default = "default_max_file_segment_size")]
    pub max_file_segment_size: Bytes,
    /// `boundary_alignment` of the cache configuration (default 4 MiB): segments start and end
    /// on multiples of it. The base reader always uses it. At most `max_file_segment_size`.
    #[serde(default = "default_boundary_alignment")]
    pub boundary_alignment: Bytes,
    /// `filesystem_cache_boundary_alignment` (query setting; unset = the cache's
    /// `boundary_alignment`, `0` = no alignment). Honoured only by the redesign (R3).
    #[serde(default)]
    pub filesystem_cache_boundary_alignment: Option<Bytes>,
    /// `filesystem_cache_allow_background_download` (query setting, default true): queue the
    /// rest of partly read segments for download in the background. The base reader always
    /// does; the redesign honours `false` (R3).
    #[serde(default = "yes")]
    pub filesystem_cache_allow_background_download: bool,
    /// The local disk.
    #[serde(default)]
    pub disk: DiskSpec,
    /// What the cache holds when the run starts, in units of `boundary_alignment` (default:
    /// cold).
    #[serde(default)]
    pub warm: WarmSpec,
}

fn default_max_file_segment_size() -> Bytes {
    Bytes(32 << 20)
}
fn default_boundary_alignment() -> Bytes {
    Bytes(4 << 20)
}
fn yes() -> bool {
    true
}

impl FsCacheSpec {
    /// A cold cache of `max_size` bytes with ClickHouse's defaults.
    pub fn with_capacity(max_size: Bytes) -> Self {
        Self {
            max_size,
            max_file_segment_size: default_max_file_segment_size(),
            boundary_alignment: default_boundary_alignment(),
            filesystem_cache_boundary_alignment: None,
            filesystem_cache_allow_background_download: true,
            disk: DiskSpec::default(),
            warm: WarmSpec::default(),
        }
    }

    /// Checks every field; the message names the key and the accepted values.
    pub fn validate(&self) -> Result<(), FsCacheError> {
        let bad = |m: String| Err(FsCacheError::Invalid(m));
        if self.max_size.get() == 0 {
            return bad("max_size is 0; give the cache's capacity, e.g. `100GiB`, or omit the section for no cache".into());
        }
        if self.max_file_segment_size.get() == 0 {
            return bad("max_file_segment_size is 0; use a positive size such as `32MiB`".into());
        }
        let al = self.boundary_alignment.get();
        if al < limits::MIN_CACHE_BLOCK_BYTES || al > self.max_file_segment_size.get() {
            return bad(format!(
                "boundary_alignment is {}; it must be at least {} (limits::MIN_CACHE_BLOCK_BYTES) \
                 and at most max_file_segment_size ({})",
                self.boundary_alignment,
                Bytes(limits::MIN_CACHE_BLOCK_BYTES),
                self.max_file_segment_size
            ));
        }
        let bw = self.disk.bandwidth.bytes_per_s();
        if !(bw.is_finite() && bw > 0.0) {
            return bad(format!(
                "disk.bandwidth is {}; use a positive rate such as `2GiB/s`",
                self.disk.bandwidth
            ));
        }
        self.warm
            .validate("filesystem_cache")
            .map_err(FsCacheError::Invalid)
    }
}

/// Which reader generation uses the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsCacheMode {
    /// Per-query alignment ignored, GETs opened to the segment end, background download of
    /// partly read segments always queued.
    Base,
    /// R3: honours `filesystem_cache_boundary_alignment` and
    /// `filesystem_cache_allow_background_download`.
    Redesign,
}

/// How one read decomposes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FsPlan {
    /// Parts of the read served from local disk, in offset order.
    pub local: Vec<ByteRange>,
    /// GETs to open now, as opened (they may start before the read: predownload, and end after
    /// it: base opens to the segment end). One per segment; the read's bytes within each are
    /// `clip(get, read)`.
    pub remote: Vec<ByteRange>,
    /// GETs around a download in progress (another read's claim): they read the needed bytes
    /// and fill nothing, so completing or failing one must not touch that claim.
    pub bypass: Vec<ByteRange>,
    /// Downloads to queue after the read; no reader waits for them.
    pub background: Vec<ByteRange>,
}

impl FsPlan {
    /// Bytes the remote GETs (bypassing ones included) will fetch.
    pub fn remote_bytes(&self) -> u64 {
        self.remote
            .iter()
            .chain(&self.bypass)
            .map(|r| r.len())
            .sum()
    }
    /// Bytes the background downloads will fetch.
    pub fn background_bytes(&self) -> u64 {
        self.background.iter().map(|r| r.len()).sum()
    }
}

/// Counters since the cache was built (warming excluded, except `evictions`: warming a cache
/// past its size evicts, and those count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FsCacheStats {
    /// Bytes reads asked for (clipped to the object).
    pub requested_bytes: u64,
    /// Bytes served from local disk.
    pub local_bytes: u64,
    /// Foreground GETs opened.
    pub remote_gets: u64,
    /// Bytes of foreground GETs, as opened.
    pub remote_bytes: u64,
    /// Of `remote_bytes`, bytes read around the cache because another GET was already filling
    /// the segment (ClickHouse would make the reader wait for that downloader or bypass).
    pub bypass_bytes: u64,
    /// Background downloads queued.
    pub background_gets: u64,
    /// Bytes of background downloads queued.
    pub background_bytes: u64,
    /// Bytes written to disk by completed GETs.
    pub written_bytes: u64,
    /// Segments evicted to stay within `max_size`.
    pub evictions: u64,
    /// Bytes held now.
    pub used_bytes: u64,
}

/// The filesystem cache of one node. See the module documentation.
#[derive(Debug, Clone)]
pub struct FsCache {
    spec: FsCacheSpec,
    objects: BTreeMap<u64, BTreeMap<u64, Segment>>,
    lru: Lru<(u64, u64)>,
    stats: FsCacheStats,
}

fn align_down(x: u64, al: u64) -> u64 {
    x.checked_div(al).map_or(x, |q| q * al)
}

fn align_up(x: u64, al: u64) -> u64 {
    if al == 0 {
        x
    } else {
        x.div_ceil(al).saturating_mul(al)
    }
}

impl FsCache {
    /// An empty cache as `spec` describes it; call [`FsCache::warm`] per object for its warm
    /// state.
    pub fn new(spec: &FsCacheSpec) -> Result<Self, FsCacheError> {
        spec.validate()?;
        Ok(Self {
            spec: spec.clone(),
            objects: BTreeMap::new(),
            lru: Lru::default(),
            stats: FsCacheStats::default(),
        })
    }

    /// The specification the cache was built from.
    pub fn spec(&self) -> &FsCacheSpec {
        &self.spec
    }

    /// Applies the warm state to one object: whole units of `boundary_alignment` on disk.
    pub fn warm(&mut self, object: u64, object_size: u64, rng: &mut impl rand::Rng) {
        let al = self.spec.boundary_alignment.get();
        let units = self.spec.warm.warm_units(al, object_size, rng);
        let segs = self.objects.entry(object).or_default();
        for u in units {
            let (start, end) = (u * al, ((u + 1) * al).min(object_size));
            let taken = segs
                .range(..end)
                .next_back()
                .is_some_and(|(_, s)| s.end > start);
            if taken {
                continue;
            }
            let mut s = Segment::new(start, end);
            s.downloaded_end = end;
            segs.insert(start, s);
            self.lru.touch((object, start));
            self.stats.used_bytes += end - start;
        }
        self.evict_to_capacity();
    }

    /// How a read of `range` of an object of `object_size` bytes decomposes. Registers the
    /// GETs it returns as filling their segments, so call [`FsCache::complete`] or
    /// [`FsCache::abort`] for each of `remote` and `background` when it ends.
    pub fn plan(
        &mut self,
        object: u64,
        object_size: u64,
        range: ByteRange,
        mode: FsCacheMode,
    ) -> FsPlan {
        let mut plan = FsPlan::default();
        self.plan_into(object, object_size, range, mode, &mut plan);
        plan
    }

    /// [`FsCache::plan`] into `plan`, emptied first: a caller planning one read after another
    /// keeps one `FsPlan` and its buffers.
    pub fn plan_into(
        &mut self,
        object: u64,
        object_size: u64,
        range: ByteRange,
        mode: FsCacheMode,
        plan: &mut FsPlan,
    ) {
        plan.local.clear();
        plan.remote.clear();
        plan.bypass.clear();
        plan.background.clear();
        let (a, b) = (range.start, range.end.min(object_size));
        if a >= b {
            return;
        }
        let (al, background, cap_at_alignment) = match mode {
            FsCacheMode::Base => (self.spec.boundary_alignment.get(), true, false),
            FsCacheMode::Redesign => (
                self.spec
                    .filesystem_cache_boundary_alignment
                    .unwrap_or(self.spec.boundary_alignment)
                    .get(),
                self.spec.filesystem_cache_allow_background_download,
                true,
            ),
        };
        let span = ByteRange::new(align_down(a, al), align_up(b, al).min(object_size));
        self.ensure_segments(object, span);
        self.stats.requested_bytes += b - a;
        let Some(segs) = self.objects.get_mut(&object) else {
            return;
        };
        for s in overlapping_mut(segs, ByteRange::new(a, b)) {
            let need = ByteRange::new(a.max(s.start), b.min(s.end));
            let local = ByteRange::new(need.start, need.end.min(s.downloaded_end));
            if !local.is_empty() {
                self.stats.local_bytes += local.len();
                match plan.local.last_mut() {
                    Some(last) if last.end == local.start => last.end = local.end,
                    _ => plan.local.push(local),
                }
            }
            if need.end > s.downloaded_end {
                let missing = ByteRange::new(need.start.max(s.downloaded_end), need.end);
                let get = if s.is_downloading() {
                    // Another GET is filling this segment; read the needed bytes around it.
                    self.stats.bypass_bytes += missing.len();
                    plan.bypass.push(missing);
                    missing
                } else {
                    let end = if cap_at_alignment {
                        s.end.min(align_up(need.end, al))
                    } else {
                        s.end
                    };
                    let get = ByteRange::new(s.downloaded_end, end);
                    s.claim(get);
                    plan.remote.push(get);
                    get
                };
                self.stats.remote_gets += 1;
                self.stats.remote_bytes += get.len();
            }
            if background && !s.is_complete() {
                let rest = ByteRange::new(s.claimed_end(), s.end);
                if !rest.is_empty() {
                    s.claim(rest);
                    self.stats.background_gets += 1;
                    self.stats.background_bytes += rest.len();
                    plan.background.push(rest);
                }
            }
            self.lru.touch((object, s.start));
        }
    }

    /// A GET over `range` of `object` completed: the bytes the cache had claimed for it land
    /// on disk (a cache-bypassing GET stores nothing). May evict to stay within `max_size`.
    pub fn complete(&mut self, object: u64, range: ByteRange) {
        let Some(segs) = self.objects.get_mut(&object) else {
            return;
        };
        for s in overlapping_mut(segs, range) {
            let before = s.bytes();
            s.complete(range);
            let added = s.bytes().saturating_sub(before);
            self.stats.written_bytes += added;
            self.stats.used_bytes += added;
        }
        self.evict_to_capacity();
    }

    /// A GET over `range` of `object` failed or was cancelled: its segments stop waiting for it.
    pub fn abort(&mut self, object: u64, range: ByteRange) {
        let Some(segs) = self.objects.get_mut(&object) else {
            return;
        };
        for s in overlapping_mut(segs, range) {
            s.abort(range);
        }
    }

    /// Bytes of `range` on local disk.
    pub fn held_bytes(&self, object: u64, range: ByteRange) -> u64 {
        let Some(segs) = self.objects.get(&object) else {
            return 0;
        };
        let clip =
            |r: ByteRange| ByteRange::new(r.start.max(range.start), r.end.min(range.end)).len();
        overlapping(segs, range)
            .filter_map(|start| segs.get(&start))
            .map(|s| {
                clip(ByteRange::new(s.start, s.downloaded_end))
                    + s.arrived.iter().map(|r| clip(*r)).sum::<u64>()
            })
            .sum()
    }

    /// Time of one local read of `bytes`: `disk.latency + bytes / disk.bandwidth`.
    pub fn disk_read_ns(&self, bytes: u64) -> u64 {
        let transfer_ns = bytes as f64 * 1e9 / self.spec.disk.bandwidth.bytes_per_s();
        self.spec
            .disk
            .latency
            .ns()
            .saturating_add(transfer_ns.ceil() as u64)
    }

    /// Counters so far, and the bytes held now.
    pub fn stats(&self) -> FsCacheStats {
        self.stats
    }

    /// Makes segments for the holes of `span`, each at most `max_file_segment_size`.
    fn ensure_segments(&mut self, object: u64, span: ByteRange) {
        let max_seg = self.spec.max_file_segment_size.get().max(1);
        let segs = self.objects.entry(object).or_default();
        // Usually none: a `Vec` allocates only at its first hole.
        let mut holes = Vec::new();
        let mut cursor = span.start;
        for s in overlapping(segs, span).filter_map(|s| segs.get(&s)) {
            if s.start > cursor {
                holes.push((cursor, s.start));
            }
            cursor = cursor.max(s.end);
        }
        if cursor < span.end {
            holes.push((cursor, span.end));
        }
        for (mut x, y) in holes {
            while x < y {
                let e = y.min(x.saturating_add(max_seg));
                segs.insert(x, Segment::new(x, e));
                x = e;
            }
        }
    }

    /// Evicts least-recently-used segments until the bytes held fit `max_size`. Segments a GET
    /// is still filling are kept (they become the most recent).
    fn evict_to_capacity(&mut self) {
        let cap = self.spec.max_size.get();
        let mut busy = Vec::new();
        while self.stats.used_bytes > cap {
            let Some((object, start)) = self.lru.pop_oldest() else {
                break;
            };
            let Some(segs) = self.objects.get_mut(&object) else {
                continue;
            };
            match segs.get(&start) {
                Some(s) if s.is_downloading() => busy.push((object, start)),
                Some(s) => {
                    let bytes = s.bytes();
                    segs.remove(&start);
                    self.stats.used_bytes -= bytes;
                    if bytes > 0 {
                        self.stats.evictions += 1;
                    }
                }
                None => {}
            }
        }
        for key in busy {
            self.lru.touch(key);
        }
    }
}

/// Starts of the segments of one object that overlap `range`, in offset order.
fn overlapping(segs: &BTreeMap<u64, Segment>, range: ByteRange) -> impl Iterator<Item = u64> + '_ {
    segs.range(overlap_span(segs, range))
        .filter(move |(_, s)| s.end > range.start)
        .map(|(k, _)| *k)
}

/// The segments of one object that overlap `range`, in offset order, to change in place
/// (the segments [`overlapping`] names, without collecting their starts first).
fn overlapping_mut(
    segs: &mut BTreeMap<u64, Segment>,
    range: ByteRange,
) -> impl Iterator<Item = &mut Segment> + '_ {
    segs.range_mut(overlap_span(segs, range))
        .map(|(_, s)| s)
        .filter(move |s| s.end > range.start)
}

/// The starts that may hold a segment overlapping `range`: from the segment that starts at or
/// before it and reaches into it (else from its start) to its end; empty for an empty range.
/// Every segment starting inside the range overlaps it; filtering by `end > range.start` leaves
/// exactly the overlapping ones.
fn overlap_span(segs: &BTreeMap<u64, Segment>, range: ByteRange) -> std::ops::Range<u64> {
    let first = segs
        .range(..=range.start)
        .next_back()
        .filter(|(_, s)| s.end > range.start)
        .map_or(range.start, |(k, _)| *k);
    if range.is_empty() {
        first..first
    } else {
        first..range.end
    }
}

#[cfg(test)]
mod tests;
