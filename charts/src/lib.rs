//! Charts as PNG and SVG with an embedded font, so text renders on a machine with no system
//! fonts: line charts with confidence bands and log axes, heatmaps with the best cell marked,
//! and stacked panels for timelines. Every chart has a title, axis labels with units and a
//! legend where it has more than one series.

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
const FAMILY: &str = "sans-serif";

#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("cannot load the embedded font")]
    Font,
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("nothing to draw: {0}")]
    Empty(String),
}

/// Registers the embedded font under the family plotters uses by default. Idempotent.
pub fn register_fonts() -> Result<(), ChartError> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        [
            FontStyle::Normal,
            FontStyle::Bold,
            FontStyle::Italic,
            FontStyle::Oblique,
        ]
        .into_iter()
        .all(|style| plotters::style::register_font(FAMILY, style, FONT).is_ok())
    });
    if ok {
        Ok(())
    } else {
        Err(ChartError::Font)
    }
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Optional confidence band: (x, low, high).
    pub band: Vec<(f64, f64, f64)>,
}

#[derive(Debug, Clone)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub log_x: bool,
    pub log_y: bool,
    /// Tick label formats (with units); plain numbers when None.
    pub x_format: Option<fn(f64) -> String>,
    pub y_format: Option<fn(f64) -> String>,
    /// Categorical x ticks: point `i` of every series sits at x = `i` and is labelled
    /// `x_ticks[i]` (a sweep's values exactly as swept, e.g. `64KiB`, `1MiB`); overrides
    /// `x_format` and `log_x`.
    pub x_ticks: Option<Vec<String>>,
}

/// Whether values spanning this range read better on a log axis (two decades or more).
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    hi > 0.0 && lo.is_finite() && hi / lo >= 100.0
}

fn draw_err(path: &Path, e: impl std::fmt::Display) -> ChartError {
    ChartError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Writes `stem.png` and `stem.svg` with `draw` and returns both paths.
fn save_both(
    stem: &Path,
    size: (u32, u32),
    draw_png: impl Fn(DrawingArea<BitMapBackend<'_>, Shift>) -> Result<(), String>,
    draw_svg: impl Fn(DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
) -> Result<Vec<PathBuf>, ChartError> {
    register_fonts()?;
    if let Some(dir) = stem.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| draw_err(dir, e))?;
    }
    // Appended, not `with_extension`: a stem with a dot in it (an axis called
    // `arms.redesign.settings.x`, a case `v1.2`) lost everything after its last dot.
    let with_ext = |ext: &str| {
        let mut name = stem.as_os_str().to_owned();
        name.push(ext);
        PathBuf::from(name)
    };
    let png = with_ext(".png");
    let svg = with_ext(".svg");
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_err(&png, e))?;
        draw_png(root.clone()).map_err(|e| draw_err(&png, e))?;
        root.present().map_err(|e| draw_err(&png, e))?;
    }
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_err(&svg, e))?;
        draw_svg(root.clone()).map_err(|e| draw_err(&svg, e))?;
        root.present().map_err(|e| draw_err(&svg, e))?;
    }
    Ok(vec![png, svg])
}

fn bounds(vals: impl Iterator<Item = f64>, log: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| v.is_finite() && (!log || *v > 0.0)) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return if log { (1.0, 10.0) } else { (0.0, 1.0) };
    }
    if log {
        (lo / 1.2, hi * 1.2)
    } else {
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
        (
            (lo - pad).min(if lo >= 0.0 { 0.0 } else { lo - pad }),
            hi + pad,
        )
    }
}

