//! Heatmaps: a cell per (x, y) pair, shaded by value, the best cells marked (every cell tied
//! for best, none when all cells are equal), the key to the mark under the plot and the colour
//! scale right of it, so that neither covers a cell.

use crate::ticked::Ticked;
use crate::{save_both, text, ChartError, FAMILY};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Heatmap {
    pub title: String,
    /// A smaller line under the title.
    pub subtitle: Option<String>,
    pub x_label: String,
    pub y_label: String,
    pub x_ticks: Vec<String>,
    pub y_ticks: Vec<String>,
    /// z[y][x]; NaN cells are left blank.
    pub z: Vec<Vec<f64>>,
    /// What the colour means, with its unit.
    pub z_label: String,
    /// Lower is better: the smallest cells are marked.
    pub lower_is_better: bool,
    /// Formats a z value for cell labels.
    pub z_format: fn(f64) -> String,
}

/// Width of the colour-scale pane, in pixels.
const SCALE_PANE: u32 = 140;
/// Height of the row under the plot that holds the key to the mark, in pixels.
const KEY_ROW: u32 = 34;
/// How far a mark sits inside its cell (in cells), so that tied neighbours stay apart.
const MARK_INSET: f64 = 0.04;

/// Key points at the middle of each of `n` unit cells: 0.5, 1.5, ...
fn cell_centres(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 + 0.5).collect()
}

/// The tick label of the cell whose middle is `v`.
fn tick_label(ticks: &[String], v: f64) -> String {
    let i = (v - 0.5).round();
    if i < 0.0 || (v - 0.5 - i).abs() > 1e-6 {
        return String::new();
    }
    ticks.get(i as usize).cloned().unwrap_or_default()
}

