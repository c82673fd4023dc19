//! A layout file read for one run: first its skeleton (the schemas, the Iceberg metadata and
//! every file's path, each file a [`FileLayout::placeholder`]), which is all a scenario needs
//! to know which files its queries touch; then the table with only those files laid out. A
//! recorded table of 2,000 files x 439 columns whose query reads 280 files then builds and
//! checks 280 files' chunks, not 878,000 chunks (`scenarios/many-small-files-iceberg.yaml`).
//!
//! From version 3 the skeleton is the index: each file's path and where its block is; laying a
//! file out inflates and decodes its block alone, and a block no query touches is not read
//! beyond the checksum over the whole file. Versions 1 and 2 keep every file in one set of
//! streams, read once for the skeleton: every value of a file is stepped over (its varints,
//! flags, codec and statistics parsed, so a malformed stream is still an error), and where
//! each file starts in every stream is kept; laying a file out later starts there. Either way a
//! file no query touches is not checked as a laid-out file is ([`crate::Table::validate`]
//! checks those).

use super::{
    all_read, chunk_flags, decode_file, decode_meta, decode_stats, directory, read_path,
    stored_bytes, BlockInflater, Decoder, FormatError, Parts, FIRST_BLOCK_VERSION, R, S,
    STREAM_COUNT,
};
use super::{F_BLOOM, F_BLOOM_LEN, F_COLUMN_INDEX, F_DICT, F_OFFSET_INDEX, F_PAGES, F_STATS};
use crate::{Codec, FileLayout, Table};
use limits::usize_of;

/// A layout file, checked: its decompressed body (the index from version 3) and its files'
/// blocks as stored.
#[derive(Debug, Clone)]
pub struct LayoutBody {
    body: Vec<u8>,
    version: u32,
    /// The compression byte (0 none, 1 raw DEFLATE), for the blocks.
    code: u8,
    blocks: Vec<u8>,
    /// Where `blocks` starts in the file (for errors).
    blocks_at: u64,
}

/// A table of placeholders and where each file's values start (its block, or its place in the
/// body's streams before version 3).
#[derive(Debug, Clone)]
pub struct Skeleton {
    /// The table: schemas, Iceberg metadata, provenance, and each file's path only.
    pub table: Table,
    starts: Vec<FileStart>,
}

/// Where a file's values start.
#[derive(Debug, Clone, Copy)]
// One a file, in one vector: boxing the version 1-2 positions would allocate once per file.
#[allow(clippy::large_enum_variant)]
enum FileStart {
    /// Versions 1 and 2: in every stream (its path already read), and the codec in force.
    Streams {
        pos: [usize; STREAM_COUNT],
        codec: Codec,
    },
    /// From version 3: its block, `stored_len` bytes from `at` in the blocks, decoding to
    /// `decoded_len` bytes.
    Block {
        at: usize,
        stored_len: usize,
        decoded_len: u64,
    },
}

impl LayoutBody {
    /// Checks a layout file's header and decompresses its body (errors as [`super::read_table`]).
    pub fn open(bytes: &[u8]) -> Result<LayoutBody, FormatError> {
        Ok(Self::from_parts(super::checked_parts(bytes)?))
    }

    pub(super) fn from_parts(parts: Parts<'_>) -> LayoutBody {
        LayoutBody {
            body: parts.body.into_owned(),
            version: parts.version,
            code: parts.code,
            blocks: parts.blocks.to_vec(),
            blocks_at: parts.blocks_at,
        }
    }

    /// Every file's path and where its values start; no file laid out.
    pub fn skeleton(&self) -> Result<Skeleton, FormatError> {
        let (mut d, known_flags) = directory(&self.body, self.version)?;
        let mut table = decode_meta(&mut d)?;
        let file_count = d.u(S::Meta)?;
        if self.version >= FIRST_BLOCK_VERSION {
            return self.index_skeleton(d, table, file_count);
        }
        let mut files = Vec::with_capacity(d.capacity(S::FileSize, file_count));
        let mut starts = Vec::with_capacity(d.capacity(S::FileSize, file_count));
        let mut prev_path = Vec::new();
        let mut codec = Codec::Uncompressed;
        for fi in 0..file_count {
            let path = read_path(&mut d, fi, &mut prev_path)?;
            starts.push(FileStart::Streams { pos: d.pos, codec });
            skip_file(&mut d, fi, &mut codec, known_flags)?;
            files.push(FileLayout::placeholder(path));
        }
        all_read(&d)?;
        table.files = files;
        Ok(Skeleton { table, starts })
    }

