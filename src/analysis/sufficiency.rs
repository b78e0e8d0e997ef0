//! How much data a latency quantile needs (docs/report.md §4.7): the
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
    let (below, upper) = tail_ranks(n, p, tail_bound());
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

/// The order-statistic interval `[X(j), X(k)]` for the p-quantile of `n`
/// observations at any `confidence` (split evenly between the tails), as
/// 1-based ranks found by the same search as [`ranks`] without the
/// sufficiency rule's margin: `j = 0` when no order statistic bounds the
/// quantile from below, `k = n + 1` when none bounds it from above. `None`
/// when `n` is 0, `p` is not strictly inside (0, 1) or `confidence` not
/// inside (0, 1).
pub fn order_ranks(n: usize, p: f64, confidence: f64) -> Option<(usize, usize)> {
    if n < 1 || !(p > 0.0 && p < 1.0) || !(confidence > 0.0 && confidence < 1.0) {
        return None;
    }
    let (below, upper) = tail_ranks(n, p, (1.0 - confidence) / 2.0);
    Some(((below + 1).max(0) as usize, upper.max(1) as usize))
}

/// `(b, u)`: the largest `b` in `-1..=n` with `P(N <= b) <= alpha` and the
/// smallest `u >= 1` with `P(N >= u) <= alpha`, `N ~ Binomial(n, p)`.
fn tail_ranks(n: usize, p: f64, alpha: f64) -> (i64, i64) {
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
    (below, upper)
}

/// `P(N <= upper - 1) - P(N <= lower - 1)`, evaluated the way scipy's
/// binomial CDF arrives at each term: the upper CDF as one minus its small
/// upper tail, the lower CDF directly, each tail correctly rounded first.
fn coverage(n: usize, p: f64, lower: usize, upper: usize) -> f64 {
    let (n, lower, upper) = (n as u64, lower as u64, upper as u64);
    // `lower >= 1` and `upper <= n - 5` whenever ranks exist.
    let above = if upper > n {
        0.0
    } else {
        exact::upper_tail(n, upper, p).hi
    };
    let below = if lower == 0 {
        0.0
    } else {
        exact::lower_tail(n, lower - 1, p).hi
    };
    (1.0 - above) - below
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

/// The rule's interval on `len` values read by rank through `at` (0 the
/// smallest; `None` past the last), with `penalized` failures ranked above
/// every value; `None` when the ranks do not exist or the lower rank falls
/// among the failures.
pub fn interval_at(
    len: usize,
    at: impl Fn(usize) -> Option<f64>,
    p: f64,
    penalized: usize,
) -> Option<Interval> {
    let ranks = ranks_cached(len + penalized, p)?;
    let lower_ms = at(ranks.lower - 1)?;
    let upper_ms = at(ranks.upper - 1);
    Some(Interval {
        lower_rank: ranks.lower,
        upper_rank: ranks.upper,
        lower_ms,
        upper_ms,
        width_ms: upper_ms.map(|upper| upper - lower_ms),
        coverage: ranks.coverage,
    })
}

/// The ranks (0 the smallest) [`interval_at`] reads among `len` values
/// with `penalized` failures above them, where its rule has ranks there.
pub fn interval_ranks(len: usize, p: f64, penalized: usize) -> Option<[usize; 2]> {
    ranks_cached(len + penalized, p).map(|r| [r.lower - 1, r.upper - 1])
}

/// [`ranks`], remembered per (n, p): a case's latency metrics mostly share
/// one n, and at large n a call sums a few thousand binomial terms per tail
/// in double-double arithmetic.
fn ranks_cached(n: usize, p: f64) -> Option<Ranks> {
    /// ((n, p's bits), ranks) pairs.
    type Entries = Vec<((usize, u64), Option<Ranks>)>;
    static CACHE: Mutex<Entries> = Mutex::new(Vec::new());
    // A comparison of many runs asks for many n: at most this many are kept.
    remember(&CACHE, (n, p.to_bits()), 4096, || ranks(n, p))
}

/// Beyond this the reference gives up looking for a minimum.
const SEARCH_LIMIT: usize = 10_000_000;

static N_MIN_CACHE: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
static N_MIN_EXISTS_CACHE: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());

fn cached(cache: &Mutex<Vec<(u64, usize)>>, p: f64, compute: impl FnOnce() -> usize) -> usize {
    if !(p > 0.0 && p < 1.0) {
        return usize::MAX;
    }
    remember(cache, p.to_bits(), usize::MAX, compute)
}

