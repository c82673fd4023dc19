//! A tolerant Thrift compact-protocol decoder for the few footer fields a layout needs.
//!
//! Used only when the `parquet` crate rejects a footer. Some old writers (parquet-mr 1.12
//! snapshots, as in parquet-testing's `dict-page-offset-zero.parquet`) reused field ids that
//! the format later gave other types (ColumnMetaData field 15 as a list of structs where the
//! spec now has `bloom_filter_length: i32`). The `parquet` crate rejects such a footer; Thrift's
//! own rule is to skip a field whose type is not the expected one, and this decoder does that.
//! Every read is bounds-checked: malformed input gives an error, never a panic.

use layout::Codec;

use crate::footer::{ChunkFacts, FooterFacts, RawPage, RowGroupFacts};

/// Compact protocol type ids.
mod ty {
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const I8: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
}

/// Nesting deeper than this is taken as malformed (the footer nests 5 levels).
use limits::MAX_THRIFT_DEPTH as MAX_DEPTH;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

type R<T> = Result<T, String>;

impl<'a> Reader<'a> {
    fn byte(&mut self) -> R<u8> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("Thrift data ends early at byte {}", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> R<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!(
            "Thrift varint longer than 10 bytes at byte {}",
            self.pos
        ))
    }

    fn i64(&mut self) -> R<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> R<i32> {
        let v = self.i64()?;
        i32::try_from(v).map_err(|_| format!("Thrift i32 out of range: {v}"))
    }

    fn binary(&mut self) -> R<&'a [u8]> {
        let len =
            usize::try_from(self.varint()?).map_err(|_| "Thrift binary too long".to_string())?;
        let end = self
            .pos
            .checked_add(len)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| {
                format!(
                    "Thrift binary of {len} bytes at byte {} runs past the end",
                    self.pos
                )
            })?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// A list or set header: (element count, element type).
    fn list_header(&mut self) -> R<(usize, u8)> {
        let h = self.byte()?;
        let n = match h >> 4 {
            15 => {
                usize::try_from(self.varint()?).map_err(|_| "Thrift list too long".to_string())?
            }
            n => usize::from(n),
        };
        // Every element takes at least one byte: a larger count is malformed, and checking it
        // here keeps a bad count from reserving huge memory.
        if n > self.buf.len().saturating_sub(self.pos) {
            return Err(format!(
                "Thrift list of {n} elements cannot fit in the footer"
            ));
        }
        Ok((n, h & 0x0f))
    }

    /// The next field's (id, type), or `None` at the struct's end.
    fn field_header(&mut self, last_id: &mut i16) -> R<Option<(i16, u8)>> {
        let h = self.byte()?;
        if h == 0 {
            return Ok(None);
        }
        let delta = h >> 4;
        let id = if delta == 0 {
            i16::try_from(self.i64()?).map_err(|_| "Thrift field id out of range".to_string())?
        } else {
            last_id.wrapping_add(i16::from(delta))
        };
        *last_id = id;
        Ok(Some((id, h & 0x0f)))
    }

    fn skip(&mut self, t: u8, depth: u32) -> R<()> {
        if depth > MAX_DEPTH {
            return Err("Thrift nesting too deep".into());
        }
        match t {
            ty::TRUE | ty::FALSE => {}
            ty::I8 => {
                self.byte()?;
            }
            ty::I16 | ty::I32 | ty::I64 => {
                self.varint()?;
            }
            ty::DOUBLE => {
                for _ in 0..8 {
                    self.byte()?;
                }
            }
            ty::BINARY => {
                self.binary()?;
            }
            ty::LIST | ty::SET => {
                let (n, et) = self.list_header()?;
                for _ in 0..n {
                    self.skip_element(et, depth + 1)?;
                }
            }
            ty::MAP => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| "Thrift map too long".to_string())?;
                // As for lists: every entry takes at least one byte, so a larger count is
                // malformed (and would otherwise spin through entries that read nothing).
                if n > self.buf.len().saturating_sub(self.pos) {
                    return Err(format!(
                        "Thrift map of {n} entries cannot fit in the footer"
                    ));
                }
                if n > 0 {
                    let kv = self.byte()?;
                    for _ in 0..n {
                        self.skip_element(kv >> 4, depth + 1)?;
                        self.skip_element(kv & 0x0f, depth + 1)?;
                    }
                }
            }
            ty::STRUCT => {
                let mut last = 0;
                while let Some((_, ft)) = self.field_header(&mut last)? {
                    self.skip(ft, depth + 1)?;
                }
            }
            other => return Err(format!("unknown Thrift type {other} at byte {}", self.pos)),
        }
        Ok(())
    }

    /// Skips one element of a list, set or map, where a boolean takes a byte of its own (in a
    /// struct it is carried by the field header): every element reads at least one byte.
    fn skip_element(&mut self, t: u8, depth: u32) -> R<()> {
        if t == ty::TRUE || t == ty::FALSE {
            self.byte().map(|_| ())
        } else {
            self.skip(t, depth)
        }
    }

    /// Calls `each` for every field of a struct; `each` returns `false` for a field it did not
    /// consume (absent from its schema, or of another type), which is then skipped.
    fn fields(&mut self, mut each: impl FnMut(&mut Self, i16, u8) -> R<bool>) -> R<()> {
        let mut last = 0;
        while let Some((id, t)) = self.field_header(&mut last)? {
            if !each(self, id, t)? {
                self.skip(t, 1)?;
            }
        }
        Ok(())
    }

    /// Reads a list of structs, calling `each` for every element; other element types are
    /// skipped.
    fn struct_list<T>(&mut self, mut each: impl FnMut(&mut Self) -> R<T>) -> R<Vec<T>> {
        let (n, et) = self.list_header()?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            if et == ty::STRUCT {
                out.push(each(self)?);
            } else {
                self.skip(et, 1)?;
            }
        }
        Ok(out)
    }
}

