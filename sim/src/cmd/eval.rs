//! `sim eval`: one point of `sim tune`'s search, evaluated and printed as JSON, for tuners
//! outside the process (`scale/optuna_tune.py` drives Optuna's ask/tell loop over it).

use anyhow::{bail, Context, Result};

#[derive(clap::Args)]
pub struct EvalArgs {
    #[command(flatten)]
    pub eval: super::tune::EvalOn,
    /// The tuned arm's settings, a JSON object of setting names (`sim settings` lists them)
    /// and values: strings with units for sizes (`"1MiB"`), numbers, booleans.
    #[arg(long, value_name = "JSON")]
    pub settings: String,
}

/// The settings object as (name, value text) pairs, in the object's order.
fn parse_settings(json: &str) -> Result<Vec<(String, String)>> {
    let v: serde_json::Value =
        serde_json::from_str(json).with_context(|| format!("--settings `{json}` is not JSON"))?;
    let Some(map) = v.as_object() else {
        bail!("--settings must be a JSON object of setting names and values, got `{json}`");
    };
    map.iter()
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Number(n) => n.to_string(),
                serde_json::Value::Bool(b) => b.to_string(),
                other => bail!("--settings: `{k}` is {other}; give a string, number or boolean"),
            };
            if planner::settings::setting(k).is_none() {
                bail!("--settings: `{k}` is not a setting (`sim settings` lists them)");
            }
            Ok((k.clone(), text))
        })
        .collect()
}

pub fn run(args: EvalArgs) -> Result<()> {
    let settings = parse_settings(&args.settings)?;
    let on = args.eval.load()?;
    let pool = super::pool(args.eval.threads)?;
    let targets = experiments::tune::targets(&on.scenarios, args.eval.arm.as_deref())?;
    let (base, measured, notes) = pool.install(|| {
        let eval = experiments::tune::Evaluator::new(&targets, on.reps);
        Ok::<_, experiments::tune::TuneError>((
            eval.measure(&[], None)?,
            eval.measure(&settings, None)?,
            eval.inert_notes(),
        ))
    })?;
    super::notes(&notes);
    let e =
        experiments::tune::evaluation(settings, measured, &base, on.objective, on.max_memory_bytes);
    let scenarios: Vec<serde_json::Value> = targets
        .iter()
        .zip(e.measured.iter().zip(&base))
        .map(|(t, (m, b))| {
            serde_json::json!({
                "scenario": t.label,
                "arm": t.arm_name,
                "wall_time_ns": m.wall_ns,
                "cost_usd": m.cost_usd,
                "peak_memory_bytes": m.peak_memory_bytes,
                "defaults": {
                    "wall_time_ns": b.wall_ns,
                    "cost_usd": b.cost_usd,
                    "peak_memory_bytes": b.peak_memory_bytes,
                },
            })
        })
        .collect();
    let out = serde_json::json!({
        "objective": e.objective,
        "objective_kind": args.eval.objective,
        "feasible": e.feasible,
        "settings": e
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect::<serde_json::Map<_, _>>(),
        "scenarios": scenarios,
        // Settings that did nothing where they were set (also on stderr): a caller that reads
        // only the JSON must not take them as applied.
        "notes": notes,
    });
    super::out(&format!("{out}\n"))
}
