//! Polars 2.1 `scan_parquet(...).collect()` (polars-plan `plans/parquet_footers.rs`;
//! polars-io `parquet/read/async_impl.rs`, `cloud/polars_object_store.rs`,
//! `cloud/concurrency/`; polars-stream `nodes/io_sources/multi_scan/`, `parquet/`).
//!
//! - No HEAD: footers by a suffix GET of `POLARS_CLOUD_FOOTER_READ_SIZE` (256 KiB).
//! - Plan time: file 0 and an even stride of the others, `POLARS_RESOLVE_SAMPLE_LIMIT` (16)
//!   in all, all at once; a footer larger than the suffix is read again whole
//!   (`[size - 8 - L, size)`). Execution starts when they all completed.
//! - Execution: every file but the first reads its footer again (the delta beyond the suffix
//!   only, `[size - 8 - L, size - suffix)`), `min(threads + 3, files, 128)` files ahead
//!   (`calc_n_readers_pre_init`; 5 on 2 threads); a file whose suffix held it whole sends no
//!   data GET.
//! - At most `max(min(threads, files, 128), 2) + 1` readers started and unfinished (3 on 2
//!   threads), in file order; a reader spawns its row groups'
//!   fetches in order, each once it holds `ceil(projected / 1024)` KiB of the 64 MiB prefetch
//!   budget, after the previous reader spawned all of its own; the budget is released when
//!   the row group's decoded rows are handed on.
//! - A row group's chunks merge and split around `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS`
//!   (the coalescer's `polars` preset); every GET (footers too) holds `min(len, 8 MiB)` of the
//!   adaptive in-flight budget (`inflight.rs`).
//! - Decoding runs on the CPU pool (`POLARS_MAX_THREADS`).
//!
//! Not modelled: the budget's waiters wake by `Notify`, in no fixed order (here first come
//! first served).

use coalescer::CoalescePolicy;
use layout::ByteRange;
use limits::{saturating_u64, u32_of, usize_of};

use super::{decode_and_deliver, get, merged, needed_in, one, FileRead};
use crate::error::PlanError;
use crate::peer::inflight;
use crate::peer::knobs::PeerKnobs;
use crate::peer::program::{Budget, Dep, Program, Request, Step};
use crate::types::ReadKind;

/// Files and threads past which polars stops scaling its readers (`.min(128)` in both rules
/// below).
const READERS_MAX: u32 = 128;

/// `calc_n_readers_pre_init`: files whose footers are read ahead at execution,
/// `min(num_pipelines + 3, files, 128)`, at least 1; `num_pipelines` is the compute pool's
/// threads (`POLARS_MAX_THREADS`).
fn readers_pre_init(threads: u32, files: usize) -> u32 {
    let files = u32::try_from(files).unwrap_or(u32::MAX);
    threads.saturating_add(3).min(files.max(1)).min(READERS_MAX)
}

/// Readers started and unfinished at most: one attached, the `started_reader_tx` channel's
/// capacity `max(max_concurrent_scans, 2) - 1`, one waiting to send; `max_concurrent_scans` is
/// `calc_max_concurrent_scans`, `min(num_pipelines, files, 128)`.
fn readers_started(threads: u32, files: usize) -> u32 {
    let files = u32::try_from(files).unwrap_or(u32::MAX);
    let scans = threads.min(files.max(1)).min(READERS_MAX);
    scans.max(2) + 1
}
/// The row-group prefetch budget, in KiB (64 MiB).
const PREFETCH_KIB: u64 = 65_536;

/// The request, holding its share of the in-flight budget at a target chunk of `chunk_bytes`.
fn budgeted(chunk_bytes: u64, mut r: Request) -> Request {
    r.budget_bytes = inflight::budget_bytes(r.range.len(), chunk_bytes);
    r
}

/// `POLARS_DOWNLOAD_CHUNK_SIZE_RANDOM_ACCESS` of the preset's policy: the merge target, each
/// GET's hold on the budget and the budget's floor.
fn chunk_bytes(policy: &CoalescePolicy) -> Result<u64, PlanError> {
    crate::peer::polars_chunk_bytes(policy).ok_or_else(|| {
        PlanError::Contract(format!(
            "the polars reader needs the polars coalescing policy, not {policy:?}"
        ))
    })
}

/// The files read at plan time (`select_footer_indices`, stratified): `k = min(max(ceil(sqrt
/// n), 16), limit, n)`; file 0, then `1 + j (n - 1) / (k - 1)` for `j < k - 1`.
fn plan_sample(n: usize, limit: u32) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let sqrt = usize_of(saturating_u64((n as f64).sqrt().ceil()));
    let k = sqrt.max(16).min((limit as usize).max(1)).min(n);
    if k >= n {
        return (0..n).collect();
    }
    let extra = k - 1;
    let mut out = vec![0];
    out.extend((0..extra).map(|j| 1 + j * (n - 1) / extra));
    out.dedup();
    out
}

