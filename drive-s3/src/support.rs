//! What the real driver cannot honour: scenario features that only exist in the simulated world.
//!
//! A real measurement reads a real store through no local cache, so a scenario that states a
//! page cache, a filesystem cache, injected faults or hedging describes something else; running
//! it anyway would give a report that silently disagrees with `sim run`. Each refusal names the
//! scenario key and says what to change.
//!
//! The CPU stand-ins (decode threads, each source's own thread, the consumers) are the driver
//! loop's own (`drive::run_in`), so the real world runs them exactly as the simulated one.
//!
//! What is ignored, on purpose: the store model's latency, bandwidth, NIC and rate-limit figures
//! (the real store replaces them). What is honoured: `store.retry` (attempts and backoff),
//! `store.timeout` (per attempt, for the response and for each body chunk), `store.progress_chunk` (how often
//! partial readiness is reported) and `store.price` (cost of the real requests).

use scenario::Resolved;

/// A scenario feature the real driver refuses.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}`: {why}")]
pub struct Unsupported {
    /// The scenario key (dotted path).
    pub key: String,
    /// Why, and what to do instead.
    pub why: String,
}

fn refuse(key: &str, why: &str) -> Unsupported {
    Unsupported {
        key: key.to_string(),
        why: why.to_string(),
    }
}

/// Checks one resolved case; the first unsupported feature is the error.
pub fn check(r: &Resolved) -> Result<(), Unsupported> {
    if r.page_cache.is_some() {
        return Err(refuse(
            "caches.page_cache",
            "the real driver reads the store directly and has no page cache; remove the page \
             cache from the scenario (or measure with `sim run`)",
        ));
    }
    if r.fs_cache.is_some() {
        return Err(refuse(
            "caches.filesystem_cache",
            "the real driver has no filesystem cache; remove it from the scenario",
        ));
    }
    let iceberg_cold = r
        .queries
        .iter()
        .any(|q| !q.spec.iceberg_metadata_cache_warm);
    if r.table.iceberg.is_some() && iceberg_cold {
        return Err(refuse(
            "caches.iceberg_metadata",
            "the layout records Iceberg metadata objects by size only, with no object keys to \
             read; set `caches.iceberg_metadata: warm` to measure the data files alone",
        ));
    }
    let f = &r.store.faults;
    if f.error_rate > 0.0 {
        return Err(refuse(
            "store.faults.error_rate",
            "injected errors exist only in the simulated store; set it to 0 (a real store's own \
             errors are retried per `store.retry`)",
        ));
    }
    if f.loss_rate > 0.0 {
        return Err(refuse(
            "store.faults.loss_rate",
            "injected losses exist only in the simulated store; set it to 0",
        ));
    }
    if r.store.hedge.is_some() {
        return Err(refuse(
            "store.hedge",
            "the real driver does not send hedged requests; remove `hedge:`",
        ));
    }
    if r.store.retry.max_attempts == 0 {
        return Err(refuse(
            "store.retry.max_attempts",
            "must be at least 1 (the first attempt counts)",
        ));
    }
    Ok(())
}
