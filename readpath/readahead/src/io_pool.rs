//! The IO thread pool: its size rule (R6) and a slot counter with a FIFO of waiting reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ReadaheadError;

/// R6 caps the parsing-thread contribution to the IO pool at this many threads.
pub const PARSING_THREADS_CAP: u32 = 16;

/// Settings that size the IO pool (ClickHouse names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoPoolSettings {
    /// `max_download_threads` (default 4): the base pool size.
    pub max_download_threads: u32,
    /// `max_parsing_threads`.
    pub max_parsing_threads: u32,
    /// `input_format_parquet_max_io_threads`; 0 = not set (derive). When set it is the pool size,
    /// with or without R6: a setting the user wrote is never silently ignored.
    pub input_format_parquet_max_io_threads: u32,
    /// R6: size the pool from the query (`max(max_download_threads, min(max_parsing_threads, 16))`).
    pub r6_io_pool_from_query: bool,
}

/// The IO pool size: `input_format_parquet_max_io_threads` when set; else with R6
/// `max(max_download_threads, min(max_parsing_threads, 16))`; else `max_download_threads`.
/// A size of 0 is an error.
pub fn io_pool_size(settings: &IoPoolSettings) -> Result<u32, ReadaheadError> {
    let size = if settings.input_format_parquet_max_io_threads > 0 {
        settings.input_format_parquet_max_io_threads
    } else if settings.r6_io_pool_from_query {
        settings
            .max_download_threads
            .max(settings.max_parsing_threads.min(PARSING_THREADS_CAP))
    } else {
        settings.max_download_threads
    };
    if size == 0 {
        return Err(ReadaheadError::ZeroSetting {
            name: "IoPoolSettings::max_download_threads",
            what: "IO thread (set it, max_parsing_threads with R6, or input_format_parquet_max_io_threads)",
        });
    }
    Ok(size)
}

/// Answer of [`IoPool::submit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Slot {
    /// A thread was free: start the read now.
    Started,
    /// All threads busy: the read waits in FIFO order and comes out of [`IoPool::release`].
    Queued,
}

/// A pool of `capacity` IO threads: reads hold a slot while they run; the rest wait in FIFO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoPool {
    capacity: u32,
    running: u32,
    peak_running: u32,
    /// Arrival sequence -> waiting read (the first entry is next); with the reverse map every
    /// operation is O(log n).
    waiting: BTreeMap<u64, u64>,
    /// Waiting read -> its arrival sequence: a hash map, looked up for every read of every
    /// blocked task and never walked (`rustc_hash` has no random state).
    waiting_ids: rustc_hash::FxHashMap<u64, u64>,
    next_seq: u64,
}

