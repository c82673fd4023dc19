//! Memory accounting of the reader: the base generation's five stage budgets, or the redesign's
//! three lifetime pools (R4). Every charge is a [`Charge`] token that is not `Clone` and must be
//! given back to [`Memory::release`], so each charge is released exactly once.
//!
//! Base: each stage gets `0.2 x input_format_parquet_memory_high_watermark / streams` per stream,
//! and `0.2 x input_format_parquet_memory_low_watermark / streams` as its low watermark (until
//! 2026-12-07 the whole low watermark); a charge is admitted when `added < low || (usage + added
//! <= high && running_tasks < max_parsing_threads)`; delivered chunks are not charged (so the watermark is not a cap).
//! Redesign: Metadata (fixed 0.05), Compressed
//! (`input_format_parquet_compressed_memory_fraction`, 0.35), Decoded (the rest), each of them
//! per stream and divided by the streams, as `ReadManager::poolLimits` asks
//! `getLimitsPerReader` (`fraction /= num_streams`; until 2026-12-07 the pools were shared by
//! all streams, so one file could take a whole pool); a charge is admitted when
//! `usage + added <= pool`; delivered chunks stay charged to
//! Decoded until consumed. In both, a privileged charge (the current subgroup of the first
//! incomplete row group) is always admitted, so the reader cannot deadlock.

use limits::{saturating_u64, u32_of};
use serde::{Deserialize, Serialize};

use crate::error::ReadaheadError;

/// Default `input_format_parquet_memory_high_watermark`: 4 GiB.
pub const DEFAULT_MEMORY_HIGH_WATERMARK: u64 = 4 << 30;
/// Default `input_format_parquet_memory_low_watermark`: 2 MiB.
pub const DEFAULT_MEMORY_LOW_WATERMARK: u64 = 2 << 20;
/// Base: share of the high watermark each of the five stages gets (before dividing by streams).
pub const STAGE_FRACTION: f64 = 0.2;
/// Redesign: the fixed share of the Metadata pool.
pub const METADATA_FRACTION: f64 = 0.05;
/// Default `input_format_parquet_compressed_memory_fraction`.
pub const DEFAULT_COMPRESSED_MEMORY_FRACTION: f64 = 0.35;

/// The base reader's five memory stages (ClickHouse `ReadStage` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Stage {
    /// Bloom-filter headers.
    BloomFilterHeader,
    /// Bloom-filter blocks and dictionary pages.
    BloomFilterBlocksOrDictionary,
    /// Column indexes (with the offset indexes read alongside).
    ColumnIndexAndOffsetIndex,
    /// Offset indexes read for a subgroup.
    OffsetIndex,
    /// Column data: compressed pages and their decoded columns.
    ColumnData,
}

impl Stage {
    /// The five stages in pipeline order.
    pub const ALL: [Stage; 5] = [
        Stage::BloomFilterHeader,
        Stage::BloomFilterBlocksOrDictionary,
        Stage::ColumnIndexAndOffsetIndex,
        Stage::OffsetIndex,
        Stage::ColumnData,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// The redesign's three pools, by how long their bytes live (R4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Pool {
    /// Bloom filters, column and offset indexes, dictionary prefetch.
    Metadata,
    /// Data-page bytes from issue until decoded.
    Compressed,
    /// Decoded columns and delivered chunks until the consumer drops them.
    Decoded,
}

impl Pool {
    /// The three pools in report order.
    pub const ALL: [Pool; 3] = [Pool::Metadata, Pool::Compressed, Pool::Decoded];

    fn index(self) -> usize {
        self as usize
    }
}

/// What a charge's bytes are; each memory model maps it to one of its budgets (or to none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MemoryClass {
    /// The footer: read before row-group scheduling, charged nowhere.
    Footer,
    /// A bloom-filter header guess (256 bytes).
    BloomFilterHeader,
    /// 32-byte bloom-filter blocks.
    BloomFilterBlocks,
    /// A dictionary page prefetch.
    Dictionary,
    /// A column index (with the offset index read alongside).
    ColumnIndex,
    /// An offset index.
    OffsetIndex,
    /// Compressed data pages.
    CompressedPages,
    /// Decoded columns.
    DecodedColumns,
    /// A chunk handed to the consumer and not yet dropped.
    DeliveredChunk,
}

impl MemoryClass {
    /// The base stage charged for this class; `None` = not charged (footer, delivered chunks).
    pub fn stage(self) -> Option<Stage> {
        match self {
            MemoryClass::Footer | MemoryClass::DeliveredChunk => None,
            MemoryClass::BloomFilterHeader => Some(Stage::BloomFilterHeader),
            MemoryClass::BloomFilterBlocks | MemoryClass::Dictionary => {
                Some(Stage::BloomFilterBlocksOrDictionary)
            }
            MemoryClass::ColumnIndex => Some(Stage::ColumnIndexAndOffsetIndex),
            MemoryClass::OffsetIndex => Some(Stage::OffsetIndex),
            MemoryClass::CompressedPages | MemoryClass::DecodedColumns => Some(Stage::ColumnData),
        }
    }

    /// The redesign pool charged for this class; `None` = not charged (footer).
    pub fn pool(self) -> Option<Pool> {
        match self {
            MemoryClass::Footer => None,
            MemoryClass::BloomFilterHeader
            | MemoryClass::BloomFilterBlocks
            | MemoryClass::Dictionary
            | MemoryClass::ColumnIndex
            | MemoryClass::OffsetIndex => Some(Pool::Metadata),
            MemoryClass::CompressedPages => Some(Pool::Compressed),
            MemoryClass::DecodedColumns | MemoryClass::DeliveredChunk => Some(Pool::Decoded),
        }
    }
}

