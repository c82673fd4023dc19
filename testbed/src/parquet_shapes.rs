//! Real Parquet files in the shapes of two shipped scenarios, scaled down to fit a test:
//! many small wide files of one row group (`scenarios/many-small-files.yaml`) and one file of
//! many row groups (`scenarios/single-large-file.yaml`).
//!
//! Every column is a `FIXED_LEN_BYTE_ARRAY` of random bytes, written plain and uncompressed
//! with no dictionary and no statistics, so a file's size is what was asked for (plus page
//! headers and the footer) and column chunk sizes follow the columns' widths. Offset indexes are
//! written (as in both scenarios: `offset_index: true, column_index: none`).
//! `record::testdata::write_small_parquet_files` is not reused: its dictionary-encoded INT64
//! columns compress to a few bits a value, and all its columns have one size.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{Compression, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, FixedLenByteArray, FixedLenByteArrayType};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use rand::{Rng, RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::TestBedError;

/// Widest column, in bytes per value.
const MAX_WIDTH_BYTES: f64 = 1024.0;

/// The many-small-files shape: files of one row group, many columns of lognormal widths.
#[derive(Debug, Clone, PartialEq)]
pub struct SmallFilesShape {
    /// Columns per file (the scenario has 437, whose footers exceed a 64 KiB tail read).
    pub columns: usize,
    /// Smallest data size of a file, in bytes; sizes are log-uniform between the bounds.
    pub min_file_bytes: u64,
    /// Largest data size of a file, in bytes.
    pub max_file_bytes: u64,
    /// Median column width in bytes per value.
    pub median_width_bytes: f64,
    /// Spread of column widths: the sigma of their lognormal (the scenario's weights use 1.0).
    pub width_sigma: f64,
    /// Columns made [`SmallFilesShape::wide_factor`] times the median width: the scenario's
    /// queried columns carry weight 6.
    pub wide_columns: Vec<usize>,
    /// How much wider than the median the wide columns are.
    pub wide_factor: f64,
    /// Largest data page, in bytes.
    pub data_page_bytes: usize,
    /// Bytes of key-value metadata added to each footer. The scenario's 437-column footers
    /// (about 77 KiB with statistics) exceed a 64 KiB tail read, so every file costs a second
    /// footer read; this writer's footers carry no statistics (about 66 bytes a column
    /// chunk), and the padding brings them back to that size.
    pub footer_padding_bytes: usize,
    /// Seed of the PCG-64 (MCG) generator; the same shape gives the same bytes.
    pub seed: u64,
}

impl Default for SmallFilesShape {
    fn default() -> Self {
        SmallFilesShape {
            columns: 437,
            min_file_bytes: 1024 * 1024,
            max_file_bytes: 4 * 1024 * 1024,
            median_width_bytes: 8.0,
            width_sigma: 1.0,
            wide_columns: vec![12, 97, 181, 262, 330],
            wide_factor: 6.0,
            data_page_bytes: 1024 * 1024,
            footer_padding_bytes: 48 * 1024,
            seed: 42,
        }
    }
}

/// The single-large-file shape: one file of many row groups of equal size.
#[derive(Debug, Clone, PartialEq)]
pub struct LargeFileShape {
    /// Row groups in the file (the scenario has 459).
    pub row_groups: usize,
    /// Columns (the scenario has 24).
    pub columns: usize,
    /// Data size of one row group, in bytes.
    pub row_group_bytes: u64,
    /// Median column width in bytes per value.
    pub median_width_bytes: f64,
    /// Spread of column widths: the sigma of their lognormal (the scenario uses 0.5).
    pub width_sigma: f64,
    /// Largest data page, in bytes.
    pub data_page_bytes: usize,
    /// Seed of the PCG-64 (MCG) generator; the same shape gives the same bytes.
    pub seed: u64,
}

impl Default for LargeFileShape {
    /// 64 row groups of 1.5 MiB: a 96 MiB file.
    fn default() -> Self {
        LargeFileShape {
            row_groups: 64,
            columns: 24,
            row_group_bytes: 1536 * 1024,
            median_width_bytes: 16.0,
            width_sigma: 0.5,
            data_page_bytes: 1024 * 1024,
            seed: 7,
        }
    }
}

