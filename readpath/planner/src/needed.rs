//! What the reader needed: every byte range its plans registered, before any coalescing, each
//! tagged with what it is (as the arrow-rs push decoder reports `NeedsData`). A driver that
//! records a trace takes them from [`crate::Reader::needed`], so that `sim replay --what-if`
//! can rebuild the reads under another strategy; no driver re-plans.

use layout::{ByteRange, FileIndex, FileLayout};

use crate::plan::FilePlan;
use crate::types::ReadKind;

/// One range the reader needed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeededRange {
    /// The data file.
    pub file: FileIndex,
    /// Position of the file in the query's file list (the order reports use).
    pub query_pos: usize,
    /// The bytes.
    pub range: ByteRange,
    /// What the bytes are.
    pub kind: ReadKind,
    /// Row group and column the bytes belong to (`None` for the footer).
    pub row_group: Option<u32>,
    pub column: Option<u32>,
    /// Rows in that row group (0 for the footer).
    pub row_group_rows: u64,
    /// First row of the page in its row group (data pages starting a page; 0 otherwise).
    pub first_row: u64,
    /// Decoded size of the whole column chunk (0 for the footer).
    pub uncompressed_bytes: u64,
}

/// One part of a column chunk an entry can come from.
struct Part {
    range: ByteRange,
    kind: ReadKind,
    row_group: u32,
    column: u32,
    first_row: u64,
}

/// Every part of the chunks of `columns` in `row_groups` of `file`, sorted by offset.
fn chunk_parts(
    file: &FileLayout,
    row_groups: &[u32],
    columns: &[u32],
    use_offset_index: bool,
) -> Vec<Part> {
    let mut parts = Vec::new();
    for &g in row_groups {
        let Some(rg) = file.row_groups.get(g as usize) else {
            continue;
        };
        for &c in columns {
            let Some(ch) = rg.columns.get(c as usize) else {
                continue;
            };
            let mut push = |range: ByteRange, kind: ReadKind, first_row: u64| {
                parts.push(Part {
                    range,
                    kind,
                    row_group: g,
                    column: c,
                    first_row,
                })
            };
            // A reader of whole chunks (no offset index) reads a chunk as one range; the part
            // of an entry may be the data pages alone or the chunk with its dictionary.
            if !use_offset_index {
                push(ch.range(), ReadKind::DataPages, 0);
            }
            if let Some(r) = ch.dictionary_page() {
                push(r, ReadKind::Dictionary, 0);
            }
            match ch.pages(file).filter(|_| use_offset_index) {
                Some(pages) => {
                    for p in pages.iter() {
                        push(p.range(), ReadKind::DataPages, p.first_row_index);
                    }
                }
                None => push(ch.data_pages(), ReadKind::DataPages, 0),
            }
            if let Some(r) = ch.offset_index() {
                push(r, ReadKind::OffsetIndex, 0);
            }
            if let Some(r) = ch.column_index() {
                push(r, ReadKind::ColumnIndex, 0);
            }
            if let Some(b) = ch.bloom_filter() {
                let len = b.len.map_or(u64::MAX, u64::from);
                let r = ByteRange::with_len(b.offset, len);
                push(r, ReadKind::BloomHeader, 0);
                push(r, ReadKind::BloomBlocks, 0);
            }
        }
    }
    parts.sort_by_key(|p| (p.range.start, p.kind));
    parts
}

/// The ranges of one unit's plan, each matched to the column chunk part that holds it.
pub(crate) fn plan_ranges(
    file: &FileLayout,
    file_index: FileIndex,
    query_pos: usize,
    plan: &FilePlan,
    columns: &[u32],
    use_offset_index: bool,
    out: &mut Vec<NeededRange>,
) {
    let surviving: Vec<u32> = plan.row_groups.iter().map(|g| g.row_group).collect();
    let parts = chunk_parts(file, &surviving, columns, use_offset_index);
    for e in plan.entries.iter() {
        // Parts are sorted by start; the one holding the entry starts at or before it.
        let upto = parts.partition_point(|p| p.range.start <= e.range.start);
        let found = parts[..upto]
            .iter()
            .rev()
            .take(64)
            .find(|p| p.kind == e.kind && p.range.contains(&e.range))
            .or_else(|| {
                parts
                    .iter()
                    .find(|p| p.kind == e.kind && p.range.overlaps(&e.range))
            });
        let Some(p) = found else { continue };
        let rg = file.row_groups.get(p.row_group as usize);
        out.push(NeededRange {
            file: file_index,
            query_pos,
            range: e.range,
            kind: e.kind,
            row_group: Some(p.row_group),
            column: Some(p.column),
            row_group_rows: rg.map_or(0, |g| g.num_rows),
            first_row: if e.range.start == p.range.start {
                p.first_row
            } else {
                0
            },
            uncompressed_bytes: rg
                .and_then(|g| g.columns.get(p.column as usize))
                .map_or(0, |c| c.uncompressed_bytes),
        });
    }
}

/// The footer a file's reader needs.
pub(crate) fn footer(file: &FileLayout, file_index: FileIndex, query_pos: usize) -> NeededRange {
    NeededRange {
        file: file_index,
        query_pos,
        range: file.footer_range(),
        kind: ReadKind::Footer,
        row_group: None,
        column: None,
        row_group_rows: 0,
        first_row: 0,
        uncompressed_bytes: 0,
    }
}

/// Query order: file by file, the footer first, then by offset.
pub(crate) fn sort(ranges: &mut [NeededRange]) {
    ranges.sort_by_key(|n| {
        (
            n.query_pos,
            n.kind != ReadKind::Footer,
            n.range.start,
            n.range.end,
        )
    });
}
