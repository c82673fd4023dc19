//! Finding the local file an Iceberg path names.
//!
//! Iceberg metadata stores absolute URIs (`file:///tmp/warehouse/db/t/data/x.parquet`). A table
//! copied elsewhere (into a repository's test data, say) keeps those stale paths, so the rule is:
//!
//! 1. strip a `file:` scheme (`file:///a` and `file:/a` both mean `/a`);
//! 2. if that absolute path exists, use it;
//! 3. else, if the path starts with the table's `location` (scheme stripped the same way), take
//!    the rest and resolve it against the table directory, which is the directory above the one
//!    that holds the metadata JSON (Iceberg keeps it in `<table>/metadata/`);
//! 4. else fail, naming every path tried.

use std::path::{Path, PathBuf};

use crate::error::RecordError;

/// How to resolve the paths of one table.
#[derive(Debug, Clone)]
pub(crate) struct Resolver {
    /// `location` from the metadata JSON, scheme stripped, no trailing '/'.
    location: String,
    table_dir: PathBuf,
}

impl Resolver {
    pub fn new(location: &str, metadata_json: &Path) -> Self {
        let table_dir = metadata_json
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Resolver {
            location: strip_scheme(location).trim_end_matches('/').to_string(),
            table_dir,
        }
    }

    /// The path relative to the table location (`data/x.parquet`), or the whole path when it
    /// lies elsewhere: what a layout records.
    pub fn relative<'a>(&self, referenced: &'a str) -> &'a str {
        let path = strip_scheme(referenced);
        path.strip_prefix(self.location.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|rest| !rest.is_empty())
            .unwrap_or(path)
    }

    /// The local file `referenced` (found in `listed_in`) names; see the module doc.
    pub fn resolve(&self, referenced: &str, listed_in: &Path) -> Result<PathBuf, RecordError> {
        let absolute = PathBuf::from(strip_scheme(referenced));
        if absolute.is_file() {
            return Ok(absolute);
        }
        let mut tried = vec![absolute];
        let relative = self.relative(referenced);
        if relative != strip_scheme(referenced) {
            let candidate = self.table_dir.join(relative);
            if candidate.is_file() {
                return Ok(candidate);
            }
            tried.push(candidate);
        }
        Err(RecordError::Unresolved {
            referenced: referenced.to_string(),
            listed_in: listed_in.to_path_buf(),
            tried,
        })
    }
}

/// `file:///a/b` and `file:/a/b` -> `/a/b`; anything else unchanged.
fn strip_scheme(uri: &str) -> &str {
    if let Some(rest) = uri.strip_prefix("file://") {
        rest
    } else if let Some(rest) = uri.strip_prefix("file:") {
        rest
    } else {
        uri
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_file_scheme() {
        assert_eq!(strip_scheme("file:///a/b"), "/a/b");
        assert_eq!(strip_scheme("file:/a/b"), "/a/b");
        assert_eq!(strip_scheme("/a/b"), "/a/b");
        assert_eq!(strip_scheme("s3://bucket/k"), "s3://bucket/k");
    }

    #[test]
    fn relative_to_location() {
        let r = Resolver::new(
            "file:///tmp/wh/t/",
            Path::new("/x/t/metadata/v1.metadata.json"),
        );
        assert_eq!(
            r.relative("file:///tmp/wh/t/data/a.parquet"),
            "data/a.parquet"
        );
        assert_eq!(
            r.relative("file:///tmp/wh/tt/data/a.parquet"),
            "/tmp/wh/tt/data/a.parquet"
        );
    }

    #[test]
    fn resolves_moved_table_and_names_tries() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        std::fs::create_dir_all(table.join("data")).unwrap();
        std::fs::create_dir_all(table.join("metadata")).unwrap();
        std::fs::write(table.join("data/a.parquet"), b"x").unwrap();
        let meta = table.join("metadata/v1.metadata.json");
        let r = Resolver::new("file:///nowhere/t", &meta);
        let got = r
            .resolve("file:///nowhere/t/data/a.parquet", &meta)
            .unwrap();
        assert_eq!(got, table.join("data/a.parquet"));

        let err = r
            .resolve("file:///nowhere/t/data/b.parquet", &meta)
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/nowhere/t/data/b.parquet") && text.contains("v1.metadata.json"));
        assert!(
            text.contains(&table.join("data/b.parquet").display().to_string()),
            "{text}"
        );
    }
}
