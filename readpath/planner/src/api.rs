//! [`Reader`]: the one public reader, whatever the strategy; its contract is on the type.

use std::sync::Arc;

use layout::Table;
use readahead::ProfileEvents;

use crate::error::PlanError;
use crate::needed::NeededRange;
use crate::peer::PeerReader;
use crate::query::QuerySpec;
use crate::reader::ClickHouseReader;
use crate::strategy::Strategy;
use crate::types::{Action, CacheView, Event, QueryOutput, Status, Tracked};

/// The query-level reader: every file of one query on one node, with all client-side
/// scheduling (IO pools, decode threads, memory, issue queues, bytes-in-flight control), for
/// every strategy: ClickHouse's reader (both generations), and the peers arrow-rs, Arrow
/// C++/pyarrow, DuckDB and Polars as their own request programs (`peer`); Velox, Trino and
/// Hadoop S3A run on ClickHouse's coupled discipline with their merge rules. Sans-IO, in the
/// style of quinn-proto (docs/style.md).
///
/// # Contract
///
/// Methods fall in four groups: getters (`&self`: [`Reader::status`], [`Reader::output`],
/// [`Reader::profile_events`], [`Reader::is_finished`], [`Reader::error`],
/// [`Reader::poll_timeout`]), events in ([`Reader::handle`], [`Reader::handle_timeout`]),
/// and work out ([`Reader::poll_action`]).
///
/// **Polling order.** After building the reader and after every `handle` or
/// `handle_timeout`, the driver MUST call `poll_action` until it returns `None`, and carry out
/// every action at once (start the read, run the decode, hand over the chunk). Then it jumps
/// to `min(poll_timeout(), next event of its world)`, feeds every event of that instant with
/// `handle`, and polls again. When `is_finished()` is true the query is done.
///
/// **Monotonic time.** Every `now_ns` given MUST be at least the largest `now_ns` given
/// before (virtual nanoseconds; the reader never reads a clock). A smaller one is a broken
/// contract: the reader stops with a sticky [`PlanError::Contract`].
///
/// **Sticky errors.** After an error (a failed read, a broken contract) every call does
/// nothing and `poll_action` returns `None`; `error()` says why.
///
/// # How it works
///
/// ClickHouse: each file (or bucket of row groups) becomes a *unit* with a [`crate::plan::FilePlan`]:
/// steps (bloom header, bloom blocks, dictionary, indexes, PREWHERE pages, main pages) with
/// dependencies. Two issue disciplines run the steps:
///
/// - *coupled* (`clickhouse-base`, velox, trino, hadoop-s3a): a cursor walks a unit's steps in order and starts
///   the next one only when its dependencies finished, memory admits it, it lies within the
///   row-group window and (base) every earlier step's bytes arrived, so the reads of a file
///   form one chain: about one GET in flight per open file. Base coalescing is lazy over the
///   whole file's registered ranges; a read that finds the IO pool full runs inline on a free
///   decode thread.
/// - *planned* (R5): all index steps start at init into the unit's issue queue, page steps as
///   soon as their row group's indexes arrived; queues issue while bytes in flight stay under
///   the controller's target and memory admits, the current subgroup of the first incomplete
///   row group always admitted. A read of that current subgroup that finds the IO pool full
///   runs inline on a free decode thread, so the pool does not bound the depth of pre-issued
///   reads (`docs/findings.md` F4, F5).
///
/// Costs are O(log n) per event (B-tree maps keyed by id); a unit's plan is built when it is
/// opened and dropped when it is done, so memory follows the open files, not the query.
///
/// Peers: the query compiles into tasks (open a file, read a row group, decode it) that run on
/// the reader's own pools (threads, an IO pool, a bytes-in-flight budget) in the order the
/// reader takes them; see `peer/readers.rs` for each reader's rules and their sources.
pub struct Reader {
    engine: Engine,
}

enum Engine {
    ClickHouse(Box<ClickHouseReader>),
    Peer(Box<PeerReader>),
}

macro_rules! each {
    ($self:expr, $r:ident => $e:expr) => {
        match &$self.engine {
            Engine::ClickHouse($r) => $e,
            Engine::Peer($r) => $e,
        }
    };
    (mut $self:expr, $r:ident => $e:expr) => {
        match &mut $self.engine {
            Engine::ClickHouse($r) => $e,
            Engine::Peer($r) => $e,
        }
    };
}

