//! The metrics of a run: one registry ([`Metric`], with its name, unit, doc and how queries add
//! up) and one value per metric ([`RunMetrics`]). Reports, CSV, JSON, sweeps, the tuner, the
//! findings checks and what-if all address a metric by its variant, so a renamed metric is a
//! compile error, not a silent zero. Names are snake_case, or ClickHouse's profile-event names
//! verbatim.

use readahead::{Budget, Pool as MemoryPool, ProfileEvent, Stage};
use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nanoseconds,
    Bytes,
    Count,
    Ratio,
    Dollars,
    /// Cores busy on average.
    Cores,
    /// Bytes per second.
    BytesPerSecond,
    /// A ClickHouse profile event counted in microseconds, printed verbatim as ClickHouse
    /// shows it (its name already says the unit).
    EventMicroseconds,
    /// A ClickHouse profile event counted in bytes, printed verbatim.
    EventBytes,
}

impl Unit {
    /// The unit's name as CSV and JSON write it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "nanoseconds",
            Unit::Bytes => "bytes",
            Unit::Count => "count",
            Unit::Ratio => "ratio",
            Unit::Dollars => "dollars",
            Unit::Cores => "cores",
            Unit::BytesPerSecond => "bytes_per_second",
            Unit::EventMicroseconds => "microseconds",
            Unit::EventBytes => "bytes",
        }
    }

    /// Suffix for CSV column names, so that a column says its unit.
    pub fn csv_suffix(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "_ns",
            Unit::Bytes => "_bytes",
            // A profile event's name already ends in its unit.
            Unit::Count | Unit::Ratio | Unit::EventMicroseconds | Unit::EventBytes => "",
            Unit::Dollars => "_usd",
            Unit::Cores => "_cores",
            Unit::BytesPerSecond => "_bytes_per_s",
        }
    }

    /// A value written with its unit for people.
    pub fn format(self, v: f64) -> String {
        match self {
            Unit::Nanoseconds => units::format_duration_f(v),
            Unit::Bytes => units::format_bytes_f(v),
            Unit::Count | Unit::EventMicroseconds | Unit::EventBytes => format_count(v),
            // Small ratios (an efficiency far from 1) keep two significant digits.
            Unit::Ratio if v > 0.0 && v < 0.005 => format!("{v:.1e}x"),
            Unit::Ratio => format!("{:.2}x", v),
            Unit::Dollars => format!("${:.4}", v),
            Unit::Cores => format!("{:.2}", v),
            Unit::BytesPerSecond => units::format_bandwidth(v),
        }
    }
}

/// What a ClickHouse profile event counts (exhaustive: a new event must say).
fn event_unit(e: ProfileEvent) -> Unit {
    match e {
        ProfileEvent::ParquetReadTasks
        | ProfileEvent::ParquetPartialReadsServed
        | ProfileEvent::ParquetPlannedReads
        | ProfileEvent::ParquetIssueQueueStalls => Unit::Count,
        ProfileEvent::ParquetReadFirstByteMicroseconds
        | ProfileEvent::ParquetReadTransferMicroseconds
        | ProfileEvent::ParquetFetchWaitTimeMicroseconds => Unit::EventMicroseconds,
        ProfileEvent::ParquetReadTaskBytes
        | ProfileEvent::PageCacheReadThroughBytes
        | ProfileEvent::ReadBufferFromS3Bytes => Unit::EventBytes,
    }
}

