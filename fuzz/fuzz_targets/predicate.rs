//! A query's `predicate:` text: any string gives a predicate or an error that points inside
//! the text, and a predicate judges every row group without panicking.
#![no_main]

use layout::{ColumnChunk, FileLayout, MinMax, RowGroup, Schema, StatValue, Table, TimeUnit};
use libfuzzer_sys::fuzz_target;

fn table() -> Table {
    let kinds = [
        (StatValue::Date(8766), StatValue::Date(9131)),
        (
            StatValue::Decimal { unscaled: 0, scale: 2 },
            StatValue::Decimal { unscaled: 10, scale: 2 },
        ),
        (StatValue::Bytes((*b"AIR").into()), StatValue::Bytes((*b"TRUCK").into())),
        (StatValue::Int(-5), StatValue::Int(i64::MAX)),
        (StatValue::UInt(0), StatValue::UInt(u64::MAX)),
        (StatValue::float(-1.5), StatValue::float(1e300)),
        (
            StatValue::Timestamp { ticks: 0, unit: TimeUnit::Nanos },
            StatValue::Timestamp { ticks: i64::MAX, unit: TimeUnit::Nanos },
        ),
    ];
    let names = ["d", "dec", "s", "i", "u", "f", "ts", "none"];
    let rg = RowGroup {
        num_rows: 1,
        columns: vec![ColumnChunk::default(); names.len()],
        statistics: kinds
            .into_iter()
            .map(|(a, b)| MinMax::new(a, b))
            .chain([None])
            .collect(),
        outlined_uncompressed_bytes: 0,
    };
    Table {
        schemas: vec![Schema {
            columns: names.map(String::from).to_vec(),
        }],
        files: vec![FileLayout {
            row_groups: vec![rg],
            ..FileLayout::default()
        }],
        ..Table::default()
    }
}

fuzz_target!(|text: &str| {
    let t = table();
    match scenario::predicate::parse(text, &t) {
        Ok(p) => {
            assert!(!p.terms.is_empty(), "{text}");
            let _ = p.row_group_may_match(&t.files[0].row_groups[0]);
            let _ = p.file_may_match(&t.files[0]);
        }
        Err(e) => assert!(e.at <= text.len(), "{text}: {e}"),
    }
});
