//! The discrete-event engine: integer virtual time, an event queue ordered by
//! `(time, insertion sequence)` with cancellation, and seeded RNG streams per subsystem and per
//! replication.
//!
//! One run is single-threaded and deterministic: the same root seed and the same sequence of
//! `schedule`/`cancel` calls give the same sequence of popped events, whatever the machine.
//! Parallelism belongs across runs, not inside one.

mod queue;
mod rng;

pub use queue::{EventKey, EventQueue};
pub use rng::{fnv1a64, splitmix64, RngStreams, StreamRng, Subsystem};

/// Virtual time in nanoseconds since the start of a run.
pub type TimeNs = u64;
