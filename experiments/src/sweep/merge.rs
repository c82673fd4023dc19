//! `sim sweep merge`: the CSVs of a sweep's shards (`--shard K/N`) into the CSV one machine
//! would have written, byte for byte. The parts are checked before anything is written: one
//! fingerprint, one shard count, grid and header, every shard exactly once, every point of
//! every shard complete (an interrupted shard is named, with how to finish it). The merge
//! streams: point `p` is the next point of shard `p mod N`, so it holds one row at a time.
//! The output appears whole or not at all (written beside it, then renamed).

use super::fingerprint::{line_differences, PREFIX};
use super::shard::{Shard, ShardLine, SHARD_PREFIX};
use super::SweepError;
use limits::MAX_SWEEP_LINE_BYTES;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// What a merge wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeSummary {
    pub shards: usize,
    pub points: usize,
    pub rows: usize,
}

/// One shard's CSV, open after its comment lines and header.
struct Part {
    path: PathBuf,
    fingerprint: String,
    shard: ShardLine,
    header: csv::StringRecord,
    rows: csv::Reader<LineBounded<BufReader<std::fs::File>>>,
}

fn at(path: &Path, message: impl Into<String>) -> SweepError {
    SweepError::Output {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

/// A line as written (newline included), at most `MAX_SWEEP_LINE_BYTES`: a sweep file's
/// comment lines are read before anything says the file is a sweep's.
pub(crate) fn bounded_line(
    path: &Path,
    r: &mut BufReader<std::fs::File>,
) -> Result<String, SweepError> {
    let mut line = String::new();
    r.by_ref()
        .take(MAX_SWEEP_LINE_BYTES as u64 + 1)
        .read_line(&mut line)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => at(
                path,
                "its comment lines (the first two) are not text (not valid UTF-8): not a sweep CSV",
            ),
            _ => at(path, e.to_string()),
        })?;
    if line.len() > MAX_SWEEP_LINE_BYTES {
        return Err(at(
            path,
            format!("a line longer than {MAX_SWEEP_LINE_BYTES} bytes (limits::MAX_SWEEP_LINE_BYTES): not a sweep CSV"),
        ));
    }
    Ok(line)
}

/// A reader that fails once a line runs past `MAX_SWEEP_LINE_BYTES` without a newline: the csv
/// crate buffers a record of any length, so a sweep file's data rows are read through it.
pub(crate) struct LineBounded<R> {
    inner: R,
    since_newline: usize,
}

impl<R> LineBounded<R> {
    pub(crate) fn new(inner: R) -> Self {
        LineBounded {
            inner,
            since_newline: 0,
        }
    }
}

/// The error [`LineBounded`] reads with, inside an `io::Error` of kind `InvalidData`: a type of
/// its own, so that a caller tells it from other read errors by type, not by message text
/// ([`is_line_too_long`]).
#[derive(Debug)]
pub(crate) struct LineTooLong;

impl std::fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "a line longer than MAX_SWEEP_LINE_BYTES (limits::MAX_SWEEP_LINE_BYTES): not a sweep CSV",
        )
    }
}

impl std::error::Error for LineTooLong {}

/// Whether a CSV read failed because [`LineBounded`] met a line past the bound.
pub(crate) fn is_line_too_long(e: &csv::Error) -> bool {
    match e.kind() {
        csv::ErrorKind::Io(io) => io.get_ref().is_some_and(|inner| inner.is::<LineTooLong>()),
        _ => false,
    }
}

impl<R: Read> Read for LineBounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = buf.get(..n).unwrap_or_default();
        // The line running on from the last read ends at this read's first newline; the lines
        // after it are inside this read (at most `buf.len()` bytes), the last still running.
        let (ended, running) = match (
            read.iter().position(|&b| b == b'\n'),
            read.iter().rposition(|&b| b == b'\n'),
        ) {
            (Some(first), Some(last)) => (self.since_newline.saturating_add(first), n - last - 1),
            _ => (0, self.since_newline.saturating_add(n)),
        };
        self.since_newline = running;
        if ended.max(running) > MAX_SWEEP_LINE_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                LineTooLong,
            ));
        }
        Ok(n)
    }
}

/// A comment line, at most `MAX_SWEEP_LINE_BYTES`, without its newline.
fn comment_line(path: &Path, r: &mut BufReader<std::fs::File>) -> Result<String, SweepError> {
    Ok(bounded_line(path, r)?
        .trim_end_matches(['\n', '\r'])
        .to_string())
}

