//! Compact layout files: a [`Table`] as bytes, and back.
//!
//! A 17,554-file x 437-column table has 7.7 M column chunks, so the format is columnar: each
//! field of every chunk (start, lengths, index offsets...) goes to its own stream of LEB128
//! varints, and each value is written as the difference from what the previous one predicts
//! (a chunk starts where the one before it ended, an offset index where the previous offset
//! index ended, ...). A writer's layout then turns into long runs of zeros and small numbers,
//! which a general-purpose compressor (raw DEFLATE, `miniz_oxide`, pure Rust; read back with
//! `libdeflate`, faster at inflating) shrinks further.
//!
//! File layout (integers in the header are little-endian):
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `RPLAYOUT` |
//! | 8..12 | format version (u32), [`VERSION`] |
//! | 12 | compression of the index and of every block: 0 none, 1 raw DEFLATE |
//! | 13..16 | reserved, zero |
//! | 16..24 | decoded index length (u64) |
//! | 24..28 | CRC-32 of bytes 0..24, bytes 28..36 and everything after byte 36: any damaged byte is caught |
//! | 28..36 | stored length (u64): the rest of the file |
//! | 36..44 | stored index length (u64) |
//! | 44.. | the index, stored as stated; then each file's block, stored as stated, in file order |
//!
//! A decoded index or block is a stream count, the byte length of each stream, then the
//! streams, each holding one field. The index uses two: `meta` (provenance, Iceberg metadata,
//! schemas, the file count, then each file's block length stored and decoded) and `paths`
//! (each file's path, as the prefix it shares with the path before and its own suffix). A
//! block holds one file's values after its path, one field a stream, in row group / chunk
//! order, its codec starting at `Uncompressed`. A run that keeps a few files of a large table
//! reads the index and inflates only their blocks.
//!
//! Versions 1 and 2 (still read) had one body for the whole table (at byte 36, its decoded
//! length in bytes 16..24): the index's streams and every file's values in one set of
//! streams, compressed as one. Version 2 added two streams for row-group statistics (a chunk
//! flag says a chunk has them): `stat_kind` (the value kind, and a decimal's scale or a
//! timestamp's unit) and `stat_values` (min then max); version 1 has none.
//!
//! The module does no IO: the caller opens files and passes a writer or the bytes. Any byte
//! string given to [`read_table`] yields a [`Table`] or a [`FormatError`] that says what is wrong
//! and where; it never panics. The format is lossless for any table whose ranges do not
//! overflow `u64` (see [`FormatError::Overflow`]); it does not run [`Table::validate`].

use limits::{u32_of, usize_of};

mod kept;
pub use kept::{LayoutBody, Skeleton};

use crate::{
    Codec, ColumnChunk, FileLayout, IcebergMetadata, MinMax, PageLocation, Provenance, RowGroup,
    Schema, StatValue, Table, TimeUnit, NO_BLOOM_FILTER,
};

/// The first 8 bytes of every layout file.
pub const MAGIC: [u8; 8] = *b"RPLAYOUT";
/// The format version this code writes.
pub const VERSION: u32 = 3;
/// The oldest version this code reads (version 1: no statistics streams).
pub const OLDEST_READ_VERSION: u32 = 1;
/// The first version whose files are an index and a block per file.
const FIRST_BLOCK_VERSION: u32 = 3;
/// Bytes of the fixed header before the body.
pub const HEADER_BYTES: usize = 36;

/// Where a Parquet file's first column chunk starts: after the 4-byte `PAR1` magic.
const FIRST_CHUNK_OFFSET: u64 = 4;

/// How the body is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Body stored as is (for debugging; about 3-4x larger).
    None,
    /// Raw DEFLATE at `level` 0..=10 (miniz levels: 1 fastest, 6 default, 10 smallest).
    Deflate { level: u8 },
}

/// Options for [`write_table_with`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    pub compression: Compression,
}

impl Default for WriteOptions {
    /// DEFLATE level 1: on layouts it is within a few percent of level 6 in size and several
    /// times faster.
    fn default() -> Self {
        Self {
            compression: Compression::Deflate { level: 1 },
        }
    }
}

/// What went wrong writing or reading a layout file.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("file {file} ({path}) is a placeholder (a generated table holds only the files its queries touch); only whole tables can be stored")]
    Placeholder { file: usize, path: String },
    #[error("not a layout file: it starts with {found:?}; a layout file starts with the 8 bytes `RPLAYOUT`")]
    BadMagic { found: Vec<u8> },
    #[error("layout file truncated: {what} needs bytes {offset}..{needed_end}, the file has {available} bytes")]
    Truncated {
        what: &'static str,
        offset: u64,
        needed_end: u64,
        available: u64,
    },
    #[error("layout file version {found} is not supported; this build reads versions {OLDEST_READ_VERSION} to {supported}")]
    UnsupportedVersion { found: u32, supported: u32 },
    #[error(
        "byte {offset}: unknown body compression {found}; expected 0 (none) or 1 (raw DEFLATE)"
    )]
    UnknownCompression { found: u8, offset: u64 },
    #[error("bytes 13..16: reserved header bytes are {found:?}, expected zeros (a newer or corrupt file)")]
    Reserved { found: [u8; 3] },
    #[error("bytes 28..36: the header states a body of {stated} bytes but {actual} bytes follow the header")]
    BodyLength { stated: u64, actual: u64 },
    #[error("the bytes stored from byte {at} do not decompress: {detail}")]
    Decompress { at: u64, detail: String },
    #[error("the bytes stored from byte {at} decode to {actual} bytes where {stated} are stated (the header's bytes 16..24 for the body or index, the index for a file's block)")]
    DecodedLength { at: u64, stated: u64, actual: u64 },
    #[error("checksum mismatch: the header (bytes 24..28) states CRC-32 {stated:#010x}, the file's bytes give {computed:#010x}: the file is corrupt")]
    Checksum { stated: u32, computed: u32 },
    #[error("byte {offset} of the decoded body (stream `{stream}`): {what}")]
    Corrupt {
        stream: &'static str,
        offset: u64,
        what: String,
    },
    /// A file's block (version 3) is damaged: `error` says where inside the decoded block.
    #[error("file {file} ({path}), its block stored from byte {at}: {error}")]
    Block {
        file: u64,
        path: String,
        at: u64,
        error: Box<FormatError>,
    },
    #[error(
        "file {file} ({path}): {what} overflows a 64-bit offset; such a table cannot be stored"
    )]
    Overflow {
        file: usize,
        path: String,
        what: String,
    },
}

/// The layout file of `table` with the default options (DEFLATE level 1).
pub fn write_table(table: &Table) -> Result<Vec<u8>, FormatError> {
    write_table_with(table, &WriteOptions::default())
}

