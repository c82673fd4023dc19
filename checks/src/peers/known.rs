//! The check's known misses (`checks/peers/known-misses.txt`): timing figures of a reader and
//! shape the presets do not reach yet, each with its reason, so that the check stays a
//! failing test for everything else. Only timing figures (mean requests in flight, wall time)
//! can be known misses; counts, bytes and ranges never can. A row is shown as a known miss
//! in the table, and an entry whose figure came within its tolerance is reported so it can go.

use super::{PeerReader, PeerShape};

/// A figure that may be a known miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimingFigure {
    InFlight,
    Wall,
}

impl TimingFigure {
    pub fn name(self) -> &'static str {
        match self {
            TimingFigure::InFlight => "in-flight",
            TimingFigure::Wall => "wall",
        }
    }
}

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownMiss {
    pub shape: PeerShape,
    pub reader: PeerReader,
    pub figure: TimingFigure,
    pub reason: String,
}

/// Lines the file may have.
pub const MAX_KNOWN_MISSES: usize = 64;

/// The committed list.
pub fn committed() -> Vec<KnownMiss> {
    // The file is part of the binary; a malformed one fails its own unit test.
    parse(include_str!("../../peers/known-misses.txt")).unwrap_or_default()
}

/// Parses `shape reader figure: reason` lines (`#` starts a comment line).
pub fn parse(text: &str) -> Result<Vec<KnownMiss>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if out.len() >= MAX_KNOWN_MISSES {
            return Err(format!(
                "line {n}: more than {MAX_KNOWN_MISSES} known misses"
            ));
        }
        let (head, reason) = line
            .split_once(':')
            .ok_or_else(|| format!("line {n}: expected `shape reader figure: reason`"))?;
        let words: Vec<&str> = head.split_whitespace().collect();
        let [shape, reader, figure] = words[..] else {
            return Err(format!(
                "line {n}: expected `shape reader figure` before the colon"
            ));
        };
        let shape =
            PeerShape::from_name(shape).ok_or_else(|| format!("line {n}: no shape `{shape}`"))?;
        let reader = PeerReader::from_name(reader)
            .ok_or_else(|| format!("line {n}: no reader `{reader}`"))?;
        let figure = match figure {
            "in-flight" => TimingFigure::InFlight,
            "wall" => TimingFigure::Wall,
            f => {
                return Err(format!(
                    "line {n}: `{f}` is not a timing figure (in-flight or wall)"
                ))
            }
        };
        let reason = reason.trim().to_string();
        if reason.is_empty() {
            return Err(format!("line {n}: a known miss needs its reason"));
        }
        out.push(KnownMiss {
            shape,
            reader,
            figure,
            reason,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_list_parses() {
        parse(include_str!("../../peers/known-misses.txt")).unwrap();
    }

    #[test]
    fn entries_name_a_shape_a_reader_a_timing_figure_and_a_reason() {
        let k = parse("# c\nlarge duckdb wall: why\n").unwrap();
        assert_eq!(k.len(), 1);
        assert_eq!(
            (k[0].shape, k[0].reader, k[0].figure),
            (PeerShape::Large, PeerReader::DuckDb, TimingFigure::Wall)
        );
        assert!(parse("large duckdb gets: x")
            .unwrap_err()
            .contains("not a timing figure"));
        assert!(parse("large duckdb wall:").unwrap_err().contains("reason"));
        assert!(parse("huge duckdb wall: x")
            .unwrap_err()
            .contains("no shape"));
        assert!(parse("large duckdb").unwrap_err().starts_with("line 1"));
    }
}
