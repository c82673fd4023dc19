//! The reader driven step by step, and to the end by the fake driver (fixed latency and
//! bandwidth, integer ns): the test points of GitHub issue 2 for the planner and controller.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use std::sync::Arc;

use layout::{IcebergMetadata, Table};
use planner::testing::{table, FakeDriver, FakeRun, TableShape};
use planner::{Action, Event, NoCache, Object, QuerySpec, ReadKind, ReadSource, Reader, Strategy};

fn strategy(name: &str, settings: &[(&str, &str)]) -> Strategy {
    let mut s = Strategy::preset(name).unwrap();
    for (k, v) in settings {
        s.set(k, v).unwrap();
    }
    s
}

fn run(t: &Arc<Table>, query: QuerySpec, s: Strategy) -> (FakeRun, Reader) {
    let mut reader = Reader::new(t.clone(), query, s).unwrap();
    let result = FakeDriver::default().run(&mut reader);
    assert!(result.finished, "did not finish: {:?}", result.error);
    (result, reader)
}

fn large_file() -> Arc<Table> {
    Arc::new(table(&TableShape {
        row_groups: 40,
        columns: 6,
        page_bytes: 256 * 1024,
        ..TableShape::default()
    }))
}

fn all_files(t: &Table) -> Vec<u32> {
    (0..t.files.len() as u32).collect()
}

#[test]
fn base_keeps_about_one_read_in_flight_per_file() {
    let t = large_file();
    let q = QuerySpec::new(vec![0, 2, 4], vec![0]);
    let (base, _) = run(&t, q.clone(), strategy("clickhouse-base", &[]));
    assert!(
        base.mean_reads_in_flight > 0.8 && base.mean_reads_in_flight <= 1.0,
        "{}",
        base.mean_reads_in_flight
    );
    let (redesign, _) = run(&t, q, strategy("clickhouse-redesign", &[]));
    assert!(
        redesign.mean_reads_in_flight > 4.0,
        "{}",
        redesign.mean_reads_in_flight
    );
    assert!(
        redesign.end_ns * 4 < base.end_ns,
        "redesign {} vs base {}",
        redesign.end_ns,
        base.end_ns
    );
    assert_eq!(base.rows, redesign.rows);
    assert_eq!(base.rows, t.files[0].num_rows());

    // Four files on four streams: about one read per open file.
    let t4 = Arc::new(table(&TableShape {
        files: 4,
        row_groups: 10,
        columns: 6,
        page_bytes: 256 * 1024,
        ..TableShape::default()
    }));
    let q4 = QuerySpec::new(vec![0, 2, 4], all_files(&t4));
    let (base4, _) = run(
        &t4,
        q4,
        strategy("clickhouse-base", &[("max_threads", "4")]),
    );
    assert!(
        base4.mean_reads_in_flight > 3.0 && base4.mean_reads_in_flight <= 4.0,
        "{}",
        base4.mean_reads_in_flight
    );
    assert_eq!(base4.max_reads_in_flight, 4);
}

#[test]
fn base_runs_reads_inline_when_the_io_pool_is_full() {
    let t = Arc::new(table(&TableShape {
        files: 8,
        row_groups: 2,
        columns: 3,
        ..TableShape::default()
    }));
    let q = QuerySpec::new(vec![0, 1], all_files(&t));
    let (r, reader) = run(&t, q, strategy("clickhouse-base", &[("max_threads", "8")]));
    assert!(
        r.reads.iter().any(|x| x.inline),
        "8 streams on a pool of 4 must run some reads inline"
    );
    assert!(
        r.max_reads_in_flight > 4,
        "inline reads exceed the pool: {}",
        r.max_reads_in_flight
    );
    assert!(reader.profile_events().parquet_fetch_wait_time_microseconds > 0);
}

/// Drives the reader by hand: answers the footer read, then collects what it issues at once.
fn reads_after_footer(s: Strategy, t: &Arc<Table>) -> Vec<(ReadKind, layout::ByteRange)> {
    let mut reader = Reader::new(t.clone(), QuerySpec::new(vec![0, 2], vec![0]), s).unwrap();
    let Some(Action::Read(footer)) = reader.poll_action(0, &NoCache) else {
        panic!("the first action must be the footer read")
    };
    assert_eq!(footer.kind, ReadKind::Footer);
    assert_eq!(footer.range.end, t.files[0].size_bytes);
    assert_eq!(
        reader.poll_action(0, &NoCache),
        None,
        "nothing else before the footer is known"
    );
    reader.handle(10, Event::ReadFirstByte { id: footer.id });
    reader.handle(
        20,
        Event::ReadCompleted {
            id: footer.id,
            source: ReadSource::Store,
        },
    );
    let mut reads = Vec::new();
    while let Some(a) = reader.poll_action(20, &NoCache) {
        if let Action::Read(r) = a {
            reads.push((r.kind, r.range));
        }
    }
    reads
}

