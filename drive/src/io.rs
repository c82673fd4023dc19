//! The IO world of one run: a read the reader starts goes through the page cache (if any), then
//! the filesystem cache (if any), then the object store, and comes back as one logical read.

use super::readiness::CompositeRead;
use super::trace::{ServedBy, TraceRow};
use super::RunError;
use engine::EventQueue;
use layout::ByteRange;
use models::fs_cache::{FsCache, FsCacheMode};
use models::page_cache::{PageCache, PageCacheMode};
use models::store::{ClientEvent, GetRequest, Method, S3Client};
use planner::{Event, Object, ReadRequest, ReadSource};
use scenario::{Resolved, ResolvedArm};

/// Object ids: data files keep their index; Iceberg metadata objects live above 2^40.
pub fn object_id(o: &Object) -> u64 {
    const META: u64 = 1 << 40;
    match o {
        Object::Data(f) => *f as u64,
        Object::IcebergMetadataJson => META,
        Object::IcebergManifestList => META + 1,
        Object::IcebergManifest(i) => META + 2 + *i as u64,
        Object::Listing(i) => META + (1 << 32) + *i as u64,
    }
}

struct LiveRead {
    id: planner::ReadId,
    composite: CompositeRead,
    source: ReadSource,
    /// A read through the page cache (`readBigAtRetainCells`): one thread fetches its miss runs
    /// one after another and the read is ready only when all are (no partial readiness).
    through_page_cache: bool,
    /// Its fetches not started yet, in offset order: (fragment, GET range, fill fs cache).
    serial_gets: std::collections::VecDeque<(usize, ByteRange, bool)>,
}

/// What a store GET is for.
#[derive(Clone, Copy)]
enum GetPurpose {
    /// Serves fragment `fragment` of read `read`; the GET starts `lead` bytes before the fragment.
    Fragment {
        read: u64,
        fragment: usize,
        lead: u64,
        fill_fs_cache: bool,
    },
    /// A filesystem-cache background download: no reader waits for it.
    Background,
}

struct Get {
    purpose: GetPurpose,
    object: u64,
    range: ByteRange,
    started_ns: u64,
    /// When the first progress report came (a chunk boundary before the end): what the page
    /// cache's R8 fit calls the first byte ([`PageCache::record_fetch`]).
    first_progress_ns: Option<u64>,
}

/// Where one piece of a logical read comes from.
enum Piece {
    PageCache,
    Disk,
    Get { get: ByteRange, fill_fs_cache: bool },
}

struct LocalDone {
    read: u64,
    fragment: usize,
}

pub struct IoWorld {
    client: S3Client,
    page_cache: Option<(PageCache, PageCacheMode)>,
    fs_cache: Option<(FsCache, FsCacheMode)>,
    /// Hash maps: looked up on every event, never walked (`rustc_hash` has no random state).
    reads: rustc_hash::FxHashMap<u64, LiveRead>,
    gets: rustc_hash::FxHashMap<u64, Get>,
    local: EventQueue<LocalDone>,
    next_token: u64,
    record_trace: bool,
    trace: Vec<TraceRow>,
    object_sizes: Vec<u64>,
    client_events: Vec<(u64, ClientEvent)>,
    /// GETs the store client refused to start: (time, token, why).
    refused: Vec<(u64, u64, String)>,
    /// GETs the filesystem cache opened outside the read being planned.
    background: Vec<ByteRange>,
    /// Buffers [`IoWorld::start`] plans each read in, kept between reads (empty between them).
    scratch: StartScratch,
    /// Which reads sent a request to the store (the lower bound's chain).
    round_trips: crate::bound::StoreRoundTrips,
}

/// The buffers a read is planned in: one read at a time uses them, and keeping them saves
/// each read its own allocations of them (three to five a read).
#[derive(Default)]
struct StartScratch {
    /// Page-cache fragments: (clipped range, fetch range or `None` = cached).
    fragments: Vec<(ByteRange, Option<ByteRange>)>,
    /// The read's pieces, tiling its range once sorted.
    pieces: Vec<(ByteRange, Piece)>,
    /// The filesystem cache's plan of one fetch, and the pieces it covers.
    fs_plan: models::fs_cache::FsPlan,
    covered: Vec<(ByteRange, Piece)>,
}

