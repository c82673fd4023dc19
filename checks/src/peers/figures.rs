//! The figures compared between a real reader's request log and a simulated run's trace:
//! request counts by method, bytes, the ranges themselves, requests in flight and wall time.
//!
//! Requests in flight are compared on the client's side of the wire: a simulated request
//! spans `[start, end]` as the client sees it; a logged one `[start - rtt/2, first byte +
//! rtt/2 + bytes / bandwidth]` (the server's times moved to the client, its body paced by the
//! proxy). The mean is the sum of the spans over the time from the first start to the last end.

use testbed::request_log::RequestRecord;

/// One request, as both sides name it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Req {
    pub method: &'static str,
    /// The object's file name (HEAD and GET), or empty (LIST).
    pub file: String,
    pub start: u64,
    pub end: u64,
}

/// What one run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub gets: u64,
    pub heads: u64,
    pub lists: u64,
    /// Body bytes of the GETs.
    pub bytes: u64,
    pub mean_in_flight: f64,
    pub max_in_flight: u64,
    pub wall_s: f64,
    /// Every request, sorted.
    pub requests: Vec<Req>,
}

fn spans_stats(spans: &[(f64, f64)]) -> (f64, u64) {
    let Some(first) = spans.iter().map(|s| s.0).reduce(f64::min) else {
        return (0.0, 0);
    };
    let last = spans.iter().map(|s| s.1).fold(first, f64::max);
    let busy: f64 = spans.iter().map(|s| (s.1 - s.0).max(0.0)).sum();
    let mut edges: Vec<(f64, i32)> = spans.iter().flat_map(|s| [(s.0, 1), (s.1, -1)]).collect();
    // Ends before starts at equal times: back-to-back requests on one connection are not two.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut live, mut peak) = (0i64, 0i64);
    for (_, d) in edges {
        live += i64::from(d);
        peak = peak.max(live);
    }
    let span = last - first;
    (
        if span > 0.0 { busy / span } else { 0.0 },
        peak.max(0) as u64,
    )
}

fn file_name(key: &str) -> String {
    key.rsplit('/').next().unwrap_or(key).to_string()
}

/// The figures of a real run, from the bed's log of it.
pub fn measured(log: &[RequestRecord], rtt_ns: u64, bandwidth: u64, wall_s: f64) -> Figures {
    let mut f = Figures {
        gets: 0,
        heads: 0,
        lists: 0,
        bytes: 0,
        mean_in_flight: 0.0,
        max_in_flight: 0,
        wall_s,
        requests: Vec::new(),
    };
    let half = rtt_ns as f64 / 2.0;
    let mut spans = Vec::new();
    for r in log {
        let method = if r.is_list() {
            f.lists += 1;
            "LIST"
        } else if r.method == "HEAD" {
            f.heads += 1;
            "HEAD"
        } else if r.method == "GET" {
            f.gets += 1;
            f.bytes += r.bytes_sent;
            "GET"
        } else {
            continue;
        };
        let (start, end) = r.range.unwrap_or((0, 0));
        f.requests.push(Req {
            method,
            file: if r.is_list() {
                String::new()
            } else {
                file_name(&r.key)
            },
            start,
            end,
        });
        let paced = r.bytes_sent as f64 / bandwidth.max(1) as f64 * 1e9;
        spans.push((
            r.start_ns as f64 - half,
            r.first_byte_ns as f64 + half + paced,
        ));
    }
    f.requests.sort();
    (f.mean_in_flight, f.max_in_flight) = spans_stats(&spans);
    f
}

/// The figures of a simulated run, from its trace (`sim run --trace` rows of one arm; the
/// needed-range rows left out) and wall time; `names[i]` is data file `i`'s file name.
pub fn simulated(
    trace: &tracefit::ParsedTrace,
    arm: &str,
    names: &[String],
    wall_s: f64,
) -> Figures {
    let mut f = Figures {
        gets: 0,
        heads: 0,
        lists: 0,
        bytes: 0,
        mean_in_flight: 0.0,
        max_in_flight: 0,
        wall_s,
        requests: Vec::new(),
    };
    let mut spans = Vec::new();
    for r in &trace.records {
        if r.served_by != tracefit::ServedBy::Store || !r.is_success() {
            continue;
        }
        if r.sim.as_ref().is_none_or(|s| s.arm != arm) || r.needed.is_some() {
            continue;
        }
        let method = match &r.operation {
            tracefit::Operation::Head => {
                f.heads += 1;
                "HEAD"
            }
            tracefit::Operation::Other(_) => {
                f.lists += 1;
                "LIST"
            }
            _ => {
                f.gets += 1;
                f.bytes += r.bytes;
                "GET"
            }
        };
        let object: usize = r.object.parse().unwrap_or(usize::MAX);
        let start = r.offset_bytes.unwrap_or(0);
        let (start, end) = if method == "GET" {
            (start, start + r.bytes)
        } else {
            (0, 0)
        };
        f.requests.push(Req {
            method,
            file: if method == "LIST" {
                String::new()
            } else {
                names.get(object).cloned().unwrap_or_default()
            },
            start,
            end,
        });
        let s = r.start_ns as f64;
        spans.push((s, s + r.total_ns.unwrap_or(0) as f64));
    }
    f.requests.sort();
    (f.mean_in_flight, f.max_in_flight) = spans_stats(&spans);
    f
}

/// The share of `simulated`'s requests that have an identical request (method, file, range)
/// in `measured`, each matched once.
pub fn identical_share(measured: &[Req], simulated: &[Req]) -> f64 {
    if simulated.is_empty() {
        return if measured.is_empty() { 1.0 } else { 0.0 };
    }
    let mut pool: std::collections::BTreeMap<&Req, usize> = std::collections::BTreeMap::new();
    for r in measured {
        *pool.entry(r).or_default() += 1;
    }
    let mut same = 0usize;
    for r in simulated {
        if let Some(n) = pool.get_mut(r) {
            if *n > 0 {
                *n -= 1;
                same += 1;
            }
        }
    }
    same as f64 / simulated.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_of_overlapping_spans() {
        let (mean, max) = spans_stats(&[(0.0, 10.0), (5.0, 15.0), (15.0, 20.0)]);
        assert_eq!(max, 2);
        assert!((mean - 25.0 / 20.0).abs() < 1e-9);
        assert_eq!(spans_stats(&[]), (0.0, 0));
    }

    #[test]
    fn identical_ranges_are_matched_once() {
        let r = |f: &str, s, e| Req {
            method: "GET",
            file: f.into(),
            start: s,
            end: e,
        };
        let m = vec![r("a", 0, 10), r("a", 10, 20)];
        let s = vec![r("a", 0, 10), r("a", 0, 10), r("b", 10, 20), r("a", 10, 20)];
        assert_eq!(identical_share(&m, &s), 0.5);
        assert_eq!(identical_share(&m, &m), 1.0);
    }
}
