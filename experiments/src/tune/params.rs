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

/// Parses `NAME=LOW..HIGH[:log]`. `NAME` must be a setting of the registry
/// (`planner::settings`); its type decides how the ends parse (sizes need units), whether
/// values are whole numbers, and how proposals are rounded.
pub fn parse_param(text: &str) -> Result<Param, ParamError> {
    let (name, range) = text
        .split_once('=')
        .ok_or_else(|| ParamError::Form(text.to_string()))?;
    let bad = |what: String| ParamError::Bad {
        text: text.to_string(),
        what,
    };
    let name = name.trim().to_string();
    let setting = planner::settings::setting(&name).ok_or_else(|| {
        let known = planner::settings::SETTINGS.iter().map(|s| s.name);
        match scenario::nearest(&name, known) {
            Some(best) => bad(format!("no setting `{name}` (did you mean `{best}`?)")),
            None => bad(format!(
                "no setting `{name}`; `sim settings PRESET` lists the settings a preset honours"
            )),
        }
    })?;
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
    let (kind, integer) = match setting.kind {
        planner::settings::Kind::Bytes { .. } => (Kind::Bytes, false),
        planner::settings::Kind::Count { .. } => (Kind::Number, true),
        planner::settings::Kind::Ratio { .. } => (Kind::Number, false),
        planner::settings::Kind::Bool | planner::settings::Kind::Choice(_) => {
            return Err(bad(format!(
                "`{name}` is a {}, not a range to search; compare its values with `sim sweep --vary`",
                setting.kind.describe()
            )))
        }
    };
    let end = |t: &str| -> Result<f64, ParamError> {
        setting.kind.parse(t).map(|v| v.number()).map_err(|e| {
            bad(format!(
                "`{}`: {}; expected {}",
                t.trim(),
                e.why,
                e.expected
            ))
        })
    };
    let (low, high) = (end(lo)?, end(hi)?);
    if !(high > low) {
        return Err(bad(format!(
            "the range is empty or runs backwards ({lo} .. {hi})"
        )));
    }
    if log && low <= 0.0 {
        return Err(bad("a `:log` range must start above 0".into()));
    }
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
        let e = parse_param("input_format_parquet_coalesce_gap_byte=64KiB..1MiB")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("did you mean `input_format_parquet_coalesce_gap_bytes`"),
            "{e}"
        );
        let e = parse_param("r5_issue_queue=0..1").unwrap_err().to_string();
        assert!(e.contains("sweep"), "a switch is not a range: {e}");
        let e = parse_param("max_threads=0..8").unwrap_err().to_string();
        assert!(
            e.contains("at least 1"),
            "the setting's domain applies: {e}"
        );
    }
}