fn open_part(path: &Path) -> Result<Part, SweepError> {
    let file = std::fs::File::open(path).map_err(|e| at(path, e.to_string()))?;
    let mut r = BufReader::new(file);
    let fingerprint = comment_line(path, &mut r)?;
    if !fingerprint.starts_with(PREFIX) {
        return Err(at(
            path,
            "not a sweep CSV: its first line is not a `# sim sweep` fingerprint",
        ));
    }
    let second = comment_line(path, &mut r)?;
    if !second.starts_with(SHARD_PREFIX) {
        return Err(at(
            path,
            "not a shard's CSV: its second line is not `# sim sweep shard K/N; ...` (a sweep \
             run without --shard is whole already)",
        ));
    }
    let shard = ShardLine::parse(&second).map_err(|e| at(path, e))?;
    let mut rows = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(LineBounded::new(r));
    let mut header = csv::StringRecord::new();
    if !rows
        .read_record(&mut header)
        .map_err(|e| at(path, e.to_string()))?
    {
        return Err(at(path, "no header line"));
    }
    Ok(Part {
        path: path.to_path_buf(),
        fingerprint,
        shard,
        header,
        rows,
    })
}

/// Checks that `parts` are the shards of one sweep, each once; returns them by shard index.
fn order_parts(parts: Vec<Part>) -> Result<Vec<Part>, SweepError> {
    let Some(first) = parts.first() else {
        return Err(SweepError::Merge("no parts given".into()));
    };
    let line = first.shard;
    let (count, points, arms) = (line.shard.count, line.points, line.arms);
    for p in &parts[1..] {
        if let Some(diff) = line_differences(&p.fingerprint, &first.fingerprint) {
            return Err(at(
                &p.path,
                format!("of another sweep than {}: {diff}", first.path.display()),
            ));
        }
        let s = &p.shard;
        if (s.shard.count, s.points, s.arms) != (count, points, arms) {
            return Err(at(
                &p.path,
                format!(
                    "shard {} of {} points and {} arms, where {} is shard {} of {points} points and {arms} arms",
                    s.shard,
                    s.points,
                    s.arms,
                    first.path.display(),
                    first.shard.shard
                ),
            ));
        }
        if p.header != first.header {
            return Err(at(
                &p.path,
                format!("its header differs from {}'s", first.path.display()),
            ));
        }
    }
    let mut slots: Vec<Option<Part>> = (0..count).map(|_| None).collect();
    for p in parts {
        let k = p.shard.shard.index;
        if let Some(Some(other)) = slots.get(k) {
            return Err(SweepError::Merge(format!(
                "shard {} is given twice: {} and {}",
                p.shard.shard,
                other.path.display(),
                p.path.display()
            )));
        }
        if let Some(slot) = slots.get_mut(k) {
            *slot = Some(p);
        }
    }
    let missing: Vec<String> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_none())
        .map(|(k, _)| Shard { index: k, count }.to_string())
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).map(String::as_str).collect();
        return Err(SweepError::Merge(format!(
            "{} of {count} shards missing: {}{}; give every shard's CSV (K from 0 to {})",
            missing.len(),
            shown.join(", "),
            if missing.len() > shown.len() {
                ", ..."
            } else {
                ""
            },
            count - 1
        )));
    }
    Ok(slots.into_iter().flatten().collect())
}

