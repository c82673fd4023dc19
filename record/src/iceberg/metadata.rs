//! The parts of an Iceberg table metadata JSON this recorder follows (the rest is ignored).

use serde::Deserialize;

/// Table metadata, format versions 1 to 3.
#[derive(Debug, Deserialize)]
pub(crate) struct TableMetadata {
    #[serde(rename = "format-version")]
    pub format_version: i64,
    /// Where the table lives; data and metadata paths usually start with it.
    pub location: String,
    /// Absent, null or -1 when the table has no snapshot yet.
    #[serde(rename = "current-snapshot-id", default)]
    pub current_snapshot_id: Option<i64>,
    #[serde(default)]
    pub snapshots: Vec<Snapshot>,
}

#[derive(Debug, Deserialize)]
pub(crate) struct Snapshot {
    #[serde(rename = "snapshot-id")]
    pub snapshot_id: i64,
    /// The manifest list (format v2 and later, and most v1 writers).
    #[serde(rename = "manifest-list", default)]
    pub manifest_list: Option<String>,
    /// Format v1 may list manifests inline instead of a manifest list.
    #[serde(default)]
    pub manifests: Option<Vec<String>>,
}

impl TableMetadata {
    /// The current snapshot, `Ok(None)` for a table without one, or an error naming the id
    /// that no snapshot carries.
    pub fn current_snapshot(&self) -> Result<Option<&Snapshot>, String> {
        match self.current_snapshot_id {
            None | Some(-1) => Ok(None),
            Some(id) => self
                .snapshots
                .iter()
                .find(|s| s.snapshot_id == id)
                .map(Some)
                .ok_or_else(|| {
                    format!("current-snapshot-id {id} names no snapshot in \"snapshots\"")
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_current_snapshot() {
        let m: TableMetadata = serde_json::from_str(
            r#"{"format-version": 2, "location": "file:///t", "current-snapshot-id": 7,
                "snapshots": [{"snapshot-id": 5, "manifest-list": "a.avro"},
                              {"snapshot-id": 7, "manifest-list": "b.avro"}], "other": 1}"#,
        )
        .unwrap();
        let s = m.current_snapshot().unwrap().unwrap();
        assert_eq!(s.manifest_list.as_deref(), Some("b.avro"));
    }

    #[test]
    fn no_snapshot_and_dangling_id() {
        let m: TableMetadata = serde_json::from_str(
            r#"{"format-version": 2, "location": "x", "current-snapshot-id": -1}"#,
        )
        .unwrap();
        assert!(m.current_snapshot().unwrap().is_none());
        let m: TableMetadata = serde_json::from_str(
            r#"{"format-version": 2, "location": "x", "current-snapshot-id": 3}"#,
        )
        .unwrap();
        assert!(m
            .current_snapshot()
            .unwrap_err()
            .contains("current-snapshot-id 3"));
    }
}
