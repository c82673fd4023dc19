//! The object-store model's parameters, as written in YAML with units, and their validation.
//!
//! Every key is checked: unknown keys are refused (`deny_unknown_fields`), sizes, durations and
//! bandwidths need units, and [`StoreSpec::validate`] refuses inconsistent values with an error
//! naming the key (`first_byte.median`) and saying what would be right.

use super::StoreError;
use serde::Deserialize;
use std::collections::BTreeMap;
use units::{Bandwidth, Bytes, Duration};

/// The shape of a distribution of latencies or bandwidths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DistKind {
    /// Lognormal from `median` and either `p95` or `sigma` (of the underlying normal).
    Lognormal,
    /// Gamma from `mean` and `shape`.
    Gamma,
    /// Piecewise-linear inverse CDF through `quantiles: [[p, value], ...]`.
    Empirical,
    /// Always `value`.
    Constant,
}

/// A distribution of a quantity `Q` (a [`Duration`] or a [`Bandwidth`]), optionally clamped to
/// `[min, max]`. Only the keys of the chosen `distribution` may be given.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistSpec<Q> {
    /// `lognormal`, `gamma`, `empirical` or `constant`.
    pub distribution: DistKind,
    /// Lognormal: the median.
    #[serde(default)]
    pub median: Option<Q>,
    /// Lognormal: the 95th percentile (before clamping); alternative to `sigma`.
    #[serde(default)]
    pub p95: Option<Q>,
    /// Lognormal: the standard deviation of the log; alternative to `p95`.
    #[serde(default)]
    pub sigma: Option<f64>,
    /// Gamma: the mean.
    #[serde(default)]
    pub mean: Option<Q>,
    /// Gamma: the shape parameter k (the coefficient of variation is 1/sqrt(k)).
    #[serde(default)]
    pub shape: Option<f64>,
    /// Empirical: `[probability, value]` points, probabilities increasing within [0, 1].
    #[serde(default)]
    pub quantiles: Option<Vec<(f64, Q)>>,
    /// Constant: the value.
    #[serde(default)]
    pub value: Option<Q>,
    /// Samples below this are raised to it.
    #[serde(default)]
    pub min: Option<Q>,
    /// Samples above this are lowered to it (e.g. the per-connection bandwidth ceiling).
    #[serde(default)]
    pub max: Option<Q>,
}

/// A unit-carrying quantity usable in a [`DistSpec`].
pub trait Quantity: Copy + std::fmt::Display {
    /// The value in base units (nanoseconds or bytes per second).
    fn base(self) -> f64;
}
impl Quantity for Duration {
    fn base(self) -> f64 {
        self.0 as f64
    }
}
impl Quantity for Bandwidth {
    fn base(self) -> f64 {
        self.0
    }
}

/// Per-prefix request-rate limit: above it the store answers 503 SlowDown.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateLimitSpec {
    /// Sustained GET requests per second per prefix (a token bucket's refill rate).
    pub requests_per_s: f64,
    /// Requests a prefix may burst above the rate (the bucket's depth); defaults to one
    /// second's worth.
    #[serde(default)]
    pub burst: Option<f64>,
}

/// How the client retries a failed or throttled attempt.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Attempts per read, the first included (hedges not counted); ClickHouse's
    /// `s3_retry_attempts` plus one.
    pub max_attempts: u32,
    /// Backoff before the first retry; it doubles per retry, with jitter in [50%, 100%].
    pub backoff_initial: Duration,
    /// The backoff's ceiling.
    pub backoff_max: Duration,
}

impl Default for RetrySpec {
    fn default() -> Self {
        // The AWS SDK's default strategy as ClickHouse configures it: 25 ms scale factor,
        // exponential, capped; s3_retry_attempts = 100 in recent ClickHouse, 10 here so that a
        // simulated outage fails in reasonable virtual time.
        RetrySpec {
            max_attempts: 10,
            backoff_initial: Duration(25_000_000),
            backoff_max: Duration(5_000_000_000),
        }
    }
}

