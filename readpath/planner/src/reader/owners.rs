//! Who a batch of started steps reads each entry for: per entry, the earliest (row group,
//! subgroup) that asked for it; the read serving it is that subgroup's.
//!
//! Indexed by entry, not hashed: a planned start asks for every row group's entries at once
//! (21,114 of a 26,622-entry plan on `single-large-file`), and the entries of a batch are
//! exactly the ones it reads, so they are also the ones to clear after it.

/// No owner.
const NONE: (u32, u32) = (u32::MAX, u32::MAX);

/// What the step asking for an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Asker {
    /// It decodes (PREWHERE or main pages).
    pub decodes: bool,
    /// ClickHouse's planner queues its reads.
    pub planned: bool,
}

/// See the module comment. Every slot is [`NONE`] outside a batch.
#[derive(Debug, Default)]
pub(super) struct Owners {
    by_entry: Vec<(u32, u32)>,
    /// Per entry: whether a decoding step (PREWHERE or main pages) asks for it. Such a read is
    /// column data whatever its first bytes are (a chunk's dictionary page read with its data
    /// pages), as ClickHouse charges a `ColumnDataPrefetch` entry to the Compressed pool.
    for_decode: Vec<bool>,
    /// Per entry: whether a step whose reads ClickHouse's planner queues asks for it (see
    /// [`super::ClickHouseReader::queued_by_the_planner`]).
    planned: Vec<bool>,
    /// Entries with an owner.
    owned: usize,
}

impl Owners {
    /// The owner of `entry`, if it has one.
    pub(super) fn get(&self, entry: u32) -> Option<(u32, u32)> {
        self.by_entry
            .get(entry as usize)
            .copied()
            .filter(|&o| o != NONE)
    }

    /// Makes `owner` the owner of `entry` if it has none or a later one; `for_decode`: the
    /// asking step decodes (it is kept if any asker does).
    pub(super) fn keep_earliest(&mut self, entry: u32, owner: (u32, u32), asker: Asker) {
        debug_assert_ne!(owner, NONE, "an owner is a real (row group, subgroup)");
        let slot = self.slot(entry);
        let new = *slot == NONE;
        *slot = (*slot).min(owner);
        self.owned += usize::from(new);
        self.mark(entry, asker);
    }

    /// Makes `owner` the owner of `entry` if it has none (see [`Self::keep_earliest`]).
    pub(super) fn keep_first(&mut self, entry: u32, owner: (u32, u32), asker: Asker) {
        debug_assert_ne!(owner, NONE, "an owner is a real (row group, subgroup)");
        let slot = self.slot(entry);
        if *slot == NONE {
            *slot = owner;
            self.owned += 1;
        }
        self.mark(entry, asker);
    }

    /// Whether a step whose reads the planner queues asks for `entry` (false for an entry
    /// without an owner).
    pub(super) fn planned(&self, entry: u32) -> bool {
        self.planned.get(entry as usize).copied().unwrap_or(false)
    }

    /// Whether a decoding step asks for `entry` (false for an entry without an owner).
    pub(super) fn for_decode(&self, entry: u32) -> bool {
        self.for_decode
            .get(entry as usize)
            .copied()
            .unwrap_or(false)
    }

    fn mark(&mut self, entry: u32, asker: Asker) {
        if let Some(f) = self.for_decode.get_mut(entry as usize) {
            *f |= asker.decodes;
        }
        if let Some(p) = self.planned.get_mut(entry as usize) {
            *p |= asker.planned;
        }
    }

    /// Forgets the owners of `entries`, which must name every entry given one since the last
    /// call.
    pub(super) fn clear(&mut self, entries: &[u32]) {
        for &e in entries {
            if let Some(slot) = self.by_entry.get_mut(e as usize) {
                if *slot != NONE {
                    *slot = NONE;
                    self.owned -= 1;
                }
            }
            if let Some(f) = self.for_decode.get_mut(e as usize) {
                *f = false;
            }
            if let Some(p) = self.planned.get_mut(e as usize) {
                *p = false;
            }
        }
        debug_assert_eq!(self.owned, 0, "an entry kept an owner past its batch");
    }

    /// Whether no entry has an owner.
    pub(super) fn is_empty(&self) -> bool {
        self.owned == 0
    }

    fn slot(&mut self, entry: u32) -> &mut (u32, u32) {
        let i = entry as usize;
        if i >= self.by_entry.len() {
            self.by_entry.resize(i + 1, NONE);
            self.for_decode.resize(i + 1, false);
            self.planned.resize(i + 1, false);
        }
        // In bounds: just grown to it.
        &mut self.by_entry[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_owner_stays_and_clearing_forgets_every_one() {
        let mut o = Owners::default();
        let (plain, decoding) = (
            Asker {
                decodes: false,
                planned: false,
            },
            Asker {
                decodes: true,
                planned: true,
            },
        );
        o.keep_earliest(5, (3, 1), plain);
        o.keep_earliest(5, (2, 4), decoding);
        o.keep_earliest(5, (2, 7), plain);
        o.keep_first(9, (4, 0), plain);
        o.keep_first(9, (1, 0), plain);
        o.keep_first(0, (8, 8), decoding);
        assert!(o.for_decode(5) && o.for_decode(0) && !o.for_decode(9));
        assert!(o.planned(5) && o.planned(0) && !o.planned(9) && !o.planned(1_000));
        assert!(!o.for_decode(1_000));
        assert_eq!(o.get(5), Some((2, 4)));
        assert_eq!(o.get(9), Some((4, 0)));
        assert_eq!(o.get(0), Some((8, 8)));
        assert_eq!(o.get(1), None);
        assert_eq!(o.get(1_000), None);
        assert!(!o.is_empty());
        o.clear(&[0, 5, 9]);
        assert!(o.is_empty());
        assert!(o.by_entry.iter().all(|&x| x == NONE));
        assert!(!o.for_decode(5) && !o.for_decode(0));
        assert!(!o.planned(5) && !o.planned(0));
        assert_eq!(o.get(5), None);
    }
}
