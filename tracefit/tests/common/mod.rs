//! Synthetic traces with known parameters, written in both formats.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops
#![allow(dead_code)]

use rand::{RngExt, SeedableRng};
use rand_distr::Distribution;
use rand_pcg::Pcg64;

/// One synthetic request: start, first-byte latency, transfer time, bytes, status.
#[derive(Debug, Clone)]
pub struct Req {
    pub start_ns: u64,
    pub first_byte_ns: u64,
    pub transfer_ns: u64,
    pub bytes: u64,
    pub status: u16,
}

pub enum Latency {
    Lognormal { median_ns: f64, sigma: f64 },
    Gamma { mean_ns: f64, shape: f64 },
}

pub struct Synth {
    pub requests: usize,
    pub latency: Latency,
    /// Added first-byte latency per MiB.
    pub ns_per_mib: f64,
    pub bandwidth_median: f64,
    pub bandwidth_sigma: f64,
    pub rate_per_s: f64,
    /// Share of requests answered 500.
    pub error_share: f64,
    pub seed: u64,
}

const MIB: f64 = 1024.0 * 1024.0;

impl Synth {
    pub fn generate(&self) -> Vec<Req> {
        let mut rng = Pcg64::seed_from_u64(self.seed);
        let bw =
            rand_distr::LogNormal::new(self.bandwidth_median.ln(), self.bandwidth_sigma).unwrap();
        let gaps = rand_distr::Exp::new(self.rate_per_s / 1e9).unwrap();
        let ln = match self.latency {
            Latency::Lognormal { median_ns, sigma } => {
                Some(rand_distr::LogNormal::new(median_ns.ln(), sigma).unwrap())
            }
            _ => None,
        };
        let gamma = match self.latency {
            Latency::Gamma { mean_ns, shape } => {
                Some(rand_distr::Gamma::new(shape, mean_ns / shape).unwrap())
            }
            _ => None,
        };
        // Sizes: half small (64 KiB - 1 MiB), half large (4 - 16 MiB), as a reader's mix.
        let mut t = 1_700_000_000.0e9;
        (0..self.requests)
            .map(|i| {
                t += gaps.sample(&mut rng);
                let bytes = if i % 2 == 0 {
                    rng.random_range(64 * 1024..1024 * 1024)
                } else {
                    rng.random_range(4 * 1024 * 1024..16 * 1024 * 1024)
                };
                let base = match (&ln, &gamma) {
                    (Some(d), _) => d.sample(&mut rng),
                    (_, Some(d)) => d.sample(&mut rng),
                    _ => unreachable!(),
                };
                let first = base + self.ns_per_mib * bytes as f64 / MIB;
                let transfer = bytes as f64 / bw.sample(&mut rng) * 1e9;
                let status = if rng.random::<f64>() < self.error_share {
                    500
                } else {
                    206
                };
                Req {
                    start_ns: t as u64,
                    first_byte_ns: first.round() as u64,
                    transfer_ns: transfer.round() as u64,
                    bytes,
                    status,
                }
            })
            .collect()
    }
}

/// The requests as the simulator's CSV trace.
pub fn to_sim_csv(reqs: &[Req]) -> String {
    let mut s = String::from(tracefit::SIM_TRACE_HEADER);
    s.push('\n');
    for (i, r) in reqs.iter().enumerate() {
        let first = r.start_ns + r.first_byte_ns;
        let end = first + r.transfer_ns;
        s.push_str(&format!(
            "synthetic,arm,0,q,{},{},{},{},{},{},{},store,0,false\n",
            r.start_ns,
            first,
            end,
            i % 100,
            0,
            r.bytes,
            r.status
        ));
    }
    s
}

fn clf_time(epoch_s: u64) -> String {
    // Civil date from days (Howard Hinnant's civil_from_days).
    let days = (epoch_s / 86_400) as i64;
    let secs = epoch_s % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{:02}/{}/{}:{:02}:{:02}:{:02} +0000",
        d,
        MONTHS[(m - 1) as usize],
        y,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The requests as S3 server access log records (times in whole ms, as S3 logs them).
pub fn to_access_log(reqs: &[Req]) -> String {
    let mut s = String::new();
    for (i, r) in reqs.iter().enumerate() {
        let tat_ms = (r.first_byte_ns as f64 / 1e6).round() as u64;
        let total_ms = ((r.first_byte_ns + r.transfer_ns) as f64 / 1e6).round() as u64;
        let size = r.bytes * 4;
        s.push_str(&format!(
            "ownerid bucket [{}] 10.0.0.{} arn:aws:iam::123:user/reader REQ{i} REST.GET.OBJECT data/part-{:05}.parquet \"GET /bucket/data/part-{:05}.parquet HTTP/1.1\" {} {} {} {} {} {} \"-\" \"aws-sdk-cpp/1.11.0 Linux/6.1.0 x86_64 ClickHouse\" - HOSTID= SigV4 ECDHE-RSA-AES128-GCM-SHA256 AuthHeader bucket.s3.us-east-1.amazonaws.com TLSv1.3 - - us-east-1\n",
            clf_time(r.start_ns / 1_000_000_000),
            i % 250,
            i % 100,
            i % 100,
            r.status,
            if r.status == 206 { "-".to_string() } else { "InternalError".to_string() },
            if r.status == 206 { r.bytes } else { 0 },
            size,
            total_ms,
            tat_ms
        ));
    }
    s
}
