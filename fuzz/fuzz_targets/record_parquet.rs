//! `sim record parquet`: any file gives a layout that validates, or an error naming the file.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}")))
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
    let path = dir().path().join("fuzz.parquet");
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    match record::record_parquet_file(&path, "fuzz.parquet") {
        Ok(recorded) => {
            let table = layout::Table {
                schemas: vec![layout::Schema {
                    columns: recorded.columns.clone(),
                }],
                files: vec![recorded.layout.clone()],
                ..layout::Table::default()
            };
            if let Err(e) = table.validate() {
                panic!("a recorded file does not validate: {e}");
            }
        }
        Err(e) => assert!(e.to_string().contains("fuzz.parquet"), "{e}"),
    }
});
