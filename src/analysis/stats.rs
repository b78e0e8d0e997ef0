//! Order-statistic helpers every report figure shares: the type-7
//! percentile of docs/report.md §0.2 and Python's `round()`.
//!
//! The percentile must agree with the reference to the last bit, so the
//! interpolation is written as exactly the expression the spec gives.

/// Percentile of `values` (in any order) at `level` in [0, 1].
///
/// `None` for no values. A single value is returned as is (the reference's
/// `report_stats.percentile` short-circuits it), and so is any level for it.
/// A level outside [0, 1] (or NaN) has no percentile for two or more values:
/// the reference would index outside the data there.
pub fn percentile(values: &[f64], level: f64) -> Option<f64> {
    percentiles(values, &[level]).pop().flatten()
}

/// [`percentile`] over values already sorted ascending (callers that ask
/// for several levels of one metric sort once).
pub fn percentile_sorted(sorted: &[f64], level: f64) -> Option<f64> {
    match sorted {
        [] => None,
        [only] => Some(*only),
        _ => interpolate(sorted, level),
    }
}

/// `quantiles.quantile` of the reference: like [`percentile`] for a level in
/// [0, 1], `None` outside it, and no short-circuit for a single value (so
/// `[x]` gives `x*1 + x*0`, which only differs for non-finite `x`).
pub fn quantile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    interpolate(&sort_floats(values.to_vec()), p)
}

/// Sorts floats ascending in `f64::total_cmp` order (-NaN < -inf < ... <
/// -0.0 < +0.0 < ... < +inf < NaN), as `sort_unstable_by(f64::total_cmp)`
/// would, in about half its time: the latency block sorts every request's
/// value of each metric, and sorting order-preserving integer keys compares
/// without the per-comparison bit twiddling of `total_cmp`. The keys take
/// the values' own buffer (same size and alignment, so both collects reuse
/// it): a long list costs no second allocation, whose fresh pages cost
/// about 5 µs each on the virtual machines stormlog is benchmarked on
/// (a third of the time of sorting 300,000 values).
pub fn sort_floats(values: Vec<f64>) -> Vec<f64> {
    let mut keys: Vec<u64> = values.into_iter().map(order_key).collect();
    keys.sort_unstable();
    keys.into_iter().map(of_order_key).collect()
}

/// Percentiles of `values` (in any order) at `levels`, each exactly what
/// [`percentile_sorted`] gives on the sorted values. Only the order
/// statistics the levels interpolate between are found, by selection: a few
/// levels of a long list cost a fraction of sorting it.
pub fn percentiles(values: &[f64], levels: &[f64]) -> Vec<Option<f64>> {
    percentiles_of(values.to_vec(), levels)
}

/// [`percentiles`] of values the caller is done with: the selection works
/// in their own buffer instead of a copy.
pub fn percentiles_of(values: Vec<f64>, levels: &[f64]) -> Vec<Option<f64>> {
    let n = values.len();
    let ranks = levels
        .iter()
        .filter_map(|&l| Ordered::percentile_ranks(n, l))
        .flatten();
    let ordered = Ordered::new(values, ranks);
    levels.iter().map(|&l| ordered.percentile(l)).collect()
}

/// Floats of which only some order statistics are read: the ranks named
/// when it is made are placed by selection (each leaves everything after
/// its rank no smaller, as in [`percentiles_of`]), which costs a few passes
/// over the values where sorting them costs a pass per halving. Any other
/// rank is still read exactly, by a selection among the values between the
/// two placed ranks around it (a copy of them): a rank nobody named costs
/// time, never a wrong value. Read as sorted values would be: `at(k)` is
/// what `sorted[k]` holds, [`Ordered::percentile`] what
/// [`percentile_sorted`] gives.
#[derive(Debug, Clone, Default)]
pub struct Ordered {
    /// The values' order keys: at a placed rank, that rank's key; between
    /// two placed ranks, the keys of the ranks between them, in any order.
    keys: Vec<u64>,
    /// The placed ranks, ascending.
    placed: Vec<usize>,
}

