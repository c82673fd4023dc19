//! A setting the report calls inert on an arm ("does nothing": its mechanism is off, or the
//! mechanism that replaces it is on) must change nothing that arm runs: the sweep's `-`
//! columns, `ran with` lines and notes say so, and a sweep reuses such an arm's run across
//! points. Checked by running each such setting at a value other than the preset's default.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use planner::settings::{Kind, Value, SETTINGS};
use planner::{Strategy, STRATEGY_PRESETS};

/// A valid value other than `default`, of the setting's kind.
fn other_value(kind: &Kind, default: Value) -> Option<String> {
    let v = match (kind, default) {
        (Kind::Bool, Value::Bool(b)) => Value::Bool(!b),
        (Kind::Count { min, max, .. }, Value::Count(d)) => {
            let up = d.saturating_mul(2).max(d.saturating_add(1));
            Value::Count(if up <= *max { up } else { (*min).max(d / 2) })
        }
        (Kind::Bytes { min, max }, Value::Bytes(d)) => {
            let up = d.saturating_mul(2).max(1 << 20);
            Value::Bytes(if up <= *max { up } else { (*min).max(d / 2) })
        }
        (Kind::Ratio { min, max, .. }, Value::Ratio(d)) => {
            let up = if d > 0.0 { d * 2.0 } else { 1.0 };
            Value::Ratio(if up < *max { up } else { (min + d) / 2.0 })
        }
        (Kind::Choice(options), Value::Choice(d)) => {
            Value::Choice(options.iter().copied().find(|o| *o != d)?)
        }
        _ => return None,
    };
    (v != default).then(|| v.text())
}

#[test]
fn settings_said_to_do_nothing_change_nothing() {
    let mut checked = Vec::new();
    // Each preset as shipped, and with a setting that makes others inert.
    let variants = STRATEGY_PRESETS
        .iter()
        .map(|&p| (p, None))
        .chain([("arrow-cpp", Some(("pre_buffer", "false")))]);
    for (preset, base) in variants {
        let mut strategy = Strategy::preset(preset).unwrap();
        if let Some((name, value)) = base {
            strategy.set(name, value).unwrap();
        }
        let base_yaml = base.map_or(String::new(), |(n, v)| format!("{n}: {v}, "));
        let mut arms = String::new();
        for s in SETTINGS {
            if !s.honoured_by(&strategy) || s.applies_to(&strategy) {
                continue;
            }
            let Some(value) = other_value(&s.kind, s.get(&strategy)) else {
                continue;
            };
            arms.push_str(&format!(
                "  - name: {}\n    strategy: {preset}\n    settings: {{ {base_yaml}{}: {value} }}\n",
                s.name, s.name
            ));
            checked.push(format!("{preset} {base_yaml}{} = {value}", s.name));
        }
        let mut text = small(3, 3, &arms);
        if !strategy.honours("max_parsing_threads") {
            // The shared thread settings are ClickHouse's: a peer refuses them.
            text = text.replace(
                "settings:\n  max_threads: 4\n  max_parsing_threads: 4\n",
                "",
            );
        }
        let text = text.replace(
            "  - name: base\n    strategy: clickhouse-base\n  - name: redesign\n    strategy: clickhouse-redesign\n",
            &match base {
                None => format!("  - name: plain\n    strategy: {preset}\n"),
                Some((n, v)) => format!(
                    "  - name: plain\n    strategy: {preset}\n    settings: {{ {n}: {v} }}\n"
                ),
            },
        );
        let r = run_text(&text);
        let case = r.case("default").unwrap();
        let plain = case.arms.iter().find(|a| a.arm == "plain").unwrap();
        for a in case.arms.iter().filter(|a| a.arm != "plain") {
            assert_eq!(
                format!("{:?}", a.runs),
                format!("{:?}", plain.runs),
                "{preset}: `{}` is said to do nothing, but the run changed",
                a.arm
            );
        }
    }
    // Both presets have such settings (base: the redesign's mechanisms' own settings; the
    // redesign: the base's memory stages that R4 replaces), so the loop above checked some.
    for preset in [
        "clickhouse-base",
        "clickhouse-redesign",
        "arrow-cpp pre_buffer: false",
    ] {
        assert!(
            checked.iter().any(|c| c.starts_with(preset)),
            "{preset}: none checked: {checked:?}"
        );
    }
    eprintln!(
        "checked {} settings said to be inert:\n{}",
        checked.len(),
        checked.join("\n")
    );
}
