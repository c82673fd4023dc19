//! `sim record parquet PATH...`: many Parquet files into one table layout.

use std::path::PathBuf;

use layout::Table;

use crate::error::RecordError;
use crate::parquet_file::record_parquet_file;
use crate::table::{provenance, TableBuilder};
use crate::walk::expand;

/// A recording of Parquet files: the table of every file that could be recorded, and every file
/// that could not, with the reason.
#[derive(Debug)]
pub struct RecordOutcome {
    pub table: Table,
    /// Files left out, in the order met, each with an error naming the file and the fault.
    pub skipped: Vec<(PathBuf, RecordError)>,
}

impl RecordOutcome {
    /// The table if no file was skipped, else the first file's error: for callers that want
    /// all or nothing.
    pub fn strict(self) -> Result<Table, RecordError> {
        match self.skipped.into_iter().next() {
            Some((_, e)) => Err(e),
            None => Ok(self.table),
        }
    }
}

/// Records the footer and page indexes of every Parquet file under `paths` into one table.
///
/// A path naming a file is taken whatever its extension, and its layout path is the file name.
/// A directory is walked recursively for `*.parquet` (entries sorted by name, symlinked
/// directories not followed), and each layout path is relative to that directory, with '/'
/// separators. Arguments keep their order. If two files would get the same layout path, every
/// file keeps its full path as given instead.
///
/// A file that cannot be recorded is listed in [`RecordOutcome::skipped`] (the error names the
/// file and the fault) and the others are still recorded; [`RecordOutcome::strict`] gives
/// all-or-nothing. `table.files` may be empty when every file was skipped.
///
/// Errors: a path that does not exist or cannot be listed, or no Parquet file at all.
pub fn record_parquet_files(paths: &[PathBuf]) -> Result<RecordOutcome, RecordError> {
    let targets = expand(paths)?;
    if targets.is_empty() {
        return Err(RecordError::NoParquetFiles {
            paths: paths.to_vec(),
        });
    }
    if targets.len() as u64 > limits::MAX_FILES_PER_TABLE {
        let first = paths.first().cloned().unwrap_or_default();
        return Err(RecordError::invalid(
            &first,
            format!(
                "{} Parquet files, past the bound of {} (limits::MAX_FILES_PER_TABLE, \
                 docs/bounds.md)",
                targets.len(),
                limits::MAX_FILES_PER_TABLE
            ),
        ));
    }
    let mut builder = TableBuilder::default();
    let mut skipped = Vec::new();
    for target in targets {
        match record_parquet_file(&target.file, &target.layout_path) {
            Ok(recorded) => builder.add(recorded),
            Err(e) => skipped.push((target.file, e)),
        }
    }
    let sources = paths.iter().map(|p| p.display().to_string()).collect();
    let table = builder.finish(None, provenance("parquet", sources));
    // Each file was checked as it was recorded; the table's own bounds (its totals) only now.
    if let Some(first) = paths.first() {
        table
            .validate()
            .map_err(|e| RecordError::invalid(first, e.to_string()))?;
    }
    Ok(RecordOutcome { table, skipped })
}