impl LineChart {
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.series.iter().all(|s| s.points.is_empty()) {
            return Err(ChartError::Empty(self.title.clone()));
        }
        save_both(stem, (1000, 640), |a| self.draw(&a), |a| self.draw(&a))
    }

    /// Draws into any area (used for panels too).
    pub fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let xs = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = self.series.iter().flat_map(|s| {
            s.points
                .iter()
                .map(|p| p.1)
                .chain(s.band.iter().flat_map(|b| [b.1, b.2]))
        });
        let (x0, x1) = bounds(xs, self.log_x);
        let (y0, y1) = bounds(ys, self.log_y);
        let (x0, x1) = match &self.x_ticks {
            Some(t) => (-0.3, t.len().saturating_sub(1) as f64 + 0.3),
            None => (x0, x1),
        };
        let log_x = self.log_x && self.x_ticks.is_none();
        let mut builder = ChartBuilder::on(area);
        builder
            .caption(&self.title, (FAMILY, 22))
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(90);
        macro_rules! body {
            ($chart:expr) => {{
                let mut chart = $chart;
                let plain = |v: &f64| format!("{}", (v * 1000.0).round() / 1000.0);
                let xf = |v: &f64| match &self.x_ticks {
                    Some(t) if (v - v.round()).abs() < 1e-6 && *v >= 0.0 => {
                        t.get(v.round() as usize).cloned().unwrap_or_default()
                    }
                    Some(_) => String::new(),
                    None => self.x_format.map(|f| f(*v)).unwrap_or_else(|| plain(v)),
                };
                let yf = |v: &f64| self.y_format.map(|f| f(*v)).unwrap_or_else(|| plain(v));
                let x_labels = self.x_ticks.as_ref().map_or(10, |t| t.len().max(2));
                chart
                    .configure_mesh()
                    .x_labels(x_labels)
                    .x_desc(self.x_label.as_str())
                    .y_desc(self.y_label.as_str())
                    .x_label_formatter(&xf)
                    .y_label_formatter(&yf)
                    .label_style((FAMILY, 14))
                    .axis_desc_style((FAMILY, 16))
                    .draw()
                    .map_err(|e| e.to_string())?;
                let n = self.series.len();
                for (i, s) in self.series.iter().enumerate() {
                    let c = color(i);
                    // Earlier series are drawn wider and later ones narrower, each with its own
                    // marker, so that series with identical values stay visible.
                    let width = 2 + 2 * (n - 1 - i).min(3) as u32;
                    if !s.band.is_empty() {
                        let mut poly: Vec<(f64, f64)> = s.band.iter().map(|b| (b.0, b.2)).collect();
                        poly.extend(s.band.iter().rev().map(|b| (b.0, b.1)));
                        chart
                            .draw_series(std::iter::once(Polygon::new(poly, c.mix(0.18))))
                            .map_err(|e| e.to_string())?;
                    }
                    chart
                        .draw_series(LineSeries::new(
                            s.points.iter().copied(),
                            c.stroke_width(width),
                        ))
                        .map_err(|e| e.to_string())?
                        .label(s.name.as_str())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(width))
                        });
                    // Markers only where points are few enough to tell apart (not on timelines):
                    // a filled circle, a hollow ring, a triangle, a cross, in turn.
                    if s.points.len() <= 60 {
                        let size = 3 + 2 * (n - 1 - i).min(3) as i32;
                        let style = c.stroke_width(2);
                        match i % 4 {
                            0 => chart
                                .draw_series(
                                    s.points.iter().map(|p| Circle::new(*p, size, c.filled())),
                                )
                                .map(|_| ()),
                            1 => chart
                                .draw_series(s.points.iter().map(|p| Circle::new(*p, size, style)))
                                .map(|_| ()),
                            2 => chart
                                .draw_series(
                                    s.points
                                        .iter()
                                        .map(|p| TriangleMarker::new(*p, size, style)),
                                )
                                .map(|_| ()),
                            _ => chart
                                .draw_series(s.points.iter().map(|p| Cross::new(*p, size, style)))
                                .map(|_| ()),
                        }
                        .map_err(|e| e.to_string())?;
                    }
                }
                if self.series.len() > 1
                    || !self
                        .series
                        .first()
                        .map(|s| s.name.is_empty())
                        .unwrap_or(true)
                {
                    chart
                        .configure_series_labels()
                        .background_style(WHITE.mix(0.85))
                        .border_style(BLACK)
                        .label_font((FAMILY, 14))
                        .draw()
                        .map_err(|e| e.to_string())?;
                }
            }};
        }
        match (log_x, self.log_y) {
            (false, false) => body!(builder
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| e.to_string())?),
            (true, false) => body!(builder
                .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
                .map_err(|e| e.to_string())?),
            (false, true) => body!(builder
                .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
                .map_err(|e| e.to_string())?),
            (true, true) => {
                body!(builder
                    .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
                    .map_err(|e| e.to_string())?)
            }
        }
        Ok(())
    }
}

/// Line charts stacked vertically (a timeline: concurrency, bytes in flight, memory).
#[derive(Debug, Clone)]
pub struct Panels {
    pub title: String,
    pub panels: Vec<LineChart>,
}