impl IoWorld {
    pub fn new(
        r: &Resolved,
        arm: &ResolvedArm,
        rngs: &engine::RngStreams,
        replication: u64,
        record_trace: bool,
    ) -> Result<Self, RunError> {
        let model = |e: &dyn std::fmt::Display| RunError::Model(e.to_string());
        let mut client =
            S3Client::new(&r.store, rngs.stream(engine::Subsystem::Store, replication))
                .map_err(|e| model(&e))?;
        client.set_trace(record_trace);
        client.set_jitter_rng(
            rngs.stream(engine::Subsystem::Named("store_retry_jitter"), replication),
        );
        client.set_request_cpu(r.cpu.request_cpu());
        let object_sizes: Vec<u64> = r.table.files.iter().map(|f| f.size_bytes).collect();
        let page_cache = match &r.page_cache {
            Some(spec) => {
                let mut rng = rngs.stream(engine::Subsystem::PageCache, replication);
                let mut pc = PageCache::new(spec, &mut rng).map_err(|e| model(&e))?;
                warm_each_file(
                    r,
                    rngs,
                    engine::Subsystem::PageCache,
                    replication,
                    |o, n, g| pc.warm(o, n, g),
                );
                let mode = if arm.strategy.read_through_page_cache() {
                    PageCacheMode::ReadThrough {
                        waste_permille: models::page_cache::waste_permille(
                            arm.strategy.io_threads(),
                        ),
                    }
                } else {
                    PageCacheMode::Base
                };
                Some((pc, mode))
            }
            None => None,
        };
        let fs_cache = match &r.fs_cache {
            Some(spec) => {
                let mut fc = FsCache::new(spec).map_err(|e| model(&e))?;
                warm_each_file(
                    r,
                    rngs,
                    engine::Subsystem::FsCache,
                    replication,
                    |o, n, g| fc.warm(o, n, g),
                );
                let mode = if arm.strategy.filesystem_cache_fixes() {
                    FsCacheMode::Redesign
                } else {
                    FsCacheMode::Base
                };
                Some((fc, mode))
            }
            None => None,
        };
        Ok(Self {
            client,
            page_cache,
            fs_cache,
            reads: rustc_hash::FxHashMap::default(),
            gets: rustc_hash::FxHashMap::default(),
            local: EventQueue::new(),
            next_token: 0,
            record_trace,
            trace: Vec::new(),
            object_sizes,
            client_events: Vec::new(),
            background: Vec::new(),
            refused: Vec::new(),
            scratch: StartScratch::default(),
            round_trips: Default::default(),
        })
    }

