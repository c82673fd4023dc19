//! Replay: the trace's GETs, with their sizes, sent to a simulated store
//! (`models::store::S3Client`), and the simulated durations compared with the recorded ones.
//!
//! Open loop: each request starts at its recorded start time, whatever the store does.
//! Closed loop: the requests, in recorded start order, are issued by N workers, each starting
//! its next request as soon as its previous one completes (or fails). N defaults to the
//! recording's *mean* number of requests in flight, `sum of durations / makespan` rounded
//! (Little's law), at least 1: a closed loop of that many workers does the recorded work in the
//! recorded makespan when the model matches the recording. The peak in flight is reported too;
//! replaying at the peak instead measures how fast the same requests could go.
//!
//! What is replayed: store GETs with a positive size; from a sim trace only first attempts that
//! are not hedges (retries and hedges are the client model's job, not the workload's). Access
//! logs record start times to the second, so the requests of one second are spread evenly over
//! it rather than sent at once. All requests share one key prefix (logs do not say how S3
//! partitions them).

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
    /// Replayed reads that failed (retries exhausted).
    pub failed: usize,
    /// p50/p90/p99 of first-byte latency and of duration, recorded vs simulated (successful
    /// requests on both sides).
    pub rows: Vec<PercentileRow>,
    /// Sum of the recorded durations of the replayed requests, ns.
    pub total_recorded_ns: f64,
    /// Sum of the simulated durations, ns.
    pub total_simulated_ns: f64,
    /// (simulated - recorded) / recorded of the total; NaN when recorded is 0.
    pub total_relative_error: f64,
    /// How the requests were issued.
    pub mode: ReplayMode,
    /// First start to last end of the replayed requests in the recording, ns.
    pub makespan_recorded_ns: f64,
    /// First start to last completion in the simulation, ns.
    pub makespan_simulated_ns: f64,
    /// (simulated - recorded) / recorded of the makespan; NaN when recorded is 0.
    pub makespan_relative_error: f64,
    /// Time-weighted mean of requests in flight in the recording (sum of durations over the
    /// makespan).
    pub recorded_mean_in_flight: f64,
    /// Most requests in flight at once in the recording.
    pub recorded_peak_in_flight: usize,
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
            "total time of {} requests: recorded {}, simulated {} ({}); {} failed in simulation\n",
            self.requests,
            units::format_duration_f(self.total_recorded_ns),
            units::format_duration_f(self.total_simulated_ns),
            percent(self.total_relative_error, true),
            self.failed
        ));
        let mode = match self.mode {
            ReplayMode::OpenLoop => "open loop".to_string(),
            ReplayMode::ClosedLoop { concurrency } => {
                format!("closed loop, {concurrency} workers")
            }
        };
        s.push_str(&format!(
            "makespan ({mode}): recorded {}, simulated {} ({}); recorded in flight: mean {:.2}, peak {}\n",
            units::format_duration_f(self.makespan_recorded_ns),
            units::format_duration_f(self.makespan_simulated_ns),
            percent(self.makespan_relative_error, true),
            self.recorded_mean_in_flight,
            self.recorded_peak_in_flight
        ));
        s
    }
}

fn replayable(r: &TraceRecord) -> bool {
    let first_try = r.sim.as_ref().is_none_or(|s| s.attempt <= 1 && !s.hedge);
    r.operation == Operation::Get && r.served_by == ServedBy::Store && r.bytes > 0 && first_try
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

/// The replayable records of `trace` in start order, or an error saying there are none.
fn replayable_records(trace: &ParsedTrace) -> Result<Vec<&TraceRecord>, TraceError> {
    let mut records: Vec<&TraceRecord> = trace.records.iter().filter(|r| replayable(r)).collect();
    records.sort_by_key(|r| r.start_ns);
    if records.is_empty() {
        return Err(TraceError::Replay(format!(
            "{} holds no store GET with a positive size",
            trace.source
        )));
    }
    Ok(records)
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

/// `closed`: `None` = open loop; `Some(None)` = closed loop at the recorded mean concurrency.
fn replay(
    trace: &ParsedTrace,
    spec: &StoreSpec,
    seed: u64,
    closed: Option<Option<usize>>,
) -> Result<ReplayReport, TraceError> {
    let records = replayable_records(trace)?;
    let starts = start_times(&records, trace.format);
    let (mean_in_flight, peak_in_flight, makespan_recorded) =
        recorded_concurrency(&records, &starts);
    let mode = match closed {
        None => ReplayMode::OpenLoop,
        Some(c) => ReplayMode::ClosedLoop {
            concurrency: c.unwrap_or_else(|| (mean_in_flight.round() as usize).max(1)),
        },
    };
    let sim = simulate(&records, spec, seed, mode, &starts)?;
    let mut rec_first = Vec::new();
    let mut rec_total = Vec::new();
    let mut sim_first = Vec::new();
    let mut sim_total = Vec::new();
    let (mut total_recorded, mut total_simulated) = (0.0, 0.0);
    let (mut sim_first_start, mut sim_last_end) = (u64::MAX, 0u64);
    for (i, r) in records.iter().enumerate() {
        let Some(start) = sim.started_at.get(i).copied().flatten() else {
            continue;
        };
        sim_first_start = sim_first_start.min(start);
        if let Some(f) = sim.first_byte_at.get(i).copied().flatten() {
            sim_first.push(f.saturating_sub(start) as f64);
        }
        if r.is_success() {
            if let Some(l) = r.first_byte_latency_ns {
                rec_first.push(l as f64);
            }
        }
        let done = sim.done_at.get(i).copied().flatten();
        if let Some(d) = done {
            sim_last_end = sim_last_end.max(d);
        }
        if let (Some(d), Some(t), true) = (done, r.total_ns, r.is_success()) {
            rec_total.push(t as f64);
            sim_total.push(d.saturating_sub(start) as f64);
            total_recorded += t as f64;
            total_simulated += d.saturating_sub(start) as f64;
        }
    }
    let mut rows = Vec::new();
    for (metric, rec, sim) in [
        ("first_byte", &mut rec_first, &mut sim_first),
        ("duration", &mut rec_total, &mut sim_total),
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
    let makespan_simulated = sim_last_end.saturating_sub(sim_first_start.min(sim_last_end)) as f64;
    Ok(ReplayReport {
        requests: records.len(),
        failed: sim.failed,
        rows,
        total_recorded_ns: total_recorded,
        total_simulated_ns: total_simulated,
        total_relative_error: relative(total_simulated, total_recorded),
        mode,
        makespan_recorded_ns: makespan_recorded as f64,
        makespan_simulated_ns: makespan_simulated,
        makespan_relative_error: relative(makespan_simulated, makespan_recorded as f64),
        recorded_mean_in_flight: mean_in_flight,
        recorded_peak_in_flight: peak_in_flight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_error_against_zero_is_not_a_number_and_says_so() {
        assert!(relative(2.7e9, 0.0).is_nan());
        assert_eq!(percent(relative(2.7e9, 0.0), true), "n/a");
        assert_eq!(percent(relative(110.0, 100.0), true), "+10.0%");
        assert_eq!(percent(relative(90.0, 100.0), false), "-10.0%");
    }
}
