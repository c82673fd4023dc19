//! A lower bound of a run's wall time from the layout, the query and the models alone: no
//! strategy, however good, finishes faster. Three terms, the largest wins:
//!
//! - **bytes**: the bytes the query needs (footers included) over the node's NIC;
//! - **chain**: the round trips that must follow one another, each at least the store's
//!   smallest first-byte time (`first_byte.min`, or a constant distribution's value; 0 when the
//!   distribution has no floor): the Iceberg metadata chain when it is cold (metadata JSON ->
//!   manifest list -> manifests), the footer when the metadata cache is cold, then the data;
//! - **decode**: the decode work over the threads that can run it at once (the cores, or the
//!   parsing threads if there are more, since the model runs those in parallel).
//!
//! The report prints it and each arm's efficiency (bound / wall time): how much any strategy
//! could still win. `drive/tests/bound.rs` asserts no run beats it.

use models::store::DistKind;
use scenario::{Resolved, ResolvedArm, ResolvedQuery};

/// The three terms, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LowerBound {
    pub bytes_ns: u64,
    pub chain_ns: u64,
    pub decode_ns: u64,
}

impl LowerBound {
    /// The bound: the largest term.
    pub fn ns(&self) -> u64 {
        self.bytes_ns.max(self.chain_ns).max(self.decode_ns)
    }
}

/// The bound of one run that needed `needed_bytes` and `decode_busy_ns` of decode work.
pub fn lower_bound(
    r: &Resolved,
    arm: &ResolvedArm,
    query: &ResolvedQuery,
    needed_bytes: u64,
    decode_busy_ns: u64,
) -> LowerBound {
    let nic = r.store.nic.bytes_per_s();
    let bytes_ns = if nic.is_finite() && nic > 0.0 {
        (needed_bytes as f64 * 1e9 / nic).floor() as u64
    } else {
        0
    };
    let fb = &r.store.first_byte;
    let min_first_byte_ns = match (fb.distribution, fb.value, fb.min) {
        (DistKind::Constant, Some(v), _) => v.0,
        (_, _, Some(m)) => m.0,
        _ => 0,
    };
    let q = &query.spec;
    let iceberg = match (&r.table.iceberg, q.iceberg_metadata_cache_warm) {
        (Some(m), false) => 2 + u64::from(!m.manifest_bytes.is_empty()),
        _ => 0,
    };
    let footer = u64::from(!q.parquet_metadata_cache_warm && !q.files.is_empty());
    let data = u64::from(!q.files.is_empty());
    let chain_ns = min_first_byte_ns.saturating_mul(iceberg + footer + data);
    let cores = r.cpu.cores.unwrap_or(models::cpu::CpuSpec::DEFAULT_CORES);
    let parallel = u64::from(cores.max(arm.strategy.max_parsing_threads()).max(1));
    LowerBound {
        bytes_ns,
        chain_ns,
        decode_ns: decode_busy_ns / parallel,
    }
}
