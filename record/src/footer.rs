//! The footer facts a layout needs, in one shape whichever decoder produced them: the
//! `parquet` crate (first choice) or the tolerant fallback in [`crate::thrift`].

use layout::{Codec, MinMax};
use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaData;

/// The footer of one file, as stated (unchecked: values may be negative or out of range).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct FooterFacts {
    /// Leaf column paths joined with '.', in schema order.
    pub columns: Vec<String>,
    /// Each leaf's `field_id` where the writer set one (Iceberg writers do), else `None`.
    pub field_ids: Vec<Option<i32>>,
    pub row_groups: Vec<RowGroupFacts>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct RowGroupFacts {
    pub num_rows: i64,
    pub chunks: Vec<ChunkFacts>,
}

/// One column chunk's ColumnMetaData and index locations, as stated.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct ChunkFacts {
    pub path: String,
    pub codec: Option<Codec>,
    pub data_page_offset: i64,
    pub dictionary_page_offset: Option<i64>,
    pub compressed_bytes: i64,
    pub uncompressed_bytes: i64,
    pub column_index: (Option<i64>, Option<i32>),
    pub offset_index: (Option<i64>, Option<i32>),
    pub bloom_filter_offset: Option<i64>,
    pub bloom_filter_len: Option<i32>,
    /// The offset index's page locations, when it was read.
    pub pages: Option<Vec<RawPage>>,
    /// The chunk's min/max where a reader could prune with it (see [`crate::stats`]).
    pub min_max: Option<MinMax>,
}

/// One PageLocation of an offset index, as stated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawPage {
    pub offset: i64,
    pub compressed_page_size: i32,
    pub first_row_index: i64,
}

/// The facts of metadata the `parquet` crate decoded (with its page index, if loaded).
pub(crate) fn from_parquet_metadata(metadata: &ParquetMetaData) -> FooterFacts {
    let descr = metadata.file_metadata().schema_descr();
    let columns = descr.columns().iter().map(|c| c.path().string()).collect();
    let field_ids = descr
        .columns()
        .iter()
        .map(|c| {
            let info = c.self_type().get_basic_info();
            info.has_id().then(|| info.id())
        })
        .collect();
    let row_groups = metadata
        .row_groups()
        .iter()
        .enumerate()
        .map(|(gi, rg)| {
            let page_index = metadata.page_index_for_row_group(gi);
            let chunks = rg
                .columns()
                .iter()
                .enumerate()
                .map(|(ci, c)| ChunkFacts {
                    path: c.column_path().string(),
                    codec: Some(map_codec(c.compression())),
                    data_page_offset: c.data_page_offset(),
                    dictionary_page_offset: c.dictionary_page_offset(),
                    compressed_bytes: c.compressed_size(),
                    uncompressed_bytes: c.uncompressed_size(),
                    column_index: (c.column_index_offset(), c.column_index_length()),
                    offset_index: (c.offset_index_offset(), c.offset_index_length()),
                    bloom_filter_offset: c.bloom_filter_offset(),
                    bloom_filter_len: c.bloom_filter_length(),
                    min_max: crate::stats::chunk_min_max(c.column_descr(), c.statistics()),
                    pages: page_index.page_locations(ci).map(|locations| {
                        locations
                            .iter()
                            .map(|l| RawPage {
                                offset: l.offset,
                                compressed_page_size: l.compressed_page_size,
                                first_row_index: l.first_row_index,
                            })
                            .collect()
                    }),
                })
                .collect();
            RowGroupFacts {
                num_rows: rg.num_rows(),
                chunks,
            }
        })
        .collect();
    FooterFacts {
        columns,
        field_ids,
        row_groups,
    }
}

/// The footer's codec as the layout names it.
fn map_codec(c: Compression) -> Codec {
    match c {
        Compression::UNCOMPRESSED => Codec::Uncompressed,
        Compression::SNAPPY => Codec::Snappy,
        Compression::GZIP(_) => Codec::Gzip,
        Compression::LZO => Codec::Lzo,
        Compression::BROTLI(_) => Codec::Brotli,
        Compression::LZ4 => Codec::Lz4,
        Compression::ZSTD(_) => Codec::Zstd,
        Compression::LZ4_RAW => Codec::Lz4Raw,
    }
}
