//! pyarrow `pq.read_table` (the dataset scanner over Arrow C++; `core.py`
//! `ParquetDataset`, `file_parquet.cc`, `scanner.cc`, `parquet/arrow/reader.cc`,
//! `file_reader.cc`, `io/interfaces.cc`, `io/caching.cc`).
//!
//! - Opening: for one path a HEAD (`get_file_info`), a HEAD and the footer (the fragment's
//!   physical schema), and a HEAD (the scan opens it again, its metadata cached); for a list,
//!   the first file's HEAD and footer (the schema), then each file's HEAD and footer.
//! - Footer: a tail of `footer_read_size` (64 KiB) at an absolute offset, and when the
//!   metadata does not fit, the whole metadata `[size - 8 - L, size - 8)` again.
//! - Files: `fragment_readahead` (4) at once, in list order. With `pre_buffer`, a sliding
//!   window: the next file opens as soon as one of the 4 is finished (its last row group
//!   decoded), as the scanner's `MakeMergedGenerator(batch_gen_gen, fragment_readahead)`
//!   pulls the next fragment once a subscription ends (`arrow/util/async_generator.h`: "pulls
//!   from up to max_subscriptions at a time"). The log of 24 files shows it: files 4 and 5
//!   open when 1 and 2 are done, 6 and 7 a round trip later when 0 and 3 are (their last
//!   reads waited for one of the 8 IO threads). Without `pre_buffer`, in waves: the next 4
//!   open once each of the 4 before is decoded, as the logs show. Not identical files
//!   finishing together: with a first file that finishes early (`sim check-peers --shape
//!   uneven`) its slot stays empty until the others are done, on 2 and 4 CPU threads; the wait
//!   shrinks as the CPU pool grows (its first-in-first-out queue behind blocking reads is the
//!   likely cause, `docs/peers.md`), and the waves predict 2, 4 and 8 threads within 3%.
//! - Row groups: requested `batch_readahead × batch_size` (16 × 131072) rows ahead of the
//!   one the consumer asks for (it asks for the next once the previous is decoded).
//! - With `pre_buffer` (the default): every column chunk of the file's row groups coalesced
//!   once (`hole_size_limit` 8 KiB, `range_size_limit` 32 MiB; reads may span row groups);
//!   requesting a row group submits the reads it overlaps that have not started. With
//!   `lazy` off (`CacheOptions::Defaults`, `MakeFromNetworkMetrics`), `ReadRangeCache::Cache`
//!   issues every coalesced read at once when the file is pre-buffered.
//! - Without: each row group is a task of the CPU pool that reads its chunks one GET after
//!   another (each blocks the thread) and then decodes.
//! - Every HEAD, footer and pre-buffered GET takes a thread of the IO pool
//!   (`io_thread_count`, 8) for its whole duration.

use coalescer::CoalescePolicy;
use layout::ByteRange;
use limits::u32_of;

use super::{decode_and_deliver, get, head, merged, needed_in, one, FileRead};
use crate::error::PlanError;
use crate::peer::knobs::PeerKnobs;
#[cfg(test)]
use crate::peer::program::Task;
use crate::peer::program::{Dep, Program, Request, Step};
use crate::types::ReadKind;

/// Rows requested ahead of the consumer: `batch_readahead` (16) × `batch_size` (131072)
/// (`file_parquet.cc` `ScanBatchesAsync`).
const ROWS_READAHEAD: u64 = 16 * 131_072;

fn on(pool: usize, mut r: Request) -> Request {
    r.io_pool = Some(pool);
    r
}

fn footer(f: &FileRead<'_>, knobs: &PeerKnobs, io: usize) -> Vec<Step> {
    let (size, footer) = (f.size(), f.footer_len());
    let tail = knobs.footer_read_bytes.min(size);
    let range = ByteRange::new(size - tail, size);
    let mut steps = vec![one(on(
        io,
        get(f.index, range, ReadKind::Footer, footer.min(tail)),
    ))];
    if footer > tail {
        let range = ByteRange::new(size - footer, size.saturating_sub(8));
        steps.push(one(on(
            io,
            get(f.index, range, ReadKind::Footer, footer - tail),
        )));
    }
    steps
}

/// For each row group (by position), the position whose delivery requests it: row group `m`
/// is requested when the consumer asks for the first `i` with fewer than `ROWS_READAHEAD` rows
/// in `i..m`; `None` when that is the first (requested at open).
fn requested_after(f: &FileRead<'_>) -> Vec<Option<usize>> {
    let rows: Vec<u64> = f
        .row_groups
        .iter()
        .map(|(g, _)| {
            f.layout
                .row_groups
                .get(*g as usize)
                .map_or(0, |r| r.num_rows)
        })
        .collect();
    requested_after_rows(&rows)
}

