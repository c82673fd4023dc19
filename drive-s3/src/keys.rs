//! Object keys: data file `i` of the table is the object whose key is the file's recorded path
//! (`FileLayout::path`, relative to the table's location, as `sim record` stores it) under an
//! optional prefix.

use layout::Table;
use object_store::path::Path;

/// A file path that cannot be an object key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "data file {file} has the path `{path}`, which is not a valid object key ({why}); keys are \
     '/'-separated segments with no empty, `.` or `..` segment: re-record the layout from files \
     whose relative paths are plain names"
)]
pub struct KeyError {
    /// Index of the file in the table.
    pub file: usize,
    /// Its recorded path (with the prefix).
    pub path: String,
    /// What `object_store` said.
    pub why: String,
}

/// The key of a file whose recorded path is `file_path`, under `prefix` (may be empty; one '/'
/// joins them whatever slashes either side carries).
pub fn object_key(prefix: &str, file_path: &str) -> String {
    let prefix = prefix.trim_matches('/');
    let file_path = file_path.trim_start_matches('/');
    if prefix.is_empty() {
        file_path.to_string()
    } else {
        format!("{prefix}/{file_path}")
    }
}

/// The object paths of every data file of `table`, by file index.
pub fn table_keys(table: &Table, prefix: &str) -> Result<Vec<Path>, KeyError> {
    table
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let key = object_key(prefix, &f.path);
            // `parse` keeps the key as written (no percent-encoding) and refuses bad segments.
            Path::parse(&key).map_err(|e| KeyError {
                file: i,
                path: key.clone(),
                why: e.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_joins_with_one_slash() {
        assert_eq!(object_key("", "a/b.parquet"), "a/b.parquet");
        assert_eq!(object_key("data", "b.parquet"), "data/b.parquet");
        assert_eq!(object_key("/data/", "/b.parquet"), "data/b.parquet");
    }

    #[test]
    fn bad_paths_are_refused_with_the_file_named() {
        let mut t = Table::default();
        t.files.push(layout::FileLayout {
            path: "ok.parquet".into(),
            materialized: true,
            ..Default::default()
        });
        t.files.push(layout::FileLayout {
            path: "x/../y.parquet".into(),
            materialized: true,
            ..Default::default()
        });
        let e = table_keys(&t, "p").unwrap_err();
        assert_eq!(e.file, 1);
        assert!(e.to_string().contains("p/x/../y.parquet"), "{e}");
        t.files.truncate(1);
        let ok = table_keys(&t, "p").unwrap();
        assert_eq!(ok[0].as_ref(), "p/ok.parquet");
    }
}
