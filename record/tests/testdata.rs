//! The small-file writer and the recorder against each other.

use record::testdata::{write_small_parquet_files, ROWS_PER_PAGE};
use record::{record_parquet_files, RecordError};

#[test]
fn written_files_record_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let (n, columns, rows) = (12, 5, 1000);
    let paths = write_small_parquet_files(dir.path(), n, columns, rows, 7).unwrap();
    assert_eq!(paths.len(), n);
    let outcome = record_parquet_files(&[dir.path().to_path_buf()]).unwrap();
    assert!(outcome.skipped.is_empty());
    let table = outcome.table;
    table.validate().unwrap();
    assert_eq!(table.files.len(), n);
    assert_eq!(table.schemas.len(), 1);
    assert_eq!(table.schemas[0].columns, ["c0", "c1", "c2", "c3", "c4"]);
    for (f, p) in table.files.iter().zip(&paths) {
        assert_eq!(f.path, p.file_name().unwrap().to_str().unwrap());
        assert_eq!(f.size_bytes, std::fs::metadata(p).unwrap().len());
        assert_eq!(f.num_rows(), rows as u64);
        for (ci, c) in f.row_groups[0].columns.iter().enumerate() {
            assert!(c.dictionary_page().is_some(), "dictionary-encoded");
            let pages = c.pages(f).expect("offset index written");
            assert_eq!(pages.len(), rows.div_ceil(ROWS_PER_PAGE));
            let firsts: Vec<u64> = pages.iter().map(|p| p.first_row_index).collect();
            let want: Vec<u64> = (0..pages.len())
                .map(|i| (i * ROWS_PER_PAGE) as u64)
                .collect();
            assert_eq!(firsts, want);
            assert!(c.column_index().is_some());
            assert_eq!(
                c.bloom_filter().is_some(),
                ci == 0,
                "bloom filter on c0 only"
            );
        }
    }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let a = write_small_parquet_files(&dir.path().join("a"), 2, 3, 300, 1).unwrap();
    let b = write_small_parquet_files(&dir.path().join("b"), 2, 3, 300, 1).unwrap();
    let c = write_small_parquet_files(&dir.path().join("c"), 2, 3, 300, 2).unwrap();
    let read = |p: &std::path::PathBuf| std::fs::read(p).unwrap();
    assert_eq!(read(&a[0]), read(&b[0]));
    assert_eq!(read(&a[1]), read(&b[1]));
    assert_ne!(read(&a[0]), read(&c[0]));
    assert_ne!(read(&a[0]), read(&a[1]), "files of one call differ");
}

#[test]
fn zero_columns_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = write_small_parquet_files(dir.path(), 1, 0, 10, 1).unwrap_err();
    assert!(matches!(err, RecordError::Invalid { .. }) && err.to_string().contains("column"));
}

#[test]
fn skipped_files_are_named_and_strict_fails() {
    let dir = tempfile::tempdir().unwrap();
    write_small_parquet_files(dir.path(), 3, 2, 50, 3).unwrap();
    std::fs::write(
        dir.path().join("broken.parquet"),
        b"PAR1 this is not parquet at all",
    )
    .unwrap();
    let outcome = record_parquet_files(&[dir.path().to_path_buf()]).unwrap();
    assert_eq!(outcome.table.files.len(), 3);
    assert_eq!(outcome.skipped.len(), 1);
    let (path, err) = &outcome.skipped[0];
    assert!(path.ends_with("broken.parquet"));
    assert!(err.to_string().contains("broken.parquet"), "{err}");
    assert!(outcome.strict().is_err());
}

#[test]
fn no_parquet_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
    let err = record_parquet_files(&[dir.path().to_path_buf()]).unwrap_err();
    assert!(matches!(err, RecordError::NoParquetFiles { .. }), "{err}");
}
