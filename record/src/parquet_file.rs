//! One Parquet file's footer and page indexes mapped onto [`layout::FileLayout`].
//!
//! The `parquet` crate parses the Thrift; this module maps what it reports onto the layout
//! types, checking every offset and length it copies (a footer is user input: a negative offset
//! or a chunk beyond the end of the file is an error naming the file, never a panic).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use layout::{ColumnChunk, FileLayout, PageLocation, RowGroup, NO_BLOOM_FILTER};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::error::RecordError;
use crate::footer::{self, ChunkFacts, FooterFacts};
use crate::thrift;

/// The trailing 8 bytes of a Parquet file: footer length (u32, little-endian) and magic.
const TAIL_BYTES: u64 = 8;
const MAGIC: &[u8; 4] = b"PAR1";
/// Magic of a file whose footer is encrypted; its footer cannot be read without keys.
const MAGIC_ENCRYPTED: &[u8; 4] = b"PARE";

/// One recorded file: its layout (with `schema` still 0; the table assigns it), the leaf
/// column paths of its schema, joined with '.', and each leaf's Parquet `field_id` if set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedFile {
    pub layout: FileLayout,
    pub columns: Vec<String>,
    pub field_ids: Vec<Option<i32>>,
}

/// Reads the footer and page indexes of the Parquet file at `path` and maps them onto a
/// [`FileLayout`] whose `path` is `layout_path`.
///
/// The footer is decoded by the `parquet` crate; only when it rejects the footer (or panics on
/// it) does a tolerant decoder (`thrift.rs`) try, which skips fields whose type is not the one
/// the format now gives them; if that fails too, the `parquet` crate's error is returned.
///
/// Where the dictionary page is:
/// - the dictionary page offset is trusted only when it lies after the leading magic and
///   before the first data page: some writers store 0 there (`dict-page-offset-zero.parquet`
///   in parquet-testing), and then the chunk starts at the data page offset;
/// - when the offset index puts the first data page after the data page offset, the bytes in
///   between are the dictionary page (some parquet-mr versions and polars omit the dictionary
///   page offset and point `data_page_offset` at the dictionary page; arrow-rs and hyparquet
///   read such files the same way).
pub fn record_parquet_file(path: &Path, layout_path: &str) -> Result<RecordedFile, RecordError> {
    let mut file = File::open(path).map_err(|e| RecordError::io(path, e))?;
    let size_bytes = file.metadata().map_err(|e| RecordError::io(path, e))?.len();
    let footer_len_bytes = read_footer_len(&mut file, size_bytes, path)?;
    let footer_start = size_bytes - TAIL_BYTES - u64::from(footer_len_bytes);
    let footer = read_at(&mut file, footer_start, u64::from(footer_len_bytes))
        .map_err(|e| RecordError::invalid(path, e))?;
    thrift::check_walkable(&footer).map_err(|e| {
        RecordError::invalid(path, format!("the footer is not well-formed Thrift: {e}"))
    })?;
    thrift::check_schema_depth(&footer).map_err(|e| RecordError::invalid(path, e))?;
    let facts = match parse_metadata(&file, path) {
        Ok(metadata) => footer::from_parquet_metadata(&metadata),
        Err(primary) => match tolerant_facts(&mut file, size_bytes, footer_len_bytes) {
            Ok(facts) => facts,
            Err(_) => return Err(primary),
        },
    };
    let FooterFacts {
        columns,
        field_ids,
        row_groups: stated_groups,
    } = facts;

    let mut pages = Vec::new();
    let mut row_groups = Vec::with_capacity(stated_groups.len());
    for (gi, rg) in stated_groups.iter().enumerate() {
        let at = |what: String| RecordError::invalid(path, format!("row group {gi}: {what}"));
        if rg.chunks.len() != columns.len() {
            return Err(at(format!(
                "{} column chunks, but the schema has {} leaf columns",
                rg.chunks.len(),
                columns.len()
            )));
        }
        let num_rows = u64::try_from(rg.num_rows)
            .map_err(|_| at(format!("negative row count {}", rg.num_rows)))?;
        let mut chunks = Vec::with_capacity(rg.chunks.len());
        for (ci, c) in rg.chunks.iter().enumerate() {
            let chunk = map_chunk(c, num_rows, &mut pages)
                .map_err(|what| at(format!("column {ci} ({}): {what}", c.path)))?;
            chunks.push(chunk);
        }
        let mut statistics: Vec<_> = rg.chunks.iter().map(|c| c.min_max.clone()).collect();
        if statistics.iter().all(Option::is_none) {
            statistics.clear();
        }
        row_groups.push(RowGroup {
            num_rows,
            columns: chunks,
            statistics,
            outlined_uncompressed_bytes: 0,
        });
    }

    let layout = FileLayout {
        path: layout_path.to_string(),
        materialized: true,
        outline: false,
        size_bytes,
        footer_len_bytes,
        schema: 0,
        row_groups,
        pages,
    };
    let layout = check_inside(layout, columns.len(), path)?;
    Ok(RecordedFile {
        layout,
        columns,
        field_ids,
    })
}

