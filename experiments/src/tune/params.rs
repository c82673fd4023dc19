//! `--param NAME=LOW..HIGH[:log]`: a setting to tune, its range, and how its values are rounded
//! so that a proposal is a value one would type (`1.5MiB`, not `1572871`).

use crate::sweep::values::Kind;

#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub low: f64,
    pub high: f64,
    pub log: bool,
    pub kind: Kind,
    /// Whole numbers only (thread counts).
    pub integer: bool,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ParamError {
    #[error("`--param {0}`: expected NAME=LOW..HIGH[:log], e.g. `input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:log`")]
    Form(String),
    #[error("`--param {text}`: {what}")]
    Bad { text: String, what: String },
}

/// Settings whose values are counts, not sizes or ratios.
const INTEGER_SETTINGS: &[&str] = &[
    "input_format_parquet_max_io_threads",
    "max_download_threads",
    "max_parsing_threads",
    "max_threads",
    "input_format_parquet_files_prefetch_ahead",
    "input_format_parquet_parallel_subgroups",
];

fn classify(v: &str) -> Option<(Kind, f64)> {
    let v = v.trim();
    if let Ok(n) = v.parse::<f64>() {
        return Some((Kind::Number, n));
    }
    if let Ok(b) = units::parse_bytes(v) {
        return Some((Kind::Bytes, b as f64));
    }
    None
}

pub fn parse_param(text: &str) -> Result<Param, ParamError> {
    let (name, range) = text
        .split_once('=')
        .ok_or_else(|| ParamError::Form(text.to_string()))?;
    let bad = |what: String| ParamError::Bad {
        text: text.to_string(),
        what,
    };
    let (range, log) = match range.rsplit_once(':') {
        Some((r, "log")) => (r, true),
        Some((_, other)) => {
            return Err(bad(format!(
                "unknown scale `{other}`; only `:log` is accepted"
            )))
        }
        None => (range, false),
    };
    let (lo, hi) = range
        .split_once("..")
        .ok_or_else(|| ParamError::Form(text.to_string()))?;
    let (k_lo, low) = classify(lo)
        .ok_or_else(|| bad(format!("`{lo}` is neither a number nor a size with a unit")))?;
    let (k_hi, high) = classify(hi)
        .ok_or_else(|| bad(format!("`{hi}` is neither a number nor a size with a unit")))?;
    let kind = match (k_lo, k_hi) {
        (a, b) if a == b => a,
        (Kind::Number, b) if low == 0.0 => b,
        (a, b) => {
            return Err(bad(format!(
                "`{lo}` and `{hi}` have different units ({a:?}, {b:?}); write both with a unit"
            )))
        }
    };
    let name = name.trim().to_string();
    if name.ends_with("_bytes") && kind != Kind::Bytes && !(low == 0.0 && high == 0.0) {
        return Err(bad(format!(
            "`{name}` is a size: write the range with units, e.g. `64KiB..16MiB`"
        )));
    }
    if !(high > low) {
        return Err(bad(format!(
            "the range is empty or runs backwards ({lo} .. {hi})"
        )));
    }
    if log && low <= 0.0 {
        return Err(bad("a `:log` range must start above 0".into()));
    }
    if low < 0.0 {
        return Err(bad("values cannot be negative".into()));
    }
    let integer = INTEGER_SETTINGS.contains(&name.as_str());
    Ok(Param {
        name,
        low,
        high,
        log,
        kind,
        integer,
    })
}

impl Param {
    /// Maps [0, 1] onto the range (log-scaled when asked), then rounds.
    pub fn value_at(&self, u: f64) -> f64 {
        let u = u.clamp(0.0, 1.0);
        let raw = if self.log {
            (self.low.ln() + u * (self.high.ln() - self.low.ln())).exp()
        } else {
            self.low + u * (self.high - self.low)
        };
        self.round(raw).clamp(self.low, self.high)
    }

    /// Inverse of `value_at` (before rounding), for starting points such as the defaults.
    pub fn position_of(&self, v: f64) -> f64 {
        let v = v.clamp(self.low, self.high);
        if self.log {
            (v.ln() - self.low.ln()) / (self.high.ln() - self.low.ln())
        } else {
            (v - self.low) / (self.high - self.low)
        }
    }

    /// Sizes to 3 significant binary digits (8 steps per doubling, at least 1 KiB when the range
    /// allows), counts to whole numbers, ratios to 3 significant digits.
    pub fn round(&self, v: f64) -> f64 {
        if self.integer {
            return v.round();
        }
        match self.kind {
            Kind::Bytes => {
                if v < 1.0 {
                    return 0.0;
                }
                let step = 2f64.powi((v.log2().floor() as i32 - 3).max(0));
                let step = if self.high >= 16.0 * 1024.0 {
                    step.max(1024.0)
                } else {
                    step
                };
                (v / step).round() * step
            }
            _ => {
                if v == 0.0 {
                    return 0.0;
                }
                let mag = 10f64.powi(v.abs().log10().floor() as i32 - 2);
                (v / mag).round() * mag
            }
        }
    }

    /// The value as a setting takes it (`1.5MiB`, `8`).
    pub fn text(&self, v: f64) -> String {
        match self.kind {
            Kind::Bytes => units::format_bytes(v.round() as u64),
            _ if self.integer => format!("{}", v.round() as i64),
            _ => {
                let s = format!("{v:.3}");
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_log_byte_ranges() {
        let p = parse_param("input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:log").unwrap();
        assert!(p.log);
        assert_eq!(p.kind, Kind::Bytes);
        assert_eq!(p.value_at(0.0), 65536.0);
        assert_eq!(p.value_at(1.0), 16.0 * 1024.0 * 1024.0);
        // Rounded to a value one would type.
        let mid = p.value_at(0.5);
        assert_eq!(p.text(mid), "1MiB");
        assert!((p.position_of(1048576.0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn integers_and_ratios() {
        let p = parse_param("input_format_parquet_max_io_threads=1..64:log").unwrap();
        assert!(p.integer);
        assert_eq!(p.value_at(0.5), 8.0);
        let r = parse_param("input_format_parquet_max_read_amplification=1..32").unwrap();
        assert_eq!(r.text(r.round(7.777)), "7.78");
    }

    #[test]
    fn bad_ranges_are_errors() {
        assert!(parse_param("x").is_err());
        assert!(parse_param("gap=16MiB..64KiB").is_err());
        assert!(parse_param("gap=0..16MiB:log").is_err());
        assert!(parse_param("gap=1..16MiB").is_err());
        assert!(parse_param("input_format_parquet_coalesce_gap_bytes=1..16").is_err());
        assert!(parse_param("gap=64KiB..16MiB:sqrt").is_err());
    }
}
