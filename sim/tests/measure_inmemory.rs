//! The real driver against an in-memory object store: it asks the store for exactly the ranges
//! the reader planned, and its GET and byte counts equal `sim run`'s for the same scenario and
//! arms on a fault-free store model (the policy is deterministic: issue 9's exact-match
//! criterion). Run with `cargo test -p sim --features measure`.
#![cfg(feature = "measure")]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

#[path = "common/bed.rs"]
mod setup;

use async_trait::async_trait;
use drive::RunError;
use drive_s3::RealStore;
use experiments::report::Metric;
use experiments::run::ScenarioRunError;
use experiments::run::{self, RunOptions};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetRange, GetResult, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use scenario::LoadedScenario;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Small enough to hold in memory, large enough for multi-MiB reads (progress chunks), several
/// row groups per file (coalescing across them) and several files per stream.
const SCENARIO: &str = r#"
name: measure-inmemory
seed: 5
table:
  generate:
    name: t
    file_count: 6
    row_groups_per_file: 3
    row_group_size: 3MiB
    rows_per_row_group: 40000
    columns:
      count: 10
      weights: { lognormal: { sigma: 0.5 } }
    codec: zstd
    compression_ratio: 3
    dictionary_fraction: 0.3
    page_size: 256KiB
    indexes: { offset_index: true, column_index: none }
query:
  columns: [0, 3, 4, 8]
store: s3-standard
settings:
  max_threads: 3
  max_parsing_threads: 3
arms:
  - name: base
    strategy: clickhouse-base
  - name: redesign
    strategy: clickhouse-redesign
"#;

fn load(text: &str) -> (tempfile::TempDir, LoadedScenario) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, text).unwrap();
    let loaded = scenario::load(&path, &[]).unwrap();
    (dir, loaded)
}

/// An in-memory store that logs every ranged GET (key, start, end) it serves and, like a
/// network, sends each body in pieces of `piece_bytes` (0 = in one piece) a little apart.
#[derive(Debug, Default)]
struct Recording {
    inner: InMemory,
    gets: Mutex<Vec<(String, u64, u64)>>,
    piece_bytes: usize,
}

impl Recording {
    fn streaming(piece_bytes: usize) -> Self {
        Recording {
            piece_bytes,
            ..Default::default()
        }
    }
}

