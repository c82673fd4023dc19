//! The sweep CSV: the fingerprint line, a shard's line (`shard.rs`) when it is one, the header,
//! then one row per (point, arm) in point order. Opening for `--resume` keeps the complete
//! leading points of a file with the same fingerprint and shard (cutting a torn or partial last
//! point off in place, so no valid row is rewritten or lost) and appends after them.

use super::fingerprint::Fingerprint;
use super::shard::{ShardLine, SHARD_PREFIX};
use super::values::Axis;
use super::{SweepError, SweepRow};
use crate::report::{Metric, Summary};
use std::collections::BTreeMap;
use std::io::{BufRead, Seek, Write};
use std::path::{Path, PathBuf};

pub(super) fn header(axes: &[Axis]) -> Vec<String> {
    let mut h = vec!["point".to_string()];
    h.extend(axes.iter().map(|a| a.name.clone()));
    h.extend(["arm", "strategy", "reps"].map(String::from));
    for m in Metric::all() {
        let base = format!("{}{}", m.name(), m.unit().csv_suffix());
        h.push(format!("{base}_mean"));
        h.push(format!("{base}_std"));
        h.push(format!("{base}_ci95"));
    }
    h
}

fn record(row: &SweepRow, reps: u32) -> Vec<String> {
    let mut r = vec![row.point.to_string()];
    r.extend(row.values.iter().cloned());
    r.push(row.arm.clone());
    r.push(row.strategy.clone());
    r.push(reps.to_string());
    for (_, s) in &row.summaries {
        r.push(format!("{}", s.mean));
        r.push(format!("{}", s.std));
        r.push(format!("{}", s.ci95));
    }
    r
}

/// Rows go out in point order, each point's rows once all points before it are out.
pub(super) struct Writer {
    out: csv::Writer<std::fs::File>,
    /// The points this file holds, in order (every grid point, or one shard's).
    order: Vec<usize>,
    /// Points of `order` on disk.
    next: usize,
    pending: BTreeMap<usize, Vec<SweepRow>>,
}

impl Writer {
    /// Queues a finished point; writes and flushes every point now in order. Returns the
    /// number of points complete on disk.
    pub(super) fn offer(
        &mut self,
        point: usize,
        rows: Vec<SweepRow>,
        reps: u32,
    ) -> std::io::Result<usize> {
        debug_assert!(
            self.order[self.next..].contains(&point),
            "point {point} offered twice or not of this file"
        );
        self.pending.insert(point, rows);
        while let Some(rows) = self
            .order
            .get(self.next)
            .and_then(|p| self.pending.remove(p))
        {
            for row in &rows {
                self.out.write_record(record(row, reps))?;
            }
            self.out.flush()?;
            self.next += 1;
        }
        Ok(self.next)
    }

    /// Points of the file's order complete on disk.
    pub(super) fn points_on_disk(&self) -> usize {
        self.next
    }
}

fn out_err(path: &Path) -> impl Fn(String) -> SweepError + '_ {
    move |message| SweepError::Output {
        path: path.to_path_buf(),
        message,
    }
}

/// Where a sweep's rows go: the file, what it holds, and whether to resume it.
pub(super) struct Target<'a> {
    pub path: &'a Path,
    pub fingerprint: &'a Fingerprint,
    /// The shard's line, when the file is one shard's.
    pub shard: Option<ShardLine>,
    pub hdr: &'a [String],
    pub arms: usize,
    /// The points the file holds, in order.
    pub order: Vec<usize>,
    pub resume: bool,
}

/// Opens the output: fresh (fingerprint, shard line and header), or, with `resume`, after the
/// complete leading points of an earlier run of the same sweep. Returns the points kept (a
/// count of `order`).
pub(super) fn open(t: Target<'_>) -> Result<(usize, Writer), SweepError> {
    let Target {
        path,
        fingerprint,
        shard,
        hdr,
        arms,
        order,
        resume,
    } = t;
    let err = out_err(path);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    }
    if resume && path.exists() {
        let (points, keep_bytes) =
            complete_prefix(path, fingerprint, shard.as_ref(), hdr, arms, &order)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| err(e.to_string()))?;
        // Cut off a partial last point (its rows run again) and any torn line.
        file.set_len(keep_bytes).map_err(|e| err(e.to_string()))?;
        let mut file = file;
        file.seek(std::io::SeekFrom::End(0))
            .map_err(|e| err(e.to_string()))?;
        let out = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file);
        return Ok((
            points,
            Writer {
                out,
                order,
                next: points,
                pending: BTreeMap::new(),
            },
        ));
    }
    // The head (fingerprint, shard line, header) goes to a file beside the output that is then
    // renamed onto it: an output that exists has a whole head, so `--resume` after a run killed
    // while writing it does not find a torn first line and refuse every retry.
    let mut head = Vec::new();
    writeln!(head, "{}", fingerprint.line()).map_err(|e| err(e.to_string()))?;
    if let Some(s) = &shard {
        writeln!(head, "{}", s.line()).map_err(|e| err(e.to_string()))?;
    }
    let mut header = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(head);
    header.write_record(hdr).map_err(|e| err(e.to_string()))?;
    let head = header.into_inner().map_err(|e| err(e.to_string()))?;
    let mut partial = path.as_os_str().to_owned();
    partial.push(".head");
    let partial = std::path::PathBuf::from(partial);
    std::fs::write(&partial, head).map_err(|e| err(e.to_string()))?;
    std::fs::rename(&partial, path).map_err(|e| err(e.to_string()))?;
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(|e| err(e.to_string()))?;
    let out = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    Ok((
        0,
        Writer {
            out,
            order,
            next: 0,
            pending: BTreeMap::new(),
        },
    ))
}

