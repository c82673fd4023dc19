//! The layout reader, and a layout that reads and validates run through `sim run` (base and
//! redesign, the first file's first column): any bytes give a report or an error. The reader
//! of a run's files (a skeleton, then the files kept) agrees with the whole reader.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

/// Runs cost per row group and column; larger tables are read and validated but not run, so
/// that one input stays well under libFuzzer's one-second timeout (the read path's own bound,
/// `limits::MAX_ROW_SUBGROUPS_PER_QUERY`, caps a query at seconds, not milliseconds).
const MAX_RUN_CHUNKS: usize = 2_000;

fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}")))
}

fuzz_target!(|bytes: &[u8]| {
    let whole = layout::format::read_table(bytes);
    let kept = layout::format::LayoutBody::open(bytes).and_then(|body| {
        let skeleton = body.skeleton()?;
        body.table_keeping(&skeleton, |_| true)
    });
    if let Ok(w) = &whole {
        // The skeleton checks less than a whole read, never more.
        assert_eq!(kept.as_ref().ok(), Some(w), "keeping every file is the whole table");
    }
    let Ok(table) = whole else {
        return;
    };
    if table.validate().is_err() {
        return;
    }
    let Some(first) = table.files.first() else {
        return;
    };
    let chunks: usize = first.row_groups.iter().map(|rg| rg.columns.len()).sum();
    if chunks == 0 || chunks > MAX_RUN_CHUNKS {
        return;
    }
    let path = dir().path().join("fuzz.layout");
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    let text = format!(
        "name: fuzz\ntable:\n  layout: {}\nquery:\n  columns: [0]\n  files: {{ first: 0, count: 1 }}\n\
         store: s3-standard\narms:\n  - {{ name: base, strategy: clickhouse-base }}\n  \
         - {{ name: redesign, strategy: clickhouse-redesign }}\n",
        path.display()
    );
    let Ok(loaded) = scenario::parse(&dir().path().join("fuzz.yaml"), &text, &[]) else {
        return;
    };
    let _ = experiments::run::run_scenario(&loaded, &experiments::run::RunOptions::default());
});
