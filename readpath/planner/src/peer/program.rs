//! What a peer reader does, as data: a [`Program`] of tasks, each a sequence of steps that one
//! worker of a pool carries out, with dependencies between tasks, per-request IO pools and an
//! optional bytes-in-flight budget. The programs of the readers are built in `readers.rs`; the
//! machine that runs any program is `engine.rs`.

use layout::{ByteRange, FileIndex};

use crate::types::{Object, ReadKind};

/// A bounded set of workers (threads, or slots of a reader's own limit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// For messages and reports (`"io"`, `"cpu"`, `"fragments"`).
    pub name: &'static str,
    pub capacity: u32,
    /// A semaphore over the tasks' [`Task::weight`] besides the worker count (Polars'
    /// projected-bytes prefetch budget): a task starts when its weight fits, or when nothing
    /// holds any; first come first served, so a task that does not fit holds back later ones.
    pub weight_capacity: Option<u64>,
}

/// One request of a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub object: Object,
    /// The bytes (an empty range for a HEAD).
    pub range: ByteRange,
    pub kind: ReadKind,
    /// A pool each request of this kind takes a slot of while it runs (an IO thread pool),
    /// besides the task's own worker.
    pub io_pool: Option<usize>,
    /// Bytes this request holds of the program's bytes-in-flight budget while it runs (0:
    /// not budgeted).
    pub budget_bytes: u64,
    /// Needed bytes this request serves (data the decoder uses; 0 for HEAD, LIST, footers
    /// are counted separately).
    pub needed_bytes: u64,
}

/// A point a task reaches: `step` entered (`step == steps.len()`: finished).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dep {
    pub task: usize,
    pub step: usize,
}

/// One step of a task.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Issue these requests, at most `parallel` at once, in order; the step ends when all
    /// completed.
    Requests {
        requests: Vec<Request>,
        parallel: u32,
    },
    /// Decode one row group's selected columns on the task's worker.
    Decode {
        file: FileIndex,
        row_group: u32,
        compressed_bytes: u64,
        decoded_bytes: u64,
        rows: u64,
    },
    /// Hand the decoded rows on (a chunk for the consumer).
    Deliver {
        file: FileIndex,
        query_pos: usize,
        rows: u64,
        decoded_bytes: u64,
    },
    /// Keep the worker until every point is reached (a slot held for a file until its last
    /// row group is decoded). The points may be of later tasks.
    Wait(Vec<Dep>),
}

/// One task: a worker of `pool` runs its steps in order once every point in `deps` is
/// reached.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub pool: usize,
    pub deps: Vec<Dep>,
    pub steps: Vec<Step>,
    /// What the task holds of its pool's [`Pool::weight_capacity`] while it runs.
    pub weight: u64,
}

/// A bytes-in-flight budget over the budgeted requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// A fixed number of bytes.
    Fixed(u64),
    /// Polars' adaptive controller (`inflight.rs`), starting from `init_bytes`, never under
    /// `chunk_bytes`.
    PolarsAdaptive { init_bytes: u64, chunk_bytes: u64 },
}

/// A whole query, as one reader runs it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub pools: Vec<Pool>,
    /// Tasks in priority order: a free worker takes the first ready task of its pool.
    pub tasks: Vec<Task>,
    pub budget: Option<Budget>,
    /// A result buffer in front of the consumer (DuckDB's streaming result,
    /// `streaming_buffer_size`): a task at a [`Step::Deliver`] waits while the decoded bytes
    /// delivered and not yet consumed are at least this many, then delivers.
    pub sink_bytes: Option<u64>,
}

impl Program {
    /// Adds a pool and returns its index.
    pub fn pool(&mut self, name: &'static str, capacity: u32) -> usize {
        debug_assert!(capacity > 0, "pool {name} of no workers");
        self.pools.push(Pool {
            name,
            capacity: capacity.max(1),
            weight_capacity: None,
        });
        self.pools.len() - 1
    }

    /// Adds a task and returns its index; it waits for every task in `after` to finish.
    pub fn task(&mut self, pool: usize, after: Vec<usize>, steps: Vec<Step>) -> usize {
        let deps = after.into_iter().map(|t| self.done(t)).collect();
        self.task_at(pool, deps, steps)
    }

    /// Adds a task that waits for the points `deps` (of earlier tasks).
    pub fn task_at(&mut self, pool: usize, deps: Vec<Dep>, steps: Vec<Step>) -> usize {
        debug_assert!(
            pool < self.pools.len(),
            "task of a pool that does not exist"
        );
        debug_assert!(
            deps.iter().all(|d| d.task < self.tasks.len()),
            "a task depends on a later task"
        );
        self.tasks.push(Task {
            pool,
            deps,
            steps,
            weight: 0,
        });
        self.tasks.len() - 1
    }

    /// The point where `task` (already added) finished.
    pub fn done(&self, task: usize) -> Dep {
        let steps = self.tasks.get(task).map_or(0, |t| t.steps.len());
        Dep { task, step: steps }
    }

    /// The point where `task` started.
    pub fn started(task: usize) -> Dep {
        Dep { task, step: 0 }
    }

    /// Checks what the builders cannot check as they go: every point exists.
    pub fn validate(&self) -> Result<(), String> {
        let point_ok = |d: &Dep| {
            self.tasks
                .get(d.task)
                .is_some_and(|t| d.step <= t.steps.len())
        };
        for (i, t) in self.tasks.iter().enumerate() {
            if t.pool >= self.pools.len() {
                return Err(format!(
                    "task {i} is of pool {} which does not exist",
                    t.pool
                ));
            }
            if let Some(d) = t.deps.iter().find(|d| !point_ok(d)) {
                return Err(format!(
                    "task {i} waits for step {} of task {}, which does not exist",
                    d.step, d.task
                ));
            }
            for s in &t.steps {
                if let Step::Wait(points) = s {
                    if let Some(d) = points.iter().find(|d| !point_ok(d) || d.task == i) {
                        return Err(format!(
                            "task {i} waits for step {} of task {}, which it cannot",
                            d.step, d.task
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}
