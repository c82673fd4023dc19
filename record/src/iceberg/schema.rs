//! The table's current Iceberg schema as leaf columns, and each recorded data file's column
//! chunks put in that order, matched by Iceberg field id (schema evolution: a column added,
//! renamed or dropped after some files were written).

use serde_json::Value;

use crate::parquet_file::RecordedFile;

/// The current schema's leaves by field id and by name (the first of each, as a scan in schema
/// order finds it), built once a table.
pub(crate) struct LeafIndex {
    by_id: std::collections::BTreeMap<i32, usize>,
    by_name: std::collections::BTreeMap<String, usize>,
}

impl LeafIndex {
    pub(crate) fn new(leaves: &[Leaf]) -> Self {
        let mut by_id = std::collections::BTreeMap::new();
        let mut by_name = std::collections::BTreeMap::new();
        for (i, l) in leaves.iter().enumerate() {
            by_id.entry(l.field_id).or_insert(i);
            by_name.entry(l.name.clone()).or_insert(i);
        }
        LeafIndex { by_id, by_name }
    }
}

/// One primitive column of the current schema: its field id and its path, joined with '.' the
/// way Parquet names the leaf (`a.b` in a struct, `a.list.element`, `m.key_value.key`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub field_id: i32,
    pub name: String,
}

/// The leaves of the schema `current-schema-id` names (format v2 and later), or of `schema`
/// (format v1 without `schemas`), in schema order.
pub(crate) fn current_leaves(meta: &Value) -> Result<Vec<Leaf>, String> {
    let schema = match (meta.get("schemas"), meta.get("current-schema-id")) {
        (Some(Value::Array(schemas)), Some(id)) => schemas
            .iter()
            .find(|s| s.get("schema-id") == Some(id))
            .ok_or_else(|| format!("current-schema-id {id} names no schema in \"schemas\""))?,
        _ => meta
            .get("schema")
            .ok_or("neither \"schemas\" with \"current-schema-id\" nor \"schema\"")?,
    };
    let mut leaves = Vec::new();
    walk_struct(schema, "", &mut leaves)?;
    Ok(leaves)
}

fn walk_struct(s: &Value, prefix: &str, out: &mut Vec<Leaf>) -> Result<(), String> {
    let fields = s
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("a struct at `{prefix}` without \"fields\""))?;
    for f in fields {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("a field of `{prefix}` without a \"name\""))?;
        let path = join(prefix, name);
        let id = field_id(f, "id", &path)?;
        walk_type(f.get("type"), id, &path, out)?;
    }
    Ok(())
}

/// A field's type: a primitive (a string) is a leaf with the field's id; nested types recurse.
fn walk_type(ty: Option<&Value>, id: i32, path: &str, out: &mut Vec<Leaf>) -> Result<(), String> {
    let ty = ty.ok_or_else(|| format!("field `{path}` has no \"type\""))?;
    if ty.is_string() {
        out.push(Leaf {
            field_id: id,
            name: path.to_string(),
        });
        return Ok(());
    }
    match ty.get("type").and_then(Value::as_str) {
        Some("struct") => walk_struct(ty, path, out),
        Some("list") => {
            let element = field_id(ty, "element-id", path)?;
            walk_type(ty.get("element"), element, &join(path, "list.element"), out)
        }
        Some("map") => {
            let key = field_id(ty, "key-id", path)?;
            let value = field_id(ty, "value-id", path)?;
            walk_type(ty.get("key"), key, &join(path, "key_value.key"), out)?;
            walk_type(ty.get("value"), value, &join(path, "key_value.value"), out)
        }
        other => Err(format!(
            "field `{path}` has type {other:?}; expected a primitive, struct, list or map"
        )),
    }
}

