//! `sim prune`: which row groups (and, on an Iceberg table, which files) a predicate keeps,
//! judged by a recorded layout's row-group min/max as the readers judge them. Prints one CSV
//! row per row group to stdout and a summary to stderr.

use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct PruneArgs {
    /// A recorded layout (`sim record`).
    pub layout: PathBuf,
    /// The predicate, as a scenario's `predicate:` writes it, e.g.
    /// "l_shipdate >= date '1994-01-01' and l_shipdate < date '1995-01-01'".
    #[arg(long = "where", value_name = "PREDICATE")]
    pub predicate: String,
}

pub fn run(args: PruneArgs) -> Result<()> {
    let bytes = scenario::layout_file::read(&args.layout)
        .with_context(|| format!("reading {}", args.layout.display()))?;
    let table = layout::format::read_table(&bytes)
        .with_context(|| format!("reading layout {}", args.layout.display()))?;
    let predicate = scenario::predicate::parse(&args.predicate, &table)
        .with_context(|| format!("--where `{}`", args.predicate))?;
    let mut out = String::from("file,path,row_group,rows,kept\n");
    let (mut groups, mut kept_groups, mut kept_files) = (0usize, 0usize, 0usize);
    for (fi, file) in table.files.iter().enumerate() {
        let mut any = false;
        for (gi, rg) in file.row_groups.iter().enumerate() {
            let kept = rg.num_rows > 0 && predicate.row_group_may_match(rg);
            groups += 1;
            kept_groups += kept as usize;
            any |= kept;
            writeln!(
                out,
                "{fi},{},{gi},{},{}",
                csv_field(&file.path),
                rg.num_rows,
                kept as u8
            )?;
        }
        kept_files += any as usize;
    }
    super::out(&out)?;
    eprintln!(
        "kept {kept_groups} of {groups} row groups in {kept_files} of {} files{}",
        table.files.len(),
        if table.iceberg.is_some() {
            " (an Iceberg scan reads only those files)"
        } else {
            " (a reader still reads every file's footer)"
        }
    );
    Ok(())
}

/// A path as one CSV field: quoted when it holds a comma or a quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
