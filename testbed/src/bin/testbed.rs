//! `testbed`: start the loopback S3 test bed by hand, or write the test Parquet files.
//!
//! ```text
//! testbed serve --dir /tmp/s3 --rtt 30ms --bandwidth 100MiB/s --upload a.parquet b.parquet
//! testbed shapes --dir /tmp/parquet --small-files 64 --large-row-groups 64
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use testbed::{LargeFileShape, SmallFilesShape, TestBed, TestBedConfig};

#[derive(Debug, Parser)]
#[command(name = "testbed", about = "A self-starting S3 test bed on 127.0.0.1")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a directory over the S3 API behind a latency and bandwidth injecting proxy; print
    /// the endpoint, bucket and credentials as `key=value` lines; serve until Ctrl-C.
    Serve {
        /// The server's root directory; the bucket is its subdirectory `testbed/`.
        #[arg(long)]
        dir: PathBuf,
        /// Injected round trip, with a unit (half in each direction), e.g. `30ms`.
        #[arg(long, default_value = "0ms", value_parser = parse_rtt)]
        rtt: u64,
        /// Server-to-client bandwidth per connection, e.g. `100MiB/s`; `0` for unpaced.
        #[arg(long, default_value = "0", value_parser = parse_bandwidth)]
        bandwidth: u64,
        /// Files to upload first, each as its file name (after --prefix).
        #[arg(long, num_args = 1..)]
        upload: Vec<PathBuf>,
        /// Key prefix of uploaded files, e.g. `small/`.
        #[arg(long, default_value = "")]
        prefix: String,
        /// Append every request to `DIR/access.log` (S3 server access-log format) and
        /// `DIR/requests.csv` (nanosecond times, the Range header as sent), as they end.
        #[arg(long, value_name = "DIR")]
        log: Option<PathBuf>,
        /// Fault mode, after the uploads: a comma-separated list of `KIND@N`, N counting GETs
        /// of objects from 0: `503x3@5` (a burst of three 503 SlowDown), `reset@10` (closed
        /// before the response), `cut@14` (closed after half the body), `stall=2s@18` (half the
        /// body, then silence), `restart=100ms@25` (every connection closed, none accepted for
        /// 100 ms).
        #[arg(long, value_name = "PLAN", value_parser = parse_faults)]
        faults: Option<testbed::FaultPlan>,
    },
    /// Read columns of objects through the arrow-rs reader (`parquet`'s async reader over
    /// object_store) at its defaults; print `{"reader", "wall_s", "num_rows"}` (feature `arrow-rs`).
    #[cfg(feature = "arrow-rs")]
    ArrowRs {
        #[arg(long)]
        endpoint: String,
        #[arg(long, default_value = testbed::BUCKET)]
        bucket: String,
        /// Object keys, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        keys: Vec<String>,
        /// Column names, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        columns: Vec<String>,
    },
    /// Write the test Parquet files: `small/part-*.parquet` (many-small-files shape) and
    /// `large/large.parquet` (single-large-file shape) under --dir.
    Shapes {
        /// Where to write.
        #[arg(long)]
        dir: PathBuf,
        /// Number of small files (0 for none).
        #[arg(long, default_value_t = 64)]
        small_files: usize,
        /// Row groups of the large file (0 for no large file).
        #[arg(long, default_value_t = 64)]
        large_row_groups: usize,
    },
}

fn parse_faults(s: &str) -> Result<testbed::FaultPlan, String> {
    testbed::FaultPlan::parse(s)
}

fn parse_rtt(s: &str) -> Result<u64, String> {
    units::parse_duration_ns(s).map_err(|e| e.to_string())
}

fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let bytes_per_s = units::parse_bandwidth(s).map_err(|e| e.to_string())?;
    if !bytes_per_s.is_finite() || bytes_per_s > u64::MAX as f64 {
        return Err(format!("`{s}` is too large a bandwidth"));
    }
    Ok(bytes_per_s.round() as u64)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            let mut source = e.source();
            while let Some(s) = source {
                eprintln!("  caused by: {s}");
                source = s.source();
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Box<dyn std::error::Error>> {
    match cli.command {
        Command::Serve {
            dir,
            rtt,
            bandwidth,
            upload,
            prefix,
            log,
            faults,
        } => serve(dir, rtt, bandwidth, &upload, &prefix, log, faults),
        Command::Shapes {
            dir,
            small_files,
            large_row_groups,
        } => shapes(dir, small_files, large_row_groups),
        #[cfg(feature = "arrow-rs")]
        Command::ArrowRs {
            endpoint,
            bucket,
            keys,
            columns,
        } => {
            let r = testbed::arrow_rs::read(
                &endpoint,
                &bucket,
                &keys,
                &columns,
                testbed::ACCESS_KEY,
                testbed::SECRET_KEY,
                testbed::REGION,
            )?;
            println!(
                "{{\"reader\": \"arrow-rs\", \"wall_s\": {}, \"num_rows\": {}}}",
                r.wall_s, r.rows
            );
            Ok(())
        }
    }
}

fn serve(
    dir: PathBuf,
    rtt_ns: u64,
    bandwidth: u64,
    upload: &[PathBuf],
    prefix: &str,
    log: Option<PathBuf>,
    faults: Option<testbed::FaultPlan>,
) -> Result<(), Box<dyn std::error::Error>> {
    let bed = TestBed::start(TestBedConfig {
        data_dir: dir,
        rtt_ns,
        bandwidth_bytes_per_s: (bandwidth > 0).then_some(bandwidth),
    })?;
    for path in upload {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let key = format!("{prefix}{name}");
        let bytes = bed.upload(&key, path)?;
        eprintln!("uploaded {key} ({})", units::format_bytes(bytes));
    }
    println!("endpoint_url={}", bed.endpoint_url());
    println!("direct_url={}", bed.direct_url());
    println!("bucket={}", bed.bucket());
    println!("access_key={}", bed.access_key());
    println!("secret_key={}", bed.secret_key());
    println!("region={}", bed.region());
    println!("rtt={}", units::format_duration_ns(rtt_ns));
    let bw = if bandwidth > 0 {
        units::format_bandwidth(bandwidth as f64)
    } else {
        "unpaced".to_string()
    };
    println!("bandwidth={bw}");
    // Uploads are not part of what is logged, nor of the GETs the fault mode counts.
    let _ = bed.take_requests();
    if let Some(plan) = faults {
        println!("faults={}", plan.faults().count());
        bed.set_faults(plan);
    }
    let bed = std::sync::Arc::new(bed);
    // The log is drained every 200 ms whether or not it is written: without `--log` the
    // records are dropped, so a long-running bed does not keep every request in memory.
    let sink = std::sync::Arc::new(std::sync::Mutex::new(LogSink::new(log)?));
    {
        let (bed, sink) = (bed.clone(), sink.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_millis(200));
            if let Ok(mut sink) = sink.lock() {
                sink.drain(&bed);
            }
        });
    }
    eprintln!("serving until Ctrl-C");
    let waiter = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    waiter.block_on(tokio::signal::ctrl_c())?;
    // Requests still being answered end within this; then the last of the log is written here,
    // not left to the draining thread's next turn.
    std::thread::sleep(std::time::Duration::from_millis(300));
    if let Ok(mut sink) = sink.lock() {
        sink.drain(&bed);
    }
    drop(bed);
    eprintln!("stopped");
    Ok(())
}

/// Where `serve` puts the request log: appended to `DIR/access.log` and `DIR/requests.csv`, or
/// dropped without `--log`.
struct LogSink {
    dir: Option<PathBuf>,
    /// Records written so far (the access log's request ids continue from it).
    written: usize,
    /// Whether a write failed (said once on stderr, not once per drain).
    failed: bool,
    /// Records the bed's log dropped, as last said on stderr.
    dropped: u64,
}

impl LogSink {
    fn new(dir: Option<PathBuf>) -> std::io::Result<Self> {
        if let Some(dir) = &dir {
            std::fs::create_dir_all(dir)?;
        }
        Ok(LogSink {
            dir,
            written: 0,
            failed: false,
            dropped: 0,
        })
    }

    /// Takes every record the bed has ended since the last drain and appends them.
    fn drain(&mut self, bed: &TestBed) {
        let records = bed.take_requests();
        let dropped = bed.dropped_requests();
        if dropped > self.dropped && self.dir.is_some() {
            eprintln!(
                "error: the request log dropped {dropped} requests so far (too many at once)"
            );
        }
        self.dropped = dropped;
        let Some(dir) = &self.dir else { return };
        if records.is_empty() {
            return;
        }
        let mut access = String::new();
        for (i, r) in records.iter().enumerate() {
            access.push_str(&r.access_log_line(bed.bucket(), self.written + i));
            access.push('\n');
        }
        let csv = testbed::request_log::to_csv(&records);
        let result = append(&dir.join("access.log"), &access, false)
            .and_then(|()| append(&dir.join("requests.csv"), &csv, true));
        if let Err(e) = result {
            if !self.failed {
                eprintln!("error: writing the request log in {}: {e}", dir.display());
            }
            self.failed = true;
        }
        self.written += records.len();
    }
}

/// Appends `text` to `path`; a CSV's header line only when the file is new.
fn append(path: &std::path::Path, text: &str, skip_header: bool) -> std::io::Result<()> {
    use std::io::Write;
    let text = if skip_header && path.exists() {
        text.split_once('\n').map_or("", |x| x.1)
    } else {
        text
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(text.as_bytes())
}

fn shapes(
    dir: PathBuf,
    small_files: usize,
    large_row_groups: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    if small_files > 0 {
        let paths = testbed::write_many_small_files(
            &dir.join("small"),
            small_files,
            &SmallFilesShape::default(),
        )?;
        println!(
            "small: {} files in {}",
            paths.len(),
            dir.join("small").display()
        );
    }
    if large_row_groups > 0 {
        let shape = LargeFileShape {
            row_groups: large_row_groups,
            ..LargeFileShape::default()
        };
        let path = testbed::write_one_large_file(&dir.join("large"), &shape)?;
        println!("large: {}", path.display());
    }
    Ok(())
}
