//! F8-F10 (`docs/findings.md`): the same authors' other measurements on the single large file
//! and on a half-cached page cache, which the model was not fitted to. Tolerances are the
//! issue's, written beside each check.

use super::*;

impl Findings {
    /// F8: the IO pool. Base does not improve with `max_download_threads` 4 -> 128; the
    /// redesign gains 2-4.5x from `input_format_parquet_max_io_threads` 16 -> 128, and at 16
    /// threads already has at least 19 GETs in flight.
    pub(super) fn f8(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let case = "459-row-groups";
        let wall = |set: &str, a: &str| -> Result<f64, FindingsError> {
            let r = self.report("single-large-file.yaml", &[set], Some(case))?;
            mean(&r, case, a, Metric::WallTime)
        };
        let base_ratio =
            wall("max_download_threads=4", "base")? / wall("max_download_threads=128", "base")?;
        b.push(
            "F8.base",
            "F8",
            "one large file: base, max_download_threads 4 -> 128, speed-up",
            "none",
            x(base_ratio),
            "within 10% (0.9x to 1.1x)",
            Band::new(0.9, 1.1).holds(base_ratio),
            false,
        );
        let at16 = self.report(
            "single-large-file.yaml",
            &["input_format_parquet_max_io_threads=16"],
            Some(case),
        )?;
        let w16 = mean(&at16, case, "redesign", Metric::WallTime)?;
        let w128 = wall("input_format_parquet_max_io_threads=128", "redesign")?;
        let gain = w16 / w128;
        b.push(
            "F8.redesign",
            "F8",
            "redesign, input_format_parquet_max_io_threads 16 -> 128, speed-up",
            "about 3x (3.6s -> 1.2s)",
            format!("{} ({} -> {})", x(gain), secs(w16), secs(w128)),
            "2x to 4.5x",
            Band::new(2.0, 4.5).holds(gain),
            false,
        );
        let c16 = mean(&at16, case, "redesign", Metric::MeanConcurrentGets)?;
        b.push(
            "F8.in_flight",
            "F8",
            "redesign at 16 IO threads: mean GETs in flight",
            "19-70",
            format!("{c16:.1}"),
            "at least 19",
            c16 >= 19.0,
            false,
        );
        // Companion: the base's serial chain (R5 off) gains nothing from the pool either.
        let off = |io: &str| -> Result<f64, FindingsError> {
            let r = self.report(
                "single-large-file.yaml",
                &["arms.redesign.settings.r5_issue_queue=false", io],
                Some(case),
            )?;
            mean(&r, case, "redesign", Metric::WallTime)
        };
        let off_gain = off("input_format_parquet_max_io_threads=16")?
            / off("input_format_parquet_max_io_threads=128")?;
        b.push(
            "F8.without_r5",
            "F8",
            "companion: redesign without R5, 16 -> 128 IO threads",
            "(with it: about 3x)",
            x(off_gain),
            "the gain gone: under 1.2x",
            off_gain < 1.2,
            true,
        );
        Ok(())
    }