/// Injected faults, each decided per attempt.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// Probability that an attempt is answered 500 InternalError (after a first-byte latency).
    #[serde(default)]
    pub error_rate: f64,
    /// Probability that an attempt is silently lost: no answer until the client's `timeout`.
    #[serde(default)]
    pub loss_rate: f64,
}

/// Hedged requests: if the first byte has not arrived `after` an attempt started, send a
/// duplicate; the first to answer wins and the others are aborted.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HedgeSpec {
    /// Wait this long for a first byte before hedging.
    pub after: Duration,
    /// Hedges per read at most.
    #[serde(default = "one")]
    pub max_hedges: u32,
}

fn one() -> u32 {
    1
}

/// Prices in US dollars.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSpec {
    /// Dollars per 1,000 GET requests (every attempt is billed, errors included).
    pub per_1000_gets_usd: f64,
    /// Dollars per GB (10^9 bytes) retrieved or transferred.
    #[serde(default)]
    pub per_gb_usd: f64,
    /// Dollars per 1,000 LIST requests (S3 Standard: $0.005).
    #[serde(default = "default_list_price")]
    pub per_1000_lists_usd: f64,
}

fn default_list_price() -> f64 {
    0.005
}

/// The parameters of a simulated object store and of the client in front of it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSpec {
    /// A short name for reports.
    #[serde(default)]
    pub name: String,
    /// Where the figures come from (required for presets).
    #[serde(default)]
    pub source: String,
    /// Time from sending a GET to its first response byte, for a small request.
    pub first_byte: DistSpec<Duration>,
    /// Extra first-byte latency per MiB requested (size-dependent latency); 0 by default.
    #[serde(default)]
    pub first_byte_per_mib: Duration,
    /// The bandwidth one connection can sustain, sampled per attempt.
    pub stream_bandwidth: DistSpec<Bandwidth>,
    /// The node's network cap, shared max-min fairly by the active transfers.
    pub nic: Bandwidth,
    /// Bytes are delivered to the reader in chunks of this size; `0` delivers only at the end
    /// (a local `pread`).
    #[serde(default = "default_chunk")]
    pub progress_chunk: Bytes,
    /// The client gives up on an attempt with no first byte after this long.
    #[serde(default = "default_timeout")]
    pub timeout: Duration,
    /// Per-prefix request-rate limit; none by default.
    #[serde(default)]
    pub rate_limit: Option<RateLimitSpec>,
    /// Client retries.
    #[serde(default)]
    pub retry: RetrySpec,
    /// Injected faults; none by default.
    #[serde(default)]
    pub faults: FaultSpec,
    /// Hedged requests; off by default.
    #[serde(default)]
    pub hedge: Option<HedgeSpec>,
    /// Prices.
    pub price: PriceSpec,
}

fn default_chunk() -> Bytes {
    Bytes(1 << 20)
}

fn default_timeout() -> Duration {
    // ClickHouse's S3 `request_timeout_ms` default (30 s).
    Duration(30_000_000_000)
}

/// The preset names shipped in `models/presets/`, with their text.
const PRESETS: &[(&str, &str)] = &[
    (
        "s3-standard",
        include_str!("../../presets/s3-standard.yaml"),
    ),
    (
        "s3-express-one-zone",
        include_str!("../../presets/s3-express-one-zone.yaml"),
    ),
    ("local-nvme", include_str!("../../presets/local-nvme.yaml")),
    (
        "s3-standard-findings",
        include_str!("../../presets/s3-standard-findings.yaml"),
    ),
];

fn invalid(key: &str, problem: String) -> StoreError {
    StoreError::Invalid {
        key: key.to_string(),
        problem,
    }
}

