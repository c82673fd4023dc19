//! A cancellable priority queue of timed events.
//!
//! Events are ordered by `(time, insertion sequence)`, so events scheduled for the same instant
//! pop in the order they were scheduled. Payloads live in a slab; the heap holds only small
//! `(key, slot)` entries. Cancellation removes the payload at once and leaves a stale heap entry
//! that is skipped lazily (its sequence no longer matches the slot's); the heap is compacted when
//! stale entries outnumber live ones, so memory stays proportional to the pending events.

use crate::TimeNs;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Names one scheduled event, for [`EventQueue::cancel`]. A key stays valid (and harmless)
/// after its event popped or was cancelled: cancelling it again returns `false`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventKey {
    seq: u64,
    slot: u32,
}

impl EventKey {
    /// The insertion sequence number of the event (unique within one queue).
    pub fn seq(self) -> u64 {
        self.seq
    }
}

/// A heap entry, 24 bytes: ordered by `(time_ns, seq)`.
#[derive(Clone, Copy)]
struct Entry {
    time_ns: u64,
    seq: u64,
    slot: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) == (other.time_ns, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    // Reversed: std's BinaryHeap is a max-heap and we want the earliest event on top.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time_ns, other.seq).cmp(&(self.time_ns, self.seq))
    }
}

struct Slot<E> {
    seq: u64,
    payload: Option<E>,
}

/// A priority queue of events of type `E`, earliest first, ties in insertion order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry>,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u64,
    live: usize,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `n` pending events before reallocating.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            slots: Vec::with_capacity(n),
            free: Vec::new(),
            next_seq: 0,
            live: 0,
        }
    }

    /// Schedules `event` at time `at_ns`; returns a key that can cancel it.
    pub fn schedule(&mut self, at_ns: TimeNs, event: E) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slots[slot as usize];
                s.seq = seq;
                s.payload = Some(event);
                slot
            }
            None => {
                // More than u32::MAX simultaneously pending events would exhaust memory first.
                let slot = self.slots.len() as u32;
                self.slots.push(Slot {
                    seq,
                    payload: Some(event),
                });
                slot
            }
        };
        self.heap.push(Entry {
            time_ns: at_ns,
            seq,
            slot,
        });
        self.live += 1;
        EventKey { seq, slot }
    }

    /// Cancels the event named by `key`. Returns `true` if it was pending, `false` if it had
    /// already popped or been cancelled.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        let Some(slot) = self.slots.get_mut(key.slot as usize) else {
            return false;
        };
        if slot.seq != key.seq || slot.payload.is_none() {
            return false;
        }
        slot.payload = None;
        self.free.push(key.slot);
        self.live -= 1;
        self.drop_stale_top();
        if self.heap.len() > 2 * self.live + 1024 {
            self.compact();
        }
        true
    }

    /// Removes and returns the earliest pending event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(TimeNs, E)> {
        let entry = self.heap.pop()?;
        // Invariant: the top of the heap is always live, so this entry is.
        let slot = &mut self.slots[entry.slot as usize];
        let event = slot.payload.take()?;
        self.free.push(entry.slot);
        self.live -= 1;
        self.drop_stale_top();
        Some((entry.time_ns, event))
    }

    /// The time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<TimeNs> {
        self.heap.peek().map(|e| e.time_ns)
    }

    /// The earliest pending event without removing it.
    pub fn peek(&self) -> Option<(TimeNs, &E)> {
        let e = self.heap.peek()?;
        let payload = self.slots.get(e.slot as usize)?.payload.as_ref()?;
        Some((e.time_ns, payload))
    }

    /// The number of pending (not cancelled, not popped) events.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Whether the event named by `key` is still pending.
    pub fn is_pending(&self, key: EventKey) -> bool {
        self.slots
            .get(key.slot as usize)
            .is_some_and(|s| s.seq == key.seq && s.payload.is_some())
    }

    fn is_stale(&self, e: &Entry) -> bool {
        let s = &self.slots[e.slot as usize];
        s.payload.is_none() || s.seq != e.seq
    }

    /// Keeps the invariant that the heap's top entry is live, so `peek_time` can be `&self`.
    #[inline]
    fn drop_stale_top(&mut self) {
        while let Some(top) = self.heap.peek() {
            if !self.is_stale(top) {
                break;
            }
            self.heap.pop();
        }
    }

    fn compact(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|e| !self.is_stale(e));
        self.heap = BinaryHeap::from(entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(30, "c");
        q.schedule(10, "a1");
        q.schedule(20, "b");
        q.schedule(10, "a2");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(10, "a1"), (10, "a2"), (20, "b"), (30, "c")]);
        assert!(q.is_empty());
    }

    #[test]
    fn cancel_removes_and_is_idempotent() {
        let mut q = EventQueue::new();
        let a = q.schedule(5, 'a');
        let b = q.schedule(7, 'b');
        assert_eq!(q.peek_time(), Some(5));
        assert!(q.cancel(a));
        assert!(!q.cancel(a));
        assert_eq!(q.len(), 1);
        assert_eq!(q.peek_time(), Some(7));
        assert_eq!(q.pop(), Some((7, 'b')));
        assert!(!q.cancel(b), "a popped event cannot be cancelled");
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn a_reused_slot_does_not_revive_a_stale_key() {
        let mut q = EventQueue::new();
        let a = q.schedule(100, 1);
        assert!(q.cancel(a));
        let b = q.schedule(50, 2); // reuses a's slot
        assert!(!q.cancel(a));
        assert!(q.is_pending(b));
        assert_eq!(q.pop(), Some((50, 2)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn compaction_bounds_the_heap() {
        let mut q = EventQueue::new();
        for i in 0..100_000u64 {
            let k = q.schedule(1_000_000 + i, i);
            q.schedule(i, i);
            q.cancel(k);
        }
        assert_eq!(q.len(), 100_000);
        assert!(
            q.heap.len() <= 2 * q.len() + 1024,
            "heap {} live {}",
            q.heap.len(),
            q.len()
        );
        let mut last = 0;
        while let Some((t, _)) = q.pop() {
            assert!(t >= last);
            last = t;
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Schedule(u64),
        Cancel(usize),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..50).prop_map(Op::Schedule),
            (0usize..64).prop_map(Op::Cancel),
            Just(Op::Pop),
        ]
    }

    proptest! {
        /// The queue behaves like a reference model: a BTreeMap keyed by (time, seq).
        #[test]
        fn matches_a_reference_model(ops in proptest::collection::vec(op(), 0..300)) {
            let mut q = EventQueue::new();
            let mut model: BTreeMap<(u64, u64), u64> = BTreeMap::new();
            let mut keys: Vec<(EventKey, u64, u64)> = Vec::new();
            let mut n = 0u64;
            for op in ops {
                match op {
                    Op::Schedule(t) => {
                        let k = q.schedule(t, n);
                        model.insert((t, k.seq()), n);
                        keys.push((k, t, n));
                        n += 1;
                    }
                    Op::Cancel(i) => {
                        if let Some(&(k, t, _)) = keys.get(i) {
                            let was = model.remove(&(t, k.seq())).is_some();
                            prop_assert_eq!(q.cancel(k), was);
                        }
                    }
                    Op::Pop => {
                        let want = model.pop_first().map(|((t, _), v)| (t, v));
                        prop_assert_eq!(q.pop(), want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.peek_time(), model.keys().next().map(|k| k.0));
            }
        }
    }
}
