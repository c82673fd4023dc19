//! The findings checks (`docs/findings.md` F1-F10): each runs a shipped scenario, compares what the
//! simulator gives with what was measured on real S3, and says whether it lies inside the
//! tolerance written beside it. `sim findings` prints them (the README's table is that output);
//! `sim/tests/findings.rs` asserts the ones the simulator reproduces, and their companions: the
//! same effect with the mechanism behind it switched off, which must then disappear.

use experiments::report::{ArmReport, Metric, Report};
use experiments::run::{run_scenario, RunOptions, ScenarioRunError};
use scenario::ScenarioError;
use std::path::{Path, PathBuf};

mod f8_f10;

/// One check: a measured effect, its simulated value and the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// Stable name, e.g. `F4.floor0.gets`.
    pub id: &'static str,
    /// `F1`..`F10`.
    pub finding: &'static str,
    pub what: &'static str,
    pub measured: String,
    pub simulated: String,
    pub tolerance: String,
    pub pass: bool,
    /// A mechanism-off companion: passes when the effect is gone with the mechanism off.
    pub companion: bool,
    /// Why the model misses it, if it is a known miss ([`KNOWN_MISSES`]).
    pub known_miss: Option<&'static str>,
}

/// Checks the model is known to miss, with what the model lacks. A test asserts this list is
/// exactly the set of failing checks, so a fix or a new miss shows.
pub const KNOWN_MISSES: &[(&str, &str)] = &[(
    "F5.speedup",
    "the base reads one GET at a time at the store's per-request rate: 42 MiB/s on the shipped \
     S3 store (median stream 57 MiB/s, at most 95) where F5's node saw about 90 MiB/s; and it \
     reads 1.69x the redesign's bytes (through the unread columns under its 4 MiB seek \
     threshold) where F5's rates imply 0.7-1.1x; the query's columns are not published",
)];

#[derive(Debug, thiserror::Error)]
pub enum FindingsError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Run(#[from] ScenarioRunError),
    #[error("{scenario}: the report has no {what}")]
    Missing { scenario: String, what: String },
}

/// Runs the checks against the scenarios in `dir` (the repository's `scenarios/`).
pub struct Findings {
    dir: PathBuf,
}

/// A closed tolerance band on a ratio or a value.
#[derive(Debug, Clone, Copy)]
struct Band {
    lo: f64,
    hi: f64,
}

impl Band {
    fn new(lo: f64, hi: f64) -> Self {
        Band { lo, hi }
    }
    fn holds(&self, v: f64) -> bool {
        v.is_finite() && v >= self.lo && v <= self.hi
    }
}

fn x(v: f64) -> String {
    format!("{v:.2}x")
}
fn pct(v: f64) -> String {
    format!("{:+.0}%", (v - 1.0) * 100.0)
}
fn secs(ns: f64) -> String {
    format!("{:.2}s", ns / 1e9)
}
fn mib(b: f64) -> String {
    format!("{:.0}MiB", b / (1u64 << 20) as f64)
}
fn count(v: f64) -> String {
    let n = v.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

struct Builder {
    checks: Vec<Check>,
}

impl Builder {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        id: &'static str,
        finding: &'static str,
        what: &'static str,
        measured: impl Into<String>,
        simulated: impl Into<String>,
        tolerance: impl Into<String>,
        pass: bool,
        companion: bool,
    ) {
        self.checks.push(Check {
            id,
            finding,
            what,
            measured: measured.into(),
            simulated: simulated.into(),
            tolerance: tolerance.into(),
            pass,
            companion,
            known_miss: None,
        });
    }
}

fn arm<'a>(r: &'a Report, case: &str, arm: &str) -> Result<&'a ArmReport, FindingsError> {
    r.case(case)
        .and_then(|c| c.arms.iter().find(|a| a.arm == arm))
        .ok_or_else(|| FindingsError::Missing {
            scenario: r.scenario.clone(),
            what: format!("case {case}, arm {arm}"),
        })
}

