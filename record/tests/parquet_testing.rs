//! Records every file of apache/parquet-testing (a copy in the repository, at
//! `testdata/parquet-testing`) and compares the layout with what the `parquet` crate itself
//! reports.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::path::{Path, PathBuf};

use layout::{FileLayout, Table};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use record::{record_parquet_file, record_parquet_files};

/// `<manifest>/../testdata/parquet-testing/<sub>`; a missing directory fails the test
/// rather than skipping it silently.
fn testing_dir(sub: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/parquet-testing")
        .join(sub);
    assert!(
        dir.is_dir(),
        "{} is missing: the repository carries apache/parquet-testing in testdata/parquet-testing",
        dir.display()
    );
    dir
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .parquet file in {}", dir.display());
    files
}

/// Files whose footer the `parquet` crate (60) rejects; the recorder's tolerant decoder reads
/// them, and a test of their own checks them against what pyarrow reports.
const FOOTER_REJECTED_BY_PARQUET_CRATE: &[&str] = &["dict-page-offset-zero.parquet"];

/// What the parquet crate reports, read independently of the recorder.
fn reference(path: &Path) -> parquet::errors::Result<ParquetMetaData> {
    let file = std::fs::File::open(path).unwrap();
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(&file)
}

fn file_named<'a>(table: &'a Table, name: &str) -> &'a FileLayout {
    table
        .files
        .iter()
        .find(|f| f.path == name)
        .unwrap_or_else(|| panic!("{name} not recorded"))
}

#[test]
fn records_every_file_in_data() {
    let dir = testing_dir("data");
    let files = parquet_files(&dir);
    let outcome = record_parquet_files(std::slice::from_ref(&dir)).unwrap();
    for (path, e) in &outcome.skipped {
        eprintln!("skipped {}: {e}", path.display());
    }
    assert!(
        outcome.skipped.is_empty(),
        "{} files skipped",
        outcome.skipped.len()
    );
    let table = outcome.table;
    assert_eq!(table.files.len(), files.len());
    table.validate().unwrap();

    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let got = file_named(&table, name);
        let want = match reference(path) {
            Ok(want) => want,
            Err(e) => {
                assert!(
                    FOOTER_REJECTED_BY_PARQUET_CRATE.contains(&name),
                    "{name}: {e}"
                );
                continue;
            }
        };
        assert_eq!(
            got.size_bytes,
            std::fs::metadata(path).unwrap().len(),
            "{name}"
        );
        assert_eq!(
            got.row_groups.len(),
            want.num_row_groups(),
            "{name}: row groups"
        );
        let schema = table.schema_of(got).unwrap();
        let want_columns: Vec<String> = want
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.path().string())
            .collect();
        assert_eq!(schema.columns, want_columns, "{name}: schema");

        for (gi, (rg, want_rg)) in got.row_groups.iter().zip(want.row_groups()).enumerate() {
            assert_eq!(
                rg.num_rows as i64,
                want_rg.num_rows(),
                "{name} rg {gi}: rows"
            );
            assert_eq!(rg.columns.len(), want_rg.num_columns());
            let page_index = want.page_index_for_row_group(gi);
            for (ci, (c, w)) in rg.columns.iter().zip(want_rg.columns()).enumerate() {
                let at = format!("{name} rg {gi} col {ci}");
                assert_eq!(
                    c.compressed_bytes() as i64,
                    w.compressed_size(),
                    "{at}: compressed"
                );
                assert_eq!(
                    c.uncompressed_bytes as i64,
                    w.uncompressed_size(),
                    "{at}: uncompressed"
                );
                // Data pages start where the footer says, or, where the offset index puts the
                // first data page later (an undeclared dictionary page before it), there.
                let want_pages = page_index.page_locations(ci);
                let first_listed = want_pages.and_then(|p| p.first()).map(|p| p.offset);
                let want_data = first_listed
                    .unwrap_or(w.data_page_offset())
                    .max(w.data_page_offset());
                assert_eq!(c.data_page_offset() as i64, want_data, "{at}: data page");
                // The chunk starts at the dictionary page, except where a writer stored 0 there.
                let want_start = match w.dictionary_page_offset() {
                    Some(d) if d > 0 => d,
                    _ => w.data_page_offset(),
                };
                assert_eq!(c.chunk_start as i64, want_start, "{at}: start");
                assert_eq!(
                    c.column_index().is_some(),
                    w.column_index_offset().is_some(),
                    "{at}"
                );
                assert_eq!(
                    c.offset_index().is_some(),
                    w.offset_index_offset().is_some(),
                    "{at}"
                );
                if let Some(r) = c.column_index() {
                    assert_eq!(Some(r.start as i64), w.column_index_offset(), "{at}");
                    assert_eq!(Some(r.len() as i32), w.column_index_length(), "{at}");
                }
                if let Some(r) = c.offset_index() {
                    assert_eq!(Some(r.start as i64), w.offset_index_offset(), "{at}");
                    assert_eq!(Some(r.len() as i32), w.offset_index_length(), "{at}");
                }
                assert_eq!(
                    c.bloom_filter().map(|b| b.offset as i64),
                    w.bloom_filter_offset(),
                    "{at}"
                );
                assert_eq!(
                    c.bloom_filter().and_then(|b| b.len).map(|l| l as i32),
                    w.bloom_filter_length(),
                    "{at}"
                );
                let got_pages = c.pages(got);
                assert_eq!(
                    got_pages.map(|p| p.len()),
                    want_pages.map(|p| p.len()),
                    "{at}: pages"
                );
                if let (Some(g), Some(w)) = (got_pages, want_pages) {
                    for (gp, wp) in g.iter().zip(w) {
                        assert_eq!(gp.offset as i64, wp.offset, "{at}");
                        assert_eq!(
                            gp.compressed_page_size as i32, wp.compressed_page_size,
                            "{at}"
                        );
                        assert_eq!(gp.first_row_index as i64, wp.first_row_index, "{at}");
                    }
                }
            }
        }
    }
}

