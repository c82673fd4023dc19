//! The figures compared, their tolerances, the verdict of each row, and the README table.

use super::shapes::Shape;
use experiments::report::Metric;
use experiments::run::ScenarioOutput;
use std::fmt::Write as _;

/// How close a simulation must come to the measurement, per store model. Relative errors are
/// `simulated / measured - 1`; GETs and bytes must be equal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    pub injected: Bounds,
    pub fitted: Bounds,
}

/// The relative errors allowed on each figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub wall_time: Band,
    pub mean_concurrent_gets: Band,
    pub first_byte_p50: Band,
    pub first_byte_p90: Band,
}

/// How far `simulated / measured - 1` may fall below 0 (`short`) and rise above it (`long`),
/// both as positive fractions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub short: f64,
    pub long: f64,
}

impl Band {
    /// As far either way.
    pub const fn symmetric(fraction: f64) -> Band {
        Band {
            short: fraction,
            long: fraction,
        }
    }

    /// Whether a relative error lies inside.
    pub fn holds(&self, relative_error: f64) -> bool {
        (-self.short..=self.long).contains(&relative_error)
    }

    /// `±15%`, or `-30%/+5%`.
    pub fn describe(&self) -> String {
        if self.short == self.long {
            format!("±{:.0}%", 100.0 * self.short)
        } else {
            format!("-{:.0}%/+{:.0}%", 100.0 * self.short, 100.0 * self.long)
        }
    }
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            // The injected model leaves out the bed's own time a GET (the server and the
            // client: 1-5 ms on the machine the README's table comes from, 5-7 ms a GET of
            // one-large-file on a two-core CI machine), so its first bytes can only be
            // short: by up to 30% at the median and 40% at p90 (12 ms at a 30 ms round trip),
            // and by no more than 5% long (the proxy cannot deliver before its delay). The
            // fitted model's rows, which have that time, hold first bytes within ±10%.
            injected: Bounds {
                wall_time: Band::symmetric(0.15),
                mean_concurrent_gets: Band::symmetric(0.15),
                first_byte_p50: Band {
                    short: 0.30,
                    long: 0.05,
                },
                first_byte_p90: Band {
                    short: 0.40,
                    long: 0.05,
                },
            },
            // The fitted model has that time, but not its dependence on size or concurrency.
            fitted: Bounds {
                wall_time: Band::symmetric(0.10),
                mean_concurrent_gets: Band::symmetric(0.10),
                first_byte_p50: Band::symmetric(0.10),
                first_byte_p90: Band::symmetric(0.15),
            },
        }
    }
}

impl Tolerances {
    /// The bounds for simulations on `model`.
    pub fn for_model(&self, model: ModelKind) -> &Bounds {
        match model {
            ModelKind::Injected => &self.injected,
            ModelKind::Fitted => &self.fitted,
        }
    }
}

impl Bounds {
    fn describe(&self) -> String {
        format!(
            "wall time {}, mean GETs in flight {}, first byte p50 {} and p90 {}",
            self.wall_time.describe(),
            self.mean_concurrent_gets.describe(),
            self.first_byte_p50.describe(),
            self.first_byte_p90.describe()
        )
    }
}

/// Which store model the simulation ran with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelKind {
    /// The proxy's injected round trip and bandwidth, nothing else.
    Injected,
    /// What `sim fit --arm ARM` fitted from the arm's measured run.
    Fitted,
}

impl ModelKind {
    pub fn name(self) -> &'static str {
        match self {
            ModelKind::Injected => "injected",
            ModelKind::Fitted => "fitted",
        }
    }
}

/// One arm's figures, measured or simulated: medians over replications for times, the first
/// replication's counts (checked equal across replications), first-byte percentiles over every
/// replication's GETs.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub gets: u64,
    pub store_bytes: u64,
    /// Whether every replication made the same GETs and bytes.
    pub counts_stable: bool,
    pub wall_ns: f64,
    pub mean_concurrent_gets: f64,
    pub first_byte_p50_ns: f64,
    pub first_byte_p90_ns: f64,
}

