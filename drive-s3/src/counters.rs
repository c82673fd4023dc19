//! Store-side figures of a real run, from the driver's own log of GET attempts: what the
//! simulated store client's `StoreStats` says for a simulated run, as the `StoreFigures` both
//! drivers hand to `driver::metrics::collect_metrics`.

use super::fetch::{AttemptRecord, STATUS_PARTIAL_CONTENT};
use drive::metrics::StoreFigures;
use drive::trace::{ServedBy, TraceRow};

/// The log of a run's attempts.
#[derive(Debug, Default)]
pub struct RequestLog {
    attempts: Vec<AttemptRecord>,
}

impl RequestLog {
    pub fn push(&mut self, a: AttemptRecord) {
        self.attempts.push(a);
    }

    pub fn attempts(&self) -> &[AttemptRecord] {
        &self.attempts
    }

    /// Totals, at `price` (no page cache: 0 bytes read through). GETs are every attempt sent,
    /// failed ones included, as the simulated store and ClickHouse's `S3GetObject` count them;
    /// each is priced as a GET, as S3 bills them (`PriceSpec`: errors included). Bytes are the body bytes that arrived:
    /// a resumed read's attempts tile its range, so its bytes count once.
    pub fn stats(&self, price: &models::store::PriceSpec) -> StoreFigures {
        // The bound's round trips and floor are the world's (`S3World::store_figures`).
        let mut s = StoreFigures {
            gets: self.attempts.len() as u64,
            ..Default::default()
        };
        // Interval sweep: +1 at each start, -1 at each end; ends first at equal times so that
        // back-to-back attempts on one connection do not count twice.
        let mut edges: Vec<(u64, i8)> = Vec::with_capacity(2 * self.attempts.len());
        for a in &self.attempts {
            s.bytes_fetched += a.body_bytes;
            if a.attempt > 1 {
                s.retries += 1;
            }
            s.get_busy_ns += a.end_ns.saturating_sub(a.start_ns) as f64;
            edges.push((a.start_ns, 1));
            edges.push((a.end_ns.max(a.start_ns), -1));
        }
        edges.sort_unstable();
        let mut live: i64 = 0;
        for (_, d) in edges {
            live += d as i64;
            s.peak_concurrency = s.peak_concurrency.max(live.max(0) as u64);
        }
        s.cost_usd = s.gets as f64 * price.per_1000_gets_usd / 1000.0
            + s.bytes_fetched as f64 / 1e9 * price.per_gb_usd;
        s
    }

    /// The smallest time to first byte of a successful (206) attempt, if any: a floor under
    /// every round trip of the run that got its bytes.
    pub fn min_first_byte_ns(&self) -> Option<u64> {
        self.attempts
            .iter()
            .filter(|a| a.status == STATUS_PARTIAL_CONTENT)
            .filter_map(|a| a.first_byte_ns.map(|f| f.saturating_sub(a.start_ns)))
            .min()
    }

    /// The request trace, one row per attempt, in the format `sim run --trace` writes. A row
    /// with a 206 is as long as the body bytes that arrived (all of its range, unless the body
    /// broke off); an error row carries the range asked for, as the simulated store's do.
    pub fn trace(&self) -> Vec<TraceRow> {
        let mut rows: Vec<TraceRow> = self
            .attempts
            .iter()
            .map(|a| TraceRow {
                start_ns: a.start_ns,
                first_byte_ns: a.first_byte_ns.unwrap_or(a.end_ns),
                end_ns: a.end_ns,
                object: a.object,
                offset_bytes: a.range.start,
                length_bytes: if a.status == STATUS_PARTIAL_CONTENT {
                    a.body_bytes
                } else {
                    a.range.len()
                },
                status: a.status,
                served_by: ServedBy::Store,
                attempt: a.attempt,
                hedge: false,
                method: models::store::Method::Get,
            })
            .collect();
        rows.sort_by_key(|r| (r.start_ns, r.end_ns));
        rows
    }
}

