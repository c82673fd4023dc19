//! ClickHouse profile events of the Parquet read path, counted as ClickHouse names them.

use serde::{Deserialize, Serialize};

/// One profile event, by its ClickHouse name (see `docs/readpath.md` section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ProfileEvent {
    /// Read tasks (ranged GETs) created.
    ParquetReadTasks,
    /// Bytes the read tasks covered (what the reader asked for).
    ParquetReadTaskBytes,
    /// Sub-ranges served before their read task completed (R1).
    ParquetPartialReadsServed,
    /// Reads planned through the issue queue (R5).
    ParquetPlannedReads,
    /// Times the issue queue stopped on a Metadata-pool refusal (R5).
    ParquetIssueQueueStalls,
    /// Sum over reads of start-to-first-byte time, in microseconds.
    ParquetReadFirstByteMicroseconds,
    /// Sum over reads of first-byte-to-last-byte time, in microseconds.
    ParquetReadTransferMicroseconds,
    /// Bytes the page cache read through (R8); counted by the page cache model.
    PageCacheReadThroughBytes,
    /// Bytes fetched from the object store; counted by the driver.
    ReadBufferFromS3Bytes,
    /// Time decode threads were reserved for a unit whose bytes were not ready, in microseconds.
    ParquetFetchWaitTimeMicroseconds,
}

impl ProfileEvent {
    /// Every event, in the fixed order reports list them.
    pub const ALL: [ProfileEvent; 10] = [
        ProfileEvent::ParquetReadTasks,
        ProfileEvent::ParquetReadTaskBytes,
        ProfileEvent::ParquetPartialReadsServed,
        ProfileEvent::ParquetPlannedReads,
        ProfileEvent::ParquetIssueQueueStalls,
        ProfileEvent::ParquetReadFirstByteMicroseconds,
        ProfileEvent::ParquetReadTransferMicroseconds,
        ProfileEvent::PageCacheReadThroughBytes,
        ProfileEvent::ReadBufferFromS3Bytes,
        ProfileEvent::ParquetFetchWaitTimeMicroseconds,
    ];

