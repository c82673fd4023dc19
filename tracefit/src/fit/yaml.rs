//! The fitted model as YAML in the schema of `models::store::StoreSpec` (see
//! `models/presets/*.yaml`). StoreSpec refuses unknown keys, so the fit quality goes into
//! comments above the keys; `source:` names the trace.

use std::fmt::Write;

use units::{format_bandwidth, format_bytes, format_duration_f};

use super::dist::{DistFit, FittedDist};
use super::StoreFit;

/// Formats a value of a distribution in its unit.
#[derive(Clone, Copy)]
enum Unit {
    Duration,
    Bandwidth,
}

impl Unit {
    fn format(self, v: f64) -> String {
        match self {
            Unit::Duration => format_duration_f(v),
            Unit::Bandwidth => format_bandwidth(v),
        }
    }
}

/// Quoted YAML scalar (a JSON string is a valid YAML double-quoted scalar).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn describe(dist: &FittedDist, unit: Unit) -> String {
    match dist {
        FittedDist::Lognormal { mu, sigma } => {
            format!("median {}, sigma {:.4}", unit.format(mu.exp()), sigma)
        }
        FittedDist::Gamma { shape, scale } => {
            format!("mean {}, shape {:.4}", unit.format(shape * scale), shape)
        }
        FittedDist::Empirical { points } => {
            let p = |q: f64| {
                points
                    .iter()
                    .find(|(pp, _)| *pp >= q)
                    .map(|(_, v)| unit.format(*v))
                    .unwrap_or_default()
            };
            format!(
                "{} quantiles, p50 {}, p99 {}",
                points.len(),
                p(0.5),
                p(0.99)
            )
        }
        FittedDist::Constant { value } => format!("every sample at {}", unit.format(*value)),
    }
}

fn quality_comments(out: &mut String, what: &str, fit: &DistFit, unit: Unit) {
    let _ = writeln!(
        out,
        "# {what}: {} samples; Kolmogorov-Smirnov statistic D of each candidate:",
        fit.sorted_sample.len()
    );
    for (i, c) in fit.candidates.iter().enumerate() {
        let ll = c
            .log_likelihood
            .map(|l| format!(", log-likelihood {l:.1}"))
            .unwrap_or_default();
        let mark = if i == fit.chosen { "  <- chosen" } else { "" };
        let _ = writeln!(
            out,
            "#   {:<10} D = {:.4} ({}{ll}){mark}",
            c.dist.name(),
            c.ks,
            describe(&c.dist, unit)
        );
    }
    let _ = writeln!(
        out,
        "#   rule: the parametric candidate with the smaller D if D <= {:.4} (max of 1.63/sqrt(n) and 0.02), else empirical",
        fit.ks_threshold
    );
}

fn dist_keys(out: &mut String, key: &str, dist: &FittedDist, unit: Unit) {
    let _ = writeln!(out, "{key}:");
    let _ = writeln!(out, "  distribution: {}", dist.name());
    match dist {
        FittedDist::Lognormal { mu, sigma } => {
            let _ = writeln!(out, "  median: {}", unit.format(mu.exp()));
            // Shortest form that reads back as the same f64: `{:.6}` printed 1e-7 as 0.000000.
            let _ = writeln!(out, "  sigma: {sigma}");
        }
        FittedDist::Gamma { shape, scale } => {
            let _ = writeln!(out, "  mean: {}", unit.format(shape * scale));
            let _ = writeln!(out, "  shape: {shape}");
        }
        FittedDist::Empirical { points } => {
            let _ = writeln!(out, "  quantiles:");
            for (p, v) in points {
                let _ = writeln!(out, "    - [{p}, {}]", unit.format(*v));
            }
        }
        FittedDist::Constant { value } => {
            let _ = writeln!(out, "  value: {}", unit.format(*value));
        }
    }
}

impl StoreFit {
    /// [`StoreFit::to_yaml`], loaded back through `models::store::StoreSpec::from_yaml` first:
    /// what `sim fit` writes always loads (a degenerate fit is a constant distribution, or this
    /// error saying why).
    pub fn to_checked_yaml(&self, name: &str) -> Result<String, crate::TraceError> {
        let yaml = self.to_yaml(name);
        models::store::StoreSpec::from_yaml(&yaml)
            .map_err(|e| crate::TraceError::Unloadable { why: e.to_string() })?;
        Ok(yaml)
    }

