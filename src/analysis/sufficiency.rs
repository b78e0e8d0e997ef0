//! How much data a latency quantile needs (report.md §4.7): the
//! distribution-free order-statistic interval `[X(j), X(k)]` for the
//! p-quantile, the sufficiency rule built on it (confidence 0.95, symmetric
//! tails, 5 order statistics above the upper rank), and the minimum sample
//! sizes `n_min` and `n_min_exists`.
//!
//! The ranks depend on n and p alone, through Binomial(n, p) tails. Those are
//! computed here from the regularized incomplete beta function (continued
//! fraction, modified Lentz) with a prefactor from Loader's saddle-point
//! binomial density, which stays accurate to a few ulps for n in the
//! hundreds of thousands where a plain log-gamma prefactor would lose ~1e-10.

use std::sync::Mutex;

/// The rule's confidence: the interval covers the quantile with at least
/// this probability, split evenly between the two tails.
pub const CONFIDENCE: f64 = 0.95;
/// Order statistics required above the upper rank.
pub const MARGIN: usize = 5;

/// 1-based ranks `(lower, upper)` of the rule's interval and the coverage
/// they achieve for i.i.d. continuous data.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranks {
    pub lower: usize,
    pub upper: usize,
    pub coverage: f64,
}

/// The interval on actual values; `upper_ms` (and the width) are unknown
/// when the upper rank falls among penalized failures, which rank worst.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub lower_rank: usize,
    pub upper_rank: usize,
    pub lower_ms: f64,
    pub upper_ms: Option<f64>,
    pub width_ms: Option<f64>,
    pub coverage: f64,
}

/// The reference evaluates `(1 - confidence) / 2`, which is not the literal
/// 0.025; the same expression keeps every tail comparison identical.
fn tail_bound() -> f64 {
    (1.0 - CONFIDENCE) / 2.0
}

/// Ranks of the symmetric rule for `n` observations, or `None` when they do
/// not exist (`j < 1` or `k > n - 5`) or `p` is not strictly inside (0, 1).
///
/// `j` is 1 + the largest `b` with `P(N <= b) <= a`; `k` the smallest
/// `u >= 1` with `P(N >= u) <= a`, `N ~ Binomial(n, p)`, `a = 0.025`. Both
/// searches start from the normal approximation and step, so a call costs a
/// handful of tail evaluations whatever n is.
pub fn ranks(n: usize, p: f64) -> Option<Ranks> {
    if n < 1 || !(p > 0.0 && p < 1.0) {
        return None;
    }
    let alpha = tail_bound();
    let nf = n as f64;
    let mean = nf * p;
    let sd = (nf * p * (1.0 - p)).sqrt();
    let z = 1.959_963_984_540_054;

    // Largest b in {-1, ..., n} with P(N <= b) <= alpha.
    let mut below = ((mean - z * sd).floor() as i64).clamp(-1, n as i64);
    while below >= 0 && lower_tail(n, below, p) > alpha {
        below -= 1;
    }
    while below < n as i64 && lower_tail(n, below + 1, p) <= alpha {
        below += 1;
    }
    // Smallest u >= 1 with P(N >= u) <= alpha; P(N >= n + 1) = 0 ends it.
    let mut upper = ((mean + z * sd).ceil() as i64 + 1).clamp(1, n as i64 + 1);
    while upper > 1 && upper_tail(n, upper - 1, p) <= alpha {
        upper -= 1;
    }
    while upper_tail(n, upper, p) > alpha {
        upper += 1;
    }

    let lower = below + 1;
    if lower < 1 || upper + MARGIN as i64 > n as i64 {
        return None;
    }
    let (lower, upper) = (lower as usize, upper as usize);
    Some(Ranks {
        lower,
        upper,
        coverage: coverage(n, p, lower, upper),
    })
}

/// `P(N <= upper - 1) - P(N <= lower - 1)`, evaluated the way scipy's
/// binomial CDF arrives at each term: the upper CDF as one minus its small
/// upper tail, the lower CDF directly. Rounding in that order keeps the
/// result bit-identical to the reference whenever both tails are accurate
/// to well under an ulp of 1.
fn coverage(n: usize, p: f64, lower: usize, upper: usize) -> f64 {
    let high = 1.0 - upper_tail(n, upper as i64, p);
    let low = lower_tail(n, lower as i64 - 1, p);
    high - low
}

/// Smallest n for which [`ranks`] exist: 20, 114, 230, 1164 for p = 0.5,
/// 0.9, 0.95, 0.99. Cached per p. `usize::MAX` when p is not inside (0, 1)
/// or no n up to 10,000,000 qualifies (the reference raises there).
pub fn n_min(p: f64) -> usize {
    cached(&N_MIN_CACHE, p, || smallest_n(|n| ranks(n, p).is_some()))
}

