//! The guards that keep an interval from being trusted: skewness past the
//! normal-noise quantile, too few runs.

use super::*;

/// The 95% quantile of |G1| under normal noise at n; 1.96 SE beyond 30.
pub fn skew_limit(n: usize) -> Option<f64> {
    if n < 3 {
        return None;
    }
    if n <= 30 {
        return Some(SKEW_Q95_NORMAL[n - 3]);
    }
    let nf = n as f64;
    Some(1.96 * (6.0 * nf * (nf - 1.0) / ((nf - 2.0) * (nf + 1.0) * (nf + 3.0))).sqrt())
}

pub(super) fn ptp_zero(values: &[f64]) -> bool {
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    max - min == 0.0
}

/// scipy's `skew(values, bias=False)`.
pub fn adjusted_skewness(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let m = mean(values);
    let d2: Vec<f64> = values.iter().map(|v| (v - m).powi(2)).collect();
    let d3: Vec<f64> = values.iter().map(|v| (v - m).powi(3)).collect();
    let m2 = pairwise_sum(&d2) / n;
    let m3 = pairwise_sum(&d3) / n;
    let g1 = m3 / m2.powf(1.5);
    ((n - 1.0) * n).sqrt() / (n - 2.0) * g1
}

pub(super) fn skew(values: &[f64]) -> (Option<f64>, Option<f64>, Option<bool>) {
    let limit = skew_limit(values.len());
    if values.len() < 3 || ptp_zero(values) {
        return (None, limit, None);
    }
    let g1 = adjusted_skewness(values);
    (Some(g1), limit, Some(limit.is_some_and(|l| g1.abs() > l)))
}

pub(super) fn guard_values(design: &str, scale: &str, case: &Case) -> Vec<f64> {
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    if design == PAIRED && scale != ABSOLUTE {
        return a.iter().zip(&b).map(|(x, y)| y - x).collect();
    }
    b
}