pub(super) fn program(
    files: &[FileRead<'_>],
    knobs: &PeerKnobs,
    policy: &CoalescePolicy,
) -> Result<Program, PlanError> {
    let chunk = chunk_bytes(policy)?;
    let mut p = Program {
        budget: Some(Budget::PolarsAdaptive {
            init_bytes: knobs.polars_init_bytes(chunk),
            chunk_bytes: chunk,
        }),
        ..Program::default()
    };
    let plan = p.pool("plan", u32::MAX);
    let threads = knobs.cpu_threads.max(1);
    let init = p.pool("reader init", readers_pre_init(threads, files.len()));
    let readers = p.pool("readers", readers_started(threads, files.len()));
    let prefetch = p.pool("row-group prefetch", u32::MAX);
    p.pools[prefetch].weight_capacity = Some(PREFETCH_KIB);
    let cpu = p.pool("cpu", knobs.cpu_threads.max(1));
    let suffix = knobs.footer_read_bytes;

    let planned: Vec<usize> = plan_sample(files.len(), knobs.polars_sample_limit())
        .into_iter()
        .filter_map(|i| files.get(i))
        .map(|f| {
            let (size, footer) = (f.size(), f.footer_len());
            let tail = ByteRange::new(size - suffix.min(size), size);
            let mut steps = vec![one(budgeted(
                chunk,
                get(f.index, tail, ReadKind::Footer, footer.min(suffix)),
            ))];
            if footer > suffix && size > suffix {
                let whole = ByteRange::new(size - footer, size);
                steps.push(one(budgeted(
                    chunk,
                    get(f.index, whole, ReadKind::Footer, footer - suffix),
                )));
            }
            p.task(plan, Vec::new(), steps)
        })
        .collect();
    let plan_done: Vec<Dep> = planned.iter().map(|t| p.done(*t)).collect();

    let mut prev_reader: Option<usize> = None;
    let mut prev_last_fetch: Option<usize> = None;
    for (k, f) in files.iter().enumerate() {
        let (size, footer) = (f.size(), f.footer_len());
        let in_memory = k > 0 && size <= suffix;
        // Reader initialisation: the footer again (not for file 0, whose metadata the plan
        // kept), holding a slot of `readers_pre_init` until the reader starts.
        let mut reader_deps = plan_done.clone();
        let init_task = (k > 0).then(|| {
            let tail = ByteRange::new(size - suffix.min(size), size);
            let mut steps = vec![one(budgeted(
                chunk,
                get(f.index, tail, ReadKind::Footer, footer.min(suffix)),
            ))];
            if footer > suffix && size > suffix {
                let delta = ByteRange::new(size - footer, size - suffix);
                steps.push(one(budgeted(
                    chunk,
                    get(f.index, delta, ReadKind::Footer, footer - suffix),
                )));
            }
            let n = steps.len();
            let t = p.task_at(init, plan_done.clone(), steps);
            reader_deps.push(Dep { task: t, step: n });
            t
        });
        if let Some(r) = prev_reader {
            reader_deps.push(Program::started(r));
        }
        let reader = p.task_at(readers, reader_deps, Vec::new());
        if let Some(t) = init_task {
            p.tasks[t]
                .steps
                .push(Step::Wait(vec![Program::started(reader)]));
        }
        let mut decodes = Vec::new();
        for (g, ranges) in &f.row_groups {
            let requests: Vec<Request> = if in_memory {
                Vec::new()
            } else {
                merged(ranges, policy)?
                    .into_iter()
                    .map(|r| {
                        budgeted(
                            chunk,
                            get(f.index, r, ReadKind::DataPages, needed_in(r, ranges)),
                        )
                    })
                    .collect()
            };
            let projected: u64 = ranges.iter().map(|r| r.len()).sum();
            let mut deps = vec![Program::started(reader)];
            if let Some(t) = prev_last_fetch {
                deps.push(Program::started(t));
            }
            let parallel = u32_of(requests.len().max(1));
            let fetch = p.task_at(prefetch, deps, vec![Step::Requests { requests, parallel }]);
            p.tasks[fetch].weight = projected.div_ceil(1024);
            let decode = p.task_at(
                cpu,
                vec![Dep {
                    task: fetch,
                    step: 1,
                }],
                decode_and_deliver(f, *g).to_vec(),
            );
            let decoded = p.done(decode);
            p.tasks[fetch].steps.push(Step::Wait(vec![decoded]));
            decodes.push(decode);
            prev_last_fetch = Some(fetch);
        }
        let done = decodes.iter().map(|d| p.done(*d)).collect();
        p.tasks[reader].steps.push(Step::Wait(done));
        prev_reader = Some(reader);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_scale_with_the_threads_as_polars_computes_them() {
        // 2 threads, 24 files: the 5 footers ahead and 3 readers the request logs show.
        assert_eq!(readers_pre_init(2, 24), 5);
        assert_eq!(readers_started(2, 24), 3);
        assert_eq!(readers_pre_init(8, 24), 11);
        assert_eq!(readers_started(8, 24), 9);
        // One file: one footer ahead; the channel still holds one.
        assert_eq!(readers_pre_init(8, 1), 1);
        assert_eq!(readers_started(8, 1), 3);
        assert_eq!(readers_pre_init(1000, 10_000), 128);
        assert_eq!(readers_started(1000, 10_000), 129);
    }

    #[test]
    fn the_plan_sample_is_the_measured_one() {
        // Measured through the test bed: 24 files, 40 files, 5 files.
        assert_eq!(
            plan_sample(24, 16),
            vec![0, 1, 2, 4, 5, 7, 8, 10, 11, 13, 14, 16, 17, 19, 20, 22]
        );
        assert_eq!(
            plan_sample(40, 16),
            vec![0, 1, 3, 6, 8, 11, 14, 16, 19, 21, 24, 27, 29, 32, 34, 37]
        );
        assert_eq!(plan_sample(5, 16), vec![0, 1, 2, 3, 4]);
        assert_eq!(plan_sample(24, 1), vec![0]);
    }
}
