//! The simulated environment the read path runs against: object stores (with the client's
//! retries and hedging), page cache, filesystem cache and CPU. Each model is parameterised from
//! YAML with units, and each dynamic model is event-driven in integer nanoseconds: the driver asks
//! `next_event_ns()` and calls `advance(now_ns)`; models never read a clock.

pub mod cpu;
pub mod fs_cache;
pub mod page_cache;
pub mod store;
