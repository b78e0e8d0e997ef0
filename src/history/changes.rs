//! Where a metric's level shifted over a series: binary segmentation with
//! a two-sample t test (docs/history.md §3). Every split that leaves at
//! least `min_segment` runs on each side is tried; the split with the
//! largest |t| is kept when its p value, times the number of splits tried
//! (Bonferroni), is below `alpha`; both sides are then searched again.
//! Runs without a value are skipped. On the log scale for ratio metrics.

use crate::compare::dist::t_sf;

/// One shift: the first run after it and its size.
#[derive(Debug, Clone, PartialEq)]
pub struct Shift {
    /// Position in the values given (the first run of the new level).
    pub index: usize,
    /// The levels before and after (geometric means on the log scale).
    pub before: f64,
    pub after: f64,
    /// `after / before - 1` on the log scale, `after - before` otherwise.
    pub change: f64,
    pub t: f64,
    /// The split's two-sided p value, Bonferroni-adjusted for the splits tried.
    pub p_adjusted: f64,
    /// Runs in the segments on either side, when the shift was found.
    pub runs_before: usize,
    pub runs_after: usize,
}

/// The shifts in `values` (None: the run has no value), in series order.
pub fn find(values: &[Option<f64>], log: bool, min_segment: usize, alpha: f64) -> Vec<Shift> {
    let min_segment = min_segment.max(2);
    let mut points: Vec<(usize, f64)> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        match v {
            Some(x) if x.is_finite() && (!log || *x > 0.0) => {
                points.push((i, if log { x.ln() } else { *x }))
            }
            _ => {}
        }
    }
    let xs: Vec<f64> = points.iter().map(|p| p.1).collect();
    let mut found: Vec<(usize, Split)> = Vec::new();
    let mut pending = vec![(0, xs.len())];
    while let Some((lo, hi)) = pending.pop() {
        let Some(split) = best_split(&xs[lo..hi], min_segment) else {
            continue;
        };
        if split.p_adjusted >= alpha {
            continue;
        }
        let at = lo + split.at;
        pending.push((lo, at));
        pending.push((at, hi));
        found.push((at, split));
    }
    found.sort_by_key(|(at, _)| *at);
    found
        .into_iter()
        .map(|(at, s)| {
            let shown = |v: f64| if log { v.exp() } else { v };
            Shift {
                index: points[at].0,
                before: shown(s.mean_before),
                after: shown(s.mean_after),
                change: if log {
                    (s.mean_after - s.mean_before).exp_m1()
                } else {
                    s.mean_after - s.mean_before
                },
                t: s.t,
                p_adjusted: s.p_adjusted,
                runs_before: s.at,
                runs_after: s.len - s.at,
            }
        })
        .collect()
}

struct Split {
    at: usize,
    len: usize,
    mean_before: f64,
    mean_after: f64,
    t: f64,
    p_adjusted: f64,
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    (
        m,
        xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0),
    )
}

/// A difference of levels this small is the rounding of the sums, not a
/// shift: a relative change of 1e-12 on the log scale, an absolute one in
/// fractions.
const ROUNDING: f64 = 1e-12;

