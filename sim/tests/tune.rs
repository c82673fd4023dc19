//! `sim tune`: reaches near the exhaustive grid's best with a fraction of its evaluations;
//! the same seed gives the same proposal; bad parameters are clear errors.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fails loudly where it stops

mod common;
use common::*;
use experiments::tune::{parse_param, targets, tune, Evaluator, Objective, TuneOptions};

fn scenario() -> scenario::LoadedScenario {
    // Many small row groups of a wide-ish table: gap and in-flight settings both matter.
    parse(
        &small(12, 6, "")
            .replace("row_group_size: 2MiB", "row_group_size: 6MiB")
            .replace("count: 8", "count: 24")
            .replace("columns: [1, 3, 6]", "columns: [1, 3, 6, 11, 17, 22]"),
    )
    .unwrap()
}

fn opts(budget: usize, seed: u64) -> TuneOptions {
    TuneOptions {
        params: vec![
            parse_param("input_format_parquet_coalesce_gap_bytes=16KiB..16MiB:log").unwrap(),
            parse_param("input_format_parquet_min_bytes_in_flight=1MiB..512MiB:log").unwrap(),
        ],
        objective: Objective::Time,
        max_memory_bytes: None,
        budget,
        seed,
        arm: Some("redesign".into()),
        reps: Some(1),
        progress: false,
    }
}

#[test]
fn tuner_gets_within_2_percent_of_the_grid_with_15_percent_of_its_evaluations() {
    let loaded = vec![scenario()];
    let t = targets(&loaded, Some("redesign")).unwrap();
    let o = opts(15, 7);
    // Exhaustive 10 x 10 grid over the same (rounded) values the tuner can propose.
    let eval = Evaluator::new(&t, Some(1));
    let defaults = eval.measure(&[], None).unwrap()[0].wall_ns;
    let n = 10;
    let mut grid_best = f64::INFINITY;
    for i in 0..n {
        for j in 0..n {
            let (u, v) = (i as f64 / (n - 1) as f64, j as f64 / (n - 1) as f64);
            let settings = vec![
                (
                    o.params[0].name.clone(),
                    o.params[0].text(o.params[0].value_at(u)),
                ),
                (
                    o.params[1].name.clone(),
                    o.params[1].text(o.params[1].value_at(v)),
                ),
            ];
            let w = eval.measure(&settings, None).unwrap()[0].wall_ns;
            grid_best = grid_best.min(w / defaults);
        }
    }
    let r = tune(&t, &o).unwrap();
    assert!(r.history.len() <= 15, "{} evaluations", r.history.len());
    assert!(
        r.best.objective <= grid_best * 1.02,
        "tuner {} vs grid {}",
        r.best.objective,
        grid_best
    );
    assert!(r.best.objective <= 1.0, "never worse than the defaults");
    // Same seed, same proposal.
    let again = tune(&t, &o).unwrap();
    assert_eq!(again.best.settings, r.best.settings);
}

#[test]
fn bad_parameters_are_clear_errors() {
    assert!(parse_param("input_format_parquet_coalesce_gap_bytes=1..16").is_err());
    assert!(parse_param("nonsense").is_err());
    let loaded = vec![scenario()];
    let t = targets(&loaded, Some("redesign")).unwrap();
    // An unknown name fails where it is typed, with the nearest name.
    let e = parse_param("input_format_parquet_coalesce_gap_byte=64KiB..1MiB")
        .unwrap_err()
        .to_string();
    assert!(e.contains("input_format_parquet_coalesce_gap_bytes"), "{e}");
    // A setting the tuned arm does not honour is refused, naming the arm and its preset.
    let mut o = opts(5, 1);
    o.params = vec![parse_param("allow_gap=4KiB..1MiB").unwrap()];
    let e = tune(&t, &o).err().expect("not honoured").to_string();
    assert!(
        e.contains("redesign") && e.contains("does not honour"),
        "{e}"
    );
    assert!(targets(&loaded, Some("nope")).is_err());
}

#[test]
fn every_budget_ends_with_the_best_point_so_far_never_a_panic() {
    // A budget that runs out while Nelder-Mead evaluates its first simplex panicked inside
    // argmin (`NelderMead::init` unwraps the cost function's error): issue 20.
    let loaded = vec![scenario()];
    let t = targets(&loaded, Some("redesign")).unwrap();
    for budget in 1..=14 {
        let r = tune(&t, &opts(budget, 3)).unwrap();
        assert!(
            r.history.len() <= budget,
            "budget {budget}: {} evaluations",
            r.history.len()
        );
        assert!(r.best.objective <= 1.0, "budget {budget}");
    }
}

/// A tuned or evaluated setting that did nothing on its arm (its mechanism off) was spent on
/// silently: the tuner and `sim eval` now say which and why, and say nothing of one that ran.
#[test]
fn settings_that_did_nothing_are_noted_by_the_tuner_and_eval() {
    let loaded = vec![scenario()];
    let t = targets(&loaded, Some("redesign")).unwrap();
    let mut o = opts(4, 3);
    o.params = vec![parse_param("input_format_parquet_files_prefetch_ahead=1..8").unwrap()];
    let r = tune(&t, &o).unwrap();
    assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
    assert!(
        r.notes[0].contains("input_format_parquet_files_prefetch_ahead")
            && r.notes[0].contains("R9, which is off"),
        "{:?}",
        r.notes
    );
    // With R9 on, the same parameter does something: no note.
    let on = loaded[0]
        .with_overrides(&[scenario::parse_override(
            "arms.redesign.settings.r9_files_prefetch=true",
        )
        .unwrap()
        .at(scenario::Layer::CommandLine)])
        .unwrap();
    let on = vec![on];
    let t = targets(&on, Some("redesign")).unwrap();
    assert!(tune(&t, &o).unwrap().notes.is_empty());
    // `sim eval`'s evaluator, one point.
    let t = targets(&loaded, Some("redesign")).unwrap();
    let eval = Evaluator::new(&t, Some(1));
    eval.measure(
        &[(
            "input_format_parquet_coalesce_gap_bytes".into(),
            "1MiB".into(),
        )],
        None,
    )
    .unwrap();
    assert!(eval.inert_notes().is_empty());
}
