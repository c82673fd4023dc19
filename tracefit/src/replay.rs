//! Replay: the trace's GETs, with their sizes, sent to a simulated store
//! (`models::store::S3Client`), and the simulated durations compared with the recorded ones.
//!
//! Open loop: each request starts at its recorded start time, whatever the store does.
//! Closed loop: the requests, in recorded start order, are issued by N workers, each starting
//! its next request as soon as its previous one completes (or fails). N defaults to the
//! recording's *mean* number of requests in flight, `sum of durations / makespan` rounded
//! (Little's law), at least 1: a closed loop of that many workers does the recorded work in the
//! recorded makespan when the model matches the recording. The peak in flight is reported too;
//! replaying at the peak instead measures how fast the same requests could go. A trace whose
//! start times are whole seconds (an access log) has no known mean in flight, and its closed
//! loop needs the worker count given.
//!
//! What is replayed: store GETs with a positive size; from a sim trace only first attempts
//! that are not hedges (retries and hedges are the client model's job, not the workload's),
//! whatever their status (the model decides how the read fares). A log that does not label
//! attempts (an S3 access log, the test bed's request log) replays its successful GETs only:
//! an error response there was retried in a later line, or failed the read for good, and
//! replaying it would read bytes the reader never got (a 403's 243-byte body was replayed as a
//! read). The skipped ones are counted in the report. All requests share one key prefix (logs
//! do not say how S3 partitions them).
//!
//! What is compared: percentiles of first byte and duration, and the total, over the requests
//! that succeeded both in the recording and in the simulation (the same requests on both
//! sides). Access logs record start times to the second: the replay spreads each second's
//! requests evenly over it, so the recorded makespan and requests in flight are not known and
//! are reported as such (they were printed from the invented starts, and agreed with the open
//! loop by construction), and a closed loop needs its worker count given.

use models::store::{ClientEvent, GetRequest, S3Client, StoreSpec};
use rand::SeedableRng;
use rand_pcg::Pcg64;
use serde::Serialize;

use crate::error::TraceError;
use crate::fit::dist::sample_quantile;
use crate::parse::{ParsedTrace, TraceFormat};
use crate::record::{Operation, ServedBy, TraceRecord};

/// Percentiles the report shows.
pub const REPLAY_PERCENTILES: [f64; 3] = [0.5, 0.9, 0.99];

/// One line of the percentile table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PercentileRow {
    /// `first_byte` or `duration`.
    pub metric: &'static str,
    /// The percentile as a probability (0.5 = p50).
    pub p: f64,
    /// Recorded value in ns.
    pub recorded_ns: f64,
    /// Simulated value in ns.
    pub simulated_ns: f64,
    /// (simulated - recorded) / recorded; NaN (JSON `null`, printed `n/a`) when recorded is 0.
    pub relative_error: f64,
}

/// The comparison of a replay with the recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReplayReport {
    /// Requests replayed.
    pub requests: usize,
    /// GETs of the trace not replayed because the recording answered them with an error and
    /// the trace does not label attempts (see the module docs).
    pub skipped_errors: usize,
    /// Replayed reads that failed (retries exhausted).
    pub failed: usize,
    /// Replayed requests that succeeded in the recording and in the simulation: the ones the
    /// percentiles and totals compare.
    pub paired: usize,
    /// p50/p90/p99 of first-byte latency and of duration, recorded vs simulated (the paired
    /// requests on both sides).
    pub rows: Vec<PercentileRow>,
    /// Sum of the recorded durations of the paired requests, ns.
    pub total_recorded_ns: f64,
    /// Sum of their simulated durations, ns.
    pub total_simulated_ns: f64,
    /// (simulated - recorded) / recorded of the total; NaN when recorded is 0.
    pub total_relative_error: f64,
    /// How the requests were issued.
    pub mode: ReplayMode,
    /// Whether the trace's start times are whole seconds (an access log): the replay spread
    /// each second's requests evenly over it, and the recorded makespan and requests in
    /// flight are not known.
    pub starts_to_the_second: bool,
    /// First start to last end of the replayed requests in the recording, ns; `None` when the
    /// starts are whole seconds.
    pub makespan_recorded_ns: Option<f64>,
    /// First start to last completion in the simulation, ns.
    pub makespan_simulated_ns: f64,
    /// (simulated - recorded) / recorded of the makespan; NaN when recorded is 0 or unknown.
    pub makespan_relative_error: f64,
    /// Time-weighted mean of requests in flight in the recording (sum of durations over the
    /// makespan); `None` when the starts are whole seconds.
    pub recorded_mean_in_flight: Option<f64>,
    /// Most requests in flight at once in the recording; `None` when the starts are whole
    /// seconds.
    pub recorded_peak_in_flight: Option<usize>,
}

