//! A least-recently-used index, shared by the page cache (blocks) and the filesystem cache
//! (segments): a hash map from each key to its node in a doubly linked list kept in a vector,
//! oldest first. Every operation is O(1) (the two B-trees this replaced cost about 1,000
//! instructions a touch; the page cache was then 13% of a run on `partially-warm-page-cache`,
//! most of it in them), and the eviction order is
//! a pure function of the access sequence: the map is only looked up, never walked, so a run is
//! deterministic.

use rustc_hash::FxHashMap;
use std::hash::Hash;

/// No node: the end of the list, or an empty list.
const NIL: usize = usize::MAX;

#[derive(Debug, Clone)]
struct Node<K> {
    key: K,
    /// The node used just before this one (older), or [`NIL`].
    older: usize,
    /// The node used just after this one (newer), or [`NIL`].
    newer: usize,
}

/// Keys ordered by last use; the oldest is evicted first.
#[derive(Debug, Clone)]
pub(crate) struct Lru<K: Hash + Eq + Copy> {
    node_of: FxHashMap<K, usize>,
    /// Every node ever made; those not in the list are in `free`.
    nodes: Vec<Node<K>>,
    free: Vec<usize>,
    oldest: usize,
    newest: usize,
}

impl<K: Hash + Eq + Copy> Default for Lru<K> {
    fn default() -> Self {
        Self {
            node_of: FxHashMap::default(),
            nodes: Vec::new(),
            free: Vec::new(),
            oldest: NIL,
            newest: NIL,
        }
    }
}

impl<K: Hash + Eq + Copy> Lru<K> {
    pub(crate) fn len(&self) -> usize {
        self.node_of.len()
    }

    pub(crate) fn contains(&self, key: &K) -> bool {
        self.node_of.contains_key(key)
    }

    /// Marks `key` as the most recently used, adding it if absent. Returns true if it was added.
    pub(crate) fn touch(&mut self, key: K) -> bool {
        if let Some(&n) = self.node_of.get(&key) {
            if n != self.newest {
                self.unlink(n);
                self.link_newest(n);
            }
            return false;
        }
        let node = Node {
            key,
            older: NIL,
            newer: NIL,
        };
        let n = match self.free.pop() {
            Some(n) => {
                if let Some(slot) = self.nodes.get_mut(n) {
                    *slot = node;
                }
                n
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        self.node_of.insert(key, n);
        self.link_newest(n);
        self.debug_check_ends();
        true
    }

    /// Removes and returns the least recently used key.
    pub(crate) fn pop_oldest(&mut self) -> Option<K> {
        let n = self.oldest;
        let key = self.nodes.get(n)?.key;
        self.unlink(n);
        self.node_of.remove(&key);
        self.free.push(n);
        self.debug_check_ends();
        Some(key)
    }

    /// Takes node `n` out of the list (it stays allocated).
    fn unlink(&mut self, n: usize) {
        let Some(&Node { older, newer, .. }) = self.nodes.get(n) else {
            return;
        };
        match self.nodes.get_mut(older) {
            Some(o) => o.newer = newer,
            None => self.oldest = newer,
        }
        match self.nodes.get_mut(newer) {
            Some(w) => w.older = older,
            None => self.newest = older,
        }
    }

    /// Puts node `n`, out of the list, at its newest end.
    fn link_newest(&mut self, n: usize) {
        let older = self.newest;
        if let Some(node) = self.nodes.get_mut(n) {
            node.older = older;
            node.newer = NIL;
        }
        match self.nodes.get_mut(older) {
            Some(o) => o.newer = n,
            None => self.oldest = n,
        }
        self.newest = n;
    }

    /// Invariant: the list is empty exactly when the map is, and its ends have no outer link.
    fn debug_check_ends(&self) {
        if cfg!(debug_assertions) {
            assert_eq!(self.oldest == NIL, self.node_of.is_empty());
            assert_eq!(self.newest == NIL, self.node_of.is_empty());
            assert!(self.nodes.get(self.oldest).is_none_or(|n| n.older == NIL));
            assert!(self.nodes.get(self.newest).is_none_or(|n| n.newer == NIL));
            assert_eq!(self.node_of.len() + self.free.len(), self.nodes.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

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
        // Freed nodes are reused, and the order still holds.
        assert!(lru.touch(4));
        assert!(lru.touch(5));
        assert!(!lru.touch(4));
        assert_eq!(lru.pop_oldest(), Some(5));
        assert_eq!(lru.pop_oldest(), Some(4));
    }

    /// The index this one replaced, two B-trees (key -> tick, tick -> key): the reference.
    #[derive(Default)]
    struct Reference {
        tick_of: BTreeMap<u8, u64>,
        by_tick: BTreeMap<u64, u8>,
        next_tick: u64,
    }

    impl Reference {
        fn touch(&mut self, key: u8) -> bool {
            let tick = self.next_tick;
            self.next_tick += 1;
            let old = self.tick_of.insert(key, tick);
            if let Some(old) = old {
                self.by_tick.remove(&old);
            }
            self.by_tick.insert(tick, key);
            old.is_none()
        }

        fn pop_oldest(&mut self) -> Option<u8> {
            let (_, key) = self.by_tick.pop_first()?;
            self.tick_of.remove(&key);
            Some(key)
        }
    }

    proptest! {
        /// Any sequence of touches (Some) and evictions (None) gives the reference's answers.
        #[test]
        fn same_answers_as_two_btrees(ops in prop::collection::vec(prop::option::weighted(0.8, 0u8..24), 0..400)) {
            let (mut lru, mut reference) = (Lru::default(), Reference::default());
            for op in ops {
                match op {
                    Some(k) => prop_assert_eq!(lru.touch(k), reference.touch(k)),
                    None => prop_assert_eq!(lru.pop_oldest(), reference.pop_oldest()),
                }
                prop_assert_eq!(lru.len(), reference.tick_of.len());
                for k in 0u8..24 {
                    prop_assert_eq!(lru.contains(&k), reference.tick_of.contains_key(&k));
                }
            }
        }
    }
}
