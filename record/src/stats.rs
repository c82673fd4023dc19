//! A column chunk's footer statistics as a typed min/max ([`layout::MinMax`]), kept only where
//! a reader could prune with them.
//!
//! The rules are the ones readers apply before trusting a footer's min/max (arrow-rs
//! `parquet::file::statistics`, Arrow C++ `parquet/statistics.cc`, DuckDB
//! `parquet_statistics.cpp`):
//! - the deprecated `min` / `max` fields (written before `min_value` / `max_value`, with signed
//!   byte order) are used only for numeric types, where that order was already right;
//! - a column whose sort order is undefined (INT96, intervals...) has none;
//! - a NaN bound (floats) makes the bounds useless: none;
//! - a string bound longer than [`limits::MAX_STAT_VALUE_BYTES`] is not recorded.

use layout::{MinMax, StatValue, TimeUnit};
use parquet::basic::{ConvertedType, LogicalType, SortOrder, TimeUnit as PqTimeUnit, Type};
use parquet::file::statistics::Statistics;
use parquet::schema::types::ColumnDescriptor;

/// The min/max of one chunk, typed by its column, or `None` when no reader could prune on it.
pub(crate) fn chunk_min_max(
    descr: &ColumnDescriptor,
    stats: Option<&Statistics>,
) -> Option<MinMax> {
    let stats = stats?;
    let order = descr.sort_order();
    if order == SortOrder::UNDEFINED {
        return None;
    }
    let bytes_like = matches!(
        descr.physical_type(),
        Type::BYTE_ARRAY | Type::FIXED_LEN_BYTE_ARRAY
    );
    if stats.is_min_max_deprecated() && bytes_like {
        return None;
    }
    let kind = Kind::of(descr, order)?;
    let (min, max) = match stats {
        Statistics::Int32(s) => (kind.int32(*s.min_opt()?)?, kind.int32(*s.max_opt()?)?),
        Statistics::Int64(s) => (kind.int(*s.min_opt()?)?, kind.int(*s.max_opt()?)?),
        Statistics::Float(s) => (float(*s.min_opt()? as f64)?, float(*s.max_opt()? as f64)?),
        Statistics::Double(s) => (float(*s.min_opt()?)?, float(*s.max_opt()?)?),
        Statistics::ByteArray(s) => (
            kind.bytes(s.min_opt()?.data())?,
            kind.bytes(s.max_opt()?.data())?,
        ),
        Statistics::FixedLenByteArray(s) => (
            kind.bytes(s.min_opt()?.data())?,
            kind.bytes(s.max_opt()?.data())?,
        ),
        Statistics::Boolean(_) | Statistics::Int96(_) => return None,
    };
    MinMax::new(min, max)
}

fn float(v: f64) -> Option<StatValue> {
    (!v.is_nan()).then(|| StatValue::float(v))
}

/// How a column's stored values read as [`StatValue`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Signed,
    Unsigned,
    Date,
    Decimal { scale: u8 },
    Timestamp(TimeUnit),
    Bytes,
}

impl Kind {
    fn of(descr: &ColumnDescriptor, order: SortOrder) -> Option<Kind> {
        let scale = || u8::try_from(descr.type_scale()).ok();
        Some(match descr.logical_type_ref() {
            Some(LogicalType::Decimal(d)) => Kind::Decimal {
                scale: u8::try_from(d.scale).ok()?,
            },
            Some(LogicalType::Date) => Kind::Date,
            Some(LogicalType::Timestamp(t)) => Kind::Timestamp(match t.unit {
                PqTimeUnit::MILLIS => TimeUnit::Millis,
                PqTimeUnit::MICROS => TimeUnit::Micros,
                PqTimeUnit::NANOS => TimeUnit::Nanos,
            }),
            _ => match descr.converted_type() {
                ConvertedType::DECIMAL => Kind::Decimal { scale: scale()? },
                ConvertedType::DATE => Kind::Date,
                ConvertedType::TIMESTAMP_MILLIS => Kind::Timestamp(TimeUnit::Millis),
                ConvertedType::TIMESTAMP_MICROS => Kind::Timestamp(TimeUnit::Micros),
                _ if matches!(
                    descr.physical_type(),
                    Type::BYTE_ARRAY | Type::FIXED_LEN_BYTE_ARRAY
                ) =>
                {
                    Kind::Bytes
                }
                _ if order == SortOrder::UNSIGNED => Kind::Unsigned,
                _ => Kind::Signed,
            },
        })
    }

