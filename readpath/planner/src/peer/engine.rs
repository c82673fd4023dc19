//! Runs a [`Program`]: tasks start on free workers of their pool once the points they wait
//! for are reached, in task order; a task's requests go out in step order under the step's
//! parallelism, their IO pool and the program's bytes-in-flight budget, first come first
//! served. Sans-IO like the rest of the planner: events in, actions out, time a parameter.

use limits::u32_of;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::program::{Budget, Dep, Program, Request, Step};
use crate::error::PlanError;
use crate::types::{
    Action, Chunk, ChunkId, DecodeId, DecodeRequest, ReadId, ReadKind, ReadRequest,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    /// Points not reached yet (how many are left).
    Waiting(u32),
    /// May start when its pool has a free worker (and its weight fits).
    Ready,
    /// On step `step`: `issued` of its requests queued or handed out, `completed` of them
    /// done (a decode step: issued 1 when it runs; a wait step: `issued` points left).
    Running {
        step: usize,
        issued: usize,
        completed: usize,
    },
    Done,
}

/// Who waits for a point: a task's start, or a task blocked on a [`Step::Wait`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiter {
    Start(usize),
    Resume(usize),
}

/// A request waiting to be admitted (its task is running it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Intent {
    task: usize,
    step: usize,
    request: usize,
}

/// A request in flight.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    intent: Intent,
    io_pool: Option<usize>,
    budget_bytes: u64,
}

pub(crate) struct Engine {
    program: Program,
    state: Vec<TaskState>,
    /// The step each task has entered (`steps.len()`: finished); `None` before it starts.
    reached: Vec<Option<usize>>,
    /// Per task: the points of it others wait for, and who waits.
    watchers: Vec<Vec<(usize, Waiter)>>,
    /// Waiters whose points are all reached, to handle in `pump`.
    woken: VecDeque<Waiter>,
    busy: Vec<u32>,
    weight_in_use: Vec<u64>,
    ready: Vec<BTreeSet<usize>>,
    /// Intents per IO pool (index = pool), and one more queue for requests with no IO pool.
    intents: Vec<VecDeque<Intent>>,
    budget_bytes: Option<u64>,
    budget_in_flight: u64,
    reads: BTreeMap<u64, InFlight>,
    decodes: BTreeMap<u64, usize>,
    /// Chunks delivered and not consumed, with their decoded bytes.
    chunks: BTreeMap<u64, u64>,
    /// Their decoded bytes in all (what the sink measures).
    buffered_bytes: u64,
    /// Tasks waiting at a deliver step for the sink to drain, first come first served.
    sink_blocked: VecDeque<usize>,
    next_id: u64,
    done: usize,
    /// GET requests started and their bytes (the reader's read tasks).
    pub(crate) gets: u64,
    pub(crate) get_bytes: u64,
    pub(crate) rows: u64,
    pub(crate) chunks_delivered: u64,
    /// Bytes the decoder needs out of the requests issued so far.
    pub(crate) needed_bytes: u64,
    pub(crate) reads_running: u64,
}

