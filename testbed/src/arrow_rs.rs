//! The arrow-rs reader at its defaults, as `sim check-peers` runs it against the test bed:
//! `parquet`'s `ParquetRecordBatchStreamBuilder` over an `object_store` `ParquetObjectReader`
//! (no file size given, no page index asked for), files one after another, every batch read.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
// Deprecated in parquet 60 in favour of implementing `AsyncFileReader` by hand, but it is still
// what arrow-rs users reach for, and what the `arrow-rs` preset describes.
#[allow(deprecated)]
use parquet::arrow::async_reader::ParquetObjectReader;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

use crate::error::TestBedError;

/// What one read returned.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArrowRsRead {
    /// From building the first stream to the last batch, in seconds.
    pub wall_s: f64,
    pub rows: u64,
}

fn err(what: &str, e: impl std::fmt::Display) -> TestBedError {
    TestBedError::Reader {
        reader: "arrow-rs",
        message: format!("{what}: {e}"),
    }
}

/// Reads `columns` (by name) of every object in `keys` from the S3 API at `endpoint`.
pub fn read(
    endpoint: &str,
    bucket: &str,
    keys: &[String],
    columns: &[String],
    access_key: &str,
    secret_key: &str,
    region: &str,
) -> Result<ArrowRsRead, TestBedError> {
    let store = AmazonS3Builder::new()
        .with_endpoint(endpoint)
        .with_bucket_name(bucket)
        .with_access_key_id(access_key)
        .with_secret_access_key(secret_key)
        .with_region(region)
        .with_allow_http(true)
        .with_virtual_hosted_style_request(false)
        .build()
        .map_err(|e| err("building the client", e))?;
    read_store(Arc::new(store), keys, columns)
}

/// The same read of `root/KEY` for every key, with the files' bytes in memory first (outside
/// the clock): the reader's CPU alone, for the check's calibration.
pub fn read_in_memory(
    root: &std::path::Path,
    keys: &[String],
    columns: &[String],
) -> Result<ArrowRsRead, TestBedError> {
    let store = object_store::memory::InMemory::new();
    let rt = runtime()?;
    rt.block_on(async {
        for key in keys {
            let bytes = std::fs::read(root.join(key))
                .map_err(|e| err(&format!("reading {}", root.join(key).display()), e))?;
            object_store::ObjectStoreExt::put(&store, &Path::from(key.as_str()), bytes.into())
                .await
                .map_err(|e| err(&format!("storing {key}"), e))?;
        }
        Ok::<_, TestBedError>(())
    })?;
    read_store(Arc::new(store), keys, columns)
}

fn runtime() -> Result<tokio::runtime::Runtime, TestBedError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|source| TestBedError::Runtime {
            what: "arrow-rs reader runtime",
            source,
        })
}

fn read_store(
    store: Arc<dyn object_store::ObjectStore>,
    keys: &[String],
    columns: &[String],
) -> Result<ArrowRsRead, TestBedError> {
    let rt = runtime()?;
    rt.block_on(async move {
        let start = Instant::now();
        let mut rows = 0u64;
        for key in keys {
            #[allow(deprecated)]
            let reader = ParquetObjectReader::new(store.clone(), Path::from(key.as_str()));
            let builder = ParquetRecordBatchStreamBuilder::new(reader)
                .await
                .map_err(|e| err(&format!("opening {key}"), e))?;
            let schema = builder.parquet_schema();
            let wanted: Vec<usize> = (0..schema.num_columns())
                .filter(|i| columns.iter().any(|c| c == schema.column(*i).name()))
                .collect();
            let mask = ProjectionMask::leaves(schema, wanted);
            let mut stream = builder
                .with_projection(mask)
                .build()
                .map_err(|e| err(&format!("reading {key}"), e))?;
            while let Some(batch) = stream.next().await {
                rows += batch
                    .map_err(|e| err(&format!("reading {key}"), e))?
                    .num_rows() as u64;
            }
        }
        Ok(ArrowRsRead {
            wall_s: start.elapsed().as_secs_f64(),
            rows,
        })
    })
}
