//! Assembling recorded files into a [`layout::Table`]: schemas deduplicated, provenance set.

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use layout::{FileLayout, IcebergMetadata, Provenance, Schema, Table};

use crate::parquet_file::RecordedFile;

/// Collects files, giving files with the same leaf columns the same [`Schema`].
#[derive(Debug, Default)]
pub(crate) struct TableBuilder {
    schemas: Vec<Schema>,
    schema_ids: BTreeMap<Vec<String>, u32>,
    files: Vec<FileLayout>,
}

impl TableBuilder {
    pub fn add(&mut self, recorded: RecordedFile) {
        let RecordedFile {
            mut layout,
            columns,
            ..
        } = recorded;
        let next = self.schemas.len() as u32;
        let id = *self
            .schema_ids
            .entry(columns)
            .or_insert_with_key(|columns| {
                self.schemas.push(Schema {
                    columns: columns.clone(),
                });
                next
            });
        layout.schema = id;
        self.files.push(layout);
    }

    pub fn finish(self, iceberg: Option<IcebergMetadata>, provenance: Provenance) -> Table {
        Table {
            schemas: self.schemas,
            files: self.files,
            iceberg,
            provenance,
            lazy: None,
        }
    }
}

/// Provenance of a recording made now: this crate's version, the kind of source (`parquet` or
/// `iceberg`) and the paths given. Nothing else about the machine or user is recorded.
pub(crate) fn provenance(kind: &str, sources: Vec<String>) -> Provenance {
    Provenance {
        tool: format!("record {} {kind}", env!("CARGO_PKG_VERSION")),
        created_unix_s: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs()),
        sources,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, columns: &[&str]) -> RecordedFile {
        RecordedFile {
            layout: FileLayout {
                path: path.into(),
                materialized: true,
                ..Default::default()
            },
            columns: columns.iter().map(|c| c.to_string()).collect(),
            field_ids: vec![None; columns.len()],
        }
    }

    #[test]
    fn same_columns_share_a_schema() {
        let mut b = TableBuilder::default();
        b.add(file("a", &["x", "y"]));
        b.add(file("b", &["x", "z"]));
        b.add(file("c", &["x", "y"]));
        let t = b.finish(None, Provenance::default());
        assert_eq!(t.schemas.len(), 2);
        let ids: Vec<u32> = t.files.iter().map(|f| f.schema).collect();
        assert_eq!(ids, [0, 1, 0]);
        assert_eq!(t.schemas[1].columns, ["x", "z"]);
    }

    #[test]
    fn provenance_names_tool_and_sources() {
        let p = provenance("parquet", vec!["data/".into()]);
        assert!(
            p.tool.starts_with("record ") && p.tool.ends_with(" parquet"),
            "{}",
            p.tool
        );
        assert_eq!(p.sources, ["data/"]);
        assert!(p.created_unix_s.is_some_and(|s| s > 1_600_000_000));
    }
}
