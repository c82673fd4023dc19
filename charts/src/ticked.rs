//! A linear axis whose ticks sit exactly at given points: one per category of a line chart, one
//! at the middle of each heatmap cell. (plotters' `with_key_points` on an `f64` range has no
//! label formatter, so a mesh cannot be drawn on it.)

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use std::ops::Range;

pub(crate) struct Ticked {
    inner: RangedCoordf64,
    points: Vec<f64>,
}

impl Ticked {
    /// The axis over `range` with ticks at `points` (which should lie in it).
    pub(crate) fn new(range: Range<f64>, points: Vec<f64>) -> Ticked {
        debug_assert!(
            points.iter().all(|p| range.contains(p) || *p == range.end),
            "ticks {points:?} outside {range:?}"
        );
        Ticked {
            inner: range.into(),
            points,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    /// The given points as the bold ticks (where labels go); no light mesh lines.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.points.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(value: &f64) -> String {
        format!("{value}")
    }
}
