//! Small deterministic Parquet files for tests and benchmarks, written with the `parquet`
//! crate's low-level column writer (no Arrow).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Repetition, Type as PhysicalType};
use parquet::data_type::Int64Type;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::RecordError;

/// Rows per data page: files with more rows get several pages per chunk, hence a page table.
pub const ROWS_PER_PAGE: usize = 100;
/// Distinct values per column: few enough that every chunk keeps its dictionary page.
const DISTINCT_VALUES: i64 = 64;

/// Writes `n` Parquet files `part-00000.parquet`, ... into `dir` (created if missing), each
/// with `columns` required INT64 columns `c0`, `c1`, ... and `rows` rows in one row group,
/// uncompressed, dictionary-encoded, with column and offset indexes, [`ROWS_PER_PAGE`] rows per
/// data page, and a bloom filter on `c0`. Values come from PCG-64 (MCG) seeded with `seed` and
/// the file number, so the same arguments give the same bytes. Returns the paths in order.
pub fn write_small_parquet_files(
    dir: &Path,
    n: usize,
    columns: usize,
    rows: usize,
    seed: u64,
) -> Result<Vec<PathBuf>, RecordError> {
    if columns == 0 {
        return Err(RecordError::invalid(
            dir,
            "a Parquet file needs at least 1 column, 0 were asked",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| RecordError::io(dir, e))?;
    let schema = Arc::new(schema(columns).map_err(|source| RecordError::Parquet {
        path: dir.to_path_buf(),
        source,
    })?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_data_page_row_count_limit(ROWS_PER_PAGE)
            .set_write_batch_size(ROWS_PER_PAGE)
            .set_column_bloom_filter_enabled(ColumnPath::from("c0"), true)
            .build(),
    );
    let mut paths = Vec::with_capacity(n);
    for i in 0..n {
        let path = dir.join(format!("part-{i:05}.parquet"));
        let mut rng =
            Pcg64Mcg::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        write_one(
            &path,
            schema.clone(),
            props.clone(),
            columns,
            rows,
            &mut rng,
        )?;
        paths.push(path);
    }
    Ok(paths)
}

fn schema(columns: usize) -> parquet::errors::Result<Type> {
    let fields = (0..columns)
        .map(|c| {
            Type::primitive_type_builder(&format!("c{c}"), PhysicalType::INT64)
                .with_repetition(Repetition::REQUIRED)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()?;
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
}

fn write_one(
    path: &Path,
    schema: Arc<Type>,
    props: Arc<WriterProperties>,
    columns: usize,
    rows: usize,
    rng: &mut Pcg64Mcg,
) -> Result<(), RecordError> {
    let file = File::create(path).map_err(|e| RecordError::io(path, e))?;
    let parquet_err = |source| RecordError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(parquet_err)?;
    let mut row_group = writer.next_row_group().map_err(parquet_err)?;
    let mut values = vec![0i64; rows];
    for _ in 0..columns {
        let Some(mut column) = row_group.next_column().map_err(parquet_err)? else {
            break;
        };
        for v in values.iter_mut() {
            *v = rng.random_range(0..DISTINCT_VALUES);
        }
        column
            .typed::<Int64Type>()
            .write_batch(&values, None, None)
            .map_err(parquet_err)?;
        column.close().map_err(parquet_err)?;
    }
    row_group.close().map_err(parquet_err)?;
    writer.close().map_err(parquet_err)?;
    Ok(())
}

/// Copies the directory tree `from` to `to` (tests copy the committed Iceberg table before
/// damaging one of its files).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
