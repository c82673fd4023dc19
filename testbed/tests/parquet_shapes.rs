//! The Parquet shapes: file count, row groups, sizes as asked, readable by `record`, the same
//! bytes for the same seed, and servable by the test bed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;

use std::path::PathBuf;
use std::time::Instant;

use common::{client_runtime, within};
use object_store::path::Path as ObjectPath;
use object_store::ObjectStoreExt;
use record::record_parquet_files;
use testbed::{
    write_many_small_files, write_one_large_file, LargeFileShape, SmallFilesShape, TestBed,
    TestBedConfig,
};

const MIB: u64 = 1024 * 1024;

fn size(p: &PathBuf) -> u64 {
    std::fs::metadata(p).unwrap().len()
}

#[test]
fn many_small_files_have_the_scenario_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let shape = SmallFilesShape::default();
    let t0 = Instant::now();
    let paths = write_many_small_files(&tmp.path().join("small"), 64, &shape).unwrap();
    eprintln!(
        "64 small files written in {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(paths.len(), 64);
    let sizes: Vec<u64> = paths.iter().map(size).collect();
    let total: u64 = sizes.iter().sum();
    eprintln!(
        "sizes {:.2}..{:.2} MiB, {:.1} MiB in all",
        *sizes.iter().min().unwrap() as f64 / MIB as f64,
        *sizes.iter().max().unwrap() as f64 / MIB as f64,
        total as f64 / MIB as f64
    );
    // Data between the bounds, plus page headers and a footer of well under 1 MiB.
    for &s in &sizes {
        assert!(
            s >= shape.min_file_bytes - 64 * 1024 && s <= shape.max_file_bytes + MIB,
            "file of {s} bytes"
        );
    }
    assert!(
        sizes.windows(2).any(|w| w[0] != w[1]),
        "all files have one size"
    );

    let table = record_parquet_files(&[tmp.path().join("small")])
        .unwrap()
        .strict()
        .unwrap();
    assert_eq!(table.files.len(), 64);
    for (file, path) in table.files.iter().zip(&paths) {
        assert_eq!(file.size_bytes, size(path), "{}", file.path);
        assert_eq!(file.row_groups.len(), 1);
        let rg = &file.row_groups[0];
        assert_eq!(rg.columns.len(), shape.columns);
        // Uncompressed, incompressible: the column chunks fill the file but for the footer.
        let data: u64 = rg.columns.iter().map(|c| c.data_len).sum();
        assert!(data + u64::from(file.footer_len_bytes) <= file.size_bytes);
        assert!(data as f64 >= 0.9 * file.size_bytes as f64 - 128.0 * 1024.0);
        // Columns of lognormal widths: chunk sizes vary a lot.
        let max = rg.columns.iter().map(|c| c.data_len).max().unwrap();
        let min = rg.columns.iter().map(|c| c.data_len).min().unwrap();
        assert!(max >= 10 * min, "chunk sizes {min}..{max}");
    }
    // As in the scenario, a 437-column footer exceeds a 64 KiB tail read.
    let footer = table.files[0].footer_len_bytes;
    eprintln!("footer {footer} bytes");
    assert!(footer > 64 * 1024, "footer of {footer} bytes");
}

#[test]
fn one_large_file_has_many_equal_row_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let shape = LargeFileShape::default();
    let t0 = Instant::now();
    let path = write_one_large_file(&tmp.path().join("large"), &shape).unwrap();
    let bytes = size(&path);
    eprintln!(
        "large file of {:.1} MiB written in {:.2} s",
        bytes as f64 / MIB as f64,
        t0.elapsed().as_secs_f64()
    );
    let asked = shape.row_groups as u64 * shape.row_group_bytes;
    assert!(
        bytes >= asked - asked / 50 && bytes <= asked + asked / 50,
        "{bytes} bytes for {asked} asked"
    );
    let table = record_parquet_files(std::slice::from_ref(&path))
        .unwrap()
        .strict()
        .unwrap();
    assert_eq!(table.files.len(), 1);
    let file = &table.files[0];
    assert_eq!(file.size_bytes, bytes);
    assert_eq!(file.row_groups.len(), shape.row_groups);
    for rg in &file.row_groups {
        assert_eq!(rg.columns.len(), shape.columns);
        let data: u64 = rg.columns.iter().map(|c| c.data_len).sum();
        let want = shape.row_group_bytes;
        assert!(
            data >= want - want / 50 && data <= want + want / 50,
            "row group of {data} bytes, {want} asked"
        );
    }
    // Every row group has the same rows (one shape for the whole file).
    let rows: Vec<u64> = file.row_groups.iter().map(|rg| rg.num_rows).collect();
    assert!(rows.iter().all(|&r| r == rows[0] && r > 0));
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let shape = SmallFilesShape {
        columns: 20,
        min_file_bytes: 64 * 1024,
        max_file_bytes: 128 * 1024,
        ..SmallFilesShape::default()
    };
    let a = write_many_small_files(&tmp.path().join("a"), 2, &shape).unwrap();
    let b = write_many_small_files(&tmp.path().join("b"), 2, &shape).unwrap();
    let other = SmallFilesShape { seed: 43, ..shape };
    let c = write_many_small_files(&tmp.path().join("c"), 2, &other).unwrap();
    for i in 0..2 {
        let (x, y, z) = (
            std::fs::read(&a[i]).unwrap(),
            std::fs::read(&b[i]).unwrap(),
            std::fs::read(&c[i]).unwrap(),
        );
        assert_eq!(x, y, "file {i} differs for one seed");
        assert_ne!(x, z, "file {i} is the same for two seeds");
    }
}

#[test]
fn shapes_upload_and_serve_through_the_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let small =
        write_many_small_files(&tmp.path().join("small"), 4, &SmallFilesShape::default()).unwrap();
    let large = write_one_large_file(
        &tmp.path().join("large"),
        &LargeFileShape {
            row_groups: 8,
            ..LargeFileShape::default()
        },
    )
    .unwrap();
    let bed = TestBed::start(TestBedConfig {
        data_dir: tmp.path().join("s3"),
        rtt_ns: 5_000_000,
        bandwidth_bytes_per_s: Some(200 * MIB),
    })
    .unwrap();
    let mut keys = bed.upload_all(&small, "small/").unwrap();
    keys.extend(
        bed.upload_all(std::slice::from_ref(&large), "large/")
            .unwrap(),
    );
    assert_eq!(keys[0], "small/part-00000.parquet");
    assert_eq!(keys[4], "large/large.parquet");
    let store = bed.object_store(&bed.endpoint_url()).unwrap();
    let rt = client_runtime();
    for (key, path) in keys.iter().zip(small.iter().chain([&large])) {
        let meta = rt
            .block_on(within("HEAD", store.head(&ObjectPath::from(key.as_str()))))
            .unwrap();
        assert_eq!(meta.size, size(path), "{key}");
        // The Parquet magic at the end, read through the proxy.
        let tail = rt
            .block_on(within(
                "GET",
                store.get_range(&ObjectPath::from(key.as_str()), meta.size - 4..meta.size),
            ))
            .unwrap();
        assert_eq!(&tail[..], b"PAR1", "{key}");
    }
}