/// The value `cache` holds for `key`, else `compute`d (outside the lock)
/// and kept while the cache holds fewer than `kept` entries.
fn remember<K: PartialEq + Copy, V: Copy>(
    cache: &Mutex<Vec<(K, V)>>,
    key: K,
    kept: usize,
    compute: impl FnOnce() -> V,
) -> V {
    // A poisoned lock only means another thread panicked mid-push of plain
    // pairs; the entries are still usable.
    let found = {
        let entries = cache.lock().unwrap_or_else(|e| e.into_inner());
        entries.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    };
    if let Some(found) = found {
        return found;
    }
    let value = compute();
    let mut entries = cache.lock().unwrap_or_else(|e| e.into_inner());
    if entries.len() < kept && !entries.iter().any(|(k, _)| *k == key) {
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

/// Binomial tails to about 30 significant digits, for the coverage only,
/// so each CDF is the correctly rounded f64. The reference's scipy (Boost)
/// CDF is itself off by a few ulps, up to ~40 ulps near n = 250,000, so the
/// coverage matches it bit for bit in about 40% of cases (18% with the
/// continued fraction) and otherwise differs in the last bits, nearer the
/// true value (checked against 50-digit mpmath sums).
mod exact {
    use super::stirling_error;

    /// A double-double: the unevaluated sum `hi + lo`, `|lo| <= ulp(hi)/2`.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Dd {
        pub(super) hi: f64,
        lo: f64,
    }

    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let v = s - a;
        let e = (a - (s - v)) + (b - v);
        Dd { hi: s, lo: e }
    }

    fn quick(a: f64, b: f64) -> Dd {
        let s = a + b;
        Dd {
            hi: s,
            lo: b - (s - a),
        }
    }

    fn two_prod(a: f64, b: f64) -> Dd {
        let p = a * b;
        Dd {
            hi: p,
            lo: a.mul_add(b, -p),
        }
    }

    impl Dd {
        pub(super) const fn from(x: f64) -> Self {
            Dd { hi: x, lo: 0.0 }
        }
        pub(super) fn add(self, o: Dd) -> Dd {
            let s = two_sum(self.hi, o.hi);
            let t = two_sum(self.lo, o.lo);
            let s = quick(s.hi, s.lo + t.hi);
            quick(s.hi, s.lo + t.lo)
        }
        pub(super) fn neg(self) -> Dd {
            Dd {
                hi: -self.hi,
                lo: -self.lo,
            }
        }
        pub(super) fn sub(self, o: Dd) -> Dd {
            self.add(o.neg())
        }
        pub(super) fn mul(self, o: Dd) -> Dd {
            let p = two_prod(self.hi, o.hi);
            quick(p.hi, p.lo + (self.hi * o.lo + self.lo * o.hi))
        }
        pub(super) fn div(self, o: Dd) -> Dd {
            let q1 = self.hi / o.hi;
            let r = self.sub(o.mul(Dd::from(q1)));
            let q2 = r.hi / o.hi;
            let r = r.sub(o.mul(Dd::from(q2)));
            let q3 = r.hi / o.hi;
            quick(q1, q2).add(Dd::from(q3))
        }
        fn scale(self, factor: f64) -> Dd {
            // Exact for a power of two.
            Dd {
                hi: self.hi * factor,
                lo: self.lo * factor,
            }
        }

        pub(super) fn exp(self) -> Dd {
            const LN2: Dd = Dd {
                hi: std::f64::consts::LN_2,
                lo: 2.319_046_813_846_299_6e-17,
            };
            if self.hi < -745.0 {
                return Dd::from(0.0);
            }
            let m = (self.hi / LN2.hi).round();
            // r = (x - m ln2) / 1024, then exp(r) by Taylor, squared ten times.
            let r = self.sub(LN2.mul(Dd::from(m))).scale(1.0 / 1024.0);
            let mut term = r;
            let mut sum = Dd::from(1.0).add(r);
            for k in 2..=14 {
                term = term.mul(r).div(Dd::from(f64::from(k)));
                sum = sum.add(term);
            }
            for _ in 0..10 {
                sum = sum.mul(sum);
            }
            // 2^m in two steps so that neither factor overflows or underflows.
            let half = (m / 2.0).trunc();
            sum.scale(2f64.powi(half as i32))
                .scale(2f64.powi((m - half) as i32))
        }

        pub(super) fn ln(self) -> Dd {
            // One Newton step from the f64 logarithm doubles its digits.
            let y = Dd::from(self.hi.ln());
            y.add(self.mul(y.neg().exp())).sub(Dd::from(1.0))
        }
    }

    /// `x ln(x / m) + m - x`; double-double absorbs the cancellation near
    /// `x = m` that Loader's series exists to avoid in f64.
    fn deviance(x: f64, m: Dd) -> Dd {
        let x = Dd::from(x);
        if x.hi == 0.0 {
            return m;
        }
        x.mul(x.div(m).ln()).add(m).sub(x)
    }

    /// `P(N = k)`, `N ~ Binomial(n, p)`, `q = 1 - p`, Loader's form.
    fn density(k: f64, n: f64, p: f64, q: f64) -> Dd {
        let np = two_prod(n, p);
        let nq = two_prod(n, q);
        if k == 0.0 {
            return deviance(n, nq).neg().sub(np).exp();
        }
        if k == n {
            return deviance(n, np).neg().sub(nq).exp();
        }
        let log = Dd::from(stirling_error(n))
            .sub(Dd::from(stirling_error(k)))
            .sub(Dd::from(stirling_error(n - k)))
            .sub(deviance(k, np))
            .sub(deviance(n - k, nq));
        let spread = Dd::from(std::f64::consts::TAU)
            .add(Dd::from(2.449_293_598_294_706_4e-16))
            .mul(Dd::from(k))
            .mul(Dd::from(n - k))
            .div(Dd::from(n));
        log.sub(spread.ln().scale(0.5)).exp()
    }

    /// Sums terms from `first` on while they matter; `ratio(i)` turns the
    /// term of index `i` into the next one.
    fn series(first: Dd, start: u64, steps: u64, ratio: impl Fn(u64) -> Dd) -> Dd {
        let mut term = first;
        let mut sum = first;
        for step in 0..steps {
            term = term.mul(ratio(start + step));
            sum = sum.add(term);
            if term.hi <= sum.hi * 1e-34 {
                break;
            }
        }
        sum
    }

    /// `P(N <= b)` for `0 <= b < n`, summed downwards from `b`.
    pub(super) fn lower_tail(n: u64, b: u64, p: f64) -> Dd {
        let q = 1.0 - p;
        let (nf, first) = (n as f64, density(b as f64, n as f64, p, q));
        // Term i -> i - 1: times i q / ((n - i + 1) p); i runs b, b-1, ..., 1.
        series(first, 0, b, |step| {
            let i = (b - step) as f64;
            two_prod(i, q).div(two_prod(nf - i + 1.0, p))
        })
    }

    /// `P(N >= u)` for `1 <= u <= n`, summed upwards from `u`.
    pub(super) fn upper_tail(n: u64, u: u64, p: f64) -> Dd {
        let q = 1.0 - p;
        let (nf, first) = (n as f64, density(u as f64, n as f64, p, q));
        // Term i -> i + 1: times (n - i) p / ((i + 1) q); i runs u, ..., n-1.
        series(first, u, n - u, |i| {
            let i = i as f64;
            two_prod(nf - i, p).div(two_prod(i + 1.0, q))
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// [`interval_at`] on values sorted ascending.
    fn interval(sorted_values: &[f64], p: f64, penalized: usize) -> Option<Interval> {
        interval_at(
            sorted_values.len(),
            |i| sorted_values.get(i).copied(),
            p,
            penalized,
        )
    }

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
    fn remembered_ranks_are_the_computed_ones() {
        for (n, p) in [
            (25, 0.5),
            (19, 0.5),
            (100, 0.9),
            (1164, 0.99),
            (90_000, 0.95),
        ] {
            // The first call computes and keeps, the second reads back.
            assert_eq!(ranks_cached(n, p), ranks(n, p), "{n} {p}");
            assert_eq!(ranks_cached(n, p), ranks(n, p), "{n} {p}");
        }
        assert_eq!(
            ranks_cached(25, 0.5).map(|r| (r.lower, r.upper)),
            Some((8, 18))
        );
        assert_eq!(ranks_cached(19, 0.5), None);
    }

    #[test]
    fn coverage_matches_the_reference_bit_for_bit() {
        assert_eq!(ranks(25, 0.5).unwrap().coverage, 0.9567147493362427);
    }

    #[test]
    fn coverage_is_correctly_rounded_where_scipy_is_not() {
        // 50-digit mpmath sums give these; scipy says ...028 and ...0455.
        assert_eq!(ranks(103, 0.5).unwrap().coverage, 0.951766347829003);
        let big = ranks(228_826, 0.5).unwrap();
        assert_eq!((big.lower, big.upper), (113_944, 114_883));
        assert_eq!(big.coverage, 0.9503501806840535);
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