/// A budget of either memory model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Budget {
    /// A base stage budget (per stream).
    Stage(Stage),
    /// A redesign pool (per stream).
    Pool(Pool),
}

impl Budget {
    /// Name for reports, e.g. `ColumnData` or `Decoded`.
    pub fn name(self) -> &'static str {
        match self {
            Budget::Stage(Stage::BloomFilterHeader) => "BloomFilterHeader",
            Budget::Stage(Stage::BloomFilterBlocksOrDictionary) => "BloomFilterBlocksOrDictionary",
            Budget::Stage(Stage::ColumnIndexAndOffsetIndex) => "ColumnIndexAndOffsetIndex",
            Budget::Stage(Stage::OffsetIndex) => "OffsetIndex",
            Budget::Stage(Stage::ColumnData) => "ColumnData",
            Budget::Pool(Pool::Metadata) => "Metadata",
            Budget::Pool(Pool::Compressed) => "Compressed",
            Budget::Pool(Pool::Decoded) => "Decoded",
        }
    }
}

/// Settings of the memory model (ClickHouse names, resolved values).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MemorySettings {
    /// `input_format_parquet_memory_high_watermark` (bytes).
    pub input_format_parquet_memory_high_watermark: u64,
    /// `input_format_parquet_memory_low_watermark` (bytes; base only).
    pub input_format_parquet_memory_low_watermark: u64,
    /// `input_format_parquet_compressed_memory_fraction` (redesign only).
    pub input_format_parquet_compressed_memory_fraction: f64,
    /// `max_parsing_threads` (base admission compares running tasks with it).
    pub max_parsing_threads: u32,
    /// Number of streams the base stage budgets are divided by.
    pub streams: u32,
    /// R4: three pools by lifetime instead of five stage budgets.
    pub r4_memory_by_lifetime: bool,
}

impl Default for MemorySettings {
    /// ClickHouse defaults, base generation, one stream, 16 parsing threads.
    fn default() -> Self {
        MemorySettings {
            input_format_parquet_memory_high_watermark: DEFAULT_MEMORY_HIGH_WATERMARK,
            input_format_parquet_memory_low_watermark: DEFAULT_MEMORY_LOW_WATERMARK,
            input_format_parquet_compressed_memory_fraction: DEFAULT_COMPRESSED_MEMORY_FRACTION,
            max_parsing_threads: 16,
            streams: 1,
            r4_memory_by_lifetime: false,
        }
    }
}

impl MemorySettings {
    /// Checks every setting; see [`ReadaheadError`] for the messages.
    pub fn validate(&self) -> Result<(), ReadaheadError> {
        if self.input_format_parquet_memory_high_watermark == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "MemorySettings::input_format_parquet_memory_high_watermark",
                what: "memory for any pool",
            });
        }
        // The low watermark is the base's admission rule; the redesign's pools do not read it.
        if !self.r4_memory_by_lifetime
            && self.input_format_parquet_memory_low_watermark
                > self.input_format_parquet_memory_high_watermark
        {
            return Err(ReadaheadError::OutOfRange {
                name: "MemorySettings::input_format_parquet_memory_low_watermark",
                value: self.input_format_parquet_memory_low_watermark.to_string(),
                expected: "at most input_format_parquet_memory_high_watermark",
            });
        }
        if self.max_parsing_threads == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "MemorySettings::max_parsing_threads",
                what: "decode thread",
            });
        }
        if self.streams == 0 {
            return Err(ReadaheadError::ZeroSetting {
                name: "MemorySettings::max_threads",
                what: "stream",
            });
        }
        let compressed = self.input_format_parquet_compressed_memory_fraction;
        if !(0.0..=1.0).contains(&compressed) {
            return Err(ReadaheadError::InvalidFraction {
                name: "MemorySettings::input_format_parquet_compressed_memory_fraction",
                value: compressed,
            });
        }
        if self.r4_memory_by_lifetime && compressed <= 0.0 {
            // "input_format_parquet_compressed_memory_fraction must be in (0, 0.95)"
            return Err(ReadaheadError::OutOfRange {
                name: "MemorySettings::input_format_parquet_compressed_memory_fraction",
                value: compressed.to_string(),
                expected: "above 0 (ClickHouse refuses a value outside (0, 0.95): a Compressed pool of 0 bytes admits no data page)",
            });
        }
        if self.r4_memory_by_lifetime && METADATA_FRACTION + compressed >= 1.0 {
            return Err(ReadaheadError::FractionsExceedOne {
                sum: METADATA_FRACTION + compressed,
                metadata: METADATA_FRACTION,
                compressed,
            });
        }
        Ok(())
    }
}

/// A request to charge `bytes` of `class` for a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargeRequest {
    /// Stream (0-based) the bytes belong to; selects the base per-stream budgets.
    pub stream: usize,
    /// What the bytes are.
    pub class: MemoryClass,
    /// How many bytes.
    pub bytes: u64,
    /// Decode tasks running now (base admission: must be below `max_parsing_threads`).
    pub running_tasks: u32,
    /// The current subgroup of the first incomplete row group: always admitted.
    pub privileged: bool,
}

