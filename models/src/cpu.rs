//! CPU costs of the node: Parquet decode, the downstream consumer (aggregation), the source's
//! own thread, and the HTTP client's CPU per request.
//!
//! Pure cost functions: the driver schedules the returned nanoseconds in virtual time. How many
//! decodes run at once is the reader's decision (`max_parsing_threads`, a `Strategy` setting);
//! how many chunks are consumed at once is `consumer.threads` here (ClickHouse's `max_threads`
//! aggregating threads). With both, a run shows "waiting for bytes" and "waiting for CPU".
//!
//! The default rates are engineering estimates, not measurements: one core decompresses
//! Snappy/ZSTD Parquet pages at about 1 GiB/s and materialises columns at a few GiB/s. As an
//! order-of-magnitude check against `docs/findings.md` F7 (ClickBench Q23 on 96 vCPUs, about
//! 18 cores busy, 0.42-0.55 s), a few GiB of compressed pages take a fraction of a second at
//! these rates on 18 threads. Override them per scenario (`cpu:`) when a measurement is at hand.

use serde::{Deserialize, Serialize};
use units::{Bandwidth, Duration};

/// A bad CPU specification: what is wrong and what would be right.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CpuError {
    /// A field has a value the model cannot use.
    #[error("cpu: {0}")]
    Invalid(String),
}

const GIB: f64 = (1u64 << 30) as f64;

/// Cost of decoding one unit of Parquet work on one thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DecodeSpec {
    /// Compressed page bytes one thread decompresses per second.
    pub compressed_bandwidth: Bandwidth,
    /// Decoded (materialised) column bytes one thread produces per second.
    pub decoded_bandwidth: Bandwidth,
    /// Fixed cost per decode task (scheduling, page headers, buffers).
    pub per_task: Duration,
}

impl Default for DecodeSpec {
    fn default() -> Self {
        Self {
            compressed_bandwidth: Bandwidth(GIB),
            decoded_bandwidth: Bandwidth(2.0 * GIB),
            per_task: Duration(20_000),
        }
    }
}

/// The work of a source's own pipeline thread on each chunk it emits (ClickHouse: the format
/// source's `generate()`, before `Resize 1 -> N` spreads chunks over the consumers). Chunks of
/// one source pass it one at a time, so one source over a whole file is a serial stage that
/// row-group buckets (several sources) parallelise (`docs/findings.md` F7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SourceSpec {
    /// Cost per row on the source thread ([`SOURCE_PER_ROW_NS`]).
    pub per_row: Duration,
    /// Fixed cost per chunk.
    pub per_chunk: Duration,
}

/// Calibrated once, from F7 (`docs/findings.md`): one source over `hits.parquet` is 3.2-3.5x the
/// 100-file copy on Q23 (1.33-1.45 s vs 0.42 s); 5 ns x 100 M rows = 0.5 s of serial work on the
/// source thread puts the simulated ratio at 3.19x (6 ns: 3.80x). Refitted on 2026-12-07 when a
/// page spanning several subgroups stopped being decoded once per subgroup, which halved the
/// copy's decode work; it was 6 ns (3.37x with that double count) earlier that day, and 5 ns
/// before, fitted to 2.5-3x, a misreading of the same figures. Every scenario uses it.
pub const SOURCE_PER_ROW_NS: u64 = 5;

impl Default for SourceSpec {
    fn default() -> Self {
        Self {
            per_row: Duration(SOURCE_PER_ROW_NS),
            per_chunk: Duration(0),
        }
    }
}

/// The downstream consumer of delivered chunks (an aggregation, say).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConsumerSpec {
    /// Chunks consumed at once (ClickHouse's `max_threads`); unset = `cores`.
    pub threads: Option<u32>,
    /// Cost per row on one thread (hashing, aggregate-state updates).
    pub per_row: Duration,
    /// Decoded bytes one thread consumes per second.
    pub bandwidth: Bandwidth,
    /// Fixed cost per chunk.
    pub per_chunk: Duration,
}

impl Default for ConsumerSpec {
    fn default() -> Self {
        Self {
            threads: None,
            per_row: Duration(2),
            bandwidth: Bandwidth(4.0 * GIB),
            per_chunk: Duration(5_000),
        }
    }
}

/// The HTTP client's own CPU for each request it sends ([`crate::store::RequestCpu`]): building
/// and signing it, taking a connection, the task that drives it. It delays when a request goes
/// out, `threads` requests at a time. Zero by default: no ClickHouse figure measures it, and the
/// ClickHouse calibration (`docs/findings.md`) holds without it. `sim check-peers` fits it per
/// reader on a run through the test bed with nothing injected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkCpuSpec {
    /// CPU one client thread spends on each request before it goes out.
    pub per_request: Duration,
    /// Threads doing that work (the HTTP client's executor); unset = `cores`.
    pub threads: Option<u32>,
}