impl StoreSpec {
    /// The names of the shipped presets.
    pub fn preset_names() -> Vec<&'static str> {
        PRESETS.iter().map(|(n, _)| *n).collect()
    }

    /// The YAML text of a shipped preset, so that a scenario can refine it key by key.
    pub fn preset_text(name: &str) -> Result<&'static str, StoreError> {
        PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| StoreError::UnknownPreset {
                name: name.to_string(),
                available: Self::preset_names().join(", "),
            })
    }

    /// A shipped preset by name (`s3-standard`, `s3-express-one-zone`, `local-nvme`, ...).
    /// Parsed once per process: every case and sweep point resolves its store, and parsing the
    /// YAML was 2.5% of a `tpch-iceberg` run.
    pub fn preset(name: &str) -> Result<StoreSpec, StoreError> {
        static PARSED: std::sync::Mutex<BTreeMap<&'static str, StoreSpec>> =
            std::sync::Mutex::new(BTreeMap::new());
        if let Some(spec) = PARSED.lock().ok().and_then(|m| m.get(name).cloned()) {
            return Ok(spec);
        }
        let spec = Self::parse_preset(name)?;
        if let (Ok(mut m), Some(&(key, _))) =
            (PARSED.lock(), PRESETS.iter().find(|(n, _)| *n == name))
        {
            m.insert(key, spec.clone());
        }
        Ok(spec)
    }

    /// [`Self::preset`], parsed now.
    fn parse_preset(name: &str) -> Result<StoreSpec, StoreError> {
        let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name) else {
            return Err(StoreError::UnknownPreset {
                name: name.to_string(),
                available: Self::preset_names().join(", "),
            });
        };
        let spec = Self::from_yaml(text).map_err(|e| StoreError::Preset {
            name: name.to_string(),
            error: e.to_string(),
        })?;
        if spec.source.trim().is_empty() {
            return Err(invalid(
                "source",
                format!("preset `{name}` must say where its figures come from"),
            ));
        }
        Ok(spec)
    }

    /// Parses and validates a spec from YAML. Syntax and type errors carry line and column.
    pub fn from_yaml(text: &str) -> Result<StoreSpec, StoreError> {
        let spec: StoreSpec =
            serde_saphyr::from_str(text).map_err(|e| StoreError::Yaml(e.to_string()))?;
        spec.validate()?;
        Ok(spec)
    }

    /// Checks that the values are consistent; the error names the offending key.
    pub fn validate(&self) -> Result<(), StoreError> {
        validate_dist("first_byte", &self.first_byte)?;
        validate_dist("stream_bandwidth", &self.stream_bandwidth)?;
        if self.stream_bandwidth.min.is_none_or(|m| m.0 <= 0.0)
            && self.stream_bandwidth.distribution != DistKind::Constant
        {
            // A zero-bandwidth stream would never finish; require a floor.
            return Err(invalid("stream_bandwidth.min", "is required and must be positive (e.g. `10MiB/s`), so that no stream gets zero bandwidth".into()));
        }
        if let Some(v) = self.stream_bandwidth.value {
            if v.0 <= 0.0 {
                return Err(invalid("stream_bandwidth.value", "must be positive".into()));
            }
        }
        if !(self.nic.0 > 0.0 && self.nic.0.is_finite()) {
            return Err(invalid(
                "nic",
                format!(
                    "must be a positive bandwidth (e.g. `100Gbit/s`), got {}",
                    self.nic
                ),
            ));
        }
        if self.timeout.0 == 0 {
            return Err(invalid("timeout", "must be positive (e.g. `30s`)".into()));
        }
        if let Some(r) = &self.rate_limit {
            if !(r.requests_per_s > 0.0 && r.requests_per_s.is_finite()) {
                return Err(invalid(
                    "rate_limit.requests_per_s",
                    format!("must be a positive number, got {}", r.requests_per_s),
                ));
            }
            if let Some(b) = r.burst {
                if !(b >= 1.0 && b.is_finite()) {
                    return Err(invalid(
                        "rate_limit.burst",
                        format!("must be at least 1, got {b}"),
                    ));
                }
            }
        }
        if self.retry.max_attempts == 0 {
            return Err(invalid(
                "retry.max_attempts",
                "must be at least 1 (the first attempt counts)".into(),
            ));
        }
        if u64::from(self.retry.max_attempts) > limits::MAX_ATTEMPTS_PER_READ {
            return Err(invalid(
                "retry.max_attempts",
                format!(
                    "is {}, past the bound of {} (limits::MAX_ATTEMPTS_PER_READ)",
                    self.retry.max_attempts,
                    limits::MAX_ATTEMPTS_PER_READ
                ),
            ));
        }
        let chunk = self.progress_chunk.0;
        if chunk != 0 && chunk < limits::MIN_PROGRESS_CHUNK_BYTES {
            return Err(invalid(
                "progress_chunk",
                format!(
                    "is {}, below {} (limits::MIN_PROGRESS_CHUNK_BYTES); give a size such as \
                     `1MiB`, or 0 to deliver a body all at once",
                    self.progress_chunk,
                    Bytes(limits::MIN_PROGRESS_CHUNK_BYTES)
                ),
            ));
        }
        if self.retry.backoff_initial.0 > self.retry.backoff_max.0 {
            return Err(invalid(
                "retry.backoff_initial",
                format!(
                    "({}) is above retry.backoff_max ({})",
                    self.retry.backoff_initial, self.retry.backoff_max
                ),
            ));
        }
        for (key, p) in [
            ("faults.error_rate", self.faults.error_rate),
            ("faults.loss_rate", self.faults.loss_rate),
        ] {
            if !(0.0..1.0).contains(&p) {
                return Err(invalid(
                    key,
                    format!("must be a probability in [0, 1), got {p}"),
                ));
            }
        }
        if self.faults.error_rate + self.faults.loss_rate >= 1.0 {
            return Err(invalid(
                "faults",
                "error_rate + loss_rate must be below 1, or no attempt could succeed".into(),
            ));
        }
        if let Some(h) = &self.hedge {
            if h.after.0 == 0 {
                return Err(invalid(
                    "hedge.after",
                    "must be positive (e.g. `200ms`)".into(),
                ));
            }
            if h.max_hedges == 0 {
                return Err(invalid(
                    "hedge.max_hedges",
                    "must be at least 1; remove `hedge` to turn hedging off".into(),
                ));
            }
            if u64::from(h.max_hedges) > limits::MAX_HEDGES_PER_READ {
                return Err(invalid(
                    "hedge.max_hedges",
                    format!(
                        "is {}, past the bound of {} (limits::MAX_HEDGES_PER_READ)",
                        h.max_hedges,
                        limits::MAX_HEDGES_PER_READ
                    ),
                ));
            }
        }
        for (key, p) in [
            ("price.per_1000_gets_usd", self.price.per_1000_gets_usd),
            ("price.per_1000_lists_usd", self.price.per_1000_lists_usd),
            ("price.per_gb_usd", self.price.per_gb_usd),
        ] {
            if !(p >= 0.0 && p.is_finite()) {
                return Err(invalid(
                    key,
                    format!("must be a non-negative number of dollars, got {p}"),
                ));
            }
        }
        Ok(())
    }
}

