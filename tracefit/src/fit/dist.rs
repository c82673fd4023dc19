//! Candidate distributions fitted by maximum likelihood, and the Kolmogorov-Smirnov statistic
//! that picks among them.

use serde::Serialize;
use statrs::function::erf::erfc;
use statrs::function::gamma::{checked_gamma_lr, digamma, ln_gamma};

/// A fitted distribution of a positive quantity (ns, or bytes per second).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum FittedDist {
    /// ln X ~ Normal(mu, sigma). The median is `exp(mu)`.
    Lognormal {
        /// Mean of ln X.
        mu: f64,
        /// Standard deviation of ln X.
        sigma: f64,
    },
    /// Gamma with shape k and scale theta (mean k * theta).
    Gamma {
        /// Shape k.
        shape: f64,
        /// Scale theta, in the unit of X.
        scale: f64,
    },
    /// Piecewise-linear inverse CDF through `(probability, value)` points.
    Empirical {
        /// `(probability, value)`, both increasing.
        points: Vec<(f64, f64)>,
    },
    /// A point mass: every sample within [`POINT_MASS_SPREAD`] of the median.
    Constant {
        /// The value, in the unit of X.
        value: f64,
    },
}

/// A sample whose largest and smallest values differ by less than this fraction of the median
/// is a point mass: no two-parameter law is identifiable from it (a lognormal's sigma or a
/// gamma's shape runs off to 0 or infinity, and a gamma CDF at shape 10^7 costs seconds), and
/// for simulation the spread is immaterial.
pub const POINT_MASS_SPREAD: f64 = 1e-3;

/// A gamma shape above this is a point mass in all but name (coefficient of variation under
/// 0.1%); the candidate is dropped rather than evaluated.
pub const MAX_GAMMA_SHAPE: f64 = 1e6;

/// Probabilities at which the empirical candidate keeps quantiles: dense in the tail, where
/// read-path decisions (hedging, timeouts) are sensitive.
pub const EMPIRICAL_PROBABILITIES: [f64; 17] = [
    0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.995, 0.999, 1.0,
];

impl FittedDist {
    /// `lognormal`, `gamma` or `empirical`, as the store spec names them.
    pub fn name(&self) -> &'static str {
        match self {
            FittedDist::Lognormal { .. } => "lognormal",
            FittedDist::Gamma { .. } => "gamma",
            FittedDist::Empirical { .. } => "empirical",
            FittedDist::Constant { .. } => "constant",
        }
    }

    /// P(X <= x).
    pub fn cdf(&self, x: f64) -> f64 {
        match self {
            FittedDist::Lognormal { mu, sigma } => {
                if x <= 0.0 {
                    return 0.0;
                }
                0.5 * erfc(-(x.ln() - mu) / (sigma * std::f64::consts::SQRT_2))
            }
            FittedDist::Gamma { shape, scale } => {
                if x <= 0.0 {
                    return 0.0;
                }
                checked_gamma_lr(*shape, x / scale).unwrap_or(if x / scale > *shape {
                    1.0
                } else {
                    0.0
                })
            }
            FittedDist::Empirical { points } => empirical_cdf(points, x),
            FittedDist::Constant { value } => {
                if x >= *value {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }

    /// The median.
    pub fn median(&self) -> f64 {
        match self {
            FittedDist::Lognormal { mu, .. } => mu.exp(),
            FittedDist::Constant { value } => *value,
            _ => self.quantile_by_bisection(0.5),
        }
    }

    /// The mean (the empirical candidate's is that of its piecewise-linear quantile function).
    pub fn mean(&self) -> f64 {
        match self {
            FittedDist::Lognormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            FittedDist::Gamma { shape, scale } => shape * scale,
            FittedDist::Empirical { points } => points
                .windows(2)
                .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0)
                .sum(),
            FittedDist::Constant { value } => *value,
        }
    }

    /// The p-quantile, by bisection on the CDF (all candidates are continuous and increasing).
    pub fn quantile_by_bisection(&self, p: f64) -> f64 {
        let mut hi = self.mean().max(1e-12);
        let mut guard = 0;
        while self.cdf(hi) < p && guard < 200 {
            hi *= 2.0;
            guard += 1;
        }
        let mut lo = 0.0;
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if self.cdf(mid) < p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo + hi) / 2.0
    }

    /// Log-likelihood of the sample (parametric candidates only).
    pub fn log_likelihood(&self, sample: &[f64]) -> Option<f64> {
        match self {
            FittedDist::Lognormal { mu, sigma } => {
                let c = -(sigma * (2.0 * std::f64::consts::PI).sqrt()).ln();
                Some(
                    sample
                        .iter()
                        .map(|x| c - x.ln() - (x.ln() - mu).powi(2) / (2.0 * sigma * sigma))
                        .sum(),
                )
            }
            FittedDist::Gamma { shape, scale } => {
                let c = -ln_gamma(*shape) - shape * scale.ln();
                Some(
                    sample
                        .iter()
                        .map(|x| c + (shape - 1.0) * x.ln() - x / scale)
                        .sum(),
                )
            }
            FittedDist::Empirical { .. } | FittedDist::Constant { .. } => None,
        }
    }
}

