//! Source threads: each source (a file, or one row-group bucket of it) hands its chunks on one
//! at a time, on its own pipeline thread (ClickHouse: `File 0 -> 1`, then `Resize 1 -> N`).
//! A single source over a large file is therefore a serial stage (`docs/findings.md` F7).

use planner::Chunk;
use std::collections::VecDeque;

#[derive(Default)]
pub(super) struct SourceThreads {
    /// Per source that has had a chunk: its thread. A hash map: looked up by source on every
    /// chunk, never walked (a `BTreeMap` here, with an entry made and dropped at every busy
    /// spell, cost about 170 instructions a chunk on `fs-cache-cold`).
    threads: rustc_hash::FxHashMap<u32, SourceThread>,
}

/// One source's pipeline thread.
#[derive(Default)]
struct SourceThread {
    /// Whether it works on a chunk now.
    busy: bool,
    /// The chunks waiting behind that one, oldest first (kept, empty, while idle).
    waiting: VecDeque<Chunk>,
}

impl SourceThreads {
    /// A chunk the reader delivered: returned when its source's thread is free to start it now,
    /// otherwise queued behind that thread's current chunk.
    pub(super) fn offer(&mut self, chunk: Chunk) -> Option<Chunk> {
        let thread = self.threads.entry(chunk.source).or_default();
        if thread.busy {
            thread.waiting.push_back(chunk);
            None
        } else {
            debug_assert!(
                thread.waiting.is_empty(),
                "an idle source thread has no queue"
            );
            thread.busy = true;
            Some(chunk)
        }
    }

    /// `source`'s thread finished its chunk: the next one it starts, if any.
    pub(super) fn done(&mut self, source: u32) -> Option<Chunk> {
        let thread = self.threads.get_mut(&source)?;
        debug_assert!(
            thread.busy,
            "a source thread finished a chunk it did not start"
        );
        let next = thread.waiting.pop_front();
        thread.busy = next.is_some();
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: u64, source: u32) -> Chunk {
        Chunk {
            id: planner::ChunkId(id),
            file: 0,
            source,
            rows: 10,
            decoded_bytes: 100,
        }
    }

    #[test]
    fn one_chunk_at_a_time_per_source_in_order() {
        let mut s = SourceThreads::default();
        assert!(s.offer(chunk(1, 7)).is_some());
        assert!(s.offer(chunk(2, 7)).is_none());
        assert!(s.offer(chunk(3, 7)).is_none());
        // Another source runs beside it.
        assert!(s.offer(chunk(4, 8)).is_some());
        assert_eq!(s.done(7).map(|c| c.id.0), Some(2));
        assert_eq!(s.done(7).map(|c| c.id.0), Some(3));
        assert!(s.done(7).is_none());
        // Idle again: the next chunk starts at once.
        assert!(s.offer(chunk(5, 7)).is_some());
    }
}