impl Ordered {
    /// `values` (in any order), with the order statistics at `ranks` placed
    /// (ranks past the last value are left out).
    pub fn new(values: Vec<f64>, ranks: impl IntoIterator<Item = usize>) -> Self {
        // Same size and alignment: the keys take the values' buffer.
        let mut keys: Vec<u64> = values.into_iter().map(order_key).collect();
        let mut placed: Vec<usize> = ranks.into_iter().filter(|&r| r < keys.len()).collect();
        placed.sort_unstable();
        placed.dedup();
        let mut start = 0;
        for &rank in &placed {
            keys[start..].select_nth_unstable(rank - start);
            start = rank + 1;
        }
        Ordered { keys, placed }
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The value of rank `k` (0 the smallest), as `sorted.get(k)` would give.
    pub fn at(&self, k: usize) -> Option<f64> {
        if k >= self.keys.len() {
            return None;
        }
        // The placed ranks around k: the values between them are exactly
        // the order statistics between those ranks.
        let i = self.placed.partition_point(|&p| p < k);
        if self.placed.get(i) == Some(&k) {
            return Some(of_order_key(self.keys[k]));
        }
        #[cfg(test)]
        UNPLACED_READS.with(|n| n.set(n.get() + 1));
        let lo = if i == 0 { 0 } else { self.placed[i - 1] + 1 };
        let hi = self.placed.get(i).copied().unwrap_or(self.keys.len());
        let mut between = self.keys[lo..hi].to_vec();
        let (_, key, _) = between.select_nth_unstable(k - lo);
        Some(of_order_key(*key))
    }

    /// [`percentile_sorted`] of the values.
    pub fn percentile(&self, level: f64) -> Option<f64> {
        match self.keys.len() {
            0 => None,
            1 => self.at(0),
            n => {
                let s = spot(n, level)?;
                Some(s.between(self.at(s.lower)?, self.at(s.upper)?))
            }
        }
    }

    /// The ranks [`Ordered::percentile`] reads for `level` among `len`
    /// values; none for a level it gives no value for.
    pub fn percentile_ranks(len: usize, level: f64) -> Option<[usize; 2]> {
        spot(len, level).map(|s| [s.lower, s.upper])
    }

    /// Every value, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = f64> + '_ {
        self.keys.iter().map(|&k| of_order_key(k))
    }
}

#[cfg(test)]
thread_local! {
    /// How many reads of [`Ordered::at`] on this thread found their rank
    /// unplaced (tests check that the report's reads are all placed).
    pub static UNPLACED_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

const SIGN: u64 = 1 << 63;

/// The key of `f64::total_cmp` as an unsigned integer: a negative float has
/// all its bits flipped (larger magnitudes come first), a positive one only
/// its sign bit (so it comes after every negative).
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b & SIGN != 0 {
        !b
    } else {
        b | SIGN
    }
}

fn of_order_key(k: u64) -> f64 {
    f64::from_bits(if k & SIGN != 0 { k ^ SIGN } else { !k })
}

/// Python's `round(x)` for a float: nearest integer, ties to even.
pub fn round_half_even(x: f64) -> f64 {
    x.round_ties_even()
}

fn interpolate(sorted: &[f64], level: f64) -> Option<f64> {
    let s = spot(sorted.len(), level)?;
    Some(s.between(sorted[s.lower], sorted[s.upper]))
}

/// Where a level falls among `len` sorted values: the two ranks around it
/// and the weight of the upper one.
struct Spot {
    lower: usize,
    upper: usize,
    weight: f64,
}

fn spot(len: usize, level: f64) -> Option<Spot> {
    if len == 0 || !(0.0..=1.0).contains(&level) {
        return None;
    }
    let last = len - 1;
    let rank = level * last as f64;
    // `rank` is in [0, last], so truncation is Python's `int(rank)`.
    let lower = (rank as usize).min(last);
    Some(Spot {
        lower,
        upper: (lower + 1).min(last),
        weight: rank - lower as f64,
    })
}

