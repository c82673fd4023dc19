//! Pure hashing for pruning decisions, so that a decision depends only on the seed and on what
//! is decided (file, row group, slice), never on event order.

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective, well-mixing `u64 -> u64`.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// What a decision is about; keeps the streams of different decisions independent.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Decision {
    MinMax = 1,
    Bloom = 2,
    PageSlice = 4,
    Prewhere = 5,
}

/// A uniform number in `[0, 1)` for `(seed, decision, file, a, b)`.
pub(crate) fn uniform(seed: u64, decision: Decision, file: u32, a: u64, b: u64) -> f64 {
    let h = splitmix64(
        splitmix64(splitmix64(seed ^ ((decision as u64) << 56) ^ file as u64) ^ a).wrapping_add(b),
    );
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// Whether an event of probability `p` happens for these keys.
pub(crate) fn chance(p: f64, seed: u64, decision: Decision, file: u32, a: u64, b: u64) -> bool {
    p >= 1.0 || (p > 0.0 && uniform(seed, decision, file, a, b) < p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequency_follows_probability() {
        let hits = (0..10_000u64)
            .filter(|i| chance(0.3, 7, Decision::MinMax, 1, *i, 0))
            .count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
        assert!(!(0..1000u64).any(|i| chance(0.0, 7, Decision::MinMax, 1, i, 0)));
        assert!((0..1000u64).all(|i| chance(1.0, 7, Decision::MinMax, 1, i, 0)));
    }

    #[test]
    fn decisions_are_independent_of_each_other() {
        let a: Vec<bool> = (0..64u64)
            .map(|i| chance(0.5, 1, Decision::MinMax, 0, i, 0))
            .collect();
        let b: Vec<bool> = (0..64u64)
            .map(|i| chance(0.5, 1, Decision::Bloom, 0, i, 0))
            .collect();
        assert_ne!(a, b);
    }
}
