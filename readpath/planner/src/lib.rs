//! The planner of the Parquet read path: per file, the stages of `docs/readpath.md` section 1 as a
//! plan of steps ([`plan`]); the query-level [`Reader`] that runs them for every file of a
//! query under a [`Strategy`] (ClickHouse base, the redesign with each mechanism R1..R10 as a
//! switch, and peer readers' presets); and test support ([`testing`]).
//!
//! Sans-IO: no clock, no threads, no IO. The driver feeds events with `now_ns` and carries out
//! the actions the reader returns; see [`Reader`] for the contract. Every pruning decision is a
//! pure hash of the query's seed, so results never depend on event order.
// Casts that could truncate are checked (`limits::narrow`) or say why they cannot.
#![warn(clippy::cast_possible_truncation)]
// Tests build their fixtures with plain casts; the library target above is what is checked.
#![cfg_attr(test, allow(clippy::cast_possible_truncation))]

mod api;
mod error;
mod footer;
mod hash;
mod needed;
pub mod peer;
pub(crate) mod plan;
mod plan_cache;
pub mod predicate;
mod query;
mod reader;
pub mod settings;
mod strategy;
pub mod testing;
mod types;

pub use api::Reader;
pub use error::{PlanError, StrategyError};
pub use hash::splitmix64;
pub use needed::NeededRange;
pub use plan_cache::{PlanCache, MAX_CACHED_PLANS};
pub use predicate::{CmpOp, Predicate, Term};
pub use query::QuerySpec;
pub use readahead::{ProfileEvent, ProfileEvents};
pub use settings::R_NAMES;
pub use strategy::{Family, FooterRead, Storage, Strategy, WholeFile, STRATEGY_PRESETS};
pub use types::{
    Action, BudgetUsage, CacheView, Chunk, ChunkId, DecodeId, DecodeRequest, Event, NoCache,
    Object, QueryOutput, ReadId, ReadKind, ReadRequest, ReadSource, Status, ThreadTime, Tracked,
};