impl Reader {
    /// Builds the reader: validates the query against the table and the strategy's
    /// settings, and lays out the strategy's work.
    pub fn new(
        table: Arc<Table>,
        query: QuerySpec,
        strategy: Strategy,
    ) -> Result<Reader, PlanError> {
        let engine = match PeerReader::new(table.clone(), query.clone(), strategy.clone())? {
            Some(p) => Engine::Peer(Box::new(p)),
            None => Engine::ClickHouse(Box::new(ClickHouseReader::new(table, query, strategy)?)),
        };
        Ok(Reader { engine })
    }

    /// Whether every selected row was delivered and consumed.
    pub fn is_finished(&self) -> bool {
        each!(self, r => r.is_finished())
    }

    /// Whether [`Reader::poll_action`] would return `None` at any time until the next
    /// [`Reader::handle`] or timeout, so that a driver may skip it (and the clock step it
    /// brings: the reader's time accounts add up the same). Always `false` for a peer.
    pub fn is_quiescent(&self) -> bool {
        match &self.engine {
            Engine::ClickHouse(r) => r.is_quiescent(),
            Engine::Peer(_) => false,
        }
    }

    /// The sticky error, if the reader stopped.
    pub fn error(&self) -> Option<&PlanError> {
        each!(self, r => r.error())
    }

    /// Profile events under ClickHouse names.
    pub fn profile_events(&self) -> &ProfileEvents {
        each!(self, r => r.profile_events())
    }

    /// How the parsing threads spent the run so far (ClickHouse: busy, waiting for bytes,
    /// idle; peers: all zero).
    pub fn thread_time(&self) -> crate::types::ThreadTime {
        match &self.engine {
            Engine::ClickHouse(r) => r.thread_time(),
            Engine::Peer(_) => crate::types::ThreadTime::default(),
        }
    }

    /// Rows delivered and bytes needed so far.
    pub fn output(&self) -> &QueryOutput {
        each!(self, r => r.output())
    }

    /// Share plans with the other readers of the same table through `plans` (a
    /// [`PlanCache`](crate::PlanCache) kept per table). Changes no result: a plan is a pure
    /// function of the file and what shapes it. Call before the first `poll_action`; the peer
    /// readers plan at construction and ignore it.
    pub fn share_plans(&mut self, plans: Arc<crate::PlanCache>) {
        if let Engine::ClickHouse(r) = &mut self.engine {
            r.share_plans(plans);
        }
    }

    /// Keep every range the reader needs, for [`Reader::take_needed`]. Call before the first
    /// `poll_action`; off by default (it costs memory per planned range).
    pub fn record_needed(&mut self, on: bool) {
        each!(mut self, r => r.record_needed(on))
    }

    /// Every range the reader needed so far, before coalescing, in query order (file by
    /// file, the footer first, then by offset). Empty unless [`Reader::record_needed`]. `Err`
    /// when an outlined file's layout cannot be made again.
    pub fn take_needed(&mut self) -> Result<Vec<NeededRange>, PlanError> {
        each!(mut self, r => r.take_needed())
    }

    /// The strategy the reader runs.
    pub fn strategy(&self) -> &Strategy {
        each!(self, r => r.strategy())
    }

    /// Earliest timer (virtual ns): Polars' controller ticks every 100 ms; ClickHouse's
    /// reader and the other peers have none (every decision follows an event).
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.engine {
            Engine::ClickHouse(_) => None,
            Engine::Peer(r) => r.poll_timeout(),
        }
    }

    /// A cheap snapshot.
    pub fn status(&self) -> Status {
        each!(self, r => r.status())
    }

    /// Which of [`Reader::status`]'s gauges this reader keeps (the others read 0).
    pub fn tracked(&self) -> Tracked {
        let all = matches!(self.engine, Engine::ClickHouse(_));
        Tracked {
            bytes_in_flight: all,
            memory: all,
        }
    }

    /// The timer of [`Reader::poll_timeout`] is due.
    pub fn handle_timeout(&mut self, now_ns: u64) {
        each!(mut self, r => r.handle_timeout(now_ns))
    }

    /// Feeds one event that happened at `now_ns`.
    pub fn handle(&mut self, now_ns: u64, event: Event) {
        each!(mut self, r => r.handle(now_ns, event))
    }

    /// The next thing to do, or `None` until the next event. `cache` tells which bytes the
    /// source already holds (R8 reads through them when coalescing; peers do not look).
    pub fn poll_action(&mut self, now_ns: u64, cache: &dyn CacheView) -> Option<Action> {
        match &mut self.engine {
            Engine::ClickHouse(r) => r.poll_action(now_ns, cache),
            Engine::Peer(r) => r.poll_action(now_ns),
        }
    }
}
