//! The estimates: paired and Welch t intervals, the seeded bootstrap, log-
//! ratio or difference scale.

use super::*;

pub(super) fn on_scale(values: &[f64], scale: &str) -> Vec<f64> {
    if scale == LOG_RATIO {
        values.iter().map(|v| v.ln()).collect()
    } else {
        values.to_vec()
    }
}

pub(super) fn mean(values: &[f64]) -> f64 {
    pairwise_sum(values) / values.len() as f64
}

pub(super) fn mean_sd(values: &[f64]) -> (f64, f64) {
    let m = mean(values);
    if values.len() < 2 {
        return (m, 0.0);
    }
    let squares: Vec<f64> = values.iter().map(|v| (v - m) * (v - m)).collect();
    (
        m,
        (pairwise_sum(&squares) / (values.len() - 1) as f64).sqrt(),
    )
}

pub(super) fn p_positive(mean: f64, se: f64, df: f64) -> Option<f64> {
    (se != 0.0).then(|| t_sf(mean / se, df))
}

pub(super) fn one_sample(
    values: &[f64],
    confidence: f64,
    method: &str,
    estimand: &str,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    let n = values.len();
    let (m, sd) = mean_sd(values);
    let se = (sd / (n as f64).sqrt()).max(floor.unwrap_or(0.0));
    let df = n as f64 - 1.0;
    let half = t_quantile(confidence, df) * se;
    Estimate {
        method: method.to_owned(),
        estimand: estimand.to_owned(),
        effect: Some(m),
        lower: Some(m - half),
        upper: Some(m + half),
        df: Some(n as i64 - 1),
        n,
        p_worse: p_positive(sign * m, se, df),
        detail: floor.map(|_| BINOMIAL_FLOOR.to_owned()),
    }
}

pub(super) fn welch(
    first: &[f64],
    second: &[f64],
    confidence: f64,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    let (mean_a, sd_a) = mean_sd(first);
    let (mean_b, sd_b) = mean_sd(second);
    let se = (sd_a * sd_a / first.len() as f64 + sd_b * sd_b / second.len() as f64)
        .sqrt()
        .max(floor.unwrap_or(0.0));
    let df = first.len().min(second.len()) as i64 - 1;
    let half = t_quantile(confidence, df as f64) * se;
    let diff = mean_b - mean_a;
    Estimate {
        method: "welch_t_min_df".into(),
        estimand: String::new(),
        effect: Some(diff),
        lower: Some(diff - half),
        upper: Some(diff + half),
        df: Some(df),
        n: first.len() + second.len(),
        p_worse: p_positive(sign * diff, se, df as f64),
        detail: floor.map(|_| BINOMIAL_FLOOR.to_owned()),
    }
}

/// The gated interval, on the effect scale.
pub(super) fn primary(
    design: &str,
    scale: &str,
    case: &Case,
    confidence: f64,
    sign: f64,
    floor: Option<f64>,
) -> Estimate {
    if scale == ABSOLUTE {
        return one_sample(&case.1, confidence, "one_sample_t", ABSOLUTE, sign, None);
    }
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    let raw = if design == PAIRED {
        let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        one_sample(&diffs, confidence, "paired_t", "", sign, floor)
    } else {
        welch(&a, &b, confidence, sign, floor)
    };
    if scale == LOG_RATIO {
        return relative(raw, "geometric_ratio");
    }
    Estimate {
        estimand: DIFFERENCE.into(),
        ..raw
    }
}

/// A log-scale interval as a relative change, exp(x) - 1.
pub(super) fn relative(raw: Estimate, estimand: &str) -> Estimate {
    Estimate {
        method: format!("{}_log_ratio", raw.method),
        estimand: estimand.to_owned(),
        effect: raw.effect.map(f64::exp_m1),
        lower: raw.lower.map(f64::exp_m1),
        upper: raw.upper.map(f64::exp_m1),
        detail: None,
        ..raw
    }
}

pub(super) fn var_ddof1(values: &[f64]) -> f64 {
    let (_, sd) = mean_sd(values);
    if values.len() < 2 {
        return f64::NAN;
    }
    sd * sd
}