impl Spot {
    /// docs/report.md §0.2: exactly `a*(1-w) + b*w`, in this order, for bit-identical output.
    fn between(&self, a: f64, b: f64) -> f64 {
        a * (1.0 - self.weight) + b * self.weight
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A fixed pseudo-random sequence (xorshift64*), no crate needed.
    fn noise(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
    }

    /// Whatever ranks are placed, every rank reads what a sort puts there
    /// (to the bit: NaNs, infinities and both zeros in `total_cmp` order),
    /// and every percentile is `percentile_sorted`'s.
    #[test]
    fn ordered_values_read_as_sorted_ones() {
        let mut next = noise(0x51_7cc1_b727_220a);
        for n in [0usize, 1, 2, 3, 7, 64, 1000, 5003] {
            for placed_count in [0usize, 1, 3, 40] {
                let v: Vec<f64> = (0..n)
                    .map(|_| match next() % 5 {
                        0 => f64::from_bits(next()),
                        1 => (next() % 50) as f64 / 4.0,
                        2 => [0.0, -0.0, f64::NAN, f64::INFINITY, -f64::NAN][(next() % 5) as usize],
                        _ => (next() % 100_000) as f64 * 1e-2,
                    })
                    .collect();
                let sorted = sort_floats(v.clone());
                let ranks: Vec<usize> = (0..placed_count)
                    .map(|_| (next() as usize) % (n + 2))
                    .collect();
                let o = Ordered::new(v, ranks);
                assert_eq!(o.len(), n);
                for k in 0..n + 1 {
                    assert_eq!(
                        o.at(k).map(f64::to_bits),
                        sorted.get(k).map(|x| x.to_bits()),
                        "n {n}, rank {k}"
                    );
                }
                for level in [
                    0.0,
                    0.01,
                    0.5,
                    0.9,
                    0.95,
                    0.99,
                    0.999,
                    1.0,
                    1.5,
                    -0.1,
                    f64::NAN,
                ] {
                    assert_eq!(
                        o.percentile(level).map(f64::to_bits),
                        percentile_sorted(&sorted, level).map(f64::to_bits),
                        "n {n}, level {level}"
                    );
                }
                let mut all: Vec<u64> = o.values().map(f64::to_bits).collect();
                let mut want: Vec<u64> = sorted.iter().map(|x| x.to_bits()).collect();
                all.sort_unstable();
                want.sort_unstable();
                assert_eq!(all, want);
            }
        }
    }

    /// A placed rank is read without a selection; an unplaced one with one.
    #[test]
    fn ordered_counts_its_unplaced_reads() {
        let o = Ordered::new((0..100).rev().map(f64::from).collect(), [10, 50]);
        let before = UNPLACED_READS.with(|n| n.get());
        assert_eq!((o.at(10), o.at(50)), (Some(10.0), Some(50.0)));
        assert_eq!(UNPLACED_READS.with(|n| n.get()), before);
        assert_eq!(o.at(30), Some(30.0));
        assert_eq!(UNPLACED_READS.with(|n| n.get()), before + 1);
    }

    /// A sort and a selection work in the buffer they are given: the keys
    /// and the sorted floats are collected in place, not into new memory.
    #[test]
    fn sorting_reuses_the_values_buffer() {
        let v: Vec<f64> = (0..10_000)
            .map(|i| f64::from((i * 7919) % 10_007))
            .collect();
        let at = v.as_ptr() as usize;
        let sorted = sort_floats(v);
        assert_eq!(sorted.as_ptr() as usize, at);
        assert!(sorted.is_sorted());
    }

    #[test]
    fn float_sorts_order_as_total_cmp_does() {
        let specials = [
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            f64::MAX,
            f64::MIN,
            1.0,
            -1.0,
        ];
        let mut next = noise(0x9e37_79b9_7f4a_7c15);
        for n in [0, 1, 2, 3, 20, 513, 4000, 70_000] {
            let v: Vec<f64> = (0..n)
                .map(|i| match next() % 4 {
                    // Raw bit patterns: every sign, exponent and payload.
                    0 => f64::from_bits(next()),
                    // Latency-like values with many repeats.
                    1 => (next() % 1000) as f64 / 8.0,
                    2 => specials[i % specials.len()],
                    _ => -((next() % 100_000) as f64) * 1e-3,
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by(f64::total_cmp);
            let v = sort_floats(v);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v), bits(&want), "{n} values");
        }
    }

    #[test]
    fn selected_percentiles_equal_those_of_the_sorted_values() {
        let mut next = noise(42);
        let levels = [
            0.5,
            0.95,
            0.99,
            0.0,
            1.0,
            0.9,
            0.5,
            -0.1,
            1.5,
            f64::NAN,
            0.123_456,
        ];
        for n in [0, 1, 2, 3, 7, 100, 1001, 30_000] {
            let values: Vec<f64> = (0..n)
                .map(|i| match next() % 5 {
                    0 => f64::from_bits(next()),
                    1 => (next() % 50) as f64 / 4.0,
                    2 => [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1e-300][i % 5],
                    _ => (next() % 1_000_000) as f64 * 1e-3 - 100.0,
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable_by(f64::total_cmp);
            let want: Vec<Option<u64>> = levels
                .iter()
                .map(|l| percentile_sorted(&sorted, *l).map(f64::to_bits))
                .collect();
            let got: Vec<Option<u64>> = percentiles(&values, &levels)
                .into_iter()
                .map(|v| v.map(f64::to_bits))
                .collect();
            assert_eq!(got, want, "{n} values");
        }
    }

    #[test]
    fn spec_vectors_are_bit_identical() {
        let a = [100.0, 200.0, 300.0, 400.0];
        assert_eq!(percentile(&a, 0.5), Some(250.0));
        assert_eq!(percentile(&a, 0.9), Some(370.0));
        assert_eq!(percentile(&a, 0.95), Some(385.0));
        assert_eq!(percentile(&a, 0.99), Some(396.99999999999994));
        let b = [40.0, 80.0, 90.0, 120.0];
        assert_eq!(percentile(&b, 0.5), Some(85.0));
        assert_eq!(percentile(&b, 0.95), Some(115.49999999999999));
        assert_eq!(percentile(&b, 0.99), Some(119.1));
        let c = [5.0, 6.0, 7.0, 5.0, 6.0, 7.0, 5.0, 6.0, 7.0, 5.0, 6.0, 7.0];
        assert_eq!(percentile(&c, 0.5), Some(6.0));
        assert_eq!(percentile(&c, 0.95), Some(7.0));
    }

    #[test]
    fn integer_percent_and_literal_levels_agree() {
        // report_stats uses P / 100.0; quantiles uses the literal.
        for (percent, literal) in [(50.0, 0.5), (90.0, 0.9), (95.0, 0.95), (99.0, 0.99)] {
            assert_eq!(percent / 100.0, literal);
        }
    }

    #[test]
    fn penalized_level_and_observed_bound_from_the_worked_example() {
        // docs/report.md §4.7: level 0.5*5/4 = 0.625 over [100,200,300,400] -> 287.5.
        let v = [100.0, 200.0, 300.0, 400.0];
        assert_eq!(quantile(&v, 0.5 * 5.0 / 4.0), Some(287.5));
        let with_timeout = [100.0, 200.0, 300.0, 400.0, 600.0];
        assert_eq!(quantile(&with_timeout, 0.9), Some(520.0));
        assert_eq!(quantile(&with_timeout, 0.95), Some(560.0));
        assert_eq!(quantile(&with_timeout, 0.99), Some(592.0));
    }

    #[test]
    fn empty_single_and_out_of_range() {
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(percentile(&[7.5], 0.99), Some(7.5));
        assert_eq!(percentile(&[f64::INFINITY], 0.5), Some(f64::INFINITY));
        assert!(quantile(&[f64::INFINITY], 0.5).unwrap().is_nan());
        assert_eq!(quantile(&[1.0, 2.0], 1.125), None);
        assert_eq!(quantile(&[1.0, 2.0], -0.1), None);
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 1.0), Some(3.0));
        assert_eq!(quantile(&[3.0, 1.0, 2.0], 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&[1.0, 2.0], 0.25), Some(1.25));
    }

    #[test]
    fn round_is_bankers_rounding_like_python() {
        assert_eq!(round_half_even(0.5), 0.0);
        assert_eq!(round_half_even(1.5), 2.0);
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(-2.5), -2.0);
        assert_eq!(round_half_even(2.675), 3.0);
        assert_eq!(round_half_even(1e9 * 0.1234567895), 123456790.0);
    }
}
