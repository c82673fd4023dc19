//! Plots of the empirical CDF of a trace against each fitted candidate, as PNG or SVG.
//!
//! Text is drawn with the font the `charts` crate embeds (DejaVu Sans, `assets/fonts/`) and
//! registers with plotters before the first plot, so plots look the same on any machine.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::TraceError;
use crate::fit::{DistFit, SizeSlope, StoreFit};

const FAMILY: &str = "sans-serif";

fn ensure_font() -> Result<(), String> {
    charts::register_fonts().map_err(|e| e.to_string())
}

/// The unit a plotted quantity is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlotUnit {
    /// Values in ns, shown in ms.
    Milliseconds,
    /// Values in bytes per second, shown in MiB/s.
    MebibytesPerSecond,
}

impl PlotUnit {
    fn scale(self) -> f64 {
        match self {
            PlotUnit::Milliseconds => 1e-6,
            PlotUnit::MebibytesPerSecond => 1.0 / (1024.0 * 1024.0),
        }
    }

    fn label(self) -> &'static str {
        match self {
            PlotUnit::Milliseconds => "ms",
            PlotUnit::MebibytesPerSecond => "MiB/s",
        }
    }
}

/// Image size in pixels.
pub const PLOT_SIZE: (u32, u32) = (1000, 650);
/// At most this many points of the empirical CDF are drawn (evenly spaced in rank).
const MAX_ECDF_POINTS: usize = 2000;
const CURVE_POINTS: usize = 400;

fn plot_err(path: &Path, why: impl std::fmt::Display) -> TraceError {
    TraceError::Plot {
        path: path.display().to_string(),
        why: why.to_string(),
    }
}

fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    fit: &DistFit,
    title: &str,
    what: &str,
    unit: PlotUnit,
    path: &Path,
) -> Result<(), TraceError>
where
    DB::ErrorType: 'static,
{
    let sample = &fit.sorted_sample;
    let scale = unit.scale();
    let (Some(lo), Some(hi)) = (sample.first(), sample.last()) else {
        return Err(plot_err(path, "the fit holds no sample"));
    };
    let (lo, hi) = (lo * scale, hi * scale);
    if !(lo > 0.0 && hi.is_finite()) {
        return Err(plot_err(path, "the sample must be positive and finite"));
    }
    let (x_lo, x_hi) = (lo / 1.2, (hi * 1.2).max(lo * 1.5));
    root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FAMILY, 24))
        .margin(15)
        .x_label_area_size(55)
        .y_label_area_size(70)
        .build_cartesian_2d(x_lo.log10()..x_hi.log10(), 0.0..1.0)
        .map_err(|e| plot_err(path, e))?;
    chart
        .configure_mesh()
        .x_desc(format!("{what} ({}, log scale)", unit.label()))
        .y_desc("cumulative probability")
        .x_labels(8)
        .x_label_formatter(&|v| format_tick(10f64.powf(*v)))
        .label_style((FAMILY, 16))
        .axis_desc_style((FAMILY, 18))
        .draw()
        .map_err(|e| plot_err(path, e))?;

    let n = sample.len();
    let step = n.div_ceil(MAX_ECDF_POINTS).max(1);
    let ecdf: Vec<(f64, f64)> = (0..n)
        .step_by(step)
        .chain(std::iter::once(n - 1))
        .filter_map(|i| {
            sample
                .get(i)
                .map(|x| ((x * scale).log10(), (i + 1) as f64 / n as f64))
        })
        .collect();
    chart
        .draw_series(LineSeries::new(ecdf, BLACK.stroke_width(3)))
        .map_err(|e| plot_err(path, e))?
        .label(format!("trace ({n} samples)"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(3)));

    let colors = [RED, BLUE, GREEN, MAGENTA];
    for (i, c) in fit.candidates.iter().enumerate() {
        let color = colors[i % colors.len()];
        let curve: Vec<(f64, f64)> = (0..=CURVE_POINTS)
            .map(|k| {
                let x = x_lo * (x_hi / x_lo).powf(k as f64 / CURVE_POINTS as f64);
                (x.log10(), c.dist.cdf(x / scale))
            })
            .collect();
        let chosen = if i == fit.chosen { ", chosen" } else { "" };
        chart
            .draw_series(LineSeries::new(curve, color.stroke_width(2)))
            .map_err(|e| plot_err(path, e))?
            .label(format!("{} (KS D = {:.4}{chosen})", c.dist.name(), c.ks))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FAMILY, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| plot_err(path, e))?;
    root.present().map_err(|e| plot_err(path, e))?;
    Ok(())
}