/// Fieller's interval for mean(second) / mean(first), as a relative change.
pub(super) fn fieller(design: &str, case: &Case, confidence: f64) -> Estimate {
    let (a, b) = case;
    let (n_a, n_b) = (a.len(), b.len());
    let var_a = var_ddof1(a) / n_a as f64;
    let var_b = var_ddof1(b) / n_b as f64;
    let (mean_a, mean_b) = (mean(a), mean(b));
    let (cov, df) = if design == PAIRED {
        let products: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - mean_a) * (y - mean_b))
            .collect();
        (
            pairwise_sum(&products) / (n_a as f64 - 1.0) / n_a as f64,
            n_a as i64 - 1,
        )
    } else {
        (0.0, n_a.min(n_b) as i64 - 1)
    };
    let t = t_quantile(confidence, df as f64);
    let quad = mean_a * mean_a - t * t * var_a;
    let lin = -2.0 * (mean_a * mean_b - t * t * cov);
    let konst = mean_b * mean_b - t * t * var_b;
    let disc = lin * lin - 4.0 * quad * konst;
    let effect = (mean_a != 0.0).then(|| mean_b / mean_a - 1.0);
    let n = if design == PAIRED { n_a } else { n_a + n_b };
    let mut est = Estimate {
        method: "fieller".into(),
        estimand: "arithmetic_ratio".into(),
        effect,
        lower: None,
        upper: None,
        df: Some(df),
        n,
        p_worse: None,
        detail: None,
    };
    if quad <= 0.0 || disc < 0.0 {
        est.detail = Some("unbounded".into());
        return est;
    }
    let root = disc.sqrt();
    let r1 = (-lin - root) / (2.0 * quad);
    let r2 = (-lin + root) / (2.0 * quad);
    let (low, high) = if r1 <= r2 { (r1, r2) } else { (r2, r1) };
    est.lower = Some(low - 1.0);
    est.upper = Some(high - 1.0);
    est
}

/// Percentile bootstrap of the effect: blocks in pairs, or runs within arms.
pub(super) fn bootstrap(
    design: &str,
    scale: &str,
    case: &Case,
    confidence: f64,
    seed: u64,
) -> Estimate {
    let mut rng = Pcg64::new(seed);
    let a = on_scale(&case.0, scale);
    let b = on_scale(&case.1, scale);
    let mut means = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let method = if design == PAIRED {
        let diffs: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y - x).collect();
        let mut row = vec![0.0; diffs.len()];
        for _ in 0..BOOTSTRAP_RESAMPLES {
            for slot in row.iter_mut() {
                *slot = diffs[rng.below(diffs.len())];
            }
            means.push(mean(&row));
        }
        "block_bootstrap"
    } else {
        // numpy draws every baseline resample before any candidate one.
        let picks_a: Vec<usize> = (0..BOOTSTRAP_RESAMPLES * a.len())
            .map(|_| rng.below(a.len()))
            .collect();
        let picks_b: Vec<usize> = (0..BOOTSTRAP_RESAMPLES * b.len())
            .map(|_| rng.below(b.len()))
            .collect();
        for r in 0..BOOTSTRAP_RESAMPLES {
            let row_a: Vec<f64> = picks_a[r * a.len()..(r + 1) * a.len()]
                .iter()
                .map(|&i| a[i])
                .collect();
            let row_b: Vec<f64> = picks_b[r * b.len()..(r + 1) * b.len()]
                .iter()
                .map(|&i| b[i])
                .collect();
            means.push(mean(&row_b) - mean(&row_a));
        }
        "cluster_bootstrap"
    };
    let tail = (1.0 - confidence) / 2.0;
    let effect = mean(&means);
    let mut sorted = means;
    sorted.sort_by(f64::total_cmp);
    let low = quantile_linear(&sorted, tail);
    let high = quantile_linear(&sorted, 1.0 - tail);
    let raw = Estimate {
        method: method.into(),
        estimand: String::new(),
        effect: Some(effect),
        lower: Some(low),
        upper: Some(high),
        df: None,
        n: a.len(),
        p_worse: None,
        detail: Some(format!("seed {seed}")),
    };
    if scale == LOG_RATIO {
        return relative(raw, "geometric_ratio");
    }
    Estimate {
        estimand: DIFFERENCE.into(),
        detail: None,
        ..raw
    }
}