impl Engine {
    pub(crate) fn new(program: Program) -> Result<Engine, PlanError> {
        program
            .validate()
            .map_err(|e| PlanError::Contract(format!("peer program: {e}")))?;
        let n = program.tasks.len();
        let queues = program.pools.len() + 1;
        let budget_bytes = match program.budget {
            None => None,
            Some(Budget::Fixed(b)) => Some(b.max(1)),
            Some(Budget::PolarsAdaptive {
                init_bytes,
                chunk_bytes,
            }) => Some(init_bytes.max(chunk_bytes).max(1)),
        };
        let mut e = Engine {
            busy: vec![0; program.pools.len()],
            weight_in_use: vec![0; program.pools.len()],
            ready: vec![BTreeSet::new(); program.pools.len()],
            intents: vec![VecDeque::new(); queues],
            state: vec![TaskState::Waiting(0); n],
            reached: vec![None; n],
            watchers: vec![Vec::new(); n],
            woken: VecDeque::new(),
            program,
            budget_bytes,
            budget_in_flight: 0,
            reads: BTreeMap::new(),
            decodes: BTreeMap::new(),
            chunks: BTreeMap::new(),
            buffered_bytes: 0,
            sink_blocked: VecDeque::new(),
            next_id: 0,
            done: 0,
            gets: 0,
            get_bytes: 0,
            rows: 0,
            chunks_delivered: 0,
            needed_bytes: 0,
            reads_running: 0,
        };
        for i in 0..n {
            let deps = e.program.tasks[i].deps.clone();
            let unmet = e.watch(&deps, Waiter::Start(i));
            if unmet == 0 {
                e.make_ready(i);
            } else {
                e.state[i] = TaskState::Waiting(unmet);
            }
        }
        Ok(e)
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.done == self.program.tasks.len() && self.chunks.is_empty() && self.reads.is_empty()
    }

    /// Nothing runs and nothing can start: the program waits for itself.
    pub(crate) fn is_stalled(&self) -> bool {
        self.done < self.program.tasks.len()
            && self.reads.is_empty()
            && self.decodes.is_empty()
            && self.chunks.is_empty()
            && self.woken.is_empty()
    }

    pub(crate) fn reads_queued(&self) -> u64 {
        self.intents.iter().map(|q| q.len() as u64).sum()
    }

    pub(crate) fn decodes_running(&self) -> u32 {
        u32_of(self.decodes.len())
    }

    pub(crate) fn chunks_outstanding(&self) -> u64 {
        self.chunks.len() as u64
    }

    /// A new bytes-in-flight budget (Polars' controller resizes it); reads already admitted
    /// keep running.
    pub(crate) fn set_budget(&mut self, bytes: u64) {
        debug_assert!(
            self.budget_bytes.is_some(),
            "a budget for a program without one"
        );
        self.budget_bytes = Some(bytes.max(1));
    }

    fn request(&self, i: Intent) -> Option<&Request> {
        match self.program.tasks.get(i.task)?.steps.get(i.step)? {
            Step::Requests { requests, .. } => requests.get(i.request),
            _ => None,
        }
    }

    /// Registers `waiter` on every point of `deps` not reached yet; returns how many.
    fn watch(&mut self, deps: &[Dep], waiter: Waiter) -> u32 {
        let mut unmet = 0;
        for d in deps {
            if self.reached[d.task].is_some_and(|s| s >= d.step) {
                continue;
            }
            self.watchers[d.task].push((d.step, waiter));
            unmet += 1;
        }
        unmet
    }

    /// `task` entered `step`: wakes whoever waited for it.
    fn reach(&mut self, task: usize, step: usize) {
        debug_assert!(
            self.reached[task].is_none_or(|s| s < step),
            "task {task} reached step {step} again"
        );
        self.reached[task] = Some(step);
        let (hit, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.watchers[task])
            .into_iter()
            .partition(|(s, _)| *s <= step);
        self.watchers[task] = rest;
        for (_, w) in hit {
            match w {
                Waiter::Start(t) => match self.state[t] {
                    TaskState::Waiting(1) => self.make_ready(t),
                    TaskState::Waiting(n) => self.state[t] = TaskState::Waiting(n - 1),
                    s => debug_assert!(false, "task {t} woken to start in state {s:?}"),
                },
                Waiter::Resume(t) => match self.state[t] {
                    TaskState::Running {
                        step,
                        issued: 1,
                        completed,
                    } => {
                        self.state[t] = TaskState::Running {
                            step,
                            issued: 0,
                            completed,
                        };
                        self.woken.push_back(Waiter::Resume(t));
                    }
                    TaskState::Running {
                        step,
                        issued,
                        completed,
                    } => {
                        self.state[t] = TaskState::Running {
                            step,
                            issued: issued - 1,
                            completed,
                        }
                    }
                    s => debug_assert!(false, "task {t} woken to resume in state {s:?}"),
                },
            }
        }
    }

