//! `--vary NAME=VALUES`: a list (`64KiB,1MiB,4MiB`) or a range with a step rule
//! (`64KiB..16MiB:x2` multiplies, `0..1MiB:+128KiB` adds). Endpoints and steps carry the same
//! kind of unit (sizes, durations, bandwidths or plain numbers); the end is inclusive.

use units::UnitError;

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    /// Values as override text (with units), in sweep order.
    pub values: Vec<String>,
    /// The same values as numbers in base units (bytes, ns, bytes/s or plain), for plots.
    pub numeric: Vec<f64>,
    pub kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Bytes,
    Duration,
    Bandwidth,
    Number,
    Text,
}

impl Kind {
    pub fn unit_label(self) -> &'static str {
        match self {
            Kind::Bytes => "bytes",
            Kind::Duration => "ns",
            Kind::Bandwidth => "bytes/s",
            Kind::Number | Kind::Text => "",
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum VaryError {
    #[error("`--vary {0}`: expected NAME=VALUES, e.g. `input_format_parquet_coalesce_gap_bytes=64KiB..16MiB:x2`")]
    NoEquals(String),
    #[error("`--vary {0}`: the list of values is empty")]
    Empty(String),
    #[error("`--vary {text}`: {what}")]
    Bad { text: String, what: String },
    #[error("`--vary {text}`: the range would have {count} points; at most {max} per axis")]
    TooMany {
        text: String,
        count: usize,
        max: usize,
    },
}

use limits::MAX_POINTS_PER_AXIS;

fn classify(v: &str) -> Option<(Kind, f64)> {
    let v = v.trim();
    if let Ok(n) = v.parse::<f64>() {
        return Some((Kind::Number, n));
    }
    if let Ok(b) = units::parse_bytes(v) {
        return Some((Kind::Bytes, b as f64));
    }
    if let Ok(d) = units::parse_duration_ns(v) {
        return Some((Kind::Duration, d as f64));
    }
    if let Ok(bw) = units::parse_bandwidth(v) {
        return Some((Kind::Bandwidth, bw));
    }
    None
}

fn format(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Bytes => units::format_bytes(v.round() as u64),
        Kind::Duration => units::format_duration_ns(v.round() as u64),
        Kind::Bandwidth => units::format_bandwidth(v),
        Kind::Number | Kind::Text => {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                format!("{}", v as i64)
            } else {
                format!("{v}")
            }
        }
    }
}

/// Parses one `--vary` argument.
pub fn parse_vary(text: &str) -> Result<Axis, VaryError> {
    let (name, values) = text
        .split_once('=')
        .ok_or_else(|| VaryError::NoEquals(text.to_string()))?;
    parse_values(name.trim(), values.trim(), text)
}

/// Parses the values of an axis called `name` (`text` is quoted in errors).
pub fn parse_values(name: &str, values: &str, text: &str) -> Result<Axis, VaryError> {
    let bad = |what: String| VaryError::Bad {
        text: text.to_string(),
        what,
    };
    if name.is_empty() {
        return Err(bad("the name is empty".into()));
    }
    if values.is_empty() {
        return Err(VaryError::Empty(text.to_string()));
    }
    if let Some((lo, rest)) = values.split_once("..") {
        let (hi, step) = rest.split_once(':').ok_or_else(|| {
            bad("a range needs a step rule: `LOW..HIGH:xFACTOR` or `LOW..HIGH:+STEP`".into())
        })?;
        let (k_lo, lo_v) = classify(lo).ok_or_else(|| bad(unit_hint(lo)))?;
        let (k_hi, hi_v) = classify(hi).ok_or_else(|| bad(unit_hint(hi)))?;
        // `0` has no unit: it takes the other end's.
        let kind = match (k_lo, k_hi) {
            (a, b) if a == b => a,
            (Kind::Number, b) if lo_v == 0.0 => b,
            (a, Kind::Number) if hi_v == 0.0 => a,
            (a, b) => {
                return Err(bad(format!(
                    "the ends `{lo}` and `{hi}` have different units ({a:?} and {b:?}); write both with a unit, e.g. `64KiB..16MiB:x2`"
                )))
            }
        };
        if hi_v < lo_v {
            return Err(bad(format!("the range runs backwards ({lo} > {hi})")));
        }
        let mut out = Vec::new();
        if let Some(f) = step.strip_prefix('x') {
            let factor: f64 = f
                .trim()
                .parse()
                .map_err(|_| bad(format!("`x{f}` is not a factor; write e.g. `x2`")))?;
            if !(factor > 1.0) {
                return Err(bad(format!("the factor must be above 1, not {factor}")));
            }
            if lo_v <= 0.0 {
                return Err(bad(
                    "a multiplicative range must start above 0; use `+STEP` or list 0 separately"
                        .into(),
                ));
            }
            let mut v = lo_v;
            while v <= hi_v * (1.0 + 1e-9) {
                out.push(v);
                if out.len() > MAX_POINTS_PER_AXIS {
                    return Err(VaryError::TooMany {
                        text: text.into(),
                        count: out.len(),
                        max: MAX_POINTS_PER_AXIS,
                    });
                }
                v *= factor;
            }
        } else if let Some(s) = step.strip_prefix('+') {
            let (k_s, s_v) = classify(s).ok_or_else(|| bad(unit_hint(s)))?;
            if k_s != kind && !(k_s == Kind::Number && kind == Kind::Number) {
                return Err(bad(format!(
                    "the step `{s}` must have the same unit as the range"
                )));
            }
            if !(s_v > 0.0) {
                return Err(bad("the step must be above 0".into()));
            }
            // `as` saturates a huge (or infinite) span; the `+ 1` must too (it overflowed).
            let count = (((hi_v - lo_v) / s_v).floor() as usize).saturating_add(1);
            if count > MAX_POINTS_PER_AXIS {
                return Err(VaryError::TooMany {
                    text: text.into(),
                    count,
                    max: MAX_POINTS_PER_AXIS,
                });
            }
            out.extend((0..count).map(|i| lo_v + i as f64 * s_v));
        } else {
            return Err(bad(format!(
                "unknown step rule `{step}`: use `xFACTOR` or `+STEP`"
            )));
        }
        let values: Vec<String> = out.iter().map(|v| format(kind, *v)).collect();
        let numeric = values
            .iter()
            .map(|v| classify(v).map(|c| c.1).unwrap_or(f64::NAN))
            .collect();
        return Ok(Axis {
            name: name.to_string(),
            values,
            numeric,
            kind,
        });
    }
    let items: Vec<String> = values
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if items.is_empty() {
        return Err(VaryError::Empty(text.to_string()));
    }
    let classified: Vec<Option<(Kind, f64)>> = items.iter().map(|s| classify(s)).collect();
    let kind = match classified
        .iter()
        .flatten()
        .map(|c| c.0)
        .find(|k| *k != Kind::Number)
    {
        Some(k) => k,
        None if classified.iter().all(Option::is_some) => Kind::Number,
        None => Kind::Text,
    };
    let numeric = classified
        .iter()
        .enumerate()
        .map(|(i, c)| c.map(|c| c.1).unwrap_or(i as f64))
        .collect();
    Ok(Axis {
        name: name.to_string(),
        values: items,
        numeric,
        kind,
    })
}

