//! Line charts: a line per series with confidence bands, log axes where every value is positive,
//! categorical x ticks, and the legend in a pane of its own right of the plot, where it covers
//! no point.

use crate::ticked::Ticked;
use crate::{bounds, color, save_both, text, ChartError, FAMILY};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::element::DynElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SeriesKind {
    /// Points joined by a line, each marked where they are few enough to tell apart.
    #[default]
    Line,
    /// A value that x does not change (an arm the varied setting does not reach): a thin
    /// dashed line without markers, so that it does not read as measured at each x.
    Reference,
    /// Markers only, not joined (e.g. evaluations in search order).
    Points,
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Optional confidence band: (x, low, high).
    pub band: Vec<(f64, f64, f64)>,
    pub kind: SeriesKind,
}

impl Series {
    /// A plain line without a band.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            points,
            band: Vec::new(),
            kind: SeriesKind::Line,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct LineChart {
    pub title: String,
    /// A smaller line under the title (e.g. where the other axes of a sweep sit).
    pub subtitle: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    /// A log x axis, taken only when every x is positive (a 0 has no place on it); the axis
    /// label then says "log scale".
    pub log_x: bool,
    pub log_y: bool,
    /// Tick label formats (with units); plain numbers when None.
    pub x_format: Option<fn(f64) -> String>,
    pub y_format: Option<fn(f64) -> String>,
    /// Categorical x ticks: point `i` of every series sits at x = `i` and is labelled
    /// `x_ticks[i]` (a sweep's values exactly as swept, e.g. `64KiB`, `1MiB`), evenly spaced;
    /// overrides `x_format` and `log_x`.
    pub x_ticks: Option<Vec<String>>,
}

/// Rows of the legend pane, in pixels.
const LEGEND_ROW: i32 = 22;
/// The legend's sample line, then the gap before its text, in pixels.
const LEGEND_SAMPLE: i32 = 34;
const LEGEND_GAP: i32 = 8;

fn plain(v: f64) -> String {
    format!("{}", (v * 1000.0).round() / 1000.0)
}

/// A series' marker: a filled circle, a hollow ring, a triangle, a cross, in turn.
fn marker<DB: DrawingBackend, C: Clone + 'static>(
    i: usize,
    size: i32,
    at: C,
    c: RGBColor,
) -> DynElement<'static, DB, C> {
    let stroke = c.stroke_width(2);
    match i % 4 {
        0 => Circle::new(at, size, c.filled()).into_dyn(),
        1 => Circle::new(at, size, stroke).into_dyn(),
        2 => TriangleMarker::new(at, size, stroke).into_dyn(),
        _ => Cross::new(at, size, stroke).into_dyn(),
    }
}

fn with_log_note(label: &str, log: bool) -> String {
    if log {
        format!("{label}, log scale")
    } else {
        label.to_string()
    }
}