/// The layout file of `table`: its bytes (the caller writes them where it likes; this crate
/// does no IO).
pub fn write_table_with(table: &Table, options: &WriteOptions) -> Result<Vec<u8>, FormatError> {
    if let Some((i, f)) = table
        .files
        .iter()
        .enumerate()
        .find(|(_, f)| !f.materialized)
    {
        return Err(FormatError::Placeholder {
            file: i,
            path: f.path.clone(),
        });
    }
    let store = |body: &[u8]| -> Vec<u8> {
        match options.compression {
            Compression::None => body.to_vec(),
            Compression::Deflate { level } => {
                miniz_oxide::deflate::compress_to_vec(body, level.min(10))
            }
        }
    };
    // Each file's block, then the index that says where each one is.
    let mut blocks = Vec::new();
    let mut index = Encoder::new();
    encode_meta(&mut index, table);
    let mut prev_path: &[u8] = &[];
    for (fi, file) in table.files.iter().enumerate() {
        let mut e = Encoder::new();
        encode_file(&mut e, fi, file, &mut Codec::Uncompressed)?;
        let block = streams_body(&e);
        let stored = store(&block);
        encode_path(&mut index, &mut prev_path, &file.path);
        index.u(S::Meta, stored.len() as u64);
        index.u(S::Meta, block.len() as u64);
        blocks.extend_from_slice(&stored);
    }
    let index = streams_body(&index);
    let index_stored = store(&index);
    let code = match options.compression {
        Compression::None => 0u8,
        Compression::Deflate { .. } => 1u8,
    };
    let mut out = Vec::with_capacity(HEADER_BYTES + 8 + index_stored.len() + blocks.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[code, 0, 0, 0]);
    out.extend_from_slice(&(index.len() as u64).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    let stored_len = 8 + index_stored.len() + blocks.len();
    out.extend_from_slice(&(stored_len as u64).to_le_bytes());
    out.extend_from_slice(&(index_stored.len() as u64).to_le_bytes());
    out.extend_from_slice(&index_stored);
    out.extend_from_slice(&blocks);
    let crc = checksum(&out[..HEADER_BYTES], &out[HEADER_BYTES..]);
    out[24..28].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// Reads a layout file from its bytes.
pub fn read_table(bytes: &[u8]) -> Result<Table, FormatError> {
    let parts = checked_parts(bytes)?;
    if parts.version < FIRST_BLOCK_VERSION {
        return decode_body(&parts.body, parts.version);
    }
    let body = LayoutBody::from_parts(parts);
    let skeleton = body.skeleton()?;
    body.table_keeping(&skeleton, |_| true)
}

/// A layout file's parts, checked against its header.
struct Parts<'a> {
    version: u32,
    /// The compression byte: 0 none, 1 raw DEFLATE.
    code: u8,
    /// Decoded (borrowed when stored as is): the whole table's streams before version 3, the
    /// index from version 3.
    body: std::borrow::Cow<'a, [u8]>,
    /// The files' blocks as stored (empty before version 3), and where they start in the file.
    blocks: &'a [u8],
    blocks_at: u64,
}

/// The header checked, the body or index decompressed, the blocks found.
fn checked_parts(bytes: &[u8]) -> Result<Parts<'_>, FormatError> {
    let available = bytes.len() as u64;
    let field = |what: &'static str, start: usize, len: usize| -> Result<&[u8], FormatError> {
        bytes.get(start..start + len).ok_or(FormatError::Truncated {
            what,
            offset: start as u64,
            needed_end: (start + len) as u64,
            available,
        })
    };
    let magic = bytes.get(..MAGIC.len()).unwrap_or(bytes);
    if magic != MAGIC {
        return Err(FormatError::BadMagic {
            found: magic.to_vec(),
        });
    }
    let version = u32::from_le_bytes(le_array(field("the format version", 8, 4)?));
    if !(OLDEST_READ_VERSION..=VERSION).contains(&version) {
        return Err(FormatError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    let flags = field("the compression byte", 12, 4)?;
    let code = flags[0];
    if flags[1..] != [0, 0, 0] {
        return Err(FormatError::Reserved {
            found: [flags[1], flags[2], flags[3]],
        });
    }
    if code > 1 {
        return Err(FormatError::UnknownCompression {
            found: code,
            offset: 12,
        });
    }
    let decoded_len = u64::from_le_bytes(le_array(field("the decoded body length", 16, 8)?));
    let crc = u32::from_le_bytes(le_array(field("the checksum", 24, 4)?));
    let stored_len = u64::from_le_bytes(le_array(field("the stored body length", 28, 8)?));
    let stored = &bytes[HEADER_BYTES..];
    if stored_len != stored.len() as u64 {
        return Err(FormatError::BodyLength {
            stated: stored_len,
            actual: stored.len() as u64,
        });
    }
    let computed = checksum(&bytes[..HEADER_BYTES], stored);
    if computed != crc {
        return Err(FormatError::Checksum {
            stated: crc,
            computed,
        });
    }
    let (body_at, body_stored, blocks) = if version < FIRST_BLOCK_VERSION {
        (HEADER_BYTES, stored, &stored[stored.len()..])
    } else {
        let index_len = u64::from_le_bytes(le_array(field("the stored index length", 36, 8)?));
        let at = HEADER_BYTES + 8;
        let rest = &bytes[at..];
        if index_len > rest.len() as u64 {
            return Err(FormatError::Truncated {
                what: "the index (its stored length in bytes 36..44)",
                offset: at as u64,
                needed_end: (at as u64).saturating_add(index_len),
                available,
            });
        }
        let (index, blocks) = rest.split_at(usize_of(index_len)); // at most `rest.len()`
        (at, index, blocks)
    };
    let body = stored_bytes(code, body_stored, decoded_len, body_at as u64, None)?;
    Ok(Parts {
        version,
        code,
        body,
        blocks,
        blocks_at: (body_at + body_stored.len()) as u64,
    })
}

/// `stored` (at byte `at` of the file) decoded as the compression byte `code` says, into the
/// `decoded_len` bytes its header or index states.
fn stored_bytes<'s>(
    code: u8,
    stored: &'s [u8],
    decoded_len: u64,
    at: u64,
    block: Option<&mut BlockInflater>,
) -> Result<std::borrow::Cow<'s, [u8]>, FormatError> {
    let body: std::borrow::Cow<'_, [u8]> = match code {
        0 => std::borrow::Cow::Borrowed(stored),
        1 => std::borrow::Cow::Owned(inflate(stored, decoded_len, at, block)?),
        found => return Err(FormatError::UnknownCompression { found, offset: 12 }),
    };
    if body.len() as u64 != decoded_len {
        return Err(FormatError::DecodedLength {
            at,
            stated: decoded_len,
            actual: body.len() as u64,
        });
    }
    Ok(body)
}

/// DEFLATE can expand a stream at most about 1032 times (258 bytes from each 2-bit code,
/// rounded up): a stated length past this bound cannot be the stream's, and is refused before
/// the output is allocated.
const MAX_DEFLATE_RATIO: u64 = 1032;

/// Inflates raw DEFLATE `stored` (at byte `at` of the file) into exactly `decoded_len` bytes,
/// with `block`'s decompressor when given (a run's blocks share one) or one of its own.
///
/// `libdeflate` (through `libdeflater`, its maintained binding): the fastest inflater for a
/// whole buffer whose decoded length is known, as every stream here is. Loading a recorded
/// table is mostly inflating and decoding it: on `many-small-files-iceberg`'s 280 blocks it
/// took 9.5 M instructions where `miniz_oxide` took 26 M (whose per-block Huffman table
/// set-up alone was 6 M); `zlib-rs` was chosen before for whole bodies (twice `miniz_oxide`'s
/// speed there) but sets its state up per stream, a third of inflating a block.
fn inflate(
    stored: &[u8],
    decoded_len: u64,
    at: u64,
    block: Option<&mut BlockInflater>,
) -> Result<Vec<u8>, FormatError> {
    let mut out = vec![0u8; inflated_len(stored, decoded_len, at)?];
    let mut own = BlockInflater::default();
    let d = block.unwrap_or(&mut own);
    let written = d
        .get_or_insert_with(libdeflater::Decompressor::new)
        .deflate_decompress(stored, &mut out)
        .map_err(|e| FormatError::Decompress {
            at,
            detail: match e {
                libdeflater::DecompressionError::BadData => "not valid raw DEFLATE".to_string(),
                libdeflater::DecompressionError::InsufficientSpace => {
                    format!("it decodes to more than the {decoded_len} bytes stated")
                }
            },
        })?;
    out.truncate(written);
    Ok(out)
}

/// `decoded_len` as a length to allocate, if DEFLATE can expand `stored` to it: the stated
/// length bounds the output, so a corrupt stream cannot balloon.
fn inflated_len(stored: &[u8], decoded_len: u64, at: u64) -> Result<usize, FormatError> {
    let bound = (stored.len() as u64)
        .saturating_mul(MAX_DEFLATE_RATIO)
        .saturating_add(1024);
    let too_long = || FormatError::Decompress {
        at,
        detail: format!(
            "{decoded_len} decoded bytes are stated (the header or the index), more than DEFLATE \
             can expand {} stored bytes to (at most {bound}) or this machine can address",
            stored.len()
        ),
    };
    if decoded_len > bound {
        return Err(too_long());
    }
    usize::try_from(decoded_len).map_err(|_| too_long())
}

/// The decompressor a run's blocks share, made on first use.
pub(super) type BlockInflater = Option<libdeflater::Decompressor>;

/// CRC-32 of the header without its checksum field, then the stored body. Covering the stored
/// (compressed) bytes rather than the decoded ones also catches flips in DEFLATE's padding
/// bits, which decompress to the same body.
fn checksum(header: &[u8], stored: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&header[..24]);
    h.update(&header[28..HEADER_BYTES]);
    h.update(stored);
    h.finalize()
}

fn le_array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// The streams of the body, in storage order. Each holds one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum S {
    Meta,
    Paths,
    FileSize,
    FooterLen,
    FileSchema,
    RgCount,
    PageCount,
    PageOffset,
    PageSize,
    PageFirstRow,
    RgRows,
    RgCols,
    Flags,
    Codec,
    ChunkStart,
    DictLen,
    DataLen,
    Uncompressed,
    CiOffset,
    CiLen,
    OiOffset,
    OiLen,
    BloomOffset,
    BloomLen,
    PagesFirst,
    PagesCount,
    StatKind,
    StatValues,
}