fn format_count(v: f64) -> String {
    if v.fract().abs() > 1e-9 && v.abs() < 100.0 {
        return format!("{v:.2}");
    }
    let n = v.round() as i64;
    let s = n.abs().to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// The reader's memory budgets, in report order: the base generation's five stages, then the
/// redesign's three pools (the reader's own `readahead::Budget`).
pub const POOLS: [Budget; 8] = [
    Budget::Stage(Stage::BloomFilterHeader),
    Budget::Stage(Stage::BloomFilterBlocksOrDictionary),
    Budget::Stage(Stage::ColumnIndexAndOffsetIndex),
    Budget::Stage(Stage::OffsetIndex),
    Budget::Stage(Stage::ColumnData),
    Budget::Pool(MemoryPool::Metadata),
    Budget::Pool(MemoryPool::Compressed),
    Budget::Pool(MemoryPool::Decoded),
];

fn peak_metric_name(b: Budget) -> &'static str {
    match b {
        Budget::Stage(Stage::BloomFilterHeader) => "peak_memory_BloomFilterHeader",
        Budget::Stage(Stage::BloomFilterBlocksOrDictionary) => {
            "peak_memory_BloomFilterBlocksOrDictionary"
        }
        Budget::Stage(Stage::ColumnIndexAndOffsetIndex) => "peak_memory_ColumnIndexAndOffsetIndex",
        Budget::Stage(Stage::OffsetIndex) => "peak_memory_OffsetIndex",
        Budget::Stage(Stage::ColumnData) => "peak_memory_ColumnData",
        Budget::Pool(MemoryPool::Metadata) => "peak_memory_Metadata",
        Budget::Pool(MemoryPool::Compressed) => "peak_memory_Compressed",
        Budget::Pool(MemoryPool::Decoded) => "peak_memory_Decoded",
    }
}

/// How the values of the queries of one arm run add up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Totals add.
    Sum,
    /// Peaks take the largest.
    Max,
    /// Ratios are recomputed from the totals ([`RunMetrics::recompute_ratios`]).
    Ratio,
}

/// Every metric a run reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Metric {
    WallTime,
    LowerBound,
    Efficiency,
    Gets,
    Heads,
    Lists,
    ReadTasks,
    NeededBytes,
    TaskBytes,
    StoreBytes,
    AmplificationStoreOverTask,
    AmplificationTaskOverNeeded,
    GetBusyTime,
    MeanConcurrentGets,
    MaxConcurrentGets,
    PeakMemory,
    PeakMemoryOf(Budget),
    DecodeBusy,
    DecodeFetchWait,
    DecodeInlineRead,
    DecodeIdle,
    ConsumerBusy,
    CpuUse,
    Cost,
    Rows,
    StoreRetries,
    /// A ClickHouse profile event, under its own name.
    Event(ProfileEvent),
}

/// The metrics in report order.
pub const METRICS: &[Metric] = &{
    use Metric::*;
    [
        WallTime,
        LowerBound,
        Efficiency,
        Gets,
        Heads,
        Lists,
        ReadTasks,
        NeededBytes,
        TaskBytes,
        StoreBytes,
        AmplificationStoreOverTask,
        AmplificationTaskOverNeeded,
        GetBusyTime,
        MeanConcurrentGets,
        MaxConcurrentGets,
        PeakMemory,
        PeakMemoryOf(Budget::Stage(Stage::BloomFilterHeader)),
        PeakMemoryOf(Budget::Stage(Stage::BloomFilterBlocksOrDictionary)),
        PeakMemoryOf(Budget::Stage(Stage::ColumnIndexAndOffsetIndex)),
        PeakMemoryOf(Budget::Stage(Stage::OffsetIndex)),
        PeakMemoryOf(Budget::Stage(Stage::ColumnData)),
        PeakMemoryOf(Budget::Pool(MemoryPool::Metadata)),
        PeakMemoryOf(Budget::Pool(MemoryPool::Compressed)),
        PeakMemoryOf(Budget::Pool(MemoryPool::Decoded)),
        DecodeBusy,
        DecodeFetchWait,
        DecodeInlineRead,
        DecodeIdle,
        ConsumerBusy,
        CpuUse,
        Cost,
        Rows,
        StoreRetries,
        Event(ProfileEvent::ParquetReadTasks),
        Event(ProfileEvent::ParquetReadTaskBytes),
        Event(ProfileEvent::ParquetPartialReadsServed),
        Event(ProfileEvent::ParquetPlannedReads),
        Event(ProfileEvent::ParquetIssueQueueStalls),
        Event(ProfileEvent::ParquetReadFirstByteMicroseconds),
        Event(ProfileEvent::ParquetReadTransferMicroseconds),
        Event(ProfileEvent::PageCacheReadThroughBytes),
        Event(ProfileEvent::ReadBufferFromS3Bytes),
        Event(ProfileEvent::ParquetFetchWaitTimeMicroseconds),
    ]
};

/// How many metrics a run reports.
pub const METRIC_COUNT: usize = METRICS.len();