/// How a replay issues the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ReplayMode {
    /// At their recorded start times.
    OpenLoop,
    /// By `concurrency` workers, each starting its next request when the previous one ends.
    ClosedLoop {
        /// Workers.
        concurrency: usize,
    },
}

impl ReplayReport {
    /// The percentile table as aligned text.
    pub fn to_table(&self) -> String {
        let mut s = format!(
            "{:<11} {:>5} {:>12} {:>12} {:>8}\n",
            "metric", "p", "recorded", "simulated", "error"
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{:<11} {:>5} {:>12} {:>12} {:>8}\n",
                r.metric,
                format!("p{}", (r.p * 100.0).round()),
                units::format_duration_f(r.recorded_ns),
                units::format_duration_f(r.simulated_ns),
                percent(r.relative_error, false)
            ));
        }
        s.push_str(&format!(
            "total time of {} requests successful in both: recorded {}, simulated {} ({}); {} replayed, {} failed in simulation\n",
            self.paired,
            units::format_duration_f(self.total_recorded_ns),
            units::format_duration_f(self.total_simulated_ns),
            percent(self.total_relative_error, true),
            self.requests,
            self.failed
        ));
        if self.skipped_errors > 0 {
            s.push_str(&format!(
                "not replayed: {} GETs the recording answered with an error (the log does not say which were retried)\n",
                self.skipped_errors
            ));
        }
        s.push_str(&self.makespan_line());
        s
    }

    /// The makespan line: recorded (when known), simulated, and the recorded concurrency.
    fn makespan_line(&self) -> String {
        let mode = match self.mode {
            ReplayMode::OpenLoop => "open loop".to_string(),
            ReplayMode::ClosedLoop { concurrency } => {
                format!("closed loop, {concurrency} workers")
            }
        };
        let simulated = units::format_duration_f(self.makespan_simulated_ns);
        match (
            self.makespan_recorded_ns,
            self.recorded_mean_in_flight,
            self.recorded_peak_in_flight,
        ) {
            (Some(recorded), Some(mean), Some(peak)) if !self.starts_to_the_second => format!(
                "makespan ({mode}): recorded {}, simulated {simulated} ({}); recorded in flight: mean {mean:.2}, peak {peak}\n",
                units::format_duration_f(recorded),
                percent(self.makespan_relative_error, true),
            ),
            _ => format!(
                "makespan ({mode}, each logged second's GETs spread evenly over it): simulated {simulated}; recorded makespan and in flight: n/a (the log's start times are whole seconds)\n"
            ),
        }
    }
}

/// A store GET of positive size that is not a retry or a hedge (from a sim trace).
fn first_try_get(r: &TraceRecord) -> bool {
    let first_try = r.sim.as_ref().is_none_or(|s| s.attempt <= 1 && !s.hedge);
    r.operation == Operation::Get && r.served_by == ServedBy::Store && r.bytes > 0 && first_try
}

/// Whether `r` is replayed: a first-try GET that succeeded or, in a trace that labels
/// attempts (a sim trace), that started a read whatever its answer (the module docs).
fn replayable(r: &TraceRecord) -> bool {
    first_try_get(r) && (r.is_success() || r.sim.is_some())
}

/// Start times in ns from the first request; access-log seconds are spread evenly.
fn start_times(records: &[&TraceRecord], format: TraceFormat) -> Vec<u64> {
    let first = records.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let mut starts: Vec<u64> = records.iter().map(|r| r.start_ns - first).collect();
    if format == TraceFormat::S3AccessLog {
        let mut i = 0;
        while i < starts.len() {
            let mut j = i;
            while j < starts.len() && starts[j] == starts[i] {
                j += 1;
            }
            let n = (j - i) as u64;
            for (k, s) in starts[i..j].iter_mut().enumerate() {
                *s += 1_000_000_000 * k as u64 / n;
            }
            i = j;
        }
    }
    starts
}

