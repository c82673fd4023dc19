//! Files whose layout is made when it is needed, not kept.
//!
//! A generated table of 249,200 files x 437 columns would hold 109 M column chunks (8.7 GB) if
//! every file the query touches were kept whole. Such a table instead keeps an *outline* of each
//! touched file ([`FileLayout::outline_of`]: path, size, footer length, schema and the rows of
//! each row group, no chunk) and a [`FileSource`] that makes the full layout of any file again,
//! the same every time (a generated file draws from its own random stream). A reader asks
//! [`Table::layout`] when it opens a file, plans it and drops the layout.
//!
//! Not a clock, a thread or IO: a pure function behind a trait object.

use crate::{FileIndex, FileLayout, LayoutError, RowGroup, Table};
use std::borrow::Cow;
use std::sync::Arc;

/// Makes the full layout of a file whose outline a table holds.
pub trait FileSource: Send + Sync {
    /// The layout of file `index`: the same on every call, and the file the outline outlines.
    fn layout(&self, index: FileIndex) -> Result<FileLayout, String>;
}

/// The source of a table's outlined files. Two tables' sources are equal when they are the
/// same source (a pointer), since a source has no value to compare.
#[derive(Clone)]
pub struct LazyFiles(pub Arc<dyn FileSource>);

impl std::fmt::Debug for LazyFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LazyFiles(..)")
    }
}

impl PartialEq for LazyFiles {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for LazyFiles {}

impl FileLayout {
    /// What a table keeps of a file made again when opened: its path, size, footer length,
    /// schema, and the rows and uncompressed bytes of each row group; no chunk, statistic or
    /// page.
    pub fn outline_of(full: &FileLayout) -> FileLayout {
        FileLayout {
            path: full.path.clone(),
            materialized: false,
            outline: true,
            size_bytes: full.size_bytes,
            footer_len_bytes: full.footer_len_bytes,
            schema: full.schema,
            row_groups: full
                .row_groups
                .iter()
                .map(|rg| RowGroup {
                    outlined_uncompressed_bytes: rg.uncompressed_bytes(),
                    ..RowGroup::new(rg.num_rows, Vec::new())
                })
                .collect(),
            pages: Vec::new(),
        }
    }

    /// A file no query of the run touches: neither its layout nor an outline is here.
    pub fn is_placeholder(&self) -> bool {
        !self.materialized && !self.outline
    }
}

impl Table {
    /// The full layout of file `index`: the one the table holds, or, for an outline, the one
    /// its [`FileSource`] makes now (checked against the outline). `Err` for a file that does
    /// not exist, a placeholder, or an outline without a source.
    pub fn layout(&self, index: FileIndex) -> Result<Cow<'_, FileLayout>, LayoutError> {
        let at = |file: &FileLayout, what: String| LayoutError::Invalid {
            file: file.path.clone(),
            index: index as usize,
            what,
        };
        let Some(file) = self.files.get(index as usize) else {
            return Err(LayoutError::Invalid {
                file: String::new(),
                index: index as usize,
                what: format!("no such file: the table has {} files", self.files.len()),
            });
        };
        if file.materialized {
            return Ok(Cow::Borrowed(file));
        }
        if !file.outline {
            return Err(at(
                file,
                "was not generated: the table was made for other queries' files".into(),
            ));
        }
        let Some(source) = &self.lazy else {
            return Err(at(
                file,
                "is an outline and the table has no source to make it".into(),
            ));
        };
        let full = source.0.layout(index).map_err(|e| at(file, e))?;
        // Invariant: the source makes the file the outline was taken from.
        if FileLayout::outline_of(&full) != *file {
            return Err(at(
                file,
                "the source made a different file than its outline".into(),
            ));
        }
        Ok(Cow::Owned(full))
    }

    /// Files of the table whose layout is here or can be made (not placeholders).
    pub fn laid_out_files(&self) -> impl Iterator<Item = (usize, &FileLayout)> {
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.is_placeholder())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ColumnChunk, Schema};

    fn full(i: u32) -> FileLayout {
        let chunk = ColumnChunk {
            chunk_start: 4,
            data_len: 100 + u64::from(i),
            bloom_filter_offset: crate::NO_BLOOM_FILTER,
            ..Default::default()
        };
        FileLayout {
            path: format!("f{i}"),
            size_bytes: 1000 + u64::from(i),
            footer_len_bytes: 50,
            row_groups: vec![RowGroup::new(10, vec![chunk])],
            ..Default::default()
        }
    }

    struct Source;
    impl FileSource for Source {
        fn layout(&self, index: FileIndex) -> Result<FileLayout, String> {
            Ok(full(index))
        }
    }

    fn table(lazy: bool) -> Table {
        Table {
            schemas: vec![Schema {
                columns: vec!["a".into()],
            }],
            files: vec![
                FileLayout::outline_of(&full(0)),
                FileLayout::placeholder("f1".into()),
                full(2),
            ],
            lazy: lazy.then(|| LazyFiles(Arc::new(Source))),
            ..Default::default()
        }
    }

    #[test]
    fn an_outline_is_made_again_a_held_file_is_borrowed() {
        let t = table(true);
        assert!(matches!(t.layout(0).unwrap(), Cow::Owned(f) if f == full(0)));
        assert!(matches!(t.layout(2).unwrap(), Cow::Borrowed(f) if *f == full(2)));
        let e = t.layout(1).unwrap_err().to_string();
        assert!(e.contains("was not generated"), "{e}");
        assert!(t.layout(3).is_err());
        let e = table(false).layout(0).unwrap_err().to_string();
        assert!(e.contains("no source"), "{e}");
        let laid_out: Vec<usize> = t.laid_out_files().map(|(i, _)| i).collect();
        assert_eq!(laid_out, [0, 2]);
    }

    #[test]
    fn a_source_that_makes_another_file_is_refused() {
        let mut t = table(true);
        t.files[0] = FileLayout::outline_of(&full(7));
        t.files[0].path = "f0".into();
        let e = t.layout(0).unwrap_err().to_string();
        assert!(e.contains("different file"), "{e}");
    }

    #[test]
    fn an_outline_keeps_rows_and_sizes_not_chunks() {
        let o = FileLayout::outline_of(&full(3));
        assert!(o.outline && !o.materialized && !o.is_placeholder());
        assert_eq!((o.size_bytes, o.num_rows()), (1003, 10));
        assert_eq!(
            o.row_groups[0].uncompressed_bytes(),
            full(3).row_groups[0].uncompressed_bytes()
        );
        assert!(o.row_groups[0].columns.is_empty());
    }
}