/// Smallest n for which any interval exists at all (the narrowest one,
/// nothing required above it): `1 - p^n - (1-p)^n >= 0.95`. 6, 29, 59, 299
/// for p = 0.5, 0.9, 0.95, 0.99. Cached per p; `usize::MAX` as [`n_min`].
pub fn n_min_exists(p: f64) -> usize {
    cached(&N_MIN_EXISTS_CACHE, p, || {
        smallest_n(|n| {
            // P(N <= n-1) - P(N <= 0): the widest interval [X(1), X(n)].
            let n = n as i32;
            1.0 - p.powi(n) - (1.0 - p).powi(n) >= CONFIDENCE
        })
    })
}

/// The rule's interval on `sorted_values` (ascending), with `penalized`
/// failures ranked above every value; `None` when the ranks do not exist or
/// the lower rank falls among the failures.
pub fn interval(sorted_values: &[f64], p: f64, penalized: usize) -> Option<Interval> {
    let n = sorted_values.len() + penalized;
    let ranks = ranks(n, p)?;
    let lower_ms = *sorted_values.get(ranks.lower - 1)?;
    let upper_ms = sorted_values.get(ranks.upper - 1).copied();
    Some(Interval {
        lower_rank: ranks.lower,
        upper_rank: ranks.upper,
        lower_ms,
        upper_ms,
        width_ms: upper_ms.map(|upper| upper - lower_ms),
        coverage: ranks.coverage,
    })
}

/// Beyond this the reference gives up looking for a minimum.
const SEARCH_LIMIT: usize = 10_000_000;

static N_MIN_CACHE: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
static N_MIN_EXISTS_CACHE: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn cached(cache: &Mutex<Vec<(u64, usize)>>, p: f64, compute: impl FnOnce() -> usize) -> usize {
    if !(p > 0.0 && p < 1.0) {
        return usize::MAX;
    }
    let key = p.to_bits();
    // A poisoned lock only means another thread panicked mid-insert of a
    // plain Vec of pairs; the data is still usable.
    let lookup = |cache: &Mutex<Vec<(u64, usize)>>| {
        let entries = cache.lock().unwrap_or_else(|e| e.into_inner());
        entries.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    };
    if let Some(found) = lookup(cache) {
        return found;
    }
    let value = compute();
    let mut entries = cache.lock().unwrap_or_else(|e| e.into_inner());
    if !entries.iter().any(|(k, _)| *k == key) {
        entries.push((key, value));
    }
    value
}

/// Smallest n with `exists(n)`, for a property monotone in n: doubling,
/// then bisection, as the reference searches.
fn smallest_n(exists: impl Fn(usize) -> bool) -> usize {
    let mut high = 2;
    while !exists(high) {
        high *= 2;
        if high > SEARCH_LIMIT {
            return usize::MAX;
        }
    }
    let mut low = high / 2;
    while low + 1 < high {
        let middle = (low + high) / 2;
        if exists(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    high
}

/// `P(N <= b)` for `N ~ Binomial(n, p)` = `I_{1-p}(n - b, b + 1)`.
pub fn lower_tail(n: usize, b: i64, p: f64) -> f64 {
    if b < 0 {
        return 0.0;
    }
    if b >= n as i64 {
        return 1.0;
    }
    let b = b as f64;
    beta_regularized(n as f64 - b, b + 1.0, 1.0 - p, p)
}

/// `P(N >= u)` for `N ~ Binomial(n, p)` = `I_p(u, n - u + 1)`.
pub fn upper_tail(n: usize, u: i64, p: f64) -> f64 {
    if u <= 0 {
        return 1.0;
    }
    if u > n as i64 {
        return 0.0;
    }
    let u = u as f64;
    beta_regularized(u, n as f64 - u + 1.0, p, 1.0 - p)
}

/// Regularized incomplete beta `I_x(a, b)` for integer-valued `a, b >= 1`,
/// with `y = 1 - x` passed in so the caller decides how it is rounded.
///
/// The continued fraction converges fast for `x < (a+1)/(a+b+2)`; on the
/// other side the symmetry `I_x(a,b) = 1 - I_y(b,a)` is used. The prefactor
/// `x^a y^b / (a B(a,b))` equals `y * dbinom(a; a+b-1, x)`.
fn beta_regularized(a: f64, b: f64, x: f64, y: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if y <= 0.0 {
        return 1.0;
    }
    if x < (a + 1.0) / (a + b + 2.0) {
        y * binomial_density(a, a + b - 1.0, x, y) * beta_fraction(a, b, x)
    } else {
        1.0 - x * binomial_density(b, a + b - 1.0, y, x) * beta_fraction(b, a, y)
    }
}

/// The continued fraction of `I_x(a,b)` (without its prefactor), evaluated
/// by the modified Lentz method.
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    // Iterations grow like sqrt(max(a, b)); this is far beyond any n used.
    const MAX_ITERATIONS: u32 = 1_000_000;
    let guard = |v: f64| if v.abs() < TINY { TINY } else { v };
    let (sum, plus, minus) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - sum * x / plus);
    let mut h = d;
    for m in 1..MAX_ITERATIONS {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let even = m * (b - m) * x / ((minus + m2) * (a + m2));
        d = 1.0 / guard(1.0 + even * d);
        c = guard(1.0 + even / c);
        h *= d * c;
        let odd = -(a + m) * (sum + m) * x / ((a + m2) * (plus + m2));
        d = 1.0 / guard(1.0 + odd * d);
        c = guard(1.0 + odd / c);
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() <= f64::EPSILON {
            break;
        }
    }
    h
}