impl Panels {
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.panels.is_empty() {
            return Err(ChartError::Empty(self.title.clone()));
        }
        let h = 60 + 330 * self.panels.len() as u32;
        let draw = |root: &dyn Fn(usize) -> Result<(), String>| -> Result<(), String> {
            for i in 0..self.panels.len() {
                root(i)?;
            }
            Ok(())
        };
        save_both(
            stem,
            (1000, h),
            |a| {
                let a = a
                    .titled(&self.title, (FAMILY, 24))
                    .map_err(|e| e.to_string())?;
                let areas = a.split_evenly((self.panels.len(), 1));
                draw(&|i| self.panels[i].draw(&areas[i]))
            },
            |a| {
                let a = a
                    .titled(&self.title, (FAMILY, 24))
                    .map_err(|e| e.to_string())?;
                let areas = a.split_evenly((self.panels.len(), 1));
                draw(&|i| self.panels[i].draw(&areas[i]))
            },
        )
    }
}

#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_ticks: Vec<String>,
    pub y_ticks: Vec<String>,
    /// z[y][x]; NaN cells are left blank.
    pub z: Vec<Vec<f64>>,
    /// What the colour means, with its unit.
    pub z_label: String,
    /// Lower is better: the smallest cell is marked.
    pub lower_is_better: bool,
    /// Formats a z value for cell labels.
    pub z_format: fn(f64) -> String,
}

