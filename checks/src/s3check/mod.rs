//! `sim check-s3`: the simulator checked against a real S3 API (issue 9). Real Parquet files in
//! the shapes of two shipped scenarios are written, recorded (as `sim record` does) and uploaded
//! to the loopback test bed (s3s-fs behind a proxy that injects a round trip and paces each
//! connection); then, for `clickhouse-base` and `clickhouse-redesign`:
//!
//! - `sim measure` reads them through the proxy with real ranged GETs;
//! - `sim run` simulates the same scenario with a store model of what the proxy injects;
//! - `sim run` simulates it again, each arm with the model `sim fit --arm ARM` fits from that
//!   arm's measured run.
//!
//! GETs and bytes must be equal (the policy is deterministic); wall time, mean GETs in flight
//! and first-byte percentiles must be within [`Tolerances`]. `compare` holds the figures and the
//! verdicts, `shapes` the files and scenarios.

pub mod compare;
pub mod shapes;

use compare::{CheckReport, CheckRow, Figures, ModelKind};
use drive_s3::{Measured, RealStore, S3Endpoint};
use experiments::run::{self, RunOptions, ScenarioOutput};
use shapes::Shape;
use std::path::{Path, PathBuf};

pub use compare::Tolerances;

/// What to check.
#[derive(Debug, Clone)]
pub struct CheckConfig {
    /// Where the files, layouts, scenarios, measured traces and fitted models go (and the
    /// bed's objects, under `s3/`).
    pub work_dir: PathBuf,
    /// Round trip the proxy injects.
    pub rtt_ns: u64,
    /// Bandwidth the proxy paces each connection to, in bytes per second.
    pub bandwidth_bytes_per_s: u64,
    /// The shapes, in order.
    pub shapes: Vec<Shape>,
    /// The strategy presets compared, one arm each.
    pub strategies: Vec<String>,
    /// Measured replications per arm (the median is compared).
    pub measured_reps: u32,
    /// Simulated replications per arm and model (the median is compared).
    pub simulated_reps: u32,
    pub tolerances: Tolerances,
    /// Say what runs on stderr.
    pub progress: bool,
}

impl CheckConfig {
    /// The check: both shapes at a 30 ms round trip, 10 MiB/s a connection (so that 16
    /// streams ask the bed for 160 MiB/s, well under the ~500 MiB/s it serves on two cores).
    pub fn standard(work_dir: PathBuf) -> CheckConfig {
        CheckConfig {
            work_dir,
            rtt_ns: 30_000_000,
            bandwidth_bytes_per_s: 10 << 20,
            shapes: Shape::ALL.to_vec(),
            strategies: shapes::DEFAULT_STRATEGIES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            // Five: the large file's redesign makes 5 GETs a run, and a p90 over 25 first bytes
            // is not just the largest of them.
            measured_reps: 5,
            simulated_reps: 3,
            tolerances: Tolerances::default(),
            progress: false,
        }
    }
}

