//! A priority queue of timed events, some of them cancellable.
//!
//! Events are ordered by `(time, insertion sequence)`, so events scheduled for the same instant
//! pop in the order they were scheduled. Payloads live in the heap entries themselves, so a pop
//! touches nothing but the heap, as a bare heap does. An event scheduled with
//! [`EventQueue::push`] cannot be cancelled and costs exactly that. One scheduled with
//! [`EventQueue::schedule`] also takes a slot in a side table of generations, which is what
//! [`EventQueue::cancel`] clears; its heap entry then goes stale and is skipped lazily (its
//! sequence no longer matches the slot's), and the heap is compacted when stale entries
//! outnumber live ones (by more than 1,024), so memory stays proportional to the most events
//! pending at once (the heap's vector is not shrunk).

use crate::TimeNs;
use std::cmp::Ordering;
// A 4-ary heap (the `dary_heap` crate, std's `BinaryHeap` API): half the depth of a binary heap,
// and its four children share a cache line or two. In the hold model at 100,000 pending events
// the engine measured 1.25x and 0.91x of a bare std binary heap in two runs on a noisy VM, and
// 0.85x before this change (`cargo bench -p engine --bench hold`; README, "Performance").
// Entries compare `(time_ns, seq)` packed into one `u128` (`Entry::key`): one wide comparison
// instead of two dependent branches took the engine from 0.90x to 1.09-1.21x of the bare heap at
// 1,000 pending and to 1.36-1.53x at 100,000 (2026-12-06).
use dary_heap::QuaternaryHeap as BinaryHeap;

/// Names one cancellable event, for [`EventQueue::cancel`]. A key stays valid (and harmless)
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

/// The slot of an event pushed without a key: it has no generation to check.
const NO_SLOT: u32 = u32::MAX;