impl Default for NetworkCpuSpec {
    fn default() -> Self {
        Self {
            per_request: Duration(0),
            threads: None,
        }
    }
}

/// The node's CPU as a scenario writes it (`cpu:`); every key is optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CpuSpec {
    /// vCPUs of the node (F7 ran on 96); the default consumer thread count and the scale of
    /// the "cores busy" figure. Unset = 16.
    pub cores: Option<u32>,
    /// Decode costs.
    pub decode: DecodeSpec,
    /// The downstream consumer.
    pub consumer: ConsumerSpec,
    /// The source's own thread (`docs/findings.md` F7).
    pub source: SourceSpec,
    /// The HTTP client's CPU per request.
    pub network: NetworkCpuSpec,
}

fn ns_for(bytes: u64, bandwidth: Bandwidth) -> u64 {
    let bw = bandwidth.bytes_per_s();
    if bytes == 0 || !(bw.is_finite() && bw > 0.0) {
        return 0;
    }
    (bytes as f64 * 1e9 / bw).ceil() as u64
}

impl CpuSpec {
    /// Default when `cores` is unset.
    pub const DEFAULT_CORES: u32 = 16;

    /// Checks every field; the message names the key and the accepted values.
    pub fn validate(&self) -> Result<(), CpuError> {
        let bad = |m: String| Err(CpuError::Invalid(m));
        if self.cores == Some(0) {
            return bad("cores is 0; give the node's vCPU count, e.g. 16".into());
        }
        if self.consumer.threads == Some(0) {
            return bad(
                "consumer.threads is 0; give at least 1 (or leave it unset for `cores`)".into(),
            );
        }
        for (key, bw) in [
            (
                "decode.compressed_bandwidth",
                self.decode.compressed_bandwidth,
            ),
            ("decode.decoded_bandwidth", self.decode.decoded_bandwidth),
            ("consumer.bandwidth", self.consumer.bandwidth),
        ] {
            let v = bw.bytes_per_s();
            if !(v.is_finite() && v > 0.0) {
                return bad(format!(
                    "{key} is {bw}; use a positive rate such as `1GiB/s`"
                ));
            }
        }
        let max = crate::store::RequestCpu::MAX_THREADS;
        if matches!(self.network.threads, Some(t) if t == 0 || t > max) {
            return bad(format!(
                "network.threads is {}; give 1 to {max} (or leave it unset for `cores`)",
                self.network.threads.unwrap_or(0)
            ));
        }
        // Thread counts are bounded like every thread setting (`limits::MAX_THREADS`): unset,
        // `network.threads` and `consumer.threads` are `cores`, and a pool past the bound was
        // clamped to it without a word.
        for (key, n) in [
            ("cores", self.cores),
            ("consumer.threads", self.consumer.threads),
        ] {
            if matches!(n, Some(t) if t > max) {
                return bad(format!(
                    "{key} is {}; give at most {max} (limits::MAX_THREADS)",
                    n.unwrap_or(0)
                ));
            }
        }
        Ok(())
    }

    /// vCPUs of the node.
    pub fn cores(&self) -> u32 {
        self.cores.unwrap_or(Self::DEFAULT_CORES).max(1)
    }

    /// Chunks the consumer processes at once.
    pub fn consumer_threads(&self) -> u32 {
        self.consumer.threads.unwrap_or_else(|| self.cores()).max(1)
    }

    /// Time one decode thread takes for a task of `compressed_bytes` that decodes to
    /// `decoded_bytes`.
    pub fn decode_ns(&self, compressed_bytes: u64, decoded_bytes: u64) -> u64 {
        let d = &self.decode;
        d.per_task
            .ns()
            .saturating_add(ns_for(compressed_bytes, d.compressed_bandwidth))
            .saturating_add(ns_for(decoded_bytes, d.decoded_bandwidth))
    }

    /// Time a source's own thread spends on a chunk of `rows` rows it emits.
    pub fn source_ns(&self, rows: u64) -> u64 {
        let s = &self.source;
        s.per_chunk
            .ns()
            .saturating_add(rows.saturating_mul(s.per_row.ns()))
    }

    /// Time one consumer thread takes for a chunk of `rows` rows and `decoded_bytes` bytes.
    pub fn consume_ns(&self, rows: u64, decoded_bytes: u64) -> u64 {
        let c = &self.consumer;
        c.per_chunk
            .ns()
            .saturating_add(rows.saturating_mul(c.per_row.ns()))
            .saturating_add(ns_for(decoded_bytes, c.bandwidth))
    }

