//! Decodes: decode threads, memory for decoded columns, R10's per-row-group cap, delivery.

use super::*;

impl ClickHouseReader {
    /// Starts queued decodes while threads, slots and memory allow. Its guards (an empty
    /// queue, every parsing thread held, no queued unit with a free slot: the scan stops before
    /// asking memory) are what `nothing_waits_for_memory` reads to let a consumed chunk's
    /// release skip a pump: keep the two in step.
    #[inline(never)] // a stage of `pump`, kept out of its body (see there)
    pub(super) fn start_decodes(&mut self) -> Result<bool, PlanError> {
        let mut any = false;
        // Where the scan resumes: a pick only takes a thread, memory and a unit's slot, so an
        // entry refused before it stays refused (the scan was quadratic in the queue).
        let mut from = 0;
        self.threads.decode_queue.begin_scan();
        while self.threads.held() < self.cfg.max_parsing_threads
            && !self.threads.decode_queue.is_empty()
        {
            if !self.threads.scan_needed {
                break;
            }
            if !self.some_queued_unit_may_start() {
                // The scan below would skip every entry (half the scans found nothing, after
                // walking about 36 entries each on `fs-cache-cold`).
                self.threads.scan_needed = false;
                break;
            }
            let mut picked = None;
            let mut at = from;
            while let Some(i) = self.next_startable(at) {
                at = i + 1;
                let Some(&(uid, s)) = self.threads.decode_queue.get(i) else {
                    break;
                };
                let Some(u) = self.units.open.get(uid as usize).and_then(|u| u.as_deref()) else {
                    picked = Some((i, None));
                    break;
                };
                let Some(plan_step) = u.plan.steps.get(s as usize) else {
                    continue;
                };
                debug_assert!(self.column_data_slot_free(uid));
                let privileged = plan_step.rg as usize == u.first_incomplete;
                let request = ChargeRequest {
                    stream: u.stream,
                    class: MemoryClass::DecodedColumns,
                    bytes: plan_step.decoded_bytes,
                    running_tasks: self.threads.decodes_running,
                    privileged,
                };
                match self.memory.try_charge(request)? {
                    Admission::Charged(c) => {
                        picked = Some((i, Some(c)));
                        break;
                    }
                    Admission::Refused(_) => {}
                }
            }
            let Some((i, charge)) = picked else {
                self.threads.scan_needed = false;
                break;
            };
            from = i;
            let Some((uid, s)) = self.threads.decode_queue.remove(i) else {
                break;
            };
            let Some(u) = self.units.open.get(uid as usize).and_then(|u| u.as_deref()) else {
                if let Some(c) = charge {
                    self.release_charge(c)?;
                }
                continue;
            };
            let Some(plan_step) = u.plan.steps.get(s as usize) else {
                continue;
            };
            let row_group = u
                .plan
                .row_groups
                .get(plan_step.rg as usize)
                .map_or(0, |r| r.row_group);
            let id = self.next_id;
            self.next_id += 1;
            self.out.push_back(Action::Decode(DecodeRequest {
                id: DecodeId(id),
                file: u.file,
                row_group,
                compressed_bytes: plan_step.compressed_bytes,
                decoded_bytes: plan_step.decoded_bytes,
                rows: plan_step.rows,
            }));
            self.threads.decodes.insert(
                id,
                RunningDecode {
                    unit: uid,
                    step: s,
                    charge,
                },
            );
            let by_unit = &mut self.threads.decoding_by_unit;
            if by_unit.len() <= uid as usize {
                by_unit.resize(uid as usize + 1, 0);
            }
            if let Some(n) = by_unit.get_mut(uid as usize) {
                *n += 1;
            }
            self.threads.decodes_running += 1;
            any = true;
        }
        Ok(any)
    }

    /// The first entry of the decode queue at or after `from` whose unit may start a decode:
    /// it is closed (its entry is taken and dropped) or has a free `ColumnData` slot. The scan
    /// marks the units it finds full (a pick only takes slots) and skips their other entries
    /// without looking them up; it reads the threads' fields directly, beside the queue it
    /// walks.
    fn next_startable(&mut self, from: usize) -> Option<usize> {
        let open = &self.units.open;
        let gated = self.cfg.blocked_inline;
        let cap = self.cfg.column_data_threads;
        let decoding_by_unit = &self.threads.decoding_by_unit;
        let blocked = &self.threads.blocked;
        self.threads.decode_queue.next_startable(from, |uid| {
            open.get(uid as usize).is_none_or(Option::is_none)
                || slot_free_in(gated, cap, decoding_by_unit, blocked, uid)
        })
    }