/// The footer and offset indexes decoded by the tolerant decoder.
fn tolerant_facts(
    file: &mut File,
    size_bytes: u64,
    footer_len: u32,
) -> Result<FooterFacts, String> {
    let footer_start = size_bytes - TAIL_BYTES - u64::from(footer_len);
    let footer = read_at(file, footer_start, u64::from(footer_len))?;
    let mut facts = thrift::decode_footer(&footer)?;
    let mut index_bytes: u64 = 0;
    for rg in &mut facts.row_groups {
        for c in &mut rg.chunks {
            if let (Some(offset), Some(len)) = c.offset_index {
                // Bad offsets are reported by the mapping, which checks every offset.
                let (Ok(offset), Ok(len)) = (u64::try_from(offset), u64::try_from(len)) else {
                    continue;
                };
                if offset.saturating_add(len) <= footer_start {
                    index_bytes = add_index_bytes(index_bytes, len, footer_start)?;
                    c.pages = Some(thrift::decode_offset_index(&read_at(file, offset, len)?)?);
                }
            }
        }
    }
    Ok(facts)
}

fn read_at(file: &mut File, offset: u64, len: u64) -> Result<Vec<u8>, String> {
    let len = usize::try_from(len).map_err(|_| format!("{len} bytes do not fit in memory"))?;
    let mut buf = vec![0u8; len];
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_exact(&mut buf))
        .map_err(|e| format!("reading {len} bytes at {offset}: {e}"))?;
    Ok(buf)
}

/// Reads and checks the last 8 bytes (footer length and magic) and the leading magic.
fn read_footer_len(file: &mut File, size_bytes: u64, path: &Path) -> Result<u32, RecordError> {
    // Leading magic, trailing length and magic: the smallest possible file.
    if size_bytes < 4 + TAIL_BYTES {
        return Err(RecordError::invalid(
            path,
            format!("{size_bytes} bytes is too small for a Parquet file (at least 12: magic, footer length, magic)"),
        ));
    }
    let mut head = [0u8; 4];
    file.read_exact(&mut head)
        .map_err(|e| RecordError::io(path, e))?;
    let mut tail = [0u8; TAIL_BYTES as usize];
    file.seek(SeekFrom::Start(size_bytes - TAIL_BYTES))
        .and_then(|_| file.read_exact(&mut tail))
        .map_err(|e| RecordError::io(path, e))?;
    let [l0, l1, l2, l3, m0, m1, m2, m3] = tail;
    let magic = [m0, m1, m2, m3];
    if &magic == MAGIC_ENCRYPTED {
        return Err(RecordError::invalid(
            path,
            "the footer is encrypted (magic PARE); encrypted footers cannot be recorded",
        ));
    }
    if &magic != MAGIC || &head != MAGIC {
        return Err(RecordError::invalid(
            path,
            format!(
                "not a Parquet file: it starts with {head:?} and ends with {magic:?}, both should be \"PAR1\""
            ),
        ));
    }
    let footer_len_bytes = u32::from_le_bytes([l0, l1, l2, l3]);
    if u64::from(footer_len_bytes) + TAIL_BYTES + 4 > size_bytes {
        return Err(RecordError::invalid(
            path,
            format!(
                "the footer length field says {footer_len_bytes} bytes, more than the {} bytes between the magics",
                size_bytes - TAIL_BYTES - 4
            ),
        ));
    }
    Ok(footer_len_bytes)
}