    fn make_ready(&mut self, task: usize) {
        self.state[task] = TaskState::Ready;
        let pool = self.program.tasks[task].pool;
        self.ready[pool].insert(task);
    }

    /// Runs everything that can run now; actions go to `out`.
    pub(crate) fn pump(&mut self, out: &mut VecDeque<Action>) -> Result<(), PlanError> {
        loop {
            let mut progressed = false;
            while let Some(w) = self.woken.pop_front() {
                if let Waiter::Resume(t) = w {
                    let TaskState::Running { step, .. } = self.state[t] else {
                        return Err(PlanError::Contract(format!(
                            "peer program: task {t} resumed while not running"
                        )));
                    };
                    self.enter_step(t, step + 1, out)?;
                }
                progressed = true;
            }
            progressed |= self.start_tasks(out)?;
            progressed |= self.admit(out)?;
            if !progressed {
                return Ok(());
            }
        }
    }

    fn start_tasks(&mut self, out: &mut VecDeque<Action>) -> Result<bool, PlanError> {
        let mut progressed = false;
        for pool in 0..self.program.pools.len() {
            while self.busy[pool] < self.program.pools[pool].capacity {
                let Some(&task) = self.ready[pool].first() else {
                    break;
                };
                let weight = self.program.tasks[task].weight;
                if let Some(cap) = self.program.pools[pool].weight_capacity {
                    let held = self.weight_in_use[pool];
                    if held > 0 && held + weight > cap {
                        break;
                    }
                }
                self.ready[pool].pop_first();
                debug_assert_eq!(self.state[task], TaskState::Ready);
                self.busy[pool] += 1;
                self.weight_in_use[pool] += weight;
                self.enter_step(task, 0, out)?;
                progressed = true;
            }
        }
        Ok(progressed)
    }

    /// Puts `task` on `step` (or finishes it past its last step).
    fn enter_step(
        &mut self,
        task: usize,
        step: usize,
        out: &mut VecDeque<Action>,
    ) -> Result<(), PlanError> {
        let Some(s) = self.program.tasks[task].steps.get(step).cloned() else {
            self.finish(task);
            return Ok(());
        };
        self.reach(task, step);
        match s {
            Step::Requests { requests, parallel } => {
                if requests.is_empty() {
                    return self.enter_step(task, step + 1, out);
                }
                let first = (parallel.max(1) as usize).min(requests.len());
                for r in 0..first {
                    self.queue(task, step, r);
                }
                self.state[task] = TaskState::Running {
                    step,
                    issued: first,
                    completed: 0,
                };
            }
            Step::Decode {
                file,
                row_group,
                compressed_bytes,
                decoded_bytes,
                rows,
            } => {
                let id = self.next_id;
                self.next_id += 1;
                self.decodes.insert(id, task);
                self.state[task] = TaskState::Running {
                    step,
                    issued: 1,
                    completed: 0,
                };
                out.push_back(Action::Decode(DecodeRequest {
                    id: DecodeId(id),
                    file,
                    row_group,
                    compressed_bytes,
                    decoded_bytes,
                    rows,
                }));
            }
            Step::Deliver { .. } => {
                if self
                    .program
                    .sink_bytes
                    .is_some_and(|cap| self.buffered_bytes >= cap)
                {
                    self.state[task] = TaskState::Running {
                        step,
                        issued: 0,
                        completed: 0,
                    };
                    self.sink_blocked.push_back(task);
                    return Ok(());
                }
                self.deliver(task, step, out);
                return self.enter_step(task, step + 1, out);
            }
            Step::Wait(points) => {
                let unmet = self.watch(&points, Waiter::Resume(task));
                if unmet == 0 {
                    return self.enter_step(task, step + 1, out);
                }
                self.state[task] = TaskState::Running {
                    step,
                    issued: unmet as usize,
                    completed: 0,
                };
            }
        }
        Ok(())
    }