    /// The fitted model as YAML that `models::store::StoreSpec::from_yaml` loads, with the fit
    /// quality in comments. `name` becomes the model's `name:`.
    pub fn to_yaml(&self, name: &str) -> String {
        let mut out = String::new();
        let latency_kind = match self.first_byte_source {
            crate::record::FirstByteSource::Client => "client-side first byte",
            crate::record::FirstByteSource::TurnAround => {
                "S3 Turn-Around Time (server side only: the client sees a network round trip more)"
            }
        };
        let _ = writeln!(
            out,
            "# Store model fitted by tracefit from `{}` ({:?}).",
            self.source, self.format
        );
        let _ = writeln!(
            out,
            "# {} records, {} malformed lines skipped.",
            self.records, self.malformed_lines
        );
        let _ = writeln!(
            out,
            "# First-byte latency is {latency_kind}; {} successful store GETs, {} dropped (zero, or negative de-trended).",
            self.latency_requests, self.latency_dropped
        );
        if self.latency_below_resolution > 0 {
            let _ = writeln!(
                out,
                "# {} of them under the log's 1 ms resolution (`0`), taken as 0.25 ms, the middle of [0, 0.5 ms]{}.",
                self.latency_below_resolution,
                if 2 * self.latency_below_resolution > self.latency_requests {
                    ": most of the sample, so the fit cannot resolve the distribution below a millisecond; a trace with finer times (a sim trace, the test bed's request CSV) can"
                } else {
                    ""
                }
            );
        }
        quality_comments(&mut out, "first_byte", &self.first_byte, Unit::Duration);
        match &self.size_slope {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "# Size dependence: {} requests of at least {}: {} per MiB (standard error {}); {}.",
                    s.requests,
                    format_bytes(s.min_bytes),
                    format_duration_f(s.ns_per_mib),
                    format_duration_f(s.stderr_ns_per_mib),
                    if s.applied { "applied, latencies de-trended before the fit" } else { "not significant, not applied" }
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "# Size dependence: too few large requests to fit a slope; none applied."
                );
            }
        }
        match &self.stream_bandwidth {
            Some(fit) => {
                let _ = writeln!(
                    out,
                    "# Stream bandwidth: bytes / (total - first byte) of requests of at least {}.",
                    format_bytes(self.bandwidth_min_bytes)
                );
                quality_comments(&mut out, "stream_bandwidth", fit, Unit::Bandwidth);
            }
            None => {
                let _ = writeln!(
                    out,
                    "# Stream bandwidth: NOT MEASURED (fewer than 2 requests of at least {} with a transfer time);",
                    format_bytes(self.bandwidth_min_bytes)
                );
                let _ = writeln!(
                    out,
                    "#   the s3-standard preset's figures are used instead."
                );
            }
        }
        let _ = writeln!(
            out,
            "# Request rate: {} GETs over {:.3} s: mean {:.1}/s, peak {}/s; peak throughput {}.",
            self.rate.requests,
            self.rate.span_s,
            self.rate.mean_per_s,
            self.rate.peak_per_s,
            format_bandwidth(self.rate.peak_bytes_per_s)
        );
        let _ = writeln!(
            out,
            "# Errors (per attempt): {:.4}% 5xx or timeout: {:.4}% 5xx other than 503, {:.4}% 503 SlowDown, {:.4}% timeouts.",
            100.0 * self.errors.error_rate,
            100.0 * self.errors.server_error_rate,
            100.0 * self.errors.throttled_rate,
            100.0 * self.errors.timeout_rate
        );
        let _ = writeln!(out, "name: {}", quoted(name));
        let _ = writeln!(
            out,
            "source: {}",
            quoted(&format!(
                "fitted by tracefit from the trace `{}` ({} records); fit quality in the comments above",
                self.source, self.records
            ))
        );
        let first = self.first_byte.best().map(|c| c.dist.clone());
        if let Some(first) = first {
            dist_keys(&mut out, "first_byte", &first, Unit::Duration);
        }
        let slope = self
            .size_slope
            .as_ref()
            .filter(|s| s.applied)
            .map(|s| s.ns_per_mib)
            .unwrap_or(0.0);
        let _ = writeln!(
            out,
            "first_byte_per_mib: {}",
            format_duration_f(slope.round())
        );
        match self
            .stream_bandwidth
            .as_ref()
            .and_then(|f| f.best().map(|c| (f, c)))
        {
            Some((fit, best)) => {
                dist_keys(&mut out, "stream_bandwidth", &best.dist, Unit::Bandwidth);
                let lo = fit.sorted_sample.first().copied().unwrap_or(0.0);
                let hi = fit.sorted_sample.last().copied().unwrap_or(0.0);
                let _ = writeln!(
                    out,
                    "  min: {}  # the slowest stream measured",
                    format_bandwidth(lo.floor())
                );
                let _ = writeln!(
                    out,
                    "  max: {}  # the fastest stream measured",
                    format_bandwidth(hi.ceil())
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "stream_bandwidth:  # not measured: s3-standard preset figures"
                );
                let _ = writeln!(out, "  distribution: lognormal\n  median: 57MiB/s\n  sigma: 0.49\n  min: 25MiB/s\n  max: 95MiB/s");
            }
        }
        let _ = writeln!(
            out,
            "nic: {}  # not in a trace: 100Gbit/s, or twice the peak throughput if higher, unless given",
            format_bandwidth(self.nic_bytes_per_s)
        );
        if let Some(limit) = self.errors.rate_limit_per_s {
            let _ = writeln!(
                out,
                "rate_limit:  # the most GETs served (not 503, not a timeout) in one second that saw a 503 SlowDown, at least the most served in a second without one"
            );
            let _ = writeln!(out, "  requests_per_s: {}", limit.max(1));
        }
        let _ = writeln!(out, "faults:");
        let _ = writeln!(
            out,
            "  error_rate: {:.6}  # share of 5xx other than 503",
            self.errors.server_error_rate
        );
        let _ = writeln!(
            out,
            "  loss_rate: {:.6}  # share of timeouts (status 0)",
            self.errors.timeout_rate
        );
        let _ = writeln!(out, "price:  # not in a trace: S3 Standard's unless given");
        let _ = writeln!(out, "  per_1000_gets_usd: {}", self.price_per_1000_gets_usd);
        let _ = writeln!(out, "  per_gb_usd: {}", self.price_per_gb_usd);
        out
    }
}