    /// What the page cache holds, for the coalescer's read-through of cached gaps (R8).
    pub fn cache_view(&self) -> CacheView<'_> {
        CacheView {
            page_cache: self.page_cache.as_ref().map(|(pc, _)| pc),
        }
    }

    pub fn store_stats(&self) -> models::store::StoreStats {
        self.client.stats()
    }

    pub fn page_cache_read_through_bytes(&self) -> u64 {
        self.page_cache
            .as_ref()
            .map(|(pc, _)| pc.stats().read_through_bytes)
            .unwrap_or(0)
    }

    /// The dependent store round trips so far (the lower bound's chain), handed over.
    pub fn take_round_trips(&mut self) -> crate::bound::StoreRoundTrips {
        std::mem::take(&mut self.round_trips)
    }

    pub fn active_gets(&self) -> u64 {
        self.client.attempts_in_flight() as u64
    }

    fn object_size(&self, object: u64) -> u64 {
        self.object_sizes
            .get(object as usize)
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// Starts a read the reader issued at `now`: plans it into pieces (page-cache hits, disk
    /// reads, store GETs) that tile its range, and starts each.
    pub fn start(&mut self, now: u64, req: ReadRequest) {
        let object = object_id(&req.object);
        let key = req.id.0;
        // HEAD and LIST go to the store as they are: no cache holds them.
        let method = match req.kind {
            planner::ReadKind::Head => Some(Method::Head),
            planner::ReadKind::List => Some(Method::List),
            _ => None,
        };
        if let Some(method) = method {
            self.round_trips.record(&req.object, req.kind);
            let composite = CompositeRead::new(req.range, [req.range]);
            self.reads.insert(
                key,
                LiveRead {
                    id: req.id,
                    composite,
                    source: ReadSource::Store,
                    through_page_cache: false,
                    serial_gets: Default::default(),
                },
            );
            self.start_get_as(
                now,
                GetPurpose::Fragment {
                    read: key,
                    fragment: 0,
                    lead: 0,
                    fill_fs_cache: false,
                },
                object,
                req.range,
                method,
            );
            return;
        }
        // 1. Page cache: cached blocks are served locally; the rest is fetched whole-block (the
        // reader sees only its own bytes of each fragment).
        let mut plan = std::mem::take(&mut self.scratch.fragments);
        let mut through_page_cache = false;
        match &mut self.page_cache {
            Some((pc, mode)) if matches!(req.object, Object::Data(_)) => {
                through_page_cache = true;
                for frag in pc.plan(object, req.range, *mode) {
                    let clipped = clip(frag.range, req.range);
                    if clipped.is_empty() {
                        continue;
                    }
                    let cached = frag.source == models::page_cache::FragmentSource::Cached;
                    plan.push((clipped, if cached { None } else { Some(frag.range) }));
                }
            }
            _ => plan.push((req.range, Some(req.range))),
        }
        // 2. Filesystem cache for the fetched parts; 3. the store for what it does not hold.
        let mut pieces = std::mem::take(&mut self.scratch.pieces);
        for (clipped, fetch) in plan.drain(..) {
            match fetch {
                None => pieces.push((clipped, Piece::PageCache)),
                Some(fetch) => self.plan_fetch(now, object, clipped, fetch, &mut pieces),
            }
        }
        self.scratch.fragments = plan;
        pieces.sort_by_key(|p| p.0.start);
        let composite = CompositeRead::new(req.range, pieces.iter().map(|p| p.0));
        // Every read through the page cache is kept out of the controller's fit, misses included
        // (`served_from_cache` in the Prefetcher).
        let mut source = if through_page_cache {
            ReadSource::PageCache
        } else {
            ReadSource::Store
        };
        let mut serial_gets = std::collections::VecDeque::new();
        if pieces.iter().any(|(_, p)| matches!(p, Piece::Get { .. })) {
            self.round_trips.record(&req.object, req.kind);
        }
        for (i, (range, piece)) in pieces.drain(..).enumerate() {
            match piece {
                Piece::PageCache => {
                    if source == ReadSource::Store {
                        source = ReadSource::PageCache;
                    }
                    let ns = self
                        .page_cache
                        .as_ref()
                        .map(|(pc, _)| pc.hit_ns(range.len()))
                        .unwrap_or(0);
                    self.serve_locally(now, ns, key, i, object, range, ServedBy::PageCache);
                }
                Piece::Disk => {
                    source = ReadSource::FilesystemCache;
                    let ns = self
                        .fs_cache
                        .as_ref()
                        .map(|(fc, _)| fc.disk_read_ns(range.len()))
                        .unwrap_or(0);
                    self.serve_locally(now, ns, key, i, object, range, ServedBy::FilesystemCache);
                }
                Piece::Get { get, fill_fs_cache } if through_page_cache => {
                    serial_gets.push_back((i, get, fill_fs_cache));
                    let _ = range;
                }
                Piece::Get { get, fill_fs_cache } => {
                    let lead = range.start.saturating_sub(get.start);
                    self.start_get(
                        now,
                        GetPurpose::Fragment {
                            read: key,
                            fragment: i,
                            lead,
                            fill_fs_cache,
                        },
                        object,
                        get,
                    );
                }
            }
        }
        self.reads.insert(
            key,
            LiveRead {
                id: req.id,
                composite,
                source,
                through_page_cache,
                serial_gets,
            },
        );
        self.scratch.pieces = pieces;
        self.start_next_serial_get(now, key, object);
    }

    /// Starts the next miss run of a page-cache read, if any (its runs are fetched one after
    /// another on the thread that runs the read).
    fn start_next_serial_get(&mut self, now: u64, read: u64, object: u64) {
        let Some(r) = self.reads.get_mut(&read) else {
            return;
        };
        let Some((fragment, get, fill_fs_cache)) = r.serial_gets.pop_front() else {
            return;
        };
        let lead = r
            .composite
            .fragment(fragment)
            .start
            .saturating_sub(get.start);
        self.start_get(
            now,
            GetPurpose::Fragment {
                read,
                fragment,
                lead,
                fill_fs_cache,
            },
            object,
            get,
        );
    }

    /// A piece served from a local cache: done after `ns`, with no progress before.
    #[allow(clippy::too_many_arguments)]
    fn serve_locally(
        &mut self,
        now: u64,
        ns: u64,
        read: u64,
        fragment: usize,
        object: u64,
        range: ByteRange,
        by: ServedBy,
    ) {
        let done = now.saturating_add(ns);
        self.local.push(done, LocalDone { read, fragment });
        self.push_trace(now, done, done, object, range, by, 200);
    }

    /// Splits the fetch of `clipped` (whose block-rounded span is `fetch`) into disk reads and
    /// store GETs; background downloads start at once and serve nobody.
    fn plan_fetch(
        &mut self,
        now: u64,
        object: u64,
        clipped: ByteRange,
        fetch: ByteRange,
        pieces: &mut Vec<(ByteRange, Piece)>,
    ) {
        let size = self.object_size(object);
        let Some((fc, mode)) = &mut self.fs_cache else {
            pieces.push((
                clipped,
                Piece::Get {
                    get: fetch,
                    fill_fs_cache: false,
                },
            ));
            return;
        };
        let mut plan = std::mem::take(&mut self.scratch.fs_plan);
        fc.plan_into(object, size, fetch, *mode, &mut plan);
        let mut covered = std::mem::take(&mut self.scratch.covered);
        for local in &plan.local {
            let r = clip(*local, clipped);
            if !r.is_empty() {
                covered.push((r, Piece::Disk));
            }
        }
        for remote in &plan.remote {
            let r = clip(*remote, clipped);
            if !r.is_empty() {
                covered.push((
                    r,
                    Piece::Get {
                        get: *remote,
                        fill_fs_cache: true,
                    },
                ));
            } else {
                // A GET the cache opens for bytes outside this read still downloads.
                self.background.push(*remote);
            }
        }
        // Bypassing GETs fill nothing: one outside this read (a page-cache block's rounding)
        // serves nobody and is not sent.
        for bypass in &plan.bypass {
            let r = clip(*bypass, clipped);
            if r.is_empty() {
                continue;
            }
            covered.push((
                r,
                Piece::Get {
                    get: *bypass,
                    fill_fs_cache: false,
                },
            ));
        }
        covered.sort_by_key(|p| p.0.start);
        // Whatever the plan leaves uncovered is read from the store directly.
        let mut at = clipped.start;
        for (r, piece) in covered.drain(..) {
            if r.start > at {
                let hole = ByteRange::new(at, r.start);
                pieces.push((
                    hole,
                    Piece::Get {
                        get: hole,
                        fill_fs_cache: false,
                    },
                ));
            }
            let r = ByteRange::new(r.start.max(at), r.end);
            if !r.is_empty() {
                at = r.end;
                pieces.push((r, piece));
            }
        }
        self.scratch.covered = covered;
        if at < clipped.end {
            let hole = ByteRange::new(at, clipped.end);
            pieces.push((
                hole,
                Piece::Get {
                    get: hole,
                    fill_fs_cache: false,
                },
            ));
        }
        // The plan's background downloads, then those opened outside this read, in that order.
        for &r in &plan.background {
            self.start_get(now, GetPurpose::Background, object, r);
        }
        self.scratch.fs_plan = plan;
        let mut opened_outside = std::mem::take(&mut self.background);
        for r in opened_outside.drain(..) {
            self.start_get(now, GetPurpose::Background, object, r);
        }
        self.background = opened_outside;
    }

    fn start_get(&mut self, now: u64, purpose: GetPurpose, object: u64, range: ByteRange) {
        self.start_get_as(now, purpose, object, range, Method::Get)
    }

    fn start_get_as(
        &mut self,
        now: u64,
        purpose: GetPurpose,
        object: u64,
        range: ByteRange,
        method: Method,
    ) {
        let token = self.next_token;
        self.next_token += 1;
        self.gets.insert(
            token,
            Get {
                purpose,
                object,
                range,
                started_ns: now,
                first_progress_ns: None,
            },
        );
        if let Err(e) = self.client.start(
            now,
            GetRequest {
                method,
                token,
                object,
                prefix: 0,
                offset: range.start,
                len: range.len(),
            },
        ) {
            // Reported to the reader at the next advance, like any failed read.
            self.refused.push((now, token, e.to_string()));
        }
    }

    pub fn next_event_ns(&self) -> Option<u64> {
        let refused = self.refused.first().map(|r| r.0);
        let local = crate::earliest(self.local.peek_time(), refused);
        crate::earliest(self.client.next_event_ns(), local)
    }

    /// Advances the world to `now` and appends the reader events that happened, in time order.
    pub fn advance(&mut self, now: u64, out: &mut Vec<(u64, Event)>) {
        self.client_events.clear();
        let mut evs = std::mem::take(&mut self.client_events);
        for (t, token, reason) in std::mem::take(&mut self.refused) {
            evs.push((t, ClientEvent::Failed { token, reason }));
        }
        self.client.advance(now, &mut evs);
        for (t, ev) in evs.drain(..) {
            self.on_client_event(t, ev, out);
        }
        self.client_events = evs;
        while self.local.peek_time().is_some_and(|t| t <= now) {
            let Some((t, done)) = self.local.pop() else {
                break;
            };
            self.on_fragment_progress(t, done.read, done.fragment, u64::MAX, out);
        }
        if self.record_trace {
            let mut attempts = Vec::new();
            self.client.drain_attempts(&mut attempts);
            for a in attempts {
                let (object, range) = (a.object, ByteRange::with_len(a.offset, a.len));
                self.trace.push(TraceRow::from_attempt(&a, object, range));
            }
        }
    }

    fn on_client_event(&mut self, t: u64, ev: ClientEvent, out: &mut Vec<(u64, Event)>) {
        let token = match &ev {
            ClientEvent::FirstByte { token }
            | ClientEvent::Progress { token, .. }
            | ClientEvent::Completed { token }
            | ClientEvent::Failed { token, .. } => *token,
        };
        let Some(get) = self.gets.get_mut(&token) else {
            return;
        };
        if matches!(ev, ClientEvent::Progress { .. }) && get.first_progress_ns.is_none() {
            get.first_progress_ns = Some(t);
        }
        let (purpose, object, range) = (get.purpose, get.object, get.range);
        let (started_ns, first_progress_ns) = (get.started_ns, get.first_progress_ns);
        match ev {
            ClientEvent::FirstByte { .. } => {
                if let GetPurpose::Fragment {
                    read, fragment: 0, ..
                } = purpose
                {
                    if let Some(r) = self.reads.get_mut(&read) {
                        if !r.composite.first_byte_sent && !r.through_page_cache {
                            r.composite.first_byte_sent = true;
                            out.push((t, Event::ReadFirstByte { id: r.id }));
                        }
                    }
                }
            }
            ClientEvent::Progress { bytes_ready, .. } => {
                if let GetPurpose::Fragment {
                    read,
                    fragment,
                    lead,
                    ..
                } = purpose
                {
                    self.on_fragment_progress(
                        t,
                        read,
                        fragment,
                        bytes_ready.saturating_sub(lead),
                        out,
                    );
                }
            }
            ClientEvent::Completed { .. } => {
                self.gets.remove(&token);
                if let Some((pc, _)) = &mut self.page_cache {
                    pc.insert(object, range);
                    // R8 fits on the first progress report, as `updateReadStats` does; a fetch
                    // whose only report is its end (one progress chunk or less) gives no sample.
                    match first_progress_ns {
                        Some(p) if matches!(purpose, GetPurpose::Fragment { .. }) && t > p => {
                            pc.record_fetch(
                                object,
                                p.saturating_sub(started_ns),
                                t - p,
                                range.len(),
                            );
                        }
                        _ => {}
                    }
                }
                let fill = match purpose {
                    GetPurpose::Fragment { fill_fs_cache, .. } => fill_fs_cache,
                    GetPurpose::Background => true,
                };
                if fill {
                    if let Some((fc, _)) = &mut self.fs_cache {
                        fc.complete(object, range);
                    }
                }
                if let GetPurpose::Fragment { read, fragment, .. } = purpose {
                    self.on_fragment_progress(t, read, fragment, u64::MAX, out);
                    self.start_next_serial_get(t, read, object);
                }
            }
            ClientEvent::Failed { reason, .. } => {
                self.gets.remove(&token);
                // Only a GET that claimed its bytes drops the claim (a bypassing GET has none:
                // its range may equal another read's claim).
                let claimed = match purpose {
                    GetPurpose::Fragment { fill_fs_cache, .. } => fill_fs_cache,
                    GetPurpose::Background => true,
                };
                if let (true, Some((fc, _))) = (claimed, &mut self.fs_cache) {
                    fc.abort(object, range);
                }
                if let GetPurpose::Fragment { read, .. } = purpose {
                    if let Some(r) = self.reads.remove(&read) {
                        out.push((t, Event::ReadFailed { id: r.id, reason }));
                    }
                }
            }
        }
    }

    fn on_fragment_progress(
        &mut self,
        t: u64,
        read: u64,
        fragment: usize,
        ready: u64,
        out: &mut Vec<(u64, Event)>,
    ) {
        let Some(r) = self.reads.get_mut(&read) else {
            return;
        };
        r.composite.set_ready(fragment, ready);
        let now_ready = r.composite.bytes_ready();
        if r.through_page_cache && !r.composite.is_complete() {
            // Ready only when every run is in (the task publishes its bytes at the end).
            return;
        }
        if !r.composite.first_byte_sent && now_ready > 0 {
            r.composite.first_byte_sent = true;
            out.push((t, Event::ReadFirstByte { id: r.id }));
        }
        if r.composite.is_complete() {
            let completed = Event::ReadCompleted {
                id: r.id,
                source: r.source,
            };
            self.reads.remove(&read);
            out.push((t, completed));
        } else if now_ready > r.composite.reported_ready {
            r.composite.reported_ready = now_ready;
            out.push((
                t,
                Event::ReadProgress {
                    id: r.id,
                    bytes_ready: now_ready,
                },
            ));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn push_trace(
        &mut self,
        start: u64,
        first: u64,
        end: u64,
        object: u64,
        range: ByteRange,
        by: ServedBy,
        status: u16,
    ) {
        if self.record_trace {
            self.trace.push(TraceRow::local(
                start, first, end, object, range, by, status,
            ));
        }
    }

    pub fn take_trace(&mut self) -> Vec<TraceRow> {
        let mut t = std::mem::take(&mut self.trace);
        t.sort_by_key(|r| (r.start_ns, r.end_ns));
        t
    }
}

fn clip(r: ByteRange, to: ByteRange) -> ByteRange {
    ByteRange::new(r.start.max(to.start), r.end.min(to.end))
}

/// The page cache as the coalescer sees it (R8).
pub struct CacheView<'a> {
    page_cache: Option<&'a PageCache>,
}

impl planner::CacheView for CacheView<'_> {
    fn cached_bytes(&self, file: layout::FileIndex, range: ByteRange) -> u64 {
        self.page_cache
            .map(|pc| pc.cached_bytes(file as u64, range))
            .unwrap_or(0)
    }
}

/// Calls `warm(object, size, rng)` for each file of the table laid out (whole or outlined) with the file's own
/// stream of `subsystem`: a file's warm state is the same whichever other files the table
/// holds (a generated table holds only those its queries touch).
fn warm_each_file(
    r: &Resolved,
    rngs: &engine::RngStreams,
    subsystem: engine::Subsystem,
    replication: u64,
    mut warm: impl FnMut(u64, u64, &mut engine::StreamRng),
) {
    for (i, f) in r
        .table
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.is_placeholder())
    {
        let mut file_rng = rngs.stream_for(subsystem, i as u64 + 1, replication);
        warm(i as u64, f.size_bytes, &mut file_rng);
    }
}
