//! Scenarios: the YAML a user writes, its overrides, and its resolution into what a run needs.

pub mod file;
pub mod layout_file;
pub mod load;
pub mod overrides;
pub mod predicate;
pub mod resolve;

pub use file::ScenarioFile;
pub use load::{load, nearest, parse, LoadedScenario, ScenarioError};
pub use overrides::{parse_override, Layer, Override};
pub use resolve::{
    resolve, Resolved, ResolvedArm, ResolvedQuery, TableCache, KEEP_WHOLE_UP_TO_CHUNKS,
};

use std::fmt::Write as _;

/// `sim validate`: the scenario tree after overrides, then what it resolves to, case by case.
pub fn describe(loaded: &LoadedScenario) -> Result<String, ScenarioError> {
    let mut out = String::new();
    let tree = serde_saphyr::to_string(&loaded.tree)
        .unwrap_or_else(|e| format!("# (cannot print the tree: {e})\n"));
    let _ = writeln!(out, "# {} after overrides", loaded.path.display());
    for note in &loaded.notes {
        let _ = writeln!(out, "# note: {note}");
    }
    out.push_str(&tree);
    let tables = TableCache::default();
    for (case, overrides) in cases(loaded)? {
        let scenario = loaded.with_overrides(&overrides)?;
        let r = resolve(&scenario, &tables).map_err(|e| e.in_case(&case))?;
        let _ = writeln!(out, "\n# case `{case}` resolves to:");
        for note in scenario.notes.iter().filter(|n| !loaded.notes.contains(n)) {
            let _ = writeln!(out, "#   note: {note}");
        }
        // An outlined table holds no chunk: say so rather than print 0 column chunks.
        let chunks = if r.table.lazy.is_some() {
            "outlines, each made again when opened".to_string()
        } else {
            format!("{} column chunks", r.table.column_chunk_count())
        };
        let _ = writeln!(
            out,
            "#   table: {} files ({} laid out for the queries: {chunks}, {}) ({})",
            r.table.files.len(),
            r.table.laid_out_file_count(),
            units::format_bytes(r.table.total_bytes()),
            r.table.provenance.tool
        );
        for q in &r.queries {
            let _ = writeln!(
                out,
                "#   query {}: {} columns over {} files{}",
                q.name,
                q.spec.columns.len(),
                q.spec.files.len(),
                predicate_note(&q.spec, &r.table)
            );
        }
        let _ = writeln!(
            out,
            "#   store: {}",
            if r.store.name.is_empty() {
                "(inline model)"
            } else {
                &r.store.name
            }
        );
        for n in r
            .notes
            .iter()
            .cloned()
            .chain(r.arms.iter().flat_map(ResolvedArm::inert_settings))
        {
            let _ = writeln!(out, "#   note: {n}");
        }
        for a in &r.arms {
            let _ = writeln!(out, "#   arm {} = {}", a.name, a.strategy_name);
            let changed = a.changed_settings();
            if !changed.is_empty() {
                let _ = writeln!(
                    out,
                    "#     settings that differ from the preset: {}",
                    changed.join(", ")
                );
            }
        }
    }
    Ok(out)
}

/// The cases of a scenario as (name, overrides); one unnamed `default` case when it has none.
pub fn cases(loaded: &LoadedScenario) -> Result<Vec<(String, Vec<Override>)>, ScenarioError> {
    if loaded.file.cases.is_empty() {
        return Ok(vec![("default".to_string(), Vec::new())]);
    }
    let mut out = Vec::new();
    for c in &loaded.file.cases {
        let mut ovs = Vec::new();
        for (k, v) in &c.set {
            let ov = parse_override(&format!("{k}={}", v.0))
                .map(|o| o.at(Layer::Case))
                .map_err(|e| {
                    ScenarioError::at_key(
                        &loaded.path,
                        &loaded.text,
                        k,
                        format!("case {}: {e}", c.name),
                    )
                })?;
            ovs.push(ov);
        }
        out.push((c.name.clone(), ovs));
    }
    Ok(out)
}

/// `, predicate keeps K of N row groups` for a query with a predicate (the row groups of its
/// files whose recorded min/max may match), else nothing.
fn predicate_note(q: &planner::QuerySpec, table: &layout::Table) -> String {
    let Some(p) = &q.predicate else {
        return String::new();
    };
    let groups = q
        .files
        .iter()
        .filter_map(|&f| table.files.get(f as usize))
        .flat_map(|f| &f.row_groups);
    let (mut kept, mut all) = (0usize, 0usize);
    for rg in groups {
        all += 1;
        kept += (rg.num_rows > 0 && p.row_group_may_match(rg)) as usize;
    }
    format!(
        ", predicate `{}` keeps {kept} of their {all} row groups",
        p.text
    )
}