    /// Whether some unit with a queued decode may start one: it is closed (its entries are
    /// dropped) or has a free `ColumnData` slot. If none may, every entry of the queue is
    /// skipped (a closed unit's is taken, a full unit's passed over).
    pub(super) fn some_queued_unit_may_start(&self) -> bool {
        self.threads.decode_queue.units().any(|uid| {
            self.units
                .open
                .get(uid as usize)
                .is_none_or(Option::is_none)
                || self.column_data_slot_free(uid)
        })
    }

    pub(super) fn decode_done(
        &mut self,
        u: &mut OpenUnit,
        s: u32,
        charge: Option<Charge>,
    ) -> Result<(), PlanError> {
        let Some(plan_step) = u.plan.steps.get(s as usize) else {
            return Ok(());
        };
        let rg = plan_step.rg as usize;
        let rows = plan_step.deliver_rows;
        let decoded_bytes = plan_step.decoded_bytes;
        if rows > 0 {
            // Decoded columns become a delivered chunk (base: no longer charged; R4: Decoded).
            let chunk_charge = match charge {
                Some(c) => Some(self.memory.reclassify(c, MemoryClass::DeliveredChunk)?),
                None => None,
            };
            let id = self.next_id;
            self.next_id += 1;
            self.chunks.insert(id, chunk_charge);
            self.output.rows += rows;
            self.output.chunks += 1;
            let unit = self
                .units
                .list
                .get(u.id as usize)
                .map_or(0, |x| x.query_pos);
            if let Some(n) = self.output.rows_per_file.get_mut(unit) {
                *n += rows;
            }
            if let Some(n) = self.output.rows_per_unit.get_mut(u.id as usize) {
                *n += rows;
            }
            self.out.push_back(Action::Deliver(Chunk {
                id: ChunkId(id),
                file: u.file,
                source: u.id,
                rows,
                decoded_bytes,
            }));
        } else if let Some(c) = charge {
            self.release_charge(c)?;
        }
        let ending = u32::from(plan_step.ends_subgroup);
        if let Some(r) = u.rgs.get_mut(rg) {
            decrement(&mut r.active_decodes);
            if !r.pending_decodes.is_empty() {
                self.release_decodes(u, rg, ending);
            }
        }
        self.finish_step(u, s)
    }
}

/// The decodes waiting for a parsing thread, oldest first, and how many of them each unit has.
#[derive(Debug, Default)]
pub(crate) struct DecodeQueue {
    /// (unit, step), oldest first.
    entries: VecDeque<(u32, u32)>,
    /// Per unit id, its entries in `entries`.
    per_unit: Vec<u32>,
    /// The units with at least one entry, in no order.
    units: Vec<u32>,
    /// `start_decodes` scans so far ([`DecodeQueue::begin_scan`]).
    scan: u64,
    /// Per unit id, the last scan that found the unit's `ColumnData` slots full: a pick only
    /// takes slots, so the rest of that scan skips the unit's entries without asking.
    full_in_scan: Vec<u64>,
}

impl DecodeQueue {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn get(&self, i: usize) -> Option<&(u32, u32)> {
        self.entries.get(i)
    }

