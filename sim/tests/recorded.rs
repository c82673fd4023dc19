//! A layout recorded from real Parquet files (written here by the `parquet` crate's writer) runs
//! in a scenario, and a simulated trace round-trips through `sim fit` and `sim replay`.

mod common;
use common::*;
use experiments::report::Metric;
use experiments::run::RunOptions;

#[test]
fn a_recorded_layout_of_three_thousand_files_runs_in_a_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let files = record::testdata::write_small_parquet_files(&data, 3000, 6, 200, 1).unwrap();
    assert_eq!(files.len(), 3000);
    let outcome = record::record_parquet_files(std::slice::from_ref(&data)).unwrap();
    assert!(outcome.skipped.is_empty(), "{:?}", outcome.skipped);
    assert_eq!(outcome.table.files.len(), 3000);
    let bytes = layout::format::write_table(&outcome.table).unwrap();
    let layout_path = dir.path().join("small.layout");
    std::fs::write(&layout_path, &bytes).unwrap();
    let columns = &outcome.table.schemas[0].columns;
    let text = format!(
        r#"
name: recorded
table:
  layout: {}
query:
  columns: [{}, {}]
store: s3-standard
settings: {{ max_threads: 16, max_parsing_threads: 16 }}
arms:
  - {{ name: base, strategy: clickhouse-base }}
  - {{ name: redesign, strategy: clickhouse-redesign }}
"#,
        layout_path.display(),
        columns[0],
        columns[3]
    );
    let r = run_text(&text);
    let rows = outcome
        .table
        .files
        .iter()
        .map(|f| f.num_rows())
        .sum::<u64>() as f64;
    assert_eq!(rows, 3000.0 * 200.0);
    for arm in ["base", "redesign"] {
        assert_eq!(metric(&r, "default", arm, Metric::Rows), rows, "{arm}");
        assert!(
            metric(&r, "default", arm, Metric::Gets) >= 2000.0,
            "{arm}: one footer read per file at least"
        );
    }
}