const STREAM_COUNT: usize = 28;
/// Streams of a version 1 file: all but the statistics.
const STREAM_COUNT_V1: usize = 26;
const STREAM_NAMES: [&str; STREAM_COUNT] = [
    "meta",
    "paths",
    "file_size",
    "footer_len",
    "file_schema",
    "row_group_count",
    "page_count",
    "page_offset",
    "page_size",
    "page_first_row",
    "row_group_rows",
    "row_group_columns",
    "chunk_flags",
    "chunk_codec",
    "chunk_start",
    "dictionary_len",
    "data_len",
    "uncompressed_bytes",
    "column_index_offset",
    "column_index_len",
    "offset_index_offset",
    "offset_index_len",
    "bloom_filter_offset",
    "bloom_filter_len",
    "pages_first",
    "pages_count",
    "stat_kind",
    "stat_values",
];

// Chunk flag bits: which optional parts follow in their streams.
const F_DICT: u8 = 1;
const F_COLUMN_INDEX: u8 = 2;
const F_OFFSET_INDEX: u8 = 4;
const F_BLOOM: u8 = 8;
const F_BLOOM_LEN: u8 = 16;
const F_PAGES: u8 = 32;
const F_CODEC: u8 = 64;
/// Version 2: the chunk has a min/max in `stat_kind` and `stat_values`.
const F_STATS: u8 = 128;
const F_KNOWN_V1: u8 = 127;

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Residual of `value` against a prediction; wrapping, so any pair round-trips.
fn residual(value: u64, predicted: u64) -> u64 {
    zigzag(value.wrapping_sub(predicted) as i64)
}

fn unresidual(r: u64, predicted: u64) -> u64 {
    predicted.wrapping_add(unzigzag(r) as u64)
}

struct Encoder {
    streams: Vec<Vec<u8>>,
}

impl Encoder {
    fn new() -> Self {
        Encoder {
            streams: vec![Vec::new(); STREAM_COUNT],
        }
    }
    fn u(&mut self, s: S, mut v: u64) {
        let buf = &mut self.streams[s as usize];
        while v >= 0x80 {
            buf.push(v.to_le_bytes()[0] | 0x80);
            v >>= 7;
        }
        buf.push(v.to_le_bytes()[0]);
    }
    fn r(&mut self, s: S, value: u64, predicted: u64) {
        self.u(s, residual(value, predicted));
    }
    fn byte(&mut self, s: S, b: u8) {
        self.streams[s as usize].push(b);
    }
    fn str(&mut self, s: S, v: &str) {
        self.u(s, v.len() as u64);
        self.streams[s as usize].extend_from_slice(v.as_bytes());
    }
}

/// Checks that every range of a chunk ends within `u64`, so that `ByteRange` arithmetic on a
/// stored table cannot overflow.
fn chunk_overflow(c: &ColumnChunk) -> Option<&'static str> {
    let end = c
        .chunk_start
        .checked_add(c.dictionary_len as u64)
        .and_then(|x| x.checked_add(c.data_len));
    if end.is_none() {
        return Some("a column chunk's end");
    }
    if c.column_index_offset
        .checked_add(c.column_index_len as u64)
        .is_none()
    {
        return Some("a column index's end");
    }
    if c.offset_index_offset
        .checked_add(c.offset_index_len as u64)
        .is_none()
    {
        return Some("an offset index's end");
    }
    if c.bloom_filter_offset != NO_BLOOM_FILTER
        && c.bloom_filter_offset
            .checked_add(c.bloom_filter_len as u64)
            .is_none()
    {
        return Some("a bloom filter's end");
    }
    if (c.pages_first as u64) + (c.pages_count as u64) > u32::MAX as u64 {
        return Some("a chunk's page table slice");
    }
    None
}

/// A version 2 body (one set of streams for every file, as the version 2 writer made it): the
/// format's body-level tests damage one, and version 2 files still read.
#[cfg(test)]
fn encode_body(table: &Table) -> Result<Vec<u8>, FormatError> {
    let mut e = Encoder::new();
    encode_meta(&mut e, table);
    let mut prev_path: &[u8] = &[];
    let mut codec = Codec::Uncompressed;
    for (fi, file) in table.files.iter().enumerate() {
        encode_path(&mut e, &mut prev_path, &file.path);
        encode_file(&mut e, fi, file, &mut codec)?;
    }
    Ok(streams_body(&e))
}

/// A file's path as a prefix shared with the previous path (`prev_path`, updated), then its
/// own suffix.
fn encode_path<'p>(e: &mut Encoder, prev_path: &mut &'p [u8], path: &'p str) {
    let path = path.as_bytes();
    let shared = prev_path
        .iter()
        .zip(path)
        .take_while(|(a, b)| a == b)
        .count();
    e.u(S::Paths, shared as u64);
    e.u(S::Paths, (path.len() - shared) as u64);
    e.streams[S::Paths as usize].extend_from_slice(&path[shared..]);
    *prev_path = path;
}

/// File `fi` after its path, each field to its stream. `codec` is the codec in force (a
/// chunk whose codec differs says so in its flags).
fn encode_file(
    e: &mut Encoder,
    fi: usize,
    file: &FileLayout,
    codec: &mut Codec,
) -> Result<(), FormatError> {
    e.u(S::FooterLen, file.footer_len_bytes as u64);
    e.u(S::FileSchema, file.schema as u64);
    e.u(S::RgCount, file.row_groups.len() as u64);
    e.u(S::PageCount, file.pages.len() as u64);
    let overflow = |what: &str| FormatError::Overflow {
        file: fi,
        path: file.path.clone(),
        what: what.to_string(),
    };
    let mut page_pred = FIRST_CHUNK_OFFSET;
    let mut row_pred = 0u64;
    for p in &file.pages {
        e.r(S::PageOffset, p.offset, page_pred);
        e.u(S::PageSize, p.compressed_page_size as u64);
        e.r(S::PageFirstRow, p.first_row_index, row_pred);
        page_pred = p
            .offset
            .checked_add(p.compressed_page_size as u64)
            .ok_or_else(|| overflow("a page's end"))?;
        row_pred = p.first_row_index;
    }
    let mut st = Cursors::new();
    for rg in &file.row_groups {
        e.u(S::RgRows, rg.num_rows);
        e.u(S::RgCols, rg.columns.len() as u64);
        if !rg.statistics.is_empty() && rg.statistics.len() != rg.columns.len() {
            return Err(overflow("statistics not one per column chunk"));
        }
        for (ci, c) in rg.columns.iter().enumerate() {
            let stats = rg.stats(u32_of(ci));
            if let Some(what) = chunk_overflow(c) {
                return Err(overflow(what));
            }
            let mut flags = 0u8;
            flags |= if c.dictionary_len != 0 { F_DICT } else { 0 };
            flags |= if c.column_index_offset != 0 || c.column_index_len != 0 {
                F_COLUMN_INDEX
            } else {
                0
            };
            flags |= if c.offset_index_offset != 0 || c.offset_index_len != 0 {
                F_OFFSET_INDEX
            } else {
                0
            };
            flags |= if c.bloom_filter_offset != NO_BLOOM_FILTER {
                F_BLOOM
            } else {
                0
            };
            flags |= if c.bloom_filter_len != 0 {
                F_BLOOM_LEN
            } else {
                0
            };
            flags |= if c.pages_first != 0 || c.pages_count != 0 {
                F_PAGES
            } else {
                0
            };
            flags |= if c.codec != *codec { F_CODEC } else { 0 };
            flags |= if stats.is_some() { F_STATS } else { 0 };
            e.byte(S::Flags, flags);
            if flags & F_CODEC != 0 {
                e.byte(S::Codec, c.codec as u8);
                *codec = c.codec;
            }
            e.r(S::ChunkStart, c.chunk_start, st.chunk);
            if flags & F_DICT != 0 {
                e.u(S::DictLen, c.dictionary_len as u64);
            }
            e.u(S::DataLen, c.data_len);
            e.r(S::Uncompressed, c.uncompressed_bytes, c.compressed_bytes());
            if flags & F_COLUMN_INDEX != 0 {
                e.r(S::CiOffset, c.column_index_offset, st.column_index);
                e.u(S::CiLen, c.column_index_len as u64);
            }
            if flags & F_OFFSET_INDEX != 0 {
                e.r(S::OiOffset, c.offset_index_offset, st.offset_index);
                e.u(S::OiLen, c.offset_index_len as u64);
            }
            if flags & F_BLOOM != 0 {
                e.r(S::BloomOffset, c.bloom_filter_offset, st.bloom);
            }
            if flags & F_BLOOM_LEN != 0 {
                e.u(S::BloomLen, c.bloom_filter_len as u64);
            }
            if flags & F_PAGES != 0 {
                e.r(S::PagesFirst, c.pages_first as u64, st.pages);
                e.u(S::PagesCount, c.pages_count as u64);
            }
            if let Some(mm) = stats {
                encode_stats(e, mm).map_err(|what| overflow(&what))?;
            }
            st.advance(c);
        }
    }
    // Written last so that it can be predicted from everything else: the file ends with the
    // footer, its 4-byte length and `PAR1`, right after the last structure.
    e.r(
        S::FileSize,
        file.size_bytes,
        st.predicted_size(file.footer_len_bytes),
    );
    Ok(())
}