/// `P(N = k)` for `N ~ Binomial(n, p)`, `q = 1 - p`, by Loader's saddle
/// point expansion: the log-factorials cancel analytically, so the result
/// keeps relative accuracy of a few ulps at any n.
fn binomial_density(k: f64, n: f64, p: f64, q: f64) -> f64 {
    if k == 0.0 {
        if n == 0.0 {
            return 1.0;
        }
        let log = if p < 0.1 {
            -deviance(n, n * q) - n * p
        } else {
            n * q.ln()
        };
        return log.exp();
    }
    if k == n {
        let log = if q < 0.1 {
            -deviance(n, n * p) - n * q
        } else {
            n * p.ln()
        };
        return log.exp();
    }
    if k < 0.0 || k > n {
        return 0.0;
    }
    let log = stirling_error(n)
        - stirling_error(k)
        - stirling_error(n - k)
        - deviance(k, n * p)
        - deviance(n - k, n * q);
    let log_2pi = std::f64::consts::TAU.ln();
    let spread = log_2pi + k.ln() + (-k / n).ln_1p();
    (log - 0.5 * spread).exp()
}

/// `ln(n!) - ((n + 1/2) ln n - n + ln sqrt(2 pi))` for integer-valued `n`.
fn stirling_error(n: f64) -> f64 {
    // Exact values for small n (computed to 50 digits), where the series
    // below is not yet accurate.
    const SMALL: [f64; 16] = [
        0.0,
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
        0.007573675487951841,
        0.00694284010720953,
        0.006408994188004207,
        0.0059513701127588475,
        0.005554733551962801,
    ];
    const S0: f64 = 1.0 / 12.0;
    const S1: f64 = 1.0 / 360.0;
    const S2: f64 = 1.0 / 1260.0;
    const S3: f64 = 1.0 / 1680.0;
    const S4: f64 = 1.0 / 1188.0;
    if n <= 15.0 {
        return SMALL[n as usize];
    }
    let nn = n * n;
    if n > 500.0 {
        (S0 - S1 / nn) / n
    } else if n > 80.0 {
        (S0 - (S1 - S2 / nn) / nn) / n
    } else if n > 35.0 {
        (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n
    } else {
        (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n
    }
}

/// `x ln(x / m) + m - x`, by a series when `x` is near `m` where the direct
/// form cancels.
fn deviance(x: f64, m: f64) -> f64 {
    if (x - m).abs() < 0.1 * (x + m) {
        let mut v = (x - m) / (x + m);
        let mut s = (x - m) * v;
        if s.abs() < f64::MIN_POSITIVE {
            return s;
        }
        let mut term = 2.0 * x * v;
        v *= v;
        for j in 1..1000 {
            term *= v;
            let next = s + term / f64::from(2 * j + 1);
            if next == s {
                return next;
            }
            s = next;
        }
        return s;
    }
    x * (x / m).ln() + m - x
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rank_pair(n: usize, p: f64) -> Option<(usize, usize)> {
        ranks(n, p).map(|r| (r.lower, r.upper))
    }

    #[test]
    fn rank_examples_of_the_spec() {
        assert_eq!(rank_pair(25, 0.5), Some((8, 18)));
        assert_eq!(rank_pair(20, 0.5), Some((6, 15)));
        assert_eq!(rank_pair(100, 0.5), Some((40, 61)));
        assert_eq!(rank_pair(114, 0.9), Some((96, 109)));
        assert_eq!(rank_pair(230, 0.95), Some((212, 225)));
        assert_eq!(rank_pair(1164, 0.99), Some((1145, 1159)));
        assert_eq!(rank_pair(100, 0.9), None);
        assert_eq!(rank_pair(19, 0.5), None);
    }

    #[test]
    fn coverage_matches_the_reference_bit_for_bit() {
        assert_eq!(ranks(25, 0.5).unwrap().coverage, 0.9567147493362427);
    }

    #[test]
    fn minimum_sample_sizes() {
        let levels = [0.5, 0.9, 0.95, 0.99];
        let n_mins: Vec<usize> = levels.iter().map(|&p| n_min(p)).collect();
        assert_eq!(n_mins, [20, 114, 230, 1164]);
        let exists: Vec<usize> = levels.iter().map(|&p| n_min_exists(p)).collect();
        assert_eq!(exists, [6, 29, 59, 299]);
        // Cached answers are the same answers.
        assert_eq!(n_min(0.99), 1164);
        assert_eq!(n_min_exists(0.5), 6);
        assert_eq!(n_min(1.0), usize::MAX);
        assert_eq!(n_min_exists(0.0), usize::MAX);
    }

    #[test]
    fn no_ranks_for_degenerate_input() {
        assert_eq!(ranks(0, 0.5), None);
        assert_eq!(ranks(100, 0.0), None);
        assert_eq!(ranks(100, 1.0), None);
        assert_eq!(ranks(100, f64::NAN), None);
    }

    #[test]
    fn interval_on_values_of_the_worked_example() {
        // 25 values 10, 20, ..., 250: ranks (8, 18) -> [80, 180].
        let values: Vec<f64> = (1..=25).map(|i| f64::from(i) * 10.0).collect();
        let got = interval(&values, 0.5, 0).unwrap();
        assert_eq!((got.lower_rank, got.upper_rank), (8, 18));
        assert_eq!((got.lower_ms, got.upper_ms), (80.0, Some(180.0)));
        assert_eq!(got.width_ms, Some(100.0));
        assert_eq!(got.coverage, 0.9567147493362427);
        // 20 successes and 5 penalized failures: the same ranks of n = 25.
        let got = interval(&values[..20], 0.5, 5).unwrap();
        assert_eq!((got.lower_ms, got.upper_ms), (80.0, Some(180.0)));
        // Upper rank among the failures: the upper bound is unknown.
        let got = interval(&values[..15], 0.5, 10).unwrap();
        assert_eq!(
            (got.lower_ms, got.upper_ms, got.width_ms),
            (80.0, None, None)
        );
        // Lower rank among the failures: no interval.
        assert_eq!(interval(&values[..7], 0.5, 18), None);
        assert_eq!(interval(&values[..4], 0.5, 0), None);
    }

    #[test]
    fn tails_agree_with_exact_sums() {
        // Binomial(10, 0.5): P(N <= 2) = 56/1024, P(N >= 8) = 56/1024.
        assert!((lower_tail(10, 2, 0.5) - 56.0 / 1024.0).abs() < 1e-16);
        assert!((upper_tail(10, 8, 0.5) - 56.0 / 1024.0).abs() < 1e-16);
        assert_eq!(lower_tail(10, -1, 0.5), 0.0);
        assert_eq!(lower_tail(10, 10, 0.5), 1.0);
        assert_eq!(upper_tail(10, 11, 0.5), 0.0);
        assert_eq!(upper_tail(10, 0, 0.5), 1.0);
        // Binomial(3, 0.9): P(N >= 3) = 0.729, P(N <= 1) = 0.028.
        assert!((upper_tail(3, 3, 0.9) - 0.729).abs() < 1e-15);
        assert!((lower_tail(3, 1, 0.9) - 0.028).abs() < 1e-15);
    }
}
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tmp_compare {
    #[test]
    #[ignore]
    fn compare_file() {
        let text = std::fs::read_to_string("/tmp/ranks_ref.txt").unwrap();
        let (mut total, mut rank_bad, mut cov_exact, mut cov_total, mut max_rel) =
            (0, 0, 0, 0, 0f64);
        let start = std::time::Instant::now();
        for line in text.lines() {
            let f: Vec<&str> = line.split(' ').collect();
            let n: usize = f[0].parse().unwrap();
            let p: f64 = f[1].parse().unwrap();
            let got = super::ranks(n, p);
            total += 1;
            if f[2] == "none" {
                if got.is_some() {
                    rank_bad += 1;
                    println!("{line} got {got:?}");
                }
                continue;
            }
            let (j, k, c): (usize, usize, f64) = (
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
                f[4].parse().unwrap(),
            );
            match got {
                Some(r) if r.lower == j && r.upper == k => {
                    cov_total += 1;
                    if r.coverage == c {
                        cov_exact += 1
                    } else {
                        let rel = ((r.coverage - c) / c).abs();
                        max_rel = max_rel.max(rel);
                        if cov_total - cov_exact < 30 {
                            println!("cov {line} got {:?} diff {:e}", r.coverage, r.coverage - c);
                        }
                    }
                }
                _ => {
                    rank_bad += 1;
                    println!("{line} got {got:?}");
                }
            }
        }
        println!("total {total} rank_bad {rank_bad} cov_exact {cov_exact}/{cov_total} max_rel {max_rel:e} time {:?}", start.elapsed());
    }
}