impl Metric {
    /// Every metric, in report order.
    pub fn all() -> impl Iterator<Item = Metric> {
        METRICS.iter().copied()
    }

    /// Its position in report order.
    fn index(self) -> usize {
        // METRIC_COUNT is small (about 40); a linear scan is cheaper than a map and needs no state.
        let i = METRICS.iter().position(|m| *m == self);
        debug_assert!(i.is_some(), "{self:?} is not in METRICS");
        i.unwrap_or(0)
    }

    /// The name reports, CSV and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Metric::WallTime => "wall_time",
            Metric::LowerBound => "lower_bound",
            Metric::Efficiency => "efficiency",
            Metric::Gets => "gets",
            Metric::Heads => "heads",
            Metric::Lists => "lists",
            Metric::ReadTasks => "read_tasks",
            Metric::NeededBytes => "needed_bytes",
            Metric::TaskBytes => "task_bytes",
            Metric::StoreBytes => "store_bytes",
            Metric::AmplificationStoreOverTask => "amplification_store_over_task",
            Metric::AmplificationTaskOverNeeded => "amplification_task_over_needed",
            Metric::GetBusyTime => "get_busy_time",
            Metric::MeanConcurrentGets => "mean_concurrent_gets",
            Metric::MaxConcurrentGets => "max_concurrent_gets",
            Metric::PeakMemory => "peak_memory",
            Metric::PeakMemoryOf(b) => peak_metric_name(b),
            Metric::DecodeBusy => "decode_busy",
            Metric::DecodeFetchWait => "decode_fetch_wait",
            Metric::DecodeInlineRead => "decode_inline_read",
            Metric::DecodeIdle => "decode_idle",
            Metric::ConsumerBusy => "consumer_busy",
            Metric::CpuUse => "cpu_use",
            Metric::Cost => "cost",
            Metric::Rows => "rows",
            Metric::StoreRetries => "store_retries",
            Metric::Event(e) => e.name(),
        }
    }

    /// The metric called `name`, if any.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::all().find(|m| m.name() == name)
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::WallTime
            | Metric::LowerBound
            | Metric::GetBusyTime
            | Metric::DecodeBusy
            | Metric::DecodeFetchWait
            | Metric::DecodeInlineRead
            | Metric::DecodeIdle
            | Metric::ConsumerBusy => Unit::Nanoseconds,
            Metric::NeededBytes
            | Metric::TaskBytes
            | Metric::StoreBytes
            | Metric::PeakMemory
            | Metric::PeakMemoryOf(_) => Unit::Bytes,
            Metric::AmplificationStoreOverTask
            | Metric::AmplificationTaskOverNeeded
            | Metric::Efficiency => Unit::Ratio,
            Metric::CpuUse => Unit::Cores,
            Metric::Cost => Unit::Dollars,
            Metric::Gets
            | Metric::Heads
            | Metric::Lists
            | Metric::ReadTasks
            | Metric::MeanConcurrentGets
            | Metric::MaxConcurrentGets
            | Metric::Rows
            | Metric::StoreRetries => Unit::Count,
            Metric::Event(e) => event_unit(e),
        }
    }

    /// How queries of one run add up.
    pub fn combine(self) -> Combine {
        match self {
            Metric::PeakMemory | Metric::PeakMemoryOf(_) | Metric::MaxConcurrentGets => {
                Combine::Max
            }
            Metric::AmplificationStoreOverTask
            | Metric::AmplificationTaskOverNeeded
            | Metric::MeanConcurrentGets
            | Metric::CpuUse
            | Metric::Efficiency => Combine::Ratio,
            _ => Combine::Sum,
        }
    }

    /// What it measures, in one line.
    pub fn doc(self) -> &'static str {
        match self {
            Metric::WallTime => "time from the query's start to its last chunk consumed",
            Metric::LowerBound => {
                "no schedule of this run's work is faster: max(needed bytes (or fewer fetched) \
                 over the NIC, dependent store round trips x the smallest first byte, decode \
                 work over the most decodes at once or the cores)"
            }
            Metric::Efficiency => {
                "lower_bound / wall_time: 1 = a better schedule of the same reads and decodes \
                 has nothing left to win"
            }
            Metric::Gets => "HTTP GETs sent to the store, retries included (S3GetObject)",
            Metric::Heads => "HTTP HEADs sent to the store (a reader learning a file's size)",
            Metric::Lists => "LISTs sent to the store (a reader expanding a glob)",
            Metric::ReadTasks => "read tasks the reader created (ParquetReadTasks)",
            Metric::NeededBytes => "bytes the decoder needed, every needed range once",
            Metric::TaskBytes => "bytes the read tasks covered (ParquetReadTaskBytes)",
            Metric::StoreBytes => "body bytes received from the store (ReadBufferFromS3Bytes)",
            Metric::AmplificationStoreOverTask => "store_bytes / task_bytes",
            Metric::AmplificationTaskOverNeeded => "task_bytes / needed_bytes",
            Metric::GetBusyTime => "integral of GETs in flight over time",
            Metric::MeanConcurrentGets => "time-weighted mean of GETs in flight",
            Metric::MaxConcurrentGets => "most GET attempts in flight at once",
            Metric::PeakMemory => "peak of the memory the reader held in all its pools at once",
            Metric::PeakMemoryOf(_) => "peak bytes charged to this memory budget",
            Metric::DecodeBusy => "decode threads' busy time, summed over threads",
            Metric::DecodeFetchWait => {
                "time decode threads were held waiting for bytes (ParquetFetchWaitTimeMicroseconds)"
            }
            Metric::DecodeInlineRead => {
                "parsing threads a stream took to run a queued read inline, with no decode task \
                 blocked on it (the base's reads, index stages' reads, footers)"
            }
            Metric::DecodeIdle => {
                "parsing threads doing none of those: threads x wall - busy - fetch wait - inline \
                 read"
            }
            Metric::ConsumerBusy => "downstream consumer and source threads' busy time",
            Metric::CpuUse => "(decode_busy + consumer_busy) / wall_time",
            Metric::Cost => "requests plus bytes at the store model's prices",
            Metric::Rows => "rows delivered",
            Metric::StoreRetries => "GET attempts after the first of their read",
            Metric::Event(_) => "ClickHouse profile event, counted as ClickHouse counts it",
        }
    }
}