/// The number of complete leading points of an earlier run, and the byte length they fill
/// (fingerprint, shard line and header included). Refuses a file of another sweep or shard,
/// naming what differs.
fn complete_prefix(
    path: &Path,
    fingerprint: &Fingerprint,
    shard: Option<&ShardLine>,
    hdr: &[String],
    arms: usize,
    order: &[usize],
) -> Result<(usize, u64), SweepError> {
    let err = out_err(path);
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let mut reader = std::io::BufReader::new(file);
    let first = super::merge::bounded_line(path, &mut reader)?;
    if let Some(diff) = fingerprint.differences(first.trim_end()) {
        return Err(err(format!(
            "--resume refused: the file holds another sweep ({diff}); write to another file \
             (-o) or run without --resume to start over"
        )));
    }
    let mut second = String::new();
    if reader
        .fill_buf()
        .map_err(|e| err(e.to_string()))?
        .starts_with(SHARD_PREFIX.as_bytes())
    {
        second = super::merge::bounded_line(path, &mut reader)?;
    }
    let theirs = (!second.is_empty()).then(|| second.trim_end().to_string());
    let mine = shard.map(ShardLine::line);
    if theirs != mine {
        let say = |l: &Option<String>| {
            l.as_deref()
                .and_then(|l| l.strip_prefix(SHARD_PREFIX))
                .map_or_else(|| "the whole sweep".to_string(), |s| format!("shard {s}"))
        };
        return Err(err(format!(
            "--resume refused: the file holds {}, this run is {}; give the same --shard, or \
             write to another file (-o)",
            say(&theirs),
            say(&mine)
        )));
    }
    let start = (first.len() + second.len()) as u64;
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .has_headers(false)
        .flexible(true)
        .from_reader(super::merge::LineBounded::new(reader));
    let mut rec = csv::StringRecord::new();
    let header_ok =
        rdr.read_record(&mut rec).unwrap_or(false) && rec.iter().eq(hdr.iter().map(String::as_str));
    if !header_ok {
        return Err(err(
            "--resume refused: its header differs from this sweep's columns although the \
             fingerprint matches (was it edited?); write to another file"
                .into(),
        ));
    }
    let mut keep = start + rdr.position().byte();
    let mut before_last = keep;
    let mut point = 0usize;
    let mut in_point = 0usize;
    // A torn last line (or any row out of order) ends the prefix; a line past the bound is
    // refused, not cut off with every row after it.
    loop {
        match rdr.read_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if super::merge::is_line_too_long(&e) => {
                return Err(err(format!("--resume refused: {e}")))
            }
            Err(_) => break,
        }
        let expected = order.get(point).map(usize::to_string);
        if rec.len() != hdr.len() || rec.get(0) != expected.as_deref() {
            break;
        }
        in_point += 1;
        if in_point == arms {
            point += 1;
            in_point = 0;
            // The reader stands at the start of the next record: the prefix ends here.
            before_last = keep;
            keep = start + rdr.position().byte();
        }
    }
    // A line torn inside its last field still has every field: only its missing newline
    // tells. Such a point is not complete.
    let len = std::fs::metadata(path)
        .map_err(|e| err(e.to_string()))?
        .len();
    if point > 0 && keep == len && !ends_with_newline(path, len)? {
        point -= 1;
        keep = before_last;
    }
    Ok((point, keep))
}

fn ends_with_newline(path: &Path, len: u64) -> Result<bool, SweepError> {
    use std::io::Read;
    let err = out_err(path);
    let mut f = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    f.seek(std::io::SeekFrom::Start(len.saturating_sub(1)))
        .map_err(|e| err(e.to_string()))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last).map_err(|e| err(e.to_string()))?;
    Ok(last[0] == b'\n')
}

/// Every row of the file (after the fingerprint and header), for plots.
pub(super) fn read_rows(
    path: &PathBuf,
    axes: &[Axis],
    grid: &[Vec<usize>],
) -> Result<Vec<SweepRow>, SweepError> {
    let err = out_err(path);
    let file = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    let mut rdr = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .has_headers(true)
        .from_reader(super::merge::LineBounded::new(std::io::BufReader::new(
            file,
        )));
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| err(e.to_string()))?;
        let f: Vec<&str> = rec.iter().collect();
        let n_axes = axes.len();
        let field = |i: usize| f.get(i).copied().unwrap_or("");
        let point: usize = field(0)
            .parse()
            .map_err(|_| err(format!("bad point number `{}`", field(0))))?;
        let coords = grid
            .get(point)
            .cloned()
            .ok_or_else(|| err(format!("point {point} is outside the grid")))?;
        let values = (1..1 + n_axes).map(|i| field(i).to_string()).collect();
        let n: usize = field(3 + n_axes).parse().unwrap_or(1);
        let num = |i: usize| field(i).parse::<f64>().unwrap_or(f64::NAN);
        let summaries = Metric::all()
            .enumerate()
            .map(|(mi, metric)| {
                let at = 4 + n_axes + mi * 3;
                (
                    metric,
                    Summary {
                        n,
                        mean: num(at),
                        std: num(at + 1),
                        ci95: num(at + 2),
                    },
                )
            })
            .collect();
        rows.push(SweepRow {
            point,
            coords,
            values,
            arm: field(1 + n_axes).to_string(),
            strategy: field(2 + n_axes).to_string(),
            summaries,
        });
    }
    Ok(rows)
}
