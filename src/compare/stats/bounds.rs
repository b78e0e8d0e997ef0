//! Exact binomial bounds (Clopper-Pearson), the run-pass gate, Holm's
//! step-down and the t quantile of an interval.

use super::*;

/// The exact binomial interval for k of n.
pub fn clopper_pearson(k: u64, n: u64, confidence: f64, model: &'static str) -> ProportionBound {
    let alpha = 1.0 - confidence;
    let (kf, nf) = (k as f64, n as f64);
    let lower = if k == 0 {
        0.0
    } else {
        beta_ppf(alpha / 2.0, kf, nf - kf + 1.0)
    };
    let upper = if k == n {
        1.0
    } else {
        beta_ppf(1.0 - alpha / 2.0, kf + 1.0, nf - kf)
    };
    ProportionBound {
        k,
        n,
        lower,
        upper,
        confidence,
        model,
    }
}

/// Whether at least a share q of runs meets the target (lower bound >= q).
pub fn run_pass_gate(k: u64, n: u64, q: f64, confidence: f64) -> J {
    let bound = clopper_pearson(k, n, confidence, "independent_runs");
    obj([
        ("runs_meeting", J::Int(k as i64)),
        ("runs", J::Int(n as i64)),
        ("required_share", J::Float(q)),
        ("lower_bound", J::Float(bound.lower)),
        (
            "status",
            J::from(if bound.lower >= q { PASS } else { FAIL }),
        ),
        ("model", J::from("independent_runs")),
    ])
}

/// Holm's step-down: which hypotheses are rejected at family-wise alpha.
pub fn holm(p_values: &[(String, Option<f64>)], alpha: f64) -> Vec<(String, bool)> {
    let mut known: Vec<(&String, f64)> = p_values
        .iter()
        .filter_map(|(n, p)| p.map(|p| (n, p)))
        .collect();
    known.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut rejected: Vec<(String, bool)> =
        p_values.iter().map(|(n, _)| (n.clone(), false)).collect();
    let total = known.len();
    for (rank, (name, p)) in known.into_iter().enumerate() {
        if p > alpha / (total - rank) as f64 {
            break;
        }
        if let Some(slot) = rejected.iter_mut().find(|(n, _)| n == name) {
            slot.1 = true;
        }
    }
    rejected
}

/// The t quantile the intervals use: two-sided at `confidence`.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    t_ppf(0.5 + confidence / 2.0, df)
}
