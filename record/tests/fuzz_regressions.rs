//! Inputs the fuzz targets found (fuzz/, scripts/fuzz), and hostile files audits built
//! (`tests/data/hostile/`), kept as regression tests.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::path::Path;

#[test]
fn a_footer_the_parquet_crate_would_spin_on_is_refused_before_it_gets_there() {
    // 889 bytes found by `record_parquet`: the `parquet` crate's Thrift skip spent 2.5 s in
    // `skip_till_depth` on it (a libFuzzer timeout). The bounded walk refuses it first.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/thrift-skip-spin.parquet");
    let e = record::record_parquet_file(&path, "spin.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not well-formed Thrift"), "{e}");
    assert!(e.contains("thrift-skip-spin.parquet"), "{e}");
}

#[test]
fn a_column_index_the_parquet_crate_would_spin_on_is_walked_first() {
    // 714 bytes found by `record_parquet` once footers were walked: the spin moved into the
    // column index the footer points at.
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz/column-index-spin.parquet");
    let e = record::record_parquet_file(&path, "spin.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("column index is not well-formed Thrift"), "{e}");
}

#[test]
fn a_manifest_list_apache_avro_panics_on_is_an_error_naming_it() {
    // Found by `record_iceberg`: a schema name that `apache-avro` 0.21 unwraps
    // (`schema.rs:272`). The recorder catches the panic and names the file.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let dir = tempfile::tempdir().unwrap();
    let events = dir.path().join("events");
    record::testdata::copy_dir(&data.join("iceberg/events"), &events).unwrap();
    let bad = std::fs::read(data.join("fuzz/manifest-list-bad-name.avro")).unwrap();
    for entry in std::fs::read_dir(events.join("metadata")).unwrap() {
        let p = entry.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("snap-")
        {
            std::fs::write(&p, &bad).unwrap();
        }
    }
    let json = events.join("metadata/00004-0ad7fd3a-4401-45dd-a229-6799434c83e4.metadata.json");
    let e = record::record_iceberg(&json).unwrap_err().to_string();
    assert!(e.contains("snap-"), "{e}");
    assert!(e.contains("Avro"), "{e}");
}

#[test]
fn page_indexes_that_share_bytes_are_refused_before_they_are_decoded() {
    // 1,115 bytes (an audit's construction, 2026-12-07): 10 row groups whose offset indexes
    // all point at one index of 100 pages. Decoded once per chunk, the same shape at 20,000 row
    // groups and 70,000 pages (a 1.2 MB file) listed 1.4 G pages (31 GiB).
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile/overlapping-offset-indexes.parquet");
    let e = record::record_parquet_file(&path, "overlap.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("add up to more than the file's"), "{e}");
    assert!(e.contains("row group"), "{e}");
}

#[test]
fn a_schema_nested_past_the_bound_is_refused_before_the_parquet_crate_recurses() {
    // 828 bytes: a root and 99 groups, each the only child of the one before, then a leaf.
    // The `parquet` crate recurses once a level (deep enough, a stack overflow aborts) and
    // the recorder kept a path per open group (quadratic memory).
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hostile/deep-schema.parquet");
    let e = record::record_parquet_file(&path, "deep.parquet")
        .unwrap_err()
        .to_string();
    assert!(e.contains("nests groups 100 deep"), "{e}");
    assert!(e.contains("MAX_SCHEMA_DEPTH"), "{e}");
}
