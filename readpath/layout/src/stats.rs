//! Row-group statistics as a reader prunes with them: a column chunk's minimum and maximum,
//! typed by how the file says to order them.
//!
//! The recorder takes them from the footer's `ColumnMetaData.statistics` (`min_value` and
//! `max_value`; the deprecated `min` / `max` only for numeric types, whose old sort order was
//! already right). Each value carries its kind (date, decimal and its scale, timestamp and its
//! unit...) so that a predicate's literal can be converted to it once, where the predicate is
//! resolved. A chunk without statistics (the writer wrote none, a value was NaN, or a byte string
//! was longer than [`limits::MAX_STAT_VALUE_BYTES`]) prunes nothing: readers treat it the same way.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// How a timestamp's integer counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TimeUnit {
    Millis,
    Micros,
    Nanos,
}

impl TimeUnit {
    /// Ticks of this unit in one second.
    pub const fn per_second(self) -> i64 {
        match self {
            TimeUnit::Millis => 1_000,
            TimeUnit::Micros => 1_000_000,
            TimeUnit::Nanos => 1_000_000_000,
        }
    }
    pub(crate) fn code(self) -> u8 {
        match self {
            TimeUnit::Millis => 0,
            TimeUnit::Micros => 1,
            TimeUnit::Nanos => 2,
        }
    }
    pub(crate) fn from_code(c: u8) -> Option<TimeUnit> {
        Some(match c {
            0 => TimeUnit::Millis,
            1 => TimeUnit::Micros,
            2 => TimeUnit::Nanos,
            _ => return None,
        })
    }
}

/// One bound of a column chunk's values. Two values compare only when they are of one kind
/// (and one scale or unit); [`StatValue::compare`] says `None` otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StatValue {
    /// Signed integers (INT32, INT64 without an unsigned annotation).
    Int(i64),
    /// Unsigned integers (`INT(bits, false)`).
    UInt(u64),
    /// FLOAT and DOUBLE, by their bits (never NaN: the recorder drops such statistics).
    Float { bits: u64 },
    /// Days since 1970-01-01 (`DATE`).
    Date(i32),
    /// `DECIMAL(_, scale)`: the value is `unscaled / 10^scale`.
    Decimal { unscaled: i128, scale: u8 },
    /// `TIMESTAMP`: ticks of `unit` since the epoch (UTC or local, as the writer meant it).
    Timestamp { ticks: i64, unit: TimeUnit },
    /// BYTE_ARRAY and FIXED_LEN_BYTE_ARRAY (strings included), ordered as unsigned bytes.
    Bytes(Box<[u8]>),
}

impl StatValue {
    pub fn float(v: f64) -> StatValue {
        StatValue::Float { bits: v.to_bits() }
    }

    /// The order of two values of one kind; `None` for values of different kinds (or scales, or
    /// units), which a predicate never prunes on.
    pub fn compare(&self, other: &StatValue) -> Option<Ordering> {
        use StatValue::*;
        match (self, other) {
            (Int(a), Int(b)) => Some(a.cmp(b)),
            (UInt(a), UInt(b)) => Some(a.cmp(b)),
            (Float { bits: a }, Float { bits: b }) => {
                f64::from_bits(*a).partial_cmp(&f64::from_bits(*b))
            }
            (Date(a), Date(b)) => Some(a.cmp(b)),
            (
                Decimal {
                    unscaled: a,
                    scale: sa,
                },
                Decimal {
                    unscaled: b,
                    scale: sb,
                },
            ) if sa == sb => Some(a.cmp(b)),
            (Timestamp { ticks: a, unit: ua }, Timestamp { ticks: b, unit: ub }) if ua == ub => {
                Some(a.cmp(b))
            }
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// What kind of value this is, for messages (`date`, `decimal(scale 2)`, ...).
    pub fn kind(&self) -> String {
        match self {
            StatValue::Int(_) => "integer".into(),
            StatValue::UInt(_) => "unsigned integer".into(),
            StatValue::Float { .. } => "floating point".into(),
            StatValue::Date(_) => "date".into(),
            StatValue::Decimal { scale, .. } => format!("decimal (scale {scale})"),
            StatValue::Timestamp { unit, .. } => format!("timestamp ({unit:?})"),
            StatValue::Bytes(_) => "string or bytes".into(),
        }
    }

    /// Bytes this value takes in a byte string, if it is one.
    pub fn byte_len(&self) -> usize {
        match self {
            StatValue::Bytes(b) => b.len(),
            _ => 0,
        }
    }
}

/// The smallest and largest value of a column chunk. Invariant (checked by
/// [`MinMax::new`]): both of one kind, `min <= max`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MinMax {
    pub min: StatValue,
    pub max: StatValue,
}

impl MinMax {
    /// `None` when the two are of different kinds or `min > max` (a writer's bug: such
    /// statistics cannot be trusted to prune).
    pub fn new(min: StatValue, max: StatValue) -> Option<MinMax> {
        match min.compare(&max)? {
            Ordering::Greater => None,
            _ => Some(MinMax { min, max }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_one_kind_order_and_others_do_not() {
        assert_eq!(
            StatValue::Int(-3).compare(&StatValue::Int(2)),
            Some(Ordering::Less)
        );
        let d = |u| StatValue::Decimal {
            unscaled: u,
            scale: 2,
        };
        assert_eq!(d(5).compare(&d(7)), Some(Ordering::Less));
        let other_scale = StatValue::Decimal {
            unscaled: 5,
            scale: 3,
        };
        assert_eq!(d(5).compare(&other_scale), None);
        assert_eq!(StatValue::Int(1).compare(&StatValue::UInt(1)), None);
        let b = |s: &str| StatValue::Bytes(s.as_bytes().into());
        // Unsigned byte order: 0xC3 (a UTF-8 lead byte) sorts after ASCII.
        assert_eq!(b("z").compare(&b("\u{e9}")), Some(Ordering::Less));
        assert_eq!(
            StatValue::float(-0.5).compare(&StatValue::float(2.0)),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn min_max_refuses_inverted_or_mixed_bounds() {
        assert!(MinMax::new(StatValue::Int(1), StatValue::Int(1)).is_some());
        assert!(MinMax::new(StatValue::Int(2), StatValue::Int(1)).is_none());
        assert!(MinMax::new(StatValue::Int(1), StatValue::Date(1)).is_none());
        assert!(MinMax::new(StatValue::float(f64::NAN), StatValue::float(1.0)).is_none());
    }
}
