//! Scenario-level tests of `sim run`: determinism, conservation, faults, caches.

mod common;
use common::*;
use experiments::report::Metric;
use experiments::run::RunOptions;
use planner::ProfileEvent;

#[test]
fn same_seed_same_report_whatever_the_thread_count() {
    let l = parse(&small(6, 3, "")).unwrap();
    let opts = RunOptions {
        replications: Some(3),
        trace: true,
        timeline: true,
        ..Default::default()
    };
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| run(&l, &opts));
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap()
        .install(|| run(&l, &opts));
    assert_eq!(one.report.to_json(), two.report.to_json());
    assert_eq!(one.trace_csv, two.trace_csv);
    assert_eq!(one.timeline_csv, two.timeline_csv);
    // And a different seed gives a different run (the check above could not pass by accident).
    let other = run(
        &l,
        &RunOptions {
            seed: Some(99),
            ..opts.clone()
        },
    );
    assert_ne!(one.report.to_json(), other.report.to_json());
}

#[test]
fn bytes_are_conserved_and_every_row_arrives() {
    let r = run_text(&small(5, 4, ""));
    for arm in ["base", "redesign"] {
        let needed = metric(&r, "default", arm, Metric::NeededBytes);
        let task = metric(&r, "default", arm, Metric::TaskBytes);
        let store = metric(&r, "default", arm, Metric::StoreBytes);
        assert!(needed > 0.0);
        assert!(task >= needed, "{arm}: task {task} < needed {needed}");
        assert!(store >= task, "{arm}: store {store} < task {task}");
        // 5 files x 4 row groups x 10,000 rows, all selected.
        assert_eq!(metric(&r, "default", arm, Metric::Rows), 200_000.0, "{arm}");
    }
}

#[test]
fn injected_faults_are_retried_and_lose_no_read() {
    let clean = run_text(&small(4, 4, ""));
    let faulty = run_text(&small(4, 4, "").replace(
        "store: s3-standard",
        "store:\n  preset: s3-standard\n  faults: { error_rate: 0.2, loss_rate: 0.02 }\n  timeout: 2s",
    ));
    for arm in ["base", "redesign"] {
        assert_eq!(
            metric(&clean, "default", arm, Metric::Rows),
            metric(&faulty, "default", arm, Metric::Rows)
        );
        assert!(
            metric(&faulty, "default", arm, Metric::StoreRetries) > 0.0,
            "{arm}: no retries happened"
        );
        assert!(
            metric(&faulty, "default", arm, Metric::Gets)
                > metric(&clean, "default", arm, Metric::Gets)
        );
    }
}

#[test]
fn a_warm_page_cache_fetches_fewer_store_bytes() {
    let cold = run_text(&small(
        4,
        4,
        "caches:\n  page_cache: { page_cache_max_size: 1GiB }",
    ));
    let warm = run_text(&small(
        4,
        4,
        "caches:\n  page_cache: { page_cache_max_size: 1GiB, warm: { fraction: 0.6 } }",
    ));
    for arm in ["base", "redesign"] {
        let c = metric(&cold, "default", arm, Metric::StoreBytes);
        let w = metric(&warm, "default", arm, Metric::StoreBytes);
        assert!(w < c * 0.8, "{arm}: warm {w} vs cold {c}");
    }
}

#[test]
fn every_shipped_scenario_resolves() {
    let dir = repo().join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let l = scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        scenario::describe(&l).unwrap_or_else(|e| panic!("{e}"));
        n += 1;
    }
    assert!(n >= 6, "only {n} scenarios");
}

#[test]
fn ablation_runs_base_each_mechanism_alone_and_the_redesign() {
    let l = parse(&small(1, 24, "")).unwrap();
    let out = run(
        &l,
        &RunOptions {
            ablation: true,
            ..Default::default()
        },
    );
    let arms: Vec<&str> = out.report.cases[0]
        .arms
        .iter()
        .map(|a| a.arm.as_str())
        .collect();
    assert_eq!(arms.len(), 10, "{arms:?}");
    assert_eq!(arms[0], "base");
    assert_eq!(arms[5], "base+R5");
    assert_eq!(arms[9], "redesign");
    // One file of many row groups: the issue queue (R5) alone raises read depth over base.
    let r = &out.report;
    assert!(
        metric(r, "default", "base+R5", Metric::MeanConcurrentGets)
            > 1.5 * metric(r, "default", "base", Metric::MeanConcurrentGets)
    );
}

