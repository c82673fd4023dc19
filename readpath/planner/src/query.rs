//! What a query asks of the read path: columns, filters and their selectivity, files, and the
//! cache state the reader sees.

use std::borrow::Cow;
use std::sync::Arc;

use layout::{FileIndex, FileLayout, Table};

use crate::error::PlanError;
use crate::plan::{SUBGROUP_MAX_ROWS, SUBGROUP_TARGET_BYTES};
use crate::predicate::Predicate;

/// The query one [`crate::Reader`] runs. Fractions are in `0..=1`; decisions drawn from them
/// use a pure hash of `seed`, file, row group and slice (never event order).
#[derive(Clone, Debug, PartialEq)]
pub struct QuerySpec {
    /// Columns the query outputs (schema indexes).
    pub columns: Vec<u32>,
    /// Files read, in order (the driver picks the slice).
    pub files: Vec<FileIndex>,
    /// Fraction of row groups surviving min/max pruning (a seeded draw; for generated tables).
    pub row_group_keep_fraction: f64,
    /// A predicate judged against each row group's recorded min/max (recorded tables); with
    /// one, `row_group_keep_fraction` must be 1.
    pub predicate: Option<Arc<Predicate>>,
    /// PREWHERE columns: read and evaluated first, per row subgroup.
    pub prewhere_columns: Vec<u32>,
    /// Fraction of rows passing PREWHERE (passing rows come in clusters of 1/64 row group).
    pub prewhere_selectivity: f64,
    /// Columns with a pushdown condition: their column index is read and prunes pages.
    pub column_index_columns: Vec<u32>,
    /// Fraction of rows surviving column-index (page min/max) pruning.
    pub page_keep_fraction: f64,
    /// Columns whose bloom filter a condition probes.
    pub bloom_columns: Vec<u32>,
    /// Fraction of row groups (having a bloom filter) dropped by it.
    pub bloom_drop_fraction: f64,
    /// Hash probes per row group and bloom column; each reads one 32-byte block.
    pub bloom_probes: u32,
    /// Parquet metadata cache warm: no footer reads.
    pub parquet_metadata_cache_warm: bool,
    /// Iceberg metadata cache warm: no metadata phase.
    pub iceberg_metadata_cache_warm: bool,
    /// Seed of the pruning decisions.
    pub seed: u64,
}

impl QuerySpec {
    /// A plain scan of `columns` over `files`: nothing pruned, caches cold.
    pub fn new(columns: Vec<u32>, files: Vec<FileIndex>) -> QuerySpec {
        QuerySpec {
            columns,
            files,
            row_group_keep_fraction: 1.0,
            predicate: None,
            prewhere_columns: Vec::new(),
            prewhere_selectivity: 1.0,
            column_index_columns: Vec::new(),
            page_keep_fraction: 1.0,
            bloom_columns: Vec::new(),
            bloom_drop_fraction: 0.0,
            bloom_probes: 1,
            parquet_metadata_cache_warm: false,
            iceberg_metadata_cache_warm: false,
            seed: 0,
        }
    }

    /// Checks fractions, files and columns against `table`; the error names the field and
    /// says what would be valid.
    pub fn validate(&self, table: &Table) -> Result<(), PlanError> {
        let fractions = [
            ("row_group_keep_fraction", self.row_group_keep_fraction),
            ("prewhere_selectivity", self.prewhere_selectivity),
            ("page_keep_fraction", self.page_keep_fraction),
            ("bloom_drop_fraction", self.bloom_drop_fraction),
        ];
        for (name, v) in fractions {
            if !(0.0..=1.0).contains(&v) {
                return Err(PlanError::Query(format!(
                    "{name} = {v} is not a fraction; expected a number between 0 and 1"
                )));
            }
        }
        if self.bloom_probes > limits::MAX_BLOOM_PROBES {
            return Err(PlanError::Query(format!(
                "bloom_probes = {}, past the bound of {} (limits::MAX_BLOOM_PROBES)",
                self.bloom_probes,
                limits::MAX_BLOOM_PROBES
            )));
        }
        if self.columns.is_empty() && self.prewhere_columns.is_empty() {
            return Err(PlanError::Query(
                "no columns selected; name at least one column".into(),
            ));
        }
        let n_files = table.files.len();
        for &f in &self.files {
            let Some(file) = table.files.get(f as usize) else {
                return Err(PlanError::Query(format!(
                    "file {f} does not exist: the table has {n_files} files (0..{})",
                    n_files.saturating_sub(1)
                )));
            };
            if file.is_placeholder() {
                return Err(PlanError::Query(format!(
                    "file {f} ({}) was not generated: the table was made for other queries' files",
                    file.path
                )));
            }
        }
        // Columns index the table's columns; a file written before a column was added does
        // not hold it and reads nothing for it (an Iceberg reader fills it with nulls).
        let width = table
            .columns()
            .map_err(|e| PlanError::Query(format!("the table's columns: {e}")))?
            .columns
            .len();
        if self.predicate.is_some() && self.row_group_keep_fraction != 1.0 {
            return Err(PlanError::Query(format!(
                "row_group_keep_fraction = {} with a predicate: the predicate decides which row \
                 groups survive; drop one of the two",
                self.row_group_keep_fraction
            )));
        }
        let predicate_columns = self
            .predicate
            .as_ref()
            .map(|p| p.columns())
            .unwrap_or_default();
        let lists = [
            ("predicate", &predicate_columns),
            ("columns", &self.columns),
            ("prewhere_columns", &self.prewhere_columns),
            ("column_index_columns", &self.column_index_columns),
            ("bloom_columns", &self.bloom_columns),
        ];
        for (name, list) in lists {
            if let Some(c) = list.iter().find(|c| **c as usize >= width) {
                return Err(PlanError::Query(format!(
                    "{name}: column {c} does not exist: the table has {width} columns (0..{})",
                    width.saturating_sub(1)
                )));
            }
        }
        self.check_subgroup_bound(table)
    }

