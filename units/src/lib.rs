//! Quantities with units, as users write them in scenarios and on the command line:
//! sizes (`2MiB`, `256 KiB`, `1.5GB`), durations (`30ms`, `5us`, `1.2s`), bandwidths
//! (`55MiB/s`, `100Gbit/s`), and their display in the same units.
//!
//! A bare number is refused for sizes, durations and bandwidths (a silent unit is the kind of
//! default that costs a day), except `0`, which needs no unit.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("`{input}` has no unit; write it with one, e.g. {example}")]
    MissingUnit {
        input: String,
        example: &'static str,
    },
    #[error("`{input}`: unknown unit `{unit}`; expected one of {expected}")]
    UnknownUnit {
        input: String,
        unit: String,
        expected: &'static str,
    },
    #[error("`{input}` is not a number with a unit (e.g. {example})")]
    NotANumber {
        input: String,
        example: &'static str,
    },
    #[error("`{input}` is negative; {what} cannot be negative")]
    Negative { input: String, what: &'static str },
    #[error("`{input}` is too large")]
    Overflow { input: String },
    #[error("`{input}` is not a whole number ({what} is whole)")]
    NotWhole { input: String, what: &'static str },
}

const SIZE_UNITS: &str =
    "B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)";
const TIME_UNITS: &str = "ns, us, ms, s, min, h";
const BW_UNITS: &str = "a size per second (e.g. MiB/s, GB/s) or bits per second (Mbit/s, Gbit/s)";

/// Splits `"  2.5 MiB "` into (2.5, "MiB"). The number may carry a sign and a decimal point.
fn split_number(input: &str, example: &'static str) -> Result<(f64, String), UnitError> {
    let s = input.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    let value: f64 = num.parse().map_err(|_| UnitError::NotANumber {
        input: input.to_string(),
        example,
    })?;
    if !value.is_finite() {
        return Err(UnitError::NotANumber {
            input: input.to_string(),
            example,
        });
    }
    Ok((value, unit.trim().to_string()))
}

fn size_multiplier(unit: &str) -> Option<f64> {
    Some(match unit {
        "B" | "b" | "bytes" | "byte" => 1.0,
        "KB" | "kB" | "kb" => 1e3,
        "MB" | "mb" => 1e6,
        "GB" | "gb" => 1e9,
        "TB" | "tb" => 1e12,
        "KiB" | "kib" | "Ki" | "K" | "k" => 1024.0,
        "MiB" | "mib" | "Mi" | "M" => 1024.0 * 1024.0,
        "GiB" | "gib" | "Gi" | "G" => 1024.0 * 1024.0 * 1024.0,
        "TiB" | "tib" | "Ti" | "T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

fn to_u64(value: f64, input: &str, what: &'static str) -> Result<u64, UnitError> {
    if value < 0.0 {
        return Err(UnitError::Negative {
            input: input.to_string(),
            what,
        });
    }
    if value > u64::MAX as f64 {
        return Err(UnitError::Overflow {
            input: input.to_string(),
        });
    }
    Ok(value.round() as u64)
}

/// Parses a byte size such as `2MiB`, `256 KiB`, `1.5GB` or `0`.
pub fn parse_bytes(input: &str) -> Result<u64, UnitError> {
    const EX: &str = "`2MiB` or `256KiB`";
    let (value, unit) = split_number(input, EX)?;
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(0);
        }
        return Err(UnitError::MissingUnit {
            input: input.to_string(),
            example: EX,
        });
    }
    let m = size_multiplier(&unit).ok_or_else(|| UnitError::UnknownUnit {
        input: input.to_string(),
        unit: unit.clone(),
        expected: SIZE_UNITS,
    })?;
    // A whole number of a whole unit is exact in integers (f64 is not, above 2^53).
    let number = input.trim().trim_end_matches(unit.as_str()).trim();
    if let Ok(n) = number.replace('_', "").parse::<u64>() {
        return n.checked_mul(m as u64).ok_or_else(|| UnitError::Overflow {
            input: input.to_string(),
        });
    }
    to_u64(value * m, input, "a size")
}

/// Parses a duration such as `30ms`, `5us`, `1.2s` into nanoseconds.
pub fn parse_duration_ns(input: &str) -> Result<u64, UnitError> {
    const EX: &str = "`30ms` or `1.5s`";
    let (value, unit) = split_number(input, EX)?;
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(0);
        }
        return Err(UnitError::MissingUnit {
            input: input.to_string(),
            example: EX,
        });
    }
    let m = match unit.as_str() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "sec" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                expected: TIME_UNITS,
            })
        }
    };
    to_u64(value * m, input, "a duration")
}

