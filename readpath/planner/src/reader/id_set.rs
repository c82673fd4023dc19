//! A small set of unit ids, taken smallest first.
//!
//! The sets it serves (units whose cursor may advance, units memory refused) hold a few open
//! units at a time and go from empty to one member and back on nearly every event: a
//! `BTreeSet` allocated a node each time (23 k allocations on `single-large-file`, by dhat). A vector
//! sorted largest first keeps its capacity, takes the smallest id from its end and finds an id
//! by binary search.

/// See the module comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct IdSet {
    /// Distinct, largest first.
    desc: Vec<u32>,
}

impl IdSet {
    /// Adds `id` (nothing if it is in already).
    pub(super) fn insert(&mut self, id: u32) {
        if let Err(at) = self.desc.binary_search_by(|x| id.cmp(x)) {
            self.desc.insert(at, id);
        }
        debug_assert!(self.desc.windows(2).all(|w| w[0] > w[1]));
    }

    pub(super) fn is_empty(&self) -> bool {
        self.desc.is_empty()
    }

    /// Removes and returns the smallest id.
    pub(super) fn pop_first(&mut self) -> Option<u32> {
        self.desc.pop()
    }

    /// Moves every id of `other` into this set, leaving `other` empty (its capacity kept).
    pub(super) fn append(&mut self, other: &mut IdSet) {
        for id in other.desc.drain(..) {
            self.insert(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_out_smallest_first_and_once() {
        let mut s = IdSet::default();
        for id in [5, 1, 9, 5, 3, 1] {
            s.insert(id);
        }
        let mut other = IdSet::default();
        for id in [4, 9, 0] {
            other.insert(id);
        }
        s.append(&mut other);
        assert_eq!(other.pop_first(), None);
        let out: Vec<u32> = std::iter::from_fn(|| s.pop_first()).collect();
        assert_eq!(out, [0, 1, 3, 4, 5, 9]);
    }
}
