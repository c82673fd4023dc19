//! Decodes: decode threads, memory for decoded columns, R10's per-row-group cap, delivery.

use super::*;

impl ClickHouseReader {
    #[inline(never)] // a stage of `pump`, kept out of its body (see there)
    pub(super) fn start_decodes(&mut self) -> Result<bool, PlanError> {
        let mut any = false;
        // Where the scan resumes: a pick only takes a thread, memory and a unit's slot, so an
        // entry refused before it stays refused (the scan was quadratic in the queue).
        let mut from = 0;
        self.threads.scans += 1;
        let scan = self.threads.scans;
        while self.threads.held() < self.cfg.max_parsing_threads
            && !self.threads.decode_queue.is_empty()
        {
            if !self.threads.scan_needed {
                break;
            }
            let mut picked = None;
            for i in from..self.threads.decode_queue.len() {
                let Some(&(uid, s)) = self.threads.decode_queue.get(i) else {
                    break;
                };
                if self.threads.slots_full(uid, scan) {
                    debug_assert!(!self.column_data_slot_free(uid), "a pick freed a slot");
                    continue;
                }
                let Some(u) = self.units.open.get(uid as usize).and_then(|u| u.as_deref()) else {
                    picked = Some((i, None));
                    break;
                };
                let Some(plan_step) = u.plan.steps.get(s as usize) else {
                    continue;
                };
                if !self.column_data_slot_free(uid) {
                    self.threads.set_slots_full(uid, scan);
                    continue;
                }
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
        if let Some(r) = u.rgs.get_mut(rg) {
            match r.pending_decodes.pop_front() {
                Some(next) => self.threads.decode_queue.push_back((u.id, next)),
                None => decrement(&mut r.active_decodes),
            }
        }
        self.finish_step(u, s)
    }
}
