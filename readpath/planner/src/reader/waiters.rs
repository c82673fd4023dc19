//! The started steps waiting for each entry of a unit's plan, in one allocation.
//!
//! A step names each of its entries once (the plan dedups them) and starts once, so at most
//! `FilePlan::entry_consumers[e]` steps ever wait for entry `e`. Each entry gets that many slots
//! in one shared array, laid out by prefix sums when the unit opens. A `Vec` per entry cost an
//! allocation for every entry a started step waited on (45 k of the 533 k allocations of
//! `single-large-file`).

use limits::u32_of;

/// See the module comment.
#[derive(Debug, Clone, Default)]
pub(super) struct Waiters {
    /// Per entry, its first slot in `slots`; one more at the end (the total).
    start: Vec<u32>,
    /// Per entry, how many of its slots hold a waiting step.
    len: Vec<u32>,
    slots: Vec<u32>,
}

impl Waiters {
    /// Room for `consumers[e]` waiting steps for each entry `e`.
    #[cfg(test)]
    pub(super) fn new(consumers: &[u32]) -> Waiters {
        let mut w = Waiters::default();
        w.reset(consumers);
        w
    }

    /// Empty, with room for `consumers[e]` waiting steps for each entry `e`, in the vectors
    /// already held (a closed unit's, [`super::UnitBuffers`]).
    pub(super) fn reset(&mut self, consumers: &[u32]) {
        let total: usize = consumers.iter().map(|&n| n as usize).sum();
        super::clear_for(&mut self.start, consumers.len() + 1);
        let mut at = 0usize;
        for &n in consumers {
            self.start.push(u32_of(at));
            at += n as usize;
        }
        self.start.push(u32_of(at));
        super::refill(&mut self.len, consumers.len(), 0);
        super::refill(&mut self.slots, total, 0);
    }

    /// Step `step` waits for entry `e` (an entry out of range is ignored, as a missing `Vec`
    /// was). Never more waiters than the entry has consumers.
    pub(super) fn push(&mut self, e: usize, step: u32) {
        let (Some(&lo), Some(&hi), Some(len)) = (
            self.start.get(e),
            self.start.get(e + 1),
            self.len.get_mut(e),
        ) else {
            return;
        };
        let at = lo + *len;
        assert!(at < hi, "entry {e} has more waiting steps than consumers");
        if let Some(slot) = self.slots.get_mut(at as usize) {
            *slot = step;
            *len += 1;
        }
    }

    /// Empties entry `e`'s list and returns where its steps are: read them with
    /// [`Self::get`] at `first..first + count`. Nothing may wait for `e` again before they are
    /// read (an entry waited for is ready once, and a ready entry takes no waiters).
    pub(super) fn take(&mut self, e: usize) -> (u32, u32) {
        let (Some(&first), Some(len)) = (self.start.get(e), self.len.get_mut(e)) else {
            return (0, 0);
        };
        (first, std::mem::take(len))
    }

    /// The step in slot `i`.
    pub(super) fn get(&self, i: u32) -> Option<u32> {
        self.slots.get(i as usize).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_entry_keeps_its_own_steps_in_order() {
        let mut w = Waiters::new(&[2, 0, 3]);
        w.push(2, 7);
        w.push(0, 1);
        w.push(2, 8);
        w.push(0, 4);
        w.push(9, 5); // out of range: ignored
        let (first, n) = w.take(2);
        let got: Vec<u32> = (first..first + n).filter_map(|i| w.get(i)).collect();
        assert_eq!(got, [7, 8]);
        assert_eq!(w.take(2).1, 0, "taken once");
        let (first, n) = w.take(0);
        let got: Vec<u32> = (first..first + n).filter_map(|i| w.get(i)).collect();
        assert_eq!(got, [1, 4]);
        assert_eq!(w.take(1), (2, 0));
    }

    #[test]
    fn a_reset_list_is_the_new_plans_and_holds_no_old_step() {
        let mut w = Waiters::new(&[3, 1]);
        w.push(0, 7);
        w.push(1, 8);
        // A later unit's plan, smaller and then larger than the first's.
        for (consumers, start) in [
            (&[1u32][..], &[0u32, 1][..]),
            (&[0, 2, 2, 1], &[0, 0, 2, 4, 5]),
        ] {
            w.reset(consumers);
            assert_eq!(w.start, start, "slots laid out by prefix sums");
            assert_eq!(w.slots.len(), *start.last().unwrap() as usize);
            assert!(
                (0..consumers.len()).all(|e| w.take(e).1 == 0),
                "nothing waits yet"
            );
        }
        w.push(1, 5);
        w.push(1, 6);
        let (first, n) = w.take(1);
        let got: Vec<u32> = (first..first + n).filter_map(|i| w.get(i)).collect();
        assert_eq!(got, [5, 6]);
    }

    #[test]
    #[should_panic(expected = "more waiting steps than consumers")]
    fn more_waiters_than_consumers_is_a_bug() {
        let mut w = Waiters::new(&[1, 1]);
        w.push(0, 1);
        w.push(0, 2);
    }
}