fn unit_hint(v: &str) -> String {
    let e: Option<UnitError> = units::parse_bytes(v).err();
    match e {
        Some(UnitError::MissingUnit { .. }) => format!("`{v}` has no unit"),
        _ => format!("`{v}` is not a number, a size (`2MiB`), a duration (`30ms`) or a bandwidth (`55MiB/s`)"),
    }
}

/// The cartesian product of the axes, first axis slowest.
pub fn grid(axes: &[Axis]) -> Vec<Vec<usize>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        let mut next = Vec::with_capacity(points.len() * axis.values.len());
        for p in &points {
            for i in 0..axis.values.len() {
                let mut q = p.clone();
                q.push(i);
                next.push(q);
            }
        }
        points = next;
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_past_usize_is_too_many_points_not_an_overflow() {
        // Found by the `values` fuzz target (overflow checks on): `as usize` saturated, `+ 1`
        // overflowed; in release it wrapped to 0 points.
        let e = parse_vary("max_threads=8..+17777777777777777777777777777777777777:+1");
        assert!(
            matches!(
                e,
                Err(VaryError::TooMany {
                    count: usize::MAX,
                    ..
                })
            ),
            "{e:?}"
        );
    }

    #[test]
    fn multiplicative_range() {
        let a = parse_vary("gap=64KiB..16MiB:x2").unwrap();
        assert_eq!(a.values.first().unwrap(), "64KiB");
        assert_eq!(a.values.last().unwrap(), "16MiB");
        assert_eq!(a.values.len(), 9);
        assert_eq!(a.kind, Kind::Bytes);
    }

    #[test]
    fn additive_range_from_zero() {
        let a = parse_vary("floor=0..1MiB:+128KiB").unwrap();
        assert_eq!(a.values.len(), 9);
        assert_eq!(a.values[0], "0B");
        assert_eq!(a.values[1], "128KiB");
        assert_eq!(a.numeric[8], (1u64 << 20) as f64);
    }

    #[test]
    fn lists_and_numbers() {
        let a = parse_vary("x=64KiB, 1MiB,4MiB").unwrap();
        assert_eq!(a.values, vec!["64KiB", "1MiB", "4MiB"]);
        let n = parse_vary("threads=1..8:+1").unwrap();
        assert_eq!(n.values.len(), 8);
        assert_eq!(n.kind, Kind::Number);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(parse_vary("x="), Err(VaryError::Empty(_))));
        assert!(matches!(parse_vary("x=,,"), Err(VaryError::Empty(_))));
        assert!(parse_vary("x").is_err());
        let e = parse_vary("gap=64..16MiB:x2").unwrap_err().to_string();
        assert!(e.contains("different units"), "{e}");
        assert!(parse_vary("gap=64KiB..16MiB").is_err());
        assert!(parse_vary("gap=16MiB..64KiB:x2").is_err());
        assert!(parse_vary("gap=64KiB..16MiB:x1").is_err());
        assert!(parse_vary("gap=1B..1TiB:+1B").is_err());
    }

    #[test]
    fn grid_is_row_major() {
        let a = parse_vary("a=1,2").unwrap();
        let b = parse_vary("b=1,2,3").unwrap();
        let g = grid(&[a, b]);
        assert_eq!(g.len(), 6);
        assert_eq!(g[1], vec![0, 1]);
        assert_eq!(g[3], vec![1, 0]);
    }
}
