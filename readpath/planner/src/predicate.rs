//! A query's predicate as row-group pruning sees it: a conjunction of comparisons of one column
//! with literals, evaluated against each row group's recorded min/max ([`layout::MinMax`]).
//!
//! The rule is the one every reader applies to footer statistics (arrow-rs
//! `PruningPredicate`, Arrow C++ `ParquetFileFragment` statistics expressions, DuckDB
//! `ParquetReader::PrepareRowGroupBuffer` with table filters, ClickHouse
//! `input_format_parquet_filter_push_down`): a row group is skipped when some term cannot hold
//! for any value between its min and max. A row group without statistics for a term's column,
//! or with statistics of another kind than the literal, is kept: nothing proves it empty.
//!
//! Literals are already of the column's kind (see `scenario::predicate`, which parses text).

use layout::{MinMax, RowGroup, StatValue};
use std::cmp::Ordering;

/// A comparison operator between a column and a literal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl CmpOp {
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "=",
            CmpOp::Ge => ">=",
            CmpOp::Gt => ">",
        }
    }
}

/// One term of the conjunction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// `column op value`.
    Compare {
        column: u32,
        op: CmpOp,
        value: StatValue,
    },
    /// `column IN (values)`: at least one value.
    In { column: u32, values: Vec<StatValue> },
}

impl Term {
    pub fn column(&self) -> u32 {
        match self {
            Term::Compare { column, .. } | Term::In { column, .. } => *column,
        }
    }

    /// Whether some value in `[mm.min, mm.max]` could satisfy this term.
    pub fn may_hold(&self, mm: &MinMax) -> bool {
        match self {
            Term::Compare { op, value, .. } => compare_may_hold(*op, value, mm),
            Term::In { values, .. } => values.iter().any(|v| compare_may_hold(CmpOp::Eq, v, mm)),
        }
    }
}

/// `x op value` for some `x` in `[min, max]`; `true` when the kinds do not compare.
fn compare_may_hold(op: CmpOp, value: &StatValue, mm: &MinMax) -> bool {
    let (Some(min_vs), Some(max_vs)) = (mm.min.compare(value), mm.max.compare(value)) else {
        return true;
    };
    match op {
        CmpOp::Lt => min_vs == Ordering::Less,
        CmpOp::Le => min_vs != Ordering::Greater,
        CmpOp::Eq => min_vs != Ordering::Greater && max_vs != Ordering::Less,
        CmpOp::Ge => max_vs != Ordering::Less,
        CmpOp::Gt => max_vs == Ordering::Greater,
    }
}

/// All terms must hold (an empty predicate keeps everything).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Predicate {
    pub terms: Vec<Term>,
    /// The predicate as written, for reports.
    pub text: String,
}

impl Predicate {
    /// The columns the terms name, sorted, once each.
    pub fn columns(&self) -> Vec<u32> {
        let mut c: Vec<u32> = self.terms.iter().map(Term::column).collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// Whether the row group may hold a matching row, judged by its recorded min/max.
    pub fn row_group_may_match(&self, rg: &RowGroup) -> bool {
        self.terms.iter().all(|t| match rg.stats(t.column()) {
            Some(mm) => t.may_hold(mm),
            None => true,
        })
    }

    /// Whether any of the file's row groups may match: an Iceberg scan plans only such files
    /// (its manifest's column bounds are the union of the row groups' min/max).
    pub fn file_may_match(&self, file: &layout::FileLayout) -> bool {
        file.row_groups
            .iter()
            .any(|rg| rg.num_rows > 0 && self.row_group_may_match(rg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::ColumnChunk;

    fn rg(min: i32, max: i32) -> RowGroup {
        RowGroup {
            num_rows: 10,
            outlined_uncompressed_bytes: 0,
            columns: vec![ColumnChunk::default(), ColumnChunk::default()],
            statistics: vec![
                None,
                MinMax::new(StatValue::Date(min), StatValue::Date(max)),
            ],
        }
    }

    fn cmp(op: CmpOp, v: i32) -> Predicate {
        Predicate {
            terms: vec![Term::Compare {
                column: 1,
                op,
                value: StatValue::Date(v),
            }],
            text: String::new(),
        }
    }

    #[test]
    fn each_operator_prunes_exactly_the_row_groups_outside_it() {
        let g = rg(10, 20);
        let cases = [
            (CmpOp::Lt, 10, false),
            (CmpOp::Lt, 11, true),
            (CmpOp::Le, 10, true),
            (CmpOp::Le, 9, false),
            (CmpOp::Eq, 20, true),
            (CmpOp::Eq, 21, false),
            (CmpOp::Eq, 9, false),
            (CmpOp::Ge, 20, true),
            (CmpOp::Ge, 21, false),
            (CmpOp::Gt, 20, false),
            (CmpOp::Gt, 19, true),
        ];
        for (op, v, keep) in cases {
            assert_eq!(
                cmp(op, v).row_group_may_match(&g),
                keep,
                "x {} {v}",
                op.symbol()
            );
        }
    }

    #[test]
    fn in_lists_and_conjunctions() {
        let g = rg(10, 20);
        let inlist = |vs: &[i32]| Predicate {
            terms: vec![Term::In {
                column: 1,
                values: vs.iter().map(|&v| StatValue::Date(v)).collect(),
            }],
            text: String::new(),
        };
        assert!(!inlist(&[1, 25]).row_group_may_match(&g));
        assert!(inlist(&[1, 15]).row_group_may_match(&g));
        // Terms are judged one by one, as readers judge them: `15 <= x < 12` holds for no x,
        // but each term alone may hold in [10, 20], so the row group is kept.
        let mut both = cmp(CmpOp::Ge, 15);
        both.terms.extend(cmp(CmpOp::Lt, 12).terms);
        assert!(both.row_group_may_match(&g));
        // One term that cannot hold prunes the row group.
        let mut one_out = cmp(CmpOp::Ge, 15);
        one_out.terms.extend(cmp(CmpOp::Lt, 5).terms);
        assert!(!one_out.row_group_may_match(&g));
    }

    #[test]
    fn missing_or_mismatched_statistics_keep_the_row_group() {
        let mut g = rg(10, 20);
        let on_column_0 = Predicate {
            terms: vec![Term::Compare {
                column: 0,
                op: CmpOp::Lt,
                value: StatValue::Int(0),
            }],
            text: String::new(),
        };
        assert!(
            on_column_0.row_group_may_match(&g),
            "column 0 has no statistics"
        );
        let int_literal = Predicate {
            terms: vec![Term::Compare {
                column: 1,
                op: CmpOp::Lt,
                value: StatValue::Int(0),
            }],
            text: String::new(),
        };
        assert!(
            int_literal.row_group_may_match(&g),
            "a date does not compare with an int"
        );
        g.statistics.clear();
        assert!(cmp(CmpOp::Lt, 0).row_group_may_match(&g));
    }
}