impl Heatmap {
    fn finite_cells(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        self.z.iter().enumerate().flat_map(|(yi, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, v)| v.is_finite())
                .map(move |(xi, v)| (xi, yi, *v))
        })
    }

    /// Every cell (x, y) whose value is the best; empty when every cell has the same value (no
    /// cell is better than another) or none has a value.
    pub fn best_cells(&self) -> Vec<(usize, usize)> {
        let pick = |a: f64, b: f64| {
            if self.lower_is_better {
                a.min(b)
            } else {
                a.max(b)
            }
        };
        let Some(best) = self.finite_cells().map(|c| c.2).reduce(pick) else {
            return Vec::new();
        };
        if self.finite_cells().all(|c| c.2 == best) {
            return Vec::new();
        }
        self.finite_cells()
            .filter(|c| c.2 == best)
            .map(|c| (c.0, c.1))
            .collect()
    }

    /// What the key under the plot says, or `None` when no cell has a value.
    fn key_text(&self, marked: usize) -> Option<String> {
        let cells = self.finite_cells().count();
        match marked {
            _ if cells == 0 => None,
            0 if cells == 1 => Some("one cell: none marked best".into()),
            0 => Some(format!("all {cells} cells equal: none marked best")),
            1 => Some("best".into()),
            n => Some(format!("best ({n} tied)")),
        }
    }

    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.z.is_empty() || self.x_ticks.is_empty() || self.y_ticks.is_empty() {
            return Err(ChartError::Empty(self.title.clone()));
        }
        save_both(stem, (1000, 720), |a| self.draw(&a), |a| self.draw(&a))
    }

    fn range(&self) -> (f64, f64) {
        let lo = self
            .finite_cells()
            .map(|c| c.2)
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .finite_cells()
            .map(|c| c.2)
            .fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    }

    /// Good (t = 0) dark blue to bad (t = 1) light yellow.
    fn shade(&self, v: f64) -> RGBColor {
        let (lo, hi) = self.range();
        let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
        let t = if self.lower_is_better { t } else { 1.0 - t };
        let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
        RGBColor(lerp(33.0, 253.0), lerp(102.0, 231.0), lerp(172.0, 37.0))
    }

    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
    ) -> Result<(), String> {
        let area = text::draw_title(area, &self.title, self.subtitle.as_deref(), 22)?;
        let (w, h) = area.dim_in_pixel();
        let (main, scale) = area.split_horizontally(w.saturating_sub(SCALE_PANE));
        let (plot, key) = main.split_vertically(h.saturating_sub(KEY_ROW));
        let marked = self.best_cells();
        self.draw_cells(&plot, &marked)?;
        if let Some(text) = self.key_text(marked.len()) {
            draw_key(&key, &text, !marked.is_empty())?;
        }
        self.draw_scale(&scale)
    }

    fn draw_cells<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        marked: &[(usize, usize)],
    ) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (nx, ny) = (self.x_ticks.len(), self.y_ticks.len());
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(56)
            .y_label_area_size(100)
            .build_cartesian_2d(
                Ticked::new(0.0..nx as f64, cell_centres(nx)),
                Ticked::new(0.0..ny as f64, cell_centres(ny)),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(self.x_label.as_str())
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| tick_label(&self.x_ticks, *v))
            .y_label_formatter(&|v| tick_label(&self.y_ticks, *v))
            .label_style((FAMILY, 13))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(err)?;
        let label =
            TextStyle::from((FAMILY, 12).into_font()).pos(Pos::new(HPos::Center, VPos::Center));
        for (xi, yi, v) in self.finite_cells() {
            let (x, y) = (xi as f64, yi as f64);
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x, y), (x + 1.0, y + 1.0)],
                    self.shade(v).filled(),
                )))
                .map_err(err)?;
            if nx <= 12 && ny <= 12 {
                chart
                    .draw_series(std::iter::once(Text::new(
                        (self.z_format)(v),
                        (x + 0.5, y + 0.5),
                        label.color(&readable_on(self.shade(v))),
                    )))
                    .map_err(err)?;
            }
        }
        chart
            .draw_series(marked.iter().map(|&(xi, yi)| {
                let (x, y) = (xi as f64 + MARK_INSET, yi as f64 + MARK_INSET);
                let side = 1.0 - 2.0 * MARK_INSET;
                Rectangle::new([(x, y), (x + side, y + side)], RED.stroke_width(4))
            }))
            .map_err(err)?;
        Ok(())
    }

    /// The colour scale under what it means, from the worst value at the top to the best at
    /// the bottom.
    fn draw_scale<DB: DrawingBackend>(&self, pane: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
        let (lo, hi) = self.range();
        if !lo.is_finite() {
            return Ok(());
        }
        let (w, _) = pane.dim_in_pixel();
        let title = TextStyle::from((FAMILY, 13).into_font());
        let lines = text::wrap(pane, &self.z_label, 13, w.saturating_sub(24));
        for (i, line) in lines.iter().enumerate() {
            pane.draw_text(line, &title, (20, 12 + 17 * i as i32))
                .map_err(err)?;
        }
        let top = 24 + 17 * lines.len() as u32;
        let pane = pane.margin(top, 60, 20, 20);
        let (_, lh) = pane.dim_in_pixel();
        let lh = lh as i32;
        let steps = 50;
        for i in 0..steps {
            let v = lo + (hi - lo) * f64::from(i) / f64::from(steps - 1);
            let y0 = lh - ((i + 1) * lh / steps);
            let y1 = lh - (i * lh / steps);
            pane.draw(&Rectangle::new([(0, y0), (24, y1)], self.shade(v).filled()))
                .map_err(err)?;
        }
        let font = (FAMILY, 12).into_font();
        pane.draw(&Text::new((self.z_format)(hi), (28, 0), font.clone()))
            .map_err(err)?;
        pane.draw(&Text::new((self.z_format)(lo), (28, lh - 12), font))
            .map_err(err)
    }
}

/// Black on light cells, white on dark ones.
fn readable_on(c: RGBColor) -> RGBColor {
    let luma = 0.299 * f64::from(c.0) + 0.587 * f64::from(c.1) + 0.114 * f64::from(c.2);
    if luma > 140.0 {
        BLACK
    } else {
        WHITE
    }
}

