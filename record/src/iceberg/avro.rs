//! Reading Iceberg manifest lists and manifests (Avro object container files) with
//! `apache-avro`, keeping only the fields a layout needs.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use apache_avro::types::Value;

use crate::error::RecordError;

/// One entry of a manifest list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ManifestRef {
    pub path: String,
    pub length_bytes: u64,
    /// 0 = data manifest, 1 = delete manifest (format v2; v1 has only data).
    pub content: i64,
}

/// One entry of a manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ManifestEntry {
    /// 0 = existing, 1 = added, 2 = deleted.
    pub status: i64,
    /// 0 = data, 1 = position deletes, 2 = equality deletes (v1: always data).
    pub content: i64,
    pub file_path: String,
    pub file_format: String,
    pub file_size_in_bytes: u64,
    pub record_count: u64,
}

impl ManifestEntry {
    /// A data file the snapshot still reads.
    pub fn is_live_data(&self) -> bool {
        self.status != 2 && self.content == 0
    }
}

pub(crate) fn read_manifest_list(path: &Path) -> Result<Vec<ManifestRef>, RecordError> {
    read_records(path, |r| {
        Ok(ManifestRef {
            path: string(r, "manifest_path")?,
            length_bytes: non_negative(r, "manifest_length")?,
            content: optional_long(r, "content")?.unwrap_or(0),
        })
    })
}

pub(crate) fn read_manifest(path: &Path) -> Result<Vec<ManifestEntry>, RecordError> {
    read_records(path, |r| {
        let status = long(r, "status")?;
        let data_file = match field(r, "data_file") {
            Some(Value::Record(fields)) => fields,
            Some(other) => return Err(format!("field data_file is {other:?}, expected a record")),
            None => return Err("no field data_file".into()),
        };
        Ok(ManifestEntry {
            status,
            content: optional_long(data_file, "content")?.unwrap_or(0),
            file_path: string(data_file, "file_path")?,
            file_format: string(data_file, "file_format")?,
            file_size_in_bytes: non_negative(data_file, "file_size_in_bytes")?,
            record_count: non_negative(data_file, "record_count")?,
        })
    })
}

type Record = [(String, Value)];

/// Reads every record of an Avro file through `map`. A panic inside `apache-avro` on a
/// malformed file becomes an error naming the file.
fn read_records<T>(
    path: &Path,
    map: impl Fn(&Record) -> Result<T, String>,
) -> Result<Vec<T>, RecordError> {
    let bytes = super::read_bounded(path)?;
    // One value may allocate this much at most (apache-avro's own default is 512 MiB; a
    // manifest entry is a few KiB). The setting is process-wide and taken on first use.
    apache_avro::util::max_allocation_bytes(limits::MAX_AVRO_ALLOCATION_BYTES);
    let avro = |message: String| RecordError::Avro {
        path: path.to_path_buf(),
        message,
    };
    let read = || -> Result<Vec<T>, RecordError> {
        let reader = apache_avro::Reader::new(std::io::Cursor::new(bytes))
            .map_err(|e| avro(e.to_string()))?;
        let mut out = Vec::new();
        for (i, value) in reader.enumerate() {
            let value = value.map_err(|e| avro(format!("record {i}: {e}")))?;
            let Value::Record(fields) = value else {
                return Err(avro(format!("record {i} is not an Avro record")));
            };
            out.push(map(&fields).map_err(|e| avro(format!("record {i}: {e}")))?);
        }
        Ok(out)
    };
    match catch_unwind(AssertUnwindSafe(read)) {
        Ok(result) => result,
        Err(_) => Err(avro("the Avro reader panicked on this file".into())),
    }
}

/// A field's value with any union (Iceberg's optional fields) unwrapped; `None` when absent or
/// null.
fn field<'a>(record: &'a Record, name: &str) -> Option<&'a Value> {
    let mut v = &record.iter().find(|(n, _)| n == name)?.1;
    while let Value::Union(_, inner) = v {
        v = inner;
    }
    (!matches!(v, Value::Null)).then_some(v)
}

fn optional_long(record: &Record, name: &str) -> Result<Option<i64>, String> {
    match field(record, name) {
        None => Ok(None),
        Some(Value::Long(v)) => Ok(Some(*v)),
        Some(Value::Int(v)) => Ok(Some(i64::from(*v))),
        Some(Value::Enum(i, _)) => Ok(Some(i64::from(*i))),
        Some(other) => Err(format!("field {name} is {other:?}, expected an integer")),
    }
}

fn long(record: &Record, name: &str) -> Result<i64, String> {
    optional_long(record, name)?.ok_or_else(|| format!("no field {name}"))
}

fn non_negative(record: &Record, name: &str) -> Result<u64, String> {
    let v = long(record, name)?;
    u64::try_from(v).map_err(|_| format!("field {name} is negative ({v})"))
}

fn string(record: &Record, name: &str) -> Result<String, String> {
    match field(record, name) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Enum(_, s)) => Ok(s.clone()),
        Some(other) => Err(format!("field {name} is {other:?}, expected a string")),
        None => Err(format!("no field {name}")),
    }
}
