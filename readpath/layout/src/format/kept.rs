//! A layout file read for one run: first its skeleton (the schemas, the Iceberg metadata and
//! every file's path, each file a [`FileLayout::placeholder`]), which is all a scenario needs
//! to know which files its queries touch; then the table with only those files laid out. A
//! recorded table of 2,000 files x 439 columns whose query reads 280 files then builds and
//! checks 280 files' chunks, not 878,000 chunks (`scenarios/many-small-files-iceberg.yaml`).
//!
//! The streams are read once for the skeleton: every value of a file is stepped over (its
//! varints, flags, codec and statistics parsed, so a malformed stream is still an error), and
//! where each file starts in every stream is kept. Laying a file out later starts there. A
//! stepped-over value is not range-checked beyond its syntax: a file no query touches is not
//! checked as a laid-out file is ([`crate::Table::validate`] checks those).

use super::{
    all_read, chunk_flags, decode_file, decode_meta, decode_stats, directory, read_path, Decoder,
    FormatError, R, S, STREAM_COUNT,
};
use super::{F_BLOOM, F_BLOOM_LEN, F_COLUMN_INDEX, F_DICT, F_OFFSET_INDEX, F_PAGES, F_STATS};
use crate::{Codec, FileLayout, Table};

/// A layout file's checked, decompressed body.
#[derive(Debug, Clone)]
pub struct LayoutBody {
    body: Vec<u8>,
    version: u32,
}

/// A table of placeholders and where each file starts in the body's streams.
#[derive(Debug, Clone)]
pub struct Skeleton {
    /// The table: schemas, Iceberg metadata, provenance, and each file's path only.
    pub table: Table,
    starts: Vec<FileStart>,
}

/// Where a file's values start in every stream (its path already read), and the codec in force.
#[derive(Debug, Clone, Copy)]
struct FileStart {
    pos: [usize; STREAM_COUNT],
    codec: Codec,
}

impl LayoutBody {
    /// Checks a layout file's header and decompresses its body (errors as [`super::read_table`]).
    pub fn open(bytes: &[u8]) -> Result<LayoutBody, FormatError> {
        let (body, version) = super::checked_body(bytes)?;
        Ok(LayoutBody {
            body: body.into_owned(),
            version,
        })
    }

    /// Every file's path and where its values start; no file laid out.
    pub fn skeleton(&self) -> Result<Skeleton, FormatError> {
        let (mut d, known_flags) = directory(&self.body, self.version)?;
        let mut table = decode_meta(&mut d)?;
        let file_count = d.u(S::Meta)?;
        let mut files = Vec::with_capacity(d.capacity(S::FileSize, file_count));
        let mut starts = Vec::with_capacity(d.capacity(S::FileSize, file_count));
        let mut prev_path = Vec::new();
        let mut codec = Codec::Uncompressed;
        for fi in 0..file_count {
            let path = read_path(&mut d, fi, &mut prev_path)?;
            starts.push(FileStart { pos: d.pos, codec });
            skip_file(&mut d, fi, &mut codec, known_flags)?;
            files.push(FileLayout::placeholder(path));
        }
        all_read(&d)?;
        table.files = files;
        Ok(Skeleton { table, starts })
    }

    /// The skeleton's table with the files `keep` names laid out whole, the others placeholders.
    pub fn table_keeping(
        &self,
        skeleton: &Skeleton,
        keep: impl Fn(usize) -> bool,
    ) -> Result<Table, FormatError> {
        let (mut d, known_flags) = directory(&self.body, self.version)?;
        let mut table = skeleton.table.clone();
        debug_assert_eq!(table.files.len(), skeleton.starts.len(), "a start per file");
        for (fi, start) in skeleton.starts.iter().enumerate() {
            if !keep(fi) {
                continue;
            }
            d.pos = start.pos;
            let mut codec = start.codec;
            let path = std::mem::take(&mut table.files[fi].path);
            table.files[fi] = decode_file(&mut d, fi as u64, path, &mut codec, known_flags)?;
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
    use crate::format::{read_table, write_table};

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
}
