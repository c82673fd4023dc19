//! `sim measure`: the real driver. It runs the very same `planner::Reader` state machine as the
//! simulator, with a real clock and real ranged GETs against an S3 API (any `object_store`
//! store, in practice `AmazonS3`), and writes the same report and request trace as `sim run`,
//! so the two can be compared (issue 9) and `sim fit` / `sim replay` read its trace unchanged.
//!
//! Layout of the module: `driver` (the loop over the reader), `fetch` (one read's GET attempts
//! as a tokio task), `clock`, `counters` (store-side figures from the real requests, which
//! `driver::metrics::collect_metrics` turns into the same metrics as `sim run`'s), `keys` (object keys of data
//! files), `support` (scenario features the real driver refuses), `s3` (the client).
//!
//! Runs are sequential (cases x arms x replications, in the scenario's order): measurements
//! running side by side would share the network and disturb each other.

pub mod cli;
pub mod clock;
pub mod counters;
pub mod driver;
pub mod fetch;
pub mod keys;
pub mod s3;
pub mod support;

use crate::driver::{RunError, TraceRow};
use crate::report::{ArmReport, CaseReport, Report, RunMetrics};
use crate::run::{Labelled, ScenarioOutput};
use crate::scenario::{self, LoadedScenario, Resolved, ScenarioError, TableCache};
use object_store::path::Path;
use object_store::ObjectStore;
use std::sync::Arc;

pub use counters::first_byte_quantiles_ns;
pub use s3::{connect, S3Endpoint};

/// What to measure, besides the scenario.
#[derive(Debug, Clone, Default)]
pub struct MeasureOptions {
    /// Replications (default 1: a measurement is slow and real).
    pub replications: Option<u32>,
    /// Only these cases (all when empty).
    pub cases: Vec<String>,
    /// Only these arms, by name (all when empty).
    pub arms: Vec<String>,
    /// Record the request trace.
    pub trace: bool,
    /// Record the timeline (GETs in flight, bytes in flight, pool memory over time).
    pub timeline: bool,
    /// Before each case, open this many connections with 1-byte GETs that are not counted, so
    /// the first arm does not pay connection set-up that later arms get for free from the pool.
    pub warm_connections: u32,
    /// Say what runs on stderr.
    pub progress: bool,
}

/// The real store and where the table's objects are in it.
#[derive(Clone)]
pub struct RealStore {
    pub store: Arc<dyn ObjectStore>,
    /// Prepended to every data file's recorded path, joined by one '/' (may be empty).
    pub prefix: String,
}

/// Why a measurement could not run or finish.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("{}: case {case}: the real driver cannot honour {source}", path.display())]
    Unsupported {
        path: std::path::PathBuf,
        case: String,
        source: support::Unsupported,
    },
    #[error(transparent)]
    Key(#[from] keys::KeyError),
    #[error("case {case}, arm {arm}, replication {replication}, query {query}: {source}")]
    Run {
        case: String,
        arm: String,
        replication: u32,
        query: String,
        source: RunError,
    },
    #[error("no case is called {0}; the scenario has: {1}")]
    NoSuchCase(String, String),
    #[error("no arm is called {0}; the scenario has: {1}")]
    NoSuchArm(String, String),
    #[error("warming connections with `{key}`: {source}")]
    Warm {
        key: String,
        source: object_store::Error,
    },
    #[error("cannot start the IO runtime: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("writing CSV: {0}")]
    Csv(#[from] csv::Error),
}

/// The runtime the request tasks run on: a few workers are plenty for IO-bound tasks, and the
/// machine's other cores stay free for the driver thread.
pub fn runtime(workers: usize) -> Result<tokio::runtime::Runtime, MeasureError> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.clamp(1, 4))
        .thread_name("sim-measure-io")
        .enable_all()
        .build()?)
}

