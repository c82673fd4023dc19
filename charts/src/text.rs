//! Titles wrapped to the width they are drawn in, so that no title is cut at the canvas edge.

use crate::FAMILY;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Space kept free at each side of a title line, in pixels.
const SIDE: u32 = 12;

/// The lines of `text` at `size` px, each at most `max_px` wide where a break between words
/// allows it (a single word wider than that keeps a line of its own).
pub(crate) fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    max_px: u32,
) -> Vec<String> {
    let font = (crate::FAMILY, size).into_text_style(area);
    let width = |s: &str| area.estimate_text_size(s, &font).map_or(0, |(w, _)| w);
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if width(&format!("{line} {word}")) <= max_px => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn line_height(size: u32) -> u32 {
    size + size / 3
}

/// Draws `title` (at `size` px) and `subtitle` (smaller) centred at the top of `area`, each
/// wrapped to its width, and returns the area below them.
pub(crate) fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: Option<&str>,
    size: u32,
) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, _) = area.dim_in_pixel();
    let max_px = w.saturating_sub(2 * SIDE).max(1);
    let small = (size * 2 / 3).max(12);
    let mut blocks = vec![(wrap(area, title, size, max_px), size)];
    if let Some(s) = subtitle.filter(|s| !s.trim().is_empty()) {
        blocks.push((wrap(area, s, small, max_px), small));
    }
    let mut y = 8i32;
    for (lines, px) in &blocks {
        let style =
            TextStyle::from((FAMILY, *px).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        for line in lines {
            area.draw_text(line, &style, (w as i32 / 2, y))
                .map_err(|e| e.to_string())?;
            y += line_height(*px) as i32;
        }
    }
    let used = u32::try_from(y).unwrap_or(0) + 4;
    Ok(area.split_vertically(used).1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_title_wraps_to_lines_that_fit() {
        crate::register_fonts().unwrap();
        let mut svg = String::new();
        let root = SVGBackend::with_string(&mut svg, (400, 100)).into_drawing_area();
        let text =
            "many-small-files / default: wall_time vs input_format_parquet_coalesce_gap_bytes \
                    (at floor=0 on redesign)";
        let lines = wrap(&root, text, 22, 376);
        assert!(lines.len() >= 3, "{lines:?}");
        let font = (FAMILY, 22).into_text_style(&root);
        for line in &lines {
            let (w, _) = root.estimate_text_size(line, &font).unwrap();
            // Only a single word may be wider than the line.
            assert!(w <= 376 || !line.contains(' '), "{line}: {w} px");
        }
        assert_eq!(
            lines.join(" "),
            text.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
}