/// Writes `n_files` files `part-00000.parquet`, ... into `dir` (created if missing) in the
/// many-small-files shape; all files share one schema. Returns the paths in order.
pub fn write_many_small_files(
    dir: &Path,
    n_files: usize,
    shape: &SmallFilesShape,
) -> Result<Vec<PathBuf>, TestBedError> {
    if n_files == 0 {
        return Err(TestBedError::Invalid(
            "write_many_small_files: n_files is 0; ask for at least 1 file".into(),
        ));
    }
    if shape.min_file_bytes == 0 || shape.min_file_bytes > shape.max_file_bytes {
        return Err(TestBedError::Invalid(format!(
            "small file sizes {}..={} bytes are not a range: give 0 < min_file_bytes <= \
             max_file_bytes",
            shape.min_file_bytes, shape.max_file_bytes
        )));
    }
    let mut rng = Pcg64Mcg::seed_from_u64(shape.seed);
    let mut widths = column_widths(
        &mut rng,
        shape.columns,
        shape.median_width_bytes,
        shape.width_sigma,
    )?;
    for &c in &shape.wide_columns {
        // A wide column past the last column is simply absent in a narrower shape.
        if let Some(w) = widths.get_mut(c) {
            *w = clamp_width(shape.median_width_bytes * shape.wide_factor);
        }
    }
    let row_bytes: u64 = widths.iter().map(|&w| w as u64).sum();
    let schema = schema(&widths, dir)?;
    let props = properties(shape.data_page_bytes, shape.footer_padding_bytes);
    std::fs::create_dir_all(dir).map_err(|e| TestBedError::io(dir, e))?;
    let (lo, hi) = (
        (shape.min_file_bytes as f64).ln(),
        (shape.max_file_bytes as f64).ln(),
    );
    let mut paths = Vec::with_capacity(n_files);
    for i in 0..n_files {
        let file_bytes = (lo + (hi - lo) * rng.random::<f64>()).exp();
        let rows = rows_for(file_bytes as u64, row_bytes);
        let path = dir.join(format!("part-{i:05}.parquet"));
        write_file(
            &path,
            schema.clone(),
            props.clone(),
            &widths,
            &[rows],
            &mut rng,
        )?;
        paths.push(path);
    }
    Ok(paths)
}

/// Writes `large.parquet` into `dir` (created if missing) in the single-large-file shape.
pub fn write_one_large_file(dir: &Path, shape: &LargeFileShape) -> Result<PathBuf, TestBedError> {
    if shape.row_groups == 0 || shape.row_group_bytes == 0 {
        return Err(TestBedError::Invalid(format!(
            "a large file of {} row groups of {} bytes is empty: give at least 1 row group of \
             at least 1 byte",
            shape.row_groups, shape.row_group_bytes
        )));
    }
    let mut rng = Pcg64Mcg::seed_from_u64(shape.seed);
    let widths = column_widths(
        &mut rng,
        shape.columns,
        shape.median_width_bytes,
        shape.width_sigma,
    )?;
    let row_bytes: u64 = widths.iter().map(|&w| w as u64).sum();
    let rows = rows_for(shape.row_group_bytes, row_bytes);
    let schema = schema(&widths, dir)?;
    std::fs::create_dir_all(dir).map_err(|e| TestBedError::io(dir, e))?;
    let path = dir.join("large.parquet");
    write_file(
        &path,
        schema,
        properties(shape.data_page_bytes, 0),
        &widths,
        &vec![rows; shape.row_groups],
        &mut rng,
    )?;
    Ok(path)
}

/// Lognormal widths with the given median and sigma, each within 1..=1024 bytes.
fn column_widths(
    rng: &mut Pcg64Mcg,
    columns: usize,
    median_width_bytes: f64,
    width_sigma: f64,
) -> Result<Vec<usize>, TestBedError> {
    let median_ok = median_width_bytes.is_finite() && median_width_bytes >= 1.0;
    let sigma_ok = width_sigma.is_finite() && width_sigma >= 0.0;
    if columns == 0 || !median_ok || !sigma_ok {
        return Err(TestBedError::Invalid(format!(
            "column shape ({columns} columns, median width {median_width_bytes} B, sigma \
             {width_sigma}) is not usable: give at least 1 column, a median width of at least \
             1 byte and a finite sigma >= 0"
        )));
    }
    Ok((0..columns)
        .map(|_| clamp_width(median_width_bytes * (width_sigma * standard_normal(rng)).exp()))
        .collect())
}

fn clamp_width(width: f64) -> usize {
    width.round().clamp(1.0, MAX_WIDTH_BYTES) as usize
}