    /// The skeleton of a version 3 file: its index (`d` past the file count), each block's
    /// place checked against the blocks stored.
    fn index_skeleton(
        &self,
        mut d: Decoder<'_>,
        mut table: Table,
        file_count: u64,
    ) -> Result<Skeleton, FormatError> {
        let mut files = Vec::with_capacity(d.capacity(S::Paths, file_count));
        let mut starts = Vec::with_capacity(d.capacity(S::Paths, file_count));
        let mut prev_path = Vec::new();
        let mut at = 0u64;
        let available = self.blocks.len() as u64;
        for fi in 0..file_count {
            let path = read_path(&mut d, fi, &mut prev_path)?;
            let stored_len = d.u(S::Meta)?;
            let decoded_len = d.u(S::Meta)?;
            let end = at
                .checked_add(stored_len)
                .filter(|&end| end <= available)
                .ok_or_else(|| {
                    d.corrupt(
                        S::Meta,
                        format!(
                            "file {fi}'s block is stated as {stored_len} bytes from byte {at} of \
                             the blocks, but they hold {available} bytes"
                        ),
                    )
                })?;
            starts.push(FileStart::Block {
                at: usize_of(at),                 // at most `available`, a length
                stored_len: usize_of(stored_len), // likewise
                decoded_len,
            });
            files.push(FileLayout::placeholder(path));
            at = end;
        }
        if at != available {
            return Err(d.corrupt(
                S::Meta,
                format!(
                    "the index places blocks up to byte {at}, but {available} bytes of blocks \
                     are stored"
                ),
            ));
        }
        all_read(&d)?;
        table.files = files;
        Ok(Skeleton { table, starts })
    }

    /// File `fi` laid out from its block (version 3).
    fn decode_block(
        &self,
        fi: usize,
        path: String,
        (at, stored_len, decoded_len): (usize, usize, u64),
        inflater: &mut BlockInflater,
    ) -> Result<FileLayout, FormatError> {
        let file_at = self.blocks_at + at as u64;
        let in_block = |error: FormatError| FormatError::Block {
            file: fi as u64,
            path: path.clone(),
            at: file_at,
            error: Box::new(error),
        };
        // The skeleton checked that the block lies within the blocks.
        let stored = &self.blocks[at..at + stored_len];
        let block = stored_bytes(self.code, stored, decoded_len, file_at, Some(inflater))
            .map_err(in_block)?;
        let (mut d, known_flags) = directory(&block, self.version).map_err(in_block)?;
        let mut codec = Codec::Uncompressed;
        let file = decode_file(&mut d, fi as u64, path.clone(), &mut codec, known_flags)
            .map_err(in_block)?;
        all_read(&d).map_err(in_block)?;
        Ok(file)
    }

    /// The skeleton's table with the files `keep` names laid out whole, the others placeholders.
    pub fn table_keeping(
        &self,
        skeleton: &Skeleton,
        keep: impl Fn(usize) -> bool,
    ) -> Result<Table, FormatError> {
        let (mut d, known_flags) = directory(&self.body, self.version)?;
        let mut table = skeleton.table.clone();
        let mut inflater = BlockInflater::default();
        debug_assert_eq!(table.files.len(), skeleton.starts.len(), "a start per file");
        for (fi, start) in skeleton.starts.iter().enumerate() {
            if !keep(fi) {
                continue;
            }
            let path = std::mem::take(&mut table.files[fi].path);
            table.files[fi] = match *start {
                FileStart::Streams { pos, codec } => {
                    d.pos = pos;
                    let mut codec = codec;
                    decode_file(&mut d, fi as u64, path, &mut codec, known_flags)?
                }
                FileStart::Block {
                    at,
                    stored_len,
                    decoded_len,
                } => self.decode_block(fi, path, (at, stored_len, decoded_len), &mut inflater)?,
            };
        }
        Ok(table)
    }
}