impl IoPool {
    /// A pool of `capacity` threads (at least 1).
    pub fn new(capacity: u32) -> Result<IoPool, ReadaheadError> {
        if capacity == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "io pool size",
                what: "IO thread",
            });
        }
        Ok(IoPool {
            capacity,
            running: 0,
            peak_running: 0,
            waiting: BTreeMap::new(),
            waiting_ids: rustc_hash::FxHashMap::default(),
            next_seq: 0,
        })
    }

    /// A pool sized by [`io_pool_size`].
    pub fn from_settings(settings: &IoPoolSettings) -> Result<IoPool, ReadaheadError> {
        IoPool::new(io_pool_size(settings)?)
    }

    /// Number of threads.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Reads holding a slot now.
    pub fn running(&self) -> u32 {
        self.running
    }

    /// Largest `running` seen.
    pub fn peak_running(&self) -> u32 {
        self.peak_running
    }

    /// Reads waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting_ids.len()
    }

    /// Whether `read_id` waits for a slot.
    pub fn is_waiting(&self, read_id: u64) -> bool {
        self.waiting_ids.contains_key(&read_id)
    }

    /// Whether a read submitted now would start at once.
    pub fn has_free_slot(&self) -> bool {
        self.running < self.capacity && self.waiting_ids.is_empty()
    }

    fn occupy(&mut self) {
        self.running += 1;
        self.peak_running = self.peak_running.max(self.running);
    }

    /// Submits a read: it starts now if a thread is free and nobody waits, else it queues
    /// (submitting an id that already waits keeps its first place).
    pub fn submit(&mut self, read_id: u64) -> Slot {
        if self.has_free_slot() {
            self.occupy();
            Slot::Started
        } else {
            if !self.waiting_ids.contains_key(&read_id) {
                self.waiting_ids.insert(read_id, self.next_seq);
                self.waiting.insert(self.next_seq, read_id);
                self.next_seq += 1;
            }
            Slot::Queued
        }
    }

    /// A running read finished (completed or failed): frees its slot and returns the waiting
    /// read that takes it, if any (the caller starts that read now). Releasing with no read
    /// running is ignored and returns `None`.
    pub fn release(&mut self) -> Option<u64> {
        if self.running == 0 {
            return None;
        }
        self.running -= 1;
        let next = self.pop_waiting()?;
        self.occupy();
        Some(next)
    }

    /// Takes a waiting read out of the queue without giving it a slot (the base reader's decode
    /// thread that runs a still-queued read inline). Returns whether it was waiting.
    pub fn take_waiting(&mut self, read_id: u64) -> bool {
        match self.waiting_ids.remove(&read_id) {
            Some(seq) => self.waiting.remove(&seq).is_some(),
            None => false,
        }
    }

    fn pop_waiting(&mut self) -> Option<u64> {
        let (_, id) = self.waiting.pop_first()?;
        self.waiting_ids.remove(&id);
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn settings(download: u32, parsing: u32, io: u32, r6: bool) -> IoPoolSettings {
        IoPoolSettings {
            max_download_threads: download,
            max_parsing_threads: parsing,
            input_format_parquet_max_io_threads: io,
            r6_io_pool_from_query: r6,
        }
    }

    #[test]
    fn size_rule() {
        assert_eq!(io_pool_size(&settings(4, 32, 0, false)), Ok(4));
        assert_eq!(io_pool_size(&settings(4, 32, 0, true)), Ok(16));
        assert_eq!(io_pool_size(&settings(4, 8, 0, true)), Ok(8));
        assert_eq!(io_pool_size(&settings(20, 8, 0, true)), Ok(20));
        assert_eq!(io_pool_size(&settings(4, 32, 64, true)), Ok(64));
        assert_eq!(io_pool_size(&settings(4, 32, 2, false)), Ok(2));
        assert!(matches!(
            io_pool_size(&settings(0, 32, 0, false)),
            Err(ReadaheadError::ZeroSetting { .. })
        ));
        assert!(io_pool_size(&settings(0, 0, 0, true)).is_err());
        assert!(IoPool::new(0).is_err());
    }

    #[test]
    fn fifo_hand_over() {
        let mut pool = IoPool::new(2).unwrap();
        assert_eq!(pool.submit(1), Slot::Started);
        assert_eq!(pool.submit(2), Slot::Started);
        assert_eq!(pool.submit(3), Slot::Queued);
        assert_eq!(pool.submit(4), Slot::Queued);
        assert_eq!(pool.submit(5), Slot::Queued);
        assert!(pool.take_waiting(4));
        assert!(!pool.take_waiting(4));
        assert_eq!(
            pool.submit(4),
            Slot::Queued,
            "re-submitted after being taken: goes last"
        );
        assert_eq!(pool.release(), Some(3));
        assert_eq!(pool.release(), Some(5));
        assert_eq!(pool.release(), Some(4));
        assert_eq!(pool.running(), 2);
        assert_eq!(pool.release(), None);
        assert_eq!(pool.release(), None);
        assert_eq!(pool.running(), 0);
        assert_eq!(pool.release(), None);
        assert_eq!(pool.peak_running(), 2);
    }

    proptest! {
        /// Running never exceeds capacity; a read waits only while the pool is full.
        #[test]
        fn never_over_capacity(capacity in 1u32..8, ops in proptest::collection::vec(any::<bool>(), 1..200)) {
            let mut pool = IoPool::new(capacity).unwrap();
            let mut next = 0u64;
            let mut started = 0u64;
            for submit in ops {
                if submit {
                    if pool.submit(next) == Slot::Started { started += 1; }
                    next += 1;
                } else if pool.release().is_some() {
                    started += 1;
                }
                prop_assert!(pool.running() <= capacity);
                prop_assert!(pool.waiting() == 0 || pool.running() == capacity);
                prop_assert_eq!(started + pool.waiting() as u64, next);
            }
        }
    }
}