    fn deliver(&mut self, task: usize, step: usize, out: &mut VecDeque<Action>) {
        let Some(&Step::Deliver {
            file,
            query_pos,
            rows,
            decoded_bytes,
        }) = self.program.tasks[task].steps.get(step)
        else {
            debug_assert!(
                false,
                "task {task} delivers at step {step}, which is not a delivery"
            );
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.chunks.insert(id, decoded_bytes);
        self.buffered_bytes += decoded_bytes;
        self.rows += rows;
        self.chunks_delivered += 1;
        out.push_back(Action::Deliver(Chunk {
            id: ChunkId(id),
            file,
            source: u32_of(query_pos),
            rows,
            decoded_bytes,
        }));
    }

    fn queue(&mut self, task: usize, step: usize, request: usize) {
        let intent = Intent {
            task,
            step,
            request,
        };
        let q = self
            .request(intent)
            .and_then(|r| r.io_pool)
            .unwrap_or(self.program.pools.len());
        self.intents[q].push_back(intent);
    }

    /// Admits waiting requests, first come first served per queue.
    fn admit(&mut self, out: &mut VecDeque<Action>) -> Result<bool, PlanError> {
        let mut progressed = false;
        for q in 0..self.intents.len() {
            while let Some(&intent) = self.intents[q].front() {
                let Some(req) = self.request(intent).cloned() else {
                    return Err(PlanError::Contract(format!(
                        "peer program: task {} has no request {} at step {}",
                        intent.task, intent.request, intent.step
                    )));
                };
                if let Some(p) = req.io_pool {
                    if self.busy[p] >= self.program.pools[p].capacity {
                        break;
                    }
                }
                if let (Some(budget), true) = (self.budget_bytes, req.budget_bytes > 0) {
                    let held = self.budget_in_flight;
                    if held > 0 && held + req.budget_bytes > budget {
                        break;
                    }
                }
                self.intents[q].pop_front();
                self.start_read(intent, &req, out);
                progressed = true;
            }
        }
        Ok(progressed)
    }

    fn start_read(&mut self, intent: Intent, req: &Request, out: &mut VecDeque<Action>) {
        if let Some(p) = req.io_pool {
            self.busy[p] += 1;
        }
        let budget_bytes = if self.budget_bytes.is_some() {
            req.budget_bytes
        } else {
            0
        };
        self.budget_in_flight += budget_bytes;
        let id = self.next_id;
        self.next_id += 1;
        self.reads.insert(
            id,
            InFlight {
                intent,
                io_pool: req.io_pool,
                budget_bytes,
            },
        );
        self.reads_running += 1;
        self.needed_bytes += req.needed_bytes;
        if !req.kind.is_metadata_request() {
            self.gets += 1;
            self.get_bytes += req.range.len();
        }
        out.push_back(Action::Read(ReadRequest {
            id: ReadId(id),
            object: req.object,
            range: req.range,
            kind: req.kind,
            inline: false,
        }));
    }

    /// A read completed: frees its slots and moves its task on.
    pub(crate) fn on_read_completed(
        &mut self,
        id: ReadId,
        out: &mut VecDeque<Action>,
    ) -> Result<(), PlanError> {
        let r = self.reads.remove(&id.0).ok_or_else(|| {
            PlanError::Contract(format!("completion of read {} which is not running", id.0))
        })?;
        self.reads_running -= 1;
        if let Some(p) = r.io_pool {
            debug_assert!(self.busy[p] > 0, "io pool {p} released more than taken");
            self.busy[p] -= 1;
        }
        debug_assert!(self.budget_in_flight >= r.budget_bytes);
        self.budget_in_flight -= r.budget_bytes;
        let task = r.intent.task;
        let TaskState::Running {
            step,
            issued,
            completed,
        } = self.state[task]
        else {
            return Err(PlanError::Contract(format!(
                "read {} completed for a task that is not running",
                id.0
            )));
        };
        debug_assert_eq!(step, r.intent.step);
        let total = match self.program.tasks[task].steps.get(step) {
            Some(Step::Requests { requests, .. }) => requests.len(),
            _ => 0,
        };
        let completed = completed + 1;
        debug_assert!(completed <= issued && issued <= total);
        if issued < total {
            self.queue(task, step, issued);
            self.state[task] = TaskState::Running {
                step,
                issued: issued + 1,
                completed,
            };
        } else if completed == total {
            self.enter_step(task, step + 1, out)?;
        } else {
            self.state[task] = TaskState::Running {
                step,
                issued,
                completed,
            };
        }
        self.pump(out)
    }

    pub(crate) fn on_decode_completed(
        &mut self,
        id: DecodeId,
        out: &mut VecDeque<Action>,
    ) -> Result<(), PlanError> {
        let task = self.decodes.remove(&id.0).ok_or_else(|| {
            PlanError::Contract(format!(
                "completion of decode {} which is not running",
                id.0
            ))
        })?;
        let TaskState::Running { step, .. } = self.state[task] else {
            return Err(PlanError::Contract(format!(
                "decode {} completed for a task that is not running",
                id.0
            )));
        };
        self.enter_step(task, step + 1, out)?;
        self.pump(out)
    }

    /// A chunk was consumed: the sink drains, and tasks waiting on it deliver in turn.
    pub(crate) fn on_chunk_consumed(
        &mut self,
        id: ChunkId,
        out: &mut VecDeque<Action>,
    ) -> Result<(), PlanError> {
        let Some(bytes) = self.chunks.remove(&id.0) else {
            return Err(PlanError::Contract(format!(
                "chunk {} was not delivered or was already consumed",
                id.0
            )));
        };
        debug_assert!(self.buffered_bytes >= bytes);
        self.buffered_bytes -= bytes;
        while self
            .program
            .sink_bytes
            .is_some_and(|cap| self.buffered_bytes < cap)
        {
            let Some(task) = self.sink_blocked.pop_front() else {
                break;
            };
            let TaskState::Running { step, .. } = self.state[task] else {
                return Err(PlanError::Contract(format!(
                    "peer program: task {task} waits on the sink while not running"
                )));
            };
            self.deliver(task, step, out);
            self.enter_step(task, step + 1, out)?;
        }
        self.pump(out)
    }

    fn finish(&mut self, task: usize) {
        debug_assert!(
            self.state[task] != TaskState::Done,
            "task {task} finished twice"
        );
        self.state[task] = TaskState::Done;
        self.done += 1;
        let t = &self.program.tasks[task];
        let (pool, weight, steps) = (t.pool, t.weight, t.steps.len());
        debug_assert!(self.busy[pool] > 0);
        self.busy[pool] -= 1;
        debug_assert!(self.weight_in_use[pool] >= weight);
        self.weight_in_use[pool] -= weight;
        self.reach(task, steps);
    }

    /// The kind of an in-flight read (HEAD and LIST do not feed the byte counters).
    pub(crate) fn read_kind(&self, id: ReadId) -> Option<ReadKind> {
        self.reads
            .get(&id.0)
            .and_then(|r| self.request(r.intent))
            .map(|r| r.kind)
    }

    /// The bytes of an in-flight read.
    pub(crate) fn read_len(&self, id: ReadId) -> Option<u64> {
        self.reads
            .get(&id.0)
            .and_then(|r| self.request(r.intent))
            .map(|r| r.range.len())
    }

    /// Whether an in-flight read is budgeted (Polars' controller samples those).
    pub(crate) fn read_is_budgeted(&self, id: ReadId) -> bool {
        self.reads.get(&id.0).is_some_and(|r| r.budget_bytes > 0)
    }
}
