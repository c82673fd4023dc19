//! `sim record iceberg PATH/TO/metadata.json`: a local Iceberg table into one layout.

mod avro;
mod metadata;
mod paths;
mod schema;

use serde::Deserialize;
use std::path::{Path, PathBuf};

use layout::{IcebergMetadata, Table};

use crate::error::RecordError;
use crate::parquet_file::record_parquet_file;
use crate::table::{provenance, TableBuilder};
use avro::{read_manifest, read_manifest_list};
use metadata::TableMetadata;
use paths::Resolver;

/// Records the current snapshot of the local Iceberg table whose metadata JSON is
/// `metadata_json`: the metadata phase (sizes of the metadata JSON, the manifest list and every
/// manifest it lists, data and delete manifests alike, as a cold reader fetches them) and the
/// Parquet layout of every live data file (status existing or added, content data), in manifest
/// list order then manifest order. Layout paths are relative to the table location.
///
/// Paths inside Iceberg metadata are absolute URIs (`file:///tmp/wh/db/t/data/x.parquet`).
/// Each is resolved by this rule: strip a `file:` scheme; if that absolute path exists, use it;
/// else, if it starts with the table's `location`, resolve the rest against the table
/// directory, the directory above the one holding `metadata_json` (Iceberg keeps metadata in
/// `<table>/metadata/`); else fail with [`RecordError::Unresolved`] listing the paths tried.
/// So a table copied elsewhere (test data in a repository) records as well. Sizes are those of
/// the local files; a data file whose size or row count differs from its manifest entry is an
/// error.
///
/// Columns are matched to the table's current schema by Iceberg field id
/// (`schema::to_table_order`): every file's chunks are put in the current schema's order and
/// named as it names them, so files written before a column was renamed or added record as one
/// table (a file lacking an added column has a schema that is a prefix of the others).
///
/// Delete files are not recorded as layouts (only their manifests count in the metadata phase).
/// Errors name the file (metadata JSON, manifest list, manifest or data file) and the fault;
/// any data file that cannot be recorded fails the whole table, since a layout missing files
/// would understate the work.
pub fn record_iceberg(metadata_json: &Path) -> Result<Table, RecordError> {
    let text = read_bounded(metadata_json)?;
    let json_err = |source| RecordError::IcebergJson {
        path: metadata_json.to_path_buf(),
        source,
    };
    let value: serde_json::Value = serde_json::from_slice(&text).map_err(json_err)?;
    // Read from the parsed tree in place (a clone of a metadata file of up to 1 GiB would
    // double what the tree holds).
    let meta = TableMetadata::deserialize(&value).map_err(json_err)?;
    let iceberg_err = |what: String| RecordError::Iceberg {
        path: metadata_json.to_path_buf(),
        what,
    };
    let leaves = schema::current_leaves(&value)
        .map_err(|what| iceberg_err(format!("the current schema: {what}")))?;
    if leaves.len() as u64 > limits::MAX_COLUMNS_PER_SCHEMA {
        return Err(iceberg_err(format!(
            "the current schema has {} leaf columns, past the bound of {} \
             (limits::MAX_COLUMNS_PER_SCHEMA, docs/bounds.md)",
            leaves.len(),
            limits::MAX_COLUMNS_PER_SCHEMA
        )));
    }
    if !(1..=3).contains(&meta.format_version) {
        return Err(iceberg_err(format!(
            "format-version {} is not one this recorder knows (1, 2 or 3)",
            meta.format_version
        )));
    }
    let leaf_index = schema::LeafIndex::new(&leaves);
    let resolver = Resolver::new(&meta.location, metadata_json);
    let mut phase = IcebergMetadata {
        metadata_json_bytes: text.len() as u64,
        ..Default::default()
    };
    let mut builder = TableBuilder::default();

    let snapshot = meta.current_snapshot().map_err(iceberg_err)?;
    // The manifests and the file that lists them (for errors).
    let (manifests, listed_in): (Vec<String>, PathBuf) = match snapshot {
        None => (Vec::new(), metadata_json.to_path_buf()),
        Some(s) => match (&s.manifest_list, &s.manifests) {
            (Some(list), _) => {
                let list_path = resolver.resolve(list, metadata_json)?;
                phase.manifest_list_bytes = file_size(&list_path)?;
                let refs = read_manifest_list(&list_path)?;
                (refs.into_iter().map(|m| m.path).collect(), list_path)
            }
            (None, Some(inline)) => (inline.clone(), metadata_json.to_path_buf()),
            (None, None) => {
                return Err(iceberg_err(format!(
                    "snapshot {} has neither \"manifest-list\" nor \"manifests\"",
                    s.snapshot_id
                )))
            }
        },
    };

    let count = manifests.len() as u64;
    if count > limits::MAX_MANIFESTS_PER_QUERY {
        return Err(RecordError::invalid(
            &listed_in,
            format!(
                "{count} manifests, past the bound of {} (limits::MAX_MANIFESTS_PER_QUERY, \
                 docs/bounds.md)",
                limits::MAX_MANIFESTS_PER_QUERY
            ),
        ));
    }
    let mut data_files: u64 = 0;
    for manifest in &manifests {
        let manifest_path = resolver.resolve(manifest, &listed_in)?;
        phase.manifest_bytes.push(file_size(&manifest_path)?);
        for entry in read_manifest(&manifest_path)? {
            if !entry.is_live_data() {
                continue;
            }
            // Counted before the file is recorded: a table past the bound is refused before
            // hours of recording, not when the layout is loaded.
            data_files += 1;
            if data_files > limits::MAX_FILES_PER_TABLE {
                return Err(RecordError::invalid(
                    &manifest_path,
                    format!(
                        "the manifests list more than {} live data files (limits::MAX_FILES_PER_TABLE, \
                         docs/bounds.md)",
                        limits::MAX_FILES_PER_TABLE
                    ),
                ));
            }
            if !entry.file_format.eq_ignore_ascii_case("parquet") {
                return Err(RecordError::Iceberg {
                    path: manifest_path.clone(),
                    what: format!(
                        "data file {} is {}; only Parquet data files can be recorded",
                        entry.file_path, entry.file_format
                    ),
                });
            }
            let data_path = resolver.resolve(&entry.file_path, &manifest_path)?;
            let recorded = record_parquet_file(&data_path, resolver.relative(&entry.file_path))?;
            let recorded =
                schema::to_table_order(recorded, &leaves, &leaf_index).map_err(|what| {
                    RecordError::Iceberg {
                        path: data_path.clone(),
                        what: format!("matching its columns to the table's by field id: {what}"),
                    }
                })?;
            if recorded.layout.size_bytes != entry.file_size_in_bytes {
                return Err(RecordError::Iceberg {
                    path: manifest_path.clone(),
                    what: format!(
                        "data file {} has {} bytes on disk, the manifest says file_size_in_bytes {}",
                        data_path.display(),
                        recorded.layout.size_bytes,
                        entry.file_size_in_bytes
                    ),
                });
            }
            if recorded.layout.num_rows() != entry.record_count {
                return Err(RecordError::Iceberg {
                    path: manifest_path.clone(),
                    what: format!(
                        "data file {} holds {} rows, the manifest says record_count {}",
                        data_path.display(),
                        recorded.layout.num_rows(),
                        entry.record_count
                    ),
                });
            }
            builder.add(recorded);
        }
    }
    let sources = vec![metadata_json.display().to_string()];
    let table = builder.finish(Some(phase), provenance("iceberg", sources));
    // Each file was checked as it was recorded; the table's own bounds (its totals) only now.
    table
        .validate()
        .map_err(|e| RecordError::invalid(metadata_json, e.to_string()))?;
    Ok(table)
}

fn file_size(path: &Path) -> Result<u64, RecordError> {
    Ok(std::fs::metadata(path)
        .map_err(|e| RecordError::io(path, e))?
        .len())
}

/// The bytes of a metadata JSON, manifest list or manifest, refused past
/// [`limits::MAX_METADATA_FILE_BYTES`] before any is read.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, RecordError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| RecordError::io(path, e))?;
    let bound = limits::MAX_METADATA_FILE_BYTES;
    let mut bytes = Vec::new();
    file.take(bound + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| RecordError::io(path, e))?;
    if bytes.len() as u64 > bound {
        return Err(RecordError::invalid(
            path,
            format!(
                "more than {bound} bytes of Iceberg metadata in one file \
                 (limits::MAX_METADATA_FILE_BYTES, docs/bounds.md)"
            ),
        ));
    }
    Ok(bytes)
}