/// An admitted charge. Not `Clone`: give it back to [`Memory::release`] exactly once.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a charge must be released exactly once"]
pub struct Charge {
    id: u64,
    /// Where the model keeps it ([`Memory`]'s slab).
    slot: u32,
    stream: usize,
    budget: Option<Budget>,
    bytes: u64,
    privileged: bool,
}

impl Charge {
    /// Bytes charged.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Budget charged; `None` when the class is not charged in this model.
    pub fn budget(&self) -> Option<Budget> {
        self.budget
    }

    /// Stream it was charged for.
    pub fn stream(&self) -> usize {
        self.stream
    }

    /// Whether it was admitted only because it was privileged.
    pub fn is_privileged(&self) -> bool {
        self.privileged
    }
}

/// Why a charge was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The budget that refused.
    pub budget: Budget,
    /// Its usage (for a stage: this stream's) when refused.
    pub usage_bytes: u64,
    /// The bytes asked for.
    pub bytes: u64,
    /// Its limit (for a stage: per stream).
    pub limit_bytes: u64,
}

/// Answer of [`Memory::try_charge`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "an admitted charge must be released exactly once"]
pub enum Admission {
    /// Admitted: hold the charge while the bytes live.
    Charged(Charge),
    /// Not admitted now; retry after a release.
    Refused(Refusal),
}

/// Usage of one budget, summed over streams, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetUsage {
    /// Which budget.
    pub budget: Budget,
    /// Bytes charged now.
    pub usage_bytes: u64,
    /// Largest `usage_bytes` seen.
    pub peak_bytes: u64,
    /// Limit, summed over streams.
    pub limit_bytes: u64,
}

/// The memory model of one reader (base stages or redesign pools, by `r4_memory_by_lifetime`).
#[derive(Debug, Clone)]
pub struct Memory {
    settings: MemorySettings,
    /// Limit per slot: per (stream, stage) or (stream, pool).
    limit_bytes: Vec<u64>,
    usage_bytes: Vec<u64>,
    /// Usage per budget summed over streams, and its peak (index = stage or pool).
    budget_usage_bytes: Vec<u64>,
    budget_peak_bytes: Vec<u64>,
    total_usage_bytes: u64,
    total_peak_bytes: u64,
    /// Charges not yet released, by slot; a released slot goes to `free_slots` for reuse. A
    /// slab, not a map keyed by id: a charge is made and released on almost every event.
    outstanding: Vec<Option<Outstanding>>,
    free_slots: Vec<u32>,
    outstanding_count: usize,
    next_charge_id: u64,
}

/// What [`Memory`] keeps of a charge until it is released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Outstanding {
    id: u64,
    stream: usize,
    /// The budget's index, `None` when not charged in this model.
    index: Option<usize>,
    bytes: u64,
}

