//! The S3 server through the test bed: PUT then ranged GETs return the exact bytes, directly
//! and through the proxy; nodelay keeps small GETs on a reused connection fast.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use std::time::Duration;

use common::{client_runtime, median, ms, pattern, timed_get, within};
use object_store::path::Path as ObjectPath;
use object_store::ObjectStoreExt;
use testbed::{TestBed, TestBedConfig, TestBedError};

fn start(dir: &std::path::Path, rtt_ns: u64) -> TestBed {
    TestBed::start(TestBedConfig {
        data_dir: dir.to_path_buf(),
        rtt_ns,
        bandwidth_bytes_per_s: None,
    })
    .expect("test bed starts")
}

#[test]
fn put_then_ranged_get_returns_exact_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 2_000_000);
    assert!(bed.endpoint_url().starts_with("http://127.0.0.1:"));
    assert!(bed.direct_url().starts_with("http://127.0.0.1:"));
    assert_ne!(bed.endpoint_url(), bed.direct_url());

    let data = pattern(3 * 1024 * 1024 + 17, 9);
    let file = tmp.path().join("obj.bin");
    std::fs::write(&file, &data).unwrap();
    let uploaded = bed.upload("dir/obj.bin", &file).expect("upload");
    assert_eq!(uploaded, data.len() as u64);
    // s3s-fs keeps the object as a plain file under the bucket directory.
    let stored = std::fs::read(tmp.path().join("s3/testbed/dir/obj.bin")).unwrap();
    assert_eq!(stored, data);

    let rt = client_runtime();
    for url in [bed.direct_url(), bed.endpoint_url()] {
        let store = bed.object_store(&url).unwrap();
        rt.block_on(async {
            let meta = within("HEAD", store.head(&ObjectPath::from("dir/obj.bin")))
                .await
                .expect("HEAD");
            assert_eq!(meta.size, data.len() as u64);
            let len = data.len() as u64;
            for range in [0..1, 5..70_000, len - 8..len, 1_000_000..len, 0..len] {
                let got = timed_get(&store, "dir/obj.bin", range.clone()).await;
                assert_eq!(
                    got.bytes,
                    data[range.start as usize..range.end as usize],
                    "{url} range {range:?}"
                );
            }
        });
    }
    assert!(
        bed.proxied_connections() >= 1,
        "the proxied GETs went around the proxy"
    );
}

#[test]
fn missing_object_and_bad_key_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 0);
    let rt = client_runtime();
    let store = bed.object_store(&bed.endpoint_url()).unwrap();
    let missing = rt.block_on(within("GET", store.get(&ObjectPath::from("nope"))));
    assert!(
        matches!(missing, Err(object_store::Error::NotFound { .. })),
        "{missing:?}"
    );
    let file = tmp.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        bed.upload("../escape", &file),
        Err(TestBedError::Invalid(_))
    ));
    assert!(matches!(
        bed.upload("k", &tmp.path().join("no-such-file")),
        Err(TestBedError::Io { .. })
    ));
}

#[test]
fn wrong_credentials_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 0);
    let file = tmp.path().join("f");
    std::fs::write(&file, b"secret").unwrap();
    bed.upload("f", &file).unwrap();
    let intruder = object_store::aws::AmazonS3Builder::new()
        .with_endpoint(bed.direct_url())
        .with_allow_http(true)
        .with_bucket_name(bed.bucket())
        .with_region(bed.region())
        .with_access_key_id(bed.access_key())
        .with_secret_access_key("not-the-secret")
        .with_retry(object_store::RetryConfig {
            max_retries: 0,
            ..Default::default()
        })
        .build()
        .unwrap();
    let rt = client_runtime();
    let got = rt.block_on(within("GET", intruder.get(&ObjectPath::from("f"))));
    assert!(got.is_err(), "a wrongly signed GET was served");
}

#[test]
fn upload_inside_a_runtime_is_an_error_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 0);
    let file = tmp.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let rt = client_runtime();
    let r = rt.block_on(async { bed.upload("f", &file) });
    assert!(
        matches!(r, Err(TestBedError::InsideAsyncRuntime { .. })),
        "{r:?}"
    );
}

/// An async caller may start, use and drop a test bed without a panic.
#[test]
fn start_and_drop_inside_a_runtime() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = client_runtime();
    rt.block_on(async {
        let bed = start(&tmp.path().join("s3"), 1_000_000);
        let store = bed.object_store(&bed.endpoint_url()).unwrap();
        let listed = within("HEAD", store.head(&ObjectPath::from("absent"))).await;
        assert!(matches!(listed, Err(object_store::Error::NotFound { .. })));
        drop(bed);
    });
}

/// Without TCP_NODELAY, a GET on a reused connection stalls ~40 ms on delayed ACKs.
#[test]
fn small_gets_on_a_reused_connection_do_not_stall() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 0);
    let data = pattern(256 * 1024, 3);
    let file = tmp.path().join("obj");
    std::fs::write(&file, &data).unwrap();
    bed.upload("obj", &file).unwrap();
    let rt = client_runtime();
    for url in [bed.direct_url(), bed.endpoint_url()] {
        let store = bed.object_store(&url).unwrap();
        let totals: Vec<Duration> = rt.block_on(async {
            let mut v = Vec::new();
            for i in 0..12u64 {
                v.push(
                    timed_get(&store, "obj", i * 1000..i * 1000 + 4096)
                        .await
                        .total,
                );
            }
            v
        });
        let med = median(totals[1..].to_vec());
        eprintln!("{url}: median small GET {:.3} ms", ms(med));
        assert!(
            med < Duration::from_millis(15),
            "{url}: median small GET {med:?}"
        );
    }
}

#[test]
fn drop_stops_both_listeners() {
    let tmp = tempfile::tempdir().unwrap();
    let bed = start(&tmp.path().join("s3"), 0);
    let addrs: Vec<std::net::SocketAddr> = [bed.endpoint_url(), bed.direct_url()]
        .iter()
        .map(|u| u.trim_start_matches("http://").parse().unwrap())
        .collect();
    for a in &addrs {
        assert!(std::net::TcpStream::connect_timeout(a, Duration::from_secs(1)).is_ok());
    }
    let t0 = std::time::Instant::now();
    drop(bed);
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "drop took {:?}",
        t0.elapsed()
    );
    for a in &addrs {
        assert!(
            std::net::TcpStream::connect_timeout(a, Duration::from_millis(500)).is_err(),
            "{a} still accepts after drop"
        );
    }
}
