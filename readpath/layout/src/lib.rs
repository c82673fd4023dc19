//! The layout of a table as the read path sees it: files, row groups, column chunks, pages,
//! and where each index and filter sits. Only offsets and sizes: no data.
//!
//! A table of 17,554 files x 437 columns holds 7.7 M column chunks, so [`ColumnChunk`] is kept
//! small (80 bytes) and optional parts are encoded in-band (`len == 0` means absent) behind
//! accessor methods that return `Option`s.
//!
//! Files share schemas through [`Table::schemas`] so that column names are stored once.
// Casts that could truncate are checked (`limits::narrow`) or say why they cannot.
#![warn(clippy::cast_possible_truncation)]
// Tests build their fixtures with plain casts; the library target above is what is checked.
#![cfg_attr(test, allow(clippy::cast_possible_truncation))]

mod bounds;
pub mod format;
mod lazy;
mod stats;

pub use bounds::FileBounds;
pub use lazy::{FileSource, LazyFiles};
pub use stats::{MinMax, StatValue, TimeUnit};

use serde::{Deserialize, Serialize};

/// Index of a file in [`Table::files`].
pub type FileIndex = u32;

/// A half-open byte range `[start, end)` inside one file.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct ByteRange {
    pub start: u64,
    pub end: u64,
}

impl ByteRange {
    pub const fn new(start: u64, end: u64) -> Self {
        Self { start, end }
    }
    /// `[start, start + len)`, saturating at `u64::MAX` rather than overflowing.
    pub const fn with_len(start: u64, len: u64) -> Self {
        Self {
            start,
            end: start.saturating_add(len),
        }
    }
    pub const fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }
    pub const fn contains(&self, other: &ByteRange) -> bool {
        self.start <= other.start && other.end <= self.end
    }
    pub const fn overlaps(&self, other: &ByteRange) -> bool {
        self.start < other.end && other.start < self.end
    }
}

impl std::fmt::Display for ByteRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {})", self.start, self.end)
    }
}

/// Parquet compression codecs, as the footer names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[repr(u8)]
pub enum Codec {
    #[default]
    Uncompressed = 0,
    Snappy = 1,
    Gzip = 2,
    Lzo = 3,
    Brotli = 4,
    Lz4 = 5,
    Zstd = 6,
    Lz4Raw = 7,
}

impl Codec {
    pub fn from_u8(v: u8) -> Option<Codec> {
        Some(match v {
            0 => Codec::Uncompressed,
            1 => Codec::Snappy,
            2 => Codec::Gzip,
            3 => Codec::Lzo,
            4 => Codec::Brotli,
            5 => Codec::Lz4,
            6 => Codec::Zstd,
            7 => Codec::Lz4Raw,
            _ => return None,
        })
    }
}

/// One entry of a column chunk's offset index: where a data page sits and its first row
/// (relative to the row group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PageLocation {
    pub offset: u64,
    pub first_row_index: u64,
    pub compressed_page_size: u32,
}

impl PageLocation {
    pub fn range(&self) -> ByteRange {
        ByteRange::with_len(self.offset, self.compressed_page_size as u64)
    }
}

/// One column of one row group. Optional parts are absent when their length is 0.
///
/// Pages: `pages_count` entries of [`FileLayout::pages`] starting at `pages_first`. When the
/// chunk has an offset index but `pages_count == 0`, the chunk is one page covering
/// [`ColumnChunk::data_pages`] (this keeps 7.7 M one-page chunks from costing 24 bytes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnChunk {
    /// Offset of the first page: the dictionary page when there is one, else the first data page.
    pub chunk_start: u64,
    /// Bytes of all data pages (after the dictionary page).
    pub data_len: u64,
    pub uncompressed_bytes: u64,
    pub column_index_offset: u64,
    pub offset_index_offset: u64,
    pub bloom_filter_offset: u64,
    /// Bytes of the dictionary page, header included; 0 = no dictionary page.
    pub dictionary_len: u32,
    pub column_index_len: u32,
    pub offset_index_len: u32,
    /// 0 with `bloom_filter_offset != u64::MAX` = a bloom filter whose length the file omits.
    pub bloom_filter_len: u32,
    pub pages_first: u32,
    pub pages_count: u32,
    pub codec: Codec,
}