/// A heap entry, ordered by `(time_ns, seq)` only.
struct Entry<E> {
    time_ns: u64,
    seq: u64,
    /// The event's generation slot, or [`NO_SLOT`] for an event that cannot be cancelled.
    slot: u32,
    payload: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time_ns, self.seq) == (other.time_ns, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
    #[inline(always)]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }
    #[inline(always)]
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }
    #[inline(always)]
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }
    #[inline(always)]
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}
impl<E> Entry<E> {
    /// `(time_ns, seq)` as one number, so that an order is one wide comparison, not two
    /// dependent branches.
    #[inline(always)]
    fn key(&self) -> u128 {
        (u128::from(self.time_ns) << 64) | u128::from(self.seq)
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: the heap is a max-heap and we want the earliest event on top.
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// The generation of a cancellable event's slot: the `seq` of the event it holds, while pending.
#[derive(Clone, Copy)]
struct Slot {
    seq: u64,
    pending: bool,
}

/// A priority queue of events of type `E`, earliest first, ties in insertion order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_seq: u64,
    /// Heap entries of cancelled events not yet dropped (pending = heap length - stale); while
    /// 0, pops check nothing.
    stale: usize,
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
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            stale: 0,
        }
    }

    /// Schedules `event` at time `at_ns`, for good: it will pop, it cannot be cancelled.
    #[inline(always)]
    pub fn push(&mut self, at_ns: TimeNs, event: E) {
        let seq = self.next_seq();
        self.heap.push(Entry {
            time_ns: at_ns,
            seq,
            slot: NO_SLOT,
            payload: event,
        });
    }

    /// Schedules `event` at time `at_ns`; returns a key that can cancel it.
    pub fn schedule(&mut self, at_ns: TimeNs, event: E) -> EventKey {
        let seq = self.next_seq();
        let pending = Slot { seq, pending: true };
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = pending;
                slot
            }
            None => {
                let slot = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|&s| s != NO_SLOT)
                    .unwrap_or_else(|| panic!("more than {NO_SLOT} cancellable events pending"));
                self.slots.push(pending);
                slot
            }
        };
        self.heap.push(Entry {
            time_ns: at_ns,
            seq,
            slot,
            payload: event,
        });
        EventKey { seq, slot }
    }

    fn next_seq(&mut self) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        seq
    }

    /// Cancels the event named by `key`. Returns `true` if it was pending, `false` if it had
    /// already popped or been cancelled.
    pub fn cancel(&mut self, key: EventKey) -> bool {
        let Some(slot) = self.slots.get_mut(key.slot as usize) else {
            return false;
        };
        if slot.seq != key.seq || !slot.pending {
            return false;
        }
        slot.pending = false;
        self.free.push(key.slot);
        self.stale += 1;
        self.drop_stale_top();
        if self.heap.len() > 2 * self.len() + 1024 {
            self.compact();
        }
        true
    }

    /// Removes and returns the earliest pending event with its time.
    // Inlined into the caller's loop, the rare paths (slots, stale entries) out of line.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(TimeNs, E)> {
        let entry = self.heap.pop()?;
        // Invariant: the top of the heap is always live, so this entry is.
        if entry.slot != NO_SLOT {
            self.release(entry.slot);
        }
        if self.stale > 0 {
            self.drop_stale_top();
        }
        Some((entry.time_ns, entry.payload))
    }

    fn release(&mut self, slot: u32) {
        self.slots[slot as usize].pending = false;
        self.free.push(slot);
    }

    /// The time of the earliest pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<TimeNs> {
        self.heap.peek().map(|e| e.time_ns)
    }

    /// The earliest pending event without removing it.
    pub fn peek(&self) -> Option<(TimeNs, &E)> {
        self.heap.peek().map(|e| (e.time_ns, &e.payload))
    }

    /// The number of pending (not cancelled, not popped) events.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() - self.stale
    }

    /// Whether no event is pending.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the event named by `key` is still pending.
    pub fn is_pending(&self, key: EventKey) -> bool {
        self.slots
            .get(key.slot as usize)
            .is_some_and(|s| s.seq == key.seq && s.pending)
    }

    fn is_stale(&self, e: &Entry<E>) -> bool {
        if e.slot == NO_SLOT {
            return false;
        }
        let s = self.slots[e.slot as usize];
        !s.pending || s.seq != e.seq
    }

    /// Keeps the invariant that the heap's top entry is live, so `peek_time` can be `&self`.
    /// Free while nothing cancelled waits in the heap.
    #[inline(never)]
    fn drop_stale_top(&mut self) {
        while self.stale > 0 {
            match self.heap.peek() {
                Some(top) if self.is_stale(top) => {
                    self.heap.pop();
                    self.stale -= 1;
                }
                _ => break,
            }
        }
    }

    fn compact(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|e| !self.is_stale(e));
        self.heap = BinaryHeap::from(entries);
        self.stale = 0;
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
        // Few live events under many cancelled later ones: the cancelled entries never reach
        // the top, so only compaction removes them.
        let mut q = EventQueue::new();
        let mut live = Vec::new();
        for i in 0..5_000u64 {
            let k = q.schedule(1_000_000 + i, i);
            if i % 100 == 0 {
                live.push((1_000_000 + i, i));
            } else {
                assert!(q.cancel(k));
            }
            assert!(
                q.heap.len() <= 2 * q.len() + 1024 + 1,
                "heap {} live {} after {i}",
                q.heap.len(),
                q.len()
            );
        }
        assert_eq!(q.len(), 50);
        assert!(q.heap.len() < 1_200, "never compacted: {}", q.heap.len());
        let popped: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            popped, live,
            "compaction kept exactly the live events, in order"
        );
    }

    #[derive(Debug, Clone)]
    enum Op {
        Schedule(u64),
        Push(u64),
        Cancel(usize),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..50).prop_map(Op::Schedule),
            (0u64..50).prop_map(Op::Push),
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
            let mut seq = 0u64;
            for op in ops {
                match op {
                    Op::Schedule(t) => {
                        let k = q.schedule(t, n);
                        prop_assert_eq!(k.seq(), seq);
                        model.insert((t, k.seq()), n);
                        seq += 1;
                        keys.push((k, t, n));
                        n += 1;
                    }
                    Op::Push(t) => {
                        q.push(t, n);
                        model.insert((t, seq), n);
                        seq += 1;
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
                prop_assert_eq!(q.peek().map(|(t, v)| (t, *v)), model.iter().next().map(|(k, v)| (k.0, *v)));
            }
        }
    }
}
