//! The distributions the comparison's intervals need: Student's t and the
//! beta distribution (for Clopper-Pearson), to near machine precision.
//!
//! The reference calls scipy (`stats.t.ppf`, `stats.t.sf`,
//! `stats.beta.ppf`). Both rest on the regularized incomplete beta
//! function, evaluated here by its continued fraction; quantiles are found
//! by bisection down to adjacent floats, which is slow next to Newton's
//! method but cannot diverge, and the comparison asks for a few dozen.

/// `ln Γ(x)` for `x > 0` (Lanczos, g = 7, nine terms: about 1e-15 relative).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series in its accurate range.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEF[0];
    for (i, c) in COEF.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// The regularized incomplete beta function `I_x(a, b)`.
pub fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (a * x.ln() + b * (1.0 - x).ln() - ln_beta(a, b)).exp();
    // The continued fraction converges fast only below the mean.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// The continued fraction of the incomplete beta (modified Lentz).
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// Student's t survival function `P(T > t)` with `df` degrees of freedom.
pub fn t_sf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    // The tail is I_x(df/2, 1/2) at x = df / (df + t^2): small for large |t|,
    // where it must keep its relative precision.
    let x = df / (df + t * t);
    let tail = 0.5 * beta_inc(df / 2.0, 0.5, x);
    if t > 0.0 {
        tail
    } else {
        1.0 - tail
    }
}

/// Student's t quantile: the `t` with `P(T <= t) = p`.
pub fn t_ppf(p: f64, df: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_ppf(1.0 - p, df);
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = 1.0 - p;
    let mut hi = 1.0;
    while t_sf(hi, df) > q {
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    bisect(0.0, hi, |t| t_sf(t, df) > q)
}

/// The beta distribution's quantile: the `x` with `I_x(a, b) = p`.
pub fn beta_ppf(p: f64, a: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    bisect(0.0, 1.0, |x| beta_inc(a, b, x) < p)
}

/// The boundary of a monotone predicate on `[lo, hi]`: true below it.
fn bisect(mut lo: f64, mut hi: f64, below: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..2_000 {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo + (hi - lo) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    // Values from scipy 1.17.1 (stats.t.ppf, stats.t.sf, stats.beta.ppf).
    #[test]
    fn t_quantiles_match_scipy() {
        assert!(close(t_ppf(0.975, 1.0), 12.706204736174694, 1e-12));
        assert!(close(t_ppf(0.975, 2.0), 4.302652729749462, 1e-12));
        assert!(close(t_ppf(0.975, 5.0), 2.5705818356363146, 1e-12));
        assert!(close(t_ppf(0.95, 30.0), 1.697260886593957, 1e-12));
    }

    #[test]
    fn t_tails_match_scipy() {
        assert!(close(t_sf(2.0, 2.0), 0.09175170953613698, 1e-12));
        assert!(close(t_sf(-1.5, 4.0), 0.896, 1e-12));
        assert!(close(t_sf(0.1, 9.0), 0.4612682239783406, 1e-12));
    }

    #[test]
    fn beta_quantiles_match_scipy() {
        assert!(close(beta_ppf(0.025, 3.0, 1.0), 0.2924017738212866, 1e-12));
        assert!(close(beta_ppf(0.975, 4.0, 7.0), 0.6524528500599973, 1e-12));
    }
}