/// R8's per-island budget is fitted as `updateReadStats` fits it: on the first progress report
/// of each fetch, and with no sample from a fetch whose only report is its end. With progress
/// chunks larger than any fetch nothing is ever sampled, the budget stays 0 and nothing is read
/// through; at the store's 1 MiB chunks the read-through fires.
#[test]
fn read_through_is_fitted_on_mid_transfer_progress_only() {
    let through = |set: &[&str]| {
        let l = load("partially-warm-page-cache.yaml", set);
        let r = run_one(&l, "small-pool", "redesign");
        metric(
            &r,
            "small-pool",
            "redesign",
            Metric::Event(ProfileEvent::PageCacheReadThroughBytes),
        )
    };
    assert!(through(&[]) > 0.0);
    assert_eq!(through(&["store.progress_chunk=1GiB"]), 0.0);
}

/// GETs beyond the IO pool come from `ColumnData` threads that find their read still queued and
/// run it inline (`Prefetcher::getRangeData`), so how many there are depends on the parsing
/// threads, not the pool: at a 16-thread pool and 16 parsing threads (6 for `ColumnData`) the
/// blocked threads wait on the running reads, at 96 (36 for `ColumnData`) many wait on queued
/// ones. Never more than the pool plus the stage's threads plus the footer.
#[test]
fn gets_beyond_the_io_pool_need_parsing_threads_that_run_queued_reads() {
    let in_flight = |parsing_threads: u32| {
        let threads = format!("settings.max_parsing_threads={parsing_threads}");
        let max_threads = format!("settings.max_threads={parsing_threads}");
        let l = load(
            "single-large-file.yaml",
            &[
                &threads,
                &max_threads,
                "input_format_parquet_max_io_threads=16",
            ],
        );
        let r = run_one(&l, "459-row-groups", "redesign");
        let get = |m| metric(&r, "459-row-groups", "redesign", m);
        (
            get(Metric::MeanConcurrentGets),
            get(Metric::MaxConcurrentGets),
        )
    };
    let (mean16, max16) = in_flight(16);
    let (mean96, max96) = in_flight(96);
    assert!(mean16 < 17.0, "16 parsing threads: {mean16} GETs in flight");
    assert!(
        mean96 >= 19.0,
        "96 parsing threads: {mean96} GETs in flight"
    );
    // The pool, the stage's share of the threads (`stage_threads`: `lround(threads x 0.375 +
    // 0.5)`, 7 of 16 and 37 of 96), one footer.
    assert!(max16 <= (16 + 7 + 1) as f64, "{max16}");
    assert!(max96 <= (16 + 37 + 1) as f64, "{max96}");
}

/// The report of one case and one arm of a scenario.
fn run_one(l: &scenario::LoadedScenario, case: &str, arm: &str) -> experiments::report::Report {
    run(
        l,
        &RunOptions {
            cases: vec![case.into()],
            arms: vec![arm.into()],
            ..Default::default()
        },
    )
    .report
}

#[test]
fn the_clients_cpu_per_request_applies_and_changes_no_request() {
    let free = run_text(&small(4, 4, ""));
    let busy = run_text(&small(
        4,
        4,
        "cpu:\n  cores: 2\n  network: { per_request: 50ms }\n",
    ));
    for arm in ["base", "redesign"] {
        let gets = metric(&busy, "default", arm, Metric::Gets);
        // Two threads spend 50 ms on each request before it goes out: the run cannot end
        // before they have done all of it; without the cost it ends well before that.
        let floor_ns = gets * 50e6 / 2.0;
        let (a, b) = (
            metric(&free, "default", arm, Metric::WallTime),
            metric(&busy, "default", arm, Metric::WallTime),
        );
        assert!(
            b >= floor_ns,
            "{arm}: {b} ns for {gets} GETs at 50 ms on 2 threads"
        );
        assert!(a < floor_ns, "{arm}: {a} ns without the cost");
        for m in [Metric::Gets, Metric::StoreBytes] {
            assert_eq!(
                metric(&free, "default", arm, m),
                metric(&busy, "default", arm, m)
            );
        }
    }
}

