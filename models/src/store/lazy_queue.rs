//! A min-queue of `(key, id)` pairs with lazy removal: the NIC link's two schedules
//! ([`super::link`]), where a transfer's entry changes on every chunk boundary.
//!
//! Taking the front is a heap pop; removing any other entry only leaves it behind, and
//! [`LazyMinQueue::settle`] drops such stale entries when they reach the front, asking the
//! owner whether each is still current. A `BTreeSet` did the same in order, allocating and
//! freeing nodes as the sets grew and shrank; the heaps took 2.5% off the instructions of
//! `clickbench-single-file`, where the NIC binds. The order is the set's: smallest key first,
//! ties by smallest id.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// See the module comment.
#[derive(Clone, Debug, Default)]
pub(super) struct LazyMinQueue {
    heap: BinaryHeap<Reverse<(u64, u64)>>,
}

impl LazyMinQueue {
    pub(super) fn push(&mut self, key: u64, id: u64) {
        self.heap.push(Reverse((key, id)));
    }

    /// The smallest entry: current if [`Self::settle`] ran since the last change.
    pub(super) fn first(&self) -> Option<(u64, u64)> {
        self.heap.peek().map(|r| r.0)
    }

    /// Removes the smallest entry.
    pub(super) fn pop_first(&mut self) -> Option<(u64, u64)> {
        self.heap.pop().map(|r| r.0)
    }

    /// Drops entries from the front while `current(key, id)` says they are stale.
    pub(super) fn settle(&mut self, current: impl Fn(u64, u64) -> bool) {
        while let Some(&Reverse((key, id))) = self.heap.peek() {
            if current(key, id) {
                break;
            }
            self.heap.pop();
        }
    }

    /// Forgets every entry.
    pub(super) fn clear(&mut self) {
        self.heap.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_entries_are_skipped_and_the_order_is_key_then_id() {
        let mut q = LazyMinQueue::default();
        for (key, id) in [(5, 2), (3, 9), (5, 1), (7, 4)] {
            q.push(key, id);
        }
        // Entry (3, 9) was removed lazily: its owner no longer has it.
        let stale = |key: u64, id: u64| (key, id) == (3, 9);
        q.settle(|k, i| !stale(k, i));
        assert_eq!(q.pop_first(), Some((5, 1)));
        q.settle(|k, i| !stale(k, i));
        assert_eq!(q.first(), Some((5, 2)));
        q.clear();
        assert_eq!(q.first(), None);
    }
}