fn empirical_cdf(points: &[(f64, f64)], x: f64) -> f64 {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return 0.0;
    };
    if x < first.1 {
        return 0.0;
    }
    if x >= last.1 {
        return 1.0;
    }
    // The first point whose value exceeds x; x lies in the segment before it.
    let i = points.partition_point(|(_, v)| *v <= x);
    let (Some(a), Some(b)) = (points.get(i.saturating_sub(1)), points.get(i)) else {
        return 1.0;
    };
    if b.1 <= a.1 {
        return b.0;
    }
    a.0 + (b.0 - a.0) * (x - a.1) / (b.1 - a.1)
}

/// Lognormal maximum likelihood (closed form). The sample must be positive and non-empty.
pub fn fit_lognormal(sample: &[f64]) -> Option<FittedDist> {
    let n = sample.len() as f64;
    if sample.len() < 2 || sample.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
        return None;
    }
    let mu = sample.iter().map(|x| x.ln()).sum::<f64>() / n;
    let var = sample.iter().map(|x| (x.ln() - mu).powi(2)).sum::<f64>() / n;
    let sigma = var.sqrt();
    (sigma > 0.0 && sigma.is_finite()).then_some(FittedDist::Lognormal { mu, sigma })
}

/// Trigamma (the derivative of digamma): recurrence up to x >= 6, then the asymptotic series.
fn trigamma(mut x: f64) -> f64 {
    let mut acc = 0.0;
    while x < 6.0 {
        acc += 1.0 / (x * x);
        x += 1.0;
    }
    let x2 = 1.0 / (x * x);
    acc + 1.0 / x
        + x2 / 2.0
        + x2 / x * (1.0 / 6.0 - x2 * (1.0 / 30.0 - x2 * (1.0 / 42.0 - x2 / 30.0)))
}

/// Gamma maximum likelihood: Newton's method on the shape in Minka's form ("Estimating a Gamma
/// distribution", 2002), which converges in a handful of steps from his closed-form start.
pub fn fit_gamma(sample: &[f64]) -> Option<FittedDist> {
    let n = sample.len() as f64;
    if sample.len() < 2 || sample.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
        return None;
    }
    let mean = sample.iter().sum::<f64>() / n;
    let mean_ln = sample.iter().map(|x| x.ln()).sum::<f64>() / n;
    let s = mean.ln() - mean_ln;
    if !(s > 0.0 && s.is_finite()) {
        return None;
    }
    let mut k = (3.0 - s + ((s - 3.0).powi(2) + 24.0 * s).sqrt()) / (12.0 * s);
    for _ in 0..100 {
        let num = k.ln() - digamma(k) - s;
        let den = k * k * (1.0 / k - trigamma(k));
        let next = 1.0 / (1.0 / k + num / den);
        if !(next > 0.0 && next.is_finite()) {
            break;
        }
        let done = (next - k).abs() <= 1e-10 * k;
        k = next;
        if done {
            break;
        }
    }
    (k > 0.0 && k <= MAX_GAMMA_SHAPE).then_some(FittedDist::Gamma {
        shape: k,
        scale: mean / k,
    })
}

/// The p-quantile of a sorted sample (linear interpolation between order statistics).
pub fn sample_quantile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let h = (sorted.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    let a = *sorted.get(lo)?;
    let b = *sorted.get(hi)?;
    Some(a + (b - a) * (h - lo as f64))
}