/// A body of `e`'s streams: the stream count and each stream's length, then the streams.
fn streams_body(e: &Encoder) -> Vec<u8> {
    let mut dir = Encoder {
        streams: vec![Vec::new()],
    };
    dir.u(S::Meta, STREAM_COUNT as u64);
    for s in &e.streams {
        dir.u(S::Meta, s.len() as u64);
    }
    let mut body =
        Vec::with_capacity(dir.streams[0].len() + e.streams.iter().map(Vec::len).sum::<usize>());
    body.extend_from_slice(&dir.streams[0]);
    for s in &e.streams {
        body.extend_from_slice(s);
    }
    body
}

/// Writes one chunk's min/max: the kind (with a decimal's scale or a timestamp's unit) to
/// `stat_kind`, then min and max to `stat_values`.
fn encode_stats(e: &mut Encoder, mm: &MinMax) -> Result<(), String> {
    if mm.min.compare(&mm.max).is_none() {
        return Err("a chunk's min and max are of different kinds".into());
    }
    let (tag, extra) = stat_tag(&mm.min);
    e.byte(S::StatKind, tag);
    if let Some(x) = extra {
        e.byte(S::StatKind, x);
    }
    for v in [&mm.min, &mm.max] {
        match v {
            StatValue::Int(x) => e.u(S::StatValues, zigzag(*x)),
            StatValue::UInt(x) => e.u(S::StatValues, *x),
            StatValue::Float { bits } => e.u(S::StatValues, *bits),
            StatValue::Date(x) => e.u(S::StatValues, zigzag(*x as i64)),
            StatValue::Decimal { unscaled, .. } => {
                e.streams[S::StatValues as usize].extend_from_slice(&unscaled.to_le_bytes())
            }
            StatValue::Timestamp { ticks, .. } => e.u(S::StatValues, zigzag(*ticks)),
            StatValue::Bytes(b) => {
                if b.len() > limits::MAX_STAT_VALUE_BYTES {
                    return Err(format!(
                        "a min or max of {} bytes (more than limits::MAX_STAT_VALUE_BYTES)",
                        b.len()
                    ));
                }
                e.u(S::StatValues, b.len() as u64);
                e.streams[S::StatValues as usize].extend_from_slice(b);
            }
        }
    }
    Ok(())
}

/// The `stat_kind` tag of a value, and its scale or unit byte.
fn stat_tag(v: &StatValue) -> (u8, Option<u8>) {
    match v {
        StatValue::Int(_) => (1, None),
        StatValue::UInt(_) => (2, None),
        StatValue::Float { .. } => (3, None),
        StatValue::Date(_) => (4, None),
        StatValue::Decimal { scale, .. } => (5, Some(*scale)),
        StatValue::Timestamp { unit, .. } => (6, Some(unit.code())),
        StatValue::Bytes(_) => (7, None),
    }
}

fn encode_meta(e: &mut Encoder, table: &Table) {
    let p = &table.provenance;
    e.str(S::Meta, &p.tool);
    match p.created_unix_s {
        None => e.u(S::Meta, 0),
        Some(t) => {
            e.u(S::Meta, 1);
            e.u(S::Meta, t);
        }
    }
    e.u(S::Meta, p.sources.len() as u64);
    for s in &p.sources {
        e.str(S::Meta, s);
    }
    match &table.iceberg {
        None => e.u(S::Meta, 0),
        Some(ice) => {
            e.u(S::Meta, 1);
            e.u(S::Meta, ice.metadata_json_bytes);
            e.u(S::Meta, ice.manifest_list_bytes);
            e.u(S::Meta, ice.manifest_bytes.len() as u64);
            for &m in &ice.manifest_bytes {
                e.u(S::Meta, m);
            }
        }
    }
    e.u(S::Meta, table.schemas.len() as u64);
    for schema in &table.schemas {
        e.u(S::Meta, schema.columns.len() as u64);
        for c in &schema.columns {
            e.str(S::Meta, c);
        }
    }
    e.u(S::Meta, table.files.len() as u64);
}

/// Predictions carried from one chunk to the next within a file.
struct Cursors {
    chunk: u64,
    column_index: u64,
    offset_index: u64,
    bloom: u64,
    pages: u64,
    /// End of the furthest structure seen, to predict the file size.
    max_end: u64,
}

impl Cursors {
    fn new() -> Self {
        Self {
            chunk: FIRST_CHUNK_OFFSET,
            column_index: 0,
            offset_index: 0,
            bloom: 0,
            pages: 0,
            max_end: FIRST_CHUNK_OFFSET,
        }
    }
    /// Callers have checked [`chunk_overflow`], so the additions cannot overflow.
    fn advance(&mut self, c: &ColumnChunk) {
        self.chunk = c.chunk_start + c.dictionary_len as u64 + c.data_len;
        self.max_end = self.max_end.max(self.chunk);
        if c.column_index_offset != 0 || c.column_index_len != 0 {
            self.column_index = c.column_index_offset + c.column_index_len as u64;
            self.max_end = self.max_end.max(self.column_index);
        }
        if c.offset_index_offset != 0 || c.offset_index_len != 0 {
            self.offset_index = c.offset_index_offset + c.offset_index_len as u64;
            self.max_end = self.max_end.max(self.offset_index);
        }
        if c.bloom_filter_offset != NO_BLOOM_FILTER {
            self.bloom = c.bloom_filter_offset + c.bloom_filter_len as u64;
            self.max_end = self.max_end.max(self.bloom);
        }
        if c.pages_first != 0 || c.pages_count != 0 {
            self.pages = c.pages_first as u64 + c.pages_count as u64;
        }
    }
    fn predicted_size(&self, footer_len_bytes: u32) -> u64 {
        self.max_end.wrapping_add(footer_len_bytes as u64 + 8)
    }
}

/// Reads the streams of a decoded body; every read is bounds-checked.
struct Decoder<'a> {
    body: &'a [u8],
    pos: [usize; STREAM_COUNT],
    end: [usize; STREAM_COUNT],
}

type R<T> = Result<T, FormatError>;

impl<'a> Decoder<'a> {
    fn corrupt(&self, s: S, what: impl Into<String>) -> FormatError {
        FormatError::Corrupt {
            stream: STREAM_NAMES[s as usize],
            offset: self.pos[s as usize] as u64,
            what: what.into(),
        }
    }

    /// Reads a LEB128 varint. One-byte values (most of a layout) take the inlined fast path.
    #[inline(always)]
    fn u(&mut self, s: S) -> R<u64> {
        let i = s as usize;
        let pos = self.pos[i];
        if pos < self.end[i] {
            if let Some(&b) = self.body.get(pos) {
                if b < 0x80 {
                    self.pos[i] = pos + 1;
                    return Ok(b as u64);
                }
            }
        }
        self.u_long(s)
    }

    #[inline(never)]
    fn u_long(&mut self, s: S) -> R<u64> {
        let i = s as usize;
        let mut pos = self.pos[i];
        let end = self.end[i];
        let mut v = 0u64;
        let mut shift = 0u32;
        loop {
            if pos >= end {
                return Err(self.corrupt(
                    s,
                    "the stream ends inside or before a value (truncated or corrupt)",
                ));
            }
            let b = self.body[pos];
            pos += 1;
            if shift == 63 && b > 1 {
                return Err(self.corrupt(s, "a varint exceeds 64 bits"));
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(self.corrupt(s, "a varint is longer than 10 bytes"));
            }
        }
        self.pos[i] = pos;
        Ok(v)
    }

    /// Steps over `n` varints of one stream without their values: each ends at a byte below
    /// 0x80, so this counts those (a skeleton's pass over the files no query touches).
    fn skip_n(&mut self, s: S, n: u64) -> R<()> {
        if n == 0 {
            return Ok(());
        }
        let i = s as usize;
        let (from, to) = (self.pos[i], self.end[i]);
        match nth_varint_end(&self.body[from..to], n) {
            Some(len) => {
                self.pos[i] = from + len;
                Ok(())
            }
            None => {
                let left = n - count_varint_ends(&self.body[from..to]);
                self.pos[i] = to;
                Err(self.corrupt(
                    s,
                    format!("the stream ends {left} values early (truncated or corrupt)"),
                ))
            }
        }
    }

