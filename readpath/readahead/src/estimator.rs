//! Online estimates of first-byte time and transfer bandwidth per read task (R5), shaped like
//! quinn-proto's `RttEstimator`: plain values, fed one sample per completed read, with the EWMA
//! weight and the priors in one place.

use crate::error::ReadaheadError;

/// Weight of a new sample in every EWMA of this crate (the redesign's alpha).
pub const EWMA_ALPHA: f64 = 0.2;

/// First-byte time assumed before any read completed: 50 ms.
pub const PRIOR_FIRST_BYTE_NS: u64 = 50_000_000;

/// Transfer bandwidth assumed before any read completed: 64 bytes per microsecond (64 MB/s).
pub const PRIOR_BANDWIDTH_BYTES_PER_US: f64 = 64.0;

/// The one smoothing rule: the prior is the starting value, every sample moves it by alpha.
fn ewma(smoothed: f64, sample: f64) -> f64 {
    smoothed + EWMA_ALPHA * (sample - smoothed)
}

/// EWMA of the time from a read's start on an IO thread to its first byte.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstByteEstimator {
    smoothed_ns: f64,
    samples: u64,
}

impl Default for FirstByteEstimator {
    fn default() -> Self {
        FirstByteEstimator::new()
    }
}

impl FirstByteEstimator {
    /// Starts from the prior [`PRIOR_FIRST_BYTE_NS`].
    pub fn new() -> FirstByteEstimator {
        FirstByteEstimator::with_prior_ns(PRIOR_FIRST_BYTE_NS)
    }

    /// Starts from a given prior (e.g. a store preset's median first-byte time).
    pub fn with_prior_ns(prior_first_byte_ns: u64) -> FirstByteEstimator {
        FirstByteEstimator {
            smoothed_ns: prior_first_byte_ns as f64,
            samples: 0,
        }
    }

    /// Feeds one measured first-byte time.
    pub fn update(&mut self, first_byte_ns: u64) {
        self.smoothed_ns = ewma(self.smoothed_ns, first_byte_ns as f64);
        self.samples += 1;
    }

    /// The current estimate in nanoseconds.
    pub fn get_ns(&self) -> f64 {
        self.smoothed_ns
    }

    /// How many samples were fed (0 = still the prior).
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// EWMA of per-read transfer bandwidth: bytes over first-byte-to-last-byte time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthEstimator {
    smoothed_bytes_per_ns: f64,
    samples: u64,
}

impl Default for BandwidthEstimator {
    fn default() -> Self {
        BandwidthEstimator::new()
    }
}

impl BandwidthEstimator {
    /// Starts from the prior [`PRIOR_BANDWIDTH_BYTES_PER_US`].
    pub fn new() -> BandwidthEstimator {
        BandwidthEstimator {
            smoothed_bytes_per_ns: PRIOR_BANDWIDTH_BYTES_PER_US / 1_000.0,
            samples: 0,
        }
    }

    /// Starts from a given prior in bytes per microsecond; it must be finite and positive.
    pub fn with_prior_bytes_per_us(prior: f64) -> Result<BandwidthEstimator, ReadaheadError> {
        if !(prior.is_finite() && prior > 0.0) {
            return Err(ReadaheadError::OutOfRange {
                name: "bandwidth prior (bytes/us)",
                value: prior.to_string(),
                expected: "a finite number above 0",
            });
        }
        Ok(BandwidthEstimator {
            smoothed_bytes_per_ns: prior / 1_000.0,
            samples: 0,
        })
    }

    /// Feeds one read: `bytes` transferred in `transfer_ns` after the first byte. A read with no
    /// measurable transfer time (0 ns) or no bytes says nothing about bandwidth and is skipped;
    /// returns whether the sample was used.
    pub fn update(&mut self, bytes: u64, transfer_ns: u64) -> bool {
        if bytes == 0 || transfer_ns == 0 {
            return false;
        }
        let sample = bytes as f64 / transfer_ns as f64;
        self.smoothed_bytes_per_ns = ewma(self.smoothed_bytes_per_ns, sample);
        self.samples += 1;
        true
    }

    /// The current estimate in bytes per nanosecond.
    pub fn bytes_per_ns(&self) -> f64 {
        self.smoothed_bytes_per_ns
    }

    /// The current estimate in bytes per microsecond.
    pub fn bytes_per_us(&self) -> f64 {
        self.smoothed_bytes_per_ns * 1_000.0
    }

    /// How many samples were fed (0 = still the prior).
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn priors_are_the_documented_ones() {
        assert_eq!(FirstByteEstimator::new().get_ns(), 50_000_000.0);
        assert!((BandwidthEstimator::new().bytes_per_us() - 64.0).abs() < 1e-9);
        assert_eq!(FirstByteEstimator::new().samples(), 0);
    }

    #[test]
    fn one_sample_moves_by_alpha() {
        let mut fb = FirstByteEstimator::new();
        fb.update(30_000_000);
        // 50 ms + 0.2 x (30 ms - 50 ms) = 46 ms
        assert!((fb.get_ns() - 46_000_000.0).abs() < 1e-3);
        let mut bw = BandwidthEstimator::new();
        assert!(bw.update(1_000_000, 1_000_000)); // 1 byte/ns = 1000 bytes/us
        assert!((bw.bytes_per_us() - (64.0 + 0.2 * (1000.0 - 64.0))).abs() < 1e-9);
    }

    #[test]
    fn zero_transfer_time_is_skipped() {
        let mut bw = BandwidthEstimator::new();
        assert!(!bw.update(4096, 0));
        assert!(!bw.update(0, 10));
        assert_eq!(bw.samples(), 0);
        assert_eq!(bw, BandwidthEstimator::new());
    }

    #[test]
    fn bad_prior_is_an_error() {
        assert!(BandwidthEstimator::with_prior_bytes_per_us(0.0).is_err());
        assert!(BandwidthEstimator::with_prior_bytes_per_us(f64::NAN).is_err());
        assert!(BandwidthEstimator::with_prior_bytes_per_us(-1.0).is_err());
        assert!(BandwidthEstimator::with_prior_bytes_per_us(10.0).is_ok());
    }

    proptest! {
        /// A constant sample stream converges to the sample and never overshoots it.
        #[test]
        fn converges_monotonically(sample_ns in 1u64..1_000_000_000, n in 1usize..60) {
            let mut fb = FirstByteEstimator::new();
            let mut previous_gap = (fb.get_ns() - sample_ns as f64).abs();
            for _ in 0..n {
                fb.update(sample_ns);
                let gap = (fb.get_ns() - sample_ns as f64).abs();
                prop_assert!(gap <= previous_gap + 1e-6);
                previous_gap = gap;
            }
            prop_assert!(previous_gap <= (50_000_000f64 - sample_ns as f64).abs() * 0.8f64.powi(n as i32) + 1e-3);
        }
    }
}
