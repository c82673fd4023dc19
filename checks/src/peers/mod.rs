//! `sim check-peers`: the peer presets checked against the real readers they name. Parquet
//! files of three shapes are written by pyarrow (a writer other than the `parquet` crate),
//! recorded as `sim record parquet` records them, and served by the loopback test bed (a round
//! trip injected, each connection paced); each real reader reads a column subset several
//! times, each in a fresh process, with every request logged by the bed; `sim run` runs the
//! matching preset on the recorded layout. Compared: GET, HEAD and LIST counts, bytes, the
//! share of simulated ranges byte-identical to real ones, requests in flight and wall time.
//!
//! The store model is the injected round trip and bandwidth plus the bed's own time per
//! request (the median turn-around the log shows). Each reader's CPU (decode, and what else
//! its process does per byte on this machine) is fitted from the same reader on the same files
//! read directly, with nothing injected: a different measurement from the one checked, so the
//! check tests how the preset's requests and their overlap meet latency and bandwidth.

pub mod figures;
pub mod fit;
pub mod known;
pub mod readers;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use experiments::report::Metric;
use experiments::run::{run_scenario, RunOptions};
use figures::Figures;
pub use readers::PeerReader;

/// The shapes of files the check reads (`peers/make_files.py` writes them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerShape {
    /// One file of 64 row groups, 24 plain float columns, 155 KB of footer.
    Large,
    /// 24 files of 437 columns, 72 KiB footers (over a 64 KiB tail).
    Small,
    /// One file of 8 row groups with dictionaries, zstd, statistics and a page index.
    Indexed,
    /// `Small`'s files, the first of one row group and the others of four: the first finishes
    /// early (how a reader refills the slot it frees). Not in the default set: asked for by name.
    Uneven,
}

impl PeerShape {
    /// The shapes the check reads by default (the README's table).
    pub const ALL: [PeerShape; 3] = [PeerShape::Large, PeerShape::Small, PeerShape::Indexed];
    /// Every shape, the ones asked for by name included.
    pub const EVERY: [PeerShape; 4] = [
        PeerShape::Large,
        PeerShape::Small,
        PeerShape::Indexed,
        PeerShape::Uneven,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PeerShape::Large => "large",
            PeerShape::Small => "small",
            PeerShape::Indexed => "indexed",
            PeerShape::Uneven => "uneven",
        }
    }

    pub fn from_name(name: &str) -> Option<PeerShape> {
        PeerShape::EVERY.into_iter().find(|s| s.name() == name)
    }

    /// The columns the query reads.
    pub fn columns(self) -> Vec<String> {
        let v: &[&str] = match self {
            PeerShape::Large => &["c00", "c02", "c05", "c09", "c14", "c20"],
            PeerShape::Small | PeerShape::Uneven => &["c100", "c101", "c110", "c119", "c121"],
            PeerShape::Indexed => &["s0", "i1", "f2"],
        };
        v.iter().map(|s| s.to_string()).collect()
    }

    fn describe(self) -> &'static str {
        match self {
            PeerShape::Large => "1 file, 64 row groups of about 1 MiB, 24 float64 columns, uncompressed; 6 columns read",
            PeerShape::Small => "24 files of 437 int32 columns and 400 rows, snappy, footers of 72 KiB; 5 columns read",
            PeerShape::Indexed => "1 file, 8 row groups, 12 columns (dictionary strings, sorted ints, floats), zstd, statistics and a page index; 3 columns read",
            PeerShape::Uneven => "as `small`, but the first file is one row group of 400 rows and the other 23 four of 100 each: the first finishes early; 5 columns read",
        }
    }
}

/// How close a simulation must come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// Least share of simulated ranges identical to real ones.
    pub identical_ranges: f64,
    pub mean_in_flight: f64,
    pub wall_time: f64,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            identical_ranges: 0.95,
            mean_in_flight: 0.15,
            wall_time: 0.15,
        }
    }
}

#[derive(Debug, Clone)]
pub struct PeerCheckConfig {
    pub work_dir: PathBuf,
    /// The Python of the virtual environment with the readers (pinned in
    /// `checks/peers/requirements.txt`).
    pub python: PathBuf,
    pub rtt_ns: u64,
    pub bandwidth_bytes_per_s: u64,
    pub readers: Vec<PeerReader>,
    pub shapes: Vec<PeerShape>,
    /// Runs per reader and shape (their median wall time is compared; the requests are the
    /// first run's).
    pub reps: u32,
    pub tolerances: Tolerances,
    /// Keep one injected run's request log per reader and shape here (the fixtures the preset
    /// tests compare with).
    pub capture_dir: Option<PathBuf>,
    /// The readers' thread count (and the presets' matching knobs and the scenario's cores) in
    /// place of this machine's cores; `None`: the machine's.
    pub cpu_count: Option<u32>,
    pub progress: bool,
}

