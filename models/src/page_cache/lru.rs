//! A least-recently-used index over ordered keys, shared by the page cache (blocks) and the
//! filesystem cache (segments). Two B-trees instead of a hash map and a linked list: every
//! operation is O(log n) and the eviction order is a pure function of the access sequence, so a
//! run is deterministic.

use std::collections::BTreeMap;

/// Keys ordered by last use; the oldest is evicted first.
#[derive(Debug, Clone)]
pub(crate) struct Lru<K: Ord + Copy> {
    tick_of: BTreeMap<K, u64>,
    by_tick: BTreeMap<u64, K>,
    next_tick: u64,
}

impl<K: Ord + Copy> Default for Lru<K> {
    fn default() -> Self {
        Self {
            tick_of: BTreeMap::new(),
            by_tick: BTreeMap::new(),
            next_tick: 0,
        }
    }
}

impl<K: Ord + Copy> Lru<K> {
    pub(crate) fn len(&self) -> usize {
        self.tick_of.len()
    }

    pub(crate) fn contains(&self, key: &K) -> bool {
        self.tick_of.contains_key(key)
    }

    /// Marks `key` as the most recently used, adding it if absent. Returns true if it was added.
    pub(crate) fn touch(&mut self, key: K) -> bool {
        let tick = self.next_tick;
        self.next_tick += 1;
        let old = self.tick_of.insert(key, tick);
        if let Some(old) = old {
            self.by_tick.remove(&old);
        }
        self.by_tick.insert(tick, key);
        old.is_none()
    }

    /// Removes and returns the least recently used key.
    pub(crate) fn pop_oldest(&mut self) -> Option<K> {
        let (_, key) = self.by_tick.pop_first()?;
        self.tick_of.remove(&key);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_in_order_of_last_use() {
        let mut lru = Lru::default();
        assert!(lru.touch(1u32));
        assert!(lru.touch(2));
        assert!(lru.touch(3));
        assert!(!lru.touch(1)); // 1 becomes the newest
        assert_eq!(lru.pop_oldest(), Some(2));
        assert_eq!(lru.pop_oldest(), Some(3));
        assert!(lru.contains(&1));
        assert_eq!(lru.pop_oldest(), Some(1));
        assert_eq!(lru.pop_oldest(), None);
        assert_eq!(lru.len(), 0);
    }
}
