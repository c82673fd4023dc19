//! The real driver's tests' shared set-up (`measure_*.rs`): eight small Parquet files written
//! and recorded, the test bed started with them uploaded, the store the real driver reads
//! them through, and a measured run as `sim measure` makes it.
#![allow(dead_code)] // each test file uses a part

use drive_s3::{Measured, RealStore, S3Endpoint};
use experiments::run::{RunOptions, ScenarioOutput, ScenarioRunError};
use std::path::Path;
use testbed::{SmallFilesShape, TestBed, TestBedConfig};

/// Writes 8 files of 40 columns into `dir/files`, records them into `dir/small.layout`, starts
/// the bed (a `rtt_ns` round trip, no bandwidth cap) and uploads them under `small/`.
pub fn small_files_bed(dir: &Path, rtt_ns: u64) -> TestBed {
    let files_dir = dir.join("files");
    let shape = SmallFilesShape {
        columns: 40,
        min_file_bytes: 256 * 1024,
        max_file_bytes: 1024 * 1024,
        wide_columns: vec![3, 17, 29],
        ..SmallFilesShape::default()
    };
    let paths = testbed::write_many_small_files(&files_dir, 8, &shape).unwrap();
    let table = record::record_parquet_files(std::slice::from_ref(&files_dir))
        .unwrap()
        .strict()
        .unwrap();
    std::fs::write(
        dir.join("small.layout"),
        layout::format::write_table(&table).unwrap(),
    )
    .unwrap();
    let bed = TestBed::start(TestBedConfig {
        data_dir: dir.join("s3"),
        rtt_ns,
        bandwidth_bytes_per_s: None,
    })
    .unwrap();
    bed.upload_all(&paths, "small/").unwrap();
    bed
}

/// The store the real driver reads the bed's `small/` objects through.
pub fn real_store(bed: &TestBed) -> RealStore {
    let endpoint = S3Endpoint {
        endpoint: bed.endpoint_url(),
        bucket: bed.bucket().to_string(),
        access_key: Some(bed.access_key().to_string()),
        secret_key: Some(bed.secret_key().to_string()),
        region: Some(bed.region().to_string()),
    };
    RealStore {
        store: drive_s3::connect(&endpoint).unwrap(),
        prefix: "small".into(),
    }
}

/// A measured run as `sim measure` makes it: one replication unless asked.
pub fn measure(
    loaded: &scenario::LoadedScenario,
    mut opts: RunOptions,
    real: &RealStore,
    rt: &tokio::runtime::Runtime,
    warm_connections: u32,
) -> Result<ScenarioOutput, ScenarioRunError> {
    opts.replications = Some(opts.replications.unwrap_or(1));
    let runner = Measured::new(real.clone(), rt, warm_connections, false);
    experiments::run::run_scenario_with(loaded, &opts, &runner)
}
