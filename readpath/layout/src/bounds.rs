//! The bounds of `limits` that a table must keep before the read path plans over it: counts
//! and sizes read from a layout file or a recording are refused past them, and every sum over
//! the table is checked, so the read path's own arithmetic on them cannot overflow.

use limits::{
    MAX_COLUMNS_PER_SCHEMA, MAX_FILES_PER_TABLE, MAX_OBJECT_BYTES, MAX_ROWS_PER_ROW_GROUP,
    MAX_ROW_GROUPS_PER_FILE, MAX_TABLE_TOTAL, MAX_UNCOMPRESSED_BYTES_PER_CHUNK,
};

use crate::{FileLayout, LayoutError, Table};

/// `what` is `value`, past `bound` (the constant `name` of `limits`).
fn past(at: String, what: &str, value: u64, name: &str, bound: u64) -> LayoutError {
    LayoutError::Bound {
        at,
        what: what.to_string(),
        value,
        name: name.to_string(),
        bound,
    }
}

/// Sums over the table, each kept at or below [`MAX_TABLE_TOTAL`].
#[derive(Default)]
struct Totals {
    rows: u64,
    stored_bytes: u64,
    uncompressed_bytes: u64,
}

impl Totals {
    /// Inlined, its error apart: it runs once per column chunk (a call returning the error by
    /// value was 3% of `many-small-files`).
    #[inline]
    fn add(at: &str, what: &str, sum: &mut u64, value: u64) -> Result<(), LayoutError> {
        match sum.checked_add(value) {
            Some(s) if s <= MAX_TABLE_TOTAL => {
                *sum = s;
                Ok(())
            }
            _ => Err(Self::past_total(at, what, sum.saturating_add(value))),
        }
    }

    #[cold]
    #[inline(never)]
    fn past_total(at: &str, what: &str, total: u64) -> LayoutError {
        past(
            at.to_string(),
            &format!("the table's {what}"),
            total,
            "MAX_TABLE_TOTAL",
            MAX_TABLE_TOTAL,
        )
    }
}

/// The table's own counts: files and columns per schema.
pub(crate) fn check_table(table: &Table) -> Result<(), LayoutError> {
    let files = table.files.len() as u64;
    if files > MAX_FILES_PER_TABLE {
        let at = "the table".to_string();
        return Err(past(
            at,
            "files",
            files,
            "MAX_FILES_PER_TABLE",
            MAX_FILES_PER_TABLE,
        ));
    }
    for (si, s) in table.schemas.iter().enumerate() {
        let n = s.columns.len() as u64;
        if n > MAX_COLUMNS_PER_SCHEMA {
            let at = format!("schema {si}");
            return Err(past(
                at,
                "columns",
                n,
                "MAX_COLUMNS_PER_SCHEMA",
                MAX_COLUMNS_PER_SCHEMA,
            ));
        }
    }
    Ok(())
}

/// The bounds of a table's files, checked one file at a time, with the sums over all of them:
/// [`Table::validate`] runs it over the files it holds, and a builder that keeps only outlines
/// runs it over each full file as it makes it.
#[derive(Default)]
pub struct FileBounds {
    totals: Totals,
}

impl FileBounds {
    /// Checks file `fi`'s full layout and adds it to the table's sums.
    pub fn check(&mut self, fi: usize, file: &FileLayout) -> Result<(), LayoutError> {
        let totals = &mut self.totals;
        let at = format!("file {fi} ({})", file.path);
        if file.size_bytes > MAX_OBJECT_BYTES {
            let (v, b) = (file.size_bytes, MAX_OBJECT_BYTES);
            return Err(past(at, "bytes", v, "MAX_OBJECT_BYTES", b));
        }
        let rgs = file.row_groups.len() as u64;
        if rgs > MAX_ROW_GROUPS_PER_FILE {
            let b = MAX_ROW_GROUPS_PER_FILE;
            return Err(past(at, "row groups", rgs, "MAX_ROW_GROUPS_PER_FILE", b));
        }
        Totals::add(
            &at,
            "stored bytes",
            &mut totals.stored_bytes,
            file.size_bytes,
        )?;
        for (gi, rg) in file.row_groups.iter().enumerate() {
            if rg.num_rows > MAX_ROWS_PER_ROW_GROUP {
                let at = format!("{at}, row group {gi}");
                let (v, b) = (rg.num_rows, MAX_ROWS_PER_ROW_GROUP);
                return Err(past(at, "rows stated", v, "MAX_ROWS_PER_ROW_GROUP", b));
            }
            Totals::add(&at, "row count", &mut totals.rows, rg.num_rows)?;
            for (ci, c) in rg.columns.iter().enumerate() {
                if c.uncompressed_bytes > MAX_UNCOMPRESSED_BYTES_PER_CHUNK {
                    let at = format!("{at}, row group {gi} column {ci}");
                    let (v, b) = (c.uncompressed_bytes, MAX_UNCOMPRESSED_BYTES_PER_CHUNK);
                    let name = "MAX_UNCOMPRESSED_BYTES_PER_CHUNK";
                    return Err(past(at, "uncompressed bytes", v, name, b));
                }
                let sum = &mut totals.uncompressed_bytes;
                Totals::add(&at, "uncompressed bytes", sum, c.uncompressed_bytes)?;
            }
        }
        Ok(())
    }
}

/// The table's counts and every file it holds whole (the tests' entry point).
#[cfg(test)]
fn check(table: &Table) -> Result<(), LayoutError> {
    check_table(table)?;
    let mut files = FileBounds::default();
    for (fi, file) in table.files.iter().enumerate() {
        files.check(fi, file)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ColumnChunk, FileLayout, RowGroup, Schema};

    fn table(rows: u64, uncompressed: u64, files: usize) -> Table {
        let file = FileLayout {
            path: "f".into(),
            size_bytes: 1000,
            footer_len_bytes: 10,
            row_groups: vec![RowGroup::new(
                rows,
                vec![ColumnChunk {
                    chunk_start: 4,
                    data_len: 100,
                    uncompressed_bytes: uncompressed,
                    ..ColumnChunk::default()
                }],
            )],
            ..FileLayout::default()
        };
        Table {
            schemas: vec![Schema::default()],
            files: vec![file; files],
            ..Table::default()
        }
    }

    #[test]
    fn a_row_group_past_the_row_bound_is_refused_by_name() {
        assert_eq!(check(&table(MAX_ROWS_PER_ROW_GROUP, 10, 1)), Ok(()));
        let e = check(&table(1_000_000_000_000, 10, 1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("MAX_ROWS_PER_ROW_GROUP"), "{e}");
        assert!(e.contains("1000000000000"), "{e}");
        assert!(e.contains("row group 0"), "{e}");
    }

    #[test]
    fn sums_over_the_table_are_checked() {
        // Each file is inside its own bound; the sum over 2^18 of them is not.
        let mut t = table(1, 10, 1 << 18);
        for f in &mut t.files {
            f.size_bytes = MAX_OBJECT_BYTES;
            f.row_groups.clear();
        }
        let e = check(&t).unwrap_err().to_string();
        assert!(e.contains("MAX_TABLE_TOTAL"), "{e}");
        assert!(e.contains("stored bytes"), "{e}");
        t.files.truncate(1 << 17);
        assert_eq!(check(&t), Ok(()));
        let e = check(&table(1, MAX_UNCOMPRESSED_BYTES_PER_CHUNK + 1, 1)).unwrap_err();
        assert!(
            e.to_string().contains("MAX_UNCOMPRESSED_BYTES_PER_CHUNK"),
            "{e}"
        );
    }
}
