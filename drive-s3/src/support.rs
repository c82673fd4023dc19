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

/// The store model's keys a measurement does not use: the real store and network replace them.
pub const UNUSED_STORE_KEYS: [&str; 5] = [
    "first_byte",
    "first_byte_per_mib",
    "stream_bandwidth",
    "nic",
    "rate_limit",
];

/// A `--set` of a store-model figure a measurement does not use is refused, naming it: it was
/// accepted without a word (`store.nic=1MiB/s` then set the report's lower bound), or aborted
/// the run over the model's validation of a figure no request used
/// (`store.first_byte.median=500ms`). `path` is the override's dotted path.
pub fn check_override(path: &[String]) -> Result<(), Unsupported> {
    let store = path.iter().position(|p| p == "store");
    let Some(key) = store.and_then(|i| path.get(i + 1)) else {
        return Ok(());
    };
    if !UNUSED_STORE_KEYS.contains(&key.as_str()) {
        return Ok(());
    }
    Err(Unsupported {
        key: path.join("."),
        why: format!(
            "a measurement does not use the store model's {}: the real store and network \
             replace them (its retry, timeout, progress_chunk and price apply); leave the --set out",
            UNUSED_STORE_KEYS.join(", ")
        ),
    })
}

#[cfg(test)]
mod override_tests {
    use super::*;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    #[test]
    fn a_store_figure_the_real_run_does_not_use_is_refused() {
        for p in [
            "store.nic",
            "store.first_byte.median",
            "store.rate_limit.requests_per_s",
        ] {
            let e = check_override(&path(p)).unwrap_err();
            assert_eq!(e.key, p);
            assert!(e.why.contains("does not use"), "{e}");
        }
        for p in [
            "store.retry.max_attempts",
            "store.timeout",
            "settings.max_threads",
            "nic",
        ] {
            assert!(check_override(&path(p)).is_ok(), "{p}");
        }
    }
}
