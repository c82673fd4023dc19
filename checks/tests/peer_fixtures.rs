//! The peer presets against the real readers' captured request logs (`traces/captured/peers`,
//! written by `sim check-peers --capture`), without Python or the test bed: for every reader
//! and shape, the same GET, HEAD and LIST counts, the same bytes, and at least 95% of the
//! simulated ranges byte-identical to real ones.
#![cfg(feature = "testbed")]

use std::path::PathBuf;

use checks::peers::{replay_fixture, PeerReader, PeerShape};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../traces/captured/peers")
}

#[test]
fn every_preset_sends_what_its_reader_sent() {
    let dir = fixtures();
    let work = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for shape in PeerShape::ALL {
        let layout = dir.join(format!("{}.layout", shape.name()));
        for reader in PeerReader::ALL {
            let csv_path = dir.join(format!("{}-{}.csv", shape.name(), reader.name()));
            let csv = std::fs::read_to_string(&csv_path)
                .unwrap_or_else(|e| panic!("{}: {e}", csv_path.display()));
            let c = replay_fixture(shape, reader, &layout, &csv, work.path()).unwrap();
            let (m, s) = (&c.measured, &c.simulated);
            let row = format!("{} / {}", shape.name(), reader.name());
            if (m.gets, m.heads, m.lists, m.bytes) != (s.gets, s.heads, s.lists, s.bytes) {
                failures.push(format!(
                    "{row}: measured {} GETs {} HEADs {} LISTs {} B, simulated {} {} {} {}",
                    m.gets, m.heads, m.lists, m.bytes, s.gets, s.heads, s.lists, s.bytes
                ));
            }
            if c.identical < 0.95 {
                failures.push(format!(
                    "{row}: {:.1}% of the ranges identical",
                    c.identical * 100.0
                ));
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 15);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_preset_off_its_reader_defaults_is_caught() {
    // The companion: pyarrow's log (24 small files, pre-buffered) against the preset with
    // pre-buffering off: one GET per column chunk instead of the merged ones.
    let dir = fixtures();
    let work = tempfile::tempdir().unwrap();
    let layout = dir.join("small.layout");
    let csv = std::fs::read_to_string(dir.join("small-pyarrow.csv")).unwrap();
    let real = replay_fixture(
        PeerShape::Small,
        PeerReader::Pyarrow,
        &layout,
        &csv,
        work.path(),
    )
    .unwrap();
    let off = replay_fixture(
        PeerShape::Small,
        PeerReader::PyarrowNoPrebuffer,
        &layout,
        &csv,
        work.path(),
    )
    .unwrap();
    assert_eq!(real.simulated.gets, real.measured.gets);
    assert!(
        off.simulated.gets > off.measured.gets + 24,
        "{} vs {}",
        off.simulated.gets,
        off.measured.gets
    );
    assert!(off.identical < real.identical);
}