/// Tick labels with two significant digits: `20`, `0.52`, `150`. (The x axis is linear in
/// log10 of the value, so ticks are evenly spaced rather than crowded below each decade.)
fn format_tick(x: f64) -> String {
    if !(x > 0.0 && x.is_finite()) {
        return String::new();
    }
    let digits = (1 - x.log10().floor() as i32).max(0) as usize;
    let rounded = format!("{:.*}", digits, x);
    let v: f64 = rounded.parse().unwrap_or(x);
    let magnitude = 10f64.powi(x.log10().floor() as i32 - 1);
    let s = if digits == 0 {
        format!("{}", (v / magnitude).round() * magnitude)
    } else {
        rounded
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Draws the empirical CDF of `fit`'s sample against each candidate's CDF. The format follows
/// the extension of `path`: `.png` or `.svg`.
pub fn plot_ecdf(
    fit: &DistFit,
    title: &str,
    what: &str,
    unit: PlotUnit,
    path: &Path,
) -> Result<(), TraceError> {
    ensure_font().map_err(|e| plot_err(path, e))?;
    match path.extension().and_then(|e| e.to_str()) {
        Some("png") => draw(
            BitMapBackend::new(path, PLOT_SIZE).into_drawing_area(),
            fit,
            title,
            what,
            unit,
            path,
        ),
        Some("svg") => draw(
            SVGBackend::new(path, PLOT_SIZE).into_drawing_area(),
            fit,
            title,
            what,
            unit,
            path,
        ),
        _ => Err(plot_err(path, "the file name must end in .png or .svg")),
    }
}

/// The title's subject and the axis label of the first-byte plot: with the size slope applied,
/// the sample is the latency less the slope times the size (it was labelled "first-byte
/// latency", which it is not).
fn first_byte_labels(slope: Option<&SizeSlope>) -> (String, String) {
    match slope.filter(|s| s.applied) {
        Some(s) => (
            format!(
                "First-byte latency less {} per MiB",
                units::format_duration_f(s.ns_per_mib)
            ),
            "first-byte latency less the size slope".into(),
        ),
        None => ("First-byte latency".into(), "first-byte latency".into()),
    }
}

/// Writes `{stem}-first-byte.{png,svg}` and, when bandwidth was measured,
/// `{stem}-bandwidth.{png,svg}` into `dir`; returns the paths written.
pub fn plot_store_fit(fit: &StoreFit, dir: &Path, stem: &str) -> Result<Vec<PathBuf>, TraceError> {
    let mut written = Vec::new();
    for ext in ["png", "svg"] {
        let path = dir.join(format!("{stem}-first-byte.{ext}"));
        let (what, axis) = first_byte_labels(fit.size_slope.as_ref());
        let title = format!("{what}: {} vs fitted CDFs", fit.source);
        plot_ecdf(
            &fit.first_byte,
            &title,
            &axis,
            PlotUnit::Milliseconds,
            &path,
        )?;
        written.push(path);
        if let Some(bw) = &fit.stream_bandwidth {
            let path = dir.join(format!("{stem}-bandwidth.{ext}"));
            let title = format!("Per-stream bandwidth: {} vs fitted CDFs", fit.source);
            plot_ecdf(
                bw,
                &title,
                "per-stream bandwidth",
                PlotUnit::MebibytesPerSecond,
                &path,
            )?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::{first_byte_labels, format_tick, SizeSlope};

    #[test]
    fn a_detrended_sample_is_labelled_as_such() {
        let mut slope = SizeSlope {
            requests: 40,
            min_bytes: 1 << 20,
            ns_per_mib: 2e6,
            stderr_ns_per_mib: 1e5,
            applied: true,
        };
        let (title, axis) = first_byte_labels(Some(&slope));
        assert!(title.contains("less 2ms per MiB"), "{title}");
        assert_eq!(axis, "first-byte latency less the size slope");
        slope.applied = false;
        assert_eq!(first_byte_labels(Some(&slope)).1, "first-byte latency");
        assert_eq!(first_byte_labels(None).0, "First-byte latency");
    }

    #[test]
    fn ticks_have_two_significant_digits() {
        assert_eq!(format_tick(157.3), "160");
        assert_eq!(format_tick(26.8), "27");
        assert_eq!(format_tick(100.0), "100");
        assert_eq!(format_tick(0.5234), "0.52");
        assert_eq!(format_tick(2.0), "2");
        assert_eq!(format_tick(0.0), "");
    }
}