/// Steps over file `fi`'s values after its path. The streams are independent, so each is
/// stepped over in one go once the chunk flags have said how many values it holds.
fn skip_file(d: &mut Decoder<'_>, fi: u64, codec: &mut Codec, known_flags: u8) -> R<()> {
    d.skip_n(S::FooterLen, 1)?;
    d.skip_n(S::FileSchema, 1)?;
    let rg_count = d.u(S::RgCount)?;
    let page_count = d.u(S::PageCount)?;
    for s in [S::PageOffset, S::PageSize, S::PageFirstRow] {
        d.skip_n(s, page_count)?;
    }
    // Chunks by their flags byte; the values each stream holds follow from these counts.
    let mut by_flags = [0u64; 256];
    for _ in 0..rg_count {
        d.skip_n(S::RgRows, 1)?;
        let col_count = d.u(S::RgCols)?;
        // Each flag takes a byte of its stream, so a corrupt count ends in an error.
        for _ in 0..col_count {
            let flags = chunk_flags(d, known_flags, codec)?;
            by_flags[usize::from(flags)] += 1;
            if flags & F_STATS != 0 {
                decode_stats(d, fi)?;
            }
        }
    }
    let mut values = [0u64; STREAM_COUNT];
    for (flags, &chunks) in (0u8..=u8::MAX).zip(&by_flags).filter(|(_, &n)| n > 0) {
        for (flag, streams) in CHUNK_VALUES {
            if flag == 0 || flags & flag != 0 {
                for s in streams {
                    values[*s as usize] += chunks;
                }
            }
        }
    }
    for (_, streams) in CHUNK_VALUES {
        for s in streams {
            d.skip_n(*s, values[*s as usize])?;
        }
    }
    d.skip_n(S::FileSize, 1)
}