    /// F9: `input_format_parquet_min_bytes_in_flight` 0 / 64 MiB / 256 MiB are
    /// indistinguishable in wall time and concurrency; the non-zero floors cost 1.5-3.5x peak
    /// memory (0 = planning off, the stages issue: `docs/readpath.md`, "What the code says").
    pub(super) fn f9(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let case = "459-row-groups";
        let arm_at = |floor: &str| -> Result<(f64, f64, f64), FindingsError> {
            let set =
                format!("arms.redesign.settings.input_format_parquet_min_bytes_in_flight={floor}");
            let r = self.report("single-large-file.yaml", &[set.as_str()], Some(case))?;
            Ok((
                mean(&r, case, "redesign", Metric::WallTime)?,
                mean(&r, case, "redesign", Metric::MeanConcurrentGets)?,
                mean(&r, case, "redesign", Metric::PeakMemory)?,
            ))
        };
        let zero = arm_at("0")?;
        let f64m = arm_at("64MiB")?;
        let f256 = arm_at("256MiB")?;
        let spread = |v: [f64; 3]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(0.0, f64::max);
            hi / lo
        };
        let wall_spread = spread([zero.0, f64m.0, f256.0]);
        b.push(
            "F9.time",
            "F9",
            "one large file, floor 0 / 64MiB / 256MiB: wall time, largest over smallest",
            "indistinguishable",
            format!(
                "{} ({} / {} / {})",
                x(wall_spread),
                secs(zero.0),
                secs(f64m.0),
                secs(f256.0)
            ),
            "within 15%",
            wall_spread <= 1.15,
            false,
        );
        let conc_spread = spread([zero.1, f64m.1, f256.1]);
        b.push(
            "F9.in_flight",
            "F9",
            "floor 0 / 64MiB / 256MiB: mean GETs in flight, largest over smallest",
            "indistinguishable",
            format!(
                "{} ({:.1} / {:.1} / {:.1})",
                x(conc_spread),
                zero.1,
                f64m.1,
                f256.1
            ),
            "within 15%",
            conc_spread <= 1.15,
            false,
        );
        let m64 = f64m.2 / zero.2;
        let m256 = f256.2 / zero.2;
        b.push(
            "F9.memory",
            "F9",
            "peak memory of the non-zero floors over floor 0",
            "about 2.3x",
            format!("{} / {} ({} at 0)", x(m64), x(m256), mib(zero.2)),
            "1.5x to 3.5x, both",
            Band::new(1.5, 3.5).holds(m64) && Band::new(1.5, 3.5).holds(m256),
            false,
        );
        // Companion: without the stages' issue (R5 off: the base's serial chain) floor 0 is
        // not neutral any more.
        let r = self.report(
            "single-large-file.yaml",
            &[
                "arms.redesign.settings.r5_issue_queue=false",
                "arms.redesign.settings.input_format_parquet_min_bytes_in_flight=0",
            ],
            Some(case),
        )?;
        let serial = mean(&r, case, "redesign", Metric::WallTime)? / f64m.0;
        b.push(
            "F9.without_stage_issue",
            "F9",
            "companion: floor 0 with the stages' issue off (R5 off) vs 64MiB",
            "(with it: indistinguishable)",
            x(serial),
            "no longer neutral: at least 2x slower",
            serial >= 2.0,
            true,
        );
        Ok(())
    }

    /// F10: a half-cached page cache at a small (4) and a deep (64) IO pool.
    pub(super) fn f10(&self, b: &mut Builder) -> Result<(), FindingsError> {
        let name = "partially-warm-page-cache.yaml";
        let half = self.report(name, &[], None)?;
        let cold = self.report(name, &[], Some("small-pool-uncached"))?;
        let base_cold = mean(&cold, "small-pool-uncached", "base", Metric::WallTime)?;
        let base_half = mean(&half, "small-pool", "base", Metric::WallTime)?;
        let red_half = mean(&half, "small-pool", "redesign", Metric::WallTime)?;
        let slower = base_half / base_cold;
        b.push(
            "F10.base",
            "F10",
            "half-cached, small pool: base half-cached over uncached, wall time",
            "1.19x (7.8s -> 9.3s)",
            format!("{} ({} -> {})", x(slower), secs(base_cold), secs(base_half)),
            "1.05x to 1.5x",
            Band::new(1.05, 1.5).holds(slower),
            false,
        );
        // Companion: the base arm with R8's page-cache fetches (a run of missing blocks in one
        // request, short cached islands read through) is no longer slower half-cached.
        let runs = self.report(
            name,
            &["arms.base.settings.r8_read_through_cached=true"],
            Some("small-pool"),
        )?;
        let runs_half = mean(&runs, "small-pool", "base", Metric::WallTime)?;
        let runs_ratio = runs_half / base_cold;
        b.push(
            "F10.base.with_r8_fetches",
            "F10",
            "companion: base with R8's page-cache fetches (runs, read-through): half-cached over uncached",
            "(one GET per missing block: 1.19x)",
            format!("{} ({})", x(runs_ratio), secs(runs_half)),
            "the slowdown gone: under 1.05x",
            runs_ratio < 1.05,
            true,
        );
        let red = red_half / base_cold;
        b.push(
            "F10.redesign",
            "F10",
            "redesign half-cached over base uncached, small pool",
            "0.74x (5.8s)",
            format!("{} ({})", x(red), secs(red_half)),
            "0.55x to 0.9x",
            Band::new(0.55, 0.9).holds(red),
            false,
        );
        let req = mean(&half, "small-pool", "base", Metric::Gets)?
            / mean(&half, "small-pool", "redesign", Metric::Gets)?;
        b.push(
            "F10.requests",
            "F10",
            "half-cached, small pool: requests, base over redesign",
            "4.7x (942 -> 201)",
            x(req),
            "2.5x to 8x",
            Band::new(2.5, 8.0).holds(req),
            false,
        );
        let small = mean(
            &half,
            "small-pool",
            "redesign",
            Metric::Event(readahead::ProfileEvent::PageCacheReadThroughBytes),
        )?;
        let deep = mean(
            &half,
            "deep-pool",
            "redesign",
            Metric::Event(readahead::ProfileEvent::PageCacheReadThroughBytes),
        )?;
        let share = deep / small;
        b.push(
            "F10.read_through_off",
            "F10",
            "PageCacheReadThroughBytes, deep pool over small pool",
            "about 0",
            format!("{:.1}% ({} -> {})", share * 100.0, mib(small), mib(deep)),
            "at most 5% (and some read through at the small pool)",
            small > 0.0 && share <= 0.05,
            false,
        );
        // Companion: without R8 nothing is read through.
        let off = self.report(
            name,
            &["arms.redesign.settings.r8_read_through_cached=false"],
            Some("small-pool"),
        )?;
        let rt_off = mean(
            &off,
            "small-pool",
            "redesign",
            Metric::Event(readahead::ProfileEvent::PageCacheReadThroughBytes),
        )?;
        b.push(
            "F10.without_r8",
            "F10",
            "companion: the redesign without R8, small pool: bytes read through",
            "(with it: read-through at the small pool)",
            mib(rt_off),
            "0",
            rt_off == 0.0,
            true,
        );
        Ok(())
    }
}