/// Time to first byte of successful GETs, at quantiles `qs` (0..=1), by the nearest-rank rule;
/// empty trace = zeros. For comparing a measured trace with a simulated one.
pub fn first_byte_quantiles_ns(trace: &[TraceRow], qs: &[f64]) -> Vec<u64> {
    let mut ttfb: Vec<u64> = trace
        .iter()
        .filter(|r| r.served_by == ServedBy::Store && r.status == STATUS_PARTIAL_CONTENT)
        .map(|r| r.first_byte_ns.saturating_sub(r.start_ns))
        .collect();
    ttfb.sort_unstable();
    qs.iter()
        .map(|q| {
            if ttfb.is_empty() {
                return 0;
            }
            let rank = (q.clamp(0.0, 1.0) * ttfb.len() as f64).ceil() as usize;
            ttfb[rank.clamp(1, ttfb.len()) - 1]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::ByteRange;

    fn rec(start: u64, first: u64, end: u64, attempt: u32, bytes: u64) -> AttemptRecord {
        AttemptRecord {
            object: 0,
            range: ByteRange::with_len(0, bytes),
            attempt,
            start_ns: start,
            first_byte_ns: Some(first),
            end_ns: end,
            status: STATUS_PARTIAL_CONTENT,
            body_bytes: bytes,
        }
    }

    #[test]
    fn the_first_byte_floor_is_the_fastest_successful_attempt() {
        let mut log = RequestLog::default();
        assert_eq!(log.min_first_byte_ns(), None);
        log.push(rec(100, 130, 200, 1, 10));
        log.push(rec(0, 40, 90, 1, 10));
        // A 503 answered in 2 ns made no round trip of the chain.
        let mut fast_error = rec(300, 302, 302, 1, 10);
        fast_error.status = 503;
        log.push(fast_error);
        assert_eq!(log.min_first_byte_ns(), Some(30));
    }

    #[test]
    fn stats_add_up_and_overlap_gives_the_peak() {
        let mut log = RequestLog::default();
        log.push(rec(0, 10, 100, 1, 1000));
        log.push(rec(50, 60, 150, 1, 500));
        log.push(rec(150, 160, 200, 2, 10));
        let price = models::store::PriceSpec {
            per_1000_gets_usd: 1.0,
            per_gb_usd: 0.0,
            per_1000_lists_usd: 0.0,
        };
        let s = log.stats(&price);
        assert_eq!(s.gets, 3);
        assert_eq!(s.bytes_fetched, 1510);
        assert_eq!(s.retries, 1);
        assert_eq!(s.get_busy_ns, (100 + 100 + 50) as f64);
        // 150 ends as the third starts: two at most.
        assert_eq!(s.peak_concurrency, 2);
        assert!((s.cost_usd - 0.003).abs() < 1e-12);
    }

    #[test]
    fn a_resumed_read_counts_its_bytes_once_and_traces_each_attempt() {
        let mut log = RequestLog::default();
        // 1000 bytes: a 503, a body that broke off after 400 bytes, the resumed rest.
        let mut slow_down = rec(0, 0, 5, 1, 0);
        slow_down.range = ByteRange::with_len(0, 1000);
        slow_down.status = 503;
        slow_down.first_byte_ns = None;
        let mut broken = rec(10, 20, 30, 2, 400);
        broken.range = ByteRange::with_len(0, 1000);
        let rest = AttemptRecord {
            range: ByteRange::new(400, 1000),
            ..rec(40, 50, 60, 3, 600)
        };
        for a in [slow_down, broken, rest] {
            log.push(a);
        }
        let s = log.stats(&models::store::PriceSpec::default());
        assert_eq!((s.gets, s.retries, s.bytes_fetched), (3, 2, 1000));
        let t = log.trace();
        let rows: Vec<(u16, u64, u64)> = t
            .iter()
            .map(|r| (r.status, r.offset_bytes, r.length_bytes))
            .collect();
        assert_eq!(rows, vec![(503, 0, 1000), (206, 0, 400), (206, 400, 600)]);
        assert!(!log.attempts()[1].complete() && log.attempts()[2].complete());
    }

    #[test]
    fn trace_rows_are_sorted_and_keep_first_byte() {
        let mut log = RequestLog::default();
        log.push(rec(50, 70, 150, 1, 5));
        log.push(rec(0, 10, 100, 1, 7));
        let t = log.trace();
        assert_eq!(t[0].start_ns, 0);
        assert_eq!(t[1].first_byte_ns, 70);
        assert_eq!(t[0].length_bytes, 7);
        let q = first_byte_quantiles_ns(&t, &[0.5, 1.0]);
        assert_eq!(q, vec![10, 20]);
    }
}