#[test]
fn a_simulated_trace_fits_back_to_its_store_model_and_replays() {
    let l = parse(&small(150, 4, "")).unwrap();
    let out = run(
        &l,
        &RunOptions {
            trace: true,
            ..Default::default()
        },
    );
    assert!(out.trace_rows > 100, "{} requests", out.trace_rows);
    let parsed = tracefit::parse_bytes(
        out.trace_csv.as_bytes(),
        "sim",
        &tracefit::ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(parsed.malformed_count, 0);
    let fit = tracefit::fit_store(&parsed, &tracefit::FitOptions::default()).unwrap();
    let spec = models::store::StoreSpec::from_yaml(&fit.to_yaml("fitted")).unwrap();
    // s3-standard's first byte: lognormal, median 27 ms (the trace's requests are small).
    let median = models::store::Sampler::new("first_byte", &spec.first_byte)
        .unwrap()
        .median()
        .unwrap();
    assert!(
        (median / 27e6 - 1.0).abs() < 0.10,
        "fitted median {median} ns vs 27 ms"
    );
    let replay = tracefit::replay_open_loop(&parsed, &spec, 5).unwrap();
    for row in replay.rows.iter().filter(|r| r.p <= 0.9) {
        assert!(
            row.relative_error.abs() < 0.15,
            "{} p{}: {:+.1}%",
            row.metric,
            row.p * 100.0,
            row.relative_error * 100.0
        );
    }
}

/// `traces/layouts/evolve-items.layout` (`tables/make_tables.py`): three files of one Iceberg
/// table, the first written before `price` was added, the first two before `qty` was renamed
/// `quantity`. Recorded by field id, a query of either column reads it from every file that
/// holds it and nothing from the file that does not.
#[test]
fn a_recorded_iceberg_table_with_an_added_and_a_renamed_column_runs() {
    let path = repo().join("traces/layouts/evolve-items.layout");
    let table = layout::format::read_table(&std::fs::read(&path).unwrap()).unwrap();
    let widths: Vec<usize> = table
        .files
        .iter()
        .map(|f| table.schema_of(f).unwrap().columns.len())
        .collect();
    assert_eq!(widths.iter().filter(|w| **w == 4).count(), 2, "{widths:?}");
    assert_eq!(widths.iter().filter(|w| **w == 3).count(), 1, "{widths:?}");
    let columns = &table.columns().unwrap().columns;
    assert_eq!(columns, &["id", "name", "quantity", "price"]);
    // The bytes of column `c` in every file that holds it.
    let held = |c: usize| -> u64 {
        table
            .files
            .iter()
            .flat_map(|f| &f.row_groups)
            .filter_map(|rg| rg.columns.get(c))
            .map(|ch| ch.range().len())
            .sum()
    };
    let needed = |column: &str| {
        let text = format!(
            r#"
name: evolve
table: {{ layout: {} }}
query: {{ columns: [{column}] }}
store: s3-standard
arms: [{{ name: arrow-rs, strategy: arrow-rs }}]
"#,
            path.display()
        );
        metric(&run_text(&text), "default", "arrow-rs", Metric::NeededBytes)
    };
    // Both queries read the same three footers; the rest is the column's chunks where held.
    assert_eq!(
        needed("quantity") - needed("price"),
        held(2) as f64 - held(3) as f64
    );
    assert!(held(3) > 0 && held(2) > 0);
}

/// A Q6-like query on the shipped TPC-H recording, with `extra` added under the query.
fn tpch_q06(extra: &str) -> String {
    format!(
        r#"
name: predicate
table:
  layout: {}
query:
  columns: [l_shipdate, l_discount, l_quantity, l_extendedprice]
{extra}
store: s3-standard
caches: {{ iceberg_metadata: warm }}
arms:
  - {{ name: redesign, strategy: clickhouse-redesign }}
  - {{ name: duckdb, strategy: duckdb }}
"#,
        repo().join("traces/layouts/tpch-lineitem.layout").display()
    )
}

#[test]
fn a_predicate_plans_the_files_and_row_groups_its_statistics_allow() {
    let q06 = "  predicate: \"l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'\"";
    let pruned = run_text(&tpch_q06(q06));
    // Mechanism off: the same query without its predicate reads all 84 month files.
    let all = run_text(&tpch_q06(""));
    for arm in ["redesign", "duckdb"] {
        let bytes = |r| metric(r, "default", arm, Metric::NeededBytes);
        let ratio = bytes(&pruned) / bytes(&all);
        // 12 of 84 files, of about equal size.
        assert!((0.10..0.18).contains(&ratio), "{arm}: {ratio}");
    }
    // Within one month file, a predicate on a day prunes nothing more (every row group of a
    // month spans the month), and a predicate no row group meets is refused on an Iceberg table.
    let day = run_text(&tpch_q06("  predicate: \"l_shipdate = date '1994-03-15'\""));
    let d = metric(&day, "default", "redesign", Metric::NeededBytes);
    assert!(d > 0.0 && d < metric(&pruned, "default", "redesign", Metric::NeededBytes) / 6.0);
    let none = parse(&tpch_q06("  predicate: \"l_shipdate > date '2020-01-01'\""))
        .and_then(|l| scenario::resolve(&l, &scenario::TableCache::default()).map(|_| ()));
    let e = none.unwrap_err().to_string();
    assert!(
        e.contains("predicate") && e.contains("excludes every file"),
        "{e}"
    );
    let both = parse(&tpch_q06(&format!("{q06}\n  row_groups: 0.5")))
        .and_then(|l| scenario::resolve(&l, &scenario::TableCache::default()).map(|_| ()));
    let e = both.unwrap_err().to_string();
    assert!(e.contains("predicate") && e.contains("keep one"), "{e}");
}

#[test]
fn a_recorded_table_lays_out_only_the_files_its_queries_touch_and_runs_as_if_whole() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    record::testdata::write_small_parquet_files(&data, 40, 6, 200, 1).unwrap();
    let table = record::record_parquet_files(std::slice::from_ref(&data))
        .unwrap()
        .table;
    let layout_path = dir.path().join("t.layout");
    std::fs::write(&layout_path, layout::format::write_table(&table).unwrap()).unwrap();
    let columns = &table.schemas[0].columns;
    let text = |files: &str| {
        format!(
            "name: kept\ntable:\n  layout: {}\nquery:\n  columns: [{}]\n  files: {files}\n\
             store: s3-standard\narms:\n  - {{ name: base, strategy: clickhouse-base }}\n",
            layout_path.display(),
            columns[2]
        )
    };
    let loaded = parse(&text("{ first: 10, count: 5 }")).unwrap();
    let resolved = scenario::resolve(&loaded, &scenario::TableCache::default()).unwrap();
    assert_eq!(resolved.table.files.len(), 40);
    assert_eq!(resolved.table.laid_out_file_count(), 5);
    for (i, f) in resolved.table.files.iter().enumerate() {
        if (10..15).contains(&i) {
            assert_eq!(f, &table.files[i], "file {i} as recorded");
        } else {
            assert!(f.is_placeholder(), "file {i}");
        }
    }
    // The 5 files run as they do from a layout of just those 5, read whole.
    let cut = layout::Table {
        files: table.files[10..15].to_vec(),
        ..table.clone()
    };
    let cut_path = dir.path().join("cut.layout");
    std::fs::write(&cut_path, layout::format::write_table(&cut).unwrap()).unwrap();
    let kept = run_text(&text("{ first: 10, count: 5 }"));
    let whole = run_text(&text("{}").replace(
        &layout_path.display().to_string(),
        &cut_path.display().to_string(),
    ));
    for m in [
        Metric::Gets,
        Metric::StoreBytes,
        Metric::Rows,
        Metric::WallTime,
    ] {
        assert_eq!(
            metric(&kept, "default", "base", m),
            metric(&whole, "default", "base", m),
            "{m:?}"
        );
    }
}
