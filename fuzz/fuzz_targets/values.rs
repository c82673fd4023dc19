//! Units, `--vary`, `--set`, `--param`, `--shard` and a shard CSV's line: any string gives a
//! value or an error, and what parses stays inside its bounds (and a shard line reads back).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = units::parse_bytes(text);
    let _ = units::parse_duration_ns(text);
    let _ = units::parse_bandwidth(text);
    let _ = units::parse_count(text);
    if let Ok(axis) = experiments::sweep::parse_vary(text) {
        assert!(
            axis.values.len() <= 10_000,
            "{text}: {} values",
            axis.values.len()
        );
    }
    let _ = scenario::parse_override(text);
    if let Ok(s) = experiments::sweep::Shard::parse(text) {
        assert!(s.index < s.count, "{text}: {s:?}");
    }
    if let Ok(l) = experiments::sweep::ShardLine::parse(text) {
        assert_eq!(experiments::sweep::ShardLine::parse(&l.line()), Ok(l), "{text}");
    }
    if let Ok(p) = experiments::tune::parse_param(text) {
        // Every position of the unit interval maps to a value the setting can print.
        for u in [0.0, 0.5, 1.0] {
            let _ = p.text(p.value_at(u));
        }
    }
});
