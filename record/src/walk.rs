//! Expanding the paths a user gives into the Parquet files to record, in a deterministic order.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::RecordError;

/// A file to record and the path its layout will carry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    pub file: PathBuf,
    pub layout_path: String,
}

/// Files named directly are taken whatever their extension and keep their file name; directories
/// are walked recursively for `*.parquet` (entries sorted by name, symlinked directories not
/// followed so that a cycle cannot loop) and keep the path relative to the directory given.
/// Arguments keep their order. Should two targets end up with the same layout path, every
/// target keeps the full path as given instead, so that no two files are confused.
pub(crate) fn expand(paths: &[PathBuf]) -> Result<Vec<Target>, RecordError> {
    let mut targets = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| RecordError::io(path, e))?;
        if meta.is_dir() {
            walk_dir(path, path, &mut targets)?;
        } else {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            targets.push(Target {
                file: path.clone(),
                layout_path: name,
            });
        }
    }
    let mut seen = BTreeSet::new();
    let unique = targets.iter().all(|t| seen.insert(t.layout_path.as_str()));
    if !unique {
        for t in &mut targets {
            t.layout_path = t.file.display().to_string();
        }
    }
    Ok(targets)
}

fn walk_dir(root: &Path, dir: &Path, out: &mut Vec<Target>) -> Result<(), RecordError> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| RecordError::io(dir, e))? {
        let entry = entry.map_err(|e| RecordError::io(dir, e))?;
        entries.push(entry.path());
    }
    entries.sort();
    for path in entries {
        let link_meta = std::fs::symlink_metadata(&path).map_err(|e| RecordError::io(&path, e))?;
        if link_meta.is_dir() {
            walk_dir(root, &path, out)?;
        } else if is_parquet_name(&path) && path.is_file() {
            let relative = path.strip_prefix(root).unwrap_or(&path);
            let layout_path = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push(Target {
                file: path.clone(),
                layout_path,
            });
        }
    }
    Ok(())
}

fn is_parquet_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"x").unwrap();
    }

    #[test]
    fn walks_sorted_and_relative() {
        let dir = tempfile::tempdir().unwrap();
        touch(&dir.path().join("b.parquet"));
        touch(&dir.path().join("a/z.parquet"));
        touch(&dir.path().join("a/readme.txt"));
        touch(&dir.path().join("c.PARQUET"));
        let got = expand(&[dir.path().to_path_buf()]).unwrap();
        let names: Vec<_> = got.iter().map(|t| t.layout_path.as_str()).collect();
        assert_eq!(names, ["a/z.parquet", "b.parquet", "c.PARQUET"]);
    }

    #[test]
    fn named_files_keep_their_name_whatever_the_extension() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("data.bin");
        touch(&f);
        let got = expand(std::slice::from_ref(&f)).unwrap();
        assert_eq!(
            got,
            [Target {
                file: f,
                layout_path: "data.bin".into()
            }]
        );
    }

    #[test]
    fn duplicate_names_fall_back_to_full_paths() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("x/t.parquet");
        let b = dir.path().join("y/t.parquet");
        touch(&a);
        touch(&b);
        let got = expand(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(got[0].layout_path, a.display().to_string());
        assert_eq!(got[1].layout_path, b.display().to_string());
    }

    #[test]
    fn missing_path_is_an_error_naming_it() {
        let err = expand(&[PathBuf::from("/nonexistent/for/sure")]).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/for/sure"), "{err}");
    }
}
