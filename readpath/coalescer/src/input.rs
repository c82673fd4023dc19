//! Checks on the needed ranges every entry point shares: non-empty, each range non-empty,
//! sorted by start, no overlaps, and few enough to index with a `u32`.

use crate::error::CoalesceError;
use crate::types::NeededRange;

/// Accepts `needed` if it is a non-empty list of non-empty, sorted, non-overlapping ranges.
pub(crate) fn check_needed(needed: &[NeededRange]) -> Result<(), CoalesceError> {
    if needed.is_empty() {
        return Err(CoalesceError::EmptyInput);
    }
    let max = u32::MAX as usize;
    if needed.len() > max {
        return Err(CoalesceError::TooManyRanges {
            count: needed.len(),
            max,
        });
    }
    let mut previous: Option<&NeededRange> = None;
    for (index, n) in needed.iter().enumerate() {
        if n.range.is_empty() {
            return Err(CoalesceError::EmptyRange {
                index,
                range: n.range,
            });
        }
        if let Some(p) = previous {
            if n.range.start < p.range.start {
                return Err(CoalesceError::Unsorted {
                    index,
                    previous: p.range,
                    range: n.range,
                });
            }
            if n.range.start < p.range.end {
                return Err(CoalesceError::Overlapping {
                    index,
                    previous: p.range,
                    range: n.range,
                });
            }
        }
        previous = Some(n);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use layout::ByteRange;

    fn r(start: u64, end: u64) -> NeededRange {
        NeededRange::new(ByteRange::new(start, end))
    }

    #[test]
    fn accepts_sorted_touching_ranges() {
        assert_eq!(check_needed(&[r(0, 10), r(10, 20), r(30, 31)]), Ok(()));
    }

    #[test]
    fn names_each_kind_of_bad_input() {
        assert_eq!(check_needed(&[]), Err(CoalesceError::EmptyInput));
        assert!(matches!(
            check_needed(&[r(0, 10), r(20, 20)]),
            Err(CoalesceError::EmptyRange { index: 1, .. })
        ));
        assert!(matches!(
            check_needed(&[r(0, 10), r(30, 20)]),
            Err(CoalesceError::EmptyRange { index: 1, .. })
        ));
        assert!(matches!(
            check_needed(&[r(50, 60), r(0, 10)]),
            Err(CoalesceError::Unsorted { index: 1, .. })
        ));
        assert!(matches!(
            check_needed(&[r(0, 10), r(5, 15)]),
            Err(CoalesceError::Overlapping { index: 1, .. })
        ));
    }

    #[test]
    fn error_messages_say_what_would_be_right() {
        let e = check_needed(&[r(0, 10), r(5, 15)]).unwrap_err().to_string();
        assert!(e.contains("overlaps range 0"), "{e}");
        assert!(e.contains("must not overlap"), "{e}");
        let e = check_needed(&[r(50, 60), r(0, 10)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sort ranges by start"), "{e}");
    }
}
