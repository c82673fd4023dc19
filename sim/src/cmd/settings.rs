//! `sim settings`: every setting a strategy honours, its value and what it does.

use anyhow::Result;

#[derive(clap::Args)]
pub struct SettingsArgs {
    /// Strategy preset (default: clickhouse-redesign).
    #[arg(default_value = "clickhouse-redesign")]
    pub strategy: String,
}

pub fn run(args: SettingsArgs) -> Result<()> {
    let s = planner::Strategy::preset(&args.strategy)?;
    print!("{}", describe(&s));
    Ok(())
}

fn describe(s: &planner::Strategy) -> String {
    let rows = s.settings();
    let w_name = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let w_value = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut out = format!(
        "{:<w_name$}  {:<w_value$}  what it does\n",
        "setting", "value"
    );
    for (name, value, doc) in rows {
        out.push_str(&format!("{name:<w_name$}  {value:<w_value$}  {doc}\n"));
    }
    out
}