/// Why the check could not run (a figure outside its tolerance is not an error: it is in the
/// report).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("writing {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the test bed: {0}")]
    TestBed(#[from] testbed::TestBedError),
    #[error("recording the {shape} files: {source}")]
    Record {
        shape: &'static str,
        source: record::RecordError,
    },
    #[error("writing the {shape} layout: {source}")]
    Layout {
        shape: &'static str,
        source: layout::format::FormatError,
    },
    #[error(transparent)]
    Scenario(#[from] scenario::ScenarioError),
    #[error("measuring {shape}: {source}")]
    Measure {
        shape: &'static str,
        source: Box<run::ScenarioRunError>,
    },
    #[error("simulating {shape} ({model}): {source}")]
    Simulate {
        shape: &'static str,
        model: &'static str,
        source: Box<run::ScenarioRunError>,
    },
    #[error("fitting a store model to the measured {shape} trace: {source}")]
    Fit {
        shape: &'static str,
        source: tracefit::TraceError,
    },
    #[error("starting the measurement's IO runtime: {0}")]
    Runtime(std::io::Error),
    #[error("connecting to the test bed: {0}")]
    Connect(#[from] drive_s3::s3::ConnectError),
    #[error("{0}")]
    Figures(String),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> CheckError + '_ {
    move |source| CheckError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write(path: &Path, text: &str) -> Result<(), CheckError> {
    std::fs::write(path, text).map_err(io_err(path))
}

/// Runs the check; blocks for about a minute (most of it real GETs).
pub fn run_check(cfg: &CheckConfig) -> Result<CheckReport, CheckError> {
    let say = |m: String| {
        if cfg.progress {
            eprintln!("{m}");
        }
    };
    std::fs::create_dir_all(&cfg.work_dir).map_err(io_err(&cfg.work_dir))?;

    // 1. Files, written and recorded before the bed starts (its threads would only compete).
    let mut prepared = Vec::new();
    for &shape in &cfg.shapes {
        let files_dir = cfg.work_dir.join(shape.name());
        let paths = shape.write_files(&files_dir)?;
        let table = record::record_parquet_files(std::slice::from_ref(&files_dir))
            .and_then(|o| o.strict())
            .map_err(|source| CheckError::Record {
                shape: shape.name(),
                source,
            })?;
        let layout_name = format!("{}.layout", shape.name());
        let bytes = layout::format::write_table(&table).map_err(|source| CheckError::Layout {
            shape: shape.name(),
            source,
        })?;
        let layout_path = cfg.work_dir.join(&layout_name);
        std::fs::write(&layout_path, &bytes).map_err(io_err(&layout_path))?;
        say(format!(
            "check-s3: wrote and recorded {} ({} files, {})",
            shape.name(),
            paths.len(),
            units::format_bytes(table.files.iter().map(|f| f.size_bytes).sum())
        ));
        prepared.push((shape, paths, layout_name));
    }

    // 2. The bed, and the files in it.
    let bed = testbed::TestBed::start(testbed::TestBedConfig {
        data_dir: cfg.work_dir.join("s3"),
        rtt_ns: cfg.rtt_ns,
        bandwidth_bytes_per_s: Some(cfg.bandwidth_bytes_per_s),
    })?;
    for (shape, paths, _) in &prepared {
        bed.upload_all(paths, &format!("{}/", shape.name()))?;
    }
    let endpoint = S3Endpoint {
        endpoint: bed.endpoint_url(),
        bucket: bed.bucket().to_string(),
        access_key: Some(bed.access_key().to_string()),
        secret_key: Some(bed.secret_key().to_string()),
        region: Some(bed.region().to_string()),
    };
    let client = drive_s3::connect(&endpoint)?;
    let rt = drive_s3::runtime(2).map_err(CheckError::Runtime)?;
    say(format!(
        "check-s3: test bed at {} (injecting {} round trip, {} a connection)",
        bed.endpoint_url(),
        units::format_duration_ns(cfg.rtt_ns),
        units::format_bandwidth(cfg.bandwidth_bytes_per_s as f64)
    ));

    // 3. Measure, simulate with the injected model, fit, simulate with the fitted model.
    let injected = shapes::injected_store_yaml(cfg.rtt_ns, cfg.bandwidth_bytes_per_s);
    let mut rows = Vec::new();
    let mut fitted_models = Vec::new();
    for (shape, _, layout_name) in &prepared {
        let name = shape.name();
        let scenario_path = cfg.work_dir.join(format!("{name}.yaml"));
        write(
            &scenario_path,
            &shape.scenario_yaml(layout_name, &injected, &cfg.strategies),
        )?;
        let loaded = scenario::load(&scenario_path, &[])?;
        let real = RealStore {
            store: client.clone(),
            prefix: name.to_string(),
        };
        let opts = RunOptions {
            replications: Some(cfg.measured_reps.max(1)),
            trace: true,
            ..Default::default()
        };
        let runner = Measured::new(real, &rt, shape.warm_connections(), cfg.progress);
        let measured = run::run_scenario_with(&loaded, &opts, &runner).map_err(|source| {
            CheckError::Measure {
                shape: name,
                source: Box::new(source),
            }
        })?;
        let trace_path = cfg.work_dir.join(format!("{name}.measured.csv"));
        write(&trace_path, &measured.trace_csv)?;

        let sim_injected = simulate(&loaded, cfg, *shape, ModelKind::Injected)?;

        // What `sim fit --arm ARM` does with the measured trace (`--bandwidth-min-bytes`: see
        // below), for each arm: it keeps that arm's first replication. Until 2026-12-07 one
        // model, fitted from the first arm's run (base: one GET at a time), served both arms,
        // and the redesign's first bytes, taken at three GETs in flight where the bed's own time
        // is longer, came out 16% short at p90 on one run (its tolerance is 15%); before that,
        // every arm and replication was pooled, which no `sim fit` of the trace gives.
        let measured_figs = Figures::by_arm(&measured).map_err(CheckError::Figures)?;
        let mut sim_fitted = Vec::new();
        for (arm, _) in &measured_figs {
            let (out, summary) = fit_and_simulate(
                FitTarget {
                    shape: *shape,
                    arm,
                    layout_name,
                    trace_csv: &measured.trace_csv,
                    trace_path: &trace_path,
                },
                cfg,
                &say,
            )?;
            fitted_models.push((*shape, summary));
            let figures = Figures::by_arm(&out).map_err(CheckError::Figures)?;
            let own = figures
                .into_iter()
                .find(|(a, _)| a == arm)
                .ok_or_else(|| CheckError::Figures(format!("no simulated arm {arm}")))?;
            sim_fitted.push(own);
        }
        let simulated_injected = Figures::by_arm(&sim_injected).map_err(CheckError::Figures)?;
        for (model, simulated) in [
            (ModelKind::Injected, &simulated_injected),
            (ModelKind::Fitted, &sim_fitted),
        ] {
            for (arm, m) in &measured_figs {
                let s = simulated
                    .iter()
                    .find(|(a, _)| a == arm)
                    .map(|(_, f)| f.clone())
                    .ok_or_else(|| CheckError::Figures(format!("no simulated arm {arm}")))?;
                let row = CheckRow {
                    shape: *shape,
                    arm: arm.clone(),
                    model,
                    measured: m.clone(),
                    simulated: s,
                };
                say(format!("check-s3: {}", row.summary()));
                rows.push(row);
            }
        }
    }
    drop(bed);
    Ok(CheckReport {
        rtt_ns: cfg.rtt_ns,
        bandwidth_bytes_per_s: cfg.bandwidth_bytes_per_s,
        measured_reps: cfg.measured_reps,
        simulated_reps: cfg.simulated_reps,
        tolerances: cfg.tolerances,
        shapes: cfg.shapes.clone(),
        rows,
        fitted_models,
    })
}

/// One arm's measured run to fit a store model from.
struct FitTarget<'a> {
    shape: Shape,
    arm: &'a str,
    layout_name: &'a str,
    trace_csv: &'a str,
    trace_path: &'a Path,
}

/// Fits a store model from `target`'s arm's first replication, as `sim fit --arm ARM` does,
/// writes it (`SHAPE.ARM.fitted.yaml`) and simulates the shape's scenario on it. Returns the
/// simulation and a phrase saying what was fitted from which run.
fn fit_and_simulate(
    target: FitTarget<'_>,
    cfg: &CheckConfig,
    say: &dyn Fn(String),
) -> Result<(ScenarioOutput, String), CheckError> {
    let name = target.shape.name();
    let mut parsed = tracefit::parse_bytes(
        target.trace_csv.as_bytes(),
        &target.trace_path.display().to_string(),
        &tracefit::ParseOptions::default(),
    )
    .map_err(|source| CheckError::Fit {
        shape: name,
        source,
    })?;
    let choice = tracefit::RunChoice {
        arm: Some(target.arm.to_string()),
        ..Default::default()
    };
    for note in tracefit::keep_one_run(&mut parsed, &choice, true, "fitting")
        .map_err(|e| CheckError::Figures(format!("{name}: {e}")))?
    {
        say(format!("check-s3: {name}: {note}"));
    }
    let fitted_run = fitted_run_label(&parsed);
    let fit = tracefit::fit_store(&parsed, &fit_options()).map_err(|source| CheckError::Fit {
        shape: name,
        source,
    })?;
    let fitted_yaml = fit.to_yaml(&format!("fitted-{name}-{}", target.arm));
    write(
        &cfg.work_dir
            .join(format!("{name}.{}.fitted.yaml", target.arm)),
        &fitted_yaml,
    )?;
    let scenario_path = cfg
        .work_dir
        .join(format!("{name}.{}.fitted-scenario.yaml", target.arm));
    write(
        &scenario_path,
        &target
            .shape
            .scenario_yaml(target.layout_name, &fitted_yaml, &cfg.strategies),
    )?;
    let loaded = scenario::load(&scenario_path, &[])?;
    let out = simulate(&loaded, cfg, target.shape, ModelKind::Fitted)?;
    Ok((
        out,
        format!("{fitted_run}: {}", compare::fitted_summary(&fit)),
    ))
}

/// `sim run` of a shape's scenario on a store model, with its trace, `cfg.simulated_reps` times.
fn simulate(
    loaded: &scenario::LoadedScenario,
    cfg: &CheckConfig,
    shape: Shape,
    model: ModelKind,
) -> Result<ScenarioOutput, CheckError> {
    run::run_scenario(
        loaded,
        &RunOptions {
            replications: Some(cfg.simulated_reps.max(1)),
            trace: true,
            ..Default::default()
        },
    )
    .map_err(|source| CheckError::Simulate {
        shape: shape.name(),
        model: model.name(),
        source: Box::new(source),
    })
}

/// Which run of a measured trace the fit kept, as `arm base, replication 0 (the run ...)`.
fn fitted_run_label(trace: &tracefit::ParsedTrace) -> String {
    let first = trace.records.iter().find_map(|r| r.sim.as_ref());
    match first {
        Some(s) => format!(
            "arm {}, replication {} (the run `sim fit --arm {}` keeps)",
            s.arm, s.replication, s.arm
        ),
        None => "every request".into(),
    }
}

/// `sim fit`'s options for these traces: their times are the client's own nanoseconds (not an
/// access log's milliseconds), so requests from 64 KiB (6 ms at 10 MiB/s) measure the stream
/// bandwidth well; the default 4 MiB threshold would leave no request to fit it from.
pub fn fit_options() -> tracefit::FitOptions {
    tracefit::FitOptions {
        bandwidth_min_bytes: FIT_BANDWIDTH_MIN_BYTES,
        ..Default::default()
    }
}

/// The `--bandwidth-min-bytes` the check fits with.
pub const FIT_BANDWIDTH_MIN_BYTES: u64 = 64 * 1024;
