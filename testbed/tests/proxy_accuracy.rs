//! The injector alone, in front of a minimal TCP server: injected vs measured first byte and
//! bandwidth, half-close and shutdown. Everything on 127.0.0.1; every read has a timeout.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use common::{median, ms, sleep_overshoot, timing_lock};
use testbed::proxy::{Proxy, ProxyConfig};

const READ_TIMEOUT: Duration = Duration::from_secs(10);
const MIB: u64 = 1024 * 1024;

/// A server that answers each 8-byte big-endian request N with N bytes, at once.
fn start_upstream() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream.set_nodelay(true).unwrap();
            std::thread::spawn(move || {
                let payload = vec![0x5Au8; 16 * MIB as usize];
                let mut req = [0u8; 8];
                while stream.read_exact(&mut req).is_ok() {
                    let n = u64::from_be_bytes(req) as usize;
                    if stream.write_all(&payload[..n.min(payload.len())]).is_err() {
                        return;
                    }
                }
                // The client half-closed: answer with our own end of stream.
                let _ = stream.shutdown(Shutdown::Write);
            });
        }
    });
    addr
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
    s
}

/// Time to the first byte of the answer to a request of `n` bytes, and to its last byte, and
/// the bytes in the first read.
fn request(s: &mut TcpStream, n: u64) -> (Duration, Duration, usize) {
    let mut buf = vec![0u8; 256 * 1024];
    let t0 = Instant::now();
    s.write_all(&n.to_be_bytes()).unwrap();
    let mut got = 0usize;
    let mut first = None;
    let mut first_len = 0;
    while (got as u64) < n {
        let k = s.read(&mut buf).expect("read within the timeout");
        assert!(k > 0, "connection closed after {got} of {n} bytes");
        if first.is_none() {
            first = Some(t0.elapsed());
            first_len = k;
        }
        got += k;
    }
    (first.unwrap(), t0.elapsed(), first_len)
}

fn first_bytes(addr: SocketAddr, reps: usize) -> Vec<Duration> {
    let mut s = connect(addr);
    request(&mut s, 1); // warm-up
    (0..reps).map(|_| request(&mut s, 1).0).collect()
}

#[test]
fn first_byte_is_baseline_plus_rtt_within_a_millisecond() {
    common::timing_attempts(3, first_byte_is_baseline_plus_rtt_within_a_millisecond_once);
}

fn first_byte_is_baseline_plus_rtt_within_a_millisecond_once() {
    let _serial = timing_lock();
    let upstream = start_upstream();
    let baseline = median(first_bytes(upstream, 15));
    // The machine's own lateness on the proxy's two sleeps (one per direction) is allowed on
    // top of the 1 ms; it is measured here, not assumed.
    let machine_late = 2 * sleep_overshoot();
    for rtt_ms in [10u64, 30] {
        let proxy = Proxy::start(ProxyConfig {
            upstream,
            rtt_ns: rtt_ms * 1_000_000,
            bandwidth_bytes_per_s: None,
        })
        .unwrap();
        let samples = first_bytes(proxy.local_addr(), 15);
        let med = median(samples.clone());
        let worst = *samples.iter().max().unwrap();
        let best = *samples.iter().min().unwrap();
        let expected = baseline + Duration::from_millis(rtt_ms);
        eprintln!(
            "rtt {rtt_ms} ms: baseline {:.3} ms, proxied median {:.3} ms (min {:.3}, max {:.3}), \
             error {:+.3} ms, two sleeps' overshoot {:.3} ms",
            ms(baseline),
            ms(med),
            ms(best),
            ms(worst),
            ms(med) - ms(expected),
            ms(machine_late)
        );
        // Never early: each direction waits at least rtt/2.
        assert!(best >= Duration::from_millis(rtt_ms), "early: {best:?}");
        let error_ms = ms(med) - ms(expected);
        assert!(
            (-1.0..=1.0 + ms(machine_late)).contains(&error_ms),
            "median first byte {med:?}, expected {expected:?} within 1 ms \
             (+ {machine_late:?} the machine's sleeps)"
        );
        // Outliers come from a loaded machine (2 cores shared with builds), not the proxy:
        // most samples, not all, must be close.
        let close = samples
            .iter()
            .filter(|&&d| d <= expected + machine_late + Duration::from_millis(2))
            .count();
        assert!(
            close * 3 >= samples.len() * 2,
            "only {close} of {} first bytes within expected {expected:?} + {machine_late:?} + 2 ms",
            samples.len()
        );
    }
}

