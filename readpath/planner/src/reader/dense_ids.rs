//! Sorting a batch of entry ids and dropping repeats, through a bitmap when the batch is dense.
//!
//! A planned start asks for every row group's entries at once: 21,114 entries of a 26,622-entry
//! plan on `single-large-file`, where sorting them (and the whole chunks they lie in) was 4% of
//! the run. Ids of one plan are small and many, so marking them in a bitmap and reading the
//! bitmap back in order is linear; a short batch is still sorted, which is cheaper than walking
//! the bitmap's words. Both give the same vector.

/// A bitmap kept between calls (all zero outside [`DenseIds::sort_dedup`]) so that it
/// allocates only when a plan larger than any before comes.
#[derive(Debug, Default)]
pub(super) struct DenseIds {
    words: Vec<u64>,
}

/// Below this many ids a batch is sorted: a sort of a few dozen ids costs less than reading
/// one 26,622-bit bitmap back.
const SORT_BELOW_IDS: usize = 64;

impl DenseIds {
    /// Sorts `ids` ascending and removes repeats (as `sort_unstable` then `dedup`).
    pub(super) fn sort_dedup(&mut self, ids: &mut Vec<u32>) {
        let Some(&max) = ids.iter().max() else {
            return;
        };
        let words = max as usize / 64 + 1;
        // Reading the bitmap back walks `words` words: worth it only when they are not many
        // more than the ids.
        if ids.len() < SORT_BELOW_IDS || words > ids.len() * 4 {
            ids.sort_unstable();
            ids.dedup();
            return;
        }
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        for &id in ids.iter() {
            if let Some(w) = self.words.get_mut(id as usize / 64) {
                *w |= 1 << (id % 64);
            }
        }
        ids.clear();
        // The first id of each word: at most `max`, so a `u32` (wrapping only past the last).
        let mut first = 0u32;
        for word in self.words.iter_mut().take(words) {
            let mut bits = std::mem::take(word);
            while bits != 0 {
                ids.push(first + bits.trailing_zeros());
                bits &= bits - 1;
            }
            first = first.wrapping_add(64);
        }
        debug_assert!(self.words.iter().all(|&w| w == 0));
        debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<u32>) -> Vec<u32> {
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn a_dense_batch_goes_through_the_bitmap_and_comes_out_sorted_once() {
        let mut ids: Vec<u32> = (0..200).rev().chain(0..100).collect();
        let mut d = DenseIds::default();
        d.sort_dedup(&mut ids);
        assert_eq!(ids, (0..200).collect::<Vec<u32>>());
        // The bitmap is clean for the next batch, which has ids of its own.
        let mut next = vec![7, 3, 3];
        d.sort_dedup(&mut next);
        assert_eq!(next, [3, 7]);
    }

    proptest! {
        #[test]
        fn the_same_as_sort_then_dedup(
            batches in prop::collection::vec(
                prop::collection::vec(0u32..5_000, 0..400), 1..4),
            wide in any::<bool>(),
        ) {
            let mut d = DenseIds::default();
            for mut ids in batches {
                if wide {
                    ids.push(u32::MAX - 1); // too sparse for the bitmap
                }
                let want = sorted(ids.clone());
                d.sort_dedup(&mut ids);
                prop_assert_eq!(ids, want);
            }
        }
    }
}