/// Empirical quantiles at [`EMPIRICAL_PROBABILITIES`] of a sorted sample.
pub fn fit_empirical(sorted: &[f64]) -> Option<FittedDist> {
    let points: Option<Vec<(f64, f64)>> = EMPIRICAL_PROBABILITIES
        .iter()
        .map(|p| sample_quantile(sorted, *p).map(|v| (*p, v)))
        .collect();
    points.map(|points| FittedDist::Empirical { points })
}

/// The Kolmogorov-Smirnov statistic: the largest gap between the sample's CDF and `dist`'s.
/// `resolution` is the grid the values were rounded to (1 ms for access logs, 0 when exact):
/// a rounded value `v` stands for the cell `[v - r/2, v + r/2]`, so the sample's CDF just
/// below and at `v` is compared with the model's at the cell's edges; without this, rounding
/// alone would inflate the statistic by half a cell's probability.
pub fn ks_statistic(sorted: &[f64], dist: &FittedDist, resolution: f64) -> f64 {
    let n = sorted.len() as f64;
    let half = resolution.max(0.0) / 2.0;
    let mut d: f64 = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let v = sorted[i];
        let mut j = i + 1;
        while j < sorted.len() && sorted[j] == v {
            j += 1;
        }
        // The grid point `v` stands for: itself, or 0 for the stand-in of a value under the
        // resolution (`fit_store` puts an access log's `0` at a quarter of the grid).
        let cell = if resolution > 0.0 {
            (v / resolution).round() * resolution
        } else {
            v
        };
        let below = dist.cdf(cell - half);
        let at = dist.cdf(cell + half);
        d = d
            .max((below - i as f64 / n).abs())
            .max((at - j as f64 / n).abs());
        i = j;
    }
    d
}

/// One candidate with its goodness of fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    /// The fitted distribution.
    pub dist: FittedDist,
    /// Kolmogorov-Smirnov statistic against the sample.
    pub ks: f64,
    /// Log-likelihood of the sample (parametric candidates).
    pub log_likelihood: Option<f64>,
}

/// The fit of one quantity: every candidate and the one picked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DistFit {
    /// Candidates in the order lognormal, gamma, empirical (those that could be fitted).
    pub candidates: Vec<Candidate>,
    /// Index of the chosen candidate.
    pub chosen: usize,
    /// The largest KS statistic at which a parametric candidate is still preferred to the
    /// empirical one: the 1% critical value `1.63 / sqrt(n)`, but at least
    /// [`KS_PRACTICAL_FLOOR`].
    pub ks_threshold: f64,
    /// The sample, sorted (kept for plots; not serialized).
    #[serde(skip)]
    pub sorted_sample: Vec<f64>,
}

/// A CDF gap below 2 percentage points is immaterial for simulation, so a parametric candidate
/// that close is kept even when a huge sample would reject it formally.
pub const KS_PRACTICAL_FLOOR: f64 = 0.02;

impl DistFit {
    /// The chosen candidate.
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates.get(self.chosen)
    }
}

