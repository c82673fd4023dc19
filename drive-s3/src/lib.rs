//! The real world: the very same `planner::Reader` and driver loop (`drive::run_in`) as a
//! simulated run, with a real clock and real ranged GETs against an S3 API (any `object_store`
//! store, in practice `AmazonS3`). It writes the same report and request trace as `sim run`,
//! so the two can be compared and `sim fit` / `sim replay` read its trace unchanged.
//!
//! Modules: `world` (the [`S3World`] the loop runs in), `fetch` (one read's GET attempts as a
//! tokio task), `clock`, `counters` (store-side figures from the real requests), `keys` (object
//! keys of data files), `support` (scenario features the real world refuses), `s3` (the
//! client). [`Measured`] is the `drive::Runner` that `experiments::run` orchestrates; runs are
//! sequential, since measurements side by side would share the network and disturb each other.

pub mod clock;
pub mod counters;
pub mod fetch;
pub mod keys;
pub mod s3;
pub mod support;
pub mod world;

use drive::{Recording, RunError, RunFailure, RunOutput, Runner, World};
use object_store::path::Path;
use object_store::ObjectStore;
use scenario::{Resolved, ResolvedArm, ResolvedQuery};
use std::sync::{Arc, Mutex};

pub use counters::first_byte_quantiles_ns;
pub use s3::{connect, S3Endpoint};
pub use world::{RealStoreView, S3World};

/// The real store and where the table's objects are in it.
#[derive(Clone)]
pub struct RealStore {
    pub store: Arc<dyn ObjectStore>,
    /// Prepended to every data file's recorded path, joined by one '/' (may be empty).
    pub prefix: String,
}

/// The most threads the request tasks run on.
pub const MAX_IO_WORKERS: usize = 4;

/// The runtime the request tasks run on: a few workers are plenty for IO-bound tasks, and the
/// machine's other cores stay free for the driver thread. `workers` outside 1 to
/// [`MAX_IO_WORKERS`] is an error (it was clamped without a word: `--io-workers 64` ran 4).
pub fn runtime(workers: usize) -> std::io::Result<tokio::runtime::Runtime> {
    if !(1..=MAX_IO_WORKERS).contains(&workers) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{workers} IO workers: give 1 to {MAX_IO_WORKERS}"),
        ));
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("sim-measure-io")
        .enable_all()
        .build()
}

/// Runs against a real store, one after another.
pub struct Measured<'a> {
    store: RealStore,
    runtime: &'a tokio::runtime::Runtime,
    /// Before each case, open this many connections with 1-byte GETs that are not counted, so
    /// the first arm does not pay connection set-up that later arms get for free from the pool.
    warm_connections: u32,
    /// Say what runs on stderr.
    progress: bool,
    /// The open case's object keys.
    keys: Mutex<Vec<Path>>,
}

impl<'a> Measured<'a> {
    pub fn new(
        store: RealStore,
        runtime: &'a tokio::runtime::Runtime,
        warm_connections: u32,
        progress: bool,
    ) -> Self {
        Measured {
            store,
            runtime,
            warm_connections,
            progress,
            keys: Mutex::new(Vec::new()),
        }
    }
}

fn poisoned() -> RunError {
    RunError::Setup("a run panicked while holding the object keys".into())
}

impl Runner for Measured<'_> {
    fn parallel(&self) -> bool {
        false
    }

    fn check_case(&self, r: &Resolved) -> Result<(), RunError> {
        support::check(r).map_err(|u| RunError::Unsupported {
            world: "real",
            key: u.key,
            why: u.why,
        })
    }

    fn open_case(&self, r: &Resolved) -> Result<(), RunError> {
        let keys = keys::table_keys(&r.table, &self.store.prefix)
            .map_err(|e| RunError::Setup(e.to_string()))?;
        if self.warm_connections > 0 {
            warm(self.runtime, &self.store, &keys, self.warm_connections)?;
        }
        *self.keys.lock().map_err(|_| poisoned())? = keys;
        Ok(())
    }

    fn run(
        &self,
        r: &Resolved,
        arm: &ResolvedArm,
        _query_index: usize,
        query: &ResolvedQuery,
        replication: u32,
        rec: Recording,
    ) -> Result<RunOutput, RunFailure> {
        let keys = self.keys.lock().map_err(|_| poisoned())?;
        let view = RealStoreView {
            store: self.store.store.clone(),
            keys: &keys,
            runtime: self.runtime.handle(),
        };
        let mut world = S3World::new(view, &r.store);
        let out = match drive::run_in(&mut world, r, arm, query, rec) {
            Ok(out) => out,
            // The requests that ended before the failure are still traced.
            Err(error) => {
                let trace = if rec.trace {
                    world.take_trace()
                } else {
                    Vec::new()
                };
                return Err(RunFailure { error, trace });
            }
        };
        if self.progress {
            let m = &out.metrics;
            eprintln!(
                "measured {} / rep {replication} / {}: {} in {}, {} GETs",
                arm.name,
                query.name,
                units::format_bytes(m.value(drive::metric::Metric::StoreBytes) as u64),
                units::format_duration_ns(m.value(drive::metric::Metric::WallTime) as u64),
                m.value(drive::metric::Metric::Gets)
            );
        }
        Ok(out)
    }
}

/// Opens `n` pooled connections: `n` concurrent 1-byte GETs of the first data file.
fn warm(
    rt: &tokio::runtime::Runtime,
    store: &RealStore,
    keys: &[Path],
    n: u32,
) -> Result<(), RunError> {
    let Some(key) = keys.first() else {
        return Ok(());
    };
    let gets = (0..n).map(|_| {
        let s = store.store.clone();
        let k = key.clone();
        async move {
            let opts = object_store::GetOptions {
                range: Some(object_store::GetRange::Bounded(0..1)),
                ..Default::default()
            };
            s.get_opts(&k, opts).await?.bytes().await.map(|_| ())
        }
    });
    rt.block_on(futures::future::try_join_all(gets))
        .map(|_| ())
        .map_err(|e| RunError::Setup(format!("warming connections with `{key}`: {e}")))
}
