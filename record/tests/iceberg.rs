//! Records the Iceberg table pyiceberg wrote (tests/data/iceberg/make_table.py) and compares
//! the recording with what pyiceberg reported (tests/data/iceberg/expected.json).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::path::{Path, PathBuf};

use record::{record_iceberg, RecordError};
use serde_json::Value;

fn iceberg_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/iceberg")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(iceberg_dir().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn records_the_pyiceberg_table() {
    let want = expected();
    let table_dir = iceberg_dir().join("events");
    // The metadata names a warehouse under /tmp that was deleted after the copy: every path
    // below is found by the table-relative rule.
    let location = want["location"].as_str().unwrap();
    assert!(
        !Path::new(location.trim_start_matches("file://")).exists(),
        "{location} exists"
    );

    let metadata_json = table_dir.join(want["metadata_json"].as_str().unwrap());
    let table = record_iceberg(&metadata_json).unwrap();
    table.validate().unwrap();

    let phase = table
        .iceberg
        .as_ref()
        .expect("an Iceberg table has a metadata phase");
    assert_eq!(
        phase.metadata_json_bytes,
        std::fs::metadata(&metadata_json).unwrap().len()
    );
    let list = table_dir.join(want["manifest_list"].as_str().unwrap());
    assert_eq!(
        phase.manifest_list_bytes,
        std::fs::metadata(list).unwrap().len()
    );
    assert_eq!(
        phase.manifest_bytes.len() as u64,
        u64_at(&want, "manifest_count")
    );
    let want_lengths: Vec<u64> = want["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| u64_at(m, "manifest_length"))
        .collect();
    assert_eq!(
        phase.manifest_bytes, want_lengths,
        "manifest sizes in manifest list order"
    );

    let want_files = want["data_files"].as_array().unwrap();
    assert_eq!(table.files.len(), want_files.len());
    let mut got: Vec<_> = table.files.iter().collect();
    got.sort_by(|a, b| a.path.cmp(&b.path));
    for (g, w) in got.iter().zip(want_files) {
        assert_eq!(
            g.path,
            w["path"].as_str().unwrap(),
            "layout paths are table-relative"
        );
        assert_eq!(g.size_bytes, u64_at(w, "file_size_in_bytes"), "{}", g.path);
        assert_eq!(g.num_rows(), u64_at(w, "record_count"), "{}", g.path);
        assert!(!g.row_groups.is_empty());
    }
    assert_eq!(
        table.files.iter().map(|f| f.num_rows()).sum::<u64>(),
        u64_at(&want, "total_records")
    );
    assert_eq!(
        table.schemas.len(),
        1,
        "one schema shared by every data file"
    );
    assert_eq!(table.schemas[0].columns, ["id", "kind", "value"]);
    assert_eq!(
        table.provenance.sources,
        [metadata_json.display().to_string()]
    );
    assert!(table.provenance.tool.contains("iceberg"));
}

#[test]
fn an_earlier_snapshot_has_fewer_files() {
    // 00001 is the metadata after the first append: one manifest, one data file.
    let want = expected();
    let metadata_dir = iceberg_dir().join("events/metadata");
    let mut versions: Vec<PathBuf> = std::fs::read_dir(&metadata_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".metadata.json"))
        .collect();
    versions.sort();
    let counts: Vec<(usize, usize)> = versions
        .iter()
        .map(|v| {
            let t = record_iceberg(v).unwrap();
            (t.files.len(), t.iceberg.unwrap().manifest_bytes.len())
        })
        .collect();
    let n = want["data_files"].as_array().unwrap().len();
    // Version 0 is the empty table; each append adds one file and one manifest.
    let expect: Vec<(usize, usize)> = (0..=n).map(|i| (i, i)).collect();
    assert_eq!(counts, expect);
}

#[test]
fn a_missing_data_file_is_named() {
    let want = expected();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("events");
    record::testdata::copy_dir(&iceberg_dir().join("events"), &copy).unwrap();
    let gone = want["data_files"][0]["path"].as_str().unwrap();
    std::fs::remove_file(copy.join(gone)).unwrap();
    let err = record_iceberg(&copy.join(want["metadata_json"].as_str().unwrap())).unwrap_err();
    assert!(matches!(err, RecordError::Unresolved { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(gone) && text.contains("-m0.avro"),
        "names file and manifest: {text}"
    );
}

#[test]
fn broken_metadata_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v1.metadata.json");
    std::fs::write(&path, br#"{"format-version": 2}"#).unwrap();
    let err = record_iceberg(&path).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("v1.metadata.json") && text.contains("location"),
        "{text}"
    );

    std::fs::write(&path, b"not json").unwrap();
    assert!(record_iceberg(&path)
        .unwrap_err()
        .to_string()
        .contains("v1.metadata.json"));

    let missing = dir.path().join("absent.metadata.json");
    let err = record_iceberg(&missing).unwrap_err();
    assert!(
        matches!(err, RecordError::Io { .. }) && err.to_string().contains("absent"),
        "{err}"
    );
}

#[test]
fn a_corrupt_manifest_is_an_error_naming_it() {
    let want = expected();
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("events");
    record::testdata::copy_dir(&iceberg_dir().join("events"), &copy).unwrap();
    let manifest = copy.join(want["manifests"][0]["path"].as_str().unwrap());
    let bytes = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &bytes[..bytes.len() / 2]).unwrap();
    let err = record_iceberg(&copy.join(want["metadata_json"].as_str().unwrap())).unwrap_err();
    assert!(matches!(err, RecordError::Avro { .. }), "{err}");
    assert!(err.to_string().contains("-m0.avro"), "{err}");
}