/// Fits lognormal, gamma and empirical candidates to a positive sample and picks one: the
/// parametric candidate with the smaller KS statistic if it passes [`DistFit::ks_threshold`]
/// (a smooth two-parameter law extrapolates the tail better), else the empirical quantiles.
pub fn fit_candidates(mut sample: Vec<f64>, resolution: f64) -> Option<DistFit> {
    sample.retain(|x| *x > 0.0 && x.is_finite());
    if sample.len() < 2 {
        return None;
    }
    sample.sort_by(|a, b| a.total_cmp(b));
    let (lo, hi) = (sample[0], sample[sample.len() - 1]);
    let median = sample_quantile(&sample, 0.5)?;
    if hi - lo <= POINT_MASS_SPREAD * median {
        let dist = FittedDist::Constant { value: median };
        // The sample's CDF against the step at the median: the share strictly on either side.
        let n = sample.len() as f64;
        let below = sample.iter().filter(|x| **x < median).count() as f64 / n;
        let above = sample.iter().filter(|x| **x > median).count() as f64 / n;
        let ks = below.max(above);
        return Some(DistFit {
            candidates: vec![Candidate {
                dist,
                ks,
                log_likelihood: None,
            }],
            chosen: 0,
            ks_threshold: KS_PRACTICAL_FLOOR,
            sorted_sample: sample,
        });
    }
    let mut candidates = Vec::new();
    for dist in [fit_lognormal(&sample), fit_gamma(&sample)]
        .into_iter()
        .flatten()
    {
        let ks = ks_statistic(&sample, &dist, resolution);
        let log_likelihood = dist.log_likelihood(&sample);
        candidates.push(Candidate {
            dist,
            ks,
            log_likelihood,
        });
    }
    let parametric = candidates.len();
    if let Some(dist) = fit_empirical(&sample) {
        let ks = ks_statistic(&sample, &dist, resolution);
        candidates.push(Candidate {
            dist,
            ks,
            log_likelihood: None,
        });
    }
    let ks_threshold = (1.63 / (sample.len() as f64).sqrt()).max(KS_PRACTICAL_FLOOR);
    let best_parametric =
        (0..parametric).min_by(|a, b| candidates[*a].ks.total_cmp(&candidates[*b].ks));
    let chosen = match best_parametric {
        Some(i) if candidates[i].ks <= ks_threshold => i,
        _ => candidates.len().checked_sub(1)?,
    };
    Some(DistFit {
        candidates,
        chosen,
        ks_threshold,
        sorted_sample: sample,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_distr::Distribution;

    fn rng(seed: u64) -> rand_pcg::Pcg64 {
        rand_pcg::Pcg64::seed_from_u64(seed)
    }

    #[test]
    fn trigamma_matches_known_values() {
        // psi'(1) = pi^2 / 6, psi'(1/2) = pi^2 / 2.
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-9);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-9);
        // psi'(30) = pi^2/6 - sum_{k<30} 1/k^2.
        let direct = pi2 / 6.0 - (1..30).map(|k| 1.0 / (k * k) as f64).sum::<f64>();
        assert!((trigamma(30.0) - direct).abs() < 1e-9);
    }

    #[test]
    fn lognormal_mle_recovers_parameters() {
        let d = rand_distr::LogNormal::new(3.0, 0.6).unwrap();
        let mut r = rng(1);
        let s: Vec<f64> = (0..20_000).map(|_| d.sample(&mut r)).collect();
        let FittedDist::Lognormal { mu, sigma } = fit_lognormal(&s).unwrap() else {
            unreachable!()
        };
        assert!((mu - 3.0).abs() < 0.02, "mu {mu}");
        assert!((sigma - 0.6).abs() < 0.02, "sigma {sigma}");
    }

    #[test]
    fn gamma_mle_recovers_parameters() {
        for (shape, scale) in [(0.7, 10.0), (2.5, 4.0), (40.0, 0.5)] {
            let d = rand_distr::Gamma::new(shape, scale).unwrap();
            let mut r = rng(2);
            let s: Vec<f64> = (0..20_000).map(|_| d.sample(&mut r)).collect();
            let FittedDist::Gamma { shape: k, scale: t } = fit_gamma(&s).unwrap() else {
                unreachable!()
            };
            assert!((k / shape - 1.0).abs() < 0.05, "shape {k} vs {shape}");
            assert!(
                (k * t / (shape * scale) - 1.0).abs() < 0.03,
                "mean {} vs {}",
                k * t,
                shape * scale
            );
        }
    }

    #[test]
    fn the_true_family_wins_by_ks() {
        let mut r = rng(3);
        let ln = rand_distr::LogNormal::new(0.0, 1.0).unwrap();
        let s: Vec<f64> = (0..20_000).map(|_| ln.sample(&mut r)).collect();
        let fit = fit_candidates(s, 0.0).unwrap();
        assert_eq!(fit.best().unwrap().dist.name(), "lognormal");
        assert!(fit.candidates[1].ks > fit.candidates[0].ks);

        let g = rand_distr::Gamma::new(3.0, 2.0).unwrap();
        let s: Vec<f64> = (0..20_000).map(|_| g.sample(&mut r)).collect();
        let fit = fit_candidates(s, 0.0).unwrap();
        assert_eq!(fit.best().unwrap().dist.name(), "gamma");
    }

    #[test]
    fn a_bimodal_sample_falls_back_to_empirical_quantiles() {
        let mut r = rng(4);
        let a = rand_distr::Normal::new(10.0, 0.5).unwrap();
        let b = rand_distr::Normal::new(100.0, 5.0).unwrap();
        let s: Vec<f64> = (0..10_000)
            .map(|i| {
                if i % 2 == 0 {
                    a.sample(&mut r)
                } else {
                    b.sample(&mut r)
                }
            })
            .collect();
        let fit = fit_candidates(s, 0.0).unwrap();
        assert_eq!(fit.best().unwrap().dist.name(), "empirical");
        assert!(fit
            .candidates
            .iter()
            .all(|c| c.ks >= fit.best().unwrap().ks));
        assert!(fit.candidates[0].ks > fit.ks_threshold && fit.candidates[1].ks > fit.ks_threshold);
    }

    #[test]
    fn rounding_does_not_inflate_ks_when_the_resolution_is_given() {
        let mut r = rng(5);
        let ln = rand_distr::LogNormal::new(27f64.ln(), 0.5).unwrap();
        let s: Vec<f64> = (0..20_000)
            .map(|_| ln.sample(&mut r).round().max(1.0))
            .collect();
        let mut sorted = s.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let truth = FittedDist::Lognormal {
            mu: 27f64.ln(),
            sigma: 0.5,
        };
        let naive = ks_statistic(&sorted, &truth, 0.0);
        let aware = ks_statistic(&sorted, &truth, 1.0);
        assert!(
            naive > 0.015,
            "rounding to 1 in 27 should show in the naive statistic: {naive}"
        );
        assert!(aware < 0.015, "{aware}");
    }

    #[test]
    fn empirical_cdf_inverts_its_quantiles() {
        let d = FittedDist::Empirical {
            points: vec![(0.0, 1.0), (0.5, 3.0), (1.0, 7.0)],
        };
        assert_eq!(d.cdf(0.5), 0.0);
        assert!((d.cdf(2.0) - 0.25).abs() < 1e-12);
        assert!((d.cdf(5.0) - 0.75).abs() < 1e-12);
        assert_eq!(d.cdf(8.0), 1.0);
        assert!((d.median() - 3.0).abs() < 1e-6);
        assert!((d.mean() - 3.5).abs() < 1e-12);
    }

    #[test]
    fn degenerate_samples_give_none_not_panics() {
        assert!(fit_candidates(vec![], 0.0).is_none());
        assert!(fit_candidates(vec![0.0, -1.0, f64::NAN], 0.0).is_none());
        assert!(fit_lognormal(&[5.0, 5.0, 5.0]).is_none());
        assert!(fit_gamma(&[5.0, 5.0]).is_none());
        // A constant sample is a point mass, and so is one within 0.1% of its median.
        let fit = fit_candidates(vec![5.0; 10], 0.0).unwrap();
        assert_eq!(
            fit.best().unwrap().dist,
            FittedDist::Constant { value: 5.0 }
        );
        let near: Vec<f64> = (0..16).map(|i| 1e9 + i as f64 * 1e3).collect();
        let fit = fit_candidates(near, 0.0).unwrap();
        assert_eq!(fit.best().unwrap().dist.name(), "constant");
        // A spread of 1% is not.
        let spread: Vec<f64> = (0..16).map(|i| 100.0 + i as f64 / 15.0).collect();
        let fit = fit_candidates(spread, 0.0).unwrap();
        assert_ne!(fit.best().unwrap().dist.name(), "constant");
        // A gamma past its shape bound is dropped, not evaluated.
        let tight: Vec<f64> = (0..16).map(|i| 1e6 + (i % 2) as f64 * 1e-2).collect();
        assert!(fit_gamma(&tight).is_none());
    }

    proptest::proptest! {
        #[test]
        fn cdfs_are_monotone_and_bounded(mu in -5.0f64..20.0, sigma in 0.01f64..3.0, shape in 0.05f64..100.0, xs in proptest::collection::vec(0.0f64..1e9, 2..20)) {
            let mut xs = xs;
            xs.sort_by(|a, b| a.total_cmp(b));
            for d in [FittedDist::Lognormal { mu, sigma }, FittedDist::Gamma { shape, scale: mu.exp() }] {
                let mut last = 0.0;
                for x in &xs {
                    let f = d.cdf(*x);
                    proptest::prop_assert!((0.0..=1.0).contains(&f));
                    proptest::prop_assert!(f >= last - 1e-12);
                    last = f;
                }
            }
        }
    }
}