    #[inline(always)]
    fn u32(&mut self, s: S, what: &str) -> R<u32> {
        let v = self.u(s)?;
        u32::try_from(v)
            .map_err(|_| self.corrupt(s, format!("{what} is {v}, more than a 32-bit field holds")))
    }

    #[inline(always)]
    fn r(&mut self, s: S, predicted: u64) -> R<u64> {
        Ok(unresidual(self.u(s)?, predicted))
    }

    fn byte(&mut self, s: S) -> R<u8> {
        let i = s as usize;
        if self.pos[i] >= self.end[i] {
            return Err(self.corrupt(s, "the stream ends early (truncated or corrupt)"));
        }
        let b = self.body[self.pos[i]];
        self.pos[i] += 1;
        Ok(b)
    }

    fn bytes(&mut self, s: S, len: u64, what: &str) -> R<&'a [u8]> {
        let i = s as usize;
        let available = (self.end[i] - self.pos[i]) as u64;
        if len > available {
            return Err(self.corrupt(
                s,
                format!("{what} of {len} bytes, but only {available} bytes remain in the stream"),
            ));
        }
        let len = usize_of(len); // at most `available`, a length of `body`
        let b = &self.body[self.pos[i]..self.pos[i] + len];
        self.pos[i] += len;
        Ok(b)
    }

    fn str(&mut self, s: S, what: &str) -> R<String> {
        let len = self.u(s)?;
        let at = self.pos[s as usize];
        let b = self.bytes(s, len, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| FormatError::Corrupt {
            stream: STREAM_NAMES[s as usize],
            offset: at as u64,
            what: format!("{what} is not valid UTF-8"),
        })
    }

    /// A capacity for `count` items each needing at least one byte of stream `s`, so that a
    /// corrupt count cannot trigger a huge allocation.
    fn capacity(&self, s: S, count: u64) -> usize {
        let i = s as usize;
        usize_of(count.min((self.end[i] - self.pos[i]) as u64))
    }
}

/// The decoder over `body`'s streams (the directory read and checked) and the chunk flags its
/// version knows.
fn directory(body: &[u8], version: u32) -> R<(Decoder<'_>, u8)> {
    // The directory: stream count, then each stream's length, at the start of the body.
    let mut d = Decoder {
        body,
        pos: [0; STREAM_COUNT],
        end: [body.len(); STREAM_COUNT],
    };
    let (expected, known_flags) = match version {
        1 => (STREAM_COUNT_V1, F_KNOWN_V1),
        _ => (STREAM_COUNT, u8::MAX),
    };
    let count = d.u(S::Meta)?;
    if count != expected as u64 {
        return Err(d.corrupt(
            S::Meta,
            format!("the body lists {count} streams, version {version} has {expected}"),
        ));
    }
    // A version 1 file's statistics streams are empty.
    let mut lens = [0u64; STREAM_COUNT];
    for l in lens.iter_mut().take(expected) {
        *l = d.u(S::Meta)?;
    }
    let mut start = d.pos[0] as u64;
    for (i, &len) in lens.iter().enumerate() {
        let end = start
            .checked_add(len)
            .filter(|&e| e <= body.len() as u64)
            .ok_or_else(|| FormatError::Corrupt {
                stream: STREAM_NAMES[i],
                offset: start,
                what: format!(
                    "the stream is stated to hold {len} bytes but the body ends at byte {}",
                    body.len()
                ),
            })?;
        // Both at most `body.len()`, checked above.
        d.pos[i] = usize_of(start);
        d.end[i] = usize_of(end);
        start = end;
    }
    if start != body.len() as u64 {
        return Err(FormatError::Corrupt {
            stream: STREAM_NAMES[STREAM_COUNT - 1],
            offset: start,
            what: format!("{} bytes follow the last stream", body.len() as u64 - start),
        });
    }
    Ok((d, known_flags))
}

fn decode_body(body: &[u8], version: u32) -> R<Table> {
    let (mut d, known_flags) = directory(body, version)?;
    let mut table = decode_meta(&mut d)?;
    let file_count = d.u(S::Meta)?;
    let mut files = Vec::with_capacity(d.capacity(S::FileSize, file_count));
    let mut prev_path: Vec<u8> = Vec::new();
    let mut codec = Codec::Uncompressed;
    for fi in 0..file_count {
        let path = read_path(&mut d, fi, &mut prev_path)?;
        files.push(decode_file(&mut d, fi, path, &mut codec, known_flags)?);
    }
    all_read(&d)?;
    table.files = files;
    Ok(table)
}

/// Every stream read to its end: nothing follows the last file.
fn all_read(d: &Decoder<'_>) -> R<()> {
    for (i, name) in STREAM_NAMES.iter().enumerate() {
        if d.pos[i] != d.end[i] {
            return Err(FormatError::Corrupt {
                stream: name,
                offset: d.pos[i] as u64,
                what: format!(
                    "{} bytes left unread after the last file",
                    d.end[i] - d.pos[i]
                ),
            });
        }
    }
    Ok(())
}

/// A chunk's flags (unknown bits are an error) and, if they say so, the codec from here on.
#[inline(always)]
fn chunk_flags(d: &mut Decoder<'_>, known_flags: u8, codec: &mut Codec) -> R<u8> {
    let flags = d.byte(S::Flags)?;
    if flags & !known_flags != 0 {
        d.pos[S::Flags as usize] -= 1;
        return Err(d.corrupt(
            S::Flags,
            format!("chunk flags {flags:#04x} set unknown bits"),
        ));
    }
    if flags & F_CODEC != 0 {
        let b = d.byte(S::Codec)?;
        *codec = Codec::from_u8(b)
            .ok_or_else(|| d.corrupt(S::Codec, format!("unknown codec {b}; expected 0..=7")))?;
    }
    Ok(flags)
}

/// File `fi`'s path: a prefix shared with the previous file's path (`prev_path`, updated),
/// then its own suffix.
fn read_path(d: &mut Decoder<'_>, fi: u64, prev_path: &mut Vec<u8>) -> R<String> {
    let shared = d.u(S::Paths)?;
    if shared > prev_path.len() as u64 {
        return Err(d.corrupt(
            S::Paths,
            format!(
                "file {fi} shares {shared} bytes with a previous path of {}",
                prev_path.len()
            ),
        ));
    }
    let suffix_len = d.u(S::Paths)?;
    let at = d.pos[S::Paths as usize];
    let suffix = d.bytes(S::Paths, suffix_len, "a path")?;
    let mut path = prev_path[..usize_of(shared)].to_vec();
    path.extend_from_slice(suffix);
    let path_str = String::from_utf8(path.clone()).map_err(|_| FormatError::Corrupt {
        stream: "paths",
        offset: at as u64,
        what: format!("the path of file {fi} is not valid UTF-8"),
    })?;
    *prev_path = path;
    Ok(path_str)
}

