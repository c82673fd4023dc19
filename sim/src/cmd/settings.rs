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
    super::out(&describe(&s))?;
    Ok(())
}

/// The settings table: name, value (the preset's default unless overridden), type, doc; then
/// where each setting and its default come from, grouped by source.
fn describe(s: &planner::Strategy) -> String {
    let rows: Vec<[String; 4]> = s
        .settings()
        .into_iter()
        .map(|(setting, value)| {
            [
                setting.name.to_string(),
                value.text(),
                setting.kind.describe(),
                setting.doc.to_string(),
            ]
        })
        .collect();
    let width = |i: usize, title: &str| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0, "setting"), width(1, "value"), width(2, "type"));
    let mut out = format!(
        "{} honours {} settings:\n{:<w0$}  {:<w1$}  {:<w2$}  what it does\n",
        s.name(),
        rows.len(),
        "setting",
        "value",
        "type"
    );
    for [name, value, kind, doc] in &rows {
        out.push_str(&format!("{name:<w0$}  {value:<w1$}  {kind:<w2$}  {doc}\n"));
    }
    let mut sources: Vec<(&str, Vec<&str>)> = Vec::new();
    for (setting, _) in s.settings() {
        match sources.iter_mut().find(|(src, _)| *src == setting.source) {
            Some((_, names)) => names.push(setting.name),
            None => sources.push((setting.source, vec![setting.name])),
        }
    }
    out.push_str("\nwhere they come from:\n");
    for (source, names) in sources {
        out.push_str(&format!("  {source}: {}\n", names.join(", ")));
    }
    out
}