/// The streams that hold a value of a chunk with the flag set (0: every chunk), in the order
/// [`decode_file`] reads them.
const CHUNK_VALUES: [(u8, &[S]); 7] = [
    (0, &[S::ChunkStart, S::DataLen, S::Uncompressed]),
    (F_DICT, &[S::DictLen]),
    (F_COLUMN_INDEX, &[S::CiOffset, S::CiLen]),
    (F_OFFSET_INDEX, &[S::OiOffset, S::OiLen]),
    (F_BLOOM, &[S::BloomOffset]),
    (F_BLOOM_LEN, &[S::BloomLen]),
    (F_PAGES, &[S::PagesFirst, S::PagesCount]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{
        checksum, read_table, write_table, write_table_with, Compression, WriteOptions,
        HEADER_BYTES,
    };

    fn whole() -> Table {
        read_table(include_bytes!("../../testdata/generated.layout")).unwrap()
    }

    #[test]
    fn kept_files_are_the_whole_tables_and_the_others_placeholders() {
        let table = whole();
        let n = table.files.len();
        assert!(n >= 3, "the test table has {n} files");
        let body = LayoutBody::open(&write_table(&table).unwrap()).unwrap();
        let skeleton = body.skeleton().unwrap();
        assert_eq!(skeleton.table.files.len(), n);
        assert!(skeleton.table.files.iter().all(|f| f.is_placeholder()));
        let keep = |i: usize| i % 2 == 1;
        let kept = body.table_keeping(&skeleton, keep).unwrap();
        for (i, (k, w)) in kept.files.iter().zip(&table.files).enumerate() {
            assert_eq!(k.path, w.path, "file {i}");
            if keep(i) {
                assert_eq!(k, w, "file {i} laid out as read whole");
            } else {
                assert!(k.is_placeholder(), "file {i}");
            }
        }
        assert_eq!(kept.schemas, table.schemas);
        assert_eq!(kept.iceberg, table.iceberg);
        // Keeping every file gives the whole table.
        assert_eq!(body.table_keeping(&skeleton, |_| true).unwrap(), table);
    }

    /// Version 2 files (one set of streams for all files) still read, whole and kept.
    #[test]
    fn version_2_files_read_whole_and_kept() {
        let v2 = include_bytes!("../../testdata/version2.layout");
        assert_eq!(u32::from_le_bytes([v2[8], v2[9], v2[10], v2[11]]), 2);
        let table = read_table(v2).unwrap();
        assert_eq!(
            table,
            whole(),
            "the same table as the version 1 file it was written from"
        );
        let body = LayoutBody::open(v2).unwrap();
        let skeleton = body.skeleton().unwrap();
        let kept = body.table_keeping(&skeleton, |i| i == 1).unwrap();
        assert_eq!(kept.files[1], table.files[1]);
        assert!(kept.files[0].is_placeholder() && kept.files[2].is_placeholder());
        // Written again, it is version 3 and reads to the same table.
        let v3 = write_table(&table).unwrap();
        assert_eq!(u32::from_le_bytes([v3[8], v3[9], v3[10], v3[11]]), 3);
        assert_eq!(read_table(&v3).unwrap(), table);
    }

    /// The file as stored with no compression, and where file `fi`'s block starts in it.
    fn uncompressed_with_block_of(table: &Table, fi: usize) -> (Vec<u8>, usize) {
        let options = WriteOptions {
            compression: Compression::None,
        };
        let bytes = write_table_with(table, &options).unwrap();
        let body = LayoutBody::open(&bytes).unwrap();
        let skeleton = body.skeleton().unwrap();
        let FileStart::Block { at, .. } = skeleton.starts[fi] else {
            panic!("a version 3 file has blocks");
        };
        (bytes, usize::try_from(body.blocks_at).unwrap() + at)
    }

    fn with_checksum(mut bytes: Vec<u8>) -> Vec<u8> {
        let crc = checksum(&bytes[..HEADER_BYTES], &bytes[HEADER_BYTES..]);
        bytes[24..28].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    /// A damaged block is named (file, path, where it is stored) when its file is laid out,
    /// and a run that keeps only other files does not read it.
    #[test]
    fn a_damaged_block_is_named_and_read_only_if_kept() {
        let table = whole();
        let (mut bytes, at) = uncompressed_with_block_of(&table, 2);
        // The block's first byte is its stream count (28).
        assert_eq!(bytes[at], 28);
        bytes[at] = 27;
        let bytes = with_checksum(bytes);
        let err = read_table(&bytes).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(&err, FormatError::Block { file: 2, at: a, .. } if *a == at as u64),
            "{msg}"
        );
        assert!(
            msg.contains(&table.files[2].path) && msg.contains("27 streams"),
            "{msg}"
        );
        let body = LayoutBody::open(&bytes).unwrap();
        let skeleton = body.skeleton().unwrap();
        let kept = body.table_keeping(&skeleton, |i| i < 2).unwrap();
        assert_eq!(kept.files[..2], table.files[..2]);
    }

    /// An index whose blocks do not tile the bytes stored after it is refused.
    #[test]
    fn blocks_must_tile_what_is_stored() {
        let table = whole();
        let (bytes, at) = uncompressed_with_block_of(&table, 1);
        // Drop a byte of file 1's block: every later block and the end move.
        let mut short = bytes.clone();
        short.remove(at);
        let stored_len = (short.len() - HEADER_BYTES) as u64;
        short[28..36].copy_from_slice(&stored_len.to_le_bytes());
        let err = read_table(&with_checksum(short)).unwrap_err().to_string();
        assert!(
            err.contains("stream `meta`") && err.contains("blocks"),
            "{err}"
        );
        // A stored index length past the file's end.
        let mut long = bytes;
        long[36..44].copy_from_slice(&u64::MAX.to_le_bytes());
        let err = read_table(&with_checksum(long)).unwrap_err();
        assert!(
            matches!(err, FormatError::Truncated { offset: 44, .. }),
            "{err}"
        );
    }
}