/// Merges the shards' CSVs `parts` into `output`.
pub fn merge(parts: &[PathBuf], output: &Path) -> Result<MergeSummary, SweepError> {
    let opened = parts
        .iter()
        .map(|p| open_part(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut parts = order_parts(opened)?;
    let Some(first) = parts.first() else {
        return Err(SweepError::Merge("no parts given".into()));
    };
    let (line, fingerprint, header) =
        (first.shard, first.fingerprint.clone(), first.header.clone());
    let partial = output.with_extension("csv.merging");
    let written = write_merged(&partial, &fingerprint, &header, &mut parts, line)
        .and_then(|()| std::fs::rename(&partial, output).map_err(|e| at(output, e.to_string())));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    Ok(MergeSummary {
        shards: line.shard.count,
        points: line.points,
        rows: line.points * line.arms,
    })
}

/// The merged CSV at `path`: the fingerprint, the header, every point's rows; synced.
fn write_merged(
    path: &Path,
    fingerprint: &str,
    header: &csv::StringRecord,
    parts: &mut [Part],
    line: ShardLine,
) -> Result<(), SweepError> {
    let fail = |e: &dyn std::fmt::Display| at(path, e.to_string());
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut out = std::io::BufWriter::new(file);
    writeln!(out, "{fingerprint}").map_err(|e| fail(&e))?;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(out);
    w.write_record(header).map_err(|e| fail(&e))?;
    copy_rows(parts, &mut w, line.points, line.arms)?;
    let out = w.into_inner().map_err(|e| fail(&e))?;
    let file = out.into_inner().map_err(|e| fail(&e))?;
    file.sync_all().map_err(|e| fail(&e))
}

/// Copies every point's rows, in point order, from its shard; checks each shard ends there.
fn copy_rows<W: Write>(
    parts: &mut [Part],
    w: &mut csv::Writer<W>,
    points: usize,
    arms: usize,
) -> Result<(), SweepError> {
    let count = parts.len();
    let mut rec = csv::StringRecord::new();
    for point in 0..points {
        let Some(part) = parts.get_mut(Shard::of_point(point, count)) else {
            return Err(SweepError::Merge(format!("no shard for point {point}")));
        };
        for arm in 0..arms {
            let more = part
                .rows
                .read_record(&mut rec)
                .map_err(|e| at(&part.path, e.to_string()))?;
            let incomplete = || {
                at(
                    &part.path,
                    format!(
                        "shard {} is incomplete: it ends before point {point} (arm {} of {arms}); \
                         run that shard again with --resume",
                        part.shard.shard,
                        arm + 1
                    ),
                )
            };
            if !more {
                return Err(incomplete());
            }
            if rec.get(0) != Some(point.to_string().as_str()) {
                return Err(at(
                    &part.path,
                    format!(
                        "line {}: point `{}` where shard {} has point {point} next",
                        rec.position().map_or(0, |p| p.line()),
                        rec.get(0).unwrap_or(""),
                        part.shard.shard
                    ),
                ));
            }
            w.write_record(&rec)
                .map_err(|e| SweepError::Merge(e.to_string()))?;
        }
    }
    for part in parts.iter_mut() {
        if part
            .rows
            .read_record(&mut rec)
            .map_err(|e| at(&part.path, e.to_string()))?
        {
            return Err(at(
                &part.path,
                format!(
                    "line {}: rows after the last point of shard {}",
                    rec.position().map_or(0, |p| p.line()),
                    part.shard.shard
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` through [`LineBounded`] in reads of `chunk` bytes.
    fn read_all(text: &[u8], chunk: usize) -> std::io::Result<usize> {
        let mut r = LineBounded::new(std::io::Cursor::new(text));
        let mut buf = vec![0u8; chunk];
        let mut total = 0;
        loop {
            match r.read(&mut buf)? {
                0 => return Ok(total),
                n => total += n,
            }
        }
    }

    #[test]
    fn a_line_past_the_bound_fails_however_the_reads_fall() {
        let line = |len: usize| {
            let mut v = b"a,b\n".to_vec();
            v.extend(std::iter::repeat_n(b'9', len));
            v.extend(b"\nc,d\n");
            v
        };
        let at_bound = line(MAX_SWEEP_LINE_BYTES);
        let past = line(MAX_SWEEP_LINE_BYTES + 1);
        for chunk in [7, 8192, 1 << 20] {
            assert_eq!(
                read_all(&at_bound, chunk).unwrap(),
                at_bound.len(),
                "{chunk}"
            );
            let e = read_all(&past, chunk).unwrap_err();
            assert!(
                e.to_string().contains("MAX_SWEEP_LINE_BYTES"),
                "{chunk}: {e}"
            );
        }
        // Through the csv reader, the error is told by its type (`--resume` refuses on it and
        // takes any other read error as a torn end).
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(LineBounded::new(std::io::Cursor::new(past)));
        let mut rec = csv::StringRecord::new();
        assert!(rdr.read_record(&mut rec).unwrap());
        let e = rdr.read_record(&mut rec).unwrap_err();
        assert!(is_line_too_long(&e), "{e}");
        let other = csv::ReaderBuilder::new()
            .from_reader(std::io::Cursor::new(b"a\n\xff\n".to_vec()))
            .records()
            .find_map(Result::err);
        assert!(other.is_some_and(|e| !is_line_too_long(&e)));
    }
}