/// Parses a bandwidth such as `55MiB/s`, `1.2GB/s` or `100Gbit/s` into bytes per second.
pub fn parse_bandwidth(input: &str) -> Result<f64, UnitError> {
    const EX: &str = "`55MiB/s` or `100Gbit/s`";
    let (value, unit) = split_number(input, EX)?;
    if unit.is_empty() {
        if value == 0.0 {
            return Ok(0.0);
        }
        return Err(UnitError::MissingUnit {
            input: input.to_string(),
            example: EX,
        });
    }
    if value < 0.0 {
        return Err(UnitError::Negative {
            input: input.to_string(),
            what: "a bandwidth",
        });
    }
    let unknown = || UnitError::UnknownUnit {
        input: input.to_string(),
        unit: unit.clone(),
        expected: BW_UNITS,
    };
    let per = unit
        .strip_suffix("/s")
        .or_else(|| unit.strip_suffix("ps"))
        .ok_or_else(unknown)?;
    let bits = match per {
        "bit" | "b" => Some(1.0),
        "Kbit" | "kbit" | "Kb" | "kb" => Some(1e3),
        "Mbit" | "mbit" | "Mb" => Some(1e6),
        "Gbit" | "gbit" | "Gb" => Some(1e9),
        "Tbit" | "tbit" | "Tb" => Some(1e12),
        _ => None,
    };
    if let Some(b) = bits {
        return Ok(value * b / 8.0);
    }
    let m = size_multiplier(per).ok_or_else(unknown)?;
    Ok(value * m)
}

/// Parses a plain count with an optional metric suffix: `17554`, `10k`, `2M`.
pub fn parse_count(input: &str) -> Result<u64, UnitError> {
    const EX: &str = "`500` or `10k`";
    let (value, unit) = split_number(input, EX)?;
    let m = match unit.as_str() {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        _ => {
            return Err(UnitError::UnknownUnit {
                input: input.to_string(),
                unit,
                expected: "none, k, M or G",
            })
        }
    };
    let n = value * m;
    // A count is whole: `1.5` threads was rounded to 2 without a word. (Relative slack for
    // a decimal times a power of ten: `1.1k` is 1100.0000000000002.)
    if (n - n.round()).abs() > 1e-9 * n.abs().max(1.0) {
        return Err(UnitError::NotWhole {
            input: input.to_string(),
            what: "a count",
        });
    }
    to_u64(n, input, "a count")
}

/// Formats bytes in binary units with up to 3 significant decimals: `2MiB`, `1.5GiB`, `640B`.
pub fn format_bytes(bytes: u64) -> String {
    format_bytes_f(bytes as f64)
}

pub fn format_bytes_f(bytes: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{}{}", trim_float(v), UNITS[i])
}

/// Formats nanoseconds as the largest unit that keeps the value at least 1: `27ms`, `1.5s`.
pub fn format_duration_ns(ns: u64) -> String {
    format_duration_f(ns as f64)
}

pub fn format_duration_f(ns: f64) -> String {
    let (v, u) = if ns.abs() >= 1e9 {
        (ns / 1e9, "s")
    } else if ns.abs() >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns.abs() >= 1e3 {
        (ns / 1e3, "us")
    } else {
        (ns, "ns")
    };
    format!("{}{}", trim_float(v), u)
}

/// Formats bytes per second: `55MiB/s`.
pub fn format_bandwidth(bytes_per_s: f64) -> String {
    format!("{}/s", format_bytes_f(bytes_per_s))
}

