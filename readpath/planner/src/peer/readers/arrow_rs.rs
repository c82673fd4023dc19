//! arrow-rs `ParquetRecordBatchStream` over `ParquetObjectReader`, files one after another
//! (parquet `arrow/async_reader/store.rs`, `file/metadata/reader.rs`; object_store
//! `util.rs` `coalesce_ranges`): the footer by two suffix GETs (`bytes=-8`, then
//! `bytes=-(L+8)`: no size is known, so no HEAD); then row group by row group, the row
//! group's column chunks merged when the gap is at most 1 MiB, those GETs
//! `coalesce_parallel` (10) at once; the next row group is fetched once this one is decoded.

use coalescer::CoalescePolicy;
use layout::ByteRange;

use super::{decode_and_deliver, get, merged, needed_in, one, FileRead};
use crate::error::PlanError;
use crate::peer::knobs::PeerKnobs;
use crate::peer::program::{Program, Step};
use crate::types::ReadKind;

pub(super) fn program(
    files: &[FileRead<'_>],
    knobs: &PeerKnobs,
    policy: &CoalescePolicy,
) -> Result<Program, PlanError> {
    let mut p = Program::default();
    let main = p.pool("stream", 1);
    let mut prev: Option<usize> = None;
    for f in files {
        let (size, footer) = (f.size(), f.footer_len());
        let mut steps = vec![
            one(get(
                f.index,
                ByteRange::new(size.saturating_sub(8), size),
                ReadKind::Footer,
                0,
            )),
            one(get(
                f.index,
                ByteRange::new(size - footer, size),
                ReadKind::Footer,
                footer,
            )),
        ];
        for (g, ranges) in &f.row_groups {
            let requests = merged(ranges, policy)?
                .into_iter()
                .map(|r| get(f.index, r, ReadKind::DataPages, needed_in(r, ranges)))
                .collect();
            steps.push(Step::Requests {
                requests,
                parallel: knobs.coalesce_parallel.max(1),
            });
            steps.extend(decode_and_deliver(f, *g));
        }
        let t = p.task(main, prev.into_iter().collect(), steps);
        prev = Some(t);
    }
    Ok(p)
}