/// One value per metric, in report order.
#[derive(Debug, Clone, PartialEq)]
pub struct RunMetrics {
    values: [f64; METRIC_COUNT],
}

impl Default for RunMetrics {
    fn default() -> Self {
        RunMetrics {
            values: [0.0; METRIC_COUNT],
        }
    }
}

impl RunMetrics {
    pub fn set(&mut self, metric: Metric, value: f64) {
        if let Some(v) = self.values.get_mut(metric.index()) {
            *v = value;
        }
    }

    pub fn value(&self, metric: Metric) -> f64 {
        self.values.get(metric.index()).copied().unwrap_or(0.0)
    }

    /// `(metric, value)` in report order.
    pub fn iter(&self) -> impl Iterator<Item = (Metric, f64)> + '_ {
        Metric::all().zip(self.values.iter().copied())
    }

    /// Adds another query's metrics (queries of one run go one after another): sums for
    /// totals, maxima for peaks, then ratios recomputed from the totals.
    pub fn accumulate(&mut self, other: &RunMetrics) {
        for (i, m) in Metric::all().enumerate() {
            let (Some(a), Some(b)) = (self.values.get_mut(i), other.values.get(i)) else {
                continue;
            };
            match m.combine() {
                Combine::Sum => *a += b,
                Combine::Max => *a = a.max(*b),
                Combine::Ratio => {}
            }
        }
        self.recompute_ratios();
    }

    /// Ratios are not additive: recomputes them from the totals.
    pub fn recompute_ratios(&mut self) {
        use Metric::*;
        let div = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let wall = self.value(WallTime);
        let ratios = [
            (
                AmplificationStoreOverTask,
                div(self.value(StoreBytes), self.value(TaskBytes)),
            ),
            (
                AmplificationTaskOverNeeded,
                div(self.value(TaskBytes), self.value(NeededBytes)),
            ),
            (MeanConcurrentGets, div(self.value(GetBusyTime), wall)),
            (
                Efficiency,
                if wall > 0.0 {
                    self.value(LowerBound) / wall
                } else {
                    1.0
                },
            ),
            (
                CpuUse,
                div(self.value(DecodeBusy) + self.value(ConsumerBusy), wall),
            ),
        ];
        for (m, v) in ratios {
            self.set(m, v);
        }
    }
}

