//! The one error type of the crate. Every variant names the file it is about and the fault.

use std::path::PathBuf;

/// Why a file or table could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The file or directory could not be opened or read.
    #[error("{}: cannot read: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The `parquet` crate rejected the footer or the page indexes.
    #[error("{}: not a readable Parquet file: {source}", path.display())]
    Parquet {
        path: PathBuf,
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The `parquet` crate panicked on this file. The panic is caught at the boundary of one
    /// file so that one malformed file cannot take down a whole recording.
    #[error("{}: the parquet crate panicked while reading the footer: {message}", path.display())]
    ParquetPanic { path: PathBuf, message: String },
    /// The file parsed, but what it states is impossible (a negative offset, a chunk outside
    /// the file, a footer longer than the file...).
    #[error("{}: {what}", path.display())]
    Invalid { path: PathBuf, what: String },
    /// The paths given hold no `*.parquet` file.
    #[error("no *.parquet file found under {}", list(paths))]
    NoParquetFiles { paths: Vec<PathBuf> },
    /// An Iceberg metadata JSON that is not valid JSON or lacks a required field.
    #[error("{}: not Iceberg table metadata: {source}", path.display())]
    IcebergJson {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// An Iceberg manifest list or manifest that is not a readable Avro file of the expected
    /// shape.
    #[error("{}: not a readable Iceberg Avro file: {message}", path.display())]
    Avro { path: PathBuf, message: String },
    /// The Iceberg metadata is well-formed but says something this recorder cannot follow.
    #[error("{}: {what}", path.display())]
    Iceberg { path: PathBuf, what: String },
    /// A file referenced by Iceberg metadata exists neither at its absolute path nor relative to
    /// the table directory.
    #[error(
        "{referenced} (listed in {}) not found: tried {}",
        listed_in.display(),
        list(tried)
    )]
    Unresolved {
        referenced: String,
        listed_in: PathBuf,
        tried: Vec<PathBuf>,
    },
}

impl RecordError {
    /// The file this error is about.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            RecordError::Io { path, .. }
            | RecordError::Parquet { path, .. }
            | RecordError::ParquetPanic { path, .. }
            | RecordError::Invalid { path, .. }
            | RecordError::IcebergJson { path, .. }
            | RecordError::Avro { path, .. }
            | RecordError::Iceberg { path, .. } => Some(path),
            RecordError::Unresolved { listed_in, .. } => Some(listed_in),
            RecordError::NoParquetFiles { .. } => None,
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        RecordError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(path: &std::path::Path, what: impl Into<String>) -> Self {
        RecordError::Invalid {
            path: path.to_path_buf(),
            what: what.into(),
        }
    }
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}