/// The replayable records of `trace` in start order and the count of GETs skipped for their
/// error answer, or an error saying there is nothing to replay.
fn replayable_records(trace: &ParsedTrace) -> Result<(Vec<&TraceRecord>, usize), TraceError> {
    let mut records: Vec<&TraceRecord> = trace.records.iter().filter(|r| replayable(r)).collect();
    let skipped = trace
        .records
        .iter()
        .filter(|r| first_try_get(r) && !replayable(r))
        .count();
    records.sort_by_key(|r| r.start_ns);
    if records.is_empty() {
        return Err(TraceError::Replay(format!(
            "{} holds no store GET with a positive size{}",
            trace.source,
            if skipped > 0 {
                format!(" that succeeded ({skipped} answered with an error)")
            } else {
                String::new()
            }
        )));
    }
    Ok((records, skipped))
}

/// Recorded (mean, peak) requests in flight, and the makespan in ns, from the records with a
/// known total time; `starts` are the (spread) start times.
fn recorded_concurrency(records: &[&TraceRecord], starts: &[u64]) -> (f64, usize, u64) {
    let mut edges: Vec<(u64, i64)> = Vec::new();
    let mut busy: u128 = 0;
    let (mut first, mut last) = (u64::MAX, 0u64);
    for (r, s) in records.iter().zip(starts) {
        if let Some(t) = r.total_ns {
            let end = s.saturating_add(t);
            edges.push((*s, 1));
            edges.push((end, -1));
            busy += t as u128;
            first = first.min(*s);
            last = last.max(end);
        }
    }
    // Ends before starts at the same instant: back-to-back requests do not overlap.
    edges.sort_unstable();
    let (mut live, mut peak) = (0i64, 0i64);
    for (_, d) in edges {
        live += d;
        peak = peak.max(live);
    }
    let makespan = last.saturating_sub(first);
    let mean = if makespan > 0 {
        busy as f64 / makespan as f64
    } else {
        peak as f64
    };
    (mean, peak.max(0) as usize, makespan)
}

/// What the simulation gives per request: when it started, first byte, completion.
struct Simulated {
    started_at: Vec<Option<u64>>,
    first_byte_at: Vec<Option<u64>>,
    done_at: Vec<Option<u64>>,
    failed: usize,
}

/// Runs `records` against `spec`: open loop at `starts`, or closed loop with `workers`.
fn simulate(
    records: &[&TraceRecord],
    spec: &StoreSpec,
    seed: u64,
    mode: ReplayMode,
    starts: &[u64],
) -> Result<Simulated, TraceError> {
    let mut client = S3Client::new(spec, Pcg64::seed_from_u64(seed))
        .map_err(|e| TraceError::Replay(e.to_string()))?;
    let n = records.len();
    let mut sim = Simulated {
        started_at: vec![None; n],
        first_byte_at: vec![None; n],
        done_at: vec![None; n],
        failed: 0,
    };
    let mut next = 0;
    // Closed loop: workers free to start a request now (all of them at time 0).
    let mut free_workers = match mode {
        ReplayMode::OpenLoop => 0,
        ReplayMode::ClosedLoop { concurrency } => concurrency.max(1),
    };
    let mut now = 0u64;
    let mut events = Vec::new();
    // Each step starts a request or handles at least one event; the bound catches a model
    // that stops making progress instead of hanging.
    let max_steps = 1_000 * n as u64 + 1_000_000;
    let mut steps = 0u64;
    loop {
        steps += 1;
        if steps > max_steps {
            return Err(TraceError::Replay(format!(
                "no progress after {max_steps} steps"
            )));
        }
        let event_at = client.next_event_ns();
        let start_at = match mode {
            ReplayMode::OpenLoop => starts.get(next).copied(),
            ReplayMode::ClosedLoop { .. } => (free_workers > 0 && next < n).then_some(now),
        };
        if let Some(s) = start_at.filter(|s| event_at.is_none_or(|e| *s < e)) {
            let Some(r) = records.get(next) else { break };
            let object = r.object.parse::<u64>().unwrap_or(next as u64);
            let req = GetRequest {
                method: Default::default(),
                token: next as u64,
                object,
                prefix: 0,
                offset: r.offset_bytes.unwrap_or(0),
                len: r.bytes,
            };
            client
                .start(s, req)
                .map_err(|e| TraceError::Replay(e.to_string()))?;
            if let Some(slot) = sim.started_at.get_mut(next) {
                *slot = Some(s);
            }
            free_workers = free_workers.saturating_sub(1);
            next += 1;
        } else if let Some(e) = event_at {
            now = now.max(e);
            events.clear();
            client.advance(e, &mut events);
            for (t, ev) in &events {
                match ev {
                    ClientEvent::FirstByte { token } => {
                        if let Some(slot) = sim.first_byte_at.get_mut(*token as usize) {
                            slot.get_or_insert(*t);
                        }
                    }
                    ClientEvent::Completed { token } => {
                        if let Some(slot) = sim.done_at.get_mut(*token as usize) {
                            *slot = Some(*t);
                        }
                        free_workers += 1;
                    }
                    ClientEvent::Failed { .. } => {
                        sim.failed += 1;
                        free_workers += 1;
                    }
                    ClientEvent::Progress { .. } => {}
                }
            }
        } else {
            break;
        }
    }
    Ok(sim)
}

