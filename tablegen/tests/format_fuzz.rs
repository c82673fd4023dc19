//! A realistic layout file (generated, DEFLATE-compressed) under truncation, bit flips and
//! byte overwrites: every damaged file is refused with a FormatError, none panics.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

use layout::format::{read_table, write_table, FormatError};
use proptest::prelude::*;
use std::sync::OnceLock;
use tablegen::{generate, GeneratorSpec};

fn good_file() -> &'static Vec<u8> {
    static FILE: OnceLock<Vec<u8>> = OnceLock::new();
    FILE.get_or_init(|| {
        let mut spec: GeneratorSpec =
            serde_saphyr::from_str(include_str!("specs/iceberg-bench.yaml")).unwrap();
        spec.file_count = 3;
        let table = generate(&spec, 9).unwrap();
        let out = write_table(&table).unwrap();
        assert_eq!(read_table(&out).unwrap(), table);
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn truncated_files_are_refused(cut in any::<prop::sample::Index>()) {
        let good = good_file();
        let Err(err) = read_table(&good[..cut.index(good.len())]) else {
            return Err(TestCaseError::fail("a truncated file was accepted"));
        };
        let named = matches!(err, FormatError::BadMagic { .. } | FormatError::Truncated { .. } | FormatError::BodyLength { .. });
        prop_assert!(named, "{}", err);
    }

    #[test]
    fn damaged_files_are_refused(hits in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..5)) {
        let mut bad = good_file().clone();
        for (i, x) in &hits {
            let i = i.index(bad.len());
            bad[i] ^= x;
        }
        // Two hits on one byte can cancel out; an undamaged file is not a case.
        prop_assume!(bad != *good_file());
        match read_table(&bad) {
            Ok(_) => prop_assert!(false, "a damaged file was accepted"),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn errors_read_well() {
    let good = good_file();
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    let msg = read_table(&bad).unwrap_err().to_string();
    assert!(
        msg.contains("corrupt") || msg.contains("decompress"),
        "{msg}"
    );
    let msg = read_table(&good[..10]).unwrap_err().to_string();
    assert!(msg.contains("truncated") && msg.contains("8..12"), "{msg}");
}