    /// The client's CPU per request and the pool that does it.
    pub fn request_cpu(&self) -> crate::store::RequestCpu {
        let n = &self.network;
        crate::store::RequestCpu::new(
            n.per_request.ns(),
            n.threads.unwrap_or_else(|| self.cores()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn decode_cost_adds_compressed_and_decoded_parts() {
        let cpu = CpuSpec::default();
        let fixed = cpu.decode_ns(0, 0);
        assert_eq!(fixed, 20_000);
        let c = cpu.decode_ns(MIB, 0) - fixed;
        let d = cpu.decode_ns(0, MIB) - fixed;
        // 1 MiB at 1 GiB/s is 976,563 ns; at 2 GiB/s half that.
        assert_eq!(c, 976_563);
        assert_eq!(d, 488_282);
        assert_eq!(cpu.decode_ns(MIB, MIB), fixed + c + d);
    }

    #[test]
    fn consumer_cost_and_threads() {
        let cpu = CpuSpec {
            cores: Some(96),
            ..CpuSpec::default()
        };
        assert_eq!(cpu.consumer_threads(), 96);
        let pinned = CpuSpec {
            consumer: ConsumerSpec {
                threads: Some(4),
                ..ConsumerSpec::default()
            },
            ..cpu.clone()
        };
        assert_eq!(pinned.consumer_threads(), 4);
        let small = cpu.consume_ns(1_000, 0);
        let big = cpu.consume_ns(1_000_000, 0);
        assert_eq!(big - small, 999_000 * cpu.consumer.per_row.ns());
        assert!(cpu.consume_ns(0, 64 * MIB) > cpu.consume_ns(0, MIB));
    }

    #[test]
    fn request_cpu_is_off_by_default_and_threads_default_to_cores() {
        let mut none = CpuSpec::default().request_cpu();
        assert_eq!([none.send(3), none.send(3)], [3, 3]);
        let two = CpuSpec {
            cores: Some(2),
            network: NetworkCpuSpec {
                per_request: Duration(10),
                threads: None,
            },
            ..CpuSpec::default()
        };
        let mut pool = two.request_cpu();
        let out: Vec<u64> = (0..3).map(|_| pool.send(0)).collect();
        assert_eq!(out, [10, 10, 20]);
        let bad = CpuSpec {
            network: NetworkCpuSpec {
                threads: Some(0),
                ..two.network.clone()
            },
            ..two
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("network.threads"));
    }

    #[test]
    fn thread_counts_past_the_bound_are_refused_not_clamped() {
        // `cores: 4294967295` once gave a network pool clamped to 4,096 without a word.
        let max = limits::MAX_THREADS as u32;
        let cores = |n: u32| CpuSpec {
            cores: Some(n),
            ..CpuSpec::default()
        };
        cores(max).validate().unwrap();
        let e = cores(max + 1).validate().unwrap_err().to_string();
        assert!(e.contains("cores") && e.contains("MAX_THREADS"), "{e}");
        let consumers = |n: u32| CpuSpec {
            consumer: ConsumerSpec {
                threads: Some(n),
                ..ConsumerSpec::default()
            },
            ..CpuSpec::default()
        };
        consumers(max).validate().unwrap();
        let e = consumers(u32::MAX).validate().unwrap_err().to_string();
        assert!(
            e.contains("consumer.threads") && e.contains("MAX_THREADS"),
            "{e}"
        );
    }

    #[test]
    fn yaml_partial_spec_keeps_defaults_and_rejects_unknown_keys() {
        let s: CpuSpec =
            serde_saphyr::from_str("cores: 96\ndecode: {compressed_bandwidth: 500MiB/s}\n")
                .unwrap();
        assert_eq!(s.cores(), 96);
        assert_eq!(s.decode.compressed_bandwidth, Bandwidth(500.0 * MIB as f64));
        assert_eq!(
            s.decode.decoded_bandwidth,
            DecodeSpec::default().decoded_bandwidth
        );
        s.validate().unwrap();
        let e = serde_saphyr::from_str::<CpuSpec>("decode: {compresed_bandwidth: 1GiB/s}\n")
            .unwrap_err();
        assert!(e.to_string().contains("compresed_bandwidth"), "{e}");
        let zero = CpuSpec {
            decode: DecodeSpec {
                decoded_bandwidth: Bandwidth(0.0),
                ..DecodeSpec::default()
            },
            ..s
        };
        assert!(zero
            .validate()
            .unwrap_err()
            .to_string()
            .contains("decode.decoded_bandwidth"));
    }
}