/// (simulated - recorded) / recorded; NaN when the recorded value is 0, where no relative
/// error exists (an access log's millisecond times make 0 common: it printed "0.0%").
fn relative(simulated: f64, recorded: f64) -> f64 {
    if recorded > 0.0 {
        (simulated - recorded) / recorded
    } else {
        f64::NAN
    }
}

/// A relative error as the table prints it: `+1.2%`, or `n/a` where it is undefined.
fn percent(e: f64, signed: bool) -> String {
    match (e.is_finite(), signed) {
        (false, _) => "n/a".to_string(),
        (true, true) => format!("{:+.1}%", 100.0 * e),
        (true, false) => format!("{:.1}%", 100.0 * e),
    }
}

/// Replays `trace`'s GETs against `spec` open loop (same sizes, same start times), with the
/// store's randomness seeded by `seed`, and compares the durations.
pub fn replay_open_loop(
    trace: &ParsedTrace,
    spec: &StoreSpec,
    seed: u64,
) -> Result<ReplayReport, TraceError> {
    replay(trace, spec, seed, None)
}

/// Replays `trace`'s GETs against `spec` closed loop: in recorded start order, by
/// `concurrency` workers (default: the recording's mean number in flight, see the module
/// docs), each starting its next request as soon as its previous one ends. Compares durations
/// and the makespan.
pub fn replay_closed_loop(
    trace: &ParsedTrace,
    spec: &StoreSpec,
    seed: u64,
    concurrency: Option<usize>,
) -> Result<ReplayReport, TraceError> {
    if concurrency == Some(0) {
        return Err(TraceError::Replay(
            "a closed-loop replay needs at least 1 worker (--concurrency 1 or more)".into(),
        ));
    }
    replay(trace, spec, seed, Some(concurrency))
}

/// The recorded and simulated samples of the requests that succeeded on both sides.
#[derive(Default)]
struct Paired {
    requests: usize,
    rec_first: Vec<f64>,
    sim_first: Vec<f64>,
    rec_total: Vec<f64>,
    sim_total: Vec<f64>,
}

impl Paired {
    /// Pairs each replayed request that succeeded in the recording with its simulated run, if
    /// that completed.
    fn of(records: &[&TraceRecord], sim: &Simulated) -> Paired {
        let mut p = Paired::default();
        for (i, r) in records.iter().enumerate() {
            let start = sim.started_at.get(i).copied().flatten();
            let done = sim.done_at.get(i).copied().flatten();
            let (Some(start), Some(done), true) = (start, done, r.is_success()) else {
                continue;
            };
            p.requests += 1;
            let first = sim.first_byte_at.get(i).copied().flatten();
            if let (Some(l), Some(f)) = (r.first_byte_latency_ns, first) {
                p.rec_first.push(l as f64);
                p.sim_first.push(f.saturating_sub(start) as f64);
            }
            if let Some(t) = r.total_ns {
                p.rec_total.push(t as f64);
                p.sim_total.push(done.saturating_sub(start) as f64);
            }
        }
        p
    }