impl std::fmt::Display for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recording({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for Recording {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        if let Some(GetRange::Bounded(r)) = &options.range {
            self.gets
                .lock()
                .unwrap()
                .push((location.to_string(), r.start, r.end));
        }
        let mut res = self.inner.get_opts(location, options).await?;
        if self.piece_bytes > 0 {
            // Irrefutable unless object_store's `fs` feature adds a `File` variant.
            #[allow(irrefutable_let_patterns)]
            let object_store::GetResultPayload::Stream(body) = res.payload
            else {
                unreachable!("the in-memory store streams")
            };
            let parts: Vec<bytes::Bytes> = body.try_collect().await?;
            let whole = bytes::Bytes::from(parts.concat());
            let piece = self.piece_bytes;
            let pieces: Vec<bytes::Bytes> = (0..whole.len())
                .step_by(piece)
                .map(|at| whole.slice(at..(at + piece).min(whole.len())))
                .collect();
            let paced = futures::stream::iter(pieces).then(|p| async move {
                tokio::time::sleep(std::time::Duration::from_micros(200)).await;
                Ok(p)
            });
            res.payload = object_store::GetResultPayload::Stream(paced.boxed());
        }
        Ok(res)
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        self.inner.delete_stream(locations)
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(
        &self,
        from: &Path,
        to: &Path,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}

/// Puts an object of the recorded size under every data file's key (the reader never parses
/// the bytes, so their content does not matter; a pattern makes short reads visible).
fn upload(
    loaded: &LoadedScenario,
    store: &Arc<Recording>,
    prefix: &str,
    rt: &tokio::runtime::Runtime,
) {
    let r = scenario::resolve(loaded, &Default::default()).unwrap();
    let keys = drive_s3::keys::table_keys(&r.table, prefix).unwrap();
    rt.block_on(async {
        for (key, file) in keys.iter().zip(&r.table.files) {
            let body: Vec<u8> = (0..file.size_bytes).map(|i| (i % 251) as u8).collect();
            store.put(key, PutPayload::from(body)).await.unwrap();
        }
    });
}

/// (case, arm) -> sorted (object, offset, length) of every store GET.
type RequestsByArm = BTreeMap<(String, String), Vec<(u64, u64, u64)>>;

/// (case, arm) -> sorted (object, offset, length) of every store GET in a trace CSV.
fn requests_by_arm(trace_csv: &str) -> RequestsByArm {
    // Flexible: the trace may carry more columns (needed-range rows) than request rows fill.
    let mut rd = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(trace_csv.as_bytes());
    let headers = rd.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (served, case, arm, object, offset, length) = (
        col("served_by"),
        col("case"),
        col("arm"),
        col("object"),
        col("offset_bytes"),
        col("length_bytes"),
    );
    let mut out = RequestsByArm::new();
    for rec in rd.records() {
        let rec = rec.unwrap();
        if &rec[served] != "store" {
            continue;
        }
        out.entry((rec[case].to_string(), rec[arm].to_string()))
            .or_default()
            .push((
                rec[object].parse().unwrap(),
                rec[offset].parse().unwrap(),
                rec[length].parse().unwrap(),
            ));
    }
    for v in out.values_mut() {
        v.sort_unstable();
    }
    out
}

#[test]
fn measure_matches_sim_run_request_for_request() {
    let (_dir, loaded) = load(SCENARIO);
    let rt = drive_s3::runtime(2).unwrap();
    let store = Arc::new(Recording::streaming(256 * 1024));
    upload(&loaded, &store, "tables/t", &rt);
    let real = RealStore {
        store: store.clone(),
        prefix: "tables/t".into(),
    };
    let opts = RunOptions {
        trace: true,
        timeline: true,
        ..Default::default()
    };
    let measured = setup::measure(&loaded, opts, &real, &rt, 0).unwrap();
    let simulated = run::run_scenario(
        &loaded,
        &RunOptions {
            trace: true,
            timeline: true,
            replications: Some(1),
            ..Default::default()
        },
    )
    .unwrap();

    // 1. The store saw exactly the ranges of the measured trace (what the reader asked for),
    //    under the keys `prefix/<recorded path>`.
    let r = scenario::resolve(&loaded, &Default::default()).unwrap();
    let mut seen: Vec<(u64, u64, u64)> = store
        .gets
        .lock()
        .unwrap()
        .iter()
        .map(|(key, start, end)| {
            let file = r
                .table
                .files
                .iter()
                .position(|f| format!("tables/t/{}", f.path) == *key)
                .unwrap_or_else(|| panic!("GET of an unknown key {key}"));
            (file as u64, *start, end - start)
        })
        .collect();
    seen.sort_unstable();
    let measured_requests = requests_by_arm(&measured.trace_csv);
    let mut traced: Vec<(u64, u64, u64)> = measured_requests.values().flatten().copied().collect();
    traced.sort_unstable();
    assert!(!seen.is_empty());
    assert_eq!(
        seen, traced,
        "the store served other ranges than the trace says"
    );

    // 2. Request for request, the same GETs as the simulated run, arm by arm.
    let simulated_requests = requests_by_arm(&simulated.trace_csv);
    assert_eq!(
        measured_requests.keys().collect::<Vec<_>>(),
        simulated_requests.keys().collect::<Vec<_>>()
    );
    for (k, m) in &measured_requests {
        let s = &simulated_requests[k];
        assert_eq!(m.len(), s.len(), "{k:?}: GETs measured vs simulated");
        assert_eq!(m, s, "{k:?}: the requested ranges differ");
    }

    // 3. The report's counts agree exactly; the metric names are the same, in the same order.
    let (mc, sc) = (&measured.report.cases[0], &simulated.report.cases[0]);
    for (ma, sa) in mc.arms.iter().zip(&sc.arms) {
        assert_eq!(ma.arm, sa.arm);
        let (mm, sm) = (&ma.runs[0], &sa.runs[0]);
        use planner::ProfileEvent as E;
        for metric in [
            Metric::Gets,
            Metric::ReadTasks,
            Metric::NeededBytes,
            Metric::TaskBytes,
            Metric::StoreBytes,
            Metric::Rows,
            Metric::Event(E::ParquetReadTasks),
            Metric::Event(E::ParquetReadTaskBytes),
            Metric::Event(E::ReadBufferFromS3Bytes),
        ] {
            assert_eq!(
                mm.value(metric),
                sm.value(metric),
                "arm {}: {} measured vs simulated",
                ma.arm,
                metric.name()
            );
        }
        assert!(mm.value(Metric::Gets) > 0.0);
        assert!(mm.value(Metric::WallTime) > 0.0);
        assert_eq!(mm.value(Metric::StoreRetries), 0.0);
    }

    // 4. A timeline in `sim run`'s format: same CSV header, one per arm, in time order, at least
    //    one and at most all the run's GETs in flight, none left open at the end.
    let header = |csv: &str| csv.lines().next().unwrap_or_default().to_string();
    assert_eq!(
        header(&measured.timeline_csv),
        header(&simulated.timeline_csv)
    );
    assert_eq!(measured.timelines.len(), mc.arms.len());
    for ((_, arm, _, _, rows), ma) in measured.timelines.iter().zip(&mc.arms) {
        assert_eq!(arm, &ma.arm);
        assert!(rows.len() > 2, "arm {arm}: {} timeline rows", rows.len());
        assert!(rows.windows(2).all(|w| w[0].time_ns < w[1].time_ns));
        let peak = rows.iter().map(|r| r.concurrent_gets).max().unwrap();
        assert!(peak >= 1);
        assert!(peak as f64 <= ma.runs[0].value(Metric::Gets));
        assert_eq!(rows.last().unwrap().concurrent_gets, 0, "arm {arm}");
    }
}

#[test]
fn progress_feeds_partial_readiness_and_first_byte_precedes_the_end() {
    let (_dir, loaded) = load(SCENARIO);
    let rt = drive_s3::runtime(2).unwrap();
    let store = Arc::new(Recording::streaming(256 * 1024));
    upload(&loaded, &store, "", &rt);
    let real = RealStore {
        store,
        prefix: String::new(),
    };
    let opts = RunOptions {
        trace: true,
        arms: vec!["redesign".into()],
        ..Default::default()
    };
    let out = setup::measure(&loaded, opts, &real, &rt, 0).unwrap();
    let arm = &out.report.cases[0].arms;
    assert_eq!(arm.len(), 1, "--arm keeps only the arm named");
    let m = &arm[0].runs[0];
    // Reads of several MiB report progress: the redesign serves ranges from partial reads.
    assert!(
        m.value(Metric::Event(
            planner::ProfileEvent::ParquetPartialReadsServed
        )) > 0.0,
        "no partial read was served: progress events did not reach the reader"
    );
    let mut rd = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .flexible(true)
        .from_reader(out.trace_csv.as_bytes());
    let headers = rd.headers().unwrap().clone();
    let mut rows = 0;
    for rec in rd.records() {
        let rec = rec.unwrap();
        let rec: BTreeMap<&str, &str> = headers.iter().zip(rec.iter()).collect();
        if rec["served_by"] != "store" {
            continue;
        }
        let n = |k: &str| rec[k].parse::<u64>().unwrap();
        assert!(n("start_ns") <= n("first_byte_ns") && n("first_byte_ns") <= n("end_ns"));
        assert_eq!(rec["status"], "206");
        assert_eq!(rec["attempt"], "1");
        rows += 1;
    }
    assert_eq!(rows as f64, m.value(Metric::Gets));

    // `sim fit` reads the measured trace as it reads a simulated one: nothing malformed, every
    // GET a store read, and a model fitted from it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("measured.csv");
    std::fs::write(&path, &out.trace_csv).unwrap();
    let parsed = tracefit::parse_file(&path, &Default::default()).unwrap();
    assert_eq!(parsed.malformed_count, 0, "{}", parsed.summary());
    let reads = parsed.records.iter().filter(|r| r.is_store_read()).count();
    assert_eq!(reads, rows);
    tracefit::fit_store(&parsed, &Default::default()).unwrap();
}

#[test]
fn scenario_features_the_real_driver_cannot_honour_are_refused_by_key() {
    let rt = drive_s3::runtime(1).unwrap();
    let real = RealStore {
        store: Arc::new(InMemory::new()),
        prefix: String::new(),
    };
    let cases = [
        (
            "caches:\n  page_cache: { page_cache_max_size: 1GiB }\n",
            "caches.page_cache",
        ),
        (
            "store: { preset: s3-standard, faults: { error_rate: 0.01 } }\n",
            "store.faults.error_rate",
        ),
    ];
    for (extra, key) in cases {
        let text = SCENARIO.replace("store: s3-standard\n", "") + extra;
        let text = if text.contains("store:") {
            text
        } else {
            text + "store: s3-standard\n"
        };
        let (_dir, loaded) = match std::panic::catch_unwind(|| load(&text)) {
            Ok(l) => l,
            Err(_) => panic!("the test scenario with `{extra}` does not load"),
        };
        let e = setup::measure(&loaded, RunOptions::default(), &real, &rt, 0)
            .err()
            .unwrap_or_else(|| panic!("`{key}` was not refused"));
        assert!(
            matches!(
                e,
                ScenarioRunError::Case {
                    error: RunError::Unsupported { .. },
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains(key), "{e}");
    }
}

#[test]
fn a_missing_object_fails_the_run_with_its_key() {
    let (_dir, loaded) = load(SCENARIO);
    let rt = drive_s3::runtime(1).unwrap();
    let real = RealStore {
        store: Arc::new(InMemory::new()),
        prefix: "nowhere".into(),
    };
    let e = setup::measure(&loaded, RunOptions::default(), &real, &rt, 0)
        .err()
        .expect("reading an empty store must fail");
    let text = e.to_string();
    assert!(text.contains("nowhere/"), "{text}");
    assert!(matches!(e, ScenarioRunError::Run { .. }), "{text}");
}

#[test]
fn unknown_arm_is_an_error_that_lists_the_arms() {
    let (_dir, loaded) = load(SCENARIO);
    let rt = drive_s3::runtime(1).unwrap();
    let real = RealStore {
        store: Arc::new(InMemory::new()),
        prefix: String::new(),
    };
    let opts = RunOptions {
        arms: vec!["redesgin".into()],
        ..Default::default()
    };
    let e = setup::measure(&loaded, opts, &real, &rt, 0).err().unwrap();
    assert!(e.to_string().contains("base, redesign"), "{e}");
}