    /// An INT32 value of this column: an unsigned one is stored in the i32's bits.
    fn int32(self, v: i32) -> Option<StatValue> {
        match self {
            Kind::Unsigned => Some(StatValue::UInt(u64::from(v as u32))),
            _ => self.int(i64::from(v)),
        }
    }

    /// An INT64 value of this column (or an INT32 one widened): an unsigned one is stored in
    /// the i64's bits.
    fn int(self, v: i64) -> Option<StatValue> {
        Some(match self {
            Kind::Signed => StatValue::Int(v),
            Kind::Unsigned => StatValue::UInt(v as u64),
            Kind::Date => StatValue::Date(i32::try_from(v).ok()?),
            Kind::Decimal { scale } => StatValue::Decimal {
                unscaled: v as i128,
                scale,
            },
            Kind::Timestamp(unit) => StatValue::Timestamp { ticks: v, unit },
            Kind::Bytes => return None,
        })
    }

    /// A BYTE_ARRAY / FIXED_LEN_BYTE_ARRAY value of this column: a decimal's big-endian
    /// two's-complement unscaled value, or bytes.
    fn bytes(self, b: &[u8]) -> Option<StatValue> {
        match self {
            Kind::Decimal { scale } => {
                if b.is_empty() || b.len() > 16 {
                    return None;
                }
                let fill = if b[0] & 0x80 != 0 { 0xff } else { 0 };
                let mut be = [fill; 16];
                be[16 - b.len()..].copy_from_slice(b);
                Some(StatValue::Decimal {
                    unscaled: i128::from_be_bytes(be),
                    scale,
                })
            }
            Kind::Bytes if b.len() <= limits::MAX_STAT_VALUE_BYTES => {
                Some(StatValue::Bytes(b.into()))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_from_bytes_sign_extend() {
        let k = Kind::Decimal { scale: 2 };
        assert_eq!(
            k.bytes(&[0xff, 0x38]),
            Some(StatValue::Decimal {
                unscaled: -200,
                scale: 2
            })
        );
        assert_eq!(
            k.bytes(&[0x01, 0x00]),
            Some(StatValue::Decimal {
                unscaled: 256,
                scale: 2
            })
        );
        assert_eq!(k.bytes(&[0; 17]), None);
    }

    #[test]
    fn unsigned_ints_read_their_bits_at_their_width() {
        assert_eq!(
            Kind::Unsigned.int32(-1),
            Some(StatValue::UInt(u32::MAX as u64))
        );
        // A UINT_64 in the top half is a negative i64: all 64 bits, not 32 (2^64 - 1 was
        // recorded as 2^32 - 1 until 2026-12-07, and pruning dropped row groups it matched).
        assert_eq!(Kind::Unsigned.int(-1), Some(StatValue::UInt(u64::MAX)));
        assert_eq!(Kind::Unsigned.int(-5), Some(StatValue::UInt(u64::MAX - 4)));
        assert_eq!(
            Kind::Unsigned.int(i64::from(i32::MIN)),
            Some(StatValue::UInt((i64::from(i32::MIN)) as u64))
        );
        assert_eq!(Kind::Signed.int32(-1), Some(StatValue::Int(-1)));
        assert_eq!(Kind::Date.int(1 << 40), None);
        assert_eq!(Kind::Bytes.int(1), None);
    }

    #[test]
    fn long_strings_are_not_recorded() {
        let long = vec![b'a'; limits::MAX_STAT_VALUE_BYTES + 1];
        assert_eq!(Kind::Bytes.bytes(&long), None);
        assert!(Kind::Bytes.bytes(b"MAIL").is_some());
    }
}