impl LineChart {
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(ChartError::Empty(self.title.clone()));
        }
        save_both(stem, (1000, 640), |a| self.draw(&a), |a| self.draw(&a))
    }

    fn xs(&self) -> impl Iterator<Item = f64> + '_ {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0))
    }

    fn ys(&self) -> impl Iterator<Item = f64> + '_ {
        self.series.iter().flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.band.iter().flat_map(|b| [b.1, b.2]))
        })
    }

    /// Whether the x axis is drawn on a log scale: asked for, not categorical, and every x
    /// positive.
    pub fn log_x_applies(&self) -> bool {
        self.log_x && self.x_ticks.is_none() && self.xs().all(|x| x > 0.0)
    }

    /// Whether the y axis is drawn on a log scale: asked for and every y positive.
    pub fn log_y_applies(&self) -> bool {
        self.log_y && self.ys().all(|y| y > 0.0)
    }

    pub(crate) fn shows_legend(&self) -> bool {
        self.series.len() > 1 || self.series.first().is_some_and(|s| !s.name.is_empty())
    }

    /// Stroke width and marker size of series `i`: earlier series wider, later narrower, so
    /// that series with identical values stay visible. Markers alone are at least 5 px, so that they are seen without a line.
    fn weight(&self, i: usize) -> (u32, i32) {
        let rank = (self.series.len() - 1 - i).min(3);
        let size = 3 + 2 * rank as i32;
        let size = if self.series[i].kind == SeriesKind::Points {
            size.max(5)
        } else {
            size
        };
        (2 + 2 * rank as u32, size)
    }

    /// Draws into any area (used for panels too): the title, the plot, and the legend right of
    /// the plot.
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let width = self.shows_legend().then(|| self.legend_width(area));
        self.draw_beside(area, width)
    }

    /// Draws with a legend pane `legend_px` wide (empty when the chart has no legend), so that
    /// stacked charts given the same width share their x axis's pixels; none when `None`.
    pub(crate) fn draw_beside<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        legend_px: Option<u32>,
    ) -> Result<(), String> {
        let area = text::draw_title(area, &self.title, self.subtitle.as_deref(), 22)?;
        let Some(px) = legend_px else {
            return self.draw_plot(&area);
        };
        let (w, _) = area.dim_in_pixel();
        let (plot, pane) = area.split_horizontally(w.saturating_sub(px));
        self.draw_plot(&plot)?;
        if self.shows_legend() {
            self.draw_legend(&pane)?;
        }
        Ok(())
    }

    fn draw_plot<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (log_x, log_y) = (self.log_x_applies(), self.log_y_applies());
        let (y0, y1) = bounds(self.ys(), log_y);
        let x_range = match &self.x_ticks {
            Some(t) => -0.3..t.len().saturating_sub(1) as f64 + 0.3,
            None => {
                let (x0, x1) = bounds(self.xs(), log_x);
                x0..x1
            }
        };
        let mut builder = ChartBuilder::on(area);
        builder
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(90);
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        match (&self.x_ticks, log_x, log_y) {
            (Some(t), _, false) => self.draw_in(
                builder
                    .build_cartesian_2d(Ticked::new(x_range, ticks_at(t.len())), y0..y1)
                    .map_err(err)?,
            ),
            (Some(t), _, true) => self.draw_in(
                builder
                    .build_cartesian_2d(
                        Ticked::new(x_range, ticks_at(t.len())),
                        (y0..y1).log_scale(),
                    )
                    .map_err(err)?,
            ),
            (None, false, false) => {
                self.draw_in(builder.build_cartesian_2d(x_range, y0..y1).map_err(err)?)
            }
            (None, true, false) => self.draw_in(
                builder
                    .build_cartesian_2d(x_range.log_scale(), y0..y1)
                    .map_err(err)?,
            ),
            (None, false, true) => self.draw_in(
                builder
                    .build_cartesian_2d(x_range, (y0..y1).log_scale())
                    .map_err(err)?,
            ),
            (None, true, true) => self.draw_in(
                builder
                    .build_cartesian_2d(x_range.log_scale(), (y0..y1).log_scale())
                    .map_err(err)?,
            ),
        }
    }

    fn x_tick_label(&self, v: f64) -> String {
        match &self.x_ticks {
            Some(t) if (v - v.round()).abs() < 1e-6 && v >= 0.0 => {
                t.get(v.round() as usize).cloned().unwrap_or_default()
            }
            Some(_) => String::new(),
            None => self.x_format.map_or_else(|| plain(v), |f| f(v)),
        }
    }

    fn draw_in<DB, X, Y>(
        &self,
        mut chart: ChartContext<'_, DB, Cartesian2d<X, Y>>,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let xf = |v: &f64| self.x_tick_label(*v);
        let yf = |v: &f64| self.y_format.map_or_else(|| plain(*v), |f| f(*v));
        let x_desc = with_log_note(&self.x_label, self.log_x_applies());
        let y_desc = with_log_note(&self.y_label, self.log_y_applies());
        chart
            .configure_mesh()
            .x_labels(10)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&xf)
            .y_label_formatter(&yf)
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(|e| e.to_string())?;
        for i in 0..self.series.len() {
            self.draw_series(&mut chart, i)?;
        }
        Ok(())
    }

    fn draw_series<DB, X, Y>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
        i: usize,
    ) -> Result<(), String>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let s = &self.series[i];
        let c = color(i);
        let (width, size) = self.weight(i);
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        if !s.band.is_empty() {
            let mut poly: Vec<(f64, f64)> = s.band.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(s.band.iter().rev().map(|b| (b.0, b.1)));
            chart
                .draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18))))
                .map_err(err)?;
        }
        let points = s.points.iter().copied();
        match s.kind {
            SeriesKind::Line => {
                chart
                    .draw_series(LineSeries::new(points, c.stroke_width(width)))
                    .map_err(err)?;
            }
            SeriesKind::Reference => {
                chart
                    .draw_series(DashedLineSeries::new(points, 10, 6, c.stroke_width(2)))
                    .map_err(err)?;
            }
            SeriesKind::Points => {}
        }
        if marked(s) {
            chart
                .draw_series(s.points.iter().map(|p| marker(i, size, *p, c)))
                .map_err(err)?;
        }
        Ok(())
    }

    /// The width of the legend's pane in `area`, in pixels: its longest name and a sample.
    pub(crate) fn legend_width<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> u32 {
        let font = (FAMILY, 14).into_text_style(area);
        let widest = self
            .series
            .iter()
            .map(|s| {
                area.estimate_text_size(&s.name, &font)
                    .map_or(0, |(w, _)| w)
            })
            .max()
            .unwrap_or(0);
        let w = widest + (LEGEND_SAMPLE + LEGEND_GAP + 24) as u32;
        w.min(area.dim_in_pixel().0 * 2 / 5)
    }

    /// The legend in its own pane: a sample of each series' line and marker, then its name.
    fn draw_legend<DB: DrawingBackend>(&self, pane: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (w, _) = pane.dim_in_pixel();
        let top = 18;
        let bottom = top + LEGEND_ROW * self.series.len() as i32;
        pane.draw(&Rectangle::new(
            [
                (2, top - LEGEND_ROW / 2 - 2),
                (w as i32 - 10, bottom - LEGEND_ROW / 2 + 2),
            ],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        let font =
            TextStyle::from((FAMILY, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
        for (i, s) in self.series.iter().enumerate() {
            let y = top + LEGEND_ROW * i as i32;
            let c = color(i);
            let (width, size) = self.weight(i);
            let (x0, x1) = (8, 8 + LEGEND_SAMPLE);
            match s.kind {
                SeriesKind::Line => pane
                    .draw(&PathElement::new(
                        vec![(x0, y), (x1, y)],
                        c.stroke_width(width),
                    ))
                    .map_err(err)?,
                SeriesKind::Reference => pane
                    .draw(&PathElement::new(
                        vec![(x0, y), (x0 + 10, y)],
                        c.stroke_width(2),
                    ))
                    .and_then(|_| {
                        pane.draw(&PathElement::new(
                            vec![(x0 + 16, y), (x1, y)],
                            c.stroke_width(2),
                        ))
                    })
                    .map_err(err)?,
                SeriesKind::Points => {}
            }
            if marked(s) {
                pane.draw(&marker(i, size.min(6), ((x0 + x1) / 2, y), c))
                    .map_err(err)?;
            }
            pane.draw_text(&s.name, &font, (x1 + LEGEND_GAP, y))
                .map_err(err)?;
        }
        Ok(())
    }
}

/// Whether a series' points are marked: always for points alone, on a line only where they are
/// few enough to tell apart (not on timelines), never on a reference line.
fn marked(s: &Series) -> bool {
    match s.kind {
        SeriesKind::Points => true,
        SeriesKind::Line => s.points.len() <= 60,
        SeriesKind::Reference => false,
    }
}

/// Key points at 0, 1, ..., n-1: one tick per category.
fn ticks_at(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{attr, check_png_svg, svg_of, tmp};

    fn chart(series: Vec<Series>, log_x: bool) -> LineChart {
        LineChart {
            title: "wall time vs gap".into(),
            subtitle: None,
            x_label: "gap (bytes)".into(),
            y_label: "wall time (s)".into(),
            series,
            log_x,
            log_y: false,
            x_format: Some(|v| format!("{v:.0}B")),
            y_format: None,
            x_ticks: None,
        }
    }

    fn two_series() -> Vec<Series> {
        vec![
            Series {
                band: vec![(1e3, 1.9, 2.1), (1e4, 1.4, 1.6), (1e5, 1.6, 1.8)],
                ..Series::line("a", vec![(1e3, 2.0), (1e4, 1.5), (1e5, 1.7)])
            },
            Series::line("b", vec![(1e3, 3.0), (1e4, 2.5), (1e5, 2.0)]),
        ]
    }

    /// (cx, r) of every `<circle>` filled with `fill`.
    fn circles(svg: &str, fill: &str) -> Vec<(f64, f64)> {
        svg.split("<circle")
            .skip(1)
            .filter(|t| attr(t, "fill") == Some(fill))
            .filter_map(|t| Some((attr(t, "cx")?.parse().ok()?, attr(t, "r")?.parse().ok()?)))
            .collect()
    }

    /// The left edge of the legend's frame: the one unfilled black rectangle.
    fn legend_left(svg: &str) -> f64 {
        let frames: Vec<f64> = svg
            .split("<rect")
            .skip(1)
            .filter(|t| attr(t, "fill") == Some("none") && attr(t, "stroke") == Some("#000000"))
            .filter_map(|t| attr(t, "x")?.parse().ok())
            .collect();
        assert_eq!(frames.len(), 1, "one legend frame");
        frames[0]
    }

    #[test]
    fn line_chart_renders_with_text() {
        let c = chart(two_series(), true);
        check_png_svg(&c.save(&tmp("line")).unwrap());
        // A stem with dots keeps them all.
        let dotted = c.save(&tmp("line-vs-arms.a.settings.gap")).unwrap();
        assert!(
            dotted
                .iter()
                .all(|p| p.to_string_lossy().contains("arms.a.settings.gap.")),
            "{dotted:?}"
        );
    }

    #[test]
    fn the_legend_sits_right_of_every_point() {
        let c = chart(two_series(), false);
        let svg = svg_of((1000, 640), |a| c.draw(a));
        let left = legend_left(&svg);
        // Series a's filled circles: its three points, then its legend sample in the frame.
        let mut a = circles(&svg, "#1F77B4");
        a.sort_by(|p, q| p.0.total_cmp(&q.0));
        assert_eq!(a.len(), 4, "{a:?}");
        assert!(a[3].0 > left, "the legend sample is in the frame");
        for (cx, r) in &a[..3] {
            assert!(
                cx + r < left,
                "a point at x={cx} under the legend at x={left}"
            );
        }
    }

    #[test]
    fn a_log_axis_needs_every_value_positive_and_says_so() {
        let mut with_zero = two_series();
        with_zero[1].points[0].0 = 0.0;
        let c = chart(with_zero, true);
        assert!(!c.log_x_applies());
        let svg = svg_of((1000, 640), |a| c.draw(a));
        assert!(!svg.contains("log scale"));
        let c = chart(two_series(), true);
        assert!(c.log_x_applies());
        let svg = svg_of((1000, 640), |a| c.draw(a));
        assert!(svg.contains("gap (bytes), log scale"));
    }

    #[test]
    fn a_long_title_is_drawn_whole() {
        let title =
            "many-small-files / default: wall_time vs input_format_parquet_coalesce_gap_bytes";
        let c = LineChart {
            title: title.into(),
            subtitle: Some(
                "at arms.redesign.settings.input_format_parquet_read_amplification_floor_bytes=0 \
                 (redesign); not applied (base, floor-0)"
                    .into(),
            ),
            ..chart(two_series(), false)
        };
        let svg = svg_of((1000, 640), |a| c.draw(a));
        for word in title.split_whitespace().chain(["(base,", "floor-0)"]) {
            assert!(svg.contains(word), "{word} missing");
        }
    }

    #[test]
    fn a_reference_line_has_no_markers() {
        let reference = Series {
            kind: SeriesKind::Reference,
            ..Series::line("base (setting not applied)", vec![(1e3, 4.0), (1e5, 4.0)])
        };
        let c = chart(
            vec![reference, Series::line("b", vec![(1e3, 3.0), (1e5, 2.0)])],
            false,
        );
        let svg = svg_of((1000, 640), |a| c.draw(a));
        // Series 0 would be marked by filled circles; the reference has none, in the plot or
        // in the legend (series 1's rings are unfilled).
        assert!(circles(&svg, "#1F77B4").is_empty());
        assert_eq!(
            circles(&svg, "none").len(),
            3,
            "series b's two points and its sample"
        );
        assert!(svg.contains("base (setting not applied)"));
    }
}