impl Memory {
    /// Builds the model after validating the settings.
    pub fn new(settings: MemorySettings) -> Result<Memory, ReadaheadError> {
        settings.validate()?;
        let high = settings.input_format_parquet_memory_high_watermark as f64;
        let streams = f64::from(settings.streams);
        let per_stream = if settings.r4_memory_by_lifetime {
            let metadata = saturating_u64(high * METADATA_FRACTION / streams);
            let compressed = saturating_u64(
                high * settings.input_format_parquet_compressed_memory_fraction / streams,
            );
            let decoded = saturating_u64(high / streams)
                .saturating_sub(metadata)
                .saturating_sub(compressed);
            vec![metadata, compressed, decoded]
        } else {
            vec![saturating_u64(high * STAGE_FRACTION / streams); Stage::ALL.len()]
        };
        let limit_bytes = per_stream.repeat(settings.streams as usize);
        let budgets = if settings.r4_memory_by_lifetime {
            Pool::ALL.len()
        } else {
            Stage::ALL.len()
        };
        Ok(Memory {
            settings,
            usage_bytes: vec![0; limit_bytes.len()],
            limit_bytes,
            budget_usage_bytes: vec![0; budgets],
            budget_peak_bytes: vec![0; budgets],
            total_usage_bytes: 0,
            total_peak_bytes: 0,
            outstanding: Vec::new(),
            free_slots: Vec::new(),
            outstanding_count: 0,
            next_charge_id: 0,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &MemorySettings {
        &self.settings
    }

    /// Whether this is the redesign's lifetime-pool model.
    pub fn is_by_lifetime(&self) -> bool {
        self.settings.r4_memory_by_lifetime
    }

    /// The budget `class` is charged to in this model (`None` = not charged).
    pub fn budget_for(&self, class: MemoryClass) -> Option<Budget> {
        if self.settings.r4_memory_by_lifetime {
            class.pool().map(Budget::Pool)
        } else {
            class.stage().map(Budget::Stage)
        }
    }

    /// Index of a budget among this model's budgets, if it belongs to it.
    fn budget_index(&self, budget: Budget) -> Option<usize> {
        match (budget, self.settings.r4_memory_by_lifetime) {
            (Budget::Pool(pool), true) => Some(pool.index()),
            (Budget::Stage(stage), false) => Some(stage.index()),
            _ => None,
        }
    }

    fn slot(&self, stream: usize, budget_index: usize) -> usize {
        let budgets = if self.settings.r4_memory_by_lifetime {
            Pool::ALL.len()
        } else {
            Stage::ALL.len()
        };
        stream * budgets + budget_index
    }

    /// The base's low watermark for one stage of one stream: like the high one, the stage's
    /// share over the streams (`getLimitsPerReader(stage.memory_target_fraction)` scales both).
    fn stage_low_watermark_bytes(&self) -> u64 {
        saturating_u64(
            self.settings.input_format_parquet_memory_low_watermark as f64 * STAGE_FRACTION
                / f64::from(self.settings.streams),
        )
    }

    /// Limit of a budget for one stream (the same for every stream).
    /// 0 for a budget of the other model.
    pub fn limit_bytes(&self, budget: Budget) -> u64 {
        self.budget_index(budget)
            .and_then(|index| self.limit_bytes.get(self.slot(0, index)).copied())
            .unwrap_or(0)
    }

    fn check_stream(&self, stream: usize) -> Result<(), ReadaheadError> {
        let streams = self.settings.streams as usize;
        if stream >= streams {
            return Err(ReadaheadError::UnknownStream { stream, streams });
        }
        Ok(())
    }

    /// Asks to charge `request.bytes`. Admission rule: see the module doc.
    pub fn try_charge(&mut self, request: ChargeRequest) -> Result<Admission, ReadaheadError> {
        self.check_stream(request.stream)?;
        let Some(budget) = self.budget_for(request.class) else {
            return Ok(Admission::Charged(self.record(
                request.stream,
                None,
                0,
                false,
            )));
        };
        let index = self.budget_index(budget).unwrap_or(0);
        let slot = self.slot(request.stream, index);
        let usage = self.usage_bytes.get(slot).copied().unwrap_or(0);
        let limit = self.limit_bytes.get(slot).copied().unwrap_or(0);
        let fits = usage.saturating_add(request.bytes) <= limit;
        let admitted = if self.settings.r4_memory_by_lifetime {
            fits
        } else {
            request.bytes < self.stage_low_watermark_bytes()
                || (fits && request.running_tasks < self.settings.max_parsing_threads)
        };
        if !admitted && !request.privileged {
            return Ok(Admission::Refused(Refusal {
                budget,
                usage_bytes: usage,
                bytes: request.bytes,
                limit_bytes: limit,
            }));
        }
        let charge = self.record(request.stream, Some(budget), request.bytes, !admitted);
        Ok(Admission::Charged(charge))
    }

    /// Charges `request.bytes` whatever the budget holds: for work its stage already admitted
    /// (a task's reads, charged as `startPrefetch` charges them). Marked privileged when it
    /// goes past the limit, as [`Self::try_charge`] marks a privileged charge.
    pub fn charge_admitted(&mut self, request: ChargeRequest) -> Result<Charge, ReadaheadError> {
        match self.try_charge(ChargeRequest {
            privileged: true,
            ..request
        })? {
            Admission::Charged(charge) => Ok(charge),
            // `try_charge` refuses no privileged request.
            Admission::Refused(refusal) => Err(ReadaheadError::OutOfRange {
                name: "Memory::charge_admitted",
                value: refusal.bytes.to_string(),
                expected: "a charge that is never refused",
            }),
        }
    }

    /// Books an admitted charge (`budget` = `None`: not charged in this model).
    fn record(
        &mut self,
        stream: usize,
        budget: Option<Budget>,
        bytes: u64,
        privileged: bool,
    ) -> Charge {
        let index = budget.and_then(|b| self.budget_index(b));
        let id = self.next_charge_id;
        self.next_charge_id += 1;
        let bytes = if index.is_some() { bytes } else { 0 };
        if let Some(index) = index {
            self.add(stream, index, bytes);
        }
        let kept = Outstanding {
            id,
            stream,
            index,
            bytes,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                let cell = &mut self.outstanding[slot as usize];
                debug_assert!(cell.is_none(), "a free slot holds no charge");
                *cell = Some(kept);
                slot
            }
            None => {
                self.outstanding.push(Some(kept));
                u32_of(self.outstanding.len() - 1)
            }
        };
        self.outstanding_count += 1;
        Charge {
            id,
            slot,
            stream,
            budget,
            bytes,
            privileged,
        }
    }

    fn add(&mut self, stream: usize, index: usize, bytes: u64) {
        let slot = self.slot(stream, index);
        if let Some(usage) = self.usage_bytes.get_mut(slot) {
            *usage += bytes;
        }
        if let (Some(usage), Some(peak)) = (
            self.budget_usage_bytes.get_mut(index),
            self.budget_peak_bytes.get_mut(index),
        ) {
            *usage += bytes;
            *peak = (*peak).max(*usage);
        }
        self.total_usage_bytes += bytes;
        self.total_peak_bytes = self.total_peak_bytes.max(self.total_usage_bytes);
    }

    fn subtract(&mut self, stream: usize, index: usize, bytes: u64) {
        let slot = self.slot(stream, index);
        if let Some(usage) = self.usage_bytes.get_mut(slot) {
            *usage -= bytes;
        }
        if let Some(usage) = self.budget_usage_bytes.get_mut(index) {
            *usage -= bytes;
        }
        self.total_usage_bytes -= bytes;
    }

    /// Gives a charge back. A charge this model did not make is an error (a caller bug; the
    /// token is consumed either way).
    pub fn release(&mut self, charge: Charge) -> Result<(), ReadaheadError> {
        // Slots of two models can collide: the recorded id, stream, budget and size must match.
        let cell = self.outstanding.get_mut(charge.slot as usize);
        let recorded = match cell {
            Some(cell)
                if cell.is_some_and(|o| {
                    o.id == charge.id
                        && o.stream == charge.stream
                        && o.index.is_some() == charge.budget.is_some()
                        && o.bytes == charge.bytes
                }) =>
            {
                cell.take()
            }
            _ => None,
        };
        let Some(Outstanding {
            stream,
            index,
            bytes,
            ..
        }) = recorded
        else {
            return Err(ReadaheadError::ForeignCharge {
                charge_id: charge.id,
            });
        };
        self.free_slots.push(charge.slot);
        self.outstanding_count -= 1;
        if let Some(index) = index {
            self.subtract(stream, index, bytes);
        }
        Ok(())
    }

    /// Gives back `bytes` of a charge and keeps the rest charged (a page of a read decoded
    /// while the read's other pages are still held: `PrefetchHandle::reset` on each page's
    /// token). At most the charge's bytes; the charge must be this model's.
    pub fn release_part(&mut self, charge: &mut Charge, bytes: u64) -> Result<(), ReadaheadError> {
        let cell = self.outstanding.get_mut(charge.slot as usize);
        let Some(Some(o)) = cell else {
            return Err(ReadaheadError::ForeignCharge {
                charge_id: charge.id,
            });
        };
        if o.id != charge.id || o.stream != charge.stream || o.bytes != charge.bytes {
            return Err(ReadaheadError::ForeignCharge {
                charge_id: charge.id,
            });
        }
        let part = bytes.min(charge.bytes);
        o.bytes -= part;
        charge.bytes -= part;
        let (stream, index) = (o.stream, o.index);
        if let Some(index) = index {
            self.subtract(stream, index, part);
        }
        Ok(())
    }

    /// Moves a charge to another class without an admission check (the same bytes change
    /// role, e.g. decoded columns become a delivered chunk): base releases a delivered chunk's
    /// bytes (not charged), the redesign keeps them in Decoded.
    pub fn reclassify(
        &mut self,
        charge: Charge,
        class: MemoryClass,
    ) -> Result<Charge, ReadaheadError> {
        let stream = charge.stream;
        let bytes = charge.bytes;
        let privileged = charge.privileged;
        self.release(charge)?;
        let budget = self.budget_for(class);
        Ok(self.record(stream, budget, bytes, privileged))
    }

    /// Usage of a budget for one stream.
    pub fn usage_bytes(&self, stream: usize, budget: Budget) -> u64 {
        self.budget_index(budget)
            .and_then(|index| self.usage_bytes.get(self.slot(stream, index)).copied())
            .unwrap_or(0)
    }

    /// Usage, peak and limit of every budget of this model, summed over streams, in order.
    pub fn usage(&self) -> Vec<BudgetUsage> {
        let budgets: Vec<Budget> = if self.settings.r4_memory_by_lifetime {
            Pool::ALL.iter().map(|&p| Budget::Pool(p)).collect()
        } else {
            Stage::ALL.iter().map(|&s| Budget::Stage(s)).collect()
        };
        let streams = u64::from(self.settings.streams);
        budgets
            .into_iter()
            .enumerate()
            .map(|(index, budget)| BudgetUsage {
                budget,
                usage_bytes: self.budget_usage_bytes.get(index).copied().unwrap_or(0),
                peak_bytes: self.budget_peak_bytes.get(index).copied().unwrap_or(0),
                limit_bytes: self.limit_bytes(budget).saturating_mul(streams),
            })
            .collect()
    }

    /// Bytes charged now over all budgets.
    pub fn total_usage_bytes(&self) -> u64 {
        self.total_usage_bytes
    }

    /// Largest `total_usage_bytes` seen.
    pub fn total_peak_bytes(&self) -> u64 {
        self.total_peak_bytes
    }

    /// Charges not yet released (0 at the end of a clean run).
    pub fn outstanding_charges(&self) -> usize {
        debug_assert_eq!(
            self.outstanding_count + self.free_slots.len(),
            self.outstanding.len(),
            "every slot is held or free"
        );
        self.outstanding_count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIB: u64 = 1 << 20;

    fn base(streams: u32) -> Memory {
        Memory::new(MemorySettings {
            streams,
            max_parsing_threads: 4,
            ..MemorySettings::default()
        })
        .unwrap()
    }

    fn lifetime() -> Memory {
        Memory::new(MemorySettings {
            r4_memory_by_lifetime: true,
            ..MemorySettings::default()
        })
        .unwrap()
    }

    fn request(class: MemoryClass, bytes: u64) -> ChargeRequest {
        ChargeRequest {
            stream: 0,
            class,
            bytes,
            running_tasks: 0,
            privileged: false,
        }
    }

    fn charged(admission: Admission) -> Charge {
        match admission {
            Admission::Charged(charge) => charge,
            Admission::Refused(refusal) => panic!("refused: {refusal:?}"),
        }
    }

    #[test]
    fn base_budgets_are_a_fifth_per_stream() {
        let memory = base(4);
        let expected = ((4u64 << 30) as f64 * 0.2 / 4.0) as u64;
        for stage in Stage::ALL {
            assert_eq!(memory.limit_bytes(Budget::Stage(stage)), expected);
        }
        assert_eq!(memory.limit_bytes(Budget::Pool(Pool::Decoded)), 0);
        let usage = memory.usage();
        assert_eq!(usage.len(), 5);
        assert_eq!(usage[4].limit_bytes, expected * 4);
    }

    #[test]
    fn base_admission_rule() {
        // One stream of 0.2 x 100 MiB = 20 MiB per stage; low watermark 0.2 x 2 MiB; 4 parsing
        // threads.
        let mut memory = Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 100 * MIB,
            max_parsing_threads: 4,
            ..MemorySettings::default()
        })
        .unwrap();
        let big = charged(
            memory
                .try_charge(request(MemoryClass::CompressedPages, 19 * MIB))
                .unwrap(),
        );
        // Over the budget, but below the low watermark: admitted.
        let small = charged(
            memory
                .try_charge(request(MemoryClass::DecodedColumns, MIB))
                .unwrap(),
        );
        // The low watermark is the stage's share too (`getLimitsPerReader`): 0.2 x 2 MiB over
        // one stream, 419,430 bytes.
        let low = 419_430;
        let tiny = charged(
            memory
                .try_charge(request(MemoryClass::CompressedPages, low - 1))
                .unwrap(),
        );
        assert!(memory.usage_bytes(0, Budget::Stage(Stage::ColumnData)) > 20 * MIB);
        // At the stage's low watermark and over the budget: refused (the whole 2 MiB admitted
        // it until 2026-12-07).
        assert!(matches!(
            memory
                .try_charge(request(MemoryClass::CompressedPages, low))
                .unwrap(),
            Admission::Refused(_)
        ));
        // Another stage has its own budget, but too many running tasks refuse it.
        let busy = ChargeRequest {
            running_tasks: 4,
            ..request(MemoryClass::OffsetIndex, 3 * MIB)
        };
        assert!(matches!(
            memory.try_charge(busy).unwrap(),
            Admission::Refused(_)
        ));
        let idle = ChargeRequest {
            running_tasks: 3,
            ..busy
        };
        let index = charged(memory.try_charge(idle).unwrap());
        assert!(!index.is_privileged());
        // Privileged is always admitted.
        let privileged = charged(
            memory
                .try_charge(ChargeRequest {
                    privileged: true,
                    ..request(MemoryClass::CompressedPages, 50 * MIB)
                })
                .unwrap(),
        );
        assert!(privileged.is_privileged());
        for charge in [big, small, tiny, index, privileged] {
            memory.release(charge).unwrap();
        }
        assert_eq!(memory.total_usage_bytes(), 0);
        assert_eq!(memory.outstanding_charges(), 0);
        assert!(memory.total_peak_bytes() >= 19 * MIB + 50 * MIB);
    }

    #[test]
    fn base_does_not_charge_delivered_chunks_and_redesign_does() {
        for (mut memory, kept) in [(base(1), false), (lifetime(), true)] {
            let decoded = charged(
                memory
                    .try_charge(request(MemoryClass::DecodedColumns, 5 * MIB))
                    .unwrap(),
            );
            let delivered = memory
                .reclassify(decoded, MemoryClass::DeliveredChunk)
                .unwrap();
            assert_eq!(memory.total_usage_bytes(), if kept { 5 * MIB } else { 0 });
            assert_eq!(delivered.budget().is_some(), kept);
            memory.release(delivered).unwrap();
            assert_eq!(memory.total_usage_bytes(), 0);
            assert_eq!(memory.total_peak_bytes(), 5 * MIB);
        }
    }

    #[test]
    fn lifetime_pools_split_the_watermark() {
        let memory = lifetime();
        let high = (4u64 << 30) as f64;
        assert_eq!(
            memory.limit_bytes(Budget::Pool(Pool::Metadata)),
            (high * 0.05) as u64
        );
        assert_eq!(
            memory.limit_bytes(Budget::Pool(Pool::Compressed)),
            (high * 0.35) as u64
        );
        let sum: u64 = memory.usage().iter().map(|u| u.limit_bytes).sum();
        assert_eq!(sum, 4 << 30);
        assert_eq!(
            memory.budget_for(MemoryClass::Dictionary),
            Some(Budget::Pool(Pool::Metadata))
        );
        assert_eq!(memory.budget_for(MemoryClass::Footer), None);
    }

    #[test]
    fn lifetime_pools_are_strict_without_privilege() {
        let mut memory = Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 100 * MIB,
            r4_memory_by_lifetime: true,
            ..MemorySettings::default()
        })
        .unwrap();
        // Metadata pool = 5 MiB: even a small read is refused once it is full (no low watermark).
        let a = charged(
            memory
                .try_charge(request(MemoryClass::ColumnIndex, 5 * MIB))
                .unwrap(),
        );
        match memory
            .try_charge(request(MemoryClass::OffsetIndex, 1))
            .unwrap()
        {
            Admission::Refused(refusal) => {
                assert_eq!(refusal.budget, Budget::Pool(Pool::Metadata));
                assert_eq!(refusal.usage_bytes, 5 * MIB);
            }
            Admission::Charged(_) => panic!("a full pool admitted a charge"),
        }
        // Other pools are independent.
        let b = charged(
            memory
                .try_charge(request(MemoryClass::CompressedPages, 35 * MIB))
                .unwrap(),
        );
        memory.release(a).unwrap();
        memory.release(b).unwrap();
    }

    #[test]
    fn an_admitted_charge_goes_past_a_full_pool_and_is_given_back() {
        let mut memory = Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 100 * MIB,
            r4_memory_by_lifetime: true,
            ..MemorySettings::default()
        })
        .unwrap();
        let full = charged(
            memory
                .try_charge(request(MemoryClass::CompressedPages, 35 * MIB))
                .unwrap(),
        );
        let past = memory
            .charge_admitted(request(MemoryClass::CompressedPages, 8 * MIB))
            .unwrap();
        assert!(past.is_privileged());
        assert_eq!(
            memory.usage_bytes(0, Budget::Pool(Pool::Compressed)),
            43 * MIB
        );
        memory.release(past).unwrap();
        memory.release(full).unwrap();
        assert_eq!(memory.total_usage_bytes(), 0);
    }

    #[test]
    fn a_charge_is_given_back_in_parts() {
        let mut memory = Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 100 * MIB,
            r4_memory_by_lifetime: true,
            ..MemorySettings::default()
        })
        .unwrap();
        let mut c = charged(
            memory
                .try_charge(request(MemoryClass::CompressedPages, 10 * MIB))
                .unwrap(),
        );
        memory.release_part(&mut c, 4 * MIB).unwrap();
        assert_eq!(c.bytes(), 6 * MIB);
        let pool = Budget::Pool(Pool::Compressed);
        assert_eq!(memory.usage_bytes(0, pool), 6 * MIB);
        // More than is left gives back what is left.
        memory.release_part(&mut c, 8 * MIB).unwrap();
        assert_eq!((c.bytes(), memory.usage_bytes(0, pool)), (0, 0));
        memory.release(c).unwrap();
        assert_eq!(memory.outstanding_charges(), 0);
        // A charge of another model is refused.
        let mut other = Memory::new(MemorySettings::default()).unwrap();
        let mut foreign = charged(
            other
                .try_charge(request(MemoryClass::CompressedPages, MIB))
                .unwrap(),
        );
        assert!(memory.release_part(&mut foreign, 1).is_err());
    }

    /// `getLimitsPerReader`: each stream's reader gets `high x fraction / streams` of each pool,
    /// and one stream filling its pool leaves the others theirs (the pools were shared, so one
    /// file could take a whole pool).
    #[test]
    fn lifetime_pools_are_per_stream_and_divided_by_the_streams() {
        let mut memory = Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 100 * MIB,
            r4_memory_by_lifetime: true,
            streams: 4,
            ..MemorySettings::default()
        })
        .unwrap();
        let compressed = memory.limit_bytes(Budget::Pool(Pool::Compressed));
        assert_eq!(compressed, (100.0 * MIB as f64 * 0.35 / 4.0) as u64);
        let on = |stream, bytes| ChargeRequest {
            stream,
            ..request(MemoryClass::CompressedPages, bytes)
        };
        let full = charged(memory.try_charge(on(0, compressed)).unwrap());
        assert!(matches!(
            memory.try_charge(on(0, 1)).unwrap(),
            Admission::Refused(_)
        ));
        let other = charged(memory.try_charge(on(3, compressed)).unwrap());
        let summed = memory
            .usage()
            .into_iter()
            .find(|u| u.budget == Budget::Pool(Pool::Compressed))
            .unwrap();
        assert_eq!(summed.usage_bytes, 2 * compressed);
        assert_eq!(summed.limit_bytes, 4 * compressed);
        memory.release(full).unwrap();
        memory.release(other).unwrap();
    }

    #[test]
    fn the_redesign_refuses_a_zero_compressed_pool_and_ignores_the_low_watermark() {
        let r4 = |f: fn(&mut MemorySettings)| {
            let mut s = MemorySettings {
                r4_memory_by_lifetime: true,
                ..MemorySettings::default()
            };
            f(&mut s);
            Memory::new(s)
        };
        assert!(r4(|s| s.input_format_parquet_compressed_memory_fraction = 0.0).is_err());
        // A high watermark under the (base's) low one: the base refuses it, the redesign
        // does not read the low watermark.
        assert!(r4(|s| s.input_format_parquet_memory_high_watermark = 1 << 20).is_ok());
        assert!(Memory::new(MemorySettings {
            input_format_parquet_memory_high_watermark: 1 << 20,
            ..MemorySettings::default()
        })
        .is_err());
    }

    #[test]
    fn bad_settings_are_errors() {
        let bad = |f: fn(&mut MemorySettings)| {
            let mut s = MemorySettings {
                r4_memory_by_lifetime: true,
                ..MemorySettings::default()
            };
            f(&mut s);
            Memory::new(s).unwrap_err()
        };
        assert!(matches!(
            bad(|s| s.input_format_parquet_compressed_memory_fraction = -0.1),
            ReadaheadError::InvalidFraction { .. }
        ));
        assert!(matches!(
            bad(|s| s.input_format_parquet_compressed_memory_fraction = f64::NAN),
            ReadaheadError::InvalidFraction { .. }
        ));
        assert!(matches!(
            bad(|s| s.input_format_parquet_compressed_memory_fraction = 0.96),
            ReadaheadError::FractionsExceedOne { .. }
        ));
        assert!(matches!(
            bad(|s| s.input_format_parquet_memory_high_watermark = 0),
            ReadaheadError::ZeroSetting { .. }
        ));
        assert!(matches!(
            bad(|s| s.streams = 0),
            ReadaheadError::ZeroSetting { .. }
        ));
        assert!(matches!(
            bad(|s| s.max_parsing_threads = 0),
            ReadaheadError::ZeroSetting { .. }
        ));
        assert!(matches!(
            bad(|s| {
                s.r4_memory_by_lifetime = false;
                s.input_format_parquet_memory_low_watermark = 5 << 30
            }),
            ReadaheadError::OutOfRange { .. }
        ));
        let message = bad(|s| s.input_format_parquet_compressed_memory_fraction = 0.96).to_string();
        assert!(message.contains("less than 1"), "{message}");
    }

    #[test]
    fn foreign_charges_and_streams_are_errors() {
        let mut a = base(2);
        let mut b = base(2);
        let charge = charged(a.try_charge(request(MemoryClass::Dictionary, 10)).unwrap());
        let first = charged(b.try_charge(request(MemoryClass::Dictionary, 10)).unwrap());
        // b's second charge has an id a never gave out.
        let second = charged(b.try_charge(request(MemoryClass::Dictionary, 10)).unwrap());
        assert!(matches!(
            a.release(second),
            Err(ReadaheadError::ForeignCharge { charge_id: 1 })
        ));
        a.release(charge).unwrap();
        b.release(first).unwrap();
        assert_eq!(
            b.outstanding_charges(),
            1,
            "the second charge was lost to the failed release"
        );
        assert!(matches!(
            a.try_charge(ChargeRequest {
                stream: 2,
                ..request(MemoryClass::Dictionary, 1)
            }),
            Err(ReadaheadError::UnknownStream { .. })
        ));
    }

    #[test]
    fn a_released_slot_is_reused_and_only_its_new_charge_releases_it() {
        let mut m = base(1);
        let first = charged(m.try_charge(request(MemoryClass::Dictionary, 10)).unwrap());
        let stale = Charge { ..first };
        m.release(first).unwrap();
        let second = charged(m.try_charge(request(MemoryClass::Dictionary, 10)).unwrap());
        assert_eq!(second.slot, stale.slot, "the free slot is taken again");
        assert_ne!(second.id, stale.id);
        // The old charge names the same slot, stream, budget and size, but not the id.
        assert!(matches!(
            m.release(stale),
            Err(ReadaheadError::ForeignCharge { charge_id: 0 })
        ));
        assert_eq!(m.outstanding_charges(), 1);
        m.release(second).unwrap();
        assert_eq!(m.outstanding_charges(), 0);
        assert_eq!(m.total_usage_bytes(), 0);
    }

    proptest! {
        /// Usage never exceeds a budget except through privileged (or, in base, low-watermark)
        /// admissions; releasing every charge brings all usage back to zero; peaks bound usage.
        #[test]
        fn pools_hold_their_budgets(
            lifetime_model in any::<bool>(),
            streams in 1u32..4,
            ops in proptest::collection::vec((0usize..9, 1u64..8 * MIB, 0usize..4, any::<bool>(), 0u32..6, any::<bool>()), 1..150),
        ) {
            let settings = MemorySettings {
                input_format_parquet_memory_high_watermark: 64 * MIB,
                input_format_parquet_memory_low_watermark: MIB,
                input_format_parquet_compressed_memory_fraction: 0.35,
                max_parsing_threads: 4,
                streams,
                r4_memory_by_lifetime: lifetime_model,
            };
            let classes = [
                MemoryClass::Footer, MemoryClass::BloomFilterHeader, MemoryClass::BloomFilterBlocks,
                MemoryClass::Dictionary, MemoryClass::ColumnIndex, MemoryClass::OffsetIndex,
                MemoryClass::CompressedPages, MemoryClass::DecodedColumns, MemoryClass::DeliveredChunk,
            ];
            let mut memory = Memory::new(settings).unwrap();
            // The base's low watermark per stage and stream.
            let low = (MIB as f64 * 0.2 / f64::from(streams)) as u64;
            let mut held: Vec<Charge> = Vec::new();
            for (class, bytes, stream, privileged, running_tasks, release) in ops {
                if release && !held.is_empty() {
                    let charge = held.remove(bytes as usize % held.len());
                    memory.release(charge).unwrap();
                    continue;
                }
                let stream = stream % streams as usize;
                let class = classes[class];
                let before = memory.budget_for(class).map(|b| memory.usage_bytes(stream, b));
                match memory.try_charge(ChargeRequest { stream, class, bytes, running_tasks, privileged }).unwrap() {
                    Admission::Charged(charge) => {
                        if let (Some(budget), Some(before)) = (charge.budget(), before) {
                            let over = before + bytes > memory.limit_bytes(budget);
                            let excused = privileged || (!lifetime_model && bytes < low);
                            prop_assert!(!over || excused, "{:?} over budget without privilege", budget);
                            let normal = if lifetime_model { !over } else { bytes < low || (!over && running_tasks < 4) };
                            prop_assert_eq!(charge.is_privileged(), privileged && !normal);
                        }
                        held.push(charge);
                    }
                    Admission::Refused(refusal) => prop_assert!(!privileged && refusal.bytes == bytes),
                }
                for usage in memory.usage() {
                    prop_assert!(usage.peak_bytes >= usage.usage_bytes);
                }
                prop_assert!(memory.total_peak_bytes() >= memory.total_usage_bytes());
            }
            prop_assert_eq!(memory.outstanding_charges(), held.len());
            for charge in held.drain(..) {
                memory.release(charge).unwrap();
            }
            prop_assert_eq!(memory.total_usage_bytes(), 0);
            prop_assert!(memory.usage().iter().all(|u| u.usage_bytes == 0));
            prop_assert_eq!(memory.outstanding_charges(), 0);
        }
    }
}