/// Measures the scenario's cases and arms (or the selected ones) against `store`, on `rt`.
pub fn measure_scenario(
    loaded: &LoadedScenario,
    opts: &MeasureOptions,
    store: &RealStore,
    rt: &tokio::runtime::Runtime,
) -> Result<ScenarioOutput, MeasureError> {
    let tables = TableCache::default();
    let all_cases = scenario::cases(loaded)?;
    for wanted in &opts.cases {
        if !all_cases.iter().any(|(n, _)| n == wanted) {
            let names: Vec<&str> = all_cases.iter().map(|(n, _)| n.as_str()).collect();
            return Err(MeasureError::NoSuchCase(wanted.clone(), names.join(", ")));
        }
    }
    // Resolve and check every case before the first GET, so a refusal costs nothing.
    let mut resolved: Vec<(String, Resolved)> = Vec::new();
    for (name, ovs) in all_cases {
        if !opts.cases.is_empty() && !opts.cases.contains(&name) {
            continue;
        }
        let s = loaded.with_overrides(&ovs)?;
        let mut r = scenario::resolve(&s, &tables)?;
        support::check(&r).map_err(|source| MeasureError::Unsupported {
            path: loaded.path.clone(),
            case: name.clone(),
            source,
        })?;
        for wanted in &opts.arms {
            if !r.arms.iter().any(|a| &a.name == wanted) {
                let names: Vec<&str> = r.arms.iter().map(|a| a.name.as_str()).collect();
                return Err(MeasureError::NoSuchArm(wanted.clone(), names.join(", ")));
            }
        }
        if !opts.arms.is_empty() {
            r.arms.retain(|a| opts.arms.contains(&a.name));
        }
        r.replications = opts.replications.unwrap_or(1).max(1);
        resolved.push((name, r));
    }

    let mut traces: Vec<Labelled<TraceRow>> = Vec::new();
    let mut timelines: Vec<Labelled<crate::driver::timeline::TimelineRow>> = Vec::new();
    let mut cases = Vec::new();
    let (seed, reps) = resolved
        .first()
        .map(|(_, r)| (r.seed, r.replications))
        .unwrap_or((0, 1));
    for (name, r) in &resolved {
        let keys = keys::table_keys(&r.table, &store.prefix)?;
        if opts.warm_connections > 0 {
            warm(rt, store, &keys, opts.warm_connections)?;
        }
        let world = driver::RealWorld {
            store: store.store.clone(),
            keys: &keys,
            runtime: rt.handle(),
        };
        let mut arms = Vec::new();
        for arm in &r.arms {
            let mut report = ArmReport {
                arm: arm.name.clone(),
                strategy: arm.strategy_name.clone(),
                runs: Vec::new(),
                per_query: Vec::new(),
            };
            for rep in 0..r.replications {
                let mut total = RunMetrics::default();
                let mut per_query = Vec::new();
                for q in &r.queries {
                    let out = driver::measure_once(r, arm, q, &world, opts.timeline).map_err(
                        |source| MeasureError::Run {
                            case: name.clone(),
                            arm: arm.name.clone(),
                            replication: rep,
                            query: q.name.clone(),
                            source,
                        },
                    )?;
                    if opts.progress {
                        eprintln!(
                            "measured {name} / {} / rep {rep} / {}: {} in {}, {} GETs",
                            arm.name,
                            q.name,
                            units::format_bytes(
                                out.metrics.get("store_bytes").unwrap_or(0.0) as u64
                            ),
                            units::format_duration_ns(
                                out.metrics.get("wall_time").unwrap_or(0.0) as u64
                            ),
                            out.metrics.get("gets").unwrap_or(0.0)
                        );
                    }
                    total.accumulate(&out.metrics);
                    if r.queries.len() > 1 {
                        per_query.push((q.name.clone(), out.metrics));
                    }
                    if opts.timeline {
                        timelines.push((
                            name.clone(),
                            arm.name.clone(),
                            rep,
                            q.name.clone(),
                            out.timeline,
                        ));
                    }
                    if opts.trace {
                        traces.push((
                            name.clone(),
                            arm.name.clone(),
                            rep,
                            q.name.clone(),
                            out.trace,
                        ));
                    }
                }
                crate::report::recompute_ratios(&mut total);
                if rep == 0 {
                    report.per_query = per_query;
                }
                report.runs.push(total);
            }
            arms.push(report);
        }
        cases.push(CaseReport {
            case: name.clone(),
            arms,
        });
    }
    // Requests only: the needed-range rows are not requests.
    let trace_rows = traces
        .iter()
        .flat_map(|t| t.4.iter())
        .filter(|row| !matches!(row.served_by, crate::driver::trace::ServedBy::Needed(_)))
        .count();
    Ok(ScenarioOutput {
        report: Report {
            scenario: loaded.file.name.clone(),
            seed,
            replications: reps,
            cases,
        },
        trace_csv: if opts.trace {
            crate::driver::trace::to_csv(&traces)?
        } else {
            String::new()
        },
        trace_rows,
        timeline_csv: if opts.timeline {
            crate::driver::timeline::to_csv(&timelines)?
        } else {
            String::new()
        },
        timelines,
    })
}

/// Opens `n` pooled connections: `n` concurrent 1-byte GETs of the first data file.
fn warm(
    rt: &tokio::runtime::Runtime,
    store: &RealStore,
    keys: &[Path],
    n: u32,
) -> Result<(), MeasureError> {
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
        .map_err(|source| MeasureError::Warm {
            key: key.to_string(),
            source,
        })
}
