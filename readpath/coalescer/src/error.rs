//! Typed errors: each says what was wrong and what would be right.

use layout::ByteRange;
use thiserror::Error;

/// Why a coalescing request was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CoalesceError {
    /// No ranges were given.
    #[error("no needed ranges were given; pass at least one non-empty range")]
    EmptyInput,
    /// More ranges than a `u32` index can name.
    #[error("{count} needed ranges were given; at most {max} fit a u32 index")]
    TooManyRanges {
        /// How many were given.
        count: usize,
        /// The most accepted.
        max: usize,
    },
    /// A range of zero (or negative) length.
    #[error("needed range {index} {range} is empty; every range must have start < end")]
    EmptyRange {
        /// Position in the input slice.
        index: usize,
        /// The offending range.
        range: ByteRange,
    },
    /// A range starts before the previous one.
    #[error(
        "needed range {index} {range} starts before range {} {previous}; sort ranges by start",
        index - 1
    )]
    Unsorted {
        /// Position in the input slice.
        index: usize,
        /// The range before it.
        previous: ByteRange,
        /// The offending range.
        range: ByteRange,
    },
    /// A range overlaps the previous one.
    #[error(
        "needed range {index} {range} overlaps range {} {previous}; ranges must not overlap \
         (merge them first)",
        index - 1
    )]
    Overlapping {
        /// Position in the input slice.
        index: usize,
        /// The range before it.
        previous: ByteRange,
        /// The offending range.
        range: ByteRange,
    },
    /// A needed-range index outside the registered ranges.
    #[error("needed range index {index} is out of bounds: {len} ranges are registered")]
    NoSuchRange {
        /// The index asked for.
        index: u32,
        /// How many ranges exist.
        len: usize,
    },
    /// A setting outside its valid domain.
    #[error("preset {preset}: {setting} = {value} is invalid; expected {expected}")]
    InvalidSetting {
        /// The preset's name.
        preset: &'static str,
        /// The setting's name.
        setting: &'static str,
        /// The value given, as text.
        value: String,
        /// What would be valid.
        expected: &'static str,
    },
    /// A setting name the policy does not have.
    #[error("preset {preset} has no setting `{key}`; did you mean `{nearest}`? Settings: {known}")]
    UnknownSetting {
        /// The preset's family name.
        preset: &'static str,
        /// The key given.
        key: String,
        /// The nearest valid key.
        nearest: String,
        /// Every valid key, comma-separated.
        known: String,
    },
    /// A setting value that does not parse.
    #[error("preset {preset}: `{value}` is not a valid value for {setting}: {reason}")]
    BadValue {
        /// The preset's family name.
        preset: &'static str,
        /// The setting's field name.
        setting: &'static str,
        /// The value given.
        value: String,
        /// What is wrong and what would be right.
        reason: String,
    },
    /// A lazy coalescer was asked for with a policy that only coalesces in batch.
    #[error("preset {preset} coalesces in batch only; lazy coalescing needs clickhouse-base")]
    NotLazy {
        /// The preset's family name.
        preset: &'static str,
    },
    /// A preset name that does not exist.
    #[error("unknown coalescing preset {name:?}; known presets: {known}")]
    UnknownPreset {
        /// The name given.
        name: String,
        /// Every valid name, comma-separated.
        known: String,
    },
}
