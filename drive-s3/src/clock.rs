//! The run's real clock: nanoseconds since the run started, monotonic, shared by the driver and
//! every request task so their stamps are on one time line.

use std::time::Instant;

/// Nanoseconds since `origin` (std's `Instant` is monotonic across threads).
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    origin: Instant,
}

impl Clock {
    /// A clock whose zero is now.
    pub fn start() -> Self {
        Clock {
            origin: Instant::now(),
        }
    }

    /// Nanoseconds since the start (saturates after 584 years).
    pub fn now_ns(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_goes_backwards() {
        let c = Clock::start();
        let mut last = 0;
        for _ in 0..1000 {
            let t = c.now_ns();
            assert!(t >= last);
            last = t;
        }
    }
}
