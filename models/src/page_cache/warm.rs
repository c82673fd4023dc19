//! The warm state a cache starts a run in: which fraction of each object it already holds, and
//! where. Shared by the page cache (in blocks of `page_cache_block_size`) and the filesystem
//! cache (in units of its `boundary_alignment`).

use rand::RngExt;
use serde::{Deserialize, Serialize};
use units::Bytes;

/// How much of each object a cache holds at the start of a run, and where.
///
/// YAML: `warm: {fraction: 0.5, pattern: random}`, or
/// `warm: {fraction: 0.5, pattern: {stripes: {stripe: 4MiB}}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WarmSpec {
    /// Fraction of each object's units (blocks or segments) held, 0 (cold) to 1 (fully warm).
    #[serde(default)]
    pub fraction: f64,
    /// Where the held units lie.
    #[serde(default)]
    pub pattern: WarmPattern,
}

impl Default for WarmSpec {
    fn default() -> Self {
        Self {
            fraction: 0.0,
            pattern: WarmPattern::Random,
        }
    }
}

/// Where the warm units of an object lie.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum WarmPattern {
    /// Each unit is held independently with probability `fraction` (seeded RNG).
    #[default]
    Random,
    /// The first `fraction` of each object's units (e.g. a query that read the start of files).
    Prefix,
    /// Cached stripes of `stripe` bytes (at least one unit) with holes between them, spaced so
    /// that `fraction` of the object is held (period `stripe / fraction`): regular islands of
    /// cached data, the shape that makes a base page cache split reads into fragments.
    Stripes {
        /// Length of one cached stripe; at least one unit.
        stripe: Bytes,
    },
}

impl WarmSpec {
    /// Checks the fraction and the stripe period; `what` names the section in the message.
    pub(crate) fn validate(&self, what: &str) -> Result<(), String> {
        if !(self.fraction.is_finite() && (0.0..=1.0).contains(&self.fraction)) {
            return Err(format!(
                "{what}.warm.fraction is {}; it must be between 0 (cold) and 1 (fully warm)",
                self.fraction
            ));
        }
        if let WarmPattern::Stripes { stripe } = self.pattern {
            if stripe.get() == 0 {
                return Err(format!(
                    "{what}.warm.pattern.stripes.stripe is 0; give a period such as `4MiB`"
                ));
            }
        }
        Ok(())
    }

    /// Indexes of the units of an object of `object_size` bytes (cut in units of `unit_size`
    /// bytes, the last one possibly short) that start warm, in increasing order.
    pub(crate) fn warm_units(
        &self,
        unit_size: u64,
        object_size: u64,
        rng: &mut impl rand::Rng,
    ) -> Vec<u64> {
        let unit_size = unit_size.max(1);
        let n_units = object_size.div_ceil(unit_size);
        let fraction = self.fraction.clamp(0.0, 1.0);
        match self.pattern {
            WarmPattern::Random => (0..n_units)
                .filter(|_| rng.random::<f64>() < fraction)
                .collect(),
            WarmPattern::Prefix => {
                let n = (fraction * n_units as f64).round() as u64;
                (0..n.min(n_units)).collect()
            }
            WarmPattern::Stripes { stripe } => {
                // Cached stripes of `stripe` bytes, spaced so that `fraction` of the object is
                // held: period = stripe / fraction (a 1 MiB stripe at 0.5 holds every other block).
                if fraction <= 0.0 {
                    return Vec::new();
                }
                let held = (stripe.get() / unit_size).max(1);
                let period = ((held as f64 / fraction).round() as u64).max(held);
                (0..n_units).filter(|u| u % period < held).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> rand_pcg::Pcg64 {
        rand_pcg::Pcg64::seed_from_u64(7)
    }

    #[test]
    fn yaml_forms() {
        let w: WarmSpec = serde_saphyr::from_str("fraction: 0.25\npattern: prefix\n").unwrap();
        assert_eq!(w.pattern, WarmPattern::Prefix);
        let w: WarmSpec =
            serde_saphyr::from_str("fraction: 0.5\npattern: {stripes: {stripe: 4MiB}}\n").unwrap();
        assert_eq!(
            w.pattern,
            WarmPattern::Stripes {
                stripe: Bytes(4 << 20)
            }
        );
        assert!(serde_saphyr::from_str::<WarmSpec>("fraction: 0.5\npatern: prefix\n").is_err());
    }

    #[test]
    fn validation_names_the_key() {
        let w = WarmSpec {
            fraction: 1.5,
            pattern: WarmPattern::Random,
        };
        let e = w.validate("page_cache").unwrap_err();
        assert!(e.contains("page_cache.warm.fraction"), "{e}");
    }

    #[test]
    fn prefix_and_stripes_are_exact() {
        let prefix = WarmSpec {
            fraction: 0.3,
            pattern: WarmPattern::Prefix,
        };
        assert_eq!(prefix.warm_units(10, 100, &mut rng()), vec![0, 1, 2]);
        let stripes = WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Stripes { stripe: Bytes(40) },
        };
        assert_eq!(
            stripes.warm_units(10, 100, &mut rng()),
            vec![0, 1, 2, 3, 8, 9]
        );
        // A stripe of one unit at one half holds every other unit, not all of them.
        let alternate = WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Stripes { stripe: Bytes(10) },
        };
        assert_eq!(alternate.warm_units(10, 60, &mut rng()), vec![0, 2, 4]);
    }

    #[test]
    fn random_is_seeded() {
        let w = WarmSpec {
            fraction: 0.5,
            pattern: WarmPattern::Random,
        };
        assert_eq!(
            w.warm_units(1, 1000, &mut rng()),
            w.warm_units(1, 1000, &mut rng())
        );
    }
}
