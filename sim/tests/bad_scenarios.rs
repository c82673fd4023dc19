//! Bad scenarios fail with the file, the line, the key and a suggestion; nothing panics.

mod common;
use common::*;

fn error(text: &str) -> String {
    match parse(text).and_then(|l| {
        let tables = scenario::TableCache::default();
        scenario::resolve(&l, &tables).map(|_| ())
    }) {
        Ok(()) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn misspelled_key_names_line_and_suggests() {
    let text = small(2, 2, "").replace(
        "    strategy: clickhouse-redesign",
        "    stratgy: clickhouse-redesign",
    );
    let e = error(&text);
    assert!(e.contains("test.yaml:"), "{e}");
    assert!(e.contains("stratgy"), "{e}");
    assert!(e.contains("did you mean `strategy`"), "{e}");
    let line = text.lines().position(|l| l.contains("stratgy")).unwrap() + 1;
    assert!(e.contains(&format!(":{line}:")), "line {line}: {e}");
}

#[test]
fn size_without_unit() {
    let e = error(&small(2, 2, "").replace("row_group_size: 2MiB", "row_group_size: 2097152"));
    assert!(e.contains("no unit"), "{e}");
    assert!(e.contains("test.yaml:"), "{e}");
}

#[test]
fn negative_latency() {
    let e = error(&small(2, 2, "").replace("store: s3-standard", "store:\n  preset: s3-standard\n  first_byte: { distribution: lognormal, median: -5ms, p95: 75ms }"));
    assert!(e.contains("negative") || e.contains("-5ms"), "{e}");
}

#[test]
fn missing_layout_file() {
    let text = small(2, 2, "").replace(
        "table:\n  generate:",
        "table:\n  layout: traces/layouts/does-not-exist.layout\n  unused:",
    );
    let text = text.replace("  unused:", "  generate_unused:");
    let e = error(&text);
    assert!(
        e.contains("generate_unused") || e.contains("does-not-exist"),
        "{e}"
    );
    let text = small(2, 2, "");
    let start = text.find("table:").unwrap();
    let end = text.find("query:").unwrap();
    let text = format!(
        "{}table:\n  layout: traces/layouts/does-not-exist.layout\n{}",
        &text[..start],
        &text[end..]
    );
    let e = error(&text);
    assert!(e.contains("does-not-exist.layout"), "{e}");
    assert!(e.contains("sim record"), "{e}");
}

#[test]
fn unknown_strategy_and_setting() {
    let e = error(&small(2, 2, "").replace(
        "strategy: clickhouse-redesign",
        "strategy: clickhouse-redesing",
    ));
    assert!(e.contains("clickhouse-redesign"), "{e}");
    let e = error(&small(2, 2, "").replace("  max_threads: 4", "  max_thread: 4"));
    assert!(e.contains("max_threads"), "{e}");
    assert!(e.contains("test.yaml:"), "{e}");
}

#[test]
fn bad_overrides() {
    let l = parse(&small(2, 2, "")).unwrap();
    let ov = scenario::parse_override("arms.nope.settings.x=1").unwrap();
    assert!(l.with_overrides(&[ov]).is_err());
    assert!(scenario::parse_override("no-equals").is_err());
}

/// The scenario fuzzer's seeds are valid scenarios, so that it starts from the paths a good
/// file takes (a seed left behind by a format change, a case's `settings:` renamed `set:`,
/// made it start from an error).
#[test]
fn the_scenario_fuzzers_seeds_parse() {
    let dir = repo().join("fuzz/corpus/scenario");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        scenario::parse(&path, &text, &[]).unwrap_or_else(|e| panic!("{e}"));
        seen += 1;
    }
    assert!(seen > 0, "no seed in {}", dir.display());
}

/// Each was accepted: bloom probes by the billion (the planner then allocated 32 GB and
/// aborted), a file fraction that selects no file (the run read nothing and said nothing), two
/// queries of one name (reports and traces could not tell them apart), and a query past the
/// subgroup bound (refused only when each run built its reader, after `sim validate` passed).
#[test]
fn queries_that_cannot_run_are_refused_where_they_are_written() {
    let with = |query: &str| small(5, 2, "").replace("query:\n  columns: [1, 3, 6]\n", query);
    let probes =
        with("query:\n  columns: [1, 3, 6]\n  bloom:\n    columns: [2]\n    probes: 4000000000\n");
    let e = error(&probes);
    assert!(
        e.contains("MAX_BLOOM_PROBES") && e.contains("probes"),
        "{e}"
    );
    let line = probes.lines().position(|l| l.contains("probes")).unwrap() + 1;
    assert!(e.contains(&format!(":{line}:")), "line {line}: {e}");

    let e = error(&with(
        "query:\n  columns: [1]\n  files: { fraction: 0.01 }\n",
    ));
    assert!(e.contains("rounds to no file") && e.contains("0.1"), "{e}");

    for (queries, name) in [
        (
            "queries:\n  - { name: a, columns: [1] }\n  - { name: a, columns: [2] }\n",
            "`a`",
        ),
        (
            "queries:\n  - { name: q02, columns: [1] }\n  - { columns: [2] }\n",
            "`q02`",
        ),
    ] {
        let e = error(&with(queries));
        assert!(e.contains(name) && e.contains("must differ"), "{e}");
    }

    let big = small(400, 1000, "").replace(
        "row_group_size: 2MiB",
        "row_group_size: 64KiB\n    page_size: 64KiB",
    );
    let e = error(&big);
    assert!(
        e.contains("row subgroups") && e.contains("query q01"),
        "{e}"
    );
}

/// A `column_index:` or `bloom:` clause on columns the queried files hold no index or filter
/// for ran as the plain query, and said nothing.
#[test]
fn pruning_clauses_the_files_cannot_use_are_noted() {
    let text = small(3, 2, "").replace(
        "query:\n  columns: [1, 3, 6]\n",
        "query:\n  columns: [1, 3, 6]\n  bloom:\n    columns: [1]\n    drop_fraction: 0.9\n",
    );
    let l = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let r = scenario::resolve(&l, &scenario::TableCache::default()).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("`bloom:` lists") && n.contains("prunes nothing")),
        "{:?}",
        r.notes
    );
    let out = run(&l, &Default::default());
    assert!(
        out.notes.iter().any(|n| n.contains("`bloom:` lists")),
        "{:?}",
        out.notes
    );
    // With the filters in the table, nothing is said.
    let with_filters = text.replace(
        "    columns: { count: 8 }\n",
        "    columns: { count: 8 }\n    indexes: { bloom_filters: [1] }\n",
    );
    let l = parse(&with_filters).unwrap_or_else(|e| panic!("{e}"));
    let r = scenario::resolve(&l, &scenario::TableCache::default()).unwrap();
    assert!(r.notes.is_empty(), "{:?}", r.notes);
}

/// A value a case's `set:` or `--set` gave was refused at the file's own (valid) line, naming
/// neither the case nor the override.
#[test]
fn a_refused_override_names_itself_and_its_case() {
    let text = small(
        2,
        2,
        "cases:\n  - name: fine\n  - name: b\n    set: { replications: 0 }\n",
    )
    .replace("seed: 3\n", "seed: 3\nreplications: 1\n");
    let l = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    let e = scenario::describe(&l).unwrap_err().to_string();
    assert!(
        e.contains("`replications=0`") && e.contains("case b:") && e.contains("the case's `set:`"),
        "{e}"
    );
    // Not the line of the file's own `replications: 1`, which is valid.
    assert!(e.contains("test.yaml: `replications=0`"), "{e}");
    let l = parse_with(&small(2, 2, ""), &["replications=0"]);
    let e = scenario::describe(&l).unwrap_err().to_string();
    assert!(
        e.contains("`replications=0`") && e.contains("`--set`"),
        "{e}"
    );
    assert!(!e.contains("case "), "{e}");
}