#[test]
fn tiny_pages_yield_page_locations() {
    let path = testing_dir("data").join("alltypes_tiny_pages.parquet");
    let file = record_parquet_file(&path, "alltypes_tiny_pages.parquet")
        .unwrap()
        .layout;
    let rg = &file.row_groups[0];
    let mut multi_page_chunks = 0;
    for c in &rg.columns {
        let pages = c.pages(&file).expect("every chunk has an offset index");
        if pages.len() > 1 {
            multi_page_chunks += 1;
        }
        let locations: Vec<_> = pages.iter().collect();
        assert_eq!(locations[0].first_row_index, 0);
        assert_eq!(locations[0].offset, c.data_page_offset());
        for w in locations.windows(2) {
            assert!(w[0].first_row_index < w[1].first_row_index);
            assert_eq!(w[0].range().end, w[1].offset, "pages are contiguous");
        }
        assert_eq!(locations.last().unwrap().range().end, c.range().end);
    }
    assert!(
        multi_page_chunks > 0,
        "tiny pages: some chunk has several pages"
    );
    assert!(file.pages.len() > 100, "{} pages", file.pages.len());
}

#[test]
fn bloom_filter_files_yield_bloom_offsets() {
    let dir = testing_dir("data");
    let without_len =
        record_parquet_file(&dir.join("data_index_bloom_encoding_stats.parquet"), "a")
            .unwrap()
            .layout;
    let b = without_len.row_groups[0].columns[0]
        .bloom_filter()
        .expect("bloom filter");
    assert_eq!(b.len, None, "this file omits bloom_filter_length");
    assert!(b.offset >= without_len.row_groups[0].columns[0].range().end);

    let with_len = record_parquet_file(
        &dir.join("data_index_bloom_encoding_with_length.parquet"),
        "b",
    )
    .unwrap()
    .layout;
    let c = with_len.row_groups[0].columns[0];
    let b = c.bloom_filter().expect("bloom filter");
    let len = b.len.expect("this file records bloom_filter_length");
    assert!(len > 0);
    assert!(b.offset + u64::from(len) <= with_len.footer_range().start);
}

#[test]
fn dictionary_offset_zero_starts_at_the_data_page() {
    // The parquet crate rejects this footer (an old parquet-mr field 15 of another type), so the
    // facts come from pyarrow 26 (`ParquetFile(...).metadata.row_group(0).column(0)`):
    // dictionary_page_offset 0, data_page_offset 4, total_compressed_size 40,
    // total_uncompressed_size 180, 39 rows, SNAPPY, column l_partkey, offset index present.
    let path = testing_dir("data").join("dict-page-offset-zero.parquet");
    assert!(
        reference(&path).is_err(),
        "the parquet crate now reads it: compare with it instead"
    );
    let recorded = record_parquet_file(&path, "x").unwrap();
    assert_eq!(recorded.columns, ["l_partkey"]);
    let file = recorded.layout;
    assert_eq!(file.size_bytes, 635);
    assert_eq!(file.num_rows(), 39);
    let c = file.row_groups[0].columns[0];
    assert_eq!(c.chunk_start, 4, "starts at the data page offset, not at 0");
    assert_eq!(c.compressed_bytes(), 40);
    assert_eq!(c.uncompressed_bytes, 180);
    assert_eq!(c.codec, layout::Codec::Snappy);
    assert!(c.offset_index().is_some() && c.column_index().is_some());
    assert!(c.range().end <= file.footer_range().start);
}

#[test]
fn bad_data_gives_valid_layouts_or_errors_naming_the_file() {
    let dir = testing_dir("bad_data");
    let mut errors = 0;
    for path in parquet_files(&dir) {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        match record_parquet_file(&path, &name) {
            Ok(recorded) => {
                let table = Table {
                    schemas: vec![layout::Schema {
                        columns: recorded.columns,
                    }],
                    files: vec![recorded.layout],
                    ..Default::default()
                };
                table
                    .validate()
                    .unwrap_or_else(|e| panic!("{name}: invalid layout: {e}"));
                eprintln!("{name}: recorded");
            }
            Err(e) => {
                errors += 1;
                let text = e.to_string();
                eprintln!("{name}: {text}");
                assert!(text.contains(&name), "the error names the file: {text}");
                assert!(
                    text.len() > name.len() + 20,
                    "the error says what is wrong: {text}"
                );
            }
        }
    }
    assert!(errors > 0, "some of bad_data is rejected");
}