    /// The percentile rows of first byte and duration.
    fn rows(&mut self) -> Vec<PercentileRow> {
        let mut rows = Vec::new();
        for (metric, rec, sim) in [
            ("first_byte", &mut self.rec_first, &mut self.sim_first),
            ("duration", &mut self.rec_total, &mut self.sim_total),
        ] {
            rec.sort_by(|a, b| a.total_cmp(b));
            sim.sort_by(|a, b| a.total_cmp(b));
            for p in REPLAY_PERCENTILES {
                if let (Some(recorded_ns), Some(simulated_ns)) =
                    (sample_quantile(rec, p), sample_quantile(sim, p))
                {
                    rows.push(PercentileRow {
                        metric,
                        p,
                        recorded_ns,
                        simulated_ns,
                        relative_error: relative(simulated_ns, recorded_ns),
                    });
                }
            }
        }
        rows
    }
}

/// First start to last completion in the simulation, ns.
fn simulated_makespan(sim: &Simulated) -> f64 {
    let first = sim.started_at.iter().flatten().min().copied();
    let last = sim.done_at.iter().flatten().max().copied();
    match (first, last) {
        (Some(f), Some(l)) => l.saturating_sub(f) as f64,
        _ => 0.0,
    }
}

/// `closed`: `None` = open loop; `Some(None)` = closed loop at the recorded mean concurrency.
fn replay(
    trace: &ParsedTrace,
    spec: &StoreSpec,
    seed: u64,
    closed: Option<Option<usize>>,
) -> Result<ReplayReport, TraceError> {
    let (records, skipped_errors) = replayable_records(trace)?;
    let starts_to_the_second = trace.format == TraceFormat::S3AccessLog;
    let starts = start_times(&records, trace.format);
    let (mean_in_flight, peak_in_flight, makespan_recorded) =
        recorded_concurrency(&records, &starts);
    let mode = match closed {
        None => ReplayMode::OpenLoop,
        Some(Some(concurrency)) => ReplayMode::ClosedLoop { concurrency },
        Some(None) if starts_to_the_second => {
            return Err(TraceError::Replay(format!(
                "{}'s start times are whole seconds, so its mean number of requests in flight \
                 (the closed loop's default worker count) is not known; give the workers \
                 (--concurrency N)",
                trace.source
            )))
        }
        Some(None) => ReplayMode::ClosedLoop {
            concurrency: (mean_in_flight.round() as usize).max(1),
        },
    };
    let sim = simulate(&records, spec, seed, mode, &starts)?;
    let mut paired = Paired::of(&records, &sim);
    let total_recorded: f64 = paired.rec_total.iter().sum();
    let total_simulated: f64 = paired.sim_total.iter().sum();
    let makespan_simulated = simulated_makespan(&sim);
    let known = |v| (!starts_to_the_second).then_some(v);
    let makespan_recorded_ns = known(makespan_recorded as f64);
    Ok(ReplayReport {
        requests: records.len(),
        skipped_errors,
        failed: sim.failed,
        paired: paired.requests,
        rows: paired.rows(),
        total_recorded_ns: total_recorded,
        total_simulated_ns: total_simulated,
        total_relative_error: relative(total_simulated, total_recorded),
        mode,
        starts_to_the_second,
        makespan_recorded_ns,
        makespan_simulated_ns: makespan_simulated,
        makespan_relative_error: makespan_recorded_ns
            .map_or(f64::NAN, |r| relative(makespan_simulated, r)),
        recorded_mean_in_flight: known(mean_in_flight),
        recorded_peak_in_flight: (!starts_to_the_second).then_some(peak_in_flight),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_bytes, ParseOptions};

    /// An access-log line at `hms` (10 March 2024), answered `status` with `bytes`, `total` and
    /// `tat` milliseconds.
    fn line(hms: &str, status: &str, error: &str, bytes: u64, total: u64, tat: u64) -> String {
        format!(
            "o b [10/Mar/2024:{hms} +0000] 1.2.3.4 r id REST.GET.OBJECT k \"GET /b/k HTTP/1.1\" {status} {error} {bytes} 1000 {total} {tat} \"-\" \"ua\" - h SigV4 c AuthHeader host TLSv1.3 - -\n"
        )
    }

    fn parsed(text: &str, name: &str) -> ParsedTrace {
        parse_bytes(text.as_bytes(), name, &ParseOptions::default()).unwrap()
    }

    fn model() -> StoreSpec {
        StoreSpec::preset("s3-standard").unwrap()
    }

    /// The audit's `err.log`: 3 GETs of 100 bytes in 12 ms, 5 answered 403 AccessDenied with a
    /// 243-byte error body. The 403s were replayed as reads of 243 bytes and the total line
    /// said "8 requests" over the sum of the 3 paired ones.
    #[test]
    fn error_answers_of_a_log_are_not_replayed_and_the_total_names_its_requests() {
        let mut text = String::new();
        for _ in 0..3 {
            text.push_str(&line("12:34:56", "206", "-", 100, 12, 10));
        }
        for _ in 0..5 {
            text.push_str(&line("12:34:56", "403", "AccessDenied", 243, 5, 5));
        }
        let report = replay_open_loop(&parsed(&text, "err.log"), &model(), 1).unwrap();
        let table = report.to_table();
        assert_eq!(
            (report.requests, report.skipped_errors, report.paired),
            (3, 5, 3),
            "{table}"
        );
        assert_eq!(report.total_recorded_ns, 36e6, "{table}");
        assert!(
            table.contains("total time of 3 requests successful in both: recorded 36ms")
                && table.contains("3 replayed")
                && table.contains("not replayed: 5 GETs"),
            "{table}"
        );
        let only_errors = line("12:34:56", "403", "AccessDenied", 243, 5, 5);
        let err = replay_open_loop(&parsed(&only_errors, "e.log"), &model(), 1).unwrap_err();
        assert!(
            err.to_string().contains("1 answered with an error"),
            "{err}"
        );
    }

    /// A sim trace's first attempt answered 503 started a read: it is replayed (the model
    /// retries it), but compared only if it succeeded on both sides.
    #[test]
    fn a_failed_first_attempt_of_a_sim_trace_is_replayed_but_not_compared() {
        let text = format!(
            "{}\nc,a,0,q,0,20000000,90000000,1,0,4096,206,store,1,false\nc,a,0,q,0,5000000,5000000,2,0,4096,503,store,1,false\nc,a,0,q,80000000,100000000,170000000,2,0,4096,206,store,2,false\n",
            crate::SIM_TRACE_HEADER
        );
        let report = replay_open_loop(&parsed(&text, "t.csv"), &model(), 1).unwrap();
        let table = report.to_table();
        assert_eq!(
            (report.requests, report.skipped_errors, report.paired),
            (2, 0, 1),
            "{table}"
        );
        assert_eq!(report.total_recorded_ns, 90e6, "{table}");
        // Both sides of every row are the one paired request.
        let first = report
            .rows
            .iter()
            .find(|r| r.metric == "first_byte")
            .unwrap();
        assert_eq!(first.recorded_ns, 20e6, "{table}");
    }

    /// An access log's starts are whole seconds: the recorded makespan and in flight are not
    /// known (they were printed from the starts the replay spreads over each second, and
    /// matched the open loop by construction: "recorded 2.99s, simulated 2.992s (+0.0%)"), and
    /// a closed loop needs its worker count (it defaulted to 1 from a mean of 0.00).
    #[test]
    fn an_access_logs_invented_starts_give_no_recorded_makespan() {
        let mut text = String::new();
        for hms in ["12:34:56", "12:34:56", "12:34:57", "12:34:58"] {
            text.push_str(&line(hms, "206", "-", 100, 1, 0));
        }
        let log = parsed(&text, "a.log");
        let report = replay_open_loop(&log, &model(), 1).unwrap();
        let table = report.to_table();
        assert!(report.starts_to_the_second);
        assert_eq!(report.makespan_recorded_ns, None, "{table}");
        assert_eq!(report.recorded_mean_in_flight, None, "{table}");
        assert!(report.makespan_relative_error.is_nan());
        assert!(
            table.contains("spread evenly") && table.contains("in flight: n/a"),
            "{table}"
        );
        assert!(!table.contains("recorded 2."), "{table}");
        let err = replay_closed_loop(&log, &model(), 1, None).unwrap_err();
        assert!(err.to_string().contains("--concurrency"), "{err}");
        let closed = replay_closed_loop(&log, &model(), 1, Some(2)).unwrap();
        assert_eq!(closed.mode, ReplayMode::ClosedLoop { concurrency: 2 });
    }

    #[test]
    fn a_relative_error_against_zero_is_not_a_number_and_says_so() {
        assert!(relative(2.7e9, 0.0).is_nan());
        assert_eq!(percent(relative(2.7e9, 0.0), true), "n/a");
        assert_eq!(percent(relative(110.0, 100.0), true), "+10.0%");
        assert_eq!(percent(relative(90.0, 100.0), false), "-10.0%");
    }
}