    /// The units with at least one entry.
    pub(crate) fn units(&self) -> impl Iterator<Item = u32> + '_ {
        self.units.iter().copied()
    }

    /// Starts a scan: no unit is known full in it yet.
    pub(crate) fn begin_scan(&mut self) {
        self.scan += 1;
    }

    /// The first entry at or after `from` whose unit `may_start`, over the entries in order
    /// (the `VecDeque`'s own iterator, not an index each); a unit `may_start` refuses is
    /// marked full for the rest of the scan and not asked again.
    pub(crate) fn next_startable(
        &mut self,
        from: usize,
        may_start: impl Fn(u32) -> bool,
    ) -> Option<usize> {
        let scan = self.scan;
        debug_assert!(scan > 0, "a scan begins before it looks");
        let full = &mut self.full_in_scan;
        for (k, &(uid, _)) in self
            .entries
            .range(from.min(self.entries.len())..)
            .enumerate()
        {
            let u = uid as usize;
            if full.get(u) == Some(&scan) {
                debug_assert!(!may_start(uid), "a pick freed a slot");
                continue;
            }
            if may_start(uid) {
                return Some(from + k);
            }
            if full.len() <= u {
                full.resize(u + 1, 0);
            }
            if let Some(at) = full.get_mut(u) {
                *at = scan;
            }
        }
        None
    }

    pub(crate) fn push_back(&mut self, uid: u32, step: u32) {
        self.entries.push_back((uid, step));
        let i = uid as usize;
        if self.per_unit.len() <= i {
            self.per_unit.resize(i + 1, 0);
        }
        if let Some(n) = self.per_unit.get_mut(i) {
            if *n == 0 {
                self.units.push(uid);
            }
            *n += 1;
        }
    }

    pub(crate) fn remove(&mut self, i: usize) -> Option<(u32, u32)> {
        let (uid, step) = self.entries.remove(i)?;
        if let Some(n) = self.per_unit.get_mut(uid as usize) {
            decrement(n);
            if *n == 0 {
                if let Some(at) = self.units.iter().position(|&x| x == uid) {
                    self.units.swap_remove(at);
                }
            }
        }
        Some((uid, step))
    }

    /// Asserts that the per-unit counts and the unit list are those of the entries.
    pub(crate) fn check(&self) {
        let mut counts = vec![0u32; self.per_unit.len()];
        for &(uid, _) in &self.entries {
            if let Some(n) = counts.get_mut(uid as usize) {
                *n += 1;
            }
        }
        assert_eq!(counts, self.per_unit, "decodes queued per unit");
        let mut units: Vec<u32> = self.units.clone();
        units.sort_unstable();
        let with_entries: Vec<u32> = (0..u32_of(counts.len()))
            .filter(|&u| counts.get(u as usize).is_some_and(|&n| n > 0))
            .collect();
        assert_eq!(units, with_entries, "units with queued decodes");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_counts_entries_per_unit() {
        let mut q = DecodeQueue::default();
        q.push_back(2, 10);
        q.push_back(5, 11);
        q.push_back(2, 12);
        let mut units: Vec<u32> = q.units().collect();
        units.sort_unstable();
        assert_eq!(units, [2, 5]);
        assert_eq!(q.remove(1), Some((5, 11)));
        assert_eq!(q.units().collect::<Vec<_>>(), [2]);
        assert_eq!(q.remove(0), Some((2, 10)));
        assert_eq!(
            q.units().collect::<Vec<_>>(),
            [2],
            "one entry of unit 2 left"
        );
        assert_eq!(q.get(0), Some(&(2, 12)));
        assert_eq!(q.remove(0), Some((2, 12)));
        assert!(q.is_empty() && q.units().next().is_none());
        assert_eq!(q.remove(0), None);
        q.check();
    }

    #[test]
    fn a_scan_asks_each_unit_once_and_finds_the_first_that_may_start() {
        let mut q = DecodeQueue::default();
        for (uid, step) in [(1, 0), (2, 0), (1, 1), (3, 0), (2, 1), (3, 1)] {
            q.push_back(uid, step);
        }
        q.begin_scan();
        let asked = std::cell::RefCell::new(Vec::new());
        let only_3 = |uid: u32| {
            asked.borrow_mut().push(uid);
            uid == 3
        };
        assert_eq!(q.next_startable(0, only_3), Some(3));
        // Units 1 and 2 were asked once each; their second entries were skipped unasked (a
        // debug build asks unit 1 again, to assert that it is still full).
        let want: &[u32] = if cfg!(debug_assertions) {
            &[1, 2, 1, 3]
        } else {
            &[1, 2, 3]
        };
        assert_eq!(*asked.borrow(), want);
        asked.borrow_mut().clear();
        // Later in the same scan: 1 and 2 stay full, past the last entry of 3 nothing starts.
        let never = |uid: u32| {
            asked.borrow_mut().push(uid);
            false
        };
        assert_eq!(q.next_startable(4, never), None);
        let want: &[u32] = if cfg!(debug_assertions) {
            &[2, 3]
        } else {
            &[3]
        };
        assert_eq!(
            *asked.borrow(),
            want,
            "only the unit not yet known full is asked"
        );
        assert_eq!(q.next_startable(99, |_| true), None, "past the end");
        // A new scan forgets the marks.
        q.begin_scan();
        assert_eq!(q.next_startable(0, |uid| uid == 2), Some(1));
    }
}
