//! The real readers `sim check-peers` runs, and how: pyarrow, polars and DuckDB in a fresh
//! Python process each run (`peers/read.py`, from the virtual environment the test command
//! makes), arrow-rs in this process (`testbed::arrow_rs`, a fresh runtime and client each run).

use planner::settings::{
    CPU_COUNT, DUCKDB_THREADS, POLARS_CHUNK_SIZE, POLARS_FOOTER_READ_SIZE,
    POLARS_INFLIGHT_INIT_BYTE_BUDGET, POLARS_MAX_THREADS, POLARS_RESOLVE_SAMPLE_LIMIT, PRE_BUFFER,
};
use std::path::Path;
use std::process::Command;

/// One reader as the check runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerReader {
    /// `pq.read_table(..., pre_buffer=True)` (the default).
    Pyarrow,
    /// `pq.read_table(..., pre_buffer=False)`.
    PyarrowNoPrebuffer,
    /// `pl.scan_parquet(...).select(...).collect()`.
    Polars,
    /// `SELECT ... FROM read_parquet([...])` with httpfs.
    DuckDb,
    /// `ParquetRecordBatchStreamBuilder` over `ParquetObjectReader`.
    ArrowRs,
}

impl PeerReader {
    pub const ALL: [PeerReader; 5] = [
        PeerReader::Pyarrow,
        PeerReader::PyarrowNoPrebuffer,
        PeerReader::Polars,
        PeerReader::DuckDb,
        PeerReader::ArrowRs,
    ];

    /// The name `read.py` takes and reports use.
    pub fn name(self) -> &'static str {
        match self {
            PeerReader::Pyarrow => "pyarrow",
            PeerReader::PyarrowNoPrebuffer => "pyarrow-no-prebuffer",
            PeerReader::Polars => "polars",
            PeerReader::DuckDb => "duckdb",
            PeerReader::ArrowRs => "arrow-rs",
        }
    }

    pub fn from_name(name: &str) -> Option<PeerReader> {
        PeerReader::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The simulator's preset for it.
    pub fn preset(self) -> &'static str {
        match self {
            PeerReader::Pyarrow | PeerReader::PyarrowNoPrebuffer => "arrow-cpp",
            PeerReader::Polars => "polars",
            PeerReader::DuckDb => "duckdb",
            PeerReader::ArrowRs => "arrow-rs",
        }
    }

    /// The preset's settings that mirror how the reader ran here: its own knobs, the ones
    /// that default to the machine's cores set to this machine's.
    pub fn settings(self, cores: u32) -> Vec<(&'static str, String)> {
        match self {
            PeerReader::Pyarrow => vec![(CPU_COUNT, cores.to_string())],
            PeerReader::PyarrowNoPrebuffer => {
                vec![(CPU_COUNT, cores.to_string()), (PRE_BUFFER, "false".into())]
            }
            PeerReader::DuckDb => vec![(DUCKDB_THREADS, cores.to_string())],
            PeerReader::Polars => vec![(POLARS_MAX_THREADS, cores.to_string())],
            PeerReader::ArrowRs => Vec::new(),
        }
    }
}

/// What one run of a real reader returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunResult {
    /// The reader's own elapsed time around the read (its imports and client set-up excluded).
    pub wall_s: f64,
    pub rows: u64,
}

/// The endpoint `read.py` (and arrow-rs here) reads `dir/KEY` from the local file system at:
/// the same read with no network, for the CPU calibration.
pub fn local_endpoint(dir: &Path) -> String {
    format!("file:{}", dir.display())
}

/// How the Python readers run: the interpreter, `read.py`, and their thread count
/// (`PEERS_THREADS`; `None`: the machine's cores). The readers' own thread and knob variables
/// are taken out of their environment either way, so that none applies unseen.
#[derive(Debug, Clone, Copy)]
pub struct PythonRun<'a> {
    pub python: &'a Path,
    pub script: &'a Path,
    pub threads: Option<u32>,
}

/// The environment variables through which the Python readers take a thread count or another
/// knob the presets model (Arrow's documented variables, Polars' `POLARS_*` knobs): taken out
/// of the readers' environment, so that none applies unseen.
const READER_VARIABLES: [&str; 11] = [
    "PEERS_THREADS",
    "OMP_NUM_THREADS",
    "OMP_THREAD_LIMIT",
    "ARROW_IO_THREADS",
    POLARS_MAX_THREADS,
    POLARS_INFLIGHT_INIT_BYTE_BUDGET,
    "POLARS_INFLIGHT_REQUEST_BUDGET",
    POLARS_RESOLVE_SAMPLE_LIMIT,
    POLARS_CHUNK_SIZE,
    POLARS_FOOTER_READ_SIZE,
    "POLARS_CONCURRENCY_BUDGET",
];

/// Runs `reader` once on `keys` at `endpoint` (an S3 endpoint, or [`local_endpoint`]).
pub fn run_once(
    reader: PeerReader,
    py: PythonRun<'_>,
    endpoint: &str,
    bucket: &str,
    keys: &[String],
    columns: &[String],
) -> Result<RunResult, String> {
    if reader == PeerReader::ArrowRs {
        let r = match endpoint.strip_prefix("file:") {
            Some(dir) => testbed::arrow_rs::read_in_memory(Path::new(dir), keys, columns),
            None => testbed::arrow_rs::read(
                endpoint,
                bucket,
                keys,
                columns,
                testbed::ACCESS_KEY,
                testbed::SECRET_KEY,
                testbed::REGION,
            ),
        }
        .map_err(|e| e.to_string())?;
        return Ok(RunResult {
            wall_s: r.wall_s,
            rows: r.rows,
        });
    }
    let mut command = Command::new(py.python);
    for v in READER_VARIABLES {
        command.env_remove(v);
    }
    if let Some(n) = py.threads {
        command.env("PEERS_THREADS", n.to_string());
    }
    let out = command
        .arg(py.script)
        .args([
            reader.name(),
            endpoint,
            bucket,
            &keys.join(","),
            &columns.join(","),
        ])
        .env("AWS_ACCESS_KEY_ID", testbed::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", testbed::SECRET_KEY)
        .env("AWS_REGION", testbed::REGION)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", py.python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            reader.name(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| format!("{}: unreadable result `{line}`: {e}", reader.name()))?;
    Ok(RunResult {
        wall_s: v
            .get("wall_s")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(f64::NAN),
        rows: v
            .get("num_rows")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0),
    })
}