fn validate_dist<Q: Quantity>(key: &str, d: &DistSpec<Q>) -> Result<(), StoreError> {
    let k = |field: &str| format!("{key}.{field}");
    let kind = match d.distribution {
        DistKind::Lognormal => "lognormal",
        DistKind::Gamma => "gamma",
        DistKind::Empirical => "empirical",
        DistKind::Constant => "constant",
    };
    let present = [
        ("median", d.median.is_some()),
        ("p95", d.p95.is_some()),
        ("sigma", d.sigma.is_some()),
        ("mean", d.mean.is_some()),
        ("shape", d.shape.is_some()),
        ("quantiles", d.quantiles.is_some()),
        ("value", d.value.is_some()),
    ];
    let allowed: &[&str] = match d.distribution {
        DistKind::Lognormal => &["median", "p95", "sigma"],
        DistKind::Gamma => &["mean", "shape"],
        DistKind::Empirical => &["quantiles"],
        DistKind::Constant => &["value"],
    };
    for (field, is) in present {
        if is && !allowed.contains(&field) {
            return Err(invalid(
                &k(field),
                format!(
                    "is not used by a {kind} distribution (it takes {})",
                    allowed.join(", ")
                ),
            ));
        }
    }
    let need = |field: &str, v: Option<Q>| -> Result<f64, StoreError> {
        let v =
            v.ok_or_else(|| invalid(&k(field), format!("is required for a {kind} distribution")))?;
        if !(v.base() > 0.0 && v.base().is_finite()) {
            return Err(invalid(&k(field), format!("must be positive, got {v}")));
        }
        Ok(v.base())
    };
    // The value a reader would call typical, checked against min and max.
    let (center_field, center) = match d.distribution {
        DistKind::Lognormal => {
            let median = need("median", d.median)?;
            match (d.p95, d.sigma) {
                (Some(_), Some(_)) => {
                    return Err(invalid(
                        &k("sigma"),
                        "give either p95 or sigma, not both".into(),
                    ))
                }
                (None, None) => {
                    return Err(invalid(
                        &k("p95"),
                        "a lognormal needs p95 (or sigma)".into(),
                    ))
                }
                (Some(p95), None) => {
                    if p95.base() <= median {
                        return Err(invalid(
                            &k("p95"),
                            format!("({p95}) must be above the median"),
                        ));
                    }
                }
                (None, Some(s)) => {
                    if !(s > 0.0 && s.is_finite()) {
                        return Err(invalid(&k("sigma"), format!("must be positive, got {s}")));
                    }
                }
            }
            ("median", median)
        }
        DistKind::Gamma => {
            let mean = need("mean", d.mean)?;
            let shape = d.shape.ok_or_else(|| {
                invalid(&k("shape"), "is required for a gamma distribution".into())
            })?;
            if !(shape > 0.0 && shape.is_finite()) {
                return Err(invalid(
                    &k("shape"),
                    format!("must be positive, got {shape}"),
                ));
            }
            ("mean", mean)
        }
        DistKind::Constant => ("value", need("value", d.value)?),
        DistKind::Empirical => {
            let qs = d.quantiles.as_ref().ok_or_else(|| {
                invalid(
                    &k("quantiles"),
                    "is required for an empirical distribution".into(),
                )
            })?;
            if qs.len() < 2 {
                return Err(invalid(
                    &k("quantiles"),
                    "needs at least two [probability, value] points".into(),
                ));
            }
            let mut last: Option<(f64, f64)> = None;
            for (p, v) in qs {
                if !(0.0..=1.0).contains(p) {
                    return Err(invalid(
                        &k("quantiles"),
                        format!("probability {p} is outside [0, 1]"),
                    ));
                }
                if v.base() < 0.0 || !v.base().is_finite() {
                    return Err(invalid(
                        &k("quantiles"),
                        format!("value {v} must be non-negative"),
                    ));
                }
                if let Some((lp, lv)) = last {
                    if *p <= lp {
                        return Err(invalid(
                            &k("quantiles"),
                            format!("probabilities must increase: {p} follows {lp}"),
                        ));
                    }
                    if v.base() < lv {
                        return Err(invalid(
                            &k("quantiles"),
                            format!("values must not decrease: {v} at p={p}"),
                        ));
                    }
                }
                last = Some((*p, v.base()));
            }
            let mid = qs
                .iter()
                .find(|(p, _)| *p >= 0.5)
                .or(qs.last())
                .map(|(_, v)| v.base())
                .unwrap_or(0.0);
            ("quantiles", mid)
        }
    };
    if let (Some(min), Some(max)) = (d.min, d.max) {
        if min.base() > max.base() {
            return Err(invalid(
                &k("min"),
                format!("({min}) is above {key}.max ({max})"),
            ));
        }
    }
    if let Some(max) = d.max {
        if center > max.base() {
            return Err(invalid(
                &k(center_field),
                format!("is above {key}.max ({max}); raise max or lower the {center_field}"),
            ));
        }
    }
    if let Some(min) = d.min {
        if min.base() < 0.0 {
            return Err(invalid(&k("min"), "must not be negative".into()));
        }
        if center < min.base() {
            return Err(invalid(
                &k(center_field),
                format!("is below {key}.min ({min})"),
            ));
        }
    }
    Ok(())
}
