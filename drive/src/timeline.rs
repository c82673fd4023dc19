//! A timeline of one run: concurrency, bytes in flight and pool memory whenever they change.

use planner::Reader;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    pub time_ns: u64,
    pub concurrent_gets: u64,
    pub bytes_in_flight: u64,
    pub target_bytes_in_flight: u64,
    pub reads_running: u64,
    pub reads_queued: u64,
    /// (pool, bytes) in the reader's fixed pool order.
    pub memory: Vec<(String, u64)>,
    /// Which of these gauges the reader keeps (the same on every row of a run): a peer
    /// program's bytes in flight and memory read 0 without being measured. Not serialised:
    /// the CSV and JSON stay as they were.
    #[serde(skip)]
    pub tracked: planner::Tracked,
}

pub struct Recorder {
    enabled: bool,
    pub rows: Vec<TimelineRow>,
}

impl Recorder {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            rows: Vec::new(),
        }
    }

    /// Records the state at `now`, with `concurrent_gets` GET attempts in flight (the IO world
    /// knows them in a simulated run, the real driver counts its open requests).
    pub fn sample(&mut self, now: u64, reader: &Reader, concurrent_gets: u64) {
        if !self.enabled {
            return;
        }
        let s = reader.status();
        let row = TimelineRow {
            time_ns: now,
            concurrent_gets,
            bytes_in_flight: s.bytes_in_flight,
            target_bytes_in_flight: s.target_bytes_in_flight,
            reads_running: s.reads_running,
            reads_queued: s.reads_queued,
            tracked: reader.tracked(),
            // Every pool of both generations in a fixed order, so arms share one CSV header.
            memory: {
                let usage = s.memory_usage();
                crate::metric::POOLS
                    .iter()
                    .map(|p| {
                        let name = p.name();
                        (
                            name.to_string(),
                            usage.iter().find(|(n, _)| n == name).map_or(0, |u| u.1),
                        )
                    })
                    .collect()
            },
        };
        match self.rows.last_mut() {
            // One row per instant: the last state at that time wins.
            Some(last) if last.time_ns == now => *last = row,
            Some(last) if same_state(last, &row) => {}
            _ => self.rows.push(row),
        }
    }
}

fn same_state(a: &TimelineRow, b: &TimelineRow) -> bool {
    a.concurrent_gets == b.concurrent_gets
        && a.bytes_in_flight == b.bytes_in_flight
        && a.target_bytes_in_flight == b.target_bytes_in_flight
        && a.reads_running == b.reads_running
        && a.reads_queued == b.reads_queued
        && a.memory == b.memory
}

pub fn to_csv(
    runs: &[(String, String, u32, String, Vec<TimelineRow>)],
) -> Result<String, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let pools: Vec<String> = runs
        .iter()
        .find_map(|r| r.4.first())
        .map(|row| {
            row.memory
                .iter()
                .map(|(p, _)| format!("memory_{p}_bytes"))
                .collect()
        })
        .unwrap_or_default();
    let mut header: Vec<String> = [
        "case",
        "arm",
        "replication",
        "query",
        "time_ns",
        "concurrent_gets",
        "bytes_in_flight",
        "target_bytes_in_flight",
        "reads_running",
        "reads_queued",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(pools);
    w.write_record(&header)?;
    for (case, arm, rep, query, rows) in runs {
        for r in rows {
            let mut rec = vec![
                case.clone(),
                arm.clone(),
                rep.to_string(),
                query.clone(),
                r.time_ns.to_string(),
                r.concurrent_gets.to_string(),
                r.bytes_in_flight.to_string(),
                r.target_bytes_in_flight.to_string(),
                r.reads_running.to_string(),
                r.reads_queued.to_string(),
            ];
            rec.extend(r.memory.iter().map(|(_, v)| v.to_string()));
            w.write_record(&rec)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
