//! Sampling from a validated [`DistSpec`], in base units (nanoseconds or bytes per second).

use super::spec::{DistKind, DistSpec, Quantity};
use super::StoreError;
use rand::{Rng, RngExt};
use rand_distr::{Distribution, Gamma, StandardNormal};

/// z such that P(N(0,1) <= z) = 0.95.
const Z95: f64 = 1.644_853_626_951_472_2;

#[derive(Clone, Debug)]
enum Shape {
    LogNormal { mu: f64, sigma: f64 },
    Gamma(Gamma<f64>),
    Empirical(Vec<(f64, f64)>),
    Constant(f64),
}

/// A compiled distribution: draws one value per call, clamped to `[min, max]`.
#[derive(Clone, Debug)]
pub struct Sampler {
    shape: Shape,
    min: f64,
    max: f64,
}

impl Sampler {
    /// Compiles a spec; `key` names it in errors. Call after [`super::StoreSpec::validate`].
    pub fn new<Q: Quantity>(key: &str, d: &DistSpec<Q>) -> Result<Self, StoreError> {
        let missing = |field: &str| StoreError::Invalid {
            key: format!("{key}.{field}"),
            problem: "is required".into(),
        };
        let shape = match d.distribution {
            DistKind::Lognormal => {
                let median = d.median.ok_or_else(|| missing("median"))?.base();
                let sigma = match (d.sigma, d.p95) {
                    (Some(s), _) => s,
                    (None, Some(p95)) => (p95.base() / median).ln() / Z95,
                    (None, None) => return Err(missing("p95")),
                };
                Shape::LogNormal {
                    mu: median.ln(),
                    sigma,
                }
            }
            DistKind::Gamma => {
                let mean = d.mean.ok_or_else(|| missing("mean"))?.base();
                let k = d.shape.ok_or_else(|| missing("shape"))?;
                let g = Gamma::new(k, mean / k).map_err(|e| StoreError::Invalid {
                    key: format!("{key}.shape"),
                    problem: format!("gives no valid gamma distribution: {e}"),
                })?;
                Shape::Gamma(g)
            }
            DistKind::Empirical => Shape::Empirical(
                d.quantiles
                    .as_ref()
                    .ok_or_else(|| missing("quantiles"))?
                    .iter()
                    .map(|(p, v)| (*p, v.base()))
                    .collect(),
            ),
            DistKind::Constant => Shape::Constant(d.value.ok_or_else(|| missing("value"))?.base()),
        };
        Ok(Sampler {
            shape,
            min: d.min.map_or(0.0, |m| m.base()),
            max: d.max.map_or(f64::INFINITY, |m| m.base()),
        })
    }

    /// One sample, drawn from `rng` (in base units, clamped).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let x = match &self.shape {
            Shape::LogNormal { mu, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                (mu + sigma * z).exp()
            }
            Shape::Gamma(g) => g.sample(rng),
            Shape::Empirical(points) => interpolate(points, rng.random::<f64>()),
            Shape::Constant(v) => *v,
        };
        x.clamp(self.min, self.max)
    }

    /// The median of the unclamped distribution where it has a closed form (for reports).
    pub fn median(&self) -> Option<f64> {
        match &self.shape {
            Shape::LogNormal { mu, .. } => Some(mu.exp()),
            Shape::Empirical(points) => Some(interpolate(points, 0.5)),
            Shape::Constant(v) => Some(*v),
            Shape::Gamma(_) => None,
        }
    }
}

/// The inverse CDF through `(p, value)` points, linear between them, flat outside.
fn interpolate(points: &[(f64, f64)], u: f64) -> f64 {
    let i = points.partition_point(|(p, _)| *p < u);
    match (i.checked_sub(1).and_then(|j| points.get(j)), points.get(i)) {
        (Some(&(p0, v0)), Some(&(p1, v1))) if p1 > p0 => v0 + (v1 - v0) * (u - p0) / (p1 - p0),
        (_, Some(&(_, v))) | (Some(&(_, v)), None) => v,
        (None, None) => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::spec::DistSpec;
    use rand::SeedableRng;
    use units::Duration;

    fn spec(yaml: &str) -> DistSpec<Duration> {
        serde_saphyr::from_str(yaml).unwrap()
    }

    fn quantile(mut v: Vec<f64>, q: f64) -> f64 {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    }

    #[test]
    fn lognormal_hits_median_and_p95() {
        let s = Sampler::new(
            "x",
            &spec("distribution: lognormal\nmedian: 27ms\np95: 75ms\n"),
        )
        .unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let xs: Vec<f64> = (0..50_000).map(|_| s.sample(&mut rng)).collect();
        let med = quantile(xs.clone(), 0.5) / 1e6;
        let p95 = quantile(xs, 0.95) / 1e6;
        assert!((med - 27.0).abs() < 0.8, "median {med} ms");
        assert!((p95 - 75.0).abs() < 3.0, "p95 {p95} ms");
    }

    #[test]
    fn clamps_to_min_and_max() {
        let s = Sampler::new(
            "x",
            &spec("distribution: lognormal\nmedian: 10ms\nsigma: 2.0\nmin: 5ms\nmax: 20ms\n"),
        )
        .unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(2);
        let xs: Vec<f64> = (0..10_000).map(|_| s.sample(&mut rng)).collect();
        assert!(xs.iter().all(|x| (5e6..=20e6).contains(x)));
        assert!(xs.contains(&20e6) && xs.contains(&5e6));
    }

    #[test]
    fn gamma_mean() {
        let s = Sampler::new("x", &spec("distribution: gamma\nmean: 30ms\nshape: 4\n")).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let mean = (0..50_000).map(|_| s.sample(&mut rng)).sum::<f64>() / 50_000.0 / 1e6;
        assert!((mean - 30.0).abs() < 0.5, "mean {mean} ms");
    }

    #[test]
    fn empirical_interpolates() {
        let s = Sampler::new(
            "x",
            &spec("distribution: empirical\nquantiles: [[0, 10ms], [0.5, 20ms], [1, 100ms]]\n"),
        )
        .unwrap();
        assert_eq!(s.median(), Some(20e6));
        let pts = [(0.0, 10.0), (0.5, 20.0), (1.0, 100.0)];
        assert_eq!(interpolate(&pts, 0.25), 15.0);
        assert_eq!(interpolate(&pts, 0.75), 60.0);
        assert_eq!(interpolate(&pts, 0.0), 10.0);
        assert_eq!(interpolate(&[(0.2, 1.0), (0.8, 2.0)], 0.1), 1.0);
        assert_eq!(interpolate(&[(0.2, 1.0), (0.8, 2.0)], 0.9), 2.0);
    }
}
