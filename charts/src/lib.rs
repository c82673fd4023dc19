//! Charts as PNG and SVG with an embedded font, so text renders on a machine with no system
//! fonts: line charts with confidence bands and log axes, heatmaps with the best cells marked,
//! and stacked panels for timelines. Every chart has a title (wrapped to fit), axis labels with
//! units (a log axis says so) and a legend, outside the plot, where it has more than one series.

mod heatmap;
mod line;
mod panels;
mod text;
mod ticked;

pub use heatmap::Heatmap;
pub use line::{LineChart, Series, SeriesKind};
pub use panels::Panels;

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

/// Whether values read better on a log axis: every one positive (a 0 has no place on a log
/// axis) and together spanning two decades or more.
pub fn spans_decades(values: impl Iterator<Item = f64>) -> bool {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        if !(v > 0.0 && v.is_finite()) {
            return false;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    lo.is_finite() && hi / lo >= 100.0
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
        // Equal values get a range of their own (at least 1 wide), so that the ticks are not
        // one number repeated (`0, 0, 0, -0`).
        let pad = if hi == lo {
            (hi.abs() * 0.05).max(1.0)
        } else {
            ((hi - lo) * 0.05).max(hi.abs() * 0.05)
        };
        (
            (lo - pad).min(if lo >= 0.0 { 0.0 } else { lo - pad }),
            hi + pad,
        )
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! Helpers the charts' tests share.
    use super::*;

    pub fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("charts-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    pub fn check_png_svg(paths: &[PathBuf]) {
        let png = std::fs::read(&paths[0]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 10_000, "PNG too small: {}", png.len());
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.contains("<svg"), "not an SVG");
        assert!(svg.contains("<text"), "the SVG has no text");
    }

    /// The SVG that `draw` makes on a white canvas of `size`.
    pub fn svg_of(
        size: (u32, u32),
        draw: impl Fn(&DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String>,
    ) -> String {
        register_fonts().unwrap();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            root.fill(&WHITE).unwrap();
            draw(&root).unwrap();
            root.present().unwrap();
        }
        svg
    }

    /// The value of attribute `name` in one SVG tag's text.
    pub fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let len = tag[start..].find('"')?;
        Some(&tag[start..start + len])
    }

    /// Every filled `<rect>` of an SVG as (x, y, width, height, fill).
    pub fn filled_rects(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
        svg.split("<rect")
            .skip(1)
            .filter_map(|tag| {
                let tag = &tag[..tag.find('>')?];
                let num = |n: &str| attr(tag, n).and_then(|v| v.parse::<f64>().ok());
                let fill = attr(tag, "fill")?;
                (fill != "none").then(|| {
                    Some((
                        num("x")?,
                        num("y")?,
                        num("width")?,
                        num("height")?,
                        fill.to_string(),
                    ))
                })?
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_at_or_below_zero_keeps_an_axis_linear() {
        assert!(spans_decades([1.0, 150.0].into_iter()));
        assert!(!spans_decades([1.0, 50.0].into_iter()));
        // 0 and 1MiB span "decades" only if the 0 is ignored; on a log axis it has no place.
        assert!(!spans_decades(
            [0.0, 256.0 * 1024.0, 1024.0 * 1024.0].into_iter()
        ));
        assert!(!spans_decades([-5.0, 1.0, 1000.0].into_iter()));
        assert!(!spans_decades(std::iter::empty()));
    }

    #[test]
    fn equal_values_get_a_range_at_least_one_wide() {
        let (lo, hi) = bounds([0.0, 0.0, 0.0].into_iter(), false);
        assert!(hi - lo >= 1.0 && lo <= 0.0 && hi >= 1.0, "{lo}..{hi}");
        let (lo, hi) = bounds([400.0; 3].into_iter(), false);
        assert!(lo <= 380.0 && hi >= 420.0, "{lo}..{hi}");
        // Unequal values keep a range of their own size.
        let (lo, hi) = bounds([2.0, 3.0].into_iter(), false);
        assert!(lo == 0.0 && (hi - 3.15).abs() < 1e-9, "{lo}..{hi}");
    }
}
