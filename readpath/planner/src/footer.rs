//! How a reader on ClickHouse's coupled discipline fetches a file's footer: its tail read, what
//! a footer larger than the tail costs, and whether a small file is fetched whole. Each rule is
//! one reader's code, named on its variant.

use std::collections::VecDeque;

use layout::ByteRange;

/// The footer's reads of a file of `size` bytes whose footer is `L + 8` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FooterRead {
    /// A tail of `min(size, n)` bytes; a larger footer costs a second serial read of the part
    /// the tail missed, `[size - L - 8, size - n)`: ClickHouse (64 KiB), Velox
    /// (`ReaderBase::loadFileMetaData` in `velox/dwio/parquet/reader/ParquetReader.cpp`:
    /// `input_->read(fileLength_ - footerLength - 8, missingLength, ...)`).
    Tail(u64),
    /// A tail of `min(size, n)` bytes; a larger footer is read again whole, `[size - L - 8,
    /// size)`: Trino (`MetadataReader.readFooter`: "initial read was not large enough, so just
    /// read again with the correct size", `dataSource.readTail(completeFooterSize)`).
    TailThenWhole(u64),
    /// The last 8 bytes (the length and the magic), then the `L` bytes of metadata
    /// `[size - L - 8, size - 8)`: parquet-java (`ParquetFileReader.readFooter`: `seek(fileLen -
    /// 8)`, `readIntLittleEndian`, `readFully(magic)`, `seek(fileMetadataIndex)`,
    /// `readFully(footerBytesBuffer)`).
    LengthThenMetadata,
}

/// Whether a small file is fetched whole when it is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WholeFile {
    /// Never.
    Never,
    /// A file of at most `n` bytes is read whole once and its footer and data served from
    /// memory: Trino (`ParquetPageSourceFactory.createDataSource`: a `MemoryParquetDataSource`
    /// unless `estimatedFileSize > parquet.small-file-threshold`).
    Served(u64),
    /// A file of at most `max(n, tail)` bytes is fetched whole for its footer, and its data
    /// read again: Velox (`ReaderBase::loadFileMetaData`: `preloadFile = fileLength_ <=
    /// max(filePreloadThreshold_, footerSpeculativeIoSize)`, then `loadCompleteFile()`, which
    /// neither marks the input preloaded nor keeps the load for the row groups, whose
    /// `enqueue` clears it).
    FooterOnly(u64),
}

/// The footer reads of one file, in order, into `out` (cleared first); returns whether the
/// file is read whole and serves its data. `size` is the file's, `footer_len` its footer's
/// `L + 8`; `metadata_cached` skips the footer (a whole file that serves data is still read).
pub(crate) fn footer_reads(
    footer: FooterRead,
    whole: WholeFile,
    size: u64,
    footer_len: u64,
    metadata_cached: bool,
    out: &mut VecDeque<ByteRange>,
) -> bool {
    out.clear();
    if size == 0 {
        return false;
    }
    let footer_len = footer_len.min(size);
    let tail = match footer {
        FooterRead::Tail(n) | FooterRead::TailThenWhole(n) => n,
        FooterRead::LengthThenMetadata => 8,
    }
    .min(size);
    match whole {
        WholeFile::Served(n) if size <= n => {
            out.push_back(ByteRange::new(0, size));
            return true;
        }
        _ if metadata_cached => return false,
        WholeFile::FooterOnly(n) if size <= n.max(tail) => {
            out.push_back(ByteRange::new(0, size));
            return false;
        }
        _ => {}
    }
    out.push_back(ByteRange::new(size - tail, size));
    if footer_len > tail {
        let start = size - footer_len;
        out.push_back(match footer {
            FooterRead::Tail(_) => ByteRange::new(start, size - tail),
            FooterRead::TailThenWhole(_) => ByteRange::new(start, size),
            FooterRead::LengthThenMetadata => ByteRange::new(start, size - 8),
        });
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    fn reads(footer: FooterRead, whole: WholeFile, size: u64, footer_len: u64) -> Vec<(u64, u64)> {
        let mut out = VecDeque::new();
        footer_reads(footer, whole, size, footer_len, false, &mut out);
        out.iter().map(|r| (r.start, r.end)).collect()
    }

    #[test]
    fn a_tail_reads_the_missing_part_or_the_whole_footer_again() {
        let size = 100 * MIB;
        let l = 100 * KIB;
        let velox = reads(FooterRead::Tail(64 * KIB), WholeFile::Never, size, l);
        assert_eq!(
            velox,
            vec![(size - 64 * KIB, size), (size - l, size - 64 * KIB)]
        );
        let trino = reads(
            FooterRead::TailThenWhole(48 * KIB),
            WholeFile::Never,
            size,
            l,
        );
        assert_eq!(trino, vec![(size - 48 * KIB, size), (size - l, size)]);
        let small = reads(
            FooterRead::TailThenWhole(48 * KIB),
            WholeFile::Never,
            size,
            KIB,
        );
        assert_eq!(small, vec![(size - 48 * KIB, size)], "a tail that holds it");
    }

    #[test]
    fn parquet_java_reads_the_length_then_the_metadata() {
        let size = 100 * MIB;
        let r = reads(FooterRead::LengthThenMetadata, WholeFile::Never, size, 5000);
        assert_eq!(r, vec![(size - 8, size), (size - 5000, size - 8)]);
    }

    #[test]
    fn trino_serves_a_file_at_its_threshold_velox_fetches_it_for_the_footer_only() {
        let mut out = VecDeque::new();
        let trino = WholeFile::Served(3 * MIB);
        let footer = FooterRead::TailThenWhole(48 * KIB);
        assert!(footer_reads(footer, trino, 3 * MIB, KIB, false, &mut out));
        assert_eq!(out, [ByteRange::new(0, 3 * MIB)], "<= the threshold");
        assert!(!footer_reads(
            footer,
            trino,
            3 * MIB + 1,
            KIB,
            false,
            &mut out
        ));
        assert_eq!(out.len(), 1, "a tail only");
        assert!(
            footer_reads(footer, trino, MIB, KIB, true, &mut out),
            "a cached footer does not spare Trino's whole-file read"
        );
        let velox = WholeFile::FooterOnly(8 * MIB);
        let tail = FooterRead::Tail(256 * KIB);
        assert!(!footer_reads(tail, velox, 8 * MIB, KIB, false, &mut out));
        assert_eq!(out, [ByteRange::new(0, 8 * MIB)]);
        assert!(!footer_reads(tail, velox, 8 * MIB, KIB, true, &mut out));
        assert!(out.is_empty(), "a cached footer: nothing");
        // `max(threshold, tail)`: a threshold under the tail still preloads a file the tail
        // would cover.
        let low = WholeFile::FooterOnly(0);
        footer_reads(tail, low, 200 * KIB, KIB, false, &mut out);
        assert_eq!(out, [ByteRange::new(0, 200 * KIB)]);
    }
}
