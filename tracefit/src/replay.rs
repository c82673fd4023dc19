//! Open-loop replay: the trace's GETs, with their sizes, sent at their recorded start times to
//! a simulated store (`models::store::S3Client`), and the simulated durations compared with the
//! recorded ones.
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
    /// (simulated - recorded) / recorded.
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
    /// (simulated - recorded) / recorded of the total.
    pub total_relative_error: f64,
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
                "{:<11} {:>5} {:>12} {:>12} {:>7.1}%\n",
                r.metric,
                format!("p{}", (r.p * 100.0).round()),
                units::format_duration_f(r.recorded_ns),
                units::format_duration_f(r.simulated_ns),
                100.0 * r.relative_error
            ));
        }
        s.push_str(&format!(
            "total time of {} requests: recorded {}, simulated {} ({:+.1}%); {} failed in simulation\n",
            self.requests,
            units::format_duration_f(self.total_recorded_ns),
            units::format_duration_f(self.total_simulated_ns),
            100.0 * self.total_relative_error,
            self.failed
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

/// Replays `trace`'s GETs against `spec` open loop (same sizes, same start times), with the
/// store's randomness seeded by `seed`, and compares the durations.
pub fn replay_open_loop(
    trace: &ParsedTrace,
    spec: &StoreSpec,
    seed: u64,
) -> Result<ReplayReport, TraceError> {
    let mut records: Vec<&TraceRecord> = trace.records.iter().filter(|r| replayable(r)).collect();
    records.sort_by_key(|r| r.start_ns);
    if records.is_empty() {
        return Err(TraceError::Replay(format!(
            "{} holds no store GET with a positive size",
            trace.source
        )));
    }
    let starts = start_times(&records, trace.format);
    let mut client = S3Client::new(spec, Pcg64::seed_from_u64(seed))
        .map_err(|e| TraceError::Replay(e.to_string()))?;
    let n = records.len();
    let mut first_byte_at: Vec<Option<u64>> = vec![None; n];
    let mut done_at: Vec<Option<u64>> = vec![None; n];
    let mut failed = 0;
    let mut next = 0;
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
        let start_at = starts.get(next).copied();
        let event_at = client.next_event_ns();
        if let Some(s) = start_at.filter(|s| event_at.is_none_or(|e| *s < e)) {
            let r = records[next];
            let object = r.object.parse::<u64>().unwrap_or(next as u64);
            let req = GetRequest {
                token: next as u64,
                object,
                prefix: 0,
                offset: r.offset_bytes.unwrap_or(0),
                len: r.bytes,
            };
            client
                .start(s, req)
                .map_err(|e| TraceError::Replay(e.to_string()))?;
            next += 1;
        } else if let Some(e) = event_at {
            events.clear();
            client.advance(e, &mut events);
            for (t, ev) in &events {
                match ev {
                    ClientEvent::FirstByte { token } => {
                        if let Some(slot) = first_byte_at.get_mut(*token as usize) {
                            slot.get_or_insert(*t);
                        }
                    }
                    ClientEvent::Completed { token } => {
                        if let Some(slot) = done_at.get_mut(*token as usize) {
                            *slot = Some(*t);
                        }
                    }
                    ClientEvent::Failed { .. } => failed += 1,
                    ClientEvent::Progress { .. } => {}
                }
            }
        } else {
            break;
        }
    }
    let mut rec_first = Vec::new();
    let mut rec_total = Vec::new();
    let mut sim_first = Vec::new();
    let mut sim_total = Vec::new();
    let (mut total_recorded, mut total_simulated) = (0.0, 0.0);
    for (i, r) in records.iter().enumerate() {
        let start = starts[i];
        if let Some(f) = first_byte_at[i] {
            sim_first.push(f.saturating_sub(start) as f64);
        }
        if r.is_success() {
            if let Some(l) = r.first_byte_latency_ns {
                rec_first.push(l as f64);
            }
        }
        if let (Some(d), Some(t), true) = (done_at[i], r.total_ns, r.is_success()) {
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
                let relative_error = if recorded_ns > 0.0 {
                    (simulated_ns - recorded_ns) / recorded_ns
                } else {
                    0.0
                };
                rows.push(PercentileRow {
                    metric,
                    p,
                    recorded_ns,
                    simulated_ns,
                    relative_error,
                });
            }
        }
    }
    let total_relative_error = if total_recorded > 0.0 {
        (total_simulated - total_recorded) / total_recorded
    } else {
        0.0
    };
    Ok(ReplayReport {
        requests: n,
        failed,
        rows,
        total_recorded_ns: total_recorded,
        total_simulated_ns: total_simulated,
        total_relative_error,
    })
}
