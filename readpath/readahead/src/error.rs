//! Typed errors of the read-ahead crate: bad settings and events the state cannot accept.

use thiserror::Error;

/// Everything that can go wrong in this crate. Each message says what is wrong and what would
/// be right, so that a scenario author can fix the setting without reading the code.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ReadaheadError {
    /// A memory fraction is outside `0..=1` or not a number.
    #[error("{name} = {value} is not a valid fraction: expected a number between 0 and 1")]
    InvalidFraction {
        /// ClickHouse setting name (or pool name) of the fraction.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The fixed and configured pool fractions leave nothing (or less than nothing) for the rest.
    #[error(
        "memory fractions sum to {sum} (metadata {metadata} + input_format_parquet_compressed_memory_fraction {compressed}); \
         they must sum to less than 1 so that the Decoded pool gets the rest"
    )]
    FractionsExceedOne {
        /// Sum of the fixed and configured fractions.
        sum: f64,
        /// The Metadata pool fraction.
        metadata: f64,
        /// The Compressed pool fraction.
        compressed: f64,
    },
    /// A setting that sizes a pool or a thread count is zero.
    #[error("{name} = 0 would leave no {what}; expected at least 1")]
    ZeroSetting {
        /// ClickHouse setting name.
        name: &'static str,
        /// What the setting sizes (e.g. "IO thread").
        what: &'static str,
    },
    /// A numeric setting is out of its allowed range.
    #[error("{name} = {value} is out of range: expected {expected}")]
    OutOfRange {
        /// Setting name.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// What would be accepted.
        expected: &'static str,
    },
    /// An event names a read the controller does not track (never issued, or already finished).
    #[error("read {read_id} is not tracked by the in-flight controller (never issued, or already completed)")]
    UnknownRead {
        /// The caller's read id.
        read_id: u64,
    },
    /// A read was issued twice under the same id.
    #[error("read {read_id} was already issued; read ids must be unique while a read is tracked")]
    DuplicateRead {
        /// The caller's read id.
        read_id: u64,
    },
    /// An event arrived out of order for a read (e.g. first byte before start).
    #[error("read {read_id}: {event} is not valid now: {why}")]
    OutOfOrder {
        /// The caller's read id.
        read_id: u64,
        /// The event received.
        event: &'static str,
        /// Why it cannot be accepted.
        why: &'static str,
    },
    /// A served sub-range of a read task does not lie within the task or is out of order.
    #[error("sub-range #{index} (task_offset {task_offset}, len {len}) of a {task_len}-byte task: {why}")]
    BadSubRange {
        /// Index of the sub-range in the list given.
        index: usize,
        /// Offset of the sub-range from the task's first byte.
        task_offset: u64,
        /// Length in bytes.
        len: u64,
        /// Length of the task in bytes.
        task_len: u64,
        /// What is wrong.
        why: &'static str,
    },
    /// A stream index beyond the number of streams the memory model was built for.
    #[error("stream {stream} does not exist: the memory model was built for {streams} streams")]
    UnknownStream {
        /// Stream given.
        stream: usize,
        /// Streams configured.
        streams: usize,
    },
    /// A charge was released to a memory model that did not make it.
    #[error("charge #{charge_id} was not made by this memory model (or was already released)")]
    ForeignCharge {
        /// Id of the charge.
        charge_id: u64,
    },
}