/// A redesign read a decoding step asks for is column data, charged to the Compressed pool,
/// also when it starts at its chunk's dictionary page: with every chunk dictionary-encoded,
/// every data read starts at one, and until 2026-12-07 all of them were charged to the 5%
/// Metadata pool (Compressed peak 0).
#[test]
fn data_reads_starting_at_a_dictionary_page_are_column_data() {
    use drive::metric::POOLS;
    use experiments::report::Metric as M;
    let text = small(2, 6, "").replace(
        "    columns: { count: 8 }",
        "    columns: { count: 8 }\n    dictionary_fraction: 1.0\n    indexes: { offset_index: true, column_index: none }",
    );
    let r = run_text(&text);
    // POOLS ends with the redesign's Metadata, Compressed and Decoded.
    let peak = |i: usize| metric(&r, "default", "redesign", M::PeakMemoryOf(POOLS[i]));
    let (metadata, compressed) = (peak(5), peak(6));
    assert!(compressed > 0.0, "Compressed peak {compressed}");
    // Metadata holds only the offset indexes (a few hundred bytes a chunk).
    assert!(
        metadata < compressed / 100.0,
        "Metadata {metadata} vs Compressed {compressed}"
    );
    let stalls = M::Event(ProfileEvent::ParquetIssueQueueStalls);
    assert_eq!(metric(&r, "default", "redesign", stalls), 0.0);
}

/// A footer is read by `readFileMetaData` through `Prefetcher::readSync`, not as a read task:
/// `ParquetReadTasks` and `ParquetReadTaskBytes` leave it out (they counted it until
/// 2026-12-07, so every GET was a read task), while the store's bytes keep it.
#[test]
fn footers_are_not_parquet_read_tasks() {
    let r = run_text(&small(3, 2, ""));
    for arm in ["base", "redesign"] {
        let m = |x| metric(&r, "default", arm, x);
        let tasks = m(Metric::Event(ProfileEvent::ParquetReadTasks));
        let gets = m(Metric::Gets);
        assert!(tasks > 0.0, "{arm}");
        assert!(
            gets - tasks >= 3.0,
            "{arm}: {gets} GETs, {tasks} read tasks"
        );
        let task_bytes = m(Metric::Event(ProfileEvent::ParquetReadTaskBytes));
        assert!(m(Metric::StoreBytes) > task_bytes, "{arm}");
    }
}

/// A base read the stream's thread runs inline on a parsing thread is taken over by the decode
/// task that then blocks on it: one thread, as ClickHouse's `getRangeData` runs a scheduled
/// task on the waiting task's thread. Two one-row-group files, one IO thread: the second file's
/// GET runs inline, and its wait is fetch wait, not a second thread's inline read (until
/// 2026-12-07 the 0.745 s GET held two parsing threads).
#[test]
fn a_blocked_task_takes_over_the_inline_read_it_waits_for() {
    let text = r#"
name: double-hold
seed: 1
table:
  generate:
    file_count: 2
    row_groups_per_file: 1
    row_group_size: 64MiB
    rows_per_row_group: 100000
    columns: { count: 1 }
    dictionary_fraction: 0
    page_size: 1MiB
    indexes: { offset_index: false, column_index: none }
query:
  columns: [0]
store: s3-standard
caches:
  parquet_metadata: warm
settings:
  max_threads: 2
  max_parsing_threads: 3
  max_download_threads: 1
arms:
  - name: base
    strategy: clickhouse-base
"#;
    let r = run_text(text);
    let m = |x| metric(&r, "default", "base", x);
    assert_eq!(m(Metric::Gets), 2.0);
    assert!(m(Metric::DecodeFetchWait) > 0.0);
    assert_eq!(m(Metric::DecodeInlineRead), 0.0);
}