/// The split of `xs` with the largest Welch t, on min(n1, n2) - 1 degrees
/// of freedom (the conservative choice `compare` makes).
///
/// The values are taken relative to the first, so that equal values are
/// exactly zero: summed as they are, a run of equal values gives means an
/// ulp apart and variances of ulps squared, whose ratio is a t in the
/// thousands (1,000 copies of one run showed 178 "shifts" of +0.0%).
fn best_split(xs: &[f64], min_segment: usize) -> Option<Split> {
    let n = xs.len();
    if n < 2 * min_segment {
        return None;
    }
    let origin = xs[0];
    let xs: Vec<f64> = xs.iter().map(|x| x - origin).collect();
    let tried = n - 2 * min_segment + 1;
    let mut best: Option<Split> = None;
    for at in min_segment..=n - min_segment {
        let (a, b) = (&xs[..at], &xs[at..]);
        let (ma, va) = mean_var(a);
        let (mb, vb) = mean_var(b);
        let se = (va / a.len() as f64 + vb / b.len() as f64).sqrt();
        let diff = mb - ma;
        let t = if diff.abs() <= ROUNDING {
            0.0
        } else if se > 0.0 {
            diff / se
        } else {
            diff.signum() * f64::INFINITY
        };
        if best.as_ref().is_some_and(|s| s.t.abs() >= t.abs()) {
            continue;
        }
        let df = (a.len().min(b.len()) - 1) as f64;
        let p = if t.is_infinite() {
            0.0
        } else {
            (2.0 * t_sf(t.abs(), df)).min(1.0)
        };
        best = Some(Split {
            at,
            len: n,
            mean_before: ma + origin,
            mean_after: mb + origin,
            t,
            p_adjusted: (p * tried as f64).min(1.0),
        });
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_found_where_it_starts_and_sized() {
        // 1.0 +- 1% for eight runs, then 1.5 +- 1%.
        let noise = [0.0, 0.01, -0.01, 0.005, -0.005, 0.008, -0.008, 0.002];
        let mut values: Vec<Option<f64>> = noise.iter().map(|e| Some(1.0 + e)).collect();
        values.extend(noise.iter().map(|e| Some(1.5 * (1.0 + e))));
        let shifts = find(&values, true, 3, 0.05);
        assert_eq!(shifts.len(), 1, "{shifts:?}");
        assert_eq!(shifts[0].index, 8);
        assert!(
            (shifts[0].change - 0.5).abs() < 0.01,
            "{}",
            shifts[0].change
        );
    }

    #[test]
    fn noise_alone_and_short_series_give_no_shift() {
        let noise = [
            0.0, 0.01, -0.01, 0.005, -0.005, 0.008, -0.008, 0.002, 0.004, -0.003,
        ];
        let values: Vec<Option<f64>> = noise.iter().map(|e| Some(10.0 + e)).collect();
        assert!(find(&values, false, 3, 0.05).is_empty());
        assert!(find(&values[..5], false, 3, 0.05).is_empty());
    }

    #[test]
    fn equal_values_give_no_shift_however_many() {
        // The figures of one run stored 1,000 times: summed as they are,
        // their means differ by an ulp between splits.
        for (v, log) in [
            (49.909055999933116, true),
            (289.9822806578722, true),
            (0.1, false),
        ] {
            for n in [9, 100, 1000] {
                let values = vec![Some(v); n];
                assert!(find(&values, log, 3, 0.05).is_empty(), "{v} x {n}");
            }
            // A step of an ulp is rounding too.
            let mut values = vec![Some(v); 50];
            values.extend(vec![Some(f64::from_bits(v.to_bits() + 1)); 50]);
            assert!(find(&values, log, 3, 0.05).is_empty(), "{v} + 1 ulp");
        }
        // A real step among equal values is still found, and its levels
        // are the values themselves.
        let mut values = vec![Some(49.909055999933116); 20];
        values.extend(vec![Some(60.0); 20]);
        let shifts = find(&values, true, 3, 0.05);
        assert_eq!(shifts.len(), 1, "{shifts:?}");
        assert_eq!(shifts[0].index, 20);
        assert!((shifts[0].before - 49.909055999933116).abs() < 1e-9);
        assert!((shifts[0].after - 60.0).abs() < 1e-9);
    }

    #[test]
    fn missing_values_are_skipped_and_indexes_kept() {
        let mut values = vec![Some(1.0), None, Some(1.01), Some(0.99), Some(1.0)];
        values.extend([Some(2.0), Some(2.01), None, Some(1.99), Some(2.0)]);
        let shifts = find(&values, true, 3, 0.05);
        assert_eq!(shifts.iter().map(|s| s.index).collect::<Vec<_>>(), vec![5]);
        // Two separate steps.
        let mut two: Vec<Option<f64>> = [1.0, 1.01, 0.99, 1.0].iter().map(|v| Some(*v)).collect();
        two.extend([2.0, 2.02, 1.98, 2.0].iter().map(|v| Some(*v)));
        two.extend([4.0, 4.04, 3.96, 4.0].iter().map(|v| Some(*v)));
        let at: Vec<usize> = find(&two, true, 3, 0.05).iter().map(|s| s.index).collect();
        assert_eq!(at, vec![4, 8]);
    }
}