impl Default for ColumnChunk {
    /// An empty chunk at offset 0 with nothing optional (in particular, no bloom filter).
    fn default() -> Self {
        Self {
            chunk_start: 0,
            data_len: 0,
            uncompressed_bytes: 0,
            column_index_offset: 0,
            offset_index_offset: 0,
            bloom_filter_offset: NO_BLOOM_FILTER,
            dictionary_len: 0,
            column_index_len: 0,
            offset_index_len: 0,
            bloom_filter_len: 0,
            pages_first: 0,
            pages_count: 0,
            codec: Codec::Uncompressed,
        }
    }
}

/// `bloom_filter_offset` value meaning "no bloom filter".
pub const NO_BLOOM_FILTER: u64 = u64::MAX;

/// A bloom filter's location; `len` is `None` when the footer does not record it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomFilterLocation {
    pub offset: u64,
    pub len: Option<u32>,
}

impl ColumnChunk {
    pub fn dictionary_page(&self) -> Option<ByteRange> {
        (self.dictionary_len > 0)
            .then(|| ByteRange::with_len(self.chunk_start, self.dictionary_len as u64))
    }
    /// Offset of the first data page.
    pub fn data_page_offset(&self) -> u64 {
        self.chunk_start.saturating_add(self.dictionary_len as u64)
    }
    pub fn data_pages(&self) -> ByteRange {
        ByteRange::with_len(self.data_page_offset(), self.data_len)
    }
    /// The whole chunk: dictionary page plus data pages.
    pub fn range(&self) -> ByteRange {
        ByteRange::new(
            self.chunk_start,
            self.data_page_offset().saturating_add(self.data_len),
        )
    }
    pub fn compressed_bytes(&self) -> u64 {
        self.dictionary_len as u64 + self.data_len
    }
    pub fn column_index(&self) -> Option<ByteRange> {
        (self.column_index_len > 0)
            .then(|| ByteRange::with_len(self.column_index_offset, self.column_index_len as u64))
    }
    pub fn offset_index(&self) -> Option<ByteRange> {
        (self.offset_index_len > 0)
            .then(|| ByteRange::with_len(self.offset_index_offset, self.offset_index_len as u64))
    }
    pub fn bloom_filter(&self) -> Option<BloomFilterLocation> {
        (self.bloom_filter_offset != NO_BLOOM_FILTER).then(|| BloomFilterLocation {
            offset: self.bloom_filter_offset,
            len: (self.bloom_filter_len > 0).then_some(self.bloom_filter_len),
        })
    }
    /// The data pages of this chunk as the offset index lists them, or `None` without an
    /// offset index. A chunk with an offset index and `pages_count == 0` is one page.
    pub fn pages<'a>(&self, file: &'a FileLayout) -> Option<Pages<'a>> {
        self.offset_index()?;
        if self.pages_count == 0 {
            return Some(Pages::Single(PageLocation {
                offset: self.data_page_offset(),
                first_row_index: 0,
                compressed_page_size: u32::try_from(self.data_len).unwrap_or(u32::MAX),
            }));
        }
        let first = self.pages_first as usize;
        let end = first + self.pages_count as usize;
        file.pages.get(first..end).map(Pages::Listed)
    }
}

/// The pages of a chunk: listed in the file's page table, or one implicit page.
#[derive(Clone, Copy, Debug)]
pub enum Pages<'a> {
    Single(PageLocation),
    Listed(&'a [PageLocation]),
}