/// Parses the footer and, where present, the page indexes. The `parquet` crate's Thrift skip
/// has no bound on work, so it sees only Thrift that [`thrift::check_walkable`] walked first:
/// the footer (checked by the caller), then every page index the footer points at (a
/// 714-byte file the fuzzer found made it spin in a column index). A panic inside the
/// `parquet` crate on a malformed file is turned into an error naming the file.
fn parse_metadata(file: &File, path: &Path) -> Result<ParquetMetaData, RecordError> {
    let footer_only = parse_with(file, path, PageIndexPolicy::Skip)?;
    check_page_indexes(file, &footer_only).map_err(|e| RecordError::invalid(path, e))?;
    parse_with(file, path, PageIndexPolicy::Optional)
}

/// `total` index bytes so far plus `len`, refused past the file's `size` bytes: the page
/// indexes would then share bytes (or lie), which no writer does.
fn add_index_bytes(total: u64, len: u64, size: u64) -> Result<u64, String> {
    let sum = total.saturating_add(len);
    if sum > size {
        return Err(format!(
            "the page indexes' bytes add up to more than the file's {size} bytes: indexes share \
             bytes, which no writer produces"
        ));
    }
    Ok(sum)
}

/// Walks every column and offset index the footer points at (inside the file) as Thrift.
fn check_page_indexes(file: &File, metadata: &ParquetMetaData) -> Result<(), String> {
    let mut file = file
        .try_clone()
        .map_err(|e| format!("reopening the file: {e}"))?;
    let size = file
        .metadata()
        .map_err(|e| format!("reading the file's size: {e}"))?
        .len();
    // Page indexes occupy bytes of their own: ones that share bytes would be walked, decoded
    // and mapped once per chunk that points at them (`MAX_RECORDED_PAGES_PER_FILE`).
    let mut index_bytes: u64 = 0;
    for (gi, rg) in metadata.row_groups().iter().enumerate() {
        for (ci, c) in rg.columns().iter().enumerate() {
            let indexes = [
                ("column index", c.column_index_range()),
                ("offset index", c.offset_index_range()),
            ];
            for (what, range) in indexes {
                let Some(r) = range.filter(|r| r.start <= r.end && r.end <= size) else {
                    continue; // absent, or outside the file: the parquet crate refuses it
                };
                index_bytes = add_index_bytes(index_bytes, r.end - r.start, size)
                    .map_err(|e| format!("row group {gi} column {ci}: the {what}: {e}"))?;
                let bytes = read_at(&mut file, r.start, r.end - r.start)?;
                thrift::check_walkable(&bytes).map_err(|e| {
                    format!("row group {gi} column {ci}: the {what} is not well-formed Thrift: {e}")
                })?;
            }
        }
    }
    Ok(())
}

fn parse_with(
    file: &File,
    path: &Path,
    policy: PageIndexPolicy,
) -> Result<ParquetMetaData, RecordError> {
    let parse = || {
        ParquetMetaDataReader::new()
            .with_page_index_policy(policy)
            .parse_and_finish(file)
    };
    match catch_unwind(AssertUnwindSafe(parse)) {
        Ok(Ok(metadata)) => Ok(metadata),
        Ok(Err(source)) => Err(RecordError::Parquet {
            path: path.to_path_buf(),
            source,
        }),
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "(no message)".to_string());
            Err(RecordError::ParquetPanic {
                path: path.to_path_buf(),
                message,
            })
        }
    }
}

fn non_negative(v: i64, what: &str) -> Result<u64, String> {
    u64::try_from(v).map_err(|_| format!("negative {what} {v}"))
}

fn fits_u32(v: u64, what: &str) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("{what} of {v} bytes exceeds 4 GiB"))
}