impl Figures {
    /// The figures of each arm of the first case of `out` (which must carry its trace).
    pub fn by_arm(out: &ScenarioOutput) -> Result<Vec<(String, Figures)>, String> {
        let case = out.report.cases.first().ok_or("the run has no case")?;
        let trace = tracefit::parse_bytes(
            out.trace_csv.as_bytes(),
            "trace",
            &tracefit::ParseOptions::default(),
        )
        .map_err(|e| format!("reading the run's own trace: {e}"))?;
        let mut figures = Vec::new();
        for arm in &case.arms {
            let metric = |m: Metric| -> Vec<f64> { arm.runs.iter().map(|r| r.value(m)).collect() };
            let gets = metric(Metric::Gets);
            let bytes = metric(Metric::StoreBytes);
            let mut first_byte: Vec<f64> = trace
                .records
                .iter()
                .filter(|r| r.is_store_read())
                .filter(|r| r.sim.as_ref().is_some_and(|s| s.arm == arm.arm))
                .filter_map(|r| r.first_byte_latency_ns.map(|ns| ns as f64))
                .collect();
            first_byte.sort_by(f64::total_cmp);
            figures.push((
                arm.arm.clone(),
                Figures {
                    gets: gets.first().copied().unwrap_or(0.0) as u64,
                    store_bytes: bytes.first().copied().unwrap_or(0.0) as u64,
                    counts_stable: gets.windows(2).all(|w| w[0] == w[1])
                        && bytes.windows(2).all(|w| w[0] == w[1]),
                    wall_ns: median(metric(Metric::WallTime)),
                    mean_concurrent_gets: median(metric(Metric::MeanConcurrentGets)),
                    first_byte_p50_ns: nearest_rank(&first_byte, 0.5),
                    first_byte_p90_ns: nearest_rank(&first_byte, 0.9),
                },
            ));
        }
        Ok(figures)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The nearest-rank quantile of a sorted sample (0 when empty).
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q.clamp(0.0, 1.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `simulated / measured - 1` (0 when both are 0).
pub fn relative_error(measured: f64, simulated: f64) -> f64 {
    if measured == 0.0 {
        if simulated == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        simulated / measured - 1.0
    }
}

/// One shape x arm x store model.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckRow {
    pub shape: Shape,
    pub arm: String,
    pub model: ModelKind,
    pub measured: Figures,
    pub simulated: Figures,
}

impl CheckRow {
    /// What is outside its tolerance, one phrase each (empty: the row passes).
    pub fn failures(&self, tolerances: &Tolerances) -> Vec<String> {
        let t = tolerances.for_model(self.model);
        let (m, s) = (&self.measured, &self.simulated);
        let mut out = Vec::new();
        if m.gets != s.gets {
            out.push(format!("GETs {} measured vs {} simulated", m.gets, s.gets));
        }
        if m.store_bytes != s.store_bytes {
            out.push(format!(
                "bytes {} measured vs {} simulated",
                m.store_bytes, s.store_bytes
            ));
        }
        if !m.counts_stable || !s.counts_stable {
            out.push("GETs or bytes differ between replications".into());
        }
        for (what, mv, sv, tol) in [
            ("wall time", m.wall_ns, s.wall_ns, t.wall_time),
            (
                "mean GETs in flight",
                m.mean_concurrent_gets,
                s.mean_concurrent_gets,
                t.mean_concurrent_gets,
            ),
            (
                "first byte p50",
                m.first_byte_p50_ns,
                s.first_byte_p50_ns,
                t.first_byte_p50,
            ),
            (
                "first byte p90",
                m.first_byte_p90_ns,
                s.first_byte_p90_ns,
                t.first_byte_p90,
            ),
        ] {
            let e = relative_error(mv, sv);
            if !tol.holds(e) {
                out.push(format!(
                    "{what} {:+.1}% (tolerance {})",
                    100.0 * e,
                    tol.describe()
                ));
            }
        }
        out
    }

    /// One line for progress output.
    pub fn summary(&self) -> String {
        let (m, s) = (&self.measured, &self.simulated);
        format!(
            "{} / {} / {} model: {} GETs ({}), wall {} measured vs {} simulated ({:+.1}%), \
             GETs in flight {:.2} vs {:.2}, first byte p50 {} vs {}, p90 {} vs {}",
            self.shape.name(),
            self.arm,
            self.model.name(),
            m.gets,
            if m.gets == s.gets && m.store_bytes == s.store_bytes {
                "same GETs and bytes"
            } else {
                "GETS OR BYTES DIFFER"
            },
            ms(m.wall_ns),
            ms(s.wall_ns),
            100.0 * relative_error(m.wall_ns, s.wall_ns),
            m.mean_concurrent_gets,
            s.mean_concurrent_gets,
            ms(m.first_byte_p50_ns),
            ms(s.first_byte_p50_ns),
            ms(m.first_byte_p90_ns),
            ms(s.first_byte_p90_ns),
        )
    }
}

fn ms(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else {
        format!("{:.1}ms", ns / 1e6)
    }
}

/// Everything the check found.
#[derive(Debug, Clone)]
pub struct CheckReport {
    pub rtt_ns: u64,
    pub bandwidth_bytes_per_s: u64,
    pub measured_reps: u32,
    pub simulated_reps: u32,
    pub tolerances: Tolerances,
    pub shapes: Vec<Shape>,
    pub rows: Vec<CheckRow>,
    /// Each shape's fitted model, in a phrase ([`fitted_summary`]).
    pub fitted_models: Vec<(Shape, String)>,
}

impl CheckReport {
    /// Every failure, prefixed with its row.
    pub fn failures(&self) -> Vec<String> {
        self.rows
            .iter()
            .flat_map(|r| {
                r.failures(&self.tolerances).into_iter().map(move |f| {
                    format!(
                        "{} / {} / {} model: {f}",
                        r.shape.name(),
                        r.arm,
                        r.model.name()
                    )
                })
            })
            .collect()
    }

    /// The README's table, with the conditions and tolerances it was made under.
    pub fn markdown(&self) -> String {
        let t = &self.tolerances;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Injected by the proxy: a {} round trip, {} a connection. Measured: median of {} \
             runs of `sim measure`; simulated: median of {} runs of `sim run`. Tolerances \
             (simulated / measured - 1) on the injected model: {}; on the fitted model: {}; GETs \
             and bytes equal.\n",
            units::format_duration_ns(self.rtt_ns),
            units::format_bandwidth(self.bandwidth_bytes_per_s as f64),
            self.measured_reps,
            self.simulated_reps,
            t.injected.describe(),
            t.fitted.describe(),
        );
        out.push_str(
            "| Shape | Arm | Store model | GETs | Bytes | Wall time measured | simulated | GETs \
             in flight measured / simulated | First byte p50 measured / simulated | p90 | \
             Within |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|---|---|\n");
        for r in &self.rows {
            let (m, s) = (&r.measured, &r.simulated);
            let counts = |a: u64, b: u64, f: &dyn Fn(u64) -> String| {
                if a == b {
                    format!("{} = {}", f(a), f(b))
                } else {
                    format!("{} ≠ {}", f(a), f(b))
                }
            };
            let failures = r.failures(t);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} ({:+.1}%) | {:.1} / {:.1} ({:+.1}%) | {} / \
                 {} ({:+.1}%) | {} / {} ({:+.1}%) | {} |",
                r.shape.name(),
                r.arm,
                r.model.name(),
                counts(m.gets, s.gets, &|v| v.to_string()),
                counts(m.store_bytes, s.store_bytes, &units::format_bytes),
                ms(m.wall_ns),
                ms(s.wall_ns),
                100.0 * relative_error(m.wall_ns, s.wall_ns),
                m.mean_concurrent_gets,
                s.mean_concurrent_gets,
                100.0 * relative_error(m.mean_concurrent_gets, s.mean_concurrent_gets),
                ms(m.first_byte_p50_ns),
                ms(s.first_byte_p50_ns),
                100.0 * relative_error(m.first_byte_p50_ns, s.first_byte_p50_ns),
                ms(m.first_byte_p90_ns),
                ms(s.first_byte_p90_ns),
                100.0 * relative_error(m.first_byte_p90_ns, s.first_byte_p90_ns),
                if failures.is_empty() {
                    "yes".to_string()
                } else {
                    format!("**no**: {}", failures.join("; "))
                },
            );
        }
        out.push('\n');
        for shape in &self.shapes {
            let _ = writeln!(out, "- `{}`: {}.", shape.name(), shape.describe());
        }
        for (shape, summary) in &self.fitted_models {
            let _ = writeln!(
                out,
                "- Fitted from the measured `{}` trace: {summary}.",
                shape.name()
            );
        }
        out
    }
}