impl Pages<'_> {
    pub fn len(&self) -> usize {
        match self {
            Pages::Single(_) => 1,
            Pages::Listed(p) => p.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn get(&self, i: usize) -> Option<PageLocation> {
        match self {
            Pages::Single(p) => (i == 0).then_some(*p),
            Pages::Listed(p) => p.get(i).copied(),
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = PageLocation> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RowGroup {
    pub num_rows: u64,
    /// One per column of the file's schema, in schema order.
    pub columns: Vec<ColumnChunk>,
    /// Each column chunk's min/max where the footer states them, in `columns` order; empty when
    /// none were recorded (generated tables, the tolerant footer decoder).
    #[serde(default)]
    pub statistics: Vec<Option<MinMax>>,
    /// In an outline ([`FileLayout::outline_of`], no chunks): the uncompressed bytes of the
    /// chunks it stands for; 0 in a row group that holds its chunks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub outlined_uncompressed_bytes: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl RowGroup {
    /// A row group without statistics.
    pub fn new(num_rows: u64, columns: Vec<ColumnChunk>) -> RowGroup {
        RowGroup {
            num_rows,
            columns,
            statistics: Vec::new(),
            outlined_uncompressed_bytes: 0,
        }
    }
    /// The recorded min/max of column `column`, if any.
    pub fn stats(&self, column: u32) -> Option<&MinMax> {
        self.statistics.get(column as usize)?.as_ref()
    }
    pub fn compressed_bytes(&self) -> u64 {
        self.columns.iter().map(|c| c.compressed_bytes()).sum()
    }
    /// The uncompressed bytes of its chunks (held, or outlined).
    pub fn uncompressed_bytes(&self) -> u64 {
        self.columns
            .iter()
            .map(|c| c.uncompressed_bytes)
            .sum::<u64>()
            + self.outlined_uncompressed_bytes
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileLayout {
    /// Path or object key, relative to the table's location.
    pub path: String,
    /// Whether the layout below is there. A generated table holds only the files its queries
    /// touch ([`FileLayout::placeholder`] for the others: a path and nothing else), since each
    /// generated file comes from its own random stream and can be made alone.
    #[serde(default = "yes")]
    pub materialized: bool,
    /// Whether this is an outline (path, size, footer length, schema, rows per row group; no
    /// chunk) of a file the table's [`LazyFiles`] makes again when it is opened
    /// ([`Table::layout`]): a generated table too large to keep whole.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub outline: bool,
    pub size_bytes: u64,
    /// The Thrift footer's length as the file's last 8 bytes state it (excludes those 8 bytes).
    pub footer_len_bytes: u32,
    /// Index into [`Table::schemas`].
    pub schema: u32,
    pub row_groups: Vec<RowGroup>,
    /// Page table shared by this file's chunks; see [`ColumnChunk::pages`].
    pub pages: Vec<PageLocation>,
}

fn yes() -> bool {
    true
}

impl Default for FileLayout {
    fn default() -> Self {
        FileLayout {
            path: String::new(),
            materialized: true,
            outline: false,
            size_bytes: 0,
            footer_len_bytes: 0,
            schema: 0,
            row_groups: Vec::new(),
            pages: Vec::new(),
        }
    }
}

impl FileLayout {
    /// A file of the table that no query of this run touches: its path only.
    pub fn placeholder(path: String) -> Self {
        FileLayout {
            path,
            materialized: false,
            ..FileLayout::default()
        }
    }

    /// The footer's bytes including the trailing length and magic.
    pub fn footer_range(&self) -> ByteRange {
        let len = (self.footer_len_bytes as u64 + 8).min(self.size_bytes);
        ByteRange::new(self.size_bytes - len, self.size_bytes)
    }
    pub fn num_rows(&self) -> u64 {
        self.row_groups.iter().map(|r| r.num_rows).sum()
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Schema {
    pub columns: Vec<String>,
}

/// The metadata phase of an Iceberg table: what a cold query reads, serially, before data.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IcebergMetadata {
    pub metadata_json_bytes: u64,
    pub manifest_list_bytes: u64,
    pub manifest_bytes: Vec<u64>,
}

/// Where a layout came from. Nothing private beyond the paths.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Provenance {
    /// e.g. `sim 0.1.0 record parquet` or `generator many-small-files seed 42`.
    pub tool: String,
    /// Seconds since the Unix epoch when recorded; `None` for generated layouts.
    pub created_unix_s: Option<u64>,
    pub sources: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Table {
    pub schemas: Vec<Schema>,
    pub files: Vec<FileLayout>,
    pub iceberg: Option<IcebergMetadata>,
    pub provenance: Provenance,
    /// Makes the full layout of the files held as outlines; `None` when every file is here.
    #[serde(skip)]
    pub lazy: Option<LazyFiles>,
}

impl Table {
    pub fn schema_of(&self, file: &FileLayout) -> Option<&Schema> {
        self.schemas.get(file.schema as usize)
    }

    /// The table's columns: its widest schema, when every other schema is a prefix of it (one
    /// schema; or files written before columns were added at the end, as `record iceberg` lays
    /// them out). A query names columns by their index here; a file whose schema is shorter
    /// than a column's index does not hold that column and reads nothing for it. `Err` names
    /// two schemas that disagree at a position: an index would then mean different columns in
    /// different files.
    pub fn columns(&self) -> Result<&Schema, String> {
        let Some(widest) = self.schemas.iter().max_by_key(|s| s.columns.len()) else {
            return Err("the table has no schema".into());
        };
        for (i, s) in self.schemas.iter().enumerate() {
            if let Some(p) = (0..s.columns.len()).find(|&p| s.columns[p] != widest.columns[p]) {
                return Err(format!(
                    "its files have different columns at position {p}: `{}` in schema {i}, `{}` \
                     in the widest; record an Iceberg table (columns matched by field id) or \
                     record files of one schema together",
                    s.columns[p], widest.columns[p]
                ));
            }
        }
        Ok(widest)
    }
    /// Bytes of the files whose layout is here.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size_bytes).sum()
    }

    /// How many files have their layout here or as an outline (the others are placeholders).
    pub fn laid_out_file_count(&self) -> usize {
        self.laid_out_files().count()
    }
    pub fn column_chunk_count(&self) -> usize {
        self.files
            .iter()
            .flat_map(|f| f.row_groups.iter())
            .map(|rg| rg.columns.len())
            .sum()
    }

    /// Checks the invariants the read path relies on: every range inside its file, pages inside
    /// their chunk, page table references in bounds, schema references valid.
    pub fn validate(&self) -> Result<(), LayoutError> {
        bounds::check_table(self)?;
        let mut bounds = FileBounds::default();
        for (fi, _) in self.laid_out_files() {
            // An outline is checked in full: its source makes it again.
            let full = self.layout(limits::u32_of(fi))?;
            bounds.check(fi, &full)?;
            self.validate_file(fi, &full)?;
        }
        Ok(())
    }

    /// Checks one file's layout (file `fi` of this table, or the full layout of its outline):
    /// every range inside the file, pages inside their chunk, the schema reference valid.
    pub fn validate_file(&self, fi: usize, file: &FileLayout) -> Result<(), LayoutError> {
        let at = |what: String| LayoutError::Invalid {
            file: file.path.clone(),
            index: fi,
            what,
        };
        let schema = self
            .schemas
            .get(file.schema as usize)
            .ok_or_else(|| at(format!("schema {} does not exist", file.schema)))?;
        if (file.footer_len_bytes as u64) + 8 > file.size_bytes {
            return Err(at(format!(
                "footer of {} bytes does not fit in a file of {} bytes",
                file.footer_len_bytes, file.size_bytes
            )));
        }
        for (gi, rg) in file.row_groups.iter().enumerate() {
            if rg.columns.len() != schema.columns.len() {
                return Err(at(format!(
                    "row group {gi} has {} column chunks, the schema {}",
                    rg.columns.len(),
                    schema.columns.len()
                )));
            }
            if !rg.statistics.is_empty() && rg.statistics.len() != rg.columns.len() {
                return Err(at(format!(
                    "row group {gi} has statistics for {} columns and {} column chunks; \
                     expected one per chunk or none",
                    rg.statistics.len(),
                    rg.columns.len()
                )));
            }
            for (ci, c) in rg.columns.iter().enumerate() {
                let check = |what: &str, r: ByteRange| {
                    if r.end <= file.size_bytes && r.start <= r.end {
                        Ok(())
                    } else {
                        Err(at(format!(
                            "row group {gi} column {ci}: {what} {r} lies outside the file ({} bytes)",
                            file.size_bytes
                        )))
                    }
                };
                check("chunk", c.range())?;
                if let Some(r) = c.column_index() {
                    check("column index", r)?;
                }
                if let Some(r) = c.offset_index() {
                    check("offset index", r)?;
                }
                if let Some(b) = c.bloom_filter() {
                    check(
                        "bloom filter",
                        ByteRange::with_len(b.offset, b.len.unwrap_or(0) as u64),
                    )?;
                }
                if c.pages_count > 0 {
                    let first = c.pages_first as usize;
                    let end = first + c.pages_count as usize;
                    let Some(pages) = file.pages.get(first..end) else {
                        return Err(at(format!(
                            "row group {gi} column {ci}: pages {first}..{end} beyond the page table ({})",
                            file.pages.len()
                        )));
                    };
                    let data = c.data_pages();
                    if let Some(p) = pages.iter().find(|p| !data.contains(&p.range())) {
                        return Err(at(format!(
                            "row group {gi} column {ci}: page {} lies outside the chunk's data pages {data}",
                            p.range()
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LayoutError {
    /// A count or size past one of the bounds in `limits` (see docs/bounds.md for each reason).
    #[error("{at}: {value} {what}, past the bound of {bound} (limits::{name}, docs/bounds.md)")]
    Bound {
        at: String,
        what: String,
        value: u64,
        name: String,
        bound: u64,
    },
    #[error("file {index} ({file}): {what}")]
    Invalid {
        file: String,
        index: usize,
        what: String,
    },
}

#[cfg(test)]
mod columns_tests {
    use super::*;

    fn schema(cols: &[&str]) -> Schema {
        Schema {
            columns: cols.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn the_widest_schema_when_the_others_are_its_prefixes() {
        let mut t = Table {
            schemas: vec![schema(&["id", "q"]), schema(&["id", "q", "price"])],
            ..Default::default()
        };
        assert_eq!(t.columns().unwrap().columns, ["id", "q", "price"]);
        t.schemas.push(schema(&["id", "name"]));
        let e = t.columns().unwrap_err();
        assert!(e.contains("position 1: `name` in schema 2"), "{e}");
        assert!(Table::default().columns().is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_chunk_stays_small() {
        // 7.7 M of these for the many-small-files table; see the crate doc.
        assert!(
            std::mem::size_of::<ColumnChunk>() <= 80,
            "{}",
            std::mem::size_of::<ColumnChunk>()
        );
    }

    #[test]
    fn absent_parts_read_as_none() {
        let c = ColumnChunk {
            chunk_start: 100,
            data_len: 50,
            bloom_filter_offset: NO_BLOOM_FILTER,
            ..Default::default()
        };
        assert_eq!(c.dictionary_page(), None);
        assert_eq!(c.column_index(), None);
        assert_eq!(c.offset_index(), None);
        assert_eq!(c.bloom_filter(), None);
        assert_eq!(c.data_pages(), ByteRange::new(100, 150));
        let file = FileLayout::default();
        assert!(c.pages(&file).is_none());
    }

    #[test]
    fn implicit_single_page() {
        let c = ColumnChunk {
            chunk_start: 100,
            dictionary_len: 20,
            data_len: 50,
            offset_index_offset: 500,
            offset_index_len: 10,
            bloom_filter_offset: NO_BLOOM_FILTER,
            ..Default::default()
        };
        let file = FileLayout::default();
        let pages = c.pages(&file).unwrap();
        assert_eq!(pages.len(), 1);
        assert_eq!(pages.get(0).unwrap().range(), ByteRange::new(120, 170));
    }
}