/// Maps one column chunk, appending its pages (if more than the implicit single page) to the
/// file's page table.
fn map_chunk(
    c: &ChunkFacts,
    row_group_rows: u64,
    pages: &mut Vec<PageLocation>,
) -> Result<ColumnChunk, String> {
    let data_page_offset = non_negative(c.data_page_offset, "data_page_offset")?;
    let compressed = non_negative(c.compressed_bytes, "total_compressed_size")?;
    let uncompressed_bytes = non_negative(c.uncompressed_bytes, "total_uncompressed_size")?;
    let codec = c.codec.ok_or("unknown compression codec")?;

    // See the dictionary rules on record_parquet_file.
    let chunk_start = match c.dictionary_page_offset {
        Some(d) if d >= 4 && (d as u64) < data_page_offset => d as u64,
        _ => data_page_offset,
    };
    let chunk_end = chunk_start
        .checked_add(compressed)
        .ok_or_else(|| format!("chunk at {chunk_start} of {compressed} bytes overflows"))?;
    let first_page = c.pages.as_ref().and_then(|p| p.first()).map(|p| p.offset);
    let data_start = match first_page {
        Some(first)
            if first > 0 && first as u64 > data_page_offset && (first as u64) < chunk_end =>
        {
            first as u64
        }
        _ => data_page_offset,
    };
    let dictionary_len = fits_u32(data_start - chunk_start, "dictionary page")?;
    let data_len = compressed.checked_sub(u64::from(dictionary_len)).ok_or_else(|| {
        format!(
            "total_compressed_size {compressed} is smaller than the dictionary page ({dictionary_len} bytes from offset {chunk_start} to the first data page at {data_start})"
        )
    })?;

    let (column_index_offset, column_index_len) = index_location(c.column_index, "column index")?;
    let (offset_index_offset, offset_index_len) = index_location(c.offset_index, "offset index")?;
    let (bloom_filter_offset, bloom_filter_len) = match c.bloom_filter_offset {
        None => (NO_BLOOM_FILTER, 0),
        Some(o) => {
            let offset = non_negative(o, "bloom_filter_offset")?;
            let len = match c.bloom_filter_len {
                None => 0,
                Some(l) => {
                    u32::try_from(l).map_err(|_| format!("negative bloom_filter_length {l}"))?
                }
            };
            (offset, len)
        }
    };

    let mut chunk = ColumnChunk {
        chunk_start,
        data_len,
        uncompressed_bytes,
        column_index_offset,
        offset_index_offset,
        bloom_filter_offset,
        dictionary_len,
        column_index_len,
        offset_index_len,
        bloom_filter_len,
        pages_first: 0,
        pages_count: 0,
        codec,
    };

    if let Some(locations) = &c.pages {
        if offset_index_len == 0 {
            return Err(
                "page locations were decoded, but the chunk records no offset index".into(),
            );
        }
        let mut mapped = Vec::with_capacity(locations.len());
        for (pi, loc) in locations.iter().enumerate() {
            let page = PageLocation {
                offset: non_negative(loc.offset, "page offset")
                    .map_err(|e| format!("page {pi}: {e}"))?,
                first_row_index: non_negative(loc.first_row_index, "first_row_index")
                    .map_err(|e| format!("page {pi}: {e}"))?,
                compressed_page_size: u32::try_from(loc.compressed_page_size).map_err(|_| {
                    format!(
                        "page {pi}: negative compressed_page_size {}",
                        loc.compressed_page_size
                    )
                })?,
            };
            if !chunk.data_pages().contains(&page.range()) {
                return Err(format!(
                    "page {pi} at {} lies outside the chunk's data pages {}",
                    page.range(),
                    chunk.data_pages()
                ));
            }
            if page.first_row_index >= row_group_rows.max(1) {
                return Err(format!(
                    "page {pi}: first_row_index {} is not below the row group's {row_group_rows} rows",
                    page.first_row_index
                ));
            }
            mapped.push(page);
        }
        let implicit = PageLocation {
            offset: chunk.data_page_offset(),
            first_row_index: 0,
            compressed_page_size: chunk.data_len.min(u64::from(u32::MAX)) as u32,
        };
        // One page covering all data pages is the implicit page; store nothing for it.
        if !(mapped.len() == 1 && mapped.first() == Some(&implicit)) {
            if (pages.len() + mapped.len()) as u64 > limits::MAX_RECORDED_PAGES_PER_FILE {
                return Err(format!(
                    "the offset indexes list more than {} pages (`MAX_RECORDED_PAGES_PER_FILE`)",
                    limits::MAX_RECORDED_PAGES_PER_FILE
                ));
            }
            chunk.pages_first = u32::try_from(pages.len())
                .map_err(|_| "more than 4 G pages in one file".to_string())?;
            chunk.pages_count = u32::try_from(mapped.len())
                .map_err(|_| "more than 4 G pages in one chunk".to_string())?;
            pages.extend(mapped);
        }
    }
    Ok(chunk)
}

/// An index's (offset, length), or (0, 0) when absent. An offset without a length cannot be
/// read, so it is an error rather than a silent 0.
fn index_location(stated: (Option<i64>, Option<i32>), what: &str) -> Result<(u64, u32), String> {
    match stated {
        (None, None) => Ok((0, 0)),
        (Some(o), Some(l)) => Ok((
            non_negative(o, &format!("{what} offset"))?,
            u32::try_from(l).map_err(|_| format!("negative {what} length {l}"))?,
        )),
        (Some(o), None) => Err(format!("{what} at offset {o} has no length")),
        (None, Some(l)) => Err(format!("{what} of length {l} has no offset")),
    }
}