/// File `fi` after its path, whole. `codec` is the codec in force (a chunk flag changes it).
fn decode_file(
    d: &mut Decoder<'_>,
    fi: u64,
    path_str: String,
    codec: &mut Codec,
    known_flags: u8,
) -> R<FileLayout> {
    let footer_len_bytes = d.u32(S::FooterLen, "a footer length")?;
    let schema = d.u32(S::FileSchema, "a schema index")?;
    let rg_count = d.u(S::RgCount)?;
    let page_count = d.u(S::PageCount)?;

    let mut pages = Vec::with_capacity(d.capacity(S::PageSize, page_count));
    let mut page_pred = FIRST_CHUNK_OFFSET;
    let mut row_pred = 0u64;
    for _ in 0..page_count {
        let offset = d.r(S::PageOffset, page_pred)?;
        let compressed_page_size = d.u32(S::PageSize, "a page size")?;
        let first_row_index = d.r(S::PageFirstRow, row_pred)?;
        page_pred = offset
            .checked_add(compressed_page_size as u64)
            .ok_or_else(|| {
                d.corrupt(
                    S::PageOffset,
                    format!("file {fi}: a page's end overflows 64 bits"),
                )
            })?;
        row_pred = first_row_index;
        pages.push(PageLocation {
            offset,
            first_row_index,
            compressed_page_size,
        });
    }

    let mut row_groups = Vec::with_capacity(d.capacity(S::RgRows, rg_count));
    let mut st = Cursors::new();
    for _ in 0..rg_count {
        let num_rows = d.u(S::RgRows)?;
        let col_count = d.u(S::RgCols)?;
        let mut columns = Vec::with_capacity(d.capacity(S::Flags, col_count));
        let mut statistics: Vec<Option<MinMax>> = Vec::new();
        for ci in 0..col_count {
            let flags = chunk_flags(d, known_flags, codec)?;
            let mut c = ColumnChunk {
                codec: *codec,
                bloom_filter_offset: NO_BLOOM_FILTER,
                ..ColumnChunk::default()
            };
            c.chunk_start = d.r(S::ChunkStart, st.chunk)?;
            if flags & F_DICT != 0 {
                c.dictionary_len = d.u32(S::DictLen, "a dictionary length")?;
            }
            c.data_len = d.u(S::DataLen)?;
            let compressed = c
                .chunk_start
                .checked_add(c.dictionary_len as u64)
                .and_then(|x| x.checked_add(c.data_len));
            if compressed.is_none() {
                return Err(d.corrupt(
                    S::DataLen,
                    format!("file {fi}: a column chunk's end overflows 64 bits"),
                ));
            }
            c.uncompressed_bytes = d.r(S::Uncompressed, c.compressed_bytes())?;
            if flags & F_COLUMN_INDEX != 0 {
                c.column_index_offset = d.r(S::CiOffset, st.column_index)?;
                c.column_index_len = d.u32(S::CiLen, "a column index length")?;
            }
            if flags & F_OFFSET_INDEX != 0 {
                c.offset_index_offset = d.r(S::OiOffset, st.offset_index)?;
                c.offset_index_len = d.u32(S::OiLen, "an offset index length")?;
            }
            if flags & F_BLOOM != 0 {
                c.bloom_filter_offset = d.r(S::BloomOffset, st.bloom)?;
            }
            if flags & F_BLOOM_LEN != 0 {
                c.bloom_filter_len = d.u32(S::BloomLen, "a bloom filter length")?;
            }
            if flags & F_PAGES != 0 {
                c.pages_first = u32::try_from(d.r(S::PagesFirst, st.pages)?)
                    .map_err(|_| d.corrupt(S::PagesFirst, "a page table index exceeds 32 bits"))?;
                c.pages_count = d.u32(S::PagesCount, "a page count")?;
            }
            if let Some(what) = chunk_overflow(&c) {
                return Err(d.corrupt(S::Flags, format!("file {fi}: {what} overflows 64 bits")));
            }
            if flags & F_STATS != 0 {
                let mm = decode_stats(d, fi)?;
                statistics.resize(usize_of(ci), None);
                statistics.push(Some(mm));
            }
            st.advance(&c);
            columns.push(c);
        }
        if !statistics.is_empty() {
            statistics.resize(columns.len(), None);
        }
        row_groups.push(RowGroup {
            num_rows,
            columns,
            statistics,
            outlined_uncompressed_bytes: 0,
        });
    }
    let size_bytes = d.r(S::FileSize, st.predicted_size(footer_len_bytes))?;
    Ok(FileLayout {
        path: path_str,
        materialized: true,
        outline: false,
        size_bytes,
        footer_len_bytes,
        schema,
        row_groups,
        pages,
    })
}

/// Reads one chunk's min/max (see [`encode_stats`]).
fn decode_stats(d: &mut Decoder<'_>, fi: u64) -> R<MinMax> {
    let tag = d.byte(S::StatKind)?;
    let extra = match tag {
        5 | 6 => d.byte(S::StatKind)?,
        1..=7 => 0,
        other => {
            return Err(d.corrupt(
                S::StatKind,
                format!("file {fi}: statistics kind {other}; expected 1..=7"),
            ))
        }
    };
    let unit = match tag {
        6 => TimeUnit::from_code(extra).ok_or_else(|| {
            d.corrupt(
                S::StatKind,
                format!("file {fi}: timestamp unit {extra}; expected 0..=2"),
            )
        })?,
        _ => TimeUnit::Micros,
    };
    let min = decode_stat_value(d, fi, tag, extra, unit)?;
    let max = decode_stat_value(d, fi, tag, extra, unit)?;
    MinMax::new(min, max).ok_or_else(|| {
        d.corrupt(
            S::StatValues,
            format!("file {fi}: a chunk's min is greater than its max"),
        )
    })
}

fn decode_stat_value(
    d: &mut Decoder<'_>,
    fi: u64,
    tag: u8,
    scale: u8,
    unit: TimeUnit,
) -> R<StatValue> {
    Ok(match tag {
        1 => StatValue::Int(unzigzag(d.u(S::StatValues)?)),
        2 => StatValue::UInt(d.u(S::StatValues)?),
        3 => StatValue::Float {
            bits: d.u(S::StatValues)?,
        },
        4 => {
            let v = unzigzag(d.u(S::StatValues)?);
            StatValue::Date(i32::try_from(v).map_err(|_| {
                d.corrupt(
                    S::StatValues,
                    format!("file {fi}: a date of {v} days overflows 32 bits"),
                )
            })?)
        }
        5 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(d.bytes(S::StatValues, 16, "a decimal")?);
            StatValue::Decimal {
                unscaled: i128::from_le_bytes(a),
                scale,
            }
        }
        6 => StatValue::Timestamp {
            ticks: unzigzag(d.u(S::StatValues)?),
            unit,
        },
        _ => {
            let len = d.u(S::StatValues)?;
            if len > limits::MAX_STAT_VALUE_BYTES as u64 {
                return Err(d.corrupt(
                    S::StatValues,
                    format!(
                        "file {fi}: a min or max of {len} bytes, past the bound of {} \
                         (limits::MAX_STAT_VALUE_BYTES)",
                        limits::MAX_STAT_VALUE_BYTES
                    ),
                ));
            }
            StatValue::Bytes(d.bytes(S::StatValues, len, "a min or max")?.into())
        }
    })
}

fn decode_meta(d: &mut Decoder<'_>) -> R<Table> {
    let tool = d.str(S::Meta, "the provenance tool")?;
    let created_unix_s = match d.u(S::Meta)? {
        0 => None,
        1 => Some(d.u(S::Meta)?),
        other => {
            return Err(d.corrupt(
                S::Meta,
                format!("creation-time tag {other}; expected 0 or 1"),
            ))
        }
    };
    let n = d.u(S::Meta)?;
    let mut sources = Vec::with_capacity(d.capacity(S::Meta, n));
    for _ in 0..n {
        sources.push(d.str(S::Meta, "a provenance source")?);
    }
    let iceberg = match d.u(S::Meta)? {
        0 => None,
        1 => {
            let metadata_json_bytes = d.u(S::Meta)?;
            let manifest_list_bytes = d.u(S::Meta)?;
            let n = d.u(S::Meta)?;
            let mut manifest_bytes = Vec::with_capacity(d.capacity(S::Meta, n));
            for _ in 0..n {
                manifest_bytes.push(d.u(S::Meta)?);
            }
            Some(IcebergMetadata {
                metadata_json_bytes,
                manifest_list_bytes,
                manifest_bytes,
            })
        }
        other => return Err(d.corrupt(S::Meta, format!("Iceberg tag {other}; expected 0 or 1"))),
    };
    let n = d.u(S::Meta)?;
    let mut schemas = Vec::with_capacity(d.capacity(S::Meta, n));
    for _ in 0..n {
        let cols = d.u(S::Meta)?;
        let mut columns = Vec::with_capacity(d.capacity(S::Meta, cols));
        for _ in 0..cols {
            columns.push(d.str(S::Meta, "a column name")?);
        }
        schemas.push(Schema { columns });
    }
    Ok(Table {
        schemas,
        files: Vec::new(),
        iceberg,
        provenance: Provenance {
            tool,
            created_unix_s,
            sources,
        },
        lazy: None,
    })
}

/// The length of the prefix of `bytes` that holds its first `n` (> 0) varints (each ends at a
/// byte below 0x80), or `None` if it holds fewer. Counted eight bytes at a time: a skeleton
/// steps over every unread file's chunk values this way (a byte-at-a-time count was 11% of
/// loading a recorded table of 2,000 files x 439 columns), and no crate we use counts bytes
/// below a bound.
fn nth_varint_end(bytes: &[u8], n: u64) -> Option<usize> {
    debug_assert!(n > 0);
    let mut left = n;
    let mut words = bytes.chunks_exact(8);
    let mut at = 0usize;
    for w in words.by_ref() {
        let word = u64::from_le_bytes(w.try_into().ok()?);
        let ends = u64::from((!word & 0x8080_8080_8080_8080).count_ones());
        if ends >= left {
            break;
        }
        left -= ends;
        at += 8;
    }
    for (k, &b) in bytes.get(at..)?.iter().enumerate() {
        if b < 0x80 {
            left -= 1;
            if left == 0 {
                return Some(at + k + 1);
            }
        }
    }
    None
}