/// The key to the mark, under the plot: a red square and what it means (or, with no mark,
/// why not).
fn draw_key<DB: DrawingBackend>(
    row: &DrawingArea<DB, Shift>,
    text: &str,
    with_square: bool,
) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let y = 12;
    let mut x = 112;
    if with_square {
        row.draw(&Rectangle::new(
            [(x, y - 7), (x + 16, y + 7)],
            RED.stroke_width(3),
        ))
        .map_err(err)?;
        x += 24;
    }
    let font = TextStyle::from((FAMILY, 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    row.draw_text(text, &font, (x, y)).map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_png_svg, filled_rects, svg_of, tmp};

    fn heatmap(x: usize, z: Vec<Vec<f64>>) -> Heatmap {
        Heatmap {
            title: "t".into(),
            subtitle: None,
            x_label: "x (bytes)".into(),
            y_label: "y (bytes)".into(),
            x_ticks: (0..x).map(|i| format!("{i}KiB")).collect(),
            y_ticks: (0..z.len()).map(|i| format!("y{i}")).collect(),
            z,
            z_label: "wall (s)".into(),
            lower_is_better: true,
            z_format: |v| format!("{v:.1}"),
        }
    }

    /// The cells of a drawn heatmap: filled rectangles at least 30 px each way other than the
    /// canvas itself (the colour scale's steps are 24 px wide, the key's square 16).
    fn drawn_cells(h: &Heatmap) -> usize {
        let svg = svg_of((1000, 720), |a| h.draw(a));
        filled_rects(&svg)
            .iter()
            .filter(|r| r.2 >= 30.0 && r.3 >= 30.0 && r.2 < 1000.0)
            .count()
    }

    #[test]
    fn an_axis_with_one_value_still_draws_every_cell() {
        // One row of five: the y range 0..0 had no height, so no cell was drawn.
        assert_eq!(
            drawn_cells(&heatmap(5, vec![vec![1.0, 2.0, 3.0, 4.0, 5.0]])),
            5
        );
        // One column of three, and a single cell.
        assert_eq!(
            drawn_cells(&heatmap(1, vec![vec![1.0], vec![2.0], vec![3.0]])),
            3
        );
        assert_eq!(drawn_cells(&heatmap(1, vec![vec![1.0]])), 1);
        // A NaN cell is left blank.
        assert_eq!(drawn_cells(&heatmap(3, vec![vec![1.0, f64::NAN, 3.0]])), 2);
    }

    #[test]
    fn tick_labels_sit_at_the_middle_of_their_cell() {
        let h = heatmap(3, vec![vec![1.0, 2.0, 3.0]]);
        let svg = svg_of((1000, 720), |a| h.draw(a));
        for label in ["0KiB", "1KiB", "2KiB", "y0"] {
            assert!(
                svg.contains(&format!(">{label}<")) || svg.contains(&format!(">\n{label}")),
                "{label}"
            );
        }
        assert_eq!(tick_label(&h.x_ticks, 1.5), "1KiB");
        assert_eq!(tick_label(&h.x_ticks, 1.0), "");
        assert_eq!(tick_label(&h.x_ticks, 3.5), "");
    }

    #[test]
    fn every_tied_best_cell_is_marked() {
        let h = heatmap(3, vec![vec![3.0, 2.0, 5.0], vec![4.0, 1.0, f64::NAN]]);
        assert_eq!(h.best_cells(), vec![(1, 1)]);
        assert_eq!(h.key_text(1).as_deref(), Some("best"));
        let tied = heatmap(3, vec![vec![1.0, 2.0, 1.0], vec![1.0, 5.0, f64::NAN]]);
        assert_eq!(tied.best_cells(), vec![(0, 0), (2, 0), (0, 1)]);
        assert_eq!(tied.key_text(3).as_deref(), Some("best (3 tied)"));
        let higher = Heatmap {
            lower_is_better: false,
            ..tied.clone()
        };
        assert_eq!(higher.best_cells(), vec![(1, 1)]);
        check_png_svg(&tied.save(&tmp("heat-tied")).unwrap());
    }

    #[test]
    fn nothing_is_marked_when_every_cell_is_equal() {
        let flat = heatmap(2, vec![vec![2.0, 2.0], vec![2.0, f64::NAN]]);
        assert!(flat.best_cells().is_empty());
        assert_eq!(
            flat.key_text(0).as_deref(),
            Some("all 3 cells equal: none marked best")
        );
        let svg = svg_of((1000, 720), |a| flat.draw(a));
        assert!(
            !svg.contains("stroke=\"#FF0000\""),
            "a red mark on equal cells"
        );
        assert!(svg.contains("none marked best"));
    }
}
