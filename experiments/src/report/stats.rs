//! Mean, standard deviation and a 95% confidence interval over replications.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for a single replication.
    pub std: f64,
    /// Half-width of the two-sided 95% confidence interval of the mean (Student's t); 0 for n < 2.
    pub ci95: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Summary {
        let n = values.len();
        if n == 0 {
            return Summary {
                n,
                mean: f64::NAN,
                std: f64::NAN,
                ci95: f64::NAN,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Summary {
                n,
                mean,
                std: 0.0,
                ci95: 0.0,
            };
        }
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let std = var.sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .map(|d| d.inverse_cdf(0.975))
            .unwrap_or(1.96);
        Summary {
            n,
            mean,
            std,
            ci95: t * std / (n as f64).sqrt(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_sample() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(s.mean, 3.0);
        assert!((s.std - 1.5811).abs() < 1e-3);
        // t(0.975, 4) = 2.776
        assert!(
            (s.ci95 - 2.776 * 1.5811 / 5f64.sqrt()).abs() < 1e-2,
            "{}",
            s.ci95
        );
        let one = Summary::of(&[7.0]);
        assert_eq!((one.mean, one.std, one.ci95), (7.0, 0.0, 0.0));
    }
}