fn mean(r: &Report, case: &str, a: &str, metric: Metric) -> Result<f64, FindingsError> {
    Ok(arm(r, case, a)?.mean(metric))
}

fn per_query(
    r: &Report,
    case: &str,
    a: &str,
    q: &str,
    metric: Metric,
) -> Result<f64, FindingsError> {
    arm(r, case, a)?
        .per_query
        .iter()
        .find(|(name, _)| name == q)
        .map(|(_, m)| m.value(metric))
        .ok_or_else(|| FindingsError::Missing {
            scenario: r.scenario.clone(),
            what: format!("query {q} in case {case}, arm {a}"),
        })
}

impl Findings {
    pub fn new(scenarios_dir: impl Into<PathBuf>) -> Self {
        Findings {
            dir: scenarios_dir.into(),
        }
    }

    fn report(
        &self,
        name: &str,
        set: &[&str],
        case: Option<&str>,
    ) -> Result<Report, FindingsError> {
        let ovs = set
            .iter()
            .map(|s| scenario::parse_override(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ScenarioError::at_key(&self.dir.join(name), "", "--set", e.to_string()))?;
        let loaded = scenario::load(&self.dir.join(name), &ovs)?;
        let opts = RunOptions {
            cases: case.map(|c| vec![c.to_string()]).unwrap_or_default(),
            ..Default::default()
        };
        Ok(run_scenario(&loaded, &opts)?.report)
    }

    /// Every check, F1 to F10, in order.
    pub fn all(&self) -> Result<Vec<Check>, FindingsError> {
        let mut b = Builder { checks: Vec::new() };
        self.f1_f3(&mut b)?;
        self.f4(&mut b)?;
        self.f5(&mut b)?;
        self.f6(&mut b)?;
        self.f7(&mut b)?;
        self.f8(&mut b)?;
        self.f9(&mut b)?;
        self.f10(&mut b)?;
        for c in &mut b.checks {
            c.known_miss = KNOWN_MISSES
                .iter()
                .find(|(id, _)| *id == c.id)
                .map(|(_, why)| *why);
        }
        Ok(b.checks)
    }

    fn f1_f3(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let r = self.report("iceberg-bench.yaml", &[], None)?;
        let m = |case: &str, a: &str, k: Metric| mean(&r, case, a, k);
        let warm = m("metadata-warm", "redesign", Metric::WallTime)?
            / m("metadata-warm", "base", Metric::WallTime)?;
        let band = Band::new(0.65, 0.90);
        b.push(
            "F1.warm.time",
            "F1",
            "iceberg-bench, metadata warm: redesign vs base wall time",
            "-20% (10.7s -> 8.5s)",
            format!(
                "{} ({} -> {})",
                pct(warm),
                secs(m("metadata-warm", "base", Metric::WallTime)?),
                secs(m("metadata-warm", "redesign", Metric::WallTime)?)
            ),
            "-10% to -35%",
            band.holds(warm),
            false,
        );

        let queries: Vec<String> = arm(&r, "metadata-warm", "base")?
            .per_query
            .iter()
            .map(|(q, _)| q.clone())
            .collect();
        let mut faster = 0;
        for q in &queries {
            if per_query(&r, "metadata-warm", "redesign", q, Metric::WallTime)?
                < per_query(&r, "metadata-warm", "base", q, Metric::WallTime)?
            {
                faster += 1;
            }
        }
        b.push(
            "F1.warm.every_query",
            "F1",
            "metadata warm: queries on which the redesign is faster",
            "23 of 23",
            format!("{faster} of {}", queries.len()),
            "at least 20 of 23",
            faster >= 20 && queries.len() == 23,
            false,
        );

        // Companion: without R5 (no issue queue and no stage-driven issue either: the base's
        // serial stage chain) the gain is gone. Floor 0 alone is not R5 off: it keeps the
        // stages' issue (F9).
        let no_r5 = self.report(
            "iceberg-bench.yaml",
            &["arms.redesign.settings.r5_issue_queue=false"],
            Some("metadata-warm"),
        )?;
        let warm_off = mean(&no_r5, "metadata-warm", "redesign", Metric::WallTime)?
            / mean(&no_r5, "metadata-warm", "base", Metric::WallTime)?;
        b.push(
            "F1.warm.without_r5",
            "F1",
            "companion: metadata warm, redesign without R5 (r5_issue_queue=false)",
            "(with it: -20%)",
            pct(warm_off),
            "the gain gone: above -5%",
            warm_off > 0.95,
            true,
        );

        let cold = m("fully-cold", "redesign", Metric::WallTime)?
            / m("fully-cold", "base", Metric::WallTime)?;
        b.push(
            "F1.cold.time",
            "F1",
            "fully cold: the difference shrinks to a few percent",
            "-2% (37.6s -> 37.0s)",
            format!(
                "{} ({} -> {})",
                pct(cold),
                secs(m("fully-cold", "base", Metric::WallTime)?),
                secs(m("fully-cold", "redesign", Metric::WallTime)?)
            ),
            "-10% to +2%, and a smaller gain than metadata warm",
            Band::new(0.90, 1.02).holds(cold) && cold > warm,
            false,
        );
        let phase = 1.0
            - m("metadata-warm", "base", Metric::WallTime)?
                / m("fully-cold", "base", Metric::WallTime)?;
        b.push(
            "F1.cold.manifests",
            "F1",
            "fully cold: share of base time the metadata phase adds",
            "72% (27.7s of 37.6s)",
            format!("{:.0}%", phase * 100.0),
            "55% to 85%",
            Band::new(0.55, 0.85).holds(phase),
            false,
        );
        let fw = m("fully-warm", "redesign", Metric::WallTime)?
            / m("fully-warm", "base", Metric::WallTime)?;
        b.push(
            "F1.warm_all.time",
            "F1",
            "fully warm: redesign vs base wall time",
            "-20% (15.2s -> 12.1s)",
            pct(fw),
            "-10% to -35%",
            band.holds(fw),
            false,
        );

        let bytes = m("metadata-warm", "redesign", Metric::StoreBytes)?
            / m("metadata-warm", "base", Metric::StoreBytes)?;
        b.push(
            "F2.bytes",
            "F2",
            "metadata warm: bytes read, redesign vs base",
            "-38% (1767MiB -> 1099MiB)",
            format!(
                "{} ({} -> {})",
                pct(bytes),
                mib(m("metadata-warm", "base", Metric::StoreBytes)?),
                mib(m("metadata-warm", "redesign", Metric::StoreBytes)?)
            ),
            "-30% to -45%",
            Band::new(0.55, 0.70).holds(bytes),
            false,
        );
        let base_mib = m("metadata-warm", "base", Metric::StoreBytes)? / (1u64 << 20) as f64;
        b.push(
            "F2.scale",
            "F2",
            "metadata warm: base bytes over the 23 queries",
            "1767MiB",
            format!("{base_mib:.0}MiB"),
            "within 15%",
            Band::new(1767.0 * 0.85, 1767.0 * 1.15).holds(base_mib),
            false,
        );
        let gets = m("metadata-warm", "redesign", Metric::Gets)?
            / m("metadata-warm", "base", Metric::Gets)?;
        b.push(
            "F2.requests",
            "F2",
            "metadata warm: requests, redesign vs base",
            "+12%",
            pct(gets),
            "+3% to +25%",
            Band::new(1.03, 1.25).holds(gets),
            false,
        );

        let amp = |a: &str, q: &str| {
            per_query(
                &r,
                "metadata-warm",
                a,
                q,
                Metric::AmplificationTaskOverNeeded,
            )
        };
        let (q20b, q20r) = (amp("base", "q20")?, amp("redesign", "q20")?);
        b.push(
            "F3.q20",
            "F3",
            "q20 read amplification, base -> redesign (simulated: task_bytes / needed_bytes; README)",
            "41.5x -> 1.4x",
            format!("{} -> {}", x(q20b), x(q20r)),
            "base at least 20x, redesign under 2x",
            q20b >= 20.0 && q20r < 2.0,
            false,
        );
        let (q14b, q14r) = (amp("base", "q14")?, amp("redesign", "q14")?);
        b.push(
            "F3.q14",
            "F3",
            "q14 read amplification, base -> redesign (simulated: task_bytes / needed_bytes)",
            "6.2x -> 1.7x",
            format!("{} -> {}", x(q14b), x(q14r)),
            "base at least 3x, redesign under 2x",
            q14b >= 3.0 && q14r < 2.0,
            false,
        );

        // Companion: without R2's bound the redesign bridges q20's clusters like base.
        let off = self.report(
            "iceberg-bench.yaml",
            &["arms.redesign.settings.r2_bounded_coalescing=false"],
            Some("metadata-warm"),
        )?;
        let q20_off = per_query(
            &off,
            "metadata-warm",
            "redesign",
            "q20",
            Metric::AmplificationTaskOverNeeded,
        )?;
        b.push(
            "F3.q20.without_r2",
            "F3",
            "companion: q20 amplification of the redesign without R2",
            "(base: 41.5x)",
            x(q20_off),
            "back to at least 20x",
            q20_off >= 20.0,
            true,
        );
        let bytes_off = mean(&off, "metadata-warm", "redesign", Metric::StoreBytes)?
            / mean(&off, "metadata-warm", "base", Metric::StoreBytes)?;
        b.push(
            "F2.bytes.without_r2",
            "F2",
            "companion: bytes of the redesign without R2 vs base",
            "(with R2: -38%)",
            pct(bytes_off),
            "the saving mostly gone: above -15%",
            bytes_off > 0.85,
            true,
        );
        Ok(())
    }

    fn f4(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let r = self.report("many-small-files.yaml", &[], None)?;
        let m = |a: &str, k: Metric| mean(&r, "default", a, k);
        let wall = m("redesign", Metric::WallTime)? / m("base", Metric::WallTime)?;
        b.push(
            "F4.defaults.time",
            "F4",
            "many-small-files: redesign defaults vs base wall time",
            "-2% (14.03s -> 13.74s)",
            format!(
                "{} ({} -> {})",
                pct(wall),
                secs(m("base", Metric::WallTime)?),
                secs(m("redesign", Metric::WallTime)?)
            ),
            "within 5%",
            Band::new(0.95, 1.05).holds(wall),
            false,
        );
        let gets = m("redesign", Metric::Gets)? / m("base", Metric::Gets)?;
        b.push(
            "F4.defaults.requests",
            "F4",
            "redesign defaults vs base requests",
            "9,968 vs 9,968",
            format!(
                "{} vs {}",
                count(m("redesign", Metric::Gets)?),
                count(m("base", Metric::Gets)?)
            ),
            "within 3%",
            Band::new(0.97, 1.03).holds(gets),
            false,
        );
        let bytes = m("redesign", Metric::StoreBytes)? / m("base", Metric::StoreBytes)?;
        b.push(
            "F4.defaults.bytes",
            "F4",
            "redesign defaults vs base bytes",
            "576MiB vs 576MiB",
            format!(
                "{} vs {}",
                mib(m("redesign", Metric::StoreBytes)?),
                mib(m("base", Metric::StoreBytes)?)
            ),
            "within 3%",
            Band::new(0.97, 1.03).holds(bytes),
            false,
        );
        let base_gets = m("base", Metric::Gets)?;
        b.push(
            "F4.base.requests",
            "F4",
            "base requests for the month (2,492 files)",
            "9,968",
            count(base_gets),
            "within 5%",
            Band::new(9968.0 * 0.95, 9968.0 * 1.05).holds(base_gets),
            false,
        );
        let g0 = m("floor-0", Metric::Gets)? / m("redesign", Metric::Gets)?;
        b.push(
            "F4.floor0.requests",
            "F4",
            "floor 0 (ratio alone) vs defaults: requests",
            "1.65x (16,440)",
            format!("{} ({})", x(g0), count(m("floor-0", Metric::Gets)?)),
            "1.4x to 1.9x",
            Band::new(1.4, 1.9).holds(g0),
            false,
        );
        let b0 = m("floor-0", Metric::StoreBytes)? / m("redesign", Metric::StoreBytes)?;
        b.push(
            "F4.floor0.bytes",
            "F4",
            "floor 0 vs defaults: bytes",
            "-13% (502MiB)",
            format!("{} ({})", pct(b0), mib(m("floor-0", Metric::StoreBytes)?)),
            "-8% to -20%",
            Band::new(0.80, 0.92).holds(b0),
            false,
        );
        let t0 = m("floor-0", Metric::WallTime)? / m("redesign", Metric::WallTime)?;
        b.push(
            "F4.floor0.time",
            "F4",
            "floor 0 vs defaults: wall time",
            "+37% to +46% (18.8-20.1s)",
            format!("{} ({})", pct(t0), secs(m("floor-0", Metric::WallTime)?)),
            "+15% to +80%",
            Band::new(1.15, 1.80).holds(t0),
            false,
        );

        let io = self.report(
            "many-small-files.yaml",
            &[
                "arms.floor-0.settings.input_format_parquet_read_amplification_floor_bytes=256KiB",
                "arms.floor-0.settings.input_format_parquet_max_io_threads=64",
            ],
            None,
        )?;
        let io_ratio = mean(&io, "default", "floor-0", Metric::WallTime)?
            / mean(&io, "default", "redesign", Metric::WallTime)?;
        b.push(
            "F4.io_threads",
            "F4",
            "defaults with input_format_parquet_max_io_threads=64 vs 16",
            "no difference",
            pct(io_ratio),
            "within 10%",
            Band::new(0.90, 1.10).holds(io_ratio),
            false,
        );

        // Companion: without R2 (whose ratio rule the floor bounds) the floor-0 arm's extra
        // requests disappear. (It put the floor back at 256 KiB, which made the arm the
        // redesign arm itself: it could not fail.)
        let off = self.report(
            "many-small-files.yaml",
            &["arms.floor-0.settings.r2_bounded_coalescing=false"],
            None,
        )?;
        let gb = mean(&off, "default", "floor-0", Metric::Gets)?
            / mean(&off, "default", "redesign", Metric::Gets)?;
        b.push(
            "F4.floor0.without_r2",
            "F4",
            "companion: the floor-0 arm without R2 (r2_bounded_coalescing=false)",
            "(with it: 1.65x the defaults' requests)",
            x(gb),
            "the extra requests gone: within 3% of defaults",
            Band::new(0.97, 1.03).holds(gb),
            true,
        );
        Ok(())
    }

    fn f5(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let case = "459-row-groups";
        let r = self.report("single-large-file.yaml", &[], Some(case))?;
        let m = |a: &str, k: Metric| mean(&r, case, a, k);
        let cb = m("base", Metric::MeanConcurrentGets)?;
        b.push(
            "F5.base.concurrency",
            "F5",
            "one large file (459 row groups): base mean GETs in flight",
            "0.98",
            format!("{cb:.2}"),
            "under 1.2",
            cb < 1.2,
            false,
        );
        let cr = m("redesign", Metric::MeanConcurrentGets)?;
        b.push(
            "F5.redesign.concurrency",
            "F5",
            "redesign mean GETs in flight",
            "19-70",
            format!("{cr:.1}"),
            "at least 8",
            cr >= 8.0,
            false,
        );
        let speedup = m("base", Metric::WallTime)? / m("redesign", Metric::WallTime)?;
        b.push(
            "F5.speedup",
            "F5",
            "redesign speed-up (less wall time)",
            "10-14x",
            format!(
                "{speedup:.1}x ({} -> {})",
                secs(m("base", Metric::WallTime)?),
                secs(m("redesign", Metric::WallTime)?)
            ),
            "8x to 20x",
            Band::new(8.0, 20.0).holds(speedup),
            false,
        );
        let c = self.report("single-large-file.yaml", &[], Some("control-200-files"))?;
        let control = mean(&c, "control-200-files", "base", Metric::WallTime)?
            / mean(&c, "control-200-files", "redesign", Metric::WallTime)?;
        b.push(
            "F5.control",
            "F5",
            "200-file control: speed-up",
            "(not published: the control's result is not given)",
            format!("{control:.1}x"),
            "under 2x",
            control < 2.0,
            false,
        );
        // Companion: without R5 (the base's serial stage chain) the gap is gone.
        let off = self.report(
            "single-large-file.yaml",
            &["arms.redesign.settings.r5_issue_queue=false"],
            Some(case),
        )?;
        let c_off = mean(&off, case, "redesign", Metric::MeanConcurrentGets)?;
        let s_off = mean(&off, case, "base", Metric::WallTime)?
            / mean(&off, case, "redesign", Metric::WallTime)?;
        b.push(
            "F5.without_r5",
            "F5",
            "companion: redesign without R5 (r5_issue_queue=false)",
            "(base: 0.98 in flight)",
            format!("{c_off:.2} in flight, {s_off:.1}x"),
            "under 1.2 in flight, under 2x",
            c_off < 1.2 && s_off < 2.0,
            true,
        );
        Ok(())
    }

    fn f6(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let on = self.report("fs-cache-cold.yaml", &[], Some("cache-on-cold"))?;
        let off = self.report("fs-cache-cold.yaml", &[], Some("cache-off"))?;
        let amp = |r: &Report, a: &str| -> Result<f64, FindingsError> {
            Ok(mean(r, "cache-on-cold", a, Metric::StoreBytes)?
                / mean(r, "cache-on-cold", a, Metric::TaskBytes)?)
        };
        let base_amp = amp(&on, "base")?;
        b.push(
            "F6.base.downloaded",
            "F6",
            "base, cold filesystem cache: downloaded over requested",
            "78x (450MB -> 35GB)",
            format!("{base_amp:.0}x"),
            "at least 20x",
            base_amp >= 20.0,
            false,
        );
        let slower = mean(&on, "cache-on-cold", "base", Metric::WallTime)?
            / mean(&off, "cache-off", "base", Metric::WallTime)?;
        b.push(
            "F6.base.slower",
            "F6",
            "base: cold cache on vs cache off, wall time",
            "2x",
            x(slower),
            "1.5x to 4x",
            Band::new(1.5, 4.0).holds(slower),
            false,
        );
        let red = amp(&on, "redesign")?;
        b.push(
            "F6.redesign",
            "F6",
            "redesign (R3): downloaded over its read tasks' bytes",
            "(F6 gives none; the project's acceptance criterion: at most 1.5x)",
            x(red),
            "at most 1.5x",
            red <= 1.5,
            false,
        );
        let no_r3 = self.report(
            "fs-cache-cold.yaml",
            &["arms.redesign.settings.r3_filesystem_cache_fixes=false"],
            Some("cache-on-cold"),
        )?;
        let a3 = amp(&no_r3, "redesign")?;
        b.push(
            "F6.without_r3",
            "F6",
            "companion: the redesign without R3",
            "(base: 78x)",
            format!("{a3:.0}x"),
            "back to at least 20x",
            a3 >= 20.0,
            true,
        );
        Ok(())
    }

    fn f7(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let one = self.report("clickbench-single-file.yaml", &[], Some("one-file"))?;
        let part = self.report(
            "clickbench-single-file.yaml",
            &[],
            Some("partitioned-100-files"),
        )?;
        let p = mean(
            &part,
            "partitioned-100-files",
            "single-source",
            Metric::WallTime,
        )?;
        let before = mean(&one, "one-file", "single-source", Metric::WallTime)? / p;
        b.push(
            "F7.before",
            "F7",
            "one local file, single source vs 100-file copy (Q23)",
            "3.2-3.5x (1.33-1.45s vs 0.42s)",
            x(before),
            "2x to 3.5x",
            Band::new(2.0, 3.5).holds(before),
            false,
        );
        let after = mean(&one, "one-file", "buckets", Metric::WallTime)? / p;
        b.push(
            "F7.buckets",
            "F7",
            "one local file, row-group buckets vs 100-file copy",
            "1.3x (0.55s vs 0.42s; from 3.2-3.5x)",
            format!("{} (from {})", x(after), x(before)),
            "1.1x to 1.7x, and under the single source",
            Band::new(1.1, 1.7).holds(after) && after < before,
            false,
        );
        let cpu = mean(&one, "one-file", "buckets", Metric::CpuUse)?
            / mean(&one, "one-file", "single-source", Metric::CpuUse)?;
        b.push(
            "F7.cpu",
            "F7",
            "CPU use, buckets over single source",
            "about 3x (6 -> 18 cores)",
            x(cpu),
            "2x to 4x",
            Band::new(2.0, 4.0).holds(cpu),
            false,
        );
        let rows = [
            mean(&one, "one-file", "single-source", Metric::Rows)?,
            mean(&one, "one-file", "buckets", Metric::Rows)?,
            mean(
                &part,
                "partitioned-100-files",
                "single-source",
                Metric::Rows,
            )?,
            mean(&part, "partitioned-100-files", "buckets", Metric::Rows)?,
        ];
        // Companion: without the source thread's serial work the single source keeps up.
        let flat = self.report(
            "clickbench-single-file.yaml",
            &["cpu.source.per_row=0ns"],
            None,
        )?;
        let flat_before = mean(&flat, "one-file", "single-source", Metric::WallTime)?
            / mean(
                &flat,
                "partitioned-100-files",
                "single-source",
                Metric::WallTime,
            )?;
        b.push(
            "F7.without_source_stage",
            "F7",
            "companion: single source vs copy with no source-thread cost",
            "(with it: 3.2-3.5x)",
            x(flat_before),
            "under 1.3x",
            flat_before < 1.3,
            true,
        );
        let same = rows.iter().all(|r| *r == rows[0]) && rows[0] > 0.0;
        b.push(
            "F7.counts",
            "F7",
            "rows: single source, buckets and the partitioned copy",
            "identical",
            format!("{} in each", count(rows[0])),
            "exactly equal",
            same,
            false,
        );
        Ok(())
    }
}

/// The checks as the README's Markdown table.
pub fn markdown_table(checks: &[Check]) -> String {
    let mut out = String::from(
        "| check | finding | measured | simulated | tolerance | inside |\n|---|---|---|---|---|---|\n",
    );
    for c in checks {
        out.push_str(&format!(
            "| `{}` | {}: {} | {} | {} | {} | {} |\n",
            c.id,
            c.finding,
            c.what,
            c.measured,
            c.simulated,
            c.tolerance,
            match (c.pass, c.known_miss) {
                (true, _) => "yes".to_string(),
                (false, Some(why)) => format!("**no** (known: {why})"),
                (false, None) => "**no**".to_string(),
            }
        ));
    }
    let inside = checks.iter().filter(|c| c.pass).count();
    out.push_str(&format!(
        "\n{inside} of {} checks inside their tolerance.\n",
        checks.len()
    ));
    out
}

/// The default scenarios directory next to a repository root.
pub fn scenarios_dir(repo_root: &Path) -> PathBuf {
    repo_root.join("scenarios")
}
