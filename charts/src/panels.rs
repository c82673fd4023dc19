//! Line charts stacked vertically (a timeline: concurrency, bytes in flight, memory).

use crate::{save_both, text, ChartError, LineChart};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Panels {
    pub title: String,
    /// A smaller line under the title (e.g. what the reader does not track, and so is not drawn).
    pub subtitle: Option<String>,
    pub panels: Vec<LineChart>,
}

/// Height of one panel, and of the title above them all, in pixels.
const PANEL_HEIGHT: u32 = 330;
const TITLE_HEIGHT: u32 = 60;
const SUBTITLE_HEIGHT: u32 = 26;

impl Panels {
    pub fn save(&self, stem: &Path) -> Result<Vec<PathBuf>, ChartError> {
        if self.panels.is_empty() {
            return Err(ChartError::Empty(self.title.clone()));
        }
        let subtitle = if self.subtitle.is_some() {
            SUBTITLE_HEIGHT
        } else {
            0
        };
        let h = TITLE_HEIGHT + subtitle + PANEL_HEIGHT * self.panels.len() as u32;
        save_both(stem, (1000, h), |a| self.draw(&a), |a| self.draw(&a))
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let area = text::draw_title(area, &self.title, self.subtitle.as_deref(), 24)?;
        let areas = area.split_evenly((self.panels.len(), 1));
        // One legend width for every panel, so that their time axes line up.
        let legend = self
            .panels
            .iter()
            .filter(|p| p.shows_legend())
            .map(|p| p.legend_width(&area))
            .max();
        for (panel, a) in self.panels.iter().zip(&areas) {
            panel.draw_beside(a, legend)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Series;

    #[test]
    fn timeline_panels_render() {
        let dir = std::env::temp_dir().join(format!("charts-panels-{}", std::process::id()));
        let line = |name: &str| LineChart {
            title: name.into(),
            subtitle: None,
            x_label: "time (s)".into(),
            y_label: "requests".into(),
            series: vec![Series::line(
                "in flight",
                (0..500)
                    .map(|i| (i as f64 / 100.0, (i % 17) as f64))
                    .collect(),
            )],
            log_x: false,
            log_y: false,
            x_format: None,
            y_format: None,
            x_ticks: None,
        };
        let paths = Panels {
            title: "timeline".into(),
            subtitle: Some("not tracked: memory".into()),
            panels: vec![line("a"), line("b"), line("c")],
        }
        .save(&dir.join("panels"))
        .unwrap();
        let png = std::fs::read(&paths[0]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert!(png.len() > 10_000);
        let svg = std::fs::read_to_string(&paths[1]).unwrap();
        assert!(svg.contains("time (s)") && svg.contains("timeline"));
        assert!(svg.contains("not tracked: memory"));
        assert!(Panels {
            title: "x".into(),
            subtitle: None,
            panels: vec![]
        }
        .save(&dir.join("empty"))
        .is_err());
    }
}
