//! `sim record iceberg`: the input replaces one file of a real pyiceberg table (the first byte
//! picks the metadata JSON, the manifest lists or the manifests); any bytes give a layout that
//! validates, or an error.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../record/tests/data/iceberg/events"
);
const METADATA: &str = "metadata/00004-0ad7fd3a-4401-45dd-a229-6799434c83e4.metadata.json";

fn table() -> &'static (tempfile::TempDir, PathBuf) {
    static TABLE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    TABLE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let events = dir.path().join("events");
        record::testdata::copy_dir(Path::new(FIXTURE), &events)
            .unwrap_or_else(|e| panic!("copy: {e}"));
        (dir, events)
    })
}

/// The metadata files of the role the first byte picks.
fn files_of(events: &Path, role: u8) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(events.join("metadata")) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            match role % 3 {
                0 => {
                    name == Path::new(METADATA)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                }
                1 => name.starts_with("snap-"),
                _ => name.ends_with("-m0.avro"),
            }
        })
        .collect();
    out.sort();
    out
}

// The recorder turns a panic inside `apache-avro` or `parquet` into an error naming the file
// (`catch_unwind`), as `sim record` does for users. libFuzzer's panic hook would abort before
// that: the default hook is restored, so only a panic that escapes the recorder (it still
// unwinds into libfuzzer-sys, which aborts) counts as a crash.
fuzz_target!(
    init: {
        let _ = std::panic::take_hook();
    },
    |bytes: &[u8]| {
    let Some((&role, body)) = bytes.split_first() else {
        return;
    };
    let (_, events) = table();
    let targets = files_of(events, role);
    let saved: Vec<Vec<u8>> = targets.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    if saved.len() != targets.len() {
        return;
    }
    for p in &targets {
        if std::fs::write(p, body).is_err() {
            return;
        }
    }
    if let Ok(t) = record::record_iceberg(&events.join(METADATA)) {
        if let Err(e) = t.validate() {
            panic!("a recorded table does not validate: {e}");
        }
    }
    for (p, b) in targets.iter().zip(&saved) {
        if let Err(e) = std::fs::write(p, b) {
            panic!("restoring {}: {e}", p.display());
        }
    }
});