    /// The row subgroups this query could plan stay within
    /// [`limits::MAX_ROW_SUBGROUPS_PER_QUERY`]: counted from rows (at most
    /// [`SUBGROUP_MAX_ROWS`] a subgroup) and the read columns' uncompressed bytes
    /// ([`SUBGROUP_TARGET_BYTES`] a subgroup), an upper bound on what `plan_file` builds: it
    /// cuts subgroups by the bytes per row of the columns it reads (`columns` and
    /// `prewhere_columns`), and only those. Summing the read columns, not all of a row
    /// group's, keeps this check off the profile of wide tables (437 columns, 5 read).
    ///
    /// An outlined file's row group counts all its columns' bytes (what the outline keeps), a
    /// count at least the exact one: when that passes, the exact count does, and no file is
    /// made again. Only past the bound is the count made exact (each outline made again), so
    /// the answer and its message are the same whether the table keeps files whole or not.
    fn check_subgroup_bound(&self, table: &Table) -> Result<(), PlanError> {
        let mut read_columns: Vec<u32> = self.columns.clone();
        read_columns.extend_from_slice(&self.prewhere_columns);
        read_columns.sort_unstable();
        read_columns.dedup();
        let held = |f: FileIndex| -> Result<Cow<'_, FileLayout>, PlanError> {
            let file = table.files.get(f as usize);
            Ok(Cow::Borrowed(file.ok_or_else(|| {
                PlanError::Query(format!("file {f} does not exist"))
            })?))
        };
        if self.count_subgroups(&read_columns, held).is_ok() {
            return Ok(());
        }
        self.count_subgroups(&read_columns, |f| {
            table
                .layout(f)
                .map_err(|e| PlanError::Query(format!("file {f}: {e}")))
        })
    }

    /// Counts the subgroups of the query's files as `file` gives them; `Err` at the first file
    /// past the bound.
    fn count_subgroups<'t>(
        &self,
        read_columns: &[u32],
        file: impl Fn(FileIndex) -> Result<Cow<'t, FileLayout>, PlanError>,
    ) -> Result<(), PlanError> {
        let bound = limits::MAX_ROW_SUBGROUPS_PER_QUERY;
        let mut subgroups: u64 = 0;
        for &f in &self.files {
            let file = file(f)?;
            for rg in &file.row_groups {
                let by_rows = rg.num_rows.div_ceil(SUBGROUP_MAX_ROWS);
                let read_bytes: u64 = read_columns
                    .iter()
                    .filter_map(|&c| rg.columns.get(c as usize))
                    .map(|ch| ch.uncompressed_bytes)
                    .sum::<u64>()
                    + rg.outlined_uncompressed_bytes;
                let by_bytes = read_bytes.div_ceil(SUBGROUP_TARGET_BYTES);
                subgroups = subgroups.saturating_add(by_rows + by_bytes + 1);
            }
            if subgroups > bound {
                return Err(PlanError::Query(format!(
                    "the query's files up to file {f} ({}) hold up to {subgroups} row subgroups, \
                     past the bound of {bound} (limits::MAX_ROW_SUBGROUPS_PER_QUERY, \
                     docs/bounds.md); query fewer files",
                    file.path
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{table, TableShape};

    /// The subgroup bound counts the bytes of the columns the query reads: a huge column the
    /// query does not read cannot refuse it, and reading it does.
    #[test]
    fn the_subgroup_bound_counts_the_read_columns_only() {
        let mut t = table(&TableShape {
            row_groups: 1,
            columns: 3,
            ..TableShape::default()
        });
        // About 2^21 subgroups' worth of bytes in column 2.
        t.files[0].row_groups[0].columns[2].uncompressed_bytes = SUBGROUP_TARGET_BYTES << 21;
        assert!(QuerySpec::new(vec![0, 1], vec![0]).validate(&t).is_ok());
        let err = QuerySpec::new(vec![0, 2], vec![0])
            .validate(&t)
            .unwrap_err()
            .to_string();
        assert!(err.contains("MAX_ROW_SUBGROUPS_PER_QUERY"), "{err}");
        let mut prewhere = QuerySpec::new(vec![0], vec![0]);
        prewhere.prewhere_columns = vec![2];
        assert!(prewhere.validate(&t).is_err());

        // Outlined, the file's upper bound (every column) is past the bound, so the count is
        // made exact from the file made again: the same answers, the same message.
        struct Again(layout::FileLayout);
        impl layout::FileSource for Again {
            fn layout(&self, _: FileIndex) -> Result<layout::FileLayout, String> {
                Ok(self.0.clone())
            }
        }
        let mut outlined = t.clone();
        outlined.files[0] = FileLayout::outline_of(&t.files[0]);
        outlined.lazy = Some(layout::LazyFiles(Arc::new(Again(t.files[0].clone()))));
        assert!(QuerySpec::new(vec![0, 1], vec![0])
            .validate(&outlined)
            .is_ok());
        let outlined_err = QuerySpec::new(vec![0, 2], vec![0])
            .validate(&outlined)
            .unwrap_err()
            .to_string();
        assert_eq!(outlined_err, err);
    }
}