fn trim_float(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{:.3}", v);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

macro_rules! quantity {
    ($(#[$doc:meta])* $name:ident, $inner:ty, $parse:path, $format:expr, $exact:expr, $expecting:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
        pub struct $name(pub $inner);

        impl std::str::FromStr for $name {
            type Err = UnitError;
            fn from_str(s: &str) -> Result<Self, UnitError> {
                $parse(s).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&($format)(self.0))
            }
        }

        /// Written as it is shown (`2.861MiB`) when that reads back as the same value, else in
        /// the base unit (`3000000B`): what is written is what was meant, exactly (a shown
        /// value has 3 decimals, and 3,000,000 bytes read back as 2,999,976).
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let shown = self.to_string();
                if $parse(&shown).ok() == Some(self.0) {
                    s.serialize_str(&shown)
                } else {
                    s.serialize_str(&($exact)(self.0))
                }
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        v.parse().map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        self.visit_str(&v.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

quantity!(
    /// A byte count written with a unit (`2MiB`).
    Bytes, u64, parse_bytes, format_bytes, |n: u64| format!("{n}B"), "a size with a unit, e.g. `2MiB`"
);
quantity!(
    /// A duration in nanoseconds written with a unit (`30ms`).
    Duration, u64, parse_duration_ns, format_duration_ns, |n: u64| format!("{n}ns"), "a duration with a unit, e.g. `30ms`"
);
quantity!(
    /// A bandwidth in bytes per second written with a unit (`55MiB/s`, `100Gbit/s`).
    Bandwidth, f64, parse_bandwidth, format_bandwidth, |v: f64| format!("{v}B/s"), "a bandwidth with a unit, e.g. `55MiB/s`"
);

impl Bytes {
    pub fn get(self) -> u64 {
        self.0
    }
}
impl Duration {
    pub fn ns(self) -> u64 {
        self.0
    }
}
impl Bandwidth {
    pub fn bytes_per_s(self) -> f64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("2MiB").unwrap(), 2 << 20);
        assert_eq!(parse_bytes("256 KiB").unwrap(), 256 << 10);
        assert_eq!(parse_bytes("1.5GB").unwrap(), 1_500_000_000);
        assert_eq!(parse_bytes("0").unwrap(), 0);
        assert_eq!(parse_bytes("640B").unwrap(), 640);
        assert!(matches!(
            parse_bytes("2048"),
            Err(UnitError::MissingUnit { .. })
        ));
        assert!(matches!(
            parse_bytes("2 parsecs"),
            Err(UnitError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_bytes("-1MiB"),
            Err(UnitError::Negative { .. })
        ));
        assert!(matches!(
            parse_bytes("MiB"),
            Err(UnitError::NotANumber { .. })
        ));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("30ms").unwrap(), 30_000_000);
        assert_eq!(parse_duration_ns("1.2s").unwrap(), 1_200_000_000);
        assert_eq!(parse_duration_ns("5us").unwrap(), 5_000);
        assert!(parse_duration_ns("30").is_err());
        assert!(parse_duration_ns("-5ms").is_err());
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("55MiB/s").unwrap(), 55.0 * 1024.0 * 1024.0);
        assert_eq!(parse_bandwidth("100Gbit/s").unwrap(), 12.5e9);
        assert!(parse_bandwidth("55MiB").is_err());
        assert!(parse_bandwidth("55").is_err());
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("10k").unwrap(), 10_000);
        assert_eq!(parse_count("17554").unwrap(), 17_554);
        assert!(parse_count("10 apples").is_err());
        assert_eq!(parse_count("1.1k").unwrap(), 1_100);
        assert_eq!(parse_count("2.5M").unwrap(), 2_500_000);
        for fractional in ["1.5", "0.5", "1.0005k"] {
            let e = parse_count(fractional).unwrap_err().to_string();
            assert!(e.contains("not a whole number"), "{fractional}: {e}");
        }
    }

    #[test]
    fn written_form_is_shown_form_when_exact() {
        assert_eq!(serde_json::to_string(&Bytes(2 << 20)).unwrap(), "\"2MiB\"");
        assert_eq!(
            serde_json::to_string(&Bytes(3_000_000)).unwrap(),
            "\"3000000B\""
        );
        assert_eq!(
            serde_json::to_string(&Duration(30_000_000)).unwrap(),
            "\"30ms\""
        );
        assert_eq!(
            serde_json::to_string(&Duration(27_123_456)).unwrap(),
            "\"27123456ns\""
        );
    }

    #[test]
    fn display() {
        assert_eq!(format_bytes(2 << 20), "2MiB");
        assert_eq!(format_bytes(1536), "1.5KiB");
        assert_eq!(format_duration_ns(27_000_000), "27ms");
        assert_eq!(format_duration_ns(1_500_000_000), "1.5s");
        assert_eq!(Bytes(4 << 20).to_string(), "4MiB");
    }

    #[test]
    fn serde_yaml_quantities() {
        #[derive(Deserialize, Debug)]
        struct S {
            gap: Bytes,
            latency: Duration,
            bw: Bandwidth,
        }
        let s: S = serde_saphyr::from_str("gap: 2MiB\nlatency: 30ms\nbw: 55MiB/s\n").unwrap();
        assert_eq!(s.gap.0, 2 << 20);
        assert_eq!(s.latency.0, 30_000_000);
        assert_eq!(s.bw.0, 55.0 * 1024.0 * 1024.0);
        let err =
            serde_saphyr::from_str::<S>("gap: 2048\nlatency: 30ms\nbw: 1MiB/s\n").unwrap_err();
        assert!(err.to_string().contains("no unit"), "{err}");
    }

    proptest! {
        #[test]
        fn serialized_quantities_read_back_exactly(v in 0u64..(1u64 << 50), ns in 0u64..(1u64 << 50)) {
            // Unlike the shown form, the written form is exact: a spec written and read again
            // is the spec (3,000,000 bytes once came back as 2,999,976).
            #[derive(Serialize, Deserialize, Debug, PartialEq)]
            struct S {
                size: Bytes,
                time: Duration,
            }
            let s = S { size: Bytes(v), time: Duration(ns) };
            let text = serde_json::to_string(&s).unwrap();
            let back: S = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(back, s, "{}", text);
        }

        #[test]
        fn bytes_round_trip(v in 0u64..(1u64 << 50)) {
            // Display keeps 3 decimals, so the round trip is exact to 0.1% of the value.
            let back = parse_bytes(&format_bytes(v)).unwrap();
            let tol = (v as f64 * 1e-3).max(1.0);
            prop_assert!((back as f64 - v as f64).abs() <= tol, "{} -> {} -> {}", v, format_bytes(v), back);
        }

        #[test]
        fn never_panics(s in ".{0,40}") {
            let _ = parse_bytes(&s);
            let _ = parse_duration_ns(&s);
            let _ = parse_bandwidth(&s);
            let _ = parse_count(&s);
        }
    }
}
