//! One calibration (issue "the ClickHouse model predicts what it was not fitted to"): a shipped
//! scenario states only what its measurement describes (table shape, query, cache state and
//! size, thread counts, cores, which store); the model constants (CPU costs, the store preset's
//! figures, the caches' device and copy costs, the read-through policy) come from one place
//! and no scenario or case overrides them.

mod common;
use common::repo;
use serde_json::Value;

/// Keys (dotted, from the scenario root) a scenario may not set: calibrated model constants.
fn calibrated(path: &str) -> bool {
    let allowed_cpu = ["cpu", "cpu.cores"];
    (path.starts_with("cpu") && !allowed_cpu.contains(&path))
        || path.starts_with("store.")
        || path.starts_with("caches.page_cache.hit_latency")
        || path.starts_with("caches.page_cache.hit_bandwidth")
        || path.starts_with("caches.page_cache.read_through")
        || path.starts_with("caches.filesystem_cache.disk")
}

fn keys(prefix: &str, v: &Value, out: &mut Vec<String>) {
    if let Value::Object(map) = v {
        for (k, child) in map {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.push(path.clone());
            keys(&path, child, out);
        }
    }
}

#[test]
fn no_shipped_scenario_overrides_a_calibrated_constant() {
    let dir = repo().join("scenarios");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let loaded = scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
        let mut found = Vec::new();
        keys("", &loaded.base_tree, &mut found);
        // A case's `set:` keys are dotted paths from the root.
        for (case, overrides) in scenario::cases(&loaded).unwrap() {
            for o in overrides {
                found.push(format!("{} (case {case})", o.path.join(".")));
            }
        }
        let bad: Vec<&String> = found
            .iter()
            .filter(|k| calibrated(k.split(' ').next().unwrap_or(k)))
            .collect();
        assert!(
            bad.is_empty(),
            "{}: sets calibrated constants {bad:?}",
            path.display()
        );
        match loaded.base_tree.get("store") {
            Some(Value::String(name)) => assert!(
                ["s3-standard", "local-nvme"].contains(&name.as_str()),
                "{}: store `{name}` is not one of the calibrated presets",
                path.display()
            ),
            other => panic!(
                "{}: store must name a preset, found {other:?}",
                path.display()
            ),
        }
        checked += 1;
    }
    assert!(checked >= 6);
}

#[test]
fn the_check_catches_an_override() {
    assert!(calibrated("cpu.source.per_row"));
    assert!(calibrated("store.first_byte.median"));
    assert!(calibrated(
        "caches.page_cache.read_through.budget_override_bytes"
    ));
    assert!(!calibrated("cpu.cores"));
    assert!(!calibrated("table.generate.file_count"));
    assert!(!calibrated("caches.page_cache.warm.fraction"));
}