#[test]
fn no_injection_adds_under_a_millisecond() {
    common::timing_attempts(3, no_injection_adds_under_a_millisecond_once);
}

fn no_injection_adds_under_a_millisecond_once() {
    let _serial = timing_lock();
    let upstream = start_upstream();
    let baseline = median(first_bytes(upstream, 15));
    let proxy = Proxy::start(ProxyConfig {
        upstream,
        rtt_ns: 0,
        bandwidth_bytes_per_s: Some(0),
    })
    .unwrap();
    let med = median(first_bytes(proxy.local_addr(), 15));
    eprintln!(
        "rtt 0: baseline {:.3} ms, proxied {:.3} ms",
        ms(baseline),
        ms(med)
    );
    assert!(
        med < baseline + Duration::from_millis(1),
        "{med:?} vs {baseline:?}"
    );
}

#[test]
fn bandwidth_is_paced_per_connection() {
    common::timing_attempts(3, bandwidth_is_paced_per_connection_once);
}

fn bandwidth_is_paced_per_connection_once() {
    let _serial = timing_lock();
    let upstream = start_upstream();
    let bw = 50 * MIB;
    let rtt = Duration::from_millis(30);
    let proxy = Proxy::start(ProxyConfig {
        upstream,
        rtt_ns: rtt.as_nanos() as u64,
        bandwidth_bytes_per_s: Some(bw),
    })
    .unwrap();
    let mut s = connect(proxy.local_addr());
    request(&mut s, 1);
    let n = 8 * MIB;
    let (first, total, first_len) = request(&mut s, n);
    let measured = (n - first_len as u64) as f64 / (total - first).as_secs_f64();
    let expected_total = rtt.as_secs_f64() + n as f64 / bw as f64;
    eprintln!(
        "8 MiB at 50 MiB/s, rtt 30 ms: first byte {:.3} ms, total {:.3} ms (ideal {:.3} ms), \
         measured {:.2} MiB/s",
        ms(first),
        ms(total),
        expected_total * 1e3,
        measured / MIB as f64
    );
    let ratio = measured / bw as f64;
    assert!((0.95..=1.05).contains(&ratio), "bandwidth ratio {ratio}");
    // 3% of the ideal: the bed's pacing, not the machine's load (this test also runs while
    // other test binaries keep two cores busy).
    assert!(
        (total.as_secs_f64() - expected_total).abs() <= 0.03 * expected_total,
        "total {total:?} vs ideal {expected_total} s"
    );

    // A second connection gets its own 50 MiB/s, concurrently.
    let addr = proxy.local_addr();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                let mut s = connect(addr);
                let (first, total, first_len) = request(&mut s, 4 * MIB);
                (4 * MIB - first_len as u64) as f64 / (total - first).as_secs_f64()
            })
        })
        .collect();
    for h in handles {
        let r = h.join().unwrap() / bw as f64;
        assert!((0.9..=1.1).contains(&r), "concurrent bandwidth ratio {r}");
    }
}

#[test]
fn half_close_passes_through_and_stop_closes_connections() {
    let _serial = timing_lock();
    let upstream = start_upstream();
    let mut proxy = Proxy::start(ProxyConfig {
        upstream,
        rtt_ns: 2_000_000,
        bandwidth_bytes_per_s: None,
    })
    .unwrap();
    // Half-close: our end of stream reaches the server, whose end of stream comes back.
    let mut s = connect(proxy.local_addr());
    request(&mut s, 10);
    s.shutdown(Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest)
        .expect("end of stream within the timeout");
    assert!(rest.is_empty());

    // Stop: an open, idle connection is closed rather than left hanging.
    let mut open = connect(proxy.local_addr());
    request(&mut open, 10);
    assert_eq!(proxy.connections_accepted(), 2);
    let t0 = Instant::now();
    proxy.stop();
    let mut buf = [0u8; 16];
    let r = open.read(&mut buf);
    assert!(matches!(r, Ok(0) | Err(_)), "read after stop gave {r:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(2),
        "stop took {:?}",
        t0.elapsed()
    );
    // And nothing listens any more.
    assert!(
        TcpStream::connect_timeout(&proxy.local_addr(), Duration::from_millis(500)).is_err(),
        "the proxy still accepts after stop"
    );
}
