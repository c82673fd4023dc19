//! What one run measured: an ordered list of named metrics with units, so that tables, CSV,
//! JSON, sweeps and the tuner all read the same thing.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Nanoseconds,
    Bytes,
    Count,
    Ratio,
    Dollars,
    /// Cores busy on average.
    Cores,
    /// Bytes per second.
    BytesPerSecond,
}

impl Unit {
    /// Suffix for CSV column names, so that a column says its unit.
    pub fn csv_suffix(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "_ns",
            Unit::Bytes => "_bytes",
            Unit::Count | Unit::Ratio => "",
            Unit::Dollars => "_usd",
            Unit::Cores => "_cores",
            Unit::BytesPerSecond => "_bytes_per_s",
        }
    }

    /// A value written with its unit for people.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Nanoseconds => units::format_duration_f(v),
            Unit::Bytes => units::format_bytes_f(v),
            Unit::Count => format_count(v),
            Unit::Ratio => format!("{:.2}x", v),
            Unit::Dollars => format!("${:.4}", v),
            Unit::Cores => format!("{:.2}", v),
            Unit::BytesPerSecond => units::format_bandwidth(v),
        }
    }
}

fn format_count(v: f64) -> String {
    if v.fract().abs() > 1e-9 && v.abs() < 100.0 {
        return format!("{v:.2}");
    }
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    /// snake_case name, or a ClickHouse profile-event name verbatim.
    pub name: String,
    pub unit: Unit,
    pub value: f64,
}

/// The metrics of one run, in a fixed order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunMetrics {
    pub metrics: Vec<Metric>,
}

impl RunMetrics {
    pub fn push(&mut self, name: impl Into<String>, unit: Unit, value: f64) {
        self.metrics.push(Metric {
            name: name.into(),
            unit,
            value,
        });
    }
    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
    /// Adds another run's metrics (queries of one scenario run one after another): sums for
    /// totals, maxima for peaks, ratios recomputed by the caller.
    pub fn accumulate(&mut self, other: &RunMetrics) {
        if self.metrics.is_empty() {
            *self = other.clone();
            return;
        }
        for (m, o) in self.metrics.iter_mut().zip(&other.metrics) {
            debug_assert_eq!(m.name, o.name);
            if m.name.starts_with("peak_") || m.name.starts_with("max_") {
                m.value = m.value.max(o.value);
            } else {
                m.value += o.value;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_separators() {
        assert_eq!(Unit::Count.format(9968.0), "9,968");
        assert_eq!(Unit::Count.format(1_234_567.0), "1,234,567");
        assert_eq!(Unit::Count.format(0.98), "0.98");
        assert_eq!(Unit::Nanoseconds.format(14.03e9), "14.03s");
    }
}
