//! Layouts of real Parquet files and local Iceberg tables, recorded as [`layout::Table`]s.
//!
//! - [`record_parquet_files`]: the footer and page indexes of each Parquet file (read with the
//!   `parquet` crate, no Arrow) mapped onto [`layout::FileLayout`]: size, footer length, row
//!   groups, column chunks (dictionary page, data pages, codec, sizes), column and offset index
//!   locations, page locations, bloom filter locations, and each chunk's min/max statistics
//!   where a reader could prune with them.
//! - [`record_iceberg`]: a local Iceberg table from its metadata JSON: the metadata phase
//!   (metadata JSON, manifest list and manifest sizes) and every live data file's layout.
//! - [`testdata::write_small_parquet_files`]: small deterministic Parquet files for tests and
//!   benchmarks.
//!
//! This crate does file IO and reads the clock (for provenance); it is not part of the sans-IO
//! read path. Writing the table to a layout file is the caller's job (`layout::format`).

mod error;
mod footer;
mod iceberg;
mod parquet_file;
mod parquet_files;
mod stats;
mod table;
pub mod testdata;
mod thrift;
mod walk;

pub use error::RecordError;
pub use iceberg::record_iceberg;
pub use parquet_file::{record_parquet_file, RecordedFile};
pub use parquet_files::{record_parquet_files, RecordOutcome};
