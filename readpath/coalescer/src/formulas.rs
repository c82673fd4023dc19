//! Settings derived from network figures, as the peers derive them.

use crate::error::CoalesceError;
use limits::saturating_u64;

const MIB: u64 = 1024 * 1024;

/// Arrow C++'s ideal bandwidth utilisation fraction (`MakeFromNetworkMetrics` default).
const ARROW_IDEAL_BANDWIDTH_UTILIZATION: f64 = 0.9;
/// Arrow C++'s `max_ideal_request_size_mib` default.
const ARROW_MAX_IDEAL_REQUEST_BYTES: u64 = 64 * MIB;
/// DuckDB's clamp of the fitted gap.
const DUCKDB_MIN_GAP_BYTES: u64 = 4 * 1024;
const DUCKDB_MAX_GAP_BYTES: u64 = 32 * MIB;

fn check_bandwidth(setting: &'static str, bandwidth_bytes_per_s: f64) -> Result<(), CoalesceError> {
    if bandwidth_bytes_per_s.is_finite() && bandwidth_bytes_per_s > 0.0 {
        Ok(())
    } else {
        Err(CoalesceError::InvalidSetting {
            preset: setting,
            setting: "bandwidth_bytes_per_s",
            value: bandwidth_bytes_per_s.to_string(),
            expected: "a finite bandwidth > 0 bytes per second",
        })
    }
}

/// Arrow C++ `CacheOptions::MakeFromNetworkMetrics` (apache/arrow
/// `cpp/src/arrow/io/caching.cc`): `hole_size_limit = round(TTFB x BW)` and
/// `range_size_limit = min(64 MiB, round(hole x f / (1 - f)))` with `f = 0.9`.
/// Returns `(hole_size_limit_bytes, range_size_limit_bytes)`.
/// 5 ms at 500 MiB/s gives 2.5 MiB and 22.5 MiB.
///
/// Degenerate figures (a zero first-byte time, a bandwidth that is not finite and positive)
/// give `(0, 0)`, which [`crate::CoalescePolicy::validate`] then refuses with a clear error;
/// [`try_arrow_cpp_from_network_metrics`] refuses them directly.
pub fn arrow_cpp_from_network_metrics(
    first_byte_ns: u64,
    bandwidth_bytes_per_s: f64,
) -> (u64, u64) {
    try_arrow_cpp_from_network_metrics(first_byte_ns, bandwidth_bytes_per_s).unwrap_or((0, 0))
}

/// [`arrow_cpp_from_network_metrics`], with an error naming a degenerate figure.
pub fn try_arrow_cpp_from_network_metrics(
    first_byte_ns: u64,
    bandwidth_bytes_per_s: f64,
) -> Result<(u64, u64), CoalesceError> {
    check_bandwidth("arrow-cpp", bandwidth_bytes_per_s)?;
    if first_byte_ns == 0 {
        return Err(CoalesceError::InvalidSetting {
            preset: "arrow-cpp",
            setting: "first_byte_ns",
            value: "0".into(),
            expected: "a first-byte time > 0 ns",
        });
    }
    let f = ARROW_IDEAL_BANDWIDTH_UTILIZATION;
    // Saturating, so an absurdly large product cannot wrap.
    let hole = saturating_u64((first_byte_ns as f64 / 1e9 * bandwidth_bytes_per_s).round());
    let range =
        saturating_u64((hole as f64 * f / (1.0 - f)).round()).min(ARROW_MAX_IDEAL_REQUEST_BYTES);
    Ok((hole, range))
}

/// DuckDB's fitted gap: `latency x bandwidth`, clamped to 4 KiB..32 MiB (`docs/peers.md`; newer
/// DuckDB versions fit both figures from observed reads). A bandwidth that is not finite and
/// positive gives the lower clamp; [`try_duckdb_fitted_gap`] refuses it instead.
pub fn duckdb_fitted_gap(latency_ns: u64, bandwidth_bytes_per_s: f64) -> u64 {
    try_duckdb_fitted_gap(latency_ns, bandwidth_bytes_per_s).unwrap_or(DUCKDB_MIN_GAP_BYTES)
}

/// [`duckdb_fitted_gap`], with an error naming a degenerate bandwidth.
pub fn try_duckdb_fitted_gap(
    latency_ns: u64,
    bandwidth_bytes_per_s: f64,
) -> Result<u64, CoalesceError> {
    check_bandwidth("duckdb", bandwidth_bytes_per_s)?;
    let gap = saturating_u64((latency_ns as f64 / 1e9 * bandwidth_bytes_per_s).round());
    Ok(gap.clamp(DUCKDB_MIN_GAP_BYTES, DUCKDB_MAX_GAP_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn arrow_make_from_network_metrics_worked_example() {
        let (hole, range) = arrow_cpp_from_network_metrics(5 * MS, 500.0 * MIB as f64);
        assert_eq!(hole, 5 * MIB / 2);
        assert_eq!(range, 45 * MIB / 2);
    }

    #[test]
    fn arrow_range_limit_is_capped_at_64_mib() {
        let (hole, range) = arrow_cpp_from_network_metrics(100 * MS, 500.0 * MIB as f64);
        assert_eq!(hole, 50 * MIB);
        assert_eq!(range, 64 * MIB);
    }

    #[test]
    fn duckdb_gap_is_clamped() {
        assert_eq!(duckdb_fitted_gap(1_000, 1e6), 4 * 1024);
        assert_eq!(duckdb_fitted_gap(30 * MS, 1e8), 3_000_000);
        assert_eq!(duckdb_fitted_gap(10_000 * MS, 1e9), 32 * MIB);
    }

    #[test]
    fn bad_figures_are_errors() {
        for bw in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(try_arrow_cpp_from_network_metrics(5 * MS, bw).is_err());
            assert!(try_duckdb_fitted_gap(5 * MS, bw).is_err());
            assert_eq!(arrow_cpp_from_network_metrics(5 * MS, bw), (0, 0));
            assert_eq!(duckdb_fitted_gap(5 * MS, bw), 4 * 1024);
        }
        assert!(try_arrow_cpp_from_network_metrics(0, 1e6).is_err());
        // (0, 0) is refused by the policy, with the setting named.
        let p = crate::CoalescePolicy::ArrowCpp {
            hole_size_limit_bytes: 0,
            range_size_limit_bytes: 0,
        };
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .contains("range_size_limit_bytes"));
    }
}