/// Stores a decoded field; `true` tells [`Reader::fields`] the field was consumed.
fn set<T>(slot: &mut T, value: T) -> bool {
    *slot = value;
    true
}

/// One SchemaElement: its name and, for a group, its number of children.
struct SchemaNode {
    name: String,
    num_children: Option<i32>,
}

/// Decodes a FileMetaData footer (the bytes before the trailing length and magic).
/// Walks the footer as a generic Thrift struct, skipping every field, in time linear in its
/// length (every element read consumes a byte; nesting bounded by [`MAX_DEPTH`]). Run before
/// the `parquet` crate sees a footer: its own skip has no such bound (an 889-byte file found
/// by the `record_parquet` fuzz target kept it busy for 2.5 s).
pub(crate) fn check_walkable(footer: &[u8]) -> Result<(), String> {
    let mut r = Reader {
        buf: footer,
        pos: 0,
    };
    r.skip(ty::STRUCT, 0)
}

/// Refuses a schema nested deeper than [`limits::MAX_SCHEMA_DEPTH`] groups, before the
/// `parquet` crate (which recurses once a level, a stack overflow being an abort no
/// `catch_unwind` stops) or [`leaf_paths`] sees it. The schema is a flat list whose nesting is
/// in its elements' `num_children`, so the Thrift depth check does not bound it.
pub(crate) fn check_schema_depth(footer: &[u8]) -> Result<(), String> {
    let mut r = Reader {
        buf: footer,
        pos: 0,
    };
    let mut schema = Vec::new();
    r.fields(|r, id, t| match (id, t) {
        (2, ty::LIST) => {
            schema = r.struct_list(schema_element)?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    let depth = schema_depth(&schema);
    if depth > limits::MAX_SCHEMA_DEPTH {
        return Err(format!(
            "the schema nests groups {depth} deep, more than {} (`MAX_SCHEMA_DEPTH`)",
            limits::MAX_SCHEMA_DEPTH
        ));
    }
    Ok(())
}

/// The deepest nesting of groups in a depth-first flattened schema (the root counts 1), as far
/// as the elements go.
fn schema_depth(schema: &[SchemaNode]) -> u64 {
    let mut left: Vec<i32> = Vec::new();
    let mut deepest = 0u64;
    for node in schema {
        while left.last().is_some_and(|l| *l <= 0) {
            left.pop();
        }
        if let Some(l) = left.last_mut() {
            *l -= 1;
        }
        if let Some(n) = node.num_children.filter(|n| *n > 0) {
            left.push(n);
            deepest = deepest.max(left.len() as u64);
        }
    }
    deepest
}

pub(crate) fn decode_footer(footer: &[u8]) -> Result<FooterFacts, String> {
    let mut r = Reader {
        buf: footer,
        pos: 0,
    };
    let mut schema = Vec::new();
    let mut row_groups = Vec::new();
    r.fields(|r, id, t| match (id, t) {
        (2, ty::LIST) => {
            schema = r.struct_list(schema_element)?;
            Ok(true)
        }
        (4, ty::LIST) => {
            row_groups = r.struct_list(row_group)?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    let columns = leaf_paths(&schema)?;
    Ok(FooterFacts {
        // The tolerant decoder does not read field ids: such files match by name.
        field_ids: vec![None; columns.len()],
        columns,
        row_groups,
    })
}

/// Decodes an OffsetIndex's page locations.
pub(crate) fn decode_offset_index(bytes: &[u8]) -> Result<Vec<RawPage>, String> {
    let mut r = Reader { buf: bytes, pos: 0 };
    let mut pages = Vec::new();
    r.fields(|r, id, t| match (id, t) {
        (1, ty::LIST) => {
            pages = r.struct_list(|r| {
                let mut p = RawPage {
                    offset: -1,
                    compressed_page_size: -1,
                    first_row_index: -1,
                };
                r.fields(|r, id, t| {
                    Ok(match (id, t) {
                        (1, ty::I64) => set(&mut p.offset, r.i64()?),
                        (2, ty::I32) => set(&mut p.compressed_page_size, r.i32()?),
                        (3, ty::I64) => set(&mut p.first_row_index, r.i64()?),
                        _ => false,
                    })
                })?;
                Ok(p)
            })?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(pages)
}

fn schema_element(r: &mut Reader) -> R<SchemaNode> {
    let mut node = SchemaNode {
        name: String::new(),
        num_children: None,
    };
    r.fields(|r, id, t| {
        Ok(match (id, t) {
            (4, ty::BINARY) => set(
                &mut node.name,
                String::from_utf8_lossy(r.binary()?).into_owned(),
            ),
            (5, ty::I32) => set(&mut node.num_children, Some(r.i32()?)),
            _ => false,
        })
    })?;
    Ok(node)
}

/// Leaf paths of a depth-first flattened schema; the first element is the root.
fn leaf_paths(schema: &[SchemaNode]) -> R<Vec<String>> {
    let Some(root) = schema.first() else {
        return Err("the footer has no schema".into());
    };
    let mut paths = Vec::new();
    // Children still to visit per open group, and the open groups' names (one path, not a
    // copy per group: memory linear in the depth); iterative so a hostile schema cannot
    // overflow the stack.
    let mut open: Vec<i32> = vec![root.num_children.unwrap_or(0)];
    let mut prefix: Vec<&str> = Vec::new();
    for node in schema.iter().skip(1) {
        while open.last().is_some_and(|left| *left <= 0) {
            open.pop();
            prefix.pop();
        }
        let Some(left) = open.last_mut() else {
            return Err("the schema has more elements than its groups' num_children".into());
        };
        *left -= 1;
        match node.num_children {
            Some(n) if n > 0 => {
                open.push(n);
                prefix.push(&node.name);
            }
            _ => {
                let mut path = prefix.join(".");
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&node.name);
                paths.push(path);
            }
        }
    }
    Ok(paths)
}

fn row_group(r: &mut Reader) -> R<RowGroupFacts> {
    let mut rg = RowGroupFacts::default();
    r.fields(|r, id, t| match (id, t) {
        (1, ty::LIST) => {
            rg.chunks = r.struct_list(column_chunk)?;
            Ok(true)
        }
        (3, ty::I64) => {
            rg.num_rows = r.i64()?;
            Ok(true)
        }
        _ => Ok(false),
    })?;
    Ok(rg)
}

fn column_chunk(r: &mut Reader) -> R<ChunkFacts> {
    let mut c = ChunkFacts {
        data_page_offset: -1,
        compressed_bytes: -1,
        ..Default::default()
    };
    r.fields(|r, id, t| {
        Ok(match (id, t) {
            (3, ty::STRUCT) => {
                column_meta_data(r, &mut c)?;
                true
            }
            (4, ty::I64) => set(&mut c.offset_index.0, Some(r.i64()?)),
            (5, ty::I32) => set(&mut c.offset_index.1, Some(r.i32()?)),
            (6, ty::I64) => set(&mut c.column_index.0, Some(r.i64()?)),
            (7, ty::I32) => set(&mut c.column_index.1, Some(r.i32()?)),
            _ => false,
        })
    })?;
    Ok(c)
}

fn column_meta_data(r: &mut Reader, c: &mut ChunkFacts) -> R<()> {
    r.fields(|r, id, t| {
        Ok(match (id, t) {
            (3, ty::LIST) => {
                let (n, et) = r.list_header()?;
                let mut parts = Vec::with_capacity(n);
                for _ in 0..n {
                    if et == ty::BINARY {
                        parts.push(String::from_utf8_lossy(r.binary()?).into_owned());
                    } else {
                        r.skip(et, 1)?;
                    }
                }
                c.path = parts.join(".");
                true
            }
            (4, ty::I32) => {
                let v = r.i32()?;
                c.codec = u8::try_from(v).ok().and_then(Codec::from_u8);
                true
            }
            (6, ty::I64) => set(&mut c.uncompressed_bytes, r.i64()?),
            (7, ty::I64) => set(&mut c.compressed_bytes, r.i64()?),
            (9, ty::I64) => set(&mut c.data_page_offset, r.i64()?),
            (11, ty::I64) => set(&mut c.dictionary_page_offset, Some(r.i64()?)),
            (14, ty::I64) => set(&mut c.bloom_filter_offset, Some(r.i64()?)),
            (15, ty::I32) => set(&mut c.bloom_filter_len, Some(r.i32()?)),
            _ => false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn skips_a_field_of_an_unexpected_type() {
        // ColumnChunk { 3: ColumnMetaData { 9: i64 = 4, 15: list<i32> [1, 2] }, 4: i64 = 67 }
        // as in old parquet-mr footers where field 15 is not bloom_filter_length.
        let bytes = [
            0x3c, // field 3, struct
            0x96, 0x08, // field 9 (delta 9), i64 = 4 (zigzag 8)
            0x69, 0x25, 0x02, 0x04, // field 15 (delta 6), list of 2 i32: 1, 2
            0x00, // end ColumnMetaData
            0x16, 0x86, 0x01, // field 4 (delta 1), i64 = 67 (zigzag 134)
            0x00,
        ];
        let mut r = Reader {
            buf: &bytes,
            pos: 0,
        };
        let c = column_chunk(&mut r).unwrap();
        assert_eq!(c.data_page_offset, 4);
        assert_eq!(c.bloom_filter_len, None, "a list is not an i32: skipped");
        assert_eq!(c.offset_index.0, Some(67));
    }

    #[test]
    fn leaf_paths_of_nested_schema() {
        let node = |name: &str, n: Option<i32>| SchemaNode {
            name: name.into(),
            num_children: n,
        };
        let schema = [
            node("root", Some(2)),
            node("a", None),
            node("b", Some(2)),
            node("x", None),
            node("y", None),
        ];
        assert_eq!(leaf_paths(&schema).unwrap(), ["a", "b.x", "b.y"]);
        let too_many = [node("root", Some(1)), node("a", None), node("b", None)];
        assert!(leaf_paths(&too_many).is_err());
        assert_eq!(schema_depth(&schema), 2, "root, then b");
        // A chain of groups, each the only child of the one before, ending in a leaf.
        let mut deep = vec![node("root", Some(1))];
        deep.extend((0..9).map(|i| node(&format!("g{i}"), Some(1))));
        deep.push(node("leaf", None));
        assert_eq!(schema_depth(&deep), 10);
        assert_eq!(
            leaf_paths(&deep).unwrap(),
            ["g0.g1.g2.g3.g4.g5.g6.g7.g8.leaf"]
        );
    }

    #[test]
    fn a_map_count_past_the_data_is_an_error_not_a_spin() {
        // A map of 2^35 boolean pairs in 6 bytes: once a hang in the property test below.
        let bytes = [0xff, 0xff, 0xff, 0xff, 0x7f, 0x11];
        let mut r = Reader {
            buf: &bytes,
            pos: 0,
        };
        let e = r.skip(ty::MAP, 0).unwrap_err();
        assert!(e.contains("cannot fit"), "{e}");
        // A small map of booleans reads a byte per key and per value.
        let bytes = [0x02, 0x11, 1, 2, 1, 1];
        let mut r = Reader {
            buf: &bytes,
            pos: 0,
        };
        r.skip(ty::MAP, 0).unwrap();
        assert_eq!(r.pos, bytes.len());
    }

    proptest! {
        /// Arbitrary bytes give facts or an error, never a panic or a huge allocation.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            let _ = decode_footer(&bytes);
            let _ = decode_offset_index(&bytes);
        }
    }
}