/// The fitted model's first byte and stream bandwidth, in a phrase.
pub fn fitted_summary(fit: &tracefit::StoreFit) -> String {
    let dist = |d: Option<&tracefit::fit::dist::Candidate>, f: &dyn Fn(f64) -> String| match d {
        Some(c) => format!("{} of median {}", c.dist.name(), f(c.dist.median())),
        None => "not measured".to_string(),
    };
    format!(
        "first byte {}, stream bandwidth {}",
        dist(fit.first_byte.best(), &|ns| units::format_duration_ns(
            ns as u64
        )),
        dist(
            fit.stream_bandwidth.as_ref().and_then(|d| d.best()),
            &units::format_bandwidth
        )
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figs(gets: u64, wall_ms: f64, conc: f64, p50_ms: f64, p90_ms: f64) -> Figures {
        Figures {
            gets,
            store_bytes: gets * 1000,
            counts_stable: true,
            wall_ns: wall_ms * 1e6,
            mean_concurrent_gets: conc,
            first_byte_p50_ns: p50_ms * 1e6,
            first_byte_p90_ns: p90_ms * 1e6,
        }
    }

    fn row(m: Figures, s: Figures) -> CheckRow {
        CheckRow {
            shape: Shape::OneLargeFile,
            arm: "base".into(),
            model: ModelKind::Injected,
            measured: m,
            simulated: s,
        }
    }

    #[test]
    fn a_row_inside_every_tolerance_passes_and_each_figure_can_fail_it() {
        let t = Tolerances::default();
        assert_eq!(
            t.injected.wall_time,
            Band::symmetric(0.15),
            "the cases below assume these bounds"
        );
        assert_eq!(
            t.injected.first_byte_p50,
            Band {
                short: 0.30,
                long: 0.05
            }
        );
        assert_eq!(
            t.injected.first_byte_p90,
            Band {
                short: 0.40,
                long: 0.05
            }
        );
        let m = figs(100, 1000.0, 8.0, 31.0, 34.0);
        assert!(row(m.clone(), figs(100, 900.0, 7.0, 30.0, 30.0))
            .failures(&t)
            .is_empty());
        // A slow bed's first bytes (a 30 ms round trip measured at 37 and 40 ms) pass on the
        // injected model, which cannot know the bed's own time.
        assert!(row(
            figs(100, 1000.0, 8.0, 37.0, 40.0),
            figs(100, 1000.0, 8.0, 30.0, 30.0)
        )
        .failures(&t)
        .is_empty());
        let cases = [
            (figs(100, 1200.0, 8.0, 31.0, 34.0), "wall time +20.0%"),
            (
                figs(100, 1000.0, 6.0, 31.0, 34.0),
                "mean GETs in flight -25.0%",
            ),
            // 29% short at the median and 41% at p90 are past what the bed's time explains;
            // a simulated first byte 6% longer than measured cannot be the bed's doing.
            (
                figs(100, 1000.0, 8.0, 21.0, 34.0),
                "first byte p50 -32.3% (tolerance -30%/+5%)",
            ),
            (figs(100, 1000.0, 8.0, 33.0, 34.0), "first byte p50 +6.5%"),
            (figs(100, 1000.0, 8.0, 31.0, 20.0), "first byte p90 -41.2%"),
            (figs(100, 1000.0, 8.0, 31.0, 36.0), "first byte p90 +5.9%"),
        ];
        for (s, what) in cases {
            let f = row(m.clone(), s).failures(&t);
            assert_eq!(f.len(), 1, "{f:?}");
            assert!(f[0].starts_with(what), "{f:?} should start with {what}");
        }
        // Other GETs are also other bytes here.
        let f = row(m.clone(), figs(101, 1000.0, 8.0, 31.0, 34.0)).failures(&t);
        assert!(
            f[0].starts_with("GETs 100 measured vs 101") && f[1].starts_with("bytes"),
            "{f:?}"
        );
        let mut unstable = m.clone();
        unstable.counts_stable = false;
        assert_eq!(row(unstable, m.clone()).failures(&t).len(), 1);
        // The fitted model is held closer: 12% off on wall time passes injected, fails fitted.
        let close = figs(100, 880.0, 8.0, 31.0, 34.0);
        assert!(row(m.clone(), close.clone()).failures(&t).is_empty());
        let mut fitted = row(m.clone(), close);
        fitted.model = ModelKind::Fitted;
        assert_eq!(fitted.failures(&t).len(), 1);
    }

    #[test]
    fn quantiles_and_medians() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0];
        assert_eq!(nearest_rank(&v, 0.5), 5.0);
        assert_eq!(nearest_rank(&v, 0.9), 9.0);
        assert_eq!(nearest_rank(&[], 0.9), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(relative_error(0.0, 0.0), 0.0);
        assert!(relative_error(0.0, 1.0).is_infinite());
    }

    #[test]
    fn the_table_marks_a_failing_row() {
        let report = CheckReport {
            rtt_ns: 30_000_000,
            bandwidth_bytes_per_s: 10 << 20,
            measured_reps: 3,
            simulated_reps: 3,
            tolerances: Tolerances::default(),
            shapes: vec![Shape::OneLargeFile],
            rows: vec![
                row(
                    figs(10, 100.0, 2.0, 31.0, 32.0),
                    figs(10, 95.0, 2.0, 30.0, 30.0),
                ),
                row(
                    figs(10, 100.0, 2.0, 31.0, 32.0),
                    figs(12, 95.0, 2.0, 30.0, 30.0),
                ),
            ],
            fitted_models: Vec::new(),
        };
        let md = report.markdown();
        assert!(
            md.contains("a 30ms round trip, 10MiB/s a connection"),
            "{md}"
        );
        assert_eq!(md.matches("| yes |").count(), 1, "{md}");
        assert!(md.contains("10 ≠ 12"), "{md}");
        let failures = report.failures();
        assert_eq!(failures.len(), 2, "{failures:?}");
        assert!(failures[0].starts_with("one-large-file / base / injected model: GETs"));
    }
}