    /// The ClickHouse name, verbatim.
    pub fn name(self) -> &'static str {
        match self {
            ProfileEvent::ParquetReadTasks => "ParquetReadTasks",
            ProfileEvent::ParquetReadTaskBytes => "ParquetReadTaskBytes",
            ProfileEvent::ParquetPartialReadsServed => "ParquetPartialReadsServed",
            ProfileEvent::ParquetPlannedReads => "ParquetPlannedReads",
            ProfileEvent::ParquetIssueQueueStalls => "ParquetIssueQueueStalls",
            ProfileEvent::ParquetReadFirstByteMicroseconds => "ParquetReadFirstByteMicroseconds",
            ProfileEvent::ParquetReadTransferMicroseconds => "ParquetReadTransferMicroseconds",
            ProfileEvent::PageCacheReadThroughBytes => "PageCacheReadThroughBytes",
            ProfileEvent::ReadBufferFromS3Bytes => "ReadBufferFromS3Bytes",
            ProfileEvent::ParquetFetchWaitTimeMicroseconds => "ParquetFetchWaitTimeMicroseconds",
        }
    }

    /// The event with this ClickHouse name, if any (exact, case-sensitive match).
    pub fn from_name(name: &str) -> Option<ProfileEvent> {
        ProfileEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Counters of the read path, one plain `u64` per ClickHouse profile event (snake_case of the
/// ClickHouse name). One struct carries all, including the two the driver and the page cache
/// model count, so that a report has a single source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileEvents {
    /// `ParquetReadTasks`.
    pub parquet_read_tasks: u64,
    /// `ParquetReadTaskBytes`.
    pub parquet_read_task_bytes: u64,
    /// `ParquetPartialReadsServed`.
    pub parquet_partial_reads_served: u64,
    /// `ParquetPlannedReads`.
    pub parquet_planned_reads: u64,
    /// `ParquetIssueQueueStalls`.
    pub parquet_issue_queue_stalls: u64,
    /// `ParquetReadFirstByteMicroseconds`.
    pub parquet_read_first_byte_microseconds: u64,
    /// `ParquetReadTransferMicroseconds`.
    pub parquet_read_transfer_microseconds: u64,
    /// `PageCacheReadThroughBytes` (counted by the page cache model; stays 0 in the reader).
    pub page_cache_read_through_bytes: u64,
    /// `ReadBufferFromS3Bytes` (counted by the driver).
    pub read_buffer_from_s3_bytes: u64,
    /// `ParquetFetchWaitTimeMicroseconds`.
    pub parquet_fetch_wait_time_microseconds: u64,
}

impl ProfileEvents {
    /// All counters at zero.
    pub fn new() -> ProfileEvents {
        ProfileEvents::default()
    }

    fn slot(&mut self, event: ProfileEvent) -> &mut u64 {
        match event {
            ProfileEvent::ParquetReadTasks => &mut self.parquet_read_tasks,
            ProfileEvent::ParquetReadTaskBytes => &mut self.parquet_read_task_bytes,
            ProfileEvent::ParquetPartialReadsServed => &mut self.parquet_partial_reads_served,
            ProfileEvent::ParquetPlannedReads => &mut self.parquet_planned_reads,
            ProfileEvent::ParquetIssueQueueStalls => &mut self.parquet_issue_queue_stalls,
            ProfileEvent::ParquetReadFirstByteMicroseconds => {
                &mut self.parquet_read_first_byte_microseconds
            }
            ProfileEvent::ParquetReadTransferMicroseconds => {
                &mut self.parquet_read_transfer_microseconds
            }
            ProfileEvent::PageCacheReadThroughBytes => &mut self.page_cache_read_through_bytes,
            ProfileEvent::ReadBufferFromS3Bytes => &mut self.read_buffer_from_s3_bytes,
            ProfileEvent::ParquetFetchWaitTimeMicroseconds => {
                &mut self.parquet_fetch_wait_time_microseconds
            }
        }
    }

    /// The value of one counter.
    pub fn get(&self, event: ProfileEvent) -> u64 {
        let mut copy = *self;
        *copy.slot(event)
    }

    /// Adds `value` to one counter (saturating: a counter never wraps).
    pub fn add(&mut self, event: ProfileEvent, value: u64) {
        let slot = self.slot(event);
        *slot = slot.saturating_add(value);
    }

    /// Adds every counter of `other` to this one (e.g. per-node events into a query total).
    pub fn merge(&mut self, other: &ProfileEvents) {
        for event in ProfileEvent::ALL {
            self.add(event, other.get(event));
        }
    }

    /// `(ClickHouse name, value)` pairs in the fixed order of [`ProfileEvent::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ProfileEvent::ALL
            .into_iter()
            .map(move |event| (event.name(), self.get(event)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        let mut names: Vec<&str> = ProfileEvent::ALL.iter().map(|e| e.name()).collect();
        for event in ProfileEvent::ALL {
            assert_eq!(ProfileEvent::from_name(event.name()), Some(event));
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ProfileEvent::ALL.len());
        assert_eq!(ProfileEvent::from_name("parquetreadtasks"), None);
    }

    #[test]
    fn add_touches_only_its_counter() {
        for (i, event) in ProfileEvent::ALL.into_iter().enumerate() {
            let mut events = ProfileEvents::new();
            events.add(event, i as u64 + 7);
            for other in ProfileEvent::ALL {
                let expected = if other == event { i as u64 + 7 } else { 0 };
                assert_eq!(
                    events.get(other),
                    expected,
                    "{} after adding to {}",
                    other.name(),
                    event.name()
                );
            }
        }
    }

    #[test]
    fn merge_sums_and_iter_keeps_order() {
        let mut a = ProfileEvents::new();
        a.add(ProfileEvent::ParquetReadTasks, 3);
        a.add(ProfileEvent::ParquetFetchWaitTimeMicroseconds, 10);
        let mut b = ProfileEvents::new();
        b.add(ProfileEvent::ParquetReadTasks, 4);
        b.add(ProfileEvent::ReadBufferFromS3Bytes, 5);
        a.merge(&b);
        let pairs: Vec<(&str, u64)> = a.iter().collect();
        assert_eq!(pairs.len(), 10);
        assert_eq!(pairs[0], ("ParquetReadTasks", 7));
        assert_eq!(pairs[8], ("ReadBufferFromS3Bytes", 5));
        assert_eq!(pairs[9], ("ParquetFetchWaitTimeMicroseconds", 10));
        assert_eq!(a.parquet_read_tasks, 7);
    }

    #[test]
    fn add_saturates() {
        let mut events = ProfileEvents::new();
        events.add(ProfileEvent::ParquetReadTaskBytes, u64::MAX);
        events.add(ProfileEvent::ParquetReadTaskBytes, 1);
        assert_eq!(events.parquet_read_task_bytes, u64::MAX);
    }
}