fn requested_after_rows(rows: &[u64]) -> Vec<Option<usize>> {
    (0..rows.len())
        .map(|m| {
            let mut i = m;
            let mut ahead = 0u64;
            while i > 0 && ahead + rows[i - 1] < ROWS_READAHEAD {
                ahead += rows[i - 1];
                i -= 1;
            }
            i.checked_sub(1)
        })
        .collect()
}

pub(super) fn program(
    files: &[FileRead<'_>],
    knobs: &PeerKnobs,
    policy: &CoalescePolicy,
) -> Result<Program, PlanError> {
    let mut p = Program::default();
    let fragments = p.pool("fragments", knobs.fragment_readahead.max(1));
    let io = p.pool("io", knobs.io_threads.max(1));
    let cpu = p.pool("cpu", knobs.cpu_threads.max(1));
    let submitted = p.pool("submitted reads", u32::MAX);
    let single = files.len() == 1;
    let wave = knobs.fragment_readahead.max(1) as usize;
    let mut finished: Vec<Dep> = Vec::with_capacity(files.len());
    let schema = files.first().map(|f| {
        let mut steps = vec![one(on(io, head(f.index)))];
        if single {
            steps.push(one(on(io, head(f.index))));
        }
        steps.extend(footer(f, knobs, io));
        p.task(fragments, Vec::new(), steps)
    });
    for (k, f) in files.iter().enumerate() {
        let mut open = vec![one(on(io, head(f.index)))];
        if !single {
            open.extend(footer(f, knobs, io));
        }
        let opened = Dep {
            task: 0,
            step: open.len(),
        };
        let mut deps: Vec<Dep> = schema.iter().map(|t| p.done(*t)).collect();
        // Without `pre_buffer` the next files open in waves (see the module doc); with it, a
        // file opens as soon as one of the `fragment_readahead` before it is finished, which
        // the fragments pool (a file holds its slot until its last row group is decoded) does.
        if !knobs.pre_buffer {
            if let Some(w) = (k / wave).checked_sub(1) {
                deps.extend_from_slice(&finished[w * wave..(w + 1) * wave]);
            }
        }
        let file_task = p.task_at(fragments, deps, open);
        let opened = Dep {
            task: file_task,
            ..opened
        };
        let delivered = if knobs.pre_buffer {
            let pools = Pools { io, cpu, submitted };
            pre_buffered(&mut p, f, policy, opened, pools, knobs.lazy)?
        } else {
            unbuffered(&mut p, f, opened, cpu)
        };
        // The file's slot is free once its last row group is decoded.
        let wait = delivered.iter().map(|t| p.done(*t)).collect();
        p.tasks[file_task].steps.push(Step::Wait(wait));
        finished.push(p.done(file_task));
    }
    Ok(p)
}

/// The pools a pre-buffered file's tasks run on.
#[derive(Clone, Copy)]
struct Pools {
    io: usize,
    cpu: usize,
    submitted: usize,
}

/// `pre_buffer`: the file's reads, each submitted with the first row group that needs it
/// (`lazy`), or all at once when the file is opened; returns the decode tasks.
fn pre_buffered(
    p: &mut Program,
    f: &FileRead<'_>,
    policy: &CoalescePolicy,
    opened: Dep,
    pools: Pools,
    lazy: bool,
) -> Result<Vec<usize>, PlanError> {
    let Pools { io, cpu, submitted } = pools;
    let all: Vec<ByteRange> = f.row_groups.iter().flat_map(|(_, r)| r.clone()).collect();
    let mut reads = merged(&all, policy)?;
    reads.sort_by_key(|r| r.start);
    let after = requested_after(f);
    let mut read_task: Vec<Option<usize>> = vec![None; reads.len()];
    let mut decodes = Vec::with_capacity(f.row_groups.len());
    for (m, (g, ranges)) in f.row_groups.iter().enumerate() {
        let needs: Vec<usize> = (0..reads.len())
            .filter(|i| ranges.iter().any(|x| x.overlaps(&reads[*i])))
            .collect();
        let mine: Vec<Request> = needs
            .iter()
            .filter(|i| read_task[**i].is_none())
            .map(|i| {
                on(
                    io,
                    get(
                        f.index,
                        reads[*i],
                        ReadKind::DataPages,
                        needed_in(reads[*i], &all),
                    ),
                )
            })
            .collect();
        let mut deps = vec![opened];
        if let Some(prev) = after[m].filter(|_| lazy) {
            deps.push(p.done(decodes[prev]));
        }
        let parallel = u32_of(mine.len().max(1));
        let t = p.task_at(
            submitted,
            deps,
            vec![Step::Requests {
                requests: mine,
                parallel,
            }],
        );
        let mut decode_after: Vec<usize> = needs
            .iter()
            .map(|i| *read_task[*i].get_or_insert(t))
            .collect();
        decode_after.push(t);
        decode_after.sort_unstable();
        decode_after.dedup();
        decodes.push(p.task(cpu, decode_after, decode_and_deliver(f, *g).to_vec()));
    }
    Ok(decodes)
}

/// Without `pre_buffer`: a CPU-pool task per row group, its chunks one GET after another;
/// returns those tasks.
fn unbuffered(p: &mut Program, f: &FileRead<'_>, opened: Dep, cpu: usize) -> Vec<usize> {
    let after = requested_after(f);
    let mut tasks: Vec<usize> = Vec::with_capacity(f.row_groups.len());
    for (m, (g, ranges)) in f.row_groups.iter().enumerate() {
        let requests = ranges
            .iter()
            .map(|r| get(f.index, *r, ReadKind::DataPages, r.len()))
            .collect();
        let mut steps = vec![Step::Requests {
            requests,
            parallel: 1,
        }];
        steps.extend(decode_and_deliver(f, *g));
        let mut deps = vec![opened];
        if let Some(prev) = after[m] {
            deps.push(p.done(tasks[prev]));
        }
        tasks.push(p.task_at(cpu, deps, steps));
    }
    tasks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::QuerySpec;
    use crate::testing::{table, TableShape};

    /// The file tasks (on the fragments pool) of 8 one-row-group files, in file order.
    fn file_tasks(pre_buffer: bool) -> Vec<Task> {
        let t = table(&TableShape {
            files: 8,
            row_groups: 1,
            ..TableShape::default()
        });
        let q = QuerySpec::new(vec![1, 2], (0..8).collect());
        let files = super::super::files(&t, &q).unwrap();
        let knobs = PeerKnobs {
            pre_buffer,
            ..PeerKnobs::defaults()
        };
        let policy = crate::Strategy::preset("arrow-cpp")
            .unwrap()
            .coalesce_policy();
        let p = program(&files, &knobs, &policy).unwrap();
        let fragments = 0;
        p.tasks
            .into_iter()
            .filter(|t| t.pool == fragments)
            .collect()
    }

    #[test]
    fn with_pre_buffer_files_open_in_a_sliding_window_without_in_waves() {
        // Task 0 is the schema's open; files follow. File 4 (index 5) waits, without
        // pre_buffer, for the schema and all 4 files of the wave before; with it, only for the
        // schema: its slot in the fragments pool frees when any earlier file is done.
        let waves = file_tasks(false);
        let sliding = file_tasks(true);
        assert_eq!((waves.len(), sliding.len()), (9, 9));
        assert_eq!(waves[5].deps.len(), 1 + 4);
        assert_eq!(sliding[5].deps.len(), 1);
        assert_eq!(
            waves[1].deps.len(),
            1,
            "the first wave waits for the schema only"
        );
    }

    /// The read-submitting tasks (on the "submitted reads" pool) of one file of 12 row groups
    /// of 500k rows, and how many wait for a decode.
    fn waiting_submissions(lazy: bool) -> usize {
        let t = table(&TableShape {
            files: 1,
            row_groups: 12,
            rows: 500_000,
            ..TableShape::default()
        });
        let q = QuerySpec::new(vec![1, 2], vec![0]);
        let files = super::super::files(&t, &q).unwrap();
        let knobs = PeerKnobs {
            lazy,
            ..PeerKnobs::defaults()
        };
        let policy = crate::Strategy::preset("arrow-cpp")
            .unwrap()
            .coalesce_policy();
        let p = program(&files, &knobs, &policy).unwrap();
        let submitted = 3;
        p.tasks
            .iter()
            .filter(|t| t.pool == submitted && t.deps.len() > 1)
            .count()
    }

    #[test]
    fn without_lazy_every_read_is_issued_when_the_file_is_pre_buffered() {
        // Lazy: row groups 5-11 are requested after a decode (two million rows ahead).
        assert_eq!(waiting_submissions(true), 7);
        assert_eq!(waiting_submissions(false), 0);
    }

    #[test]
    fn row_groups_are_requested_two_million_rows_ahead() {
        // 12 row groups of 500k rows (the measured tall file): 0-4 at open, 5-9 once 0-4
        // are consumed one by one, 10-11 after.
        let ahead = requested_after_rows(&[500_000; 12]);
        assert_eq!(&ahead[..5], &[None; 5]);
        assert_eq!(ahead[5], Some(0));
        assert_eq!(ahead[9], Some(4));
        assert_eq!(ahead[11], Some(6));
        // Files under 2M rows have every row group requested at open.
        assert_eq!(requested_after_rows(&[5_000; 64]), vec![None; 64]);
    }
}