#[test]
fn redesign_issues_index_reads_for_all_row_groups_at_init() {
    let t = Arc::new(table(&TableShape {
        row_groups: 20,
        columns: 4,
        ..TableShape::default()
    }));
    // A pool deep enough that no issued read waits for a thread.
    let reads = reads_after_footer(
        strategy(
            "clickhouse-redesign",
            &[("input_format_parquet_max_io_threads", "256")],
        ),
        &t,
    );
    assert!(
        reads.iter().all(|(k, _)| *k != ReadKind::DataPages),
        "no page read before its offset index: {reads:?}"
    );
    for (g, rg) in t.files[0].row_groups.iter().enumerate() {
        for c in [0, 2] {
            let oi = rg.columns[c].offset_index().unwrap();
            assert!(
                reads.iter().any(|(_, r)| r.contains(&oi)),
                "offset index of row group {g} column {c} not issued at init"
            );
        }
    }
    // The base reader issues one read and waits.
    let base = reads_after_footer(strategy("clickhouse-base", &[]), &t);
    assert_eq!(base.len(), 1, "{base:?}");
}

#[test]
fn min_bytes_in_flight_zero_turns_planning_off_not_the_redesign() {
    // The code's meaning of 0 (`enqueueRowGroupIndexReads` returns early; its test asserts
    // `ParquetPlannedReads = 0`): nothing is planned, the stages issue the reads, and the rest
    // of the redesign stays on, so the order is not the base reader's serial one.
    let t = large_file();
    let q = QuerySpec::new(vec![0, 3, 5], vec![0]);
    let order = |r: &FakeRun| {
        r.reads
            .iter()
            .map(|x| (x.start_ns, x.kind, x.range))
            .collect::<Vec<_>>()
    };
    let (base, _) = run(&t, q.clone(), strategy("clickhouse-base", &[]));
    let floor0 = strategy(
        "clickhouse-base",
        &[
            ("r5_issue_queue", "true"),
            ("input_format_parquet_min_bytes_in_flight", "0"),
        ],
    );
    let (off, off_reader) = run(&t, q.clone(), floor0);
    assert_eq!(off_reader.profile_events().parquet_planned_reads, 0);
    assert_ne!(
        order(&base),
        order(&off),
        "the stages issue, not the base's serial chain"
    );
    let starts = |r: &FakeRun| {
        r.reads
            .iter()
            .map(|x| x.start_ns)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    assert!(
        starts(&off) < off.reads.len(),
        "the stages start reads together, not one after another"
    );
    let (planned, reader) = run(
        &t,
        q.clone(),
        strategy("clickhouse-base", &[("r5_issue_queue", "true")]),
    );
    assert_ne!(
        order(&base),
        order(&planned),
        "with a floor the issue queue must change the order"
    );
    assert!(reader.profile_events().parquet_planned_reads > 0);
}

#[test]
fn privileged_subgroup_prevents_deadlock_when_budgets_are_tiny() {
    let t = Arc::new(table(&TableShape {
        files: 3,
        row_groups: 6,
        columns: 4,
        ..TableShape::default()
    }));
    let q = QuerySpec::new(vec![0, 1, 3], all_files(&t));
    let expected: u64 = t.files.iter().map(|f| f.num_rows()).sum();
    let tiny = [
        ("input_format_parquet_memory_high_watermark", "64KiB"),
        ("input_format_parquet_memory_low_watermark", "0"),
    ];
    for name in ["clickhouse-base", "clickhouse-redesign"] {
        let (normal, _) = run(&t, q.clone(), strategy(name, &[]));
        let (r, reader) = run(&t, q.clone(), strategy(name, &tiny));
        assert_eq!(r.rows, expected, "{name}");
        let status = reader.status();
        let limit: u64 = status.memory.iter().map(|u| u.limit_bytes).sum();
        let peak: u64 = status
            .memory
            .iter()
            .map(|u| u.peak_bytes)
            .max()
            .unwrap_or(0);
        assert!(
            peak > limit,
            "{name}: only privileged admission can exceed a 64 KiB budget ({peak} vs {limit})"
        );
        assert!(
            r.end_ns >= normal.end_ns,
            "{name}: tiny budgets cannot be faster"
        );
        assert_eq!(
            status.memory.iter().map(|u| u.usage_bytes).sum::<u64>(),
            0,
            "{name}: every charge released"
        );
    }
}

/// The redesign's `ColumnDataPrefetch` stage takes a subgroup's queued reads only while the
/// Compressed pool, with what the pass already took, holds at most its high watermark
/// (`checkTaskSchedulingLimits`); before 2026-12-07 every decode task that blocked took its
/// reads, and the pool's peak was the blocked tasks' count times a subgroup, whatever the
/// watermark.
#[test]
fn the_compressed_pool_bounds_what_blocked_tasks_take() {
    let t = large_file(); // 40 row groups of 6 columns x 4 pages x 256 KiB: 6 MiB each
    let q = QuerySpec::new((0..6).collect(), vec![0]);
    let row_group_bytes = 6 * 4 * 256 * 1024;
    let compressed = |watermark: &str| {
        let s = strategy(
            "clickhouse-redesign",
            &[
                ("input_format_parquet_memory_high_watermark", watermark),
                ("max_parsing_threads", "64"),
            ],
        );
        let (r, reader) = run(&t, q.clone(), s);
        assert_eq!(r.rows, t.files[0].num_rows());
        let pool = reader
            .status()
            .memory
            .into_iter()
            .find(|u| u.budget.name() == "Compressed")
            .unwrap();
        (pool.peak_bytes, pool.limit_bytes, r.end_ns)
    };
    let (peak, limit, slow_ns) = compressed("128MiB");
    assert_eq!(
        limit,
        128 * 1024 * 1024 * 35 / 100,
        "one stream's 0.35 share"
    );
    // Reads are coalesced up to `bytes_per_read_task` (16 MiB) across row groups; past the
    // limit go only the privileged subgroup's read and one demand read admitted at the limit.
    let read_task_bytes = 16 * 1024 * 1024 + row_group_bytes;
    assert!(
        peak <= limit + 2 * read_task_bytes,
        "the pool holds its limit but for two reads: {peak} > {limit} + 2 x {read_task_bytes}"
    );
    // A larger watermark lets more read ahead: the watermark is a setting that applies.
    let (peak_4g, _, fast_ns) = compressed("4GiB");
    assert!(peak_4g > peak + read_task_bytes, "{peak_4g} vs {peak}");
    assert!(fast_ns < slow_ns, "{fast_ns} vs {slow_ns}");
}

#[test]
fn bad_input_is_a_clear_error_never_a_panic() {
    let t = large_file();
    let s = strategy("clickhouse-redesign", &[]);
    let err = |q: QuerySpec| {
        Reader::new(t.clone(), q, s.clone())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let e = err(QuerySpec::new(vec![0, 99], vec![0]));
    assert!(
        e.contains("column 99 does not exist") && e.contains("6 columns"),
        "{e}"
    );
    let e = err(QuerySpec::new(vec![0], vec![3]));
    assert!(e.contains("file 3 does not exist"), "{e}");
    let mut q = QuerySpec::new(vec![0], vec![0]);
    q.prewhere_selectivity = -0.5;
    let e = err(q);
    assert!(
        e.contains("prewhere_selectivity") && e.contains("between 0 and 1"),
        "{e}"
    );
    let mut q = QuerySpec::new(vec![0], vec![0]);
    q.bloom_columns = vec![6];
    assert!(err(q).contains("bloom_columns"));
    let mut s = Strategy::preset("clickhouse-redesign").unwrap();
    let e = s
        .set("input_format_parquet_max_read_amplification", "0.9")
        .unwrap_err()
        .to_string();
    assert!(e.contains(">= 1"), "{e}");
    let e = s.set("max_threds", "8").unwrap_err().to_string();
    assert!(e.contains("did you mean `max_threads`"), "{e}");
}

#[test]
fn driver_contract_breaks_are_sticky_errors() {
    let t = large_file();
    let mut reader = Reader::new(
        t.clone(),
        QuerySpec::new(vec![0], vec![0]),
        strategy("clickhouse-base", &[]),
    )
    .unwrap();
    let _ = reader.poll_action(100, &NoCache);
    reader.handle(
        50,
        Event::DecodeCompleted {
            id: planner::DecodeId(7),
        },
    );
    assert!(reader
        .error()
        .unwrap()
        .to_string()
        .contains("time went backwards"));
    assert_eq!(reader.poll_action(200, &NoCache), None);
    let mut reader = Reader::new(
        t,
        QuerySpec::new(vec![0], vec![0]),
        strategy("clickhouse-base", &[]),
    )
    .unwrap();
    let _ = reader.poll_action(0, &NoCache);
    reader.handle(
        1,
        Event::ReadCompleted {
            id: planner::ReadId(12345),
            source: ReadSource::Store,
        },
    );
    assert!(reader.error().unwrap().to_string().contains("12345"));
    assert!(!reader.is_finished());
}

#[test]
fn failed_read_stops_the_reader() {
    let t = large_file();
    let mut reader = Reader::new(
        t,
        QuerySpec::new(vec![0], vec![0]),
        strategy("clickhouse-redesign", &[]),
    )
    .unwrap();
    let Some(Action::Read(r)) = reader.poll_action(0, &NoCache) else {
        panic!()
    };
    reader.handle(
        5,
        Event::ReadFailed {
            id: r.id,
            reason: "503 SlowDown".into(),
        },
    );
    let e = reader.error().unwrap().to_string();
    assert!(e.contains("503 SlowDown") && e.contains("file 0"), "{e}");
}

#[test]
fn row_group_buckets_deliver_exactly_the_rows_of_one_source() {
    let t = Arc::new(table(&TableShape {
        row_groups: 12,
        columns: 4,
        ..TableShape::default()
    }));
    let mut q = QuerySpec::new(vec![1, 2], vec![0]);
    q.row_group_keep_fraction = 0.6;
    q.seed = 9;
    let local = [("storage", "local"), ("max_threads", "4")];
    let (single, one) = run(&t, q.clone(), strategy("clickhouse-base", &local));
    let mut bucketed_settings = local.to_vec();
    bucketed_settings.push(("row_group_buckets", "true"));
    let (bucketed, many) = run(&t, q, strategy("clickhouse-base", &bucketed_settings));
    assert_eq!(single.rows, bucketed.rows);
    assert_eq!(one.output().rows_per_file, many.output().rows_per_file);
    assert_eq!(many.output().rows_per_unit.len(), 4);
    assert_eq!(
        many.output().rows_per_unit.iter().sum::<u64>(),
        bucketed.rows
    );
    let footers = |r: &FakeRun| {
        r.reads
            .iter()
            .filter(|x| x.kind == ReadKind::Footer)
            .count()
    };
    assert_eq!(footers(&single), 1);
    assert_eq!(footers(&bucketed), 4, "each bucket reads the footer itself");
    assert!(bucketed.end_ns < single.end_ns);
}

fn many_small_files(files: u32) -> Arc<Table> {
    // About 25 KiB files of one row group and 200 narrow columns (F4's shape, narrower).
    Arc::new(table(&TableShape {
        files,
        row_groups: 1,
        columns: 200,
        pages: 1,
        page_bytes: 100,
        dictionary_bytes: 0,
        rows: 500,
        footer_bytes: 8_000,
        ..TableShape::default()
    }))
}

/// `readFileMetaData` reads a footer with `readSync` on the stream's own thread: with one IO
/// thread and one parsing thread, eight streams still read their first footers at once, each
/// inline (until 2026-12-07 they waited for the IO pool or a free parsing thread: two at once).
#[test]
fn footers_are_read_on_the_streams_own_threads() {
    let t = many_small_files(16);
    let q = QuerySpec::new(vec![0, 1], all_files(&t));
    for name in ["clickhouse-base", "clickhouse-redesign"] {
        let s = strategy(
            name,
            &[
                ("max_threads", "8"),
                ("max_parsing_threads", "1"),
                ("max_download_threads", "1"),
                ("input_format_parquet_max_io_threads", "1"),
            ],
        );
        let (r, _) = run(&t, q.clone(), s);
        let footers: Vec<_> = r
            .reads
            .iter()
            .filter(|x| x.kind == ReadKind::Footer)
            .collect();
        assert_eq!(footers.len(), 16, "{name}");
        assert!(
            footers.iter().all(|x| x.inline),
            "{name}: every footer inline"
        );
        let first = footers.iter().map(|x| x.start_ns).min().unwrap();
        let at_once = footers.iter().filter(|x| x.start_ns == first).count();
        assert_eq!(at_once, 8, "{name}: one footer per stream at once");
    }
}

#[test]
fn floor_zero_splits_each_small_file_read() {
    let t = many_small_files(60);
    let q = QuerySpec::new(vec![10, 50, 90, 130, 170], all_files(&t));
    let data_reads = |r: &FakeRun| {
        r.reads
            .iter()
            .filter(|x| x.kind != ReadKind::Footer)
            .count()
    };
    let (base, _) = run(&t, q.clone(), strategy("clickhouse-base", &[]));
    let (floor, _) = run(&t, q.clone(), strategy("clickhouse-redesign", &[]));
    let (ratio, _) = run(
        &t,
        q,
        strategy(
            "clickhouse-redesign",
            &[("input_format_parquet_read_amplification_floor_bytes", "0")],
        ),
    );
    assert_eq!(
        data_reads(&floor),
        data_reads(&base),
        "the floor keeps the base's one read per stage"
    );
    assert!(
        data_reads(&ratio) >= 3 * data_reads(&floor),
        "{} vs {}",
        data_reads(&ratio),
        data_reads(&floor)
    );
    assert!(ratio.end_ns > floor.end_ns);
}

#[test]
fn pruning_prewhere_and_bloom_filters_change_what_is_read() {
    let t = Arc::new(table(&TableShape {
        row_groups: 20,
        columns: 5,
        pages: 8,
        bloom: true,
        ..TableShape::default()
    }));
    let plain = QuerySpec::new(vec![0, 1, 2], vec![0]);
    let mut q = plain.clone();
    q.prewhere_columns = vec![0];
    q.prewhere_selectivity = 0.2;
    q.column_index_columns = vec![0];
    q.page_keep_fraction = 0.5;
    q.bloom_columns = vec![1];
    q.bloom_probes = 2;
    q.bloom_drop_fraction = 0.3;
    q.seed = 3;
    // The peers at their defaults read neither column indexes nor bloom filters: the same
    // bytes, fewer rows returned. (DuckDB skips the other columns of a row group where no row
    // passes its filter: see `duckdb_with_a_filter_...`.)
    for name in ["arrow-rs", "polars", "arrow-cpp"] {
        let (all, a) = run(&t, plain.clone(), strategy(name, &[]));
        let (some, s) = run(&t, q.clone(), strategy(name, &[]));
        assert!(
            some.rows < all.rows / 4,
            "{name}: {} vs {}",
            some.rows,
            all.rows
        );
        assert_eq!(s.output().needed_bytes, a.output().needed_bytes, "{name}");
        assert_eq!(some.reads, all.reads, "{name}");
    }
    for name in ["clickhouse-base", "clickhouse-redesign"] {
        let (all, a) = run(&t, plain.clone(), strategy(name, &[]));
        let (some, s) = run(&t, q.clone(), strategy(name, &[]));
        assert!(
            some.rows < all.rows / 4,
            "{name}: {} vs {}",
            some.rows,
            all.rows
        );
        assert!(s.output().needed_bytes < a.output().needed_bytes, "{name}");
        assert!(s.output().row_groups_dropped_by_bloom > 0, "{name}");
        // Every bloom header and column index of a surviving row group is read.
        for rg in &t.files[0].row_groups {
            let header = layout::ByteRange::with_len(rg.columns[1].bloom_filter_offset, 256);
            let column_index = rg.columns[0].column_index().unwrap();
            for r in [header, column_index] {
                let covered = some.reads.iter().any(|x| x.range.contains(&r));
                let pruned = !some
                    .reads
                    .iter()
                    .any(|x| x.range.contains(&rg.columns[0].offset_index().unwrap()));
                assert!(covered || pruned, "{name}: {r} not read");
            }
        }
    }
}

/// ClickHouse's planner queues index reads and the first step's pages; bloom-filter blocks and
/// the main step's pages after PREWHERE are started by their stage's task: they are no
/// `ParquetPlannedReads` (until 2026-12-07 the model queued and counted them).
#[test]
fn only_what_the_planner_queues_counts_as_a_planned_read() {
    let t = Arc::new(table(&TableShape {
        row_groups: 20,
        columns: 5,
        pages: 8,
        bloom: true,
        ..TableShape::default()
    }));
    let mut q = QuerySpec::new(vec![0, 1, 2], vec![0]);
    q.prewhere_columns = vec![0];
    q.prewhere_selectivity = 0.5;
    q.bloom_columns = vec![1];
    q.bloom_probes = 2;
    q.seed = 3;
    let (r, reader) = run(&t, q.clone(), strategy("clickhouse-redesign", &[]));
    // Reads that lie in the main step's columns (1 and 2, adjacent) of one row group.
    let main_step = |x: &layout::ByteRange| {
        t.files[0].row_groups.iter().any(|rg| {
            let (first, last) = (rg.columns[1].range(), rg.columns[2].range());
            layout::ByteRange::with_len(first.start, last.end - first.start).contains(x)
        })
    };
    let main_reads = r
        .reads
        .iter()
        .filter(|x| x.kind == ReadKind::DataPages && main_step(&x.range))
        .count() as u64;
    assert!(main_reads > 0, "the main step read pages of its own");
    let data_reads = r
        .reads
        .iter()
        .filter(|x| x.kind != ReadKind::Footer)
        .count() as u64;
    let planned = reader.profile_events().parquet_planned_reads;
    assert!(planned > 0);
    assert!(
        planned + main_reads <= data_reads,
        "{planned} planned + {main_reads} main-step reads > {data_reads} reads"
    );
}

#[test]
fn iceberg_metadata_is_read_serially_before_any_data_when_cold() {
    let mut base = table(&TableShape {
        files: 2,
        ..TableShape::default()
    });
    base.iceberg = Some(IcebergMetadata {
        metadata_json_bytes: 5_000,
        manifest_list_bytes: 3_000,
        manifest_bytes: vec![12_000; 4],
    });
    let t = Arc::new(base);
    let q = QuerySpec::new(vec![0], all_files(&t));
    let (cold, _) = run(&t, q.clone(), strategy("clickhouse-redesign", &[]));
    let meta: Vec<_> = cold
        .reads
        .iter()
        .take_while(|r| r.kind == ReadKind::IcebergMetadata)
        .collect();
    assert_eq!(meta.len(), 6);
    assert!(
        meta.windows(2).all(|w| w[1].start_ns >= w[0].end_ns),
        "serial"
    );
    assert!(matches!(meta[5].object, Object::IcebergManifest(3)));
    assert!(cold.reads[6..]
        .iter()
        .all(|r| matches!(r.object, Object::Data(_)) && r.start_ns >= meta[5].end_ns));
    let mut warm = q.clone();
    warm.iceberg_metadata_cache_warm = true;
    warm.parquet_metadata_cache_warm = true;
    let (w, _) = run(&t, warm, strategy("clickhouse-redesign", &[]));
    assert!(w
        .reads
        .iter()
        .all(|r| r.kind != ReadKind::IcebergMetadata && r.kind != ReadKind::Footer));
    assert!(w.end_ns < cold.end_ns);
}

#[test]
fn a_large_footer_takes_a_second_serial_read() {
    let t = Arc::new(table(&TableShape {
        footer_bytes: 100_000,
        ..TableShape::default()
    }));
    let (r, _) = run(
        &t,
        QuerySpec::new(vec![0], vec![0]),
        strategy("clickhouse-base", &[]),
    );
    let footers: Vec<_> = r
        .reads
        .iter()
        .filter(|x| x.kind == ReadKind::Footer)
        .collect();
    assert_eq!(footers.len(), 2);
    assert_eq!(footers[0].range.len(), 64 * 1024);
    assert_eq!(footers[1].range.end, footers[0].range.start);
    assert_eq!(footers[0].range.len() + footers[1].range.len(), 100_008);
    assert!(footers[1].start_ns >= footers[0].end_ns);
}

/// The coupled peers' footers, from their code: Velox a 256 KiB tail
/// (`footer-speculative-io-size`) and the part it missed; Trino a 48 KiB tail and then the
/// whole footer again (`MetadataReader.readFooter`); parquet-java the 8-byte length and magic,
/// then the metadata. All three read a 64 KiB tail and the part missed before.
#[test]
fn coupled_peers_read_footers_as_their_code_does() {
    let t = Arc::new(table(&TableShape {
        row_groups: 4,
        columns: 4,
        page_bytes: 1024 * 1024,
        footer_bytes: 300_000,
        ..TableShape::default()
    }));
    let size = t.files[0].size_bytes;
    let l8 = 300_008;
    let footers = |name: &str| -> Vec<(u64, u64)> {
        let (r, _) = run(&t, QuerySpec::new(vec![0], vec![0]), strategy(name, &[]));
        r.reads
            .iter()
            .filter(|x| x.kind == ReadKind::Footer)
            .map(|x| (x.range.start, x.range.end))
            .collect()
    };
    let k = 1024;
    assert_eq!(
        footers("velox"),
        vec![(size - 256 * k, size), (size - l8, size - 256 * k)]
    );
    assert_eq!(
        footers("trino"),
        vec![(size - 48 * k, size), (size - l8, size)]
    );
    assert_eq!(
        footers("hadoop-s3a"),
        vec![(size - 8, size), (size - l8, size - 8)]
    );
}

/// Velox fetches a file of at most `file-preload-threshold` (8 MiB) whole for its footer
/// (`ReaderBase::loadFileMetaData`, `loadCompleteFile`) and reads its chunks again; Trino
/// reads a file of at most `parquet.small-file-threshold` (3 MiB, `<=`) whole once.
#[test]
fn small_files_velox_fetches_whole_for_the_footer_trino_reads_whole_once() {
    // Files of about 1 MiB: over Velox's 256 KiB tail, under its 8 MiB threshold.
    let t = Arc::new(table(&TableShape {
        files: 3,
        row_groups: 1,
        ..TableShape::default()
    }));
    let size = t.files[0].size_bytes;
    assert!(size > 256 * 1024 && size < 3 * 1024 * 1024, "{size}");
    let q = QuerySpec::new(vec![1, 2], all_files(&t));
    let footers = |s: Strategy| {
        let (r, _) = run(&t, q.clone(), s);
        let f: Vec<(u64, u64)> = r
            .reads
            .iter()
            .filter(|x| x.kind == ReadKind::Footer)
            .map(|x| (x.range.start, x.range.end))
            .collect();
        let data = r.reads.iter().filter(|x| x.kind == ReadKind::DataPages);
        (f, data.count())
    };
    let (whole, data) = footers(strategy("velox", &[]));
    assert_eq!(whole, vec![(0, size); 3]);
    assert_eq!(data, 3, "the chunks read again, one GET a file");
    let (tail, data) = footers(strategy("velox", &[("file-preload-threshold", "0")]));
    assert_eq!(tail, vec![(size - 256 * 1024, size); 3]);
    assert_eq!(data, 3);
    let at = format!("{size}B");
    let (r, _) = run(
        &t,
        q.clone(),
        strategy("trino", &[("parquet.small-file-threshold", &at)]),
    );
    assert_eq!(
        r.reads.len(),
        3,
        "a file of exactly the threshold is read whole"
    );
    assert!(r
        .reads
        .iter()
        .all(|x| x.range == layout::ByteRange::new(0, size)));
}

/// Trino (`ParquetReader`: `DiskRange(getStartingPos(), getTotalSize())`), parquet-java
/// (`internalReadRowGroup`, under hadoop-s3a) and Velox (`ParquetData::enqueueRowGroup`) read
/// each column chunk as one range, dictionary page included, and no page index on a scan.
/// They took ClickHouse's planner rules until 2026-12: an offset-index GET per chunk and the
/// dictionary a range of its own.
#[test]
fn coupled_peers_read_whole_chunks_and_no_page_index() {
    let t = Arc::new(table(&TableShape {
        row_groups: 4,
        columns: 4,
        page_bytes: 256 * 1024,
        ..TableShape::default()
    }));
    let q = QuerySpec::new(vec![0, 2], vec![0]);
    let chunks: Vec<layout::ByteRange> = t.files[0]
        .row_groups
        .iter()
        .flat_map(|rg| [rg.columns[0].range(), rg.columns[2].range()])
        .collect();
    for name in ["velox", "trino", "hadoop-s3a"] {
        let (r, _) = run(&t, q.clone(), strategy(name, &[]));
        let mut data: Vec<_> = r
            .reads
            .iter()
            .filter(|x| x.kind != ReadKind::Footer)
            .collect();
        data.sort_by_key(|x| x.range.start);
        let kinds: Vec<ReadKind> = data.iter().map(|x| x.kind).collect();
        assert!(
            kinds.iter().all(|k| *k == ReadKind::DataPages),
            "{name}: {kinds:?}"
        );
        assert_eq!(data.len(), chunks.len(), "{name}: one GET per chunk");
        for (x, c) in data.iter().zip(&chunks) {
            assert_eq!(x.range, *c, "{name}");
        }
    }
}

/// Velox's `DirectBufferedInput`: a chunk over `load-quantum` (8 MiB) is read in GETs of 8 MiB
/// (`DirectCoalescedLoad::computeLoadSizes` clamps a group's last request, and
/// `DirectInputStream::loadPosition` loads the rest by quanta); adjacent chunks group up to
/// `max-coalesced-bytes` (128 MiB) of payload. The preset read a large chunk in one GET and
/// capped a merged read's span at 8 MiB.
#[test]
fn velox_reads_large_chunks_in_quanta_and_groups_small_ones_past_the_quantum() {
    let mib = 1024 * 1024;
    let data_reads = |t: &Arc<Table>, columns: Vec<u32>| -> Vec<(u64, u64)> {
        let (r, _) = run(t, QuerySpec::new(columns, vec![0]), strategy("velox", &[]));
        let mut v: Vec<(u64, u64)> = r
            .reads
            .iter()
            .filter(|x| x.kind == ReadKind::DataPages)
            .map(|x| (x.range.start, x.range.end))
            .collect();
        v.sort_unstable();
        v
    };
    // 20 MiB chunks: 8 + 8 + 4 MiB each; the second chunk starts 12 MiB past the first one's
    // counted end, so it is a group of its own.
    let large = Arc::new(table(&TableShape {
        row_groups: 1,
        pages: 5,
        page_bytes: 4 * mib,
        ..TableShape::default()
    }));
    let c = |k: usize| large.files[0].row_groups[0].columns[k].range();
    let (c0, c1) = (c(0), c(1));
    let quanta = |r: layout::ByteRange| {
        vec![
            (r.start, r.start + 8 * mib),
            (r.start + 8 * mib, r.start + 16 * mib),
            (r.start + 16 * mib, r.end),
        ]
    };
    let mut want = quanta(c0);
    want.extend(quanta(c1));
    assert_eq!(data_reads(&large, vec![0, 1]), want);
    // Four adjacent 3 MiB chunks: one GET of 12 MiB.
    let small = Arc::new(table(&TableShape {
        row_groups: 1,
        pages: 3,
        page_bytes: mib,
        ..TableShape::default()
    }));
    let cols = &small.files[0].row_groups[0].columns;
    assert_eq!(
        data_reads(&small, vec![0, 1, 2, 3]),
        vec![(cols[0].range().start, cols[3].range().end)]
    );
}

/// parquet-java (`internalReadRowGroup`) asks S3A for one range per run of adjacent chunks,
/// whatever its length, and S3A never splits a range: four adjacent 3 MiB chunks are one GET.
/// The preset merged the chunks under S3A's 2 MiB bound alone: four GETs.
#[test]
fn hadoop_s3a_reads_adjacent_chunks_as_one_range() {
    let t = Arc::new(table(&TableShape {
        row_groups: 2,
        pages: 3,
        page_bytes: 1024 * 1024,
        ..TableShape::default()
    }));
    let (r, _) = run(
        &t,
        QuerySpec::new(vec![0, 1, 2, 3], vec![0]),
        strategy("hadoop-s3a", &[]),
    );
    let mut data: Vec<layout::ByteRange> = r
        .reads
        .iter()
        .filter(|x| x.kind == ReadKind::DataPages)
        .map(|x| x.range)
        .collect();
    data.sort_by_key(|x| x.start);
    let want: Vec<layout::ByteRange> = t.files[0]
        .row_groups
        .iter()
        .map(|rg| layout::ByteRange::new(rg.columns[0].range().start, rg.columns[3].range().end))
        .collect();
    assert_eq!(data, want);
}

/// DuckDB 1.4.4 with a filter (`ParquetReader::Scan`, `lazy_fetch`): only the filter
/// columns' chunks merge into read heads; every other column's chunk is a read head of its own,
/// fetched when first read, and never when no row of its row group passes. The preset merged
/// every column within 16 KiB whatever the filter: one GET per row group here.
#[test]
fn duckdb_with_a_filter_reads_the_other_columns_one_by_one_and_only_for_passing_rows() {
    // A footer over DuckDB's 16 KiB tail, so that no chunk is trimmed by the cached footer.
    let t = Arc::new(table(&TableShape {
        row_groups: 4,
        columns: 4,
        footer_bytes: 20_000,
        ..TableShape::default()
    }));
    let data_reads = |selectivity: f64| {
        let mut q = QuerySpec::new(vec![0, 1, 2, 3], vec![0]);
        q.prewhere_columns = vec![0];
        q.prewhere_selectivity = selectivity;
        let (r, _) = run(&t, q, strategy("duckdb", &[]));
        let mut reads: Vec<layout::ByteRange> = r
            .reads
            .iter()
            .filter(|x| x.kind == ReadKind::DataPages)
            .map(|x| x.range)
            .collect();
        reads.sort_by_key(|x| x.start);
        (reads, r.rows)
    };
    let chunks: Vec<layout::ByteRange> = t.files[0]
        .row_groups
        .iter()
        .flat_map(|rg| rg.columns.iter().map(|c| c.range()))
        .collect();
    let (some, rows) = data_reads(0.5);
    assert!(rows > 0);
    assert_eq!(some, chunks, "a GET per chunk");
    let (none, rows) = data_reads(0.0);
    assert_eq!(rows, 0);
    let filter_chunks: Vec<layout::ByteRange> = t.files[0]
        .row_groups
        .iter()
        .map(|rg| rg.columns[0].range())
        .collect();
    assert_eq!(
        none, filter_chunks,
        "no row passes: the filter column alone"
    );
}

#[test]
fn trino_reads_small_files_whole() {
    let t = many_small_files(5);
    let (r, _) = run(
        &t,
        QuerySpec::new(vec![1, 2], all_files(&t)),
        strategy("trino", &[]),
    );
    assert_eq!(r.reads.len(), 5);
    assert!(r.reads.iter().all(|x| x.range.start == 0));
}

#[test]
fn runs_are_deterministic() {
    let t = Arc::new(table(&TableShape {
        files: 6,
        row_groups: 5,
        columns: 5,
        bloom: true,
        ..TableShape::default()
    }));
    let mut q = QuerySpec::new(vec![0, 2, 4], all_files(&t));
    q.bloom_columns = vec![2];
    q.bloom_drop_fraction = 0.4;
    q.row_group_keep_fraction = 0.7;
    for name in planner::STRATEGY_PRESETS {
        let mut s = Strategy::preset(name).unwrap();
        if s.honours("max_threads") {
            s.set("max_threads", "3").unwrap();
        }
        let (a, ra) = run(&t, q.clone(), s.clone());
        let (b, rb) = run(&t, q.clone(), s);
        assert_eq!(a, b, "{name}");
        assert_eq!(ra.profile_events(), rb.profile_events(), "{name}");
    }
}

#[test]
fn every_mechanism_switches_on_alone_over_base() {
    let t = Arc::new(table(&TableShape {
        files: 3,
        row_groups: 6,
        columns: 5,
        ..TableShape::default()
    }));
    let q = QuerySpec::new(vec![0, 2, 4], all_files(&t));
    let (base, _) = run(&t, q.clone(), strategy("clickhouse-base", &[]));
    for n in 1..=10 {
        let key = [
            "r1_partial_readiness",
            "r2_bounded_coalescing",
            "r3_filesystem_cache_fixes",
            "r4_memory_by_lifetime",
            "r5_issue_queue",
            "r6_io_pool_from_query",
            "r7_in_flight_means_being_read",
            "r8_read_through_cached",
            "r9_files_prefetch",
            "r10_parallel_subgroups",
        ][n - 1];
        let s = strategy("clickhouse-base", &[(key, "true")]);
        assert!(s.mechanism(n) && (1..=10).filter(|&m| s.mechanism(m)).count() == 1);
        let (r, _) = run(&t, q.clone(), s);
        assert_eq!(r.rows, base.rows, "{key}");
    }
}

/// `Reader::tracked` says which gauges a reader keeps: every reader that says it keeps bytes in
/// flight and memory reports them after a run, and the peer programs, which keep neither,
/// report 0 and say so (a timeline would draw their 0 as measured).
#[test]
fn a_reader_says_which_gauges_it_keeps() {
    let t = large_file();
    for name in planner::STRATEGY_PRESETS {
        let (_, reader) = run(&t, QuerySpec::new(vec![0, 2], vec![0]), strategy(name, &[]));
        let (tracked, status) = (reader.tracked(), reader.status());
        let peer = ["arrow-rs", "arrow-cpp", "duckdb", "polars"].contains(name);
        assert_eq!(tracked.bytes_in_flight, !peer, "{name}");
        assert_eq!(tracked.memory, !peer, "{name}");
        assert_eq!(
            status.peak_bytes_in_flight > 0,
            tracked.bytes_in_flight,
            "{name}"
        );
        assert_eq!(status.peak_memory_bytes > 0, tracked.memory, "{name}");
    }
}
