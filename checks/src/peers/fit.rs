//! The check's calibration: one parameter of the simulation found by bisection so that a
//! simulated run takes a measured time. Each parameter is fitted on a run that is not checked
//! (the decode rate on the local read, the client's CPU per request on the direct run).

/// A parameter's search range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub lo: f64,
    pub hi: f64,
    /// Bisect the logarithm (a rate over orders of magnitude) or the value (a time from 0).
    pub log: bool,
}

/// A fitted value, and whether it stopped at an end of its range (the simulated run cannot
/// take the measured time: the figure the parameter stands for is not what limits the run).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fitted {
    pub value: f64,
    pub at_bound: bool,
}

/// Bisection steps: 2^-40 of the range.
const STEPS: u32 = 40;

/// The value in `range` at which `wall(value)` (decreasing in it) is `target`.
pub fn decreasing<E>(
    range: Range,
    target: f64,
    mut wall: impl FnMut(f64) -> Result<f64, E>,
) -> Result<Fitted, E> {
    increasing(range, -target, |x| wall(x).map(|w| -w))
}

/// The value in `range` at which `wall(value)` (increasing in it) is `target`.
pub fn increasing<E>(
    range: Range,
    target: f64,
    mut wall: impl FnMut(f64) -> Result<f64, E>,
) -> Result<Fitted, E> {
    debug_assert!(range.lo < range.hi, "an empty fit range");
    debug_assert!(!range.log || range.lo > 0.0, "a log range from 0");
    if wall(range.lo)? >= target {
        return Ok(Fitted {
            value: range.lo,
            at_bound: true,
        });
    }
    if wall(range.hi)? < target {
        return Ok(Fitted {
            value: range.hi,
            at_bound: true,
        });
    }
    let mid = |lo: f64, hi: f64| {
        if range.log {
            (lo * hi).sqrt()
        } else {
            lo + (hi - lo) / 2.0
        }
    };
    let (mut lo, mut hi) = (range.lo, range.hi);
    for _ in 0..STEPS {
        let m = mid(lo, hi);
        if wall(m)? < target {
            lo = m;
        } else {
            hi = m;
        }
    }
    Ok(Fitted {
        value: mid(lo, hi),
        at_bound: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINEAR: Range = Range {
        lo: 0.0,
        hi: 100.0,
        log: false,
    };
    const LOG: Range = Range {
        lo: 1e3,
        hi: 1e12,
        log: true,
    };

    #[test]
    fn an_increasing_wall_is_matched_inside_the_range() {
        let f = increasing(LINEAR, 7.5, |x| Ok::<_, ()>(2.0 + x)).unwrap_or(Fitted {
            value: f64::NAN,
            at_bound: true,
        });
        assert!((f.value - 5.5).abs() < 1e-6, "{f:?}");
        assert!(!f.at_bound);
    }

    #[test]
    fn a_decreasing_wall_is_matched_on_a_log_scale() {
        // A decode of 1e9 bytes at the rate: 2 s at 5e8 B/s.
        let f = decreasing(LOG, 2.0, |r| Ok::<_, ()>(1e9 / r)).unwrap_or(Fitted {
            value: f64::NAN,
            at_bound: true,
        });
        assert!((f.value / 5e8 - 1.0).abs() < 1e-6, "{f:?}");
        assert!(!f.at_bound);
    }

    #[test]
    fn a_target_out_of_reach_stops_at_the_bound_and_says_so() {
        let slow = increasing(LINEAR, 1.0, |x| Ok::<_, ()>(2.0 + x)).ok();
        assert_eq!(
            slow,
            Some(Fitted {
                value: 0.0,
                at_bound: true
            })
        );
        let fast = increasing(LINEAR, 1e6, |x| Ok::<_, ()>(2.0 + x)).ok();
        assert_eq!(
            fast,
            Some(Fitted {
                value: 100.0,
                at_bound: true
            })
        );
    }

    #[test]
    fn an_error_of_the_simulation_is_returned() {
        assert_eq!(increasing(LINEAR, 1.0, |_| Err::<f64, _>("no")), Err("no"));
    }
}