/// As `{"metrics": [{"name", "unit", "value"}, ...]}`, the shape reports have always written.
/// JSON writes a unit as CSV does ([`Unit::name`]): the derived form wrote the variant
/// (`event_bytes`) where CSV says `bytes`.
impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl Serialize for RunMetrics {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Entries<'a>(&'a RunMetrics);
        impl Serialize for Entries<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(METRIC_COUNT))?;
                for (m, value) in self.0.iter() {
                    seq.serialize_element(&Entry {
                        name: m.name(),
                        unit: m.unit(),
                        value,
                    })?;
                }
                seq.end()
            }
        }
        #[derive(Serialize)]
        struct Entry {
            name: &'static str,
            unit: Unit,
            value: f64,
        }
        let mut st = s.serialize_struct("RunMetrics", 1)?;
        st.serialize_field("metrics", &Entries(self))?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CSV and JSON said `count` for microseconds and bytes: a profile event's unit follows its
    /// name, and its table value stays ClickHouse's verbatim number.
    #[test]
    fn profile_events_carry_the_unit_their_name_says() {
        for e in ProfileEvent::ALL {
            let unit = Metric::Event(e).unit();
            let expected = if e.name().ends_with("Microseconds") {
                "microseconds"
            } else if e.name().ends_with("Bytes") {
                "bytes"
            } else {
                "count"
            };
            assert_eq!(unit.name(), expected, "{}", e.name());
            // JSON says what CSV says.
            assert_eq!(
                serde_json::to_string(&unit).unwrap(),
                format!("\"{expected}\""),
                "{}",
                e.name()
            );
            assert_eq!(unit.csv_suffix(), "", "{}", e.name());
            assert_eq!(
                unit.format(7_568_680_917.0),
                "7,568,680,917",
                "{}",
                e.name()
            );
        }
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(Unit::Count.format(9968.0), "9,968");
        assert_eq!(Unit::Count.format(1_234_567.0), "1,234,567");
        assert_eq!(Unit::Count.format(0.98), "0.98");
        assert_eq!(Unit::Nanoseconds.format(14.03e9), "14.03s");
    }

    #[test]
    fn every_metric_once_with_a_distinct_name() {
        let names: Vec<&str> = Metric::all().map(Metric::name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a name twice: {names:?}");
        for (i, m) in Metric::all().enumerate() {
            assert_eq!(m.index(), i, "{}", m.name());
            assert_eq!(Metric::from_name(m.name()), Some(m));
            assert!(!m.doc().is_empty());
        }
        for p in POOLS {
            assert!(Metric::all().any(|m| m == Metric::PeakMemoryOf(p)), "{p:?}");
        }
        for e in ProfileEvent::ALL {
            assert!(Metric::all().any(|m| m == Metric::Event(e)), "{e:?}");
        }
    }

    #[test]
    fn queries_add_up_by_kind() {
        let mut a = RunMetrics::default();
        a.set(Metric::WallTime, 10.0);
        a.set(Metric::GetBusyTime, 50.0);
        a.set(Metric::PeakMemory, 7.0);
        a.set(Metric::LowerBound, 9.0);
        a.set(Metric::Efficiency, 0.9);
        let mut b = RunMetrics::default();
        b.set(Metric::WallTime, 30.0);
        b.set(Metric::GetBusyTime, 30.0);
        b.set(Metric::PeakMemory, 3.0);
        b.set(Metric::LowerBound, 3.0);
        b.set(Metric::Efficiency, 0.1);
        a.accumulate(&b);
        assert_eq!(a.value(Metric::WallTime), 40.0);
        assert_eq!(a.value(Metric::PeakMemory), 7.0);
        assert_eq!(a.value(Metric::MeanConcurrentGets), 2.0);
        // Bounds of queries run one after another add up; the efficiency is their ratio, not
        // the sum of the queries' own (1.0 here, which was printed until 2026-12-07).
        assert_eq!(a.value(Metric::LowerBound), 12.0);
        assert_eq!(a.value(Metric::Efficiency), 0.3);
    }
}