impl PeerCheckConfig {
    pub fn standard(work_dir: PathBuf, python: PathBuf) -> Self {
        PeerCheckConfig {
            work_dir,
            python,
            rtt_ns: 30_000_000,
            bandwidth_bytes_per_s: 10 << 20,
            readers: PeerReader::ALL.to_vec(),
            shapes: PeerShape::ALL.to_vec(),
            reps: 3,
            tolerances: Tolerances::default(),
            capture_dir: None,
            cpu_count: None,
            progress: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PeerCheckError {
    #[error("{0}")]
    Setup(String),
    #[error("the test bed: {0}")]
    TestBed(#[from] testbed::TestBedError),
    #[error("{shape} / {reader}: {message}")]
    Reader {
        shape: &'static str,
        reader: &'static str,
        message: String,
    },
    #[error("simulating {shape} / {reader}: {message}")]
    Simulate {
        shape: &'static str,
        reader: &'static str,
        message: String,
    },
    #[error("--capture: {0}")]
    Capture(String),
}

/// Writes one run's request log into `dir` (`--capture`): the shape's layout, and the log as an
/// access log and as the bed's CSV. A write that fails is an error naming the file (they were
/// ignored, and the run reported success with nothing captured).
fn capture(
    dir: &std::path::Path,
    layout: &std::path::Path,
    shape: PeerShape,
    reader: PeerReader,
    log: &[testbed::request_log::RequestRecord],
    bucket: &str,
) -> Result<(), PeerCheckError> {
    let failed = |path: &std::path::Path, e: std::io::Error| {
        PeerCheckError::Capture(format!("writing {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
    let layout_copy = dir.join(format!("{}.layout", shape.name()));
    std::fs::copy(layout, &layout_copy).map_err(|e| failed(&layout_copy, e))?;
    let stem = dir.join(format!("{}-{}", shape.name(), reader.name()));
    let access: String = log
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}\n", r.access_log_line(bucket, i)))
        .collect();
    for (path, text) in [
        (stem.with_extension("log"), access),
        (
            stem.with_extension("csv"),
            testbed::request_log::to_csv(log),
        ),
    ] {
        std::fs::write(&path, text).map_err(|e| failed(&path, e))?;
    }
    Ok(())
}

/// One reader x shape.
#[derive(Debug, Clone, PartialEq)]
pub struct PeerRow {
    pub shape: PeerShape,
    pub reader: PeerReader,
    pub measured: Figures,
    pub simulated: Figures,
    pub identical: f64,
    pub calibration: Calibration,
}

/// What the simulation of a row was given besides the injected round trip and bandwidth,
/// each fitted or measured on a run that is not the one checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// The median wall time of the same read from local files.
    pub local_wall_s: f64,
    /// The decode rate (decoded bytes per second on one thread) at which the simulated local
    /// read takes `local_wall_s`.
    pub decode: fit::Fitted,
    /// The median wall time through the bed with nothing injected.
    pub direct_wall_s: f64,
    /// The bed's streaming rate a connection on the direct runs (median of the timed bodies).
    pub direct_bandwidth_bytes_per_s: u64,
    /// The client's CPU per request (`cpu.network.per_request`, on the machine's cores), in
    /// ns, at which the simulated direct run takes `direct_wall_s`.
    pub client: fit::Fitted,
    /// The bed's own time per request on the injected runs (median turn-around).
    pub overhead_ns: u64,
}

impl Calibration {
    /// The client's CPU per request, whole nanoseconds.
    pub fn client_ns(&self) -> u64 {
        self.client.value.round() as u64
    }

    /// One line: `local 0.03s: decode 12MiB/s; direct 0.07s at 2GiB/s: 365us CPU a request`.
    pub fn describe(&self) -> String {
        let bound = |f: &fit::Fitted| if f.at_bound { " (at its bound)" } else { "" };
        format!(
            "local {:.3}s: decode {}{}; direct {:.3}s at {}: {} CPU a request{}",
            self.local_wall_s,
            units::format_bandwidth(self.decode.value),
            bound(&self.decode),
            self.direct_wall_s,
            units::format_bandwidth(self.direct_bandwidth_bytes_per_s as f64),
            units::format_duration_ns(self.client_ns()),
            bound(&self.client),
        )
    }
}

impl PeerRow {
    /// Every figure outside its tolerance, the timing ones with their figure.
    pub fn misses(&self, t: &Tolerances) -> Vec<(Option<known::TimingFigure>, String)> {
        let (m, s) = (&self.measured, &self.simulated);
        let mut out = Vec::new();
        for (what, a, b) in [
            ("GETs", m.gets, s.gets),
            ("HEADs", m.heads, s.heads),
            ("LISTs", m.lists, s.lists),
            ("bytes", m.bytes, s.bytes),
        ] {
            if a != b {
                out.push((None, format!("{what} {a} measured vs {b} simulated")));
            }
        }
        if self.identical < t.identical_ranges {
            out.push((
                None,
                format!(
                    "{:.1}% of the ranges identical (at least {:.0}%)",
                    100.0 * self.identical,
                    100.0 * t.identical_ranges
                ),
            ));
        }
        for (figure, what, a, b, tol) in [
            (
                known::TimingFigure::InFlight,
                "mean requests in flight",
                m.mean_in_flight,
                s.mean_in_flight,
                t.mean_in_flight,
            ),
            (
                known::TimingFigure::Wall,
                "wall time",
                m.wall_s,
                s.wall_s,
                t.wall_time,
            ),
        ] {
            let e = if a > 0.0 { b / a - 1.0 } else { f64::INFINITY };
            if !(e.abs() <= tol) {
                out.push((
                    Some(figure),
                    format!(
                        "{what} {b:.3} simulated vs {a:.3} measured ({:+.1}%)",
                        100.0 * e
                    ),
                ));
            }
        }
        out
    }

    fn known(&self, known: &[known::KnownMiss], figure: known::TimingFigure) -> Option<String> {
        known
            .iter()
            .find(|k| k.shape == self.shape && k.reader == self.reader && k.figure == figure)
            .map(|k| k.reason.clone())
    }

    /// The misses that are not known ones.
    pub fn failures(&self, t: &Tolerances, known: &[known::KnownMiss]) -> Vec<String> {
        self.misses(t)
            .into_iter()
            .filter(|(f, _)| f.is_none_or(|f| self.known(known, f).is_none()))
            .map(|(_, m)| m)
            .collect()
    }
}

pub struct PeerReport {
    pub config: PeerCheckConfig,
    pub rows: Vec<PeerRow>,
    /// The committed known misses (`checks/peers/known-misses.txt`).
    pub known: Vec<known::KnownMiss>,
}

impl PeerReport {
    /// Figures outside their tolerance that are not known misses: the check fails on these.
    pub fn failures(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|r| {
                r.failures(&self.config.tolerances, &self.known)
                    .into_iter()
                    .map(move |f| format!("{} / {}: {f}", r.shape.name(), r.reader.name()))
            })
            .collect()
    }

    /// Known misses of rows that ran whose figure is now within its tolerance.
    pub fn stale_known(&self) -> Vec<String> {
        let t = &self.config.tolerances;
        self.known
            .iter()
            .filter(|k| {
                self.rows.iter().any(|r| {
                    r.shape == k.shape
                        && r.reader == k.reader
                        && !r.misses(t).iter().any(|(f, _)| *f == Some(k.figure))
                })
            })
            .map(|k| format!("{} {} {}", k.shape.name(), k.reader.name(), k.figure.name()))
            .collect()
    }

    /// The README's table.
    pub fn markdown(&self) -> String {
        let c = &self.config;
        let t = &c.tolerances;
        let mut out = String::new();
        if let Some(n) = c.cpu_count {
            let _ = write!(
                out,
                "Readers, presets and the scenario's cores on {n} threads (`--cpu-count`), not \
                 this machine's cores. "
            );
        }
        let _ = writeln!(
            out,
            "Injected by the proxy: a {} round trip, {} a connection. Measured: {} runs of each \
             real reader, each in a fresh process (arrow-rs: a fresh runtime and client), wall \
             time their median, requests (counts, bytes, ranges, in flight) the first run's, \
             the one the fixtures keep; simulated: `sim run` with the preset on the recorded layout. Tolerances: \
             GET, HEAD and LIST counts and bytes equal, at least {:.0}% of the simulated ranges \
             identical to real ones, mean requests in flight ±{:.0}%, wall time ±{:.0}%.\n",
            units::format_duration_ns(c.rtt_ns),
            units::format_bandwidth(c.bandwidth_bytes_per_s as f64),
            c.reps,
            100.0 * t.identical_ranges,
            100.0 * t.mean_in_flight,
            100.0 * t.wall_time,
        );
        out.push_str("| Shape | Reader | Preset | GETs | HEADs | LISTs | Bytes | Identical ranges | Requests in flight, mean measured / simulated | max | Wall time measured | simulated | Within |\n");
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.rows {
            let (m, s) = (&r.measured, &r.simulated);
            let eq = |a: u64, b: u64, f: &dyn Fn(u64) -> String| {
                if a == b {
                    format!("{} = {}", f(a), f(b))
                } else {
                    format!("{} ≠ {}", f(a), f(b))
                }
            };
            let n = |v: u64| v.to_string();
            let b = |v: u64| units::format_bytes(v);
            let misses = r.misses(t);
            let within = if misses.is_empty() {
                "yes".to_string()
            } else if r.failures(t, &self.known).is_empty() {
                "known miss (below)".to_string()
            } else {
                "**no**".to_string()
            };
            let _ = writeln!(
                out,
                "| {} | {} | `{}` | {} | {} | {} | {} | {:.1}% | {:.1} / {:.1} ({:+.0}%) | {} / {} | {:.2}s | {:.2}s ({:+.1}%) | {} |",
                r.shape.name(),
                r.reader.name(),
                r.reader.preset(),
                eq(m.gets, s.gets, &n),
                eq(m.heads, s.heads, &n),
                eq(m.lists, s.lists, &n),
                eq(m.bytes, s.bytes, &b),
                100.0 * r.identical,
                m.mean_in_flight,
                s.mean_in_flight,
                100.0 * (s.mean_in_flight / m.mean_in_flight.max(1e-9) - 1.0),
                m.max_in_flight,
                s.max_in_flight,
                m.wall_s,
                s.wall_s,
                100.0 * (s.wall_s / m.wall_s.max(1e-9) - 1.0),
                within,
            );
        }
        out.push('\n');
        for r in &self.rows {
            for (figure, miss) in r.misses(t) {
                if let Some(reason) = figure.and_then(|f| r.known(&self.known, f)) {
                    let _ = writeln!(
                        out,
                        "- Known miss, `{}` / `{}`: {miss}. {reason}",
                        r.shape.name(),
                        r.reader.name()
                    );
                }
            }
        }
        for shape in &c.shapes {
            let _ = writeln!(out, "- `{}`: {}.", shape.name(), shape.describe());
        }
        let _ = writeln!(
            out,
            "- Simulated with: the injected round trip and bandwidth; the bed's own time per request (each row's median turn-around of its logged requests; the first row's: {}); each reader's decode rate, fitted so that the simulated read of the same files from local disk takes the measured time; and the client's CPU per request (on the machine's cores, before each request goes out), fitted so that the simulated read through the bed with nothing injected (at the bed's streaming rate, timed on those runs) takes the measured time. Neither fit sees the run checked:",
            self.rows.first().map_or_else(
                || "-".into(),
                |r| units::format_duration_ns(r.calibration.overhead_ns)
            )
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "  - `{}` / `{}`: {}.",
                r.shape.name(),
                r.reader.name(),
                r.calibration.describe()
            );
        }
        out
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The scripts the check runs, written into the work directory (the binary carries them).
/// Where the decode rate is looked for.
const CPU_FIT_BYTES_PER_S: fit::Range = fit::Range {
    lo: 1e5,
    hi: 1e12,
    log: true,
};
/// Where the client's CPU per request is looked for.
const CLIENT_FIT_NS: fit::Range = fit::Range {
    lo: 0.0,
    hi: 50e6,
    log: false,
};
/// The local read's store: a first byte of 1 us (a page-cache read), this bandwidth: only the
/// CPU takes time.
const LOCAL_FIRST_BYTE_NS: u64 = 1_000;
const LOCAL_BANDWIDTH_BYTES_PER_S: u64 = 100 << 30;
/// The bed's bandwidth with nothing injected when no body was long enough to time.
const DIRECT_BANDWIDTH_BYTES_PER_S: u64 = 2 << 30;
/// The shortest body whose streaming rate is timed.
const TIMED_BODY_BYTES: u64 = 256 << 10;

/// A logged GET's body rate, bytes per second, if the body is long enough to time.
fn streaming_rate(r: &testbed::request_log::RequestRecord) -> Option<f64> {
    let ns = r.last_byte_ns.saturating_sub(r.first_byte_ns);
    (r.bytes_sent >= TIMED_BODY_BYTES && ns > 0).then(|| r.bytes_sent as f64 * 1e9 / ns as f64)
}

const MAKE_FILES: &str = include_str!("../../peers/make_files.py");
const READ: &str = include_str!("../../peers/read.py");

fn write(path: &Path, text: &str) -> Result<(), PeerCheckError> {
    std::fs::write(path, text)
        .map_err(|e| PeerCheckError::Setup(format!("writing {}: {e}", path.display())))
}

/// What a simulated run of the check is given besides the layout and the preset.
#[derive(Debug, Clone, Copy)]
struct SimInputs {
    /// The store's constant time to first byte.
    first_byte_ns: u64,
    /// The store's constant bandwidth a connection.
    bandwidth: u64,
    /// Decoded bytes one decode thread produces a second.
    cpu_bytes_per_s: f64,
    /// The client's CPU per request (`cpu.network.per_request`), on `cores` threads.
    client_ns: u64,
}

/// A scenario of one arm (`reader`'s preset) on `layout` with the store and CPU of `inputs`
/// on `cores` cores; the CPU does nothing else.
fn scenario_yaml(
    shape: PeerShape,
    reader: PeerReader,
    layout: &Path,
    inputs: SimInputs,
    cores: u32,
) -> String {
    let SimInputs {
        first_byte_ns,
        bandwidth,
        cpu_bytes_per_s,
        client_ns,
    } = inputs;
    let settings: String = reader
        .settings(cores)
        .iter()
        .map(|(k, v)| format!("{k}: {v}, "))
        .collect();
    let cpu = cpu_bytes_per_s.round().max(1.0) as u64;
    format!(
        "name: peers-{shape}\nseed: 1\ntable:\n  layout: {layout}\nquery:\n  columns: [{cols}]\n\
         store:\n  name: bed\n  first_byte: {{ distribution: constant, value: {first_byte_ns}ns }}\n  \
         stream_bandwidth: {{ distribution: constant, value: {bandwidth}B/s }}\n  nic: 100GiB/s\n  \
         retry: {{ max_attempts: 1, backoff_initial: 25ms, backoff_max: 1s }}\n  \
         price: {{ per_1000_gets_usd: 0.0004 }}\n\
         cpu:\n  cores: {cores}\n  decode: {{ compressed_bandwidth: 1000GiB/s, decoded_bandwidth: {cpu}B/s, per_task: 0ns }}\n  \
         consumer: {{ per_row: 0ns, bandwidth: 1000GiB/s, per_chunk: 0ns }}\n  \
         network: {{ per_request: {client_ns}ns }}\n\
         arms:\n  - {{ name: {arm}, strategy: {preset}, settings: {{ {settings} }} }}\n",
        shape = shape.name(),
        layout = layout.display(),
        cols = shape.columns().join(", "),
        arm = reader.name(),
        preset = reader.preset(),
    )
}

/// One simulated run: its trace's figures.
fn simulate(
    yaml: &str,
    path: &Path,
    reader: PeerReader,
    names: &[String],
) -> Result<Figures, String> {
    let loaded = scenario::parse(path, yaml, &[]).map_err(|e| e.to_string())?;
    let out = run_scenario(
        &loaded,
        &RunOptions {
            trace: true,
            ..Default::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let wall = out
        .report
        .cases
        .first()
        .and_then(|c| c.arms.first())
        .map_or(f64::NAN, |a| a.mean(Metric::WallTime) / 1e9);
    let trace = tracefit::parse_bytes(
        out.trace_csv.as_bytes(),
        "sim",
        &tracefit::ParseOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    Ok(figures::simulated(&trace, reader.name(), names, wall))
}

/// A real reader's captured run (`sim check-peers --capture`) against the preset, without
/// Python or the bed: the request stream only (counts, bytes, identical ranges).
#[derive(Debug, Clone, PartialEq)]
pub struct FixtureCheck {
    pub measured: Figures,
    pub simulated: Figures,
    pub identical: f64,
}

/// The cores of the machine the fixtures were captured on (the readers' thread counts).
pub const FIXTURE_CORES: u32 = 2;

/// Replays the captured request log `csv` of `reader` on `shape` (whose recorded layout is
/// `layout`) through the preset; `work_dir` holds the scenario written for it.
pub fn replay_fixture(
    shape: PeerShape,
    reader: PeerReader,
    layout: &Path,
    csv: &str,
    work_dir: &Path,
) -> Result<FixtureCheck, PeerCheckError> {
    let setup = |e: String| PeerCheckError::Setup(e);
    let log =
        testbed::request_log::from_csv(csv).map_err(|e| setup(format!("the captured log: {e}")))?;
    let bytes = std::fs::read(layout).map_err(|e| setup(format!("{}: {e}", layout.display())))?;
    let table = layout::format::read_table(&bytes)
        .map_err(|e| setup(format!("{}: {e}", layout.display())))?;
    let names: Vec<String> = table
        .files
        .iter()
        .map(|f| f.path.rsplit('/').next().unwrap_or(&f.path).to_string())
        .collect();
    let rtt_ns = 30_000_000;
    let bandwidth = 10 << 20;
    let measured = figures::measured(&log, rtt_ns, bandwidth, 0.0);
    let inputs = SimInputs {
        first_byte_ns: rtt_ns,
        bandwidth,
        cpu_bytes_per_s: 1e9,
        client_ns: 0,
    };
    let yaml = scenario_yaml(shape, reader, layout, inputs, FIXTURE_CORES);
    let path = work_dir.join(format!("{}-{}.yaml", shape.name(), reader.name()));
    write(&path, &yaml)?;
    let simulated =
        simulate(&yaml, &path, reader, &names).map_err(|message| PeerCheckError::Simulate {
            shape: shape.name(),
            reader: reader.name(),
            message,
        })?;
    let identical = figures::identical_share(&measured.requests, &simulated.requests);
    Ok(FixtureCheck {
        measured,
        simulated,
        identical,
    })
}

/// Runs the check; several minutes (most of it real readers waiting on the network).
pub fn run_check(cfg: &PeerCheckConfig) -> Result<PeerReport, PeerCheckError> {
    let say = |m: String| {
        if cfg.progress {
            eprintln!("check-peers: {m}");
        }
    };
    let setup = |e: String| PeerCheckError::Setup(e);
    std::fs::create_dir_all(&cfg.work_dir)
        .map_err(|e| setup(format!("{}: {e}", cfg.work_dir.display())))?;
    if cfg.cpu_count.is_some() && cfg.readers.contains(&PeerReader::ArrowRs) {
        return Err(setup(
            "a CPU count applies to pyarrow, polars and DuckDB (and their presets), not to arrow-rs, which this check reads with on its own runtime: leave arrow-rs out (--reader)".into(),
        ));
    }
    let cores = cfg
        .cpu_count
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let make = cfg.work_dir.join("make_files.py");
    let read = cfg.work_dir.join("read.py");
    write(&make, MAKE_FILES)?;
    write(&read, READ)?;
    let py = readers::PythonRun {
        python: &cfg.python,
        script: &read,
        threads: cfg.cpu_count,
    };

    // 1. The files (pyarrow writes them), recorded.
    let files_dir = cfg.work_dir.join("files");
    let status = std::process::Command::new(&cfg.python)
        .arg(&make)
        .arg(&files_dir)
        .status()
        .map_err(|e| {
            setup(format!(
                "cannot run {}: {e} (scripts/python-env makes the environment)",
                cfg.python.display()
            ))
        })?;
    if !status.success() {
        return Err(setup(format!(
            "{} make_files.py failed ({status})",
            cfg.python.display()
        )));
    }
    let mut shapes = Vec::new();
    for &shape in &cfg.shapes {
        let dir = files_dir.join(shape.name());
        let table = record::record_parquet_files(std::slice::from_ref(&dir))
            .and_then(|o| o.strict())
            .map_err(|e| setup(format!("recording {}: {e}", dir.display())))?;
        let layout = cfg.work_dir.join(format!("{}.layout", shape.name()));
        let bytes = layout::format::write_table(&table).map_err(|e| setup(e.to_string()))?;
        std::fs::write(&layout, bytes).map_err(|e| setup(e.to_string()))?;
        let names: Vec<String> = table
            .files
            .iter()
            .map(|f| f.path.rsplit('/').next().unwrap_or(&f.path).to_string())
            .collect();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| setup(e.to_string()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        paths.sort();
        shapes.push((shape, layout, names, paths));
    }

    // 2. The bed, and the files in it.
    let bed = testbed::TestBed::start(testbed::TestBedConfig {
        data_dir: cfg.work_dir.join("s3"),
        rtt_ns: cfg.rtt_ns,
        bandwidth_bytes_per_s: Some(cfg.bandwidth_bytes_per_s),
    })?;
    for (shape, _, _, paths) in &shapes {
        bed.upload_all(paths, &format!("{}/", shape.name()))?;
    }
    let _ = bed.take_requests();
    say(format!(
        "test bed at {} ({} round trip, {} a connection); direct at {}",
        bed.endpoint_url(),
        units::format_duration_ns(cfg.rtt_ns),
        units::format_bandwidth(cfg.bandwidth_bytes_per_s as f64),
        bed.direct_url()
    ));

    let mut rows = Vec::new();
    for (shape, layout, names, _) in &shapes {
        let keys: Vec<String> = names
            .iter()
            .map(|n| format!("{}/{n}", shape.name()))
            .collect();
        let columns = shape.columns();
        for &reader in &cfg.readers {
            let err = |message: String| PeerCheckError::Reader {
                shape: shape.name(),
                reader: reader.name(),
                message,
            };
            let run = |endpoint: &str| -> Result<
                (readers::RunResult, Vec<testbed::request_log::RequestRecord>),
                PeerCheckError,
            > {
                let _ = bed.take_requests();
                let r = readers::run_once(reader, py, endpoint, bed.bucket(), &keys, &columns)
                    .map_err(err)?;
                // Let the last responses' bodies finish their log records.
                std::thread::sleep(std::time::Duration::from_millis(150));
                let served = bed.take_requests();
                if bed.dropped_requests() > 0 {
                    return Err(err(format!(
                        "the test bed's request log dropped {} requests (more than {} untaken)",
                        bed.dropped_requests(),
                        testbed::request_log::MAX_CSV_ROWS
                    )));
                }
                Ok((r, served))
            };
            // The same read three ways: from local files (CPU only), through the bed with
            // nothing injected (the per-request costs of the client and the bed), and through
            // the bed with the round trip and bandwidth injected (the row checked).
            let mut local_walls = Vec::new();
            for _ in 0..cfg.reps.max(1) {
                let r = readers::run_once(
                    reader,
                    py,
                    &readers::local_endpoint(&files_dir),
                    bed.bucket(),
                    &keys,
                    &columns,
                )
                .map_err(err)?;
                local_walls.push(r.wall_s);
            }
            let mut direct_walls = Vec::new();
            let mut direct_turnaround = Vec::new();
            let mut direct_rates = Vec::new();
            for _ in 0..cfg.reps.max(1) {
                let (r, log) = run(&bed.direct_url())?;
                direct_walls.push(r.wall_s);
                direct_turnaround.extend(
                    log.iter()
                        .map(|l| l.first_byte_ns.saturating_sub(l.start_ns) as f64),
                );
                direct_rates.extend(log.iter().filter_map(streaming_rate));
            }
            // The bed's own streaming rate with nothing injected (its file reads and the
            // proxy on this machine's cores), as the logged bodies went.
            let direct_bandwidth = if direct_rates.is_empty() {
                DIRECT_BANDWIDTH_BYTES_PER_S
            } else {
                median(direct_rates).round() as u64
            };
            // The first run's log is the one checked and captured; of the others only their
            // turn-around times are kept (every run's whole log was held).
            let mut walls = Vec::new();
            let mut turnaround = Vec::new();
            let mut first_log = None;
            for _ in 0..cfg.reps.max(1) {
                let (r, log) = run(&bed.endpoint_url())?;
                walls.push(r.wall_s);
                turnaround.extend(
                    log.iter()
                        .map(|l| l.first_byte_ns.saturating_sub(l.start_ns) as f64),
                );
                first_log.get_or_insert(log);
            }
            let overhead_ns = median(turnaround) as u64;
            let direct_overhead = median(direct_turnaround) as u64;
            let log = first_log.unwrap_or_default();
            if let Some(dir) = &cfg.capture_dir {
                capture(dir, layout, *shape, reader, &log, bed.bucket())?;
            }
            let measured =
                figures::measured(&log, cfg.rtt_ns, cfg.bandwidth_bytes_per_s, median(walls));

            // 3. The calibration, on the runs that are not checked: the decode rate at which
            // the simulated local read takes its measured time, then the client's CPU per
            // request at which the simulated direct run takes its own.
            let sim_err = |message: String| PeerCheckError::Simulate {
                shape: shape.name(),
                reader: reader.name(),
                message,
            };
            let yaml_path = cfg
                .work_dir
                .join(format!("{}-{}.yaml", shape.name(), reader.name()));
            let wall_at =
                |first_byte_ns: u64, bandwidth: u64, cpu_bytes_per_s: f64, client_ns: u64| {
                    let inputs = SimInputs {
                        first_byte_ns,
                        bandwidth,
                        cpu_bytes_per_s,
                        client_ns,
                    };
                    let y = scenario_yaml(*shape, reader, layout, inputs, cores);
                    simulate(&y, &yaml_path, reader, names)
                        .map(|f| f.wall_s)
                        .map_err(sim_err)
                };
            let (local_wall, direct_wall) = (median(local_walls), median(direct_walls));
            let cpu_fit = fit::decreasing(CPU_FIT_BYTES_PER_S, local_wall, |cpu| {
                wall_at(LOCAL_FIRST_BYTE_NS, LOCAL_BANDWIDTH_BYTES_PER_S, cpu, 0)
            })?;
            let cpu = cpu_fit.value;
            let client_fit = fit::increasing(CLIENT_FIT_NS, direct_wall, |ns| {
                wall_at(direct_overhead, direct_bandwidth, cpu, ns.round() as u64)
            })?;
            let calibration = Calibration {
                local_wall_s: local_wall,
                decode: cpu_fit,
                direct_wall_s: direct_wall,
                direct_bandwidth_bytes_per_s: direct_bandwidth,
                client: client_fit,
                overhead_ns,
            };

            // 4. The injected run, simulated: nothing fitted on it.
            let inputs = SimInputs {
                first_byte_ns: cfg.rtt_ns + overhead_ns,
                bandwidth: cfg.bandwidth_bytes_per_s,
                cpu_bytes_per_s: cpu,
                client_ns: calibration.client_ns(),
            };
            let yaml = scenario_yaml(*shape, reader, layout, inputs, cores);
            write(&yaml_path, &yaml)?;
            let simulated = simulate(&yaml, &yaml_path, reader, names).map_err(sim_err)?;
            let identical = figures::identical_share(&measured.requests, &simulated.requests);
            let row = PeerRow {
                shape: *shape,
                reader,
                measured,
                simulated,
                identical,
                calibration,
            };
            say(format!(
                "{} / {}: {} GETs {} HEADs measured, {} / {} simulated; {:.0}% identical; wall {:.2}s vs {:.2}s; {}{}",
                shape.name(),
                reader.name(),
                row.measured.gets,
                row.measured.heads,
                row.simulated.gets,
                row.simulated.heads,
                100.0 * identical,
                row.measured.wall_s,
                row.simulated.wall_s,
                row.calibration.describe(),
                match row.misses(&cfg.tolerances).as_slice() {
                    [] => String::new(),
                    f => format!(
                        " -- {}",
                        f.iter().map(|(_, m)| m.as_str()).collect::<Vec<_>>().join("; ")
                    ),
                }
            ));
            rows.push(row);
        }
    }
    drop(bed);
    Ok(PeerReport {
        config: cfg.clone(),
        rows,
        known: known::committed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--capture` into a place that cannot be written fails, naming the file (the writes'
    /// errors were dropped); into a directory it writes the layout and both logs.
    #[test]
    fn a_capture_that_cannot_be_written_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = tmp.path().join("l.layout");
        std::fs::write(&layout, b"layout").unwrap();
        let log = vec![testbed::request_log::RequestRecord {
            method: "GET".into(),
            key: "large/f.parquet".into(),
            query: String::new(),
            range_header: Some("bytes=0-99".into()),
            range: Some((0, 100)),
            status: 206,
            bytes_sent: 100,
            object_size: Some(1000),
            start_ns: 0,
            first_byte_ns: 1_000,
            last_byte_ns: 2_000,
            wall_unix_ms: 1_700_000_000_000,
        }];
        let blocked = layout.join("under-a-file");
        let err = capture(
            &blocked,
            &layout,
            PeerShape::Large,
            PeerReader::Polars,
            &log,
            "b",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("--capture") && err.contains("under-a-file"),
            "{err}"
        );
        let dir = tmp.path().join("captured");
        capture(
            &dir,
            &layout,
            PeerShape::Large,
            PeerReader::Polars,
            &log,
            "b",
        )
        .unwrap();
        let stem = format!("large-{}", PeerReader::Polars.name());
        for name in [
            "large.layout".to_string(),
            format!("{stem}.log"),
            format!("{stem}.csv"),
        ] {
            assert!(dir.join(&name).is_file(), "{name}");
        }
    }

    fn figures(in_flight: f64, wall_s: f64) -> Figures {
        Figures {
            gets: 10,
            heads: 1,
            lists: 0,
            bytes: 1000,
            mean_in_flight: in_flight,
            max_in_flight: 2,
            wall_s,
            requests: Vec::new(),
        }
    }

    fn report(simulated: Figures, known: &str) -> PeerReport {
        PeerReport {
            config: PeerCheckConfig::standard(PathBuf::from("/tmp"), PathBuf::from("python")),
            rows: vec![PeerRow {
                shape: PeerShape::Large,
                reader: PeerReader::DuckDb,
                measured: figures(1.0, 1.0),
                simulated,
                identical: 1.0,
                calibration: Calibration {
                    local_wall_s: 0.5,
                    decode: fit::Fitted {
                        value: 1e9,
                        at_bound: false,
                    },
                    direct_wall_s: 0.6,
                    direct_bandwidth_bytes_per_s: 2 << 30,
                    client: fit::Fitted {
                        value: 0.0,
                        at_bound: true,
                    },
                    overhead_ns: 0,
                },
            }],
            known: known::parse(known).unwrap(),
        }
    }

    #[test]
    fn the_table_says_what_the_proxy_injected_and_a_thread_count_given() {
        let mut r = report(figures(1.0, 1.0), "");
        let text = r.markdown();
        assert!(
            text.contains("a 30ms round trip, 10MiB/s a connection"),
            "{text}"
        );
        assert!(!text.contains("--cpu-count"), "{text}");
        r.config.cpu_count = Some(8);
        r.config.rtt_ns = 5_000_000;
        let text = r.markdown();
        assert!(text.contains("on 8 threads (`--cpu-count`)"), "{text}");
        assert!(text.contains("a 5ms round trip"), "{text}");
    }

    #[test]
    fn a_known_timing_miss_is_shown_and_does_not_fail_the_check() {
        let r = report(figures(1.5, 1.0), "large duckdb in-flight: the reason\n");
        assert!(r.failures().is_empty());
        assert!(r.markdown().contains("known miss (below)"));
        assert!(r.markdown().contains("the reason"));
        // Unknown: the wall time.
        let r = report(figures(1.5, 2.0), "large duckdb in-flight: the reason\n");
        assert_eq!(r.failures().len(), 1, "{:?}", r.failures());
        // Counts are never known misses.
        let mut s = figures(1.0, 1.0);
        s.gets = 11;
        let r = report(s, "large duckdb in-flight: x\nlarge duckdb wall: y\n");
        assert_eq!(r.failures().len(), 1);
        assert_eq!(r.stale_known().len(), 2, "both timing figures are within");
    }
}