/// Box-Muller: one standard normal sample from two uniforms.
fn standard_normal(rng: &mut Pcg64Mcg) -> f64 {
    let u1 = 1.0 - rng.random::<f64>(); // in (0, 1]: ln is finite
    let u2 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn rows_for(data_bytes: u64, row_bytes: u64) -> usize {
    usize::try_from(data_bytes / row_bytes.max(1))
        .unwrap_or(usize::MAX)
        .max(1)
}

fn schema(widths: &[usize], dir: &Path) -> Result<Arc<Type>, TestBedError> {
    let err = |source| TestBedError::Parquet {
        path: dir.to_path_buf(),
        source,
    };
    let fields = widths
        .iter()
        .enumerate()
        .map(|(c, &w)| {
            Type::primitive_type_builder(&format!("c{c}"), PhysicalType::FIXED_LEN_BYTE_ARRAY)
                .with_repetition(Repetition::REQUIRED)
                .with_length(i32::try_from(w).unwrap_or(i32::MAX))
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()
        .map_err(err)?;
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map(Arc::new)
        .map_err(err)
}

fn properties(data_page_bytes: usize, footer_padding_bytes: usize) -> Arc<WriterProperties> {
    let padding = (footer_padding_bytes > 0).then(|| {
        vec![KeyValue::new(
            "testbed.footer_padding".to_string(),
            "x".repeat(footer_padding_bytes),
        )]
    });
    Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::None)
            .set_data_page_size_limit(data_page_bytes.max(1))
            .set_key_value_metadata(padding)
            .build(),
    )
}

/// One file with one row group per entry of `rows_per_group`, random bytes in every column.
fn write_file(
    path: &Path,
    schema: Arc<Type>,
    props: Arc<WriterProperties>,
    widths: &[usize],
    rows_per_group: &[usize],
    rng: &mut Pcg64Mcg,
) -> Result<(), TestBedError> {
    let err = |source| TestBedError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::create(path).map_err(|e| TestBedError::io(path, e))?;
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(err)?;
    for &rows in rows_per_group {
        let mut row_group = writer.next_row_group().map_err(err)?;
        for &width in widths {
            let Some(mut column) = row_group.next_column().map_err(err)? else {
                break;
            };
            let mut buf = vec![0u8; rows * width];
            rng.fill_bytes(&mut buf);
            let buf = Bytes::from(buf);
            let values: Vec<FixedLenByteArray> = (0..rows)
                .map(|r| ByteArray::from(buf.slice(r * width..(r + 1) * width)).into())
                .collect();
            column
                .typed::<FixedLenByteArrayType>()
                .write_batch(&values, None, None)
                .map_err(err)?;
            column.close().map_err(err)?;
        }
        row_group.close().map_err(err)?;
    }
    writer.close().map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_median_and_bounds() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let widths = column_widths(&mut rng, 2001, 16.0, 0.5).unwrap();
        assert!(widths.iter().all(|&w| (1..=1024).contains(&w)));
        let mut sorted = widths.clone();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        assert!((14..=18).contains(&median), "median width {median}");
        // sigma 0 gives one width.
        let flat = column_widths(&mut rng, 10, 5.0, 0.0).unwrap();
        assert!(flat.iter().all(|&w| w == 5));
    }

    #[test]
    fn bad_shapes_are_errors_not_panics() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        assert!(column_widths(&mut rng, 0, 8.0, 1.0).is_err());
        assert!(column_widths(&mut rng, 3, 0.5, 1.0).is_err());
        assert!(column_widths(&mut rng, 3, 8.0, f64::NAN).is_err());
        let dir = std::env::temp_dir().join("testbed-never-written");
        assert!(write_many_small_files(&dir, 0, &SmallFilesShape::default()).is_err());
        let inverted = SmallFilesShape {
            min_file_bytes: 10,
            max_file_bytes: 5,
            ..SmallFilesShape::default()
        };
        assert!(write_many_small_files(&dir, 1, &inverted).is_err());
        let empty = LargeFileShape {
            row_groups: 0,
            ..LargeFileShape::default()
        };
        assert!(write_one_large_file(&dir, &empty).is_err());
        assert!(!dir.exists(), "no directory is made for a refused shape");
    }

    #[test]
    fn rows_fill_the_asked_bytes() {
        assert_eq!(rows_for(1000, 10), 100);
        assert_eq!(rows_for(5, 10), 1);
        assert_eq!(rows_for(1000, 0), 1000);
    }
}
