//! `sim record`: layouts of real Parquet files or a local Iceberg table.

use anyhow::{Context, Result};
use std::path::PathBuf;

use clap::Subcommand;

#[derive(Subcommand)]
pub enum RecordWhat {
    /// Parquet files or directories of them.
    Parquet {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output layout file (default: traces/layouts/<name>.layout).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Fail, writing nothing, if any file cannot be recorded (every file is read first, so
        /// each one that cannot be is listed with why; default: skip them and say so).
        #[arg(long)]
        strict: bool,
        /// Leave out the row-group min/max statistics (a smaller layout, for tables no query
        /// will give a `predicate:`).
        #[arg(long)]
        no_statistics: bool,
    },
    /// A local Iceberg table, from its metadata JSON.
    Iceberg {
        metadata_json: PathBuf,
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Leave out the row-group min/max statistics (see `record parquet`).
        #[arg(long)]
        no_statistics: bool,
    },
}

pub fn run(what: RecordWhat) -> Result<()> {
    let (table, default_name, output, no_statistics) = match what {
        RecordWhat::Parquet {
            paths,
            output,
            strict,
            no_statistics,
        } => {
            let outcome = record::record_parquet_files(&paths)?;
            for (path, err) in &outcome.skipped {
                eprintln!("skipped {}: {err}", path.display());
            }
            if outcome.table.files.is_empty() {
                anyhow::bail!(
                    "no file could be recorded ({} skipped, reasons above); nothing was written",
                    outcome.skipped.len()
                );
            }
            let outcome = if strict {
                record::RecordOutcome {
                    table: outcome.strict()?,
                    skipped: Vec::new(),
                }
            } else {
                outcome
            };
            let name = paths
                .first()
                .and_then(|p| p.file_stem())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "table".into());
            (outcome.table, name, output, no_statistics)
        }
        RecordWhat::Iceberg {
            metadata_json,
            output,
            no_statistics,
        } => {
            let table = record::record_iceberg(&metadata_json)?;
            let name = metadata_json
                .parent()
                .and_then(|p| p.parent())
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "iceberg".into());
            (table, name, output, no_statistics)
        }
    };
    let mut table = table;
    if no_statistics {
        for rg in table.files.iter_mut().flat_map(|f| f.row_groups.iter_mut()) {
            rg.statistics = Vec::new();
        }
    }
    let with_statistics = table
        .files
        .iter()
        .flat_map(|f| &f.row_groups)
        .filter(|rg| !rg.statistics.is_empty())
        .count();
    table.provenance.tool = format!(
        "sim {} {}",
        env!("CARGO_PKG_VERSION"),
        table.provenance.tool
    );
    let output = output
        .unwrap_or_else(|| PathBuf::from("traces/layouts").join(format!("{default_name}.layout")));
    if let Some(dir) = output.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let bytes = layout::format::write_table(&table)?;
    std::fs::write(&output, &bytes).with_context(|| format!("writing {}", output.display()))?;
    eprintln!(
        "recorded {} files, {} column chunks ({} row groups with min/max statistics), {} of data \
         into {} ({})",
        table.files.len(),
        table.column_chunk_count(),
        with_statistics,
        units::format_bytes(table.total_bytes()),
        output.display(),
        units::format_bytes(bytes.len() as u64)
    );
    Ok(())
}
