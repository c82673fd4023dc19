//! Typed errors: each says what was wrong and what would be right.

use thiserror::Error;

/// Why a strategy setting was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StrategyError {
    /// A preset name that does not exist.
    #[error("unknown strategy preset `{name}`{suggestion}; known presets: {known}")]
    UnknownPreset {
        /// The name given.
        name: String,
        /// ` (did you mean `x`?)` or empty.
        suggestion: String,
        /// Every preset, comma-separated.
        known: String,
    },
    /// A setting key that does not exist.
    #[error("unknown setting `{key}`{suggestion}; `sim settings {preset}` lists every setting it honours")]
    UnknownSetting {
        /// The key given.
        key: String,
        /// ` (did you mean `x`?)` or empty.
        suggestion: String,
        /// The preset it was given to.
        preset: String,
    },
    /// A setting that exists but that this preset does not honour (it would do nothing).
    #[error("`{key}` is not a setting of {preset} (it would do nothing there); {preset} honours: {honoured}")]
    NotHonoured {
        /// The key given.
        key: String,
        /// The preset it was given to.
        preset: String,
        /// Every setting the preset honours, comma-separated.
        honoured: String,
    },
    /// A value that does not parse or lies outside the setting's domain.
    #[error("{key} = `{value}` is invalid: {why}; expected {expected}")]
    InvalidValue {
        /// The setting.
        key: String,
        /// The value given.
        value: String,
        /// What is wrong.
        why: String,
        /// What would be valid.
        expected: String,
    },
}

/// Why a reader could not be built, or why it stopped (sticky, like rustls).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PlanError {
    /// The query names something the table does not have, or a fraction is out of range.
    #[error("bad query: {0}")]
    Query(String),
    /// The strategy's settings do not combine into a valid reader.
    #[error("bad strategy: {0}")]
    Strategy(#[from] StrategyError),
    /// The coalescer refused the settings or a range list.
    #[error("coalescer: {0}")]
    Coalesce(#[from] coalescer::CoalesceError),
    /// The read-ahead machinery refused a setting or an event.
    #[error("read-ahead: {0}")]
    Readahead(#[from] readahead::ReadaheadError),
    /// The table's layout breaks an invariant the read path relies on.
    #[error("layout: {0}")]
    Layout(String),
    /// A read failed for good (the driver already retried).
    #[error("read {read_id} of {object} {range} failed: {reason}")]
    ReadFailed {
        /// The read's id.
        read_id: u64,
        /// What was read, e.g. `file 3`.
        object: String,
        /// The byte range.
        range: layout::ByteRange,
        /// The driver's reason.
        reason: String,
    },
    /// The driver sent an event the reader cannot accept (unknown id, wrong order).
    #[error("driver contract broken: {0}")]
    Contract(String),
}