fn field_id(v: &Value, key: &str, path: &str) -> Result<i32, String> {
    v.get(key)
        .and_then(Value::as_i64)
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| format!("`{path}` has no integer \"{key}\""))
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `file` with its column chunks in the order of `leaves`, named as the current schema names
/// them. A file column matches the leaf with its Parquet `field_id`; a column without one
/// matches by name (as Iceberg's name mapping does for files written without ids). Columns no
/// leaf matches were dropped from the table and are left out (no query can name them). A file
/// written before a column was added lacks it; that is supported when the missing columns come
/// after every column the file has (Iceberg adds columns at the end): the file's schema is then
/// a prefix of the table's, and a query of a missing column reads nothing from that file.
pub(crate) fn to_table_order(
    file: RecordedFile,
    leaves: &[Leaf],
    index: &LeafIndex,
) -> Result<RecordedFile, String> {
    let mut order: Vec<(usize, usize)> = Vec::new(); // (table position, file column)
                                                     // The file column each table position took, so a second match is found at once (a scan
                                                     // of `order` made a wide file quadratic).
    let mut taken: std::collections::BTreeMap<usize, usize> = Default::default();
    for (i, (name, id)) in file.columns.iter().zip(&file.field_ids).enumerate() {
        let pos = match id {
            Some(id) => index.by_id.get(id),
            None => index.by_name.get(name.as_str()),
        };
        if let Some(&p) = pos {
            if let Some(&j) = taken.get(&p) {
                return Err(format!(
                    "columns `{}` and `{name}` both match `{}` (field id {})",
                    file.columns[j], leaves[p].name, leaves[p].field_id
                ));
            }
            taken.insert(p, i);
            order.push((p, i));
        }
    }
    order.sort_unstable();
    if let Some((k, (p, _))) = order.iter().enumerate().find(|(k, (p, _))| k != p) {
        return Err(format!(
            "the file has `{}` but not `{}`, which comes before it in the table's current \
             schema; only columns added after the file was written (at the end) can be missing",
            leaves[*p].name, leaves[k].name
        ));
    }
    let RecordedFile { mut layout, .. } = file;
    for rg in &mut layout.row_groups {
        rg.columns = order.iter().map(|(_, i)| rg.columns[*i]).collect();
        if !rg.statistics.is_empty() {
            rg.statistics = order
                .iter()
                .map(|(_, i)| rg.statistics[*i].clone())
                .collect();
        }
    }
    Ok(RecordedFile {
        layout,
        columns: order.iter().map(|(p, _)| leaves[*p].name.clone()).collect(),
        field_ids: order
            .iter()
            .map(|(p, _)| Some(leaves[*p].field_id))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::{ColumnChunk, FileLayout, RowGroup};

    fn leaves(meta: &str) -> Result<Vec<Leaf>, String> {
        current_leaves(&serde_json::from_str(meta).unwrap())
    }

    #[test]
    fn the_current_schema_names_nested_leaves_as_parquet_does() {
        let l = leaves(
            r#"{"current-schema-id": 1, "schemas": [
                {"schema-id": 0, "fields": [{"id": 1, "name": "old", "type": "int"}]},
                {"schema-id": 1, "fields": [
                    {"id": 1, "name": "id", "type": "long"},
                    {"id": 2, "name": "s", "type": {"type": "struct", "fields": [
                        {"id": 5, "name": "x", "type": "double"}]}},
                    {"id": 3, "name": "tags", "type": {"type": "list", "element-id": 6,
                        "element": "string"}},
                    {"id": 4, "name": "m", "type": {"type": "map", "key-id": 7, "key": "string",
                        "value-id": 8, "value": "long"}}]}]}"#,
        )
        .unwrap();
        let names: Vec<(i32, &str)> = l.iter().map(|l| (l.field_id, l.name.as_str())).collect();
        assert_eq!(
            names,
            [
                (1, "id"),
                (5, "s.x"),
                (6, "tags.list.element"),
                (7, "m.key_value.key"),
                (8, "m.key_value.value")
            ]
        );
    }

    #[test]
    fn a_v1_schema_and_a_bad_one() {
        let l = leaves(r#"{"schema": {"fields": [{"id": 1, "name": "a", "type": "int"}]}}"#);
        assert_eq!(l.unwrap().len(), 1);
        let e = leaves(r#"{"current-schema-id": 9, "schemas": []}"#).unwrap_err();
        assert!(e.contains("current-schema-id 9"), "{e}");
        let e = leaves(r#"{"schema": {"fields": [{"id": 1, "name": "a"}]}}"#).unwrap_err();
        assert!(e.contains("`a` has no \"type\""), "{e}");
    }

    fn chunk(start: u64) -> ColumnChunk {
        ColumnChunk {
            chunk_start: start,
            data_len: 10,
            ..Default::default()
        }
    }

    fn file(columns: &[(&str, Option<i32>)]) -> RecordedFile {
        RecordedFile {
            layout: FileLayout {
                row_groups: vec![RowGroup::new(
                    1,
                    (0..columns.len() as u64).map(|i| chunk(100 * i)).collect(),
                )],
                ..Default::default()
            },
            columns: columns.iter().map(|c| c.0.to_string()).collect(),
            field_ids: columns.iter().map(|c| c.1).collect(),
        }
    }

    fn table() -> Vec<Leaf> {
        [(1, "id"), (3, "quantity"), (4, "price")]
            .iter()
            .map(|(field_id, name)| Leaf {
                field_id: *field_id,
                name: name.to_string(),
            })
            .collect()
    }

    #[test]
    fn renamed_reordered_and_dropped_columns_match_by_field_id() {
        // Written as (qty, dropped, id): qty is now `quantity`; `dropped` is gone; no `price`.
        let mut f = file(&[("qty", Some(3)), ("dropped", Some(2)), ("id", Some(1))]);
        let mm = |v| layout::MinMax::new(layout::StatValue::Int(v), layout::StatValue::Int(v));
        f.layout.row_groups[0].statistics = vec![mm(30), None, mm(10)];
        let t = to_table_order(f, &table(), &LeafIndex::new(&table())).unwrap();
        // The statistics move with their chunks.
        assert_eq!(t.layout.row_groups[0].statistics, [mm(10), mm(30)]);
        assert_eq!(t.columns, ["id", "quantity"]);
        assert_eq!(t.field_ids, [Some(1), Some(3)]);
        let starts: Vec<u64> = t.layout.row_groups[0]
            .columns
            .iter()
            .map(|c| c.chunk_start)
            .collect();
        assert_eq!(starts, [200, 0]);
    }

    #[test]
    fn without_field_ids_columns_match_by_name() {
        let t = to_table_order(
            file(&[("price", None), ("id", None)]),
            &table(),
            &LeafIndex::new(&table()),
        );
        let e = t.unwrap_err();
        assert!(e.contains("has `price` but not `quantity`"), "{e}");
        let t = to_table_order(
            file(&[("quantity", None), ("id", None)]),
            &table(),
            &LeafIndex::new(&table()),
        )
        .unwrap();
        assert_eq!(t.columns, ["id", "quantity"]);
    }

    #[test]
    fn two_columns_of_one_field_are_an_error() {
        let e = to_table_order(
            file(&[("a", Some(1)), ("b", Some(1))]),
            &table(),
            &LeafIndex::new(&table()),
        )
        .unwrap_err();
        assert!(e.contains("both match `id`"), "{e}");
    }
}