/// Every range recorded must lie inside the file. Reuses the layout crate's own check so that
/// what this crate records always passes [`layout::Table::validate`].
fn check_inside(
    layout: FileLayout,
    columns: usize,
    path: &Path,
) -> Result<FileLayout, RecordError> {
    let mut table = layout::Table {
        schemas: vec![layout::Schema {
            columns: vec![String::new(); columns],
        }],
        files: vec![layout],
        ..Default::default()
    };
    let checked = table.validate().map_err(|e| match e {
        layout::LayoutError::Invalid { what, .. } => RecordError::invalid(path, what),
        bound @ layout::LayoutError::Bound { .. } => RecordError::invalid(path, bound.to_string()),
    });
    checked?;
    table
        .files
        .pop()
        .ok_or_else(|| RecordError::invalid(path, "internal: the checked layout vanished"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footer::RawPage;
    use proptest::prelude::*;

    fn testing_data() -> std::path::PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/parquet-testing/data");
        assert!(
            dir.is_dir(),
            "{} is missing (apache/parquet-testing, in testdata/parquet-testing)",
            dir.display()
        );
        dir
    }

    /// The tolerant decoder must state the same facts as the `parquet` crate wherever the
    /// latter reads the file, page locations included.
    #[test]
    fn tolerant_decoder_agrees_with_the_parquet_crate() {
        let mut compared = 0;
        for entry in std::fs::read_dir(testing_data()).unwrap() {
            let path = entry.unwrap().path();
            let mut file = File::open(&path).unwrap();
            let size = file.metadata().unwrap().len();
            let footer_len = read_footer_len(&mut file, size, &path).unwrap();
            let Ok(metadata) = parse_metadata(&file, &path) else {
                continue;
            };
            let mut want = footer::from_parquet_metadata(&metadata);
            // The tolerant decoder reads no statistics (a file it alone can read prunes nothing).
            want.row_groups
                .iter_mut()
                .flat_map(|rg| rg.chunks.iter_mut())
                .for_each(|c| c.min_max = None);
            let got = tolerant_facts(&mut file, size, footer_len).unwrap();
            assert!(got == want, "{}: the decoders differ", path.display());
            compared += 1;
        }
        assert!(compared >= 15, "{compared} files compared");
    }

    fn facts() -> impl Strategy<Value = ChunkFacts> {
        let small = -20i64..5000;
        (
            small.clone(),
            proptest::option::of(-5i64..5000),
            small.clone(),
            proptest::option::of(prop::collection::vec(
                (small.clone(), -5i32..3000, -2i64..50),
                0..5,
            )),
            proptest::option::of(small.clone()),
            proptest::option::of(-5i32..3000),
        )
            .prop_map(
                |(dpo, dict, compressed, pages, bloom, bloom_len)| ChunkFacts {
                    path: "c".into(),
                    codec: Some(layout::Codec::Snappy),
                    data_page_offset: dpo,
                    dictionary_page_offset: dict,
                    compressed_bytes: compressed,
                    uncompressed_bytes: compressed.abs(),
                    column_index: (None, None),
                    offset_index: if pages.is_some() {
                        (Some(100), Some(10))
                    } else {
                        (None, None)
                    },
                    bloom_filter_offset: bloom,
                    bloom_filter_len: bloom_len,
                    min_max: None,
                    pages: pages.map(|p| {
                        p.into_iter()
                            .map(|(offset, compressed_page_size, first_row_index)| RawPage {
                                offset,
                                compressed_page_size,
                                first_row_index,
                            })
                            .collect()
                    }),
                },
            )
    }

    proptest! {
        /// Whatever a footer states, mapping never panics, and what it accepts keeps its pages
        /// inside the chunk's data pages.
        #[test]
        fn mapping_arbitrary_facts_never_panics(c in facts(), rows in 0u64..60) {
            let mut pages = Vec::new();
            if let Ok(chunk) = map_chunk(&c, rows, &mut pages) {
                prop_assert_eq!(chunk.compressed_bytes() as i64, c.compressed_bytes);
                let file = FileLayout { pages: pages.clone(), ..Default::default() };
                if let Some(listed) = chunk.pages(&file) {
                    for p in listed.iter() {
                        prop_assert!(chunk.data_pages().contains(&p.range()));
                    }
                }
            }
        }
    }
}
