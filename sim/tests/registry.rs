//! Each setting name and each metric name is written once in the code (outside tests): in its
//! registry (`planner::settings`, `drive::metric`). Anywhere else, code names them through the
//! registry, so a renamed setting or metric is a compile error, not a silent miss.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::repo;

/// Every `.rs` file under a crate's `src/`, with its `#[cfg(test)]` tail cut off.
fn library_sources() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![repo()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                if !name.starts_with('.')
                    && name != "target"
                    && name != "tests"
                    && name != "benches"
                {
                    stack.push(p);
                }
            } else if name.ends_with(".rs") && p.components().any(|c| c.as_os_str() == "src") {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_string(),
                    None => text,
                };
                out.push((p.display().to_string(), code));
            }
        }
    }
    out.sort();
    out
}

fn written_once(names: &[&str], registry: &str) {
    let sources = library_sources();
    let mut wrong = Vec::new();
    for name in names {
        let quoted = format!("\"{name}\"");
        let hits: Vec<(&str, usize)> = sources
            .iter()
            .map(|(f, s)| (f.as_str(), s.matches(&quoted).count()))
            .filter(|(_, n)| *n > 0)
            .collect();
        let total: usize = hits.iter().map(|h| h.1).sum();
        if total != 1 || !hits.iter().all(|(f, _)| f.ends_with(registry)) {
            wrong.push(format!("{name}: {hits:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "written more than once, or outside {registry}:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_setting_name_is_written_once() {
    let names: Vec<&str> = planner::settings::SETTINGS.iter().map(|s| s.name).collect();
    assert!(names.len() > 30);
    written_once(&names, "readpath/planner/src/settings.rs");
}

#[test]
fn every_metric_name_is_written_once() {
    // Profile events are named by the reader's own event registry (`readahead::events`).
    let names: Vec<&str> = drive::metric::Metric::all()
        .filter(|m| !matches!(m, drive::metric::Metric::Event(_)))
        .map(|m| m.name())
        // `cost` is also the tuner's objective keyword (`--objective cost`), not the metric.
        .filter(|n| *n != "cost")
        .collect();
    assert!(names.len() > 20);
    written_once(&names, "drive/src/metric.rs");
}