impl Heatmap {
    pub fn best(&self) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize, f64)> = None;
        for (yi, row) in self.z.iter().enumerate() {
            for (xi, v) in row.iter().enumerate() {
                if !v.is_finite() {
                    continue;
                }
                let better = match best {
                    None => true,
                    Some((_, _, b)) => {
                        if self.lower_is_better {
                            *v < b
                        } else {
                            *v > b
                        }
                    }
                };
                if better {
                    best = Some((xi, yi, *v));
                }
            }
        }
        best.map(|(x, y, _)| (x, y))
    }

    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.z.is_empty() || self.x_ticks.is_empty() {
            return Err(ChartError::Empty(self.title.clone()));
        }
        save_both(stem, (1000, 720), |a| self.draw(&a), |a| self.draw(&a))
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (nx, ny) = (self.x_ticks.len(), self.y_ticks.len());
        let vals: Vec<f64> = self
            .z
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (main, legend) = area.split_horizontally(area.dim_in_pixel().0.saturating_sub(140));
        let mut chart = ChartBuilder::on(&main)
            .caption(
                format!("{} (colour: {})", self.title, self.z_label),
                (FAMILY, 22),
            )
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(100)
            .build_cartesian_2d(
                (0..nx as i32 - 1).into_segmented(),
                (0..ny as i32 - 1).into_segmented(),
            )
            .map_err(|e| e.to_string())?;
        let xt = self.x_ticks.clone();
        let yt = self.y_ticks.clone();
        let label = |ticks: &[String], v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) => ticks.get(*i as usize).cloned().unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_labels(nx + 1)
            .y_labels(ny + 1)
            .x_label_formatter(&|v| label(&xt, v))
            .y_label_formatter(&|v| label(&yt, v))
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(|e| e.to_string())?;
        let shade = |v: f64| -> RGBColor {
            let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
            let t = if self.lower_is_better { t } else { 1.0 - t };
            // good (t=0) = dark blue, bad (t=1) = light yellow
            let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
            RGBColor(lerp(33.0, 253.0), lerp(102.0, 231.0), lerp(172.0, 37.0))
        };
        let cell = |x: usize, y: usize| {
            [
                (SegmentValue::Exact(x as i32), SegmentValue::Exact(y as i32)),
                (
                    SegmentValue::Exact(x as i32 + 1),
                    SegmentValue::Exact(y as i32 + 1),
                ),
            ]
        };
        for (yi, row) in self.z.iter().enumerate() {
            for (xi, v) in row.iter().enumerate() {
                if !v.is_finite() {
                    continue;
                }
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        cell(xi, yi),
                        shade(*v).filled(),
                    )))
                    .map_err(|e| e.to_string())?;
                if nx <= 12 && ny <= 12 {
                    chart
                        .draw_series(std::iter::once(Text::new(
                            (self.z_format)(*v),
                            (
                                SegmentValue::CenterOf(xi as i32),
                                SegmentValue::CenterOf(yi as i32),
                            ),
                            (FAMILY, 12).into_font().color(&BLACK),
                        )))
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        if let Some((bx, by)) = self.best() {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    cell(bx, by),
                    RED.stroke_width(4),
                )))
                .map_err(|e| e.to_string())?
                .label("best")
                .legend(|(x, y)| {
                    Rectangle::new([(x, y - 6), (x + 14, y + 6)], RED.stroke_width(3))
                });
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .label_font((FAMILY, 14))
                .draw()
                .map_err(|e| e.to_string())?;
        }
        // Colour scale.
        let legend = legend.margin(70, 60, 30, 30);
        let (_, lh) = legend.dim_in_pixel();
        let steps = 50;
        for i in 0..steps {
            let v = lo + (hi - lo) * i as f64 / (steps - 1) as f64;
            let y0 = lh as i32 - ((i + 1) * lh as i32 / steps);
            let y1 = lh as i32 - (i * lh as i32 / steps);
            legend
                .draw(&Rectangle::new([(0, y0), (24, y1)], shade(v).filled()))
                .map_err(|e| e.to_string())?;
        }
        let font = (FAMILY, 12).into_font();
        legend
            .draw(&Text::new((self.z_format)(hi), (28, 0), font.clone()))
            .map_err(|e| e.to_string())?;
        legend
            .draw(&Text::new((self.z_format)(lo), (28, lh as i32 - 12), font))
            .map_err(|e| e.to_string())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("charts-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn check_png_svg(paths: &[PathBuf]) {
        let png = std::fs::read(&paths[0]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 10_000, "PNG too small: {}", png.len());
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(
            svg.starts_with("<svg") || svg.contains("<svg"),
            "not an SVG"
        );
        assert!(svg.contains("<text"), "the SVG has no text");
    }

    #[test]
    fn line_chart_renders_with_text() {
        let c = LineChart {
            title: "wall time vs gap".into(),
            x_label: "gap (bytes)".into(),
            y_label: "wall time (s)".into(),
            series: vec![
                Series {
                    name: "a".into(),
                    points: vec![(1e3, 2.0), (1e4, 1.5), (1e5, 1.7)],
                    band: vec![(1e3, 1.9, 2.1), (1e4, 1.4, 1.6), (1e5, 1.6, 1.8)],
                },
                Series {
                    name: "b".into(),
                    points: vec![(1e3, 3.0), (1e4, 2.5), (1e5, 2.0)],
                    band: vec![],
                },
            ],
            log_x: true,
            log_y: false,
            x_format: Some(|v| format!("{v:.0}B")),
            y_format: None,
            x_ticks: None,
        };
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
    fn heatmap_marks_the_best_cell() {
        let h = Heatmap {
            title: "t".into(),
            x_label: "x (bytes)".into(),
            y_label: "y (bytes)".into(),
            x_ticks: vec!["1".into(), "2".into(), "3".into()],
            y_ticks: vec!["a".into(), "b".into()],
            z: vec![vec![3.0, 2.0, 5.0], vec![4.0, 1.0, f64::NAN]],
            z_label: "wall (s)".into(),
            lower_is_better: true,
            z_format: |v| format!("{v:.1}"),
        };
        assert_eq!(h.best(), Some((1, 1)));
        check_png_svg(&h.save(&tmp("heat")).unwrap());
    }

    #[test]
    fn spans() {
        assert!(spans_decades([1.0, 150.0].into_iter()));
        assert!(!spans_decades([1.0, 50.0].into_iter()));
    }
}

#[cfg(test)]
mod panel_tests {
    use super::*;

    #[test]
    fn timeline_panels_render() {
        let dir = std::env::temp_dir().join(format!("charts-panels-{}", std::process::id()));
        let line = |name: &str| LineChart {
            title: name.into(),
            x_label: "time (s)".into(),
            y_label: "requests".into(),
            series: vec![Series {
                name: "in flight".into(),
                points: (0..500)
                    .map(|i| (i as f64 / 100.0, (i % 17) as f64))
                    .collect(),
                band: vec![],
            }],
            log_x: false,
            log_y: false,
            x_format: None,
            y_format: None,
            x_ticks: None,
        };
        let paths = Panels {
            title: "timeline".into(),
            panels: vec![line("a"), line("b"), line("c")],
        }
        .save(&dir.join("panels"))
        .unwrap();
        let png = std::fs::read(&paths[0]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 10_000);
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.contains("time (s)") && svg.contains("timeline"));
        assert!(Panels {
            title: "x".into(),
            panels: vec![]
        }
        .save(&dir.join("empty"))
        .is_err());
    }
}