/// How many varints end in `bytes`.
fn count_varint_ends(bytes: &[u8]) -> u64 {
    bytes.iter().filter(|&&b| b < 0x80).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn nth_varint_end_matches_a_byte_at_a_time_count() {
        // Varint ends (< 0x80) at irregular places, across and within 8-byte words.
        let bytes: Vec<u8> = (0u32..200)
            .map(|i| if i % 3 == 0 || i % 7 == 0 { 0x05 } else { 0x85 })
            .collect();
        let ends: Vec<usize> = bytes
            .iter()
            .enumerate()
            .filter(|(_, &b)| b < 0x80)
            .map(|(k, _)| k + 1)
            .collect();
        for (j, &end) in ends.iter().enumerate() {
            assert_eq!(
                nth_varint_end(&bytes, j as u64 + 1),
                Some(end),
                "varint {j}"
            );
        }
        assert_eq!(nth_varint_end(&bytes, ends.len() as u64 + 1), None);
        assert_eq!(count_varint_ends(&bytes), ends.len() as u64);
        assert_eq!(nth_varint_end(&[], 1), None);
    }

    #[test]
    fn a_stated_length_deflate_cannot_reach_is_refused_before_allocating() {
        let stored = miniz_oxide::deflate::compress_to_vec(b"abc", 6);
        assert_eq!(inflate(&stored, 3, 36, None).unwrap(), b"abc");
        let err = inflate(&stored, u64::MAX / 2, 36, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than DEFLATE can expand"), "{err}");
    }

    #[test]
    fn a_stream_that_decodes_to_other_than_its_stated_length_is_an_error() {
        let body = b"abcabcabcabc-layout-bytes".repeat(40);
        let stored = miniz_oxide::deflate::compress_to_vec(&body, 6);
        let n = body.len() as u64;
        let mut shared = BlockInflater::default();
        for block in [false, true] {
            // A shared decompressor serves one stream after another.
            let mut inflate = |bytes: &[u8], len: u64| {
                let d = if block { Some(&mut shared) } else { None };
                stored_bytes(1, bytes, len, 36, d).map(|b| b.into_owned())
            };
            assert_eq!(inflate(&stored, n).unwrap(), body);
            assert_eq!(inflate(&stored, n).unwrap(), body);
            let longer = inflate(&stored, n - 1).unwrap_err();
            assert!(longer.to_string().contains("more than the"), "{longer}");
            let shorter = inflate(&stored, n + 1).unwrap_err();
            assert!(
                matches!(shorter, FormatError::DecodedLength { .. }),
                "{shorter}"
            );
            let bad = inflate(&[0xffu8; 64], n).unwrap_err();
            assert!(bad.to_string().contains("not valid raw DEFLATE"), "{bad}");
        }
    }

    fn chunk(start: u64, len: u64) -> ColumnChunk {
        ColumnChunk {
            chunk_start: start,
            data_len: len,
            uncompressed_bytes: len * 3,
            bloom_filter_offset: NO_BLOOM_FILTER,
            codec: Codec::Zstd,
            ..Default::default()
        }
    }

    fn small_table() -> Table {
        let mut c1 = chunk(4, 100);
        c1.dictionary_len = 20;
        c1.offset_index_offset = 300;
        c1.offset_index_len = 30;
        c1.column_index_offset = 250;
        c1.column_index_len = 50;
        let mut c2 = chunk(124, 80);
        c2.bloom_filter_offset = 330;
        c2.bloom_filter_len = 0;
        c2.pages_first = 0;
        c2.pages_count = 2;
        c2.codec = Codec::Snappy;
        Table {
            schemas: vec![Schema {
                columns: vec!["a".into(), "b\u{e9}".into()],
            }],
            files: vec![FileLayout {
                path: "x/part-0.parquet".into(),
                materialized: true,
                outline: false,
                size_bytes: 1000,
                footer_len_bytes: 200,
                schema: 0,
                row_groups: vec![RowGroup::new(10, vec![c1, c2])],
                pages: vec![
                    PageLocation {
                        offset: 124,
                        first_row_index: 0,
                        compressed_page_size: 40,
                    },
                    PageLocation {
                        offset: 164,
                        first_row_index: 5,
                        compressed_page_size: 40,
                    },
                ],
            }],
            iceberg: Some(IcebergMetadata {
                metadata_json_bytes: 5,
                manifest_list_bytes: 6,
                manifest_bytes: vec![7, 8],
            }),
            provenance: Provenance {
                tool: "test".into(),
                created_unix_s: Some(17),
                sources: vec!["/a".into()],
            },
            lazy: None,
        }
    }

    fn bytes_of(t: &Table, c: Compression) -> Vec<u8> {
        write_table_with(t, &WriteOptions { compression: c }).unwrap()
    }

    #[test]
    fn round_trips_both_compressions() {
        let t = small_table();
        for c in [
            Compression::None,
            Compression::Deflate { level: 1 },
            Compression::Deflate { level: 9 },
        ] {
            assert_eq!(read_table(&bytes_of(&t, c)).unwrap(), t);
        }
    }

    #[test]
    fn header_errors_say_what_is_wrong() {
        let good = bytes_of(&small_table(), Compression::Deflate { level: 1 });
        assert!(matches!(
            read_table(b"PAR1...."),
            Err(FormatError::BadMagic { .. })
        ));
        assert!(matches!(
            read_table(&good[..20]),
            Err(FormatError::Truncated { offset: 16, .. })
        ));
        let mut v = good.clone();
        v[8] = 9;
        assert!(matches!(
            read_table(&v),
            Err(FormatError::UnsupportedVersion { found: 9, .. })
        ));
        let mut v = good.clone();
        v[12] = 7;
        assert!(matches!(
            read_table(&v),
            Err(FormatError::UnknownCompression { found: 7, .. })
        ));
        let mut v = good.clone();
        v[24] ^= 1;
        assert!(matches!(read_table(&v), Err(FormatError::Checksum { .. })));
        let v = &good[..good.len() - 1];
        assert!(matches!(read_table(v), Err(FormatError::BodyLength { .. })));
        let msg = read_table(b"PAR1....").unwrap_err().to_string();
        assert!(msg.contains("RPLAYOUT"), "{msg}");
    }

    #[test]
    fn corrupt_body_names_stream_and_offset() {
        // A body whose directory lists the wrong number of streams.
        let err = decode_body(&[3, 0, 0, 0], VERSION).unwrap_err();
        match err {
            FormatError::Corrupt { stream, offset, .. } => {
                assert_eq!((stream, offset), ("meta", 1))
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn overflowing_ranges_are_refused_on_write() {
        let mut t = small_table();
        t.files[0].row_groups[0].columns[0].chunk_start = u64::MAX - 5;
        let err = write_table(&t).unwrap_err();
        assert!(
            matches!(err, FormatError::Overflow { file: 0, .. }),
            "{err}"
        );
    }

    #[test]
    fn varints_reject_overlong_values() {
        let body = [0xffu8; 11];
        let mut d = Decoder {
            body: &body,
            pos: [0; STREAM_COUNT],
            end: [11; STREAM_COUNT],
        };
        assert!(d.u(S::Meta).is_err());
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        let mut d = Decoder {
            body: &max,
            pos: [0; STREAM_COUNT],
            end: [10; STREAM_COUNT],
        };
        assert_eq!(d.u(S::Meta).unwrap(), u64::MAX);
    }

    /// The body of a realistic layout: 3 files of 1-4 row groups, 12 weighted columns, pages,
    /// indexes, bloom filters and Iceberg metadata, as `tablegen` generated it (spec in
    /// `testdata/README.md`).
    fn generated_body() -> Vec<u8> {
        let t = read_table(include_bytes!("../../testdata/generated.layout")).unwrap();
        assert!(
            !t.files.iter().all(|f| f.pages.is_empty()),
            "the body lists pages"
        );
        encode_body(&t).unwrap()
    }

    fn arb_codec() -> impl Strategy<Value = Codec> {
        (0u8..8).prop_map(|b| Codec::from_u8(b).unwrap_or_default())
    }

    /// Arbitrary (not necessarily valid) chunks whose ranges fit in 62 bits.
    fn arb_chunk() -> impl Strategy<Value = ColumnChunk> {
        let big = 0u64..(1 << 62);
        (
            (
                big.clone(),
                0u64..(1 << 40),
                any::<u64>(),
                big.clone(),
                big.clone(),
            ),
            (
                prop_oneof![Just(NO_BLOOM_FILTER), big],
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
            ),
            (0u32..1000, 0u32..1000, arb_codec()),
        )
            .prop_map(
                |((cs, dl, ub, ci, oi), (bo, dict, cil, oil, bl), (pf, pc, codec))| ColumnChunk {
                    chunk_start: cs,
                    data_len: dl,
                    uncompressed_bytes: ub,
                    column_index_offset: ci,
                    offset_index_offset: oi,
                    bloom_filter_offset: bo,
                    dictionary_len: dict,
                    column_index_len: cil,
                    offset_index_len: oil,
                    bloom_filter_len: bl,
                    pages_first: pf,
                    pages_count: pc,
                    codec,
                },
            )
    }

    /// A min/max of every kind, ordered.
    fn arb_min_max() -> impl Strategy<Value = MinMax> {
        let unit = prop_oneof![
            Just(TimeUnit::Millis),
            Just(TimeUnit::Micros),
            Just(TimeUnit::Nanos)
        ];
        let bytes = prop::collection::vec(any::<u8>(), 0..20);
        let pair = prop_oneof![
            (any::<i64>(), any::<i64>()).prop_map(|(a, b)| (StatValue::Int(a), StatValue::Int(b))),
            (any::<u64>(), any::<u64>())
                .prop_map(|(a, b)| (StatValue::UInt(a), StatValue::UInt(b))),
            (-1e300f64..1e300, -1e300f64..1e300)
                .prop_map(|(a, b)| (StatValue::float(a), StatValue::float(b))),
            (any::<i32>(), any::<i32>())
                .prop_map(|(a, b)| (StatValue::Date(a), StatValue::Date(b))),
            (any::<i128>(), any::<i128>(), any::<u8>()).prop_map(|(a, b, scale)| (
                StatValue::Decimal { unscaled: a, scale },
                StatValue::Decimal { unscaled: b, scale }
            )),
            (any::<i64>(), any::<i64>(), unit).prop_map(|(a, b, unit)| (
                StatValue::Timestamp { ticks: a, unit },
                StatValue::Timestamp { ticks: b, unit }
            )),
            (bytes.clone(), bytes)
                .prop_map(|(a, b)| (StatValue::Bytes(a.into()), StatValue::Bytes(b.into()))),
        ];
        pair.prop_map(|(a, b)| {
            if a.compare(&b) == Some(std::cmp::Ordering::Greater) {
                MinMax { min: b, max: a }
            } else {
                MinMax { min: a, max: b }
            }
        })
    }

    #[test]
    fn version_1_files_still_read() {
        // Written by the version 1 encoder (`sim record iceberg` before statistics).
        let t = read_table(include_bytes!("../../testdata/version1.layout")).unwrap();
        assert!(!t.files.is_empty());
        assert!(t
            .files
            .iter()
            .flat_map(|f| &f.row_groups)
            .all(|rg| rg.statistics.is_empty()));
        // Its bytes are not a version 2 body: the stream count differs.
        let mut v2 = include_bytes!("../../testdata/version1.layout").to_vec();
        v2[8] = 2;
        let crc = checksum(&v2[..HEADER_BYTES], &v2[HEADER_BYTES..]);
        v2[24..28].copy_from_slice(&crc.to_le_bytes());
        let e = read_table(&v2).unwrap_err().to_string();
        assert!(e.contains("version 2 has 28"), "{e}");
    }

    #[test]
    fn statistics_round_trip_and_bad_kinds_are_named() {
        let mut t = small_table();
        let mm = MinMax::new(StatValue::Date(8766), StatValue::Date(9131)).unwrap();
        t.files[0].row_groups[0].statistics = vec![None, Some(mm)];
        let bytes = write_table_with(
            &t,
            &WriteOptions {
                compression: Compression::None,
            },
        )
        .unwrap();
        assert_eq!(read_table(&bytes).unwrap(), t);
        // Corrupt the kind byte: the error names the stream.
        let body = encode_body(&t).unwrap();
        // The body ends with `stat_kind` (one byte: 4, a date) then `stat_values` (two varints).
        let mut values = Encoder {
            streams: vec![Vec::new(); STREAM_COUNT],
        };
        values.u(S::StatValues, zigzag(8766));
        values.u(S::StatValues, zigzag(9131));
        let kind_at = body.len() - values.streams[S::StatValues as usize].len() - 1;
        assert_eq!(body[kind_at], 4);
        let mut bad = body.clone();
        bad[kind_at] = 9;
        let e = decode_body(&bad, VERSION).unwrap_err().to_string();
        assert!(e.contains("stat_kind") && e.contains("kind 9"), "{e}");
    }

    fn arb_table() -> impl Strategy<Value = Table> {
        let page = (0u64..(1 << 62), any::<u64>(), any::<u32>()).prop_map(
            |(offset, first_row_index, compressed_page_size)| PageLocation {
                offset,
                first_row_index,
                compressed_page_size,
            },
        );
        let chunk = (arb_chunk(), prop::option::of(arb_min_max()));
        let rg =
            (any::<u64>(), prop::collection::vec(chunk, 0..5)).prop_map(|(num_rows, chunks)| {
                let (columns, mut statistics): (Vec<_>, Vec<_>) = chunks.into_iter().unzip();
                // A row group whose chunks have no statistics stores none (the decoded form).
                if statistics.iter().all(Option::is_none) {
                    statistics.clear();
                }
                RowGroup {
                    num_rows,
                    columns,
                    statistics,
                    outlined_uncompressed_bytes: 0,
                }
            });
        let file = (
            "[a-z/\u{e9}]{0,12}",
            any::<u64>(),
            any::<u32>(),
            any::<u32>(),
            prop::collection::vec(rg, 0..4),
            prop::collection::vec(page, 0..4),
        )
            .prop_map(
                |(path, size_bytes, footer_len_bytes, schema, row_groups, pages)| FileLayout {
                    path,
                    materialized: true,
                    outline: false,
                    size_bytes,
                    footer_len_bytes,
                    schema,
                    row_groups,
                    pages,
                },
            );
        let schema =
            prop::collection::vec("[a-zA-Z_0-9]{0,6}", 0..4).prop_map(|columns| Schema { columns });
        let ice = prop::option::of(
            (
                any::<u64>(),
                any::<u64>(),
                prop::collection::vec(any::<u64>(), 0..4),
            )
                .prop_map(
                    |(metadata_json_bytes, manifest_list_bytes, manifest_bytes)| IcebergMetadata {
                        metadata_json_bytes,
                        manifest_list_bytes,
                        manifest_bytes,
                    },
                ),
        );
        let prov = (
            ".{0,8}",
            prop::option::of(any::<u64>()),
            prop::collection::vec(".{0,8}", 0..3),
        )
            .prop_map(|(tool, created_unix_s, sources)| Provenance {
                tool,
                created_unix_s,
                sources,
            });
        (
            prop::collection::vec(schema, 0..3),
            prop::collection::vec(file, 0..4),
            ice,
            prov,
        )
            .prop_map(|(schemas, files, iceberg, provenance)| Table {
                schemas,
                files,
                iceberg,
                provenance,
                lazy: None,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn any_table_round_trips(t in arb_table(), deflate in any::<bool>()) {
            let c = if deflate { Compression::Deflate { level: 1 } } else { Compression::None };
            prop_assert_eq!(read_table(&bytes_of(&t, c)).unwrap(), t);
        }

        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200), with_header in any::<bool>()) {
            let mut v = Vec::new();
            if with_header {
                v.extend_from_slice(&MAGIC);
                v.extend_from_slice(&VERSION.to_le_bytes());
            }
            v.extend_from_slice(&bytes);
            prop_assert!(read_table(&v).is_err());
        }

        #[test]
        fn truncations_and_bit_flips_are_errors(t in arb_table(), deflate in any::<bool>(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), bit in 0u8..8) {
            let c = if deflate { Compression::Deflate { level: 1 } } else { Compression::None };
            let good = bytes_of(&t, c);
            let truncated = &good[..cut.index(good.len())];
            prop_assert!(read_table(truncated).is_err());
            let mut flipped = good.clone();
            let i = flip.index(flipped.len());
            flipped[i] ^= 1 << bit;
            prop_assert!(read_table(&flipped).is_err());
        }

        /// Behind the checksum, on a generated (realistic) body: damage gives errors or
        /// tables, never panics.
        #[test]
        fn corrupt_generated_bodies_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
            let body = generated_body();
            let mut v = body.clone();
            for (i, b) in &flips {
                let i = i.index(v.len());
                v[i] ^= *b;
            }
            let _ = decode_body(&v, VERSION);
            prop_assert!(decode_body(&body[..cut.index(body.len())], VERSION).is_err());
        }

        /// Behind the checksum: corrupt decoded bodies must give errors or tables, never panics.
        #[test]
        fn corrupt_bodies_never_panic(t in arb_table(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4), cut in any::<prop::sample::Index>()) {
            let body = encode_body(&t).unwrap();
            let mut v = body.clone();
            for (i, b) in &flips {
                let i = i.index(v.len());
                v[i] ^= *b;
            }
            let _ = decode_body(&v, VERSION);
            let _ = decode_body(&body[..cut.index(body.len())], VERSION);
        }
    }
}
